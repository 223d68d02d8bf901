/* thrash_floor.c: the floor for a fault under memory pressure with two faulting threads — the
 * smallest userfaultfd far-memory handler that keeps a hard cap on resident pages, to compare
 * faultline's CPU per fault when threads thrash (bench row T) with what the kernel charges for
 * the same round trips.
 *
 * usage: thrash_floor PAGES CAP_PAGES [THREADS (2)] [WRITES (per thread, 500000)] [HANDLERS (2)]
 *                     [IN: move (default) or copy]
 *
 * One userfaultfd, one region of PAGES pages registered MISSING (no huge pages), and a mirror of
 * the same size registered too, where evicted pages live (the in-memory far store of faultline's
 * default). THREADS threads each add 1 to a pseudo-random 8-byte word of the region WRITES times
 * (random pages: no locality). HANDLERS threads, pinned one per CPU as faultline's handlers are,
 * block in read() for one message at a time. A fault on a page:
 *   - first touch: UFFDIO_COPY of a zero page;
 *   - refault: UFFDIO_MOVE back from the mirror (one system call, no copy), or with IN copy,
 *     UFFDIO_COPY from the mirror and MADV_DONTNEED of the mirror page (faultline's way);
 * and before either, when CAP_PAGES pages are resident, the oldest resident page (FIFO) is moved
 * out to the mirror with UFFDIO_MOVE, one page at a time: atomic, so a write meanwhile faults
 * and waits. Nothing is logged, no stack or counter is taken, no eviction is batched or done
 * ahead: each fault pays its round trip, one eviction and one install. A page's state is one
 * atomic byte; the FIFO ring of resident pages is the only shared structure, under a mutex held
 * for a few instructions.
 *
 * Exit status 77 on a kernel without UFFDIO_MOVE (before 6.8).
 * prints: thrash pages=N cap=C threads=T handlers=H writes=W faults=F first=F1 refaults=R
 *         evictions=E cpu_ns=X wall_ns=Y cpu_ns_per_fault=Z sum_ok=1
 * cpu_ns is the process's CPU time (faulting threads and handlers) over the writing phase; the
 * sum of every word must equal THREADS x WRITES (sum_ok=0 and exit 1 otherwise: a lost write). */
#include "bench.h"
#include "bench_uffd.h"
#include "../runtime/uffd_compat.h" /* the kernel's UFFDIO_MOVE ABI: newer than Debian 12's headers */

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

enum page_state { PAGE_NEW, PAGE_RESIDENT, PAGE_FAR, PAGE_BUSY };

static char zero_page[BENCH_PAGE] __attribute__((aligned(BENCH_PAGE)));

static int uffd = -1;
static char *region, *mirror;
static size_t npages, cap;
static _Atomic uint8_t *state;
static size_t *ring, ring_head, ring_count; /* FIFO of resident pages, under ring_lock */
static size_t installing;                   /* pages with room made, not yet in the ring (ring_lock) */
static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint64_t first_touches, refaults, evictions;
static unsigned long long writes_per_thread;
static bool copy_in;                        /* IN copy: refaults copy from the mirror, then drop it */

static int open_uffd(void)
{
	int fd = bench_uffd_open(0, UFFD_FEATURE_MOVE);
	if (fd < 0 && errno == EINVAL) {
		fprintf(stderr, "thrash_floor: this kernel has no UFFDIO_MOVE (6.8 and later)\n");
		exit(77); /* the bench says the row is skipped */
	}
	if (fd < 0)
		bench_die_errno("ioctl(UFFDIO_API, UFFD_FEATURE_MOVE)");
	return fd;
}

static char *map_registered(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		bench_die_errno("mmap(%zu bytes)", len);
	if (madvise(p, len, MADV_NOHUGEPAGE) < 0)
		bench_die_errno("madvise(MADV_NOHUGEPAGE)");
	struct uffdio_register reg = { .range = { (uintptr_t)p, len }, .mode = UFFDIO_REGISTER_MODE_MISSING };
	if (ioctl(uffd, UFFDIO_REGISTER, &reg) < 0)
		bench_die_errno("ioctl(UFFDIO_REGISTER, %zu bytes)", len);
	return p;
}

static void move_page(char *dst, char *src, bool wake)
{
	struct uffdio_move mv = { .dst = (uintptr_t)dst, .src = (uintptr_t)src, .len = BENCH_PAGE,
				  .mode = wake ? 0 : UFFDIO_MOVE_MODE_DONTWAKE };
	if (ioctl(uffd, UFFDIO_MOVE, &mv) < 0)
		bench_die_errno("ioctl(UFFDIO_MOVE)");
}

static void copy_page(char *dst, const char *src)
{
	struct uffdio_copy c = { .dst = (uintptr_t)dst, .src = (uintptr_t)src, .len = BENCH_PAGE };
	if (ioctl(uffd, UFFDIO_COPY, &c) < 0)
		bench_die_errno("ioctl(UFFDIO_COPY)");
}

/* Moves the oldest resident page out when CAP pages are resident or being installed, and counts
 * the page about to be installed. */
static void make_room(void)
{
	size_t victim = SIZE_MAX;
	pthread_mutex_lock(&ring_lock);
	if (ring_count + installing >= cap && ring_count > 0) {
		victim = ring[ring_head];
		ring_head = (ring_head + 1) % cap;
		ring_count--;
	}
	installing++;
	pthread_mutex_unlock(&ring_lock);
	if (victim == SIZE_MAX)
		return;
	atomic_store(&state[victim], PAGE_BUSY);
	move_page(mirror + victim * BENCH_PAGE, region + victim * BENCH_PAGE, false);
	atomic_store(&state[victim], PAGE_FAR);
	atomic_fetch_add(&evictions, 1);
}

