/* far_memcached.c: the memcached far store (record --far memcached:HOST:PORT[,HOST:PORT...]) —
 * evicted pages as items on memcached servers, spoken to directly in memcached's meta text
 * protocol (1.6+) over TCP.
 *
 * Why not libmemcached: it allocates on every request, and requests are made on fault handler
 * threads, which must never allocate (a handler that reaches the program's heap can wait on
 * itself). The meta protocol needs a few lines of parsing; buffers here are mmap'd once.
 *
 * Keys: "fl<generation id, 16 hex>:<page, hex>". A generation (far_store.c) is a random 64-bit
 * id, so processes sharing servers never collide, and a forked child reads its parent's frozen
 * keys while both write new ones under ids of their own. Servers are chosen by consistent
 * hashing of the key (160 points per server on a 64-bit ring), so adding a server moves only
 * its share of the keys.
 *
 * Requests are pipelined: a write-back batch sends every "ms <key> 4096 q" (quiet: success is
 * not answered) of a server in one sendmsg straight from the mirror pages, then "mn", and reads
 * up to the "MN" — any other line is a failure (e.g. SERVER_ERROR out of memory from a server
 * run with -M). Reads send every "mg <key> v" of a server at once and read the answers in
 * order. A miss ("EN") is a lost page: fatal, never zeros. A closed connection, a reset or no
 * answer within 10 s is fatal too; the log line names the server and the page.
 *
 * Connections: one per (thread, server), made on the thread's first request (handler threads
 * and the prefetch thread each get a slot), so no lock is shared between threads. A forked
 * child closes the inherited sockets (the byte streams belong to the parent) and reconnects.
 *
 * Measured (scripts/bench_far.sh, memcached -t 2 on loopback, load ~9 on 2 vCPUs): a page read
 * 120-139 us (a round trip is two wake-ups across vCPUs), write-back 15-16 us/page in pipelined
 * batches of 64 (about 1 ms per batch). */
#include "far_store.h"
#include "fds.h"
#include "context.h"
#include "diag.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define MC_MAX_SERVERS 16
#define MC_POINTS 160                  /* ring points per server */
#define MC_SLOTS (FL_MAX_HANDLERS + 4)  /* threads with their own connections */
#define MC_RBUF 65536
#define MC_TIMEOUT_MS 10000
#define MC_KEY_MAX 48

struct mc_server {
	struct sockaddr_storage addr;
	socklen_t addrlen;
	char name[80];                   /* as in the spec: "127.0.0.1:11211" */
};

struct mc_conn {
	int fd;                          /* -1 = not connected */
	char *rbuf;                      /* received, not yet parsed: rbuf[rpos .. rlen) */
	size_t rpos, rlen;
};

struct mc_point {
	uint64_t hash;
	unsigned server;
};

struct mc_store {
	unsigned nservers;
	struct mc_server servers[MC_MAX_SERVERS];
	struct mc_point ring[MC_MAX_SERVERS * MC_POINTS];
	unsigned npoints;
	struct mc_conn conns[MC_SLOTS][MC_MAX_SERVERS];
	_Atomic unsigned next_slot;
	char detail[200];
	uint64_t noted_id[FL_FAR_MAX_GENS + 1]; /* per generation: the key prefix in far_keys (written
						 * under the eviction lock, at the first write) */
};

static __thread int mc_slot = -1;

static struct mc_store *state_of(struct fl_runtime *rt) { return rt->farst.backend; }

/* ---- keys and the ring ---- */

static uint64_t hash64(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a, then a murmur3 finalizer to spread it */
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 0x100000001b3ULL;
	h ^= h >> 33, h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33, h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 33);
}

static size_t make_key(char *key, uint64_t gen_id, size_t page)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0;
	key[n++] = 'f', key[n++] = 'l';
	for (int shift = 60; shift >= 0; shift -= 4)
		key[n++] = hex[(gen_id >> shift) & 15];
	key[n++] = ':';
	int shift = 60;
	while (shift > 0 && ((page >> shift) & 15) == 0)
		shift -= 4;
	for (; shift >= 0; shift -= 4)
		key[n++] = hex[(page >> shift) & 15];
	key[n] = '\0';
	return n;
}

