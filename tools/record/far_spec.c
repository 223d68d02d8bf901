/* far_spec.c: `faultline record --far SPEC` — what record checks before it starts anything,
 * so a wrong path or an unreachable server is one clear line at once, not a failure of the
 * traced program later:
 *   mem                          nothing to check
 *   file:PATH                    a directory, a block device, or a file name in a writable
 *                                directory; passed on as an absolute path
 *   memcached:HOST:PORT[,...]    each HOST resolved (getaddrinfo) and each server asked for a
 *                                meta no-op ("mn" -> "MN") within 2 s; passed on numerically,
 *                                since the runtime must not resolve names (that allocates) */
#include "far_spec.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <faultline/record_schema.h>

#include "stats_json.h"

#define PROBE_TIMEOUT_MS 2000

/* Creates a file in DIR as the runtime's file store will (O_TMPFILE, or a name unlinked at once
 * where that is refused) and removes it: a directory on a file system that takes no new file
 * (/proc, /sys) passes the access check. 0, or -1 with the reason in err. */
static int try_create_file(const char *dir, char *err, size_t errlen)
{
	char name[PATH_MAX];
	int fd = open(dir, O_RDWR | O_TMPFILE | O_CLOEXEC, 0600);
	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
		if ((size_t)snprintf(name, sizeof(name), "%s/.faultline-far-check.%ld", dir, (long)getpid()) >= sizeof(name)) {
			snprintf(err, errlen, "path too long: %s", dir);
			return -1;
		}
		fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd >= 0)
			unlink(name);
	}
	if (fd < 0) {
		snprintf(err, errlen, "directory %s: a file cannot be created there: %s", dir, strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

static int check_file(const char *path, char *out, size_t outlen, char *err, size_t errlen)
{
	char abs[PATH_MAX], dir[PATH_MAX];
	struct stat st;

	if (*path == '\0') {
		snprintf(err, errlen, "expected file:PATH (a directory, a file name or a block device)");
		return -1;
	}
	if (path[0] == '/') {
		snprintf(abs, sizeof(abs), "%s", path);
	} else {
		char cwd[PATH_MAX];
		if (getcwd(cwd, sizeof(cwd)) == NULL || (size_t)snprintf(abs, sizeof(abs), "%s/%s", cwd, path) >= sizeof(abs)) {
			snprintf(err, errlen, "path too long: %s", path);
			return -1;
		}
	}
	bool exists = stat(abs, &st) == 0;
	if (exists && !S_ISBLK(st.st_mode) && !S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s is a %s: file: takes a directory, a file name in one, or a block device", abs,
			 S_ISCHR(st.st_mode) ? "character device" : S_ISFIFO(st.st_mode) ? "FIFO" : "socket");
		return -1;
	}
	if (exists && S_ISBLK(st.st_mode)) {
		if (access(abs, R_OK | W_OK) < 0) {
			snprintf(err, errlen, "block device %s: %s", abs, strerror(errno));
			return -1;
		}
	} else {
		if (stat(abs, &st) == 0 && S_ISDIR(st.st_mode)) {
			snprintf(dir, sizeof(dir), "%s", abs);
		} else {
			char *slash;
			snprintf(dir, sizeof(dir), "%s", abs);
			slash = strrchr(dir, '/');
			if (slash == dir)
				slash[1] = '\0';
			else
				*slash = '\0';
		}
		if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
			snprintf(err, errlen, "directory %s: %s", dir, stat(dir, &st) < 0 ? strerror(errno) : "not a directory");
			return -1;
		}
		if (access(dir, W_OK | X_OK) < 0) {
			snprintf(err, errlen, "directory %s is not writable: %s", dir, strerror(errno));
			return -1;
		}
		if (try_create_file(dir, err, errlen) < 0)
			return -1;
	}
	if ((size_t)snprintf(out, outlen, "file:%s", abs) >= outlen) {
		snprintf(err, errlen, "path too long: %s", abs);
		return -1;
	}
	return 0;
}

/* Asks a memcached server for a meta no-op; 0 or an errno (EPROTO: not memcached 1.6+). */
static int probe(const struct addrinfo *ai)
{
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), err = 0;
	char buf[64];
	size_t got = 0;

	if (fd < 0)
		return errno;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 && errno != EINPROGRESS) {
		err = errno;
		goto out;
	}
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	int soerr = 0;
	socklen_t len = sizeof(soerr);
	if (poll(&p, 1, PROBE_TIMEOUT_MS) <= 0) {
		err = ETIMEDOUT;
		goto out;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0 || soerr) {
		err = soerr ? soerr : errno;
		goto out;
	}
	if (send(fd, "mn\r\n", 4, MSG_NOSIGNAL) != 4) {
		err = errno;
		goto out;
	}
	while (got < 4) {
		p.events = POLLIN;
		if (poll(&p, 1, PROBE_TIMEOUT_MS) <= 0) {
			err = ETIMEDOUT;
			goto out;
		}
		ssize_t r = recv(fd, buf + got, sizeof(buf) - got, 0);
		if (r <= 0) {
			err = r == 0 ? ECONNRESET : errno;
			goto out;
		}
		got += (size_t)r;
	}
	if (memcmp(buf, "MN\r\n", 4) != 0)
		err = EPROTO;
