/* far_cleanup.c: after `record --far memcached:...`, deletes the items the traced processes stored
 * on the servers, so a run leaves nothing behind (a server run with -M, as faultline-record(1) advises,
 * would otherwise fill up with earlier runs' pages and refuse later ones).
 *
 * Each process directory's far_keys file (trace.h) lists the key prefixes ("fl" + 16 hex digits,
 * one per generation) the process wrote under, appended before the first item of each, so it is
 * there even for a process killed with SIGKILL. Runs when record's command has exited and no traced
 * process still runs, so no page can be read any more. Per server: `lru_crawler metadump all` lists every key (URL-encoded), the
 * keys with one of our prefixes are deleted with quiet meta deletes ("md KEY q", pipelined, then
 * "mn"), and the answers up to "MN" must hold no error. Keys of other programs are never touched.
 * record waits for its direct child only: when a traced process still runs (a daemon, a shell's
 * background job), nothing is deleted, with a warning. */
#include "far_cleanup.h"
#include "record_internal.h"

#include <dirent.h>
#include <errno.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/time.h>
#include <unistd.h>

#include "faultline/trace.h"

#define PREFIX_LEN 18          /* "fl" + 16 hex digits */
#define IO_TIMEOUT_S 10
#define STRAGGLER_WAIT_US 200000 /* before a second pass over a server that had items of ours */
#define BUSY_RETRIES 50           /* lru_crawler answered BUSY: asks again this often, */
#define BUSY_WAIT_US 100000       /* this long apart */

struct prefixes {
	char (*v)[PREFIX_LEN + 1];
	size_t n, cap;
};

/* A traced process of DIR still running (record waits for its direct child only: a daemon or a
 * background job of a shell can outlive it, and still reads its items); 0 if none. Its pid is the
 * number before any ".N" of the process directory's name. */
static pid_t still_running(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	pid_t found = 0;

	if (!d)
		return 0;
	while (!found && (e = readdir(d)) != NULL)
		if (process_dir_running(e->d_name))
			found = (pid_t)strtol(e->d_name, NULL, 10);
	closedir(d);
	return found;
}

/* Every prefix in DIR/<process>/far_keys; -1 on ENOMEM. */
static int read_prefixes(const char *dir, struct prefixes *out)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4096], line[64];

	if (!d)
		return 0; /* no directory: nothing was written */
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.' ||
		    (size_t)snprintf(path, sizeof(path), "%s/%s/" FL_FILE_NAME_FAR_KEYS, dir, e->d_name) >= sizeof(path))
			continue;
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\r\n")] = '\0';
			if (strlen(line) != PREFIX_LEN || strncmp(line, "fl", 2) != 0)
				continue;
			if (out->n == out->cap) {
				size_t cap = out->cap ? 2 * out->cap : 16;
				void *grown = realloc(out->v, cap * sizeof(*out->v));
				if (!grown) {
					fclose(f);
					closedir(d);
					return -1;
				}
				out->v = grown, out->cap = cap;
			}
			memcpy(out->v[out->n++], line, PREFIX_LEN + 1);
		}
		fclose(f);
	}
	closedir(d);
	return 0;
}

/* KEY ("fl<16 hex>:<page>") has one of our prefixes. */
static bool ours(const struct prefixes *p, const char *key)
{
	if (strlen(key) <= PREFIX_LEN || key[PREFIX_LEN] != ':')
		return false;
	for (size_t i = 0; i < p->n; i++)
		if (memcmp(key, p->v[i], PREFIX_LEN) == 0)
			return true;
	return false;
}