static unsigned server_of(struct mc_store *ms, const char *key, size_t len)
{
	uint64_t h = hash64(key, len);
	unsigned lo = 0, hi = ms->npoints;
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		if (ms->ring[mid].hash < h)
			lo = mid + 1;
		else
			hi = mid;
	}
	return ms->ring[lo == ms->npoints ? 0 : lo].server;
}

static void build_ring(struct mc_store *ms)
{
	ms->npoints = 0;
	for (unsigned s = 0; s < ms->nservers; s++) {
		for (unsigned i = 0; i < MC_POINTS; i++) {
			char label[128];
			struct fl_buf b = { label, 0, sizeof(label) };
			fl_buf_str(&b, ms->servers[s].name);
			fl_buf_str(&b, "-");
			fl_buf_u64(&b, i);
			struct mc_point pt = { hash64(label, b.len), s };
			unsigned j = ms->npoints++;
			while (j > 0 && ms->ring[j - 1].hash > pt.hash) { /* insertion sort: a few thousand points, once */
				ms->ring[j] = ms->ring[j - 1];
				j--;
			}
			ms->ring[j] = pt;
		}
	}
}

/* ---- failures ---- */

/* Logs "far store memcached: server S: WHAT page P (address A): DETAIL" once per process. */
static int fail(struct fl_runtime *rt, unsigned server, const char *what, size_t page, const char *detail, int err)
{
	if (fl_far_first_failure(rt)) {
		char msg[600];
		struct fl_buf b = { msg, 0, sizeof(msg) };
		fl_buf_str(&b, "far store memcached: server ");
		fl_buf_str(&b, state_of(rt)->servers[server].name);
		fl_buf_str(&b, ": ");
		fl_buf_str(&b, what);
		fl_buf_str(&b, " page ");
		fl_buf_u64(&b, page);
		fl_buf_str(&b, " (address ");
		fl_buf_hex(&b, (uint64_t)(uintptr_t)(rt->region + page * FL_PAGE_SIZE));
		fl_buf_str(&b, "): ");
		fl_buf_str(&b, detail);
		if (err) {
			fl_buf_str(&b, ": ");
			fl_buf_str(&b, strerror(err));
		}
		fl_log(msg);
	}
	return err ? err : EIO;
}

/* ---- connections ---- */

