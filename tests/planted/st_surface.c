/* st_surface.c: the stack signal must never surface to the program. A writer thread sends a large
 * heap buffer through a pipe to a reader thread, each waiting for the pipe with poll() and select()
 * in turn; the pollfd arrays and fd_sets live in heap pages of their own that get evicted between
 * uses (so the kernel faults on them inside poll()/select()), the data buffers are evicted too (so
 * read() and write() fault inside the kernel), and hammer threads fault heavily all along.
 * Checked on every call:
 *   - no call fails (EINTR or anything else);
 *   - write() to the blocking pipe writes the whole chunk in one call (POSIX: a blocking write
 *     returns short only when interrupted by a signal handler);
 *   - read() returns between 1 and the bytes asked for (a pipe may return fewer: that is legitimate);
 *   - poll() and select() return exactly 1 with the pipe end ready (they wait forever otherwise;
 *     at the end of the data the reader's poll() may report POLLHUP alone);
 *   - errno is left unchanged by every successful call (set to a sentinel before, checked after);
 * and at the end every byte received is verified.
 *
 * usage: st_surface [MIB [CHUNK_KIB [HAMMERS [HAMMER_MIB [HAMMER_PASSES]]]]]
 *        (defaults 32, 1024, 2, 16, 8)
 * Prints on stdout (st_common.h) "range pollfds ...", "range fdsets ..." (the pages holding the
 * waiting calls' arguments), "range src ...", "range dst ...", then one line
 * "surface ok MIB MiB writes W reads R short_reads S polls P selects Q hammer_passes H checksum X". */
#include "planted.h"
#include "st_common.h"
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/select.h>

#define SEED 0x5eed
#define ERRNO_SENTINEL 98765
#define SLOTS 64 /* pollfd pages and fd_set pages per side, used in turn */

struct side {
	const char *name;
	int fd;
	short events;            /* POLLIN or POLLOUT */
	struct pollfd *pollfds;  /* SLOTS pages, a pollfd at the start of each */
	fd_set *fdsets;          /* SLOTS pages, an fd_set at the start of each */
	unsigned long polls, selects;
};

static uint8_t *src, *dst;
static size_t total, chunk;
static atomic_bool transfer_done;
static unsigned long writes, reads, short_reads;

static void *pages_alloc(size_t pages, const char *what)
{
	void *p = NULL;
	int err = posix_memalign(&p, PAGE_SIZE_BYTES, pages * PAGE_SIZE_BYTES);
	if (err)
		die_errno_at(err, "posix_memalign(%s, %zu pages)", what, pages);
	return p;
}

static void errno_unchanged(const char *call)
{
	if (errno != ERRNO_SENTINEL)
		die("%s succeeded but changed errno from the sentinel %d to %d (%s)", call, ERRNO_SENTINEL, errno,
		    strerror(errno));
}

static struct pollfd *slot_pollfd(struct side *s, unsigned long i)
{
	return (struct pollfd *)((char *)s->pollfds + (i % SLOTS) * PAGE_SIZE_BYTES);
}

static fd_set *slot_fdset(struct side *s, unsigned long i)
{
	return (fd_set *)((char *)s->fdsets + (i % SLOTS) * PAGE_SIZE_BYTES);
}

/* The argument pages are written once here; from then on only the kernel writes them (revents,
 * the fd_set bits of a ready fd stay set), so when they come back after an eviction it is inside
 * poll() or select(). The program itself only reads them after the call. */
static void side_init(struct side *s)
{
	s->pollfds = pages_alloc(SLOTS, "pollfds");
	s->fdsets = pages_alloc(SLOTS, "fd_sets");
	for (unsigned i = 0; i < SLOTS; i++) {
		*slot_pollfd(s, i) = (struct pollfd){ .fd = s->fd, .events = s->events };
		FD_ZERO(slot_fdset(s, i));
		FD_SET(s->fd, slot_fdset(s, i));
	}
}

ST_FRAME void wait_poll(struct side *s, unsigned long i)
{
	struct pollfd *p = slot_pollfd(s, i);
	errno = ERRNO_SENTINEL;
	int r = poll(p, 1, -1);
	if (r != 1)
		die_errno("%s: poll() returned %d, want 1", s->name, r);
	errno_unchanged("poll()");
	if (!(p->revents & (s->events | POLLHUP)) || p->fd != s->fd || p->events != s->events)
		die("%s: poll() returned 1 but revents %#x (fd %d events %#x)", s->name, p->revents, p->fd, p->events);
	s->polls++;
}

ST_FRAME void wait_select(struct side *s, unsigned long i)
{
	fd_set *set = slot_fdset(s, i);
	errno = ERRNO_SENTINEL;
	int r = s->events == POLLIN ? select(s->fd + 1, set, NULL, NULL, NULL) : select(s->fd + 1, NULL, set, NULL, NULL);
	if (r != 1)
		die_errno("%s: select() returned %d, want 1", s->name, r);
	errno_unchanged("select()");
	if (!FD_ISSET(s->fd, set))
		die("%s: select() returned 1 but the fd is not in the set", s->name);
	s->selects++;
}

static void wait_ready(struct side *s, unsigned long i)
{
	if (i % 2)
		wait_select(s, i / 2);
	else
		wait_poll(s, i / 2);
}