/* A connection to ADDR ("1.2.3.4:11211" or "[::1]:11211", as far_spec_check wrote it); -1 with err. */
static int connect_server(const char *addr, char *err, size_t errlen)
{
	char host[300], *colon;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST }, *res = NULL;

	snprintf(host, sizeof(host), "%s", addr);
	colon = strrchr(host, ':');
	if (!colon) {
		snprintf(err, errlen, "%s: expected ADDR:PORT", addr);
		return -1;
	}
	*colon = '\0';
	char *h = host;
	if (h[0] == '[' && colon[-1] == ']')
		h++, colon[-1] = '\0';
	int rc = getaddrinfo(h, colon + 1, &hints, &res);
	if (rc != 0) {
		snprintf(err, errlen, "%s: %s", addr, gai_strerror(rc));
		return -1;
	}
	int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct timeval tv = { IO_TIMEOUT_S, 0 };
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0 || connect(fd, res->ai_addr, res->ai_addrlen) < 0) {
		snprintf(err, errlen, "%s: %s", addr, strerror(errno));
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd;
}

/* Buffered line reading from a socket. */
struct reader {
	int fd;
	char buf[65536];
	size_t start, end;
};

/* The next line (CRLF removed) into line; 0, or an errno (ECONNRESET at end of stream). */
static int read_line(struct reader *r, char *line, size_t cap)
{
	for (;;) {
		char *nl = memchr(r->buf + r->start, '\n', r->end - r->start);
		if (nl) {
			size_t n = (size_t)(nl - (r->buf + r->start));
			size_t keep = n && nl[-1] == '\r' ? n - 1 : n;
			if (keep >= cap)
				keep = cap - 1;
			memcpy(line, r->buf + r->start, keep);
			line[keep] = '\0';
			r->start += n + 1;
			return 0;
		}
		if (r->start > 0) {
			memmove(r->buf, r->buf + r->start, r->end - r->start);
			r->end -= r->start, r->start = 0;
		}
		if (r->end == sizeof(r->buf))
			return EPROTO; /* a line longer than the buffer */
		ssize_t got = recv(r->fd, r->buf + r->end, sizeof(r->buf) - r->end, 0);
		if (got <= 0)
			return got == 0 ? ECONNRESET : errno;
		r->end += (size_t)got;
	}
}

static int send_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		p += w, n -= (size_t)w;
	}
	return 0;
}

/* An errno of the socket calls, in words (a receive timeout is EAGAIN). */
static const char *io_error(int e)
{
	return e == EAGAIN || e == EWOULDBLOCK ? "no answer within 10 s"
	       : e == ECONNRESET              ? "connection closed by the server"
					       : strerror(e);
}

/* Decodes metadump's URL-encoded key in place. */
static void url_decode(char *s)
{
	char *o = s;
	for (; *s; s++) {
		unsigned v;
		if (s[0] == '%' && s[1] && s[2] && sscanf(s + 1, "%2x", &v) == 1)
			*o++ = (char)v, s += 2;
		else
			*o++ = *s;
	}
	*o = '\0';
}