static void serve(uint64_t addr)
{
	size_t page = (addr - (uintptr_t)region) / BENCH_PAGE;
	uint8_t s;
	for (;;) { /* claim the page; a page being moved out is waited for */
		s = atomic_load(&state[page]);
		if (s == PAGE_RESIDENT) { /* another handler brought it in: that install woke the thread */
			struct uffdio_range r = { (uintptr_t)region + page * BENCH_PAGE, BENCH_PAGE };
			ioctl(uffd, UFFDIO_WAKE, &r);
			return;
		}
		if (s == PAGE_BUSY) {
			sched_yield();
			continue;
		}
		if (atomic_compare_exchange_strong(&state[page], &s, PAGE_BUSY))
			break;
	}
	make_room();
	char *dst = region + page * BENCH_PAGE, *far = mirror + page * BENCH_PAGE;
	if (s == PAGE_NEW) {
		copy_page(dst, zero_page);
	} else if (copy_in) {
		copy_page(dst, far);
		if (madvise(far, BENCH_PAGE, MADV_DONTNEED) < 0) /* the next move out needs it empty */
			bench_die_errno("madvise(MADV_DONTNEED) of a mirror page");
	} else {
		move_page(dst, far, true);
	}
	atomic_fetch_add(s == PAGE_NEW ? &first_touches : &refaults, 1);
	atomic_store(&state[page], PAGE_RESIDENT); /* before the ring: from there it may leave at once */
	pthread_mutex_lock(&ring_lock);
	ring[(ring_head + ring_count) % cap] = page;
	ring_count++;
	installing--;
	pthread_mutex_unlock(&ring_lock);
}

static void *handler_main(void *arg)
{
	int cpu = (int)(intptr_t)arg;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set); /* as faultline pins its handlers, where allowed */
	for (;;) {
		struct uffd_msg msg;
		ssize_t n = read(uffd, &msg, sizeof(msg));
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(msg))
			bench_die_errno("read(userfaultfd)");
		if (msg.event == UFFD_EVENT_PAGEFAULT)
			serve(msg.arg.pagefault.address);
	}
	return NULL;
}

static void *writer_main(void *arg)
{
	uint64_t x = 0x9e3779b97f4a7c15ull * ((uintptr_t)arg + 1);
	uint64_t *words = (uint64_t *)region;
	size_t nwords = npages * BENCH_PAGE / sizeof(uint64_t);
	for (unsigned long long i = 0; i < writes_per_thread; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		__atomic_fetch_add(&words[x % nwords], 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		bench_die("usage: thrash_floor PAGES CAP_PAGES [THREADS (2)] [WRITES (500000)] [HANDLERS (2)] [IN (move)]");
	npages = bench_arg(argc, argv, 1, 0);
	cap = bench_arg(argc, argv, 2, 0);
	unsigned threads = (unsigned)bench_arg(argc, argv, 3, 2);
	writes_per_thread = bench_arg(argc, argv, 4, 500000);
	unsigned handlers = (unsigned)bench_arg(argc, argv, 5, 2);
	if (argc > 6 && strcmp(argv[6], "copy") != 0 && strcmp(argv[6], "move") != 0)
		bench_die("IN is move or copy, not '%s'", argv[6]);
	copy_in = argc > 6 && strcmp(argv[6], "copy") == 0;
	if (npages == 0 || cap < 64 || cap > npages || threads == 0 || threads > 64 || handlers == 0 || handlers > 64)
		bench_die("need 64 <= CAP_PAGES <= PAGES, 1-64 threads and 1-64 handlers");

	uffd = open_uffd();
	region = map_registered(npages * BENCH_PAGE);
	mirror = map_registered(npages * BENCH_PAGE);
	state = calloc(npages, 1);
	ring = calloc(cap, sizeof(*ring));
	if (!state || !ring)
		bench_die("out of memory");

	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	for (unsigned h = 0; h < handlers; h++) {
		pthread_t th;
		int err = pthread_create(&th, NULL, handler_main, (void *)(intptr_t)(h % (ncpu > 0 ? ncpu : 1)));
		if (err)
			bench_die("pthread_create(handler): %s", strerror(err));
		pthread_detach(th);
	}
	pthread_t writers[64];
	uint64_t cpu0 = bench_cpu_ns(), t0 = bench_now_ns();
	for (unsigned t = 0; t < threads; t++) {
		int err = pthread_create(&writers[t], NULL, writer_main, (void *)(uintptr_t)t);
		if (err)
			bench_die("pthread_create(writer): %s", strerror(err));
	}
	for (unsigned t = 0; t < threads; t++)
		pthread_join(writers[t], NULL);
	uint64_t cpu = bench_cpu_ns() - cpu0, wall = bench_now_ns() - t0;
	uint64_t first = atomic_load(&first_touches), re = atomic_load(&refaults), f = first + re;

	/* the sum reads every page: far ones fault back in (not counted above) */
	uint64_t sum = 0, *words = (uint64_t *)region;
	for (size_t i = 0; i < npages * BENCH_PAGE / sizeof(uint64_t); i++)
		sum += words[i];
	bool ok = sum == (uint64_t)threads * writes_per_thread;
	printf("thrash pages=%zu cap=%zu threads=%u handlers=%u writes=%llu faults=%llu first=%llu refaults=%llu "
	       "evictions=%llu cpu_ns=%llu wall_ns=%llu cpu_ns_per_fault=%.1f sum_ok=%d\n",
	       npages, cap, threads, handlers, writes_per_thread, (unsigned long long)f,
	       (unsigned long long)first, (unsigned long long)re,
	       (unsigned long long)atomic_load(&evictions), (unsigned long long)cpu, (unsigned long long)wall,
	       f ? (double)cpu / (double)f : 0.0, ok);
	return ok ? 0 : 1;
}