static int connect_server(struct mc_server *sv)
{
	int fd = fl_fd_keep(socket(sv->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sv->addr, sv->addrlen) < 0 && errno != EINPROGRESS) {
		int err = errno;
		fl_sys_close(fd);
		return -err;
	}
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	int soerr = 0;
	socklen_t len = sizeof(soerr);
	int r = fl_sys_poll(&p, 1, MC_TIMEOUT_MS);
	if (r <= 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0 || soerr) {
		fl_sys_close(fd);
		return -(r == 0 ? ETIMEDOUT : soerr ? soerr : errno);
	}
	int one = 1;
	struct timeval tv = { MC_TIMEOUT_MS / 1000, 0 };
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

/* This thread's connection to server s; NULL with *err set when it cannot be made. */
static struct mc_conn *conn_of(struct fl_runtime *rt, unsigned s, size_t page, int *err)
{
	struct mc_store *ms = state_of(rt);
	if (mc_slot < 0) {
		mc_slot = (int)atomic_fetch_add(&ms->next_slot, 1);
		if (mc_slot >= MC_SLOTS) {
			*err = fail(rt, s, "no connection slot left for this thread, at", page, "too many threads", EMFILE);
			mc_slot = -1;
			return NULL;
		}
	}
	struct mc_conn *c = &ms->conns[mc_slot][s];
	if (c->fd >= 0)
		return c;
	if (!c->rbuf) {
		c->rbuf = fl_sys_mmap(NULL, MC_RBUF, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (c->rbuf == MAP_FAILED) {
			c->rbuf = NULL;
			*err = fail(rt, s, "no memory for a connection buffer, at", page, "mmap", errno);
			return NULL;
		}
	}
	int fd = connect_server(&ms->servers[s]);
	if (fd < 0) {
		*err = fail(rt, s, "cannot connect, at", page, "connect", -fd);
		return NULL;
	}
	c->fd = fd, c->rpos = c->rlen = 0;
	return c;
}

static void drop_conn(struct mc_conn *c)
{
	if (c->fd >= 0)
		fl_sys_close(c->fd);
	c->fd = -1, c->rpos = c->rlen = 0;
}

static int send_all(struct mc_conn *c, struct iovec *iov, size_t n)
{
	while (n) {
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = n };
		ssize_t r = fl_sys_sendmsg(c->fd, &mh, MSG_NOSIGNAL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return errno == EAGAIN ? ETIMEDOUT : errno;
		while (n && (size_t)r >= iov->iov_len)
			r -= (ssize_t)iov->iov_len, iov++, n--;
		if (n)
			iov->iov_base = (char *)iov->iov_base + r, iov->iov_len -= (size_t)r;
	}
	return 0;
}

/* More bytes into the receive buffer; 0, or an errno (ECONNRESET for a closed connection). */
static int fill(struct mc_conn *c)
{
	if (c->rpos == c->rlen)
		c->rpos = c->rlen = 0;
	else if (c->rlen == MC_RBUF) {
		memmove(c->rbuf, c->rbuf + c->rpos, c->rlen - c->rpos);
		c->rlen -= c->rpos, c->rpos = 0;
	}
	for (;;) {
		ssize_t r = fl_sys_recv(c->fd, c->rbuf + c->rlen, MC_RBUF - c->rlen, 0);
		if (r > 0) {
			c->rlen += (size_t)r;
			return 0;
		}
		if (r < 0 && errno == EINTR)
			continue;
		return r == 0 ? ECONNRESET : errno == EAGAIN ? ETIMEDOUT : errno;
	}
}

/* One response line (without CRLF, NUL-terminated, in line[cap]). */
static int read_line(struct mc_conn *c, char *line, size_t cap)
{
	for (;;) {
		for (size_t i = c->rpos; i + 1 < c->rlen; i++) {
			if (c->rbuf[i] == '\r' && c->rbuf[i + 1] == '\n') {
				size_t n = i - c->rpos < cap - 1 ? i - c->rpos : cap - 1;
				memcpy(line, c->rbuf + c->rpos, n);
				line[n] = '\0';
				c->rpos = i + 2;
				return 0;
			}
		}
		if (c->rlen - c->rpos >= MC_RBUF / 2)
			return EPROTO; /* no line ending in 32 KiB: not memcached */
		int err = fill(c);
		if (err)
			return err;
	}
}

static int read_bytes(struct mc_conn *c, char *dst, size_t n)
{
	while (n) {
		if (c->rpos == c->rlen) {
			if (n >= 4096) { /* large remainder: straight into dst */
				ssize_t r = fl_sys_recv(c->fd, dst, n, 0);
				if (r > 0) {
					dst += r, n -= (size_t)r;
					continue;
				}
				if (r < 0 && errno == EINTR)
					continue;
				return r == 0 ? ECONNRESET : errno == EAGAIN ? ETIMEDOUT : errno;
			}
			int err = fill(c);
			if (err)
				return err;
		}
		size_t k = c->rlen - c->rpos < n ? c->rlen - c->rpos : n;
		memcpy(dst, c->rbuf + c->rpos, k);
		c->rpos += k, dst += k, n -= k;
	}
	return 0;
}

static const char *io_error_text(int err)
{
	return err == ECONNRESET ? "connection closed by the server (is it still running?)"
	       : err == ETIMEDOUT ? "no answer within 10 s"
	       : err == EPROTO    ? "answer is not memcached's meta protocol"
				  : "connection failed";
}

static int note_key_prefix(struct fl_runtime *rt, uint64_t id);

/* ---- requests ---- */

/* Writes pages of one server: "ms" per page, quiet, then "mn"; reads to "MN". */
static int write_server(struct fl_runtime *rt, unsigned s, uint64_t gen_id, const size_t *pages, char *const *src,
			const unsigned *idx, size_t n)
{
	char hdr[FL_EVICT_BATCH][MC_KEY_MAX + 24];
	struct iovec iov[3 * FL_EVICT_BATCH + 1];
	static const char crlf[] = "\r\n", mn[] = "mn\r\n";
	size_t nio = 0;
	int err = 0;
	struct mc_conn *c = conn_of(rt, s, pages[idx[0]], &err);
	if (!c)
		return err;
	for (size_t i = 0; i < n; i++) {
		struct fl_buf b = { hdr[i], 0, sizeof(hdr[i]) };
		char key[MC_KEY_MAX];
		make_key(key, gen_id, pages[idx[i]]);
		fl_buf_str(&b, "ms ");
		fl_buf_str(&b, key);
		fl_buf_str(&b, " 4096 q\r\n");
		iov[nio++] = (struct iovec){ hdr[i], b.len };
		iov[nio++] = (struct iovec){ src[idx[i]], FL_PAGE_SIZE };
		iov[nio++] = (struct iovec){ (void *)crlf, 2 };
	}
	iov[nio++] = (struct iovec){ (void *)mn, 4 };
	err = send_all(c, iov, nio);
	if (err) {
		drop_conn(c);
		return fail(rt, s, "sending", pages[idx[0]], "cannot write pages", err);
	}
	for (;;) {
		char line[256];
		err = read_line(c, line, sizeof(line));
		if (err) {
			drop_conn(c);
			return fail(rt, s, "storing", pages[idx[0]], io_error_text(err), err);
		}
		if (strcmp(line, "MN") == 0)
			return 0;
		/* quiet mode answers only failures; which page is not said: name the batch's first */
		drop_conn(c);
		char detail[300];
		struct fl_buf d = { detail, 0, sizeof(detail) };
		fl_buf_str(&d, "the server answered '");
		fl_buf_str(&d, line);
		fl_buf_str(&d, "' (with -M, memcached refuses items when its -m is full)");
		return fail(rt, s, "storing a batch starting at", pages[idx[0]], detail, 0);
	}
}

/* Reads pages of one server: every "mg" at once, then the answers in order. */
static int read_server(struct fl_runtime *rt, unsigned s, const size_t *pages, const uint8_t *gens, char *const *dst,
		       const unsigned *idx, size_t n)
{
	char req[FL_EVICT_BATCH * (MC_KEY_MAX + 8)];
	struct fl_buf b = { req, 0, sizeof(req) };
	int err = 0;
	struct mc_conn *c = conn_of(rt, s, pages[idx[0]], &err);
	if (!c)
		return err;
	for (size_t i = 0; i < n; i++) {
		char key[MC_KEY_MAX];
		make_key(key, rt->farst.gens[gens[idx[i]]].id, pages[idx[i]]);
		fl_buf_str(&b, "mg ");
		fl_buf_str(&b, key);
		fl_buf_str(&b, " v\r\n");
	}
	struct iovec iov = { req, b.len };
	err = send_all(c, &iov, 1);
	if (err) {
		drop_conn(c);
		return fail(rt, s, "asking for", pages[idx[0]], io_error_text(err), err);
	}
	for (size_t i = 0; i < n; i++) {
		char line[256];
		size_t page = pages[idx[i]];
		err = read_line(c, line, sizeof(line));
		if (!err && strcmp(line, "EN") == 0) {
			drop_conn(c);
			return fail(rt, s, "lost", page, "not found on the server (evicted or restarted?)", 0);
		}
		if (!err && !(strncmp(line, "VA 4096", 7) == 0 && (line[7] == '\0' || line[7] == ' ')))
			err = EPROTO;
		if (!err)
			err = read_bytes(c, dst[idx[i]], FL_PAGE_SIZE);
		if (!err)
			err = read_line(c, line, sizeof(line)); /* the CRLF after the data */
		if (!err && line[0] != '\0')
			err = EPROTO;
		if (err) {
			drop_conn(c);
			return fail(rt, s, "reading", page, io_error_text(err), err);
		}
	}
	return 0;
}

/* Splits a batch by server, in the batch's order. */
static int by_server(struct fl_runtime *rt, bool write, unsigned gen, const size_t *pages, const uint8_t *gens,
		     char *const *buf, size_t n)
{
	struct mc_store *ms = state_of(rt);
	unsigned idx[FL_EVICT_BATCH];
	unsigned owner[FL_EVICT_BATCH];
	bool done[FL_EVICT_BATCH] = { false };
	for (size_t i = 0; i < n; i++) {
		char key[MC_KEY_MAX];
		uint64_t id = rt->farst.gens[write ? gen : gens[i]].id;
		owner[i] = server_of(ms, key, make_key(key, id, pages[i]));
	}
	for (size_t i = 0; i < n; i++) {
		if (done[i])
			continue;
		size_t k = 0;
		for (size_t j = i; j < n; j++)
			if (!done[j] && owner[j] == owner[i])
				idx[k++] = (unsigned)j, done[j] = true;
		int err = write ? write_server(rt, owner[i], rt->farst.gens[gen].id, pages, buf, idx, k)
				: read_server(rt, owner[i], pages, gens, buf, idx, k);
		if (err)
			return err;
	}
	return 0;
}

static int mc_write(struct fl_runtime *rt, unsigned gen, const size_t *pages, char *const *src, size_t n)
{
	struct mc_store *ms = state_of(rt);
	uint64_t id = rt->farst.gens[gen].id;
	if (ms->noted_id[gen] != id) { /* failing costs only the clean-up after the run */
		note_key_prefix(rt, id);
		ms->noted_id[gen] = id;
	}
	return by_server(rt, true, gen, pages, NULL, src, n);
}

static int mc_read(struct fl_runtime *rt, const size_t *pages, const uint8_t *gens, char *const *dst, size_t n)
{
	return by_server(rt, false, 0, pages, gens, dst, n);
}

/* ---- generations: key prefixes ---- */

/* Appends a generation's key prefix to the process directory's far_keys (trace.h); called before
 * the first item is stored under it (the directory is made after the far store is opened). */
static int note_key_prefix(struct fl_runtime *rt, uint64_t id)
{
	char path[PATH_MAX + 16], line[24];
	struct fl_buf p = { path, 0, sizeof(path) }, l = { line, 0, sizeof(line) };
	char key[MC_KEY_MAX];
	size_t n = make_key(key, id, 0);
	key[n - 2] = '\0'; /* "fl<id>:0" -> "fl<id>" */
	fl_buf_str(&p, rt->dir);
	fl_buf_str(&p, "/" FL_FILE_NAME_FAR_KEYS);
	fl_buf_str(&l, key);
	fl_buf_str(&l, "\n");
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	ssize_t w = fd < 0 ? -1 : fl_sys_write(fd, line, l.len);
	int err = fd < 0 || w < 0 ? errno : EIO;
	if (fd >= 0)
		fl_sys_close(fd);
	if (w != (ssize_t)l.len) {
		char msg[PATH_MAX + 96];
		struct fl_buf m = { msg, 0, sizeof(msg) };
		fl_buf_str(&m, fd < 0 ? "open(" : "write(");
		fl_buf_str(&m, path);
		fl_buf_str(&m, "): the run's items cannot be deleted after it");
		fl_log_errno(msg, err);
		return -1;
	}
	return 0;
}

static int mc_new_gen(struct fl_runtime *rt, unsigned gen)
{
	uint64_t id = 0;
	while (id == 0)
		if (getrandom(&id, sizeof(id), 0) != (ssize_t)sizeof(id))
			id = fl_now_ns() ^ ((uint64_t)getpid() << 40) ^ gen;
	rt->farst.gens[gen].id = id;
	return 0;
}

static void mc_drop_gen(struct fl_runtime *rt, unsigned gen)
{
	(void)rt, (void)gen; /* items stay on the servers (a parent's frozen keys may still be read) */
}

/* ---- start, fork ---- */

static int parse_server(struct mc_server *sv, const char *text, size_t len)
{
	char host[64], port_text[8];
	const char *colon = NULL, *orig = text;
	size_t origlen = len;
	struct fl_buf nb = { sv->name, 0, sizeof(sv->name) };
	for (size_t i = 0; i < len; i++)
		if (text[i] == ':')
			colon = text + i;
	if (!colon || len >= sizeof(sv->name))
		return -1;
	size_t hlen = (size_t)(colon - text), plen = len - hlen - 1;
	if (text[0] == '[' && hlen >= 2 && text[hlen - 1] == ']')
		text++, hlen -= 2;
	if (hlen == 0 || hlen >= sizeof(host) || plen == 0 || plen >= sizeof(port_text))
		return -1;
	memcpy(host, text, hlen), host[hlen] = '\0';
	memcpy(port_text, colon + 1, plen), port_text[plen] = '\0';
	unsigned port = 0;
	for (size_t i = 0; i < plen; i++) {
		if (port_text[i] < '0' || port_text[i] > '9')
			return -1;
		port = port * 10 + (unsigned)(port_text[i] - '0');
	}
	if (port == 0 || port > 65535)
		return -1;
	struct sockaddr_in *v4 = (struct sockaddr_in *)&sv->addr;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&sv->addr;
	if (strcmp(host, "localhost") == 0)
		memcpy(host, "127.0.0.1", 10);
	memset(&sv->addr, 0, sizeof(sv->addr));
	if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET, v4->sin_port = htons((uint16_t)port);
		sv->addrlen = sizeof(*v4);
	} else if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6, v6->sin6_port = htons((uint16_t)port);
		sv->addrlen = sizeof(*v6);
	} else {
		return -1; /* names are resolved by `faultline record` */
	}
	for (size_t i = 0; i < origlen && nb.len + 1 < nb.cap; i++)
		sv->name[nb.len++] = orig[i];
	sv->name[nb.len] = '\0';
	return 0;
}