out:
	close(fd);
	return err;
}

static int check_server(const char *text, size_t len, char *out, size_t outlen, size_t *used, char *err, size_t errlen)
{
	char item[300], host[256], port[16], numeric[NI_MAXHOST];
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
	const char *colon;
	int rc;

	if (len == 0 || len >= sizeof(item)) {
		snprintf(err, errlen, "expected memcached:HOST:PORT[,HOST:PORT...]");
		return -1;
	}
	memcpy(item, text, len);
	item[len] = '\0';
	colon = strrchr(item, ':');
	if (colon == NULL || colon == item || colon[1] == '\0' || strlen(colon + 1) >= sizeof(port)) {
		snprintf(err, errlen, "'%s': expected HOST:PORT", item);
		return -1;
	}
	snprintf(host, sizeof(host), "%.*s", (int)(colon - item), item);
	snprintf(port, sizeof(port), "%s", colon + 1);
	if (strspn(port, "0123456789") == strlen(port) && (strtoul(port, NULL, 10) == 0 || strtoul(port, NULL, 10) > 65535)) {
		snprintf(err, errlen, "'%s': port %s is not one (1 to 65535)", item, port);
		return -1;
	}
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc != 0) {
		snprintf(err, errlen, "memcached server %s: %s", item, gai_strerror(rc));
		return -1;
	}
	rc = probe(res);
	if (rc == 0)
		rc = getnameinfo(res->ai_addr, res->ai_addrlen, numeric, sizeof(numeric), NULL, 0, NI_NUMERICHOST) ? EINVAL : 0;
	if (rc != 0) {
		snprintf(err, errlen, "memcached server %s does not answer: %s", item,
			 rc == EPROTO ? "not a memcached 1.6+ (meta protocol) server" : strerror(rc));
		freeaddrinfo(res);
		return -1;
	}
	int n = snprintf(out + *used, outlen - *used, res->ai_family == AF_INET6 ? "%s[%s]:%s" : "%s%s:%s",
			 *used > strlen("memcached:") ? "," : "", numeric, port);
	freeaddrinfo(res);
	if (n < 0 || (size_t)n >= outlen - *used) {
		snprintf(err, errlen, "too many memcached servers");
		return -1;
	}
	*used += (size_t)n;
	return 0;
}

static int check_memcached(const char *list, char *out, size_t outlen, char *err, size_t errlen)
{
	size_t used = (size_t)snprintf(out, outlen, "memcached:"), count = 0;
	if (*list == '\0') {
		snprintf(err, errlen, "expected memcached:HOST:PORT[,HOST:PORT...]");
		return -1;
	}
	for (const char *p = list;; count++) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (count == 16) {
			snprintf(err, errlen, "at most 16 memcached servers");
			return -1;
		}
		if (check_server(p, len, out, outlen, &used, err, errlen) < 0)
			return -1;
		if (!end)
			break;
		p = end + 1;
	}
	return 0;
}

int far_spec_syntax(const char *spec, char *err, size_t errlen)
{
	if (strcmp(spec, "mem") == 0 || (strncmp(spec, "file:", 5) == 0 && spec[5] != '\0') ||
	    (strncmp(spec, "memcached:", 10) == 0 && strchr(spec + 10, ':') != NULL))
		return 0;
	snprintf(err, errlen, "unknown far store '%s' (use mem, file:PATH or memcached:HOST:PORT[,HOST:PORT...])", spec);
	return -1;
}

int far_spec_check(const char *spec, char *out, size_t outlen, char *err, size_t errlen)
{
	if (strcmp(spec, "mem") == 0) {
		snprintf(out, outlen, "mem");
		return 0;
	}
	if (strncmp(spec, "file:", 5) == 0)
		return check_file(spec + 5, out, outlen, err, errlen);
	if (strncmp(spec, "memcached:", 10) == 0)
		return check_memcached(spec + 10, out, outlen, err, errlen);
	snprintf(err, errlen, "unknown far store '%s' (use mem, file:PATH or memcached:HOST:PORT[,HOST:PORT...])", spec);
	return -1;
}

void far_spec_describe(const struct flat_json *meta, char *out, size_t len)
{
	const char *spec = stats_json_string(meta, FL_META_FAR_SPEC), *detail = stats_json_string(meta, FL_META_FAR_DETAIL);
	uint64_t latency = 0, bandwidth = 0, prefetch = 0;
	size_t used;

	stats_json_uint(meta, FL_META_FAR_LATENCY_NS, &latency);
	stats_json_uint(meta, FL_META_FAR_BANDWIDTH, &bandwidth);
	stats_json_uint(meta, FL_META_PREFETCH_PAGES, &prefetch);
	used = (size_t)snprintf(out, len, "%s (%s)", spec ? spec : "mem", detail ? detail : "?");
	if (used < len && (latency || bandwidth))
		used += (size_t)snprintf(out + used, len - used, "; emulated %.1f µs per request%s", latency / 1000.0,
					 bandwidth ? "" : ", unlimited bandwidth");
	if (used < len && bandwidth)
		used += (size_t)snprintf(out + used, len - used, " + %.0f MB/s", bandwidth / 1e6);
	if (used < len && prefetch)
		snprintf(out + used, len - used, "; read-ahead %llu pages", (unsigned long long)prefetch);
}