ST_FRAME void *writer(void *arg)
{
	struct side *s = arg;
	for (size_t done = 0; done < total; writes++) {
		size_t n = total - done < chunk ? total - done : chunk;
		wait_ready(s, writes);
		errno = ERRNO_SENTINEL;
		ssize_t k = write(s->fd, src + done, n);
		if (k < 0)
			die_errno("write(pipe, %zu bytes) after %zu of %zu bytes", n, done, total);
		if ((size_t)k != n)
			die("write(pipe, %zu bytes) to a blocking pipe returned %zd (after %zu of %zu bytes)", n, k, done, total);
		errno_unchanged("write()");
		done += n;
	}
	if (close(s->fd) < 0)
		die_errno("close(write end)");
	return NULL;
}

ST_FRAME void *reader(void *arg)
{
	struct side *s = arg;
	size_t done = 0;
	for (;; reads++) {
		size_t want = total - done < chunk ? total - done : chunk;
		if (want == 0)
			want = 1; /* expect the end of the data */
		wait_ready(s, reads);
		errno = ERRNO_SENTINEL;
		ssize_t k = read(s->fd, dst + done, want);
		if (k < 0)
			die_errno("read(pipe, %zu bytes) after %zu of %zu bytes", want, done, total);
		errno_unchanged("read()");
		if (k == 0)
			break;
		if ((size_t)k > want || done + (size_t)k > total)
			die("read(pipe, %zu bytes) returned %zd after %zu of %zu bytes", want, k, done, total);
		if ((size_t)k < want)
			short_reads++;
		done += (size_t)k;
	}
	if (done != total)
		die("end of data after %zu of %zu bytes", done, total);
	atomic_store(&transfer_done, true);
	return NULL;
}

struct hammer {
	pthread_t thread;
	size_t pages;
	unsigned max_passes, passes;
};

ST_FRAME void *hammer(void *arg)
{
	struct hammer *h = arg;
	uint64_t *p = pages_alloc(h->pages, "hammer");
	while (h->passes < h->max_passes && !atomic_load(&transfer_done)) {
		for (size_t i = 0; i < h->pages; i++)
			p[i * WORDS_PER_PAGE + h->passes % WORDS_PER_PAGE] = i ^ h->passes;
		h->passes++;
	}
	free(p);
	return NULL;
}

int main(int argc, char **argv)
{
	size_t mib = arg_ulong(argc, argv, 1, 32);
	chunk = arg_ulong(argc, argv, 2, 1024) * 1024;
	unsigned nhammers = (unsigned)arg_ulong(argc, argv, 3, 2);
	size_t hammer_mib = arg_ulong(argc, argv, 4, 16);
	unsigned hammer_passes = (unsigned)arg_ulong(argc, argv, 5, 8);
	int p[2], err;

	total = mib * MiB;
	if (nhammers > 16)
		die("at most 16 hammers");
	if (pipe(p) < 0)
		die_errno("pipe");
	struct side rside = { .name = "reader", .fd = p[0], .events = POLLIN };
	struct side wside = { .name = "writer", .fd = p[1], .events = POLLOUT };
	side_init(&rside);
	side_init(&wside);
	src = pages_alloc(total / PAGE_SIZE_BYTES, "src");
	dst = pages_alloc(total / PAGE_SIZE_BYTES, "dst");
	fill_bytes(src, total, SEED);
	memset(dst, 0xdd, total); /* resident once, then evicted: read() refaults it in the kernel */
	st_range("pollfds", rside.pollfds, SLOTS * PAGE_SIZE_BYTES);
	st_range("pollfds", wside.pollfds, SLOTS * PAGE_SIZE_BYTES);
	st_range("fdsets", rside.fdsets, SLOTS * PAGE_SIZE_BYTES);
	st_range("fdsets", wside.fdsets, SLOTS * PAGE_SIZE_BYTES);
	st_range("src", src, total);
	st_range("dst", dst, total);

	struct hammer hammers[16];
	for (unsigned i = 0; i < nhammers; i++) {
		hammers[i] = (struct hammer){ .pages = hammer_mib * MiB / PAGE_SIZE_BYTES, .max_passes = hammer_passes };
		if ((err = pthread_create(&hammers[i].thread, NULL, hammer, &hammers[i])))
			die_errno_at(err, "pthread_create(hammer %u)", i);
	}
	pthread_t rt, wt;
	if ((err = pthread_create(&rt, NULL, reader, &rside)) || (err = pthread_create(&wt, NULL, writer, &wside)))
		die_errno_at(err, "pthread_create(reader/writer)");
	if ((err = pthread_join(wt, NULL)) || (err = pthread_join(rt, NULL)))
		die_errno_at(err, "pthread_join(reader/writer)");
	unsigned long hpasses = 0;
	for (unsigned i = 0; i < nhammers; i++) {
		if ((err = pthread_join(hammers[i].thread, NULL)))
			die_errno_at(err, "pthread_join(hammer %u)", i);
		hpasses += hammers[i].passes;
	}
	close(p[0]);
	verify_bytes(dst, total, SEED, "data received through the pipe");
	uint64_t sum = 0;
	for (size_t i = 0; i < total; i += 4093)
		sum = (sum ^ dst[i]) * 0x100000001B3ULL;
	printf("surface ok %zu MiB writes %lu reads %lu short_reads %lu polls %lu selects %lu hammer_passes %lu checksum %016llx\n",
	       mib, writes, reads, short_reads, rside.polls + wside.polls, rside.selects + wside.selects, hpasses,
	       (unsigned long long)sum);
	return 0;
}