/* Checks a server answers the meta no-op; 0 or an errno. */
static int probe(struct mc_server *sv)
{
	int fd = connect_server(sv);
	if (fd < 0)
		return -fd;
	char buf[16];
	ssize_t r = fl_sys_send(fd, "mn\r\n", 4, MSG_NOSIGNAL) == 4 ? fl_sys_recv(fd, buf, sizeof(buf), 0) : -1;
	int err = r >= 4 && memcmp(buf, "MN\r\n", 4) == 0 ? 0 : r < 0 ? errno : EPROTO;
	fl_sys_close(fd);
	return err;
}

static int mc_open(struct fl_runtime *rt, const char *spec)
{
	const char *list = spec + strlen("memcached");
	struct mc_store *ms = fl_sys_reserve(sizeof(*ms), "mmap(far store memcached state)");
	if (!ms)
		return -1;
	rt->farst.backend = ms;
	for (unsigned t = 0; t < MC_SLOTS; t++)
		for (unsigned s = 0; s < MC_MAX_SERVERS; s++)
			ms->conns[t][s].fd = -1;
	if (*list != ':' || !list[1]) {
		fl_log("far store memcached: expected memcached:HOST:PORT[,HOST:PORT...]");
		return -1;
	}
	for (const char *p = list + 1; *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (ms->nservers == MC_MAX_SERVERS || parse_server(&ms->servers[ms->nservers], p, len) < 0) {
			fl_log("far store memcached: bad server list (numeric ADDR:PORT, at most 16)");
			return -1;
		}
		ms->nservers++;
		p += len + (end ? 1 : 0);
	}
	for (unsigned s = 0; s < ms->nservers; s++) {
		int err = probe(&ms->servers[s]);
		if (err) {
			char msg[200];
			struct fl_buf b = { msg, 0, sizeof(msg) };
			fl_buf_str(&b, "far store memcached: server ");
			fl_buf_str(&b, ms->servers[s].name);
			fl_buf_str(&b, " does not answer");
			fl_log_errno(msg, err);
			return -1;
		}
	}
	build_ring(ms);
	rt->farst.gens[0].live = true;
	rt->farst.ngens = 1;
	rt->farst.cur = 0;
	return mc_new_gen(rt, 0);
}