/* Deletes our items on one server; adds their number to *deleted. 0, or -1 with err. */
static int clean_server(const char *addr, const struct prefixes *p, uint64_t *deleted, char *err, size_t errlen)
{
	struct reader *r = malloc(sizeof(*r));
	char line[1024];
	char *deletes = NULL;
	size_t len = 0, cap = 0;
	uint64_t matched = 0;
	int rc = -1, e;

	if (!r) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	r->start = r->end = 0;
	if ((r->fd = connect_server(addr, err, errlen)) < 0) {
		free(r);
		return -1;
	}
	for (unsigned attempt = 0;; attempt++) {
		if ((e = send_all(r->fd, "lru_crawler metadump all\r\n", 26)) != 0) {
			snprintf(err, errlen, "%s: sending lru_crawler metadump: %s", addr, io_error(e));
			goto out;
		}
		if ((e = read_line(r, line, sizeof(line))) != 0) {
			snprintf(err, errlen, "%s: reading the key list: %s", addr, io_error(e));
			goto out;
		}
		/* the server's own crawler (on by default) may be running: it answers BUSY meanwhile */
		if (strncmp(line, "BUSY", 4) != 0 || attempt == BUSY_RETRIES)
			break;
		usleep(BUSY_WAIT_US);
	}
	for (bool first = true;; first = false) {
		if (!first && (e = read_line(r, line, sizeof(line))) != 0) {
			snprintf(err, errlen, "%s: reading the key list: %s", addr, io_error(e));
			goto out;
		}
		if (strcmp(line, "END") == 0)
			break;
		if (strncmp(line, "key=", 4) != 0) { /* ERROR, BUSY, CLIENT_ERROR: no list */
			snprintf(err, errlen, "%s: lru_crawler metadump answered '%.200s'%s", addr, line,
				 strncmp(line, "BUSY", 4) == 0 ? " for 5 s" : " (is the LRU crawler disabled?)");
			goto out;
		}
		char *key = line + 4;
		key[strcspn(key, " ")] = '\0';
		url_decode(key);
		if (!ours(p, key))
			continue;
		size_t need = strlen(key) + 8;
		if (len + need + 5 > cap) {
			size_t ncap = cap ? 2 * cap : 65536;
			while (len + need + 5 > ncap)
				ncap *= 2;
			char *grown = realloc(deletes, ncap);
			if (!grown) {
				snprintf(err, errlen, "out of memory");
				goto out;
			}
			deletes = grown, cap = ncap;
		}
		len += (size_t)sprintf(deletes + len, "md %s q\r\n", key);
		matched++;
	}
	if (matched == 0) {
		rc = 0;
		goto out;
	}
	len += (size_t)sprintf(deletes + len, "mn\r\n");
	if ((e = send_all(r->fd, deletes, len)) != 0) {
		snprintf(err, errlen, "%s: sending the deletes: %s", addr, io_error(e));
		goto out;
	}
	for (;;) { /* quiet deletes answer only failures; a key gone meanwhile (NF) is not one */
		if ((e = read_line(r, line, sizeof(line))) != 0) {
			snprintf(err, errlen, "%s: reading the answers to the deletes: %s", addr, io_error(e));
			goto out;
		}
		if (strcmp(line, "MN") == 0)
			break;
		if (strncmp(line, "NF", 2) != 0 && strncmp(line, "HD", 2) != 0) {
			snprintf(err, errlen, "%s: a delete was answered '%.200s'", addr, line);
			goto out;
		}
	}
	*deleted += matched;
	rc = 0;
out:
	close(r->fd);
	free(r);
	free(deletes);
	return rc;
}

int far_cleanup_memcached(const char *spec, const char *dir, uint64_t deleted[FAR_CLEANUP_MAX_SERVERS],
			  unsigned *nservers, char *err, size_t errlen)
{
	struct prefixes p = { NULL, 0, 0 };
	const char *list = spec + strlen("memcached:");
	int rc = 0;

	memset(deleted, 0, FAR_CLEANUP_MAX_SERVERS * sizeof(*deleted));
	*nservers = 0;
	if (read_prefixes(dir, &p) < 0) {
		snprintf(err, errlen, "out of memory");
		free(p.v);
		return -1;
	}
	if (p.n == 0)
		return 0; /* nothing was written */
	pid_t alive = still_running(dir);
	if (alive) {
		snprintf(err, errlen, "traced process %ld still runs (it outlived the command record started) and "
			 "may read them", (long)alive);
		free(p.v);
		return -1;
	}
	for (const char *s = list; *s && *nservers < FAR_CLEANUP_MAX_SERVERS; (*nservers)++) {
		const char *end = strchr(s, ',');
		size_t n = end ? (size_t)(end - s) : strlen(s);
		char addr[300], why[512];
		uint64_t *count = &deleted[*nservers];
		snprintf(addr, sizeof(addr), "%.*s", (int)n, s);
		int one = clean_server(addr, &p, count, why, sizeof(why));
		if (one == 0 && *count > 0) {
			/* a process killed in the middle of a write-back leaves requests the server may still
			 * be executing: a few items appear after the listing (seen: 1-3 of ~10,000) */
			usleep(STRAGGLER_WAIT_US);
			one = clean_server(addr, &p, count, why, sizeof(why));
		}
		if (one < 0 && rc == 0) { /* the first failure is reported; the other servers are still cleaned */
			snprintf(err, errlen, "%s", why);
			rc = -1;
		}
		s += n + (end ? 1 : 0);
	}
	free(p.v);
	return rc;
}