static int mc_after_fork(struct fl_runtime *rt)
{
	struct mc_store *ms = state_of(rt);
	for (unsigned t = 0; t < MC_SLOTS; t++)
		for (unsigned s = 0; s < MC_MAX_SERVERS; s++)
			drop_conn(&ms->conns[t][s]); /* our copies only: the parent's streams are untouched */
	atomic_store(&ms->next_slot, 0);
	mc_slot = -1;
	return 0;
}

static const char *mc_detail(struct fl_runtime *rt)
{
	struct mc_store *ms = state_of(rt);
	struct fl_buf b = { ms->detail, 0, sizeof(ms->detail) };
	fl_buf_u64(&b, ms->nservers);
	fl_buf_str(&b, ms->nservers == 1 ? " server" : " servers, consistent hashing");
	fl_buf_str(&b, ", meta protocol, pipelined");
	return ms->detail;
}

static void mc_close(struct fl_runtime *rt) { (void)rt; }

const struct fl_far_store fl_far_memcached = {
	.name = "memcached",
	.mirror_is_far = false,
	.open = mc_open,
	.put = fl_far_gen_put,
	.get = fl_far_gen_get,
	.get_many = fl_far_gen_get_many,
	.discard = fl_far_gen_discard,
	.after_fork = mc_after_fork,
	.close = mc_close,
	.new_gen = mc_new_gen,
	.drop_gen = mc_drop_gen,
	.write = mc_write,
	.read = mc_read,
	.detail = mc_detail,
};
