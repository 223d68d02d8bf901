/* evict_prims.c: what evicting a run of pages costs on this machine, by method — the measurements
 * behind runtime/evict.c's choice (see its top comment).
 *
 * usage: evict_prims [RUN_PAGES (64)] [MIB (64)] [SIBLING (0|1)] [STRIDE (1)]
 *
 * A region of MIB MiB is registered with userfaultfd (MISSING | WP) like faultline's region, and a
 * "mirror" of the same size (WP only, so it may be an UFFDIO_MOVE destination) like faultline's far
 * mirror. Each round fills the region with written pages (UFFDIO_COPY, not timed), then evicts all
 * of it in runs of RUN_PAGES pages with one method, timed (wall and process CPU):
 *   wp_copy_fresh  UFFDIO_WRITEPROTECT, memcpy into never-touched mirror pages, MADV_DONTNEED
 *                  (faultline's eviction before this change: a dirty page's first eviction)
 *   wp_copy_warm   the same into mirror pages already present (a later eviction of the page)
 *   copy_warm      memcpy into present mirror pages + MADV_DONTNEED, no write-protect
 *   move           UFFDIO_MOVE region -> mirror (mirror pages are holes)
 *   drop_move      MADV_DONTNEED of the mirror run (stale copies), then UFFDIO_MOVE
 *   drop           MADV_DONTNEED only (a clean page whose far copy is valid)
 * With SIBLING=1 a second thread of the process spins on the other CPU, so every page-table change
 * needs a remote TLB flush (the case of a multi-threaded program).
 * With STRIDE > 1 only every STRIDE-th page is filled (scattered victims, as a random access
 * pattern leaves them; the others are holes), and each round evicts them RUN_PAGES at a time by:
 *   move_each      one UFFDIO_MOVE per page (a move's TLB flushes are batched only over
 *                  consecutive present pages, so one move over the holes costs the same)
 *   batch_copy     UFFDIO_WRITEPROTECT over the group's span, one process_vm_writev into the
 *                  mirror, one process_madvise(MADV_DONTNEED) of the pages (runtime/evict_copy.c)
 * prints one line per method: evict method=M run=R pages=N ns_per_page=W cpu_ns_per_page=C */
#include "bench.h"
#include "bench_uffd.h"

#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../runtime/uffd_compat.h"

static atomic_bool stop;
static char src_page[BENCH_PAGE] __attribute__((aligned(BENCH_PAGE)));

static void *spin(void *arg)
{
	(void)arg;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(1, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		;
	return NULL;
}

static int open_uffd(void)
{
	int fd = bench_uffd_open(O_NONBLOCK, 0);
	if (fd < 0)
		bench_die_errno("UFFDIO_API");
	return fd;
}

static char *map_registered(int uffd, size_t bytes, uint64_t mode)
{
	char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		bench_die_errno("mmap");
	madvise(p, bytes, MADV_NOHUGEPAGE);
	struct uffdio_register reg = { .range = { (uint64_t)(uintptr_t)p, bytes }, .mode = mode };
	if (ioctl(uffd, UFFDIO_REGISTER, &reg) < 0)
		bench_die_errno("UFFDIO_REGISTER");
	return p;
}

static void fill(int uffd, char *region, size_t pages, size_t stride)
{
	for (size_t i = 0; i < pages; i += stride) {
		src_page[0] = (char)i;
		struct uffdio_copy c = { (uint64_t)(uintptr_t)(region + i * BENCH_PAGE), (uint64_t)(uintptr_t)src_page,
					 BENCH_PAGE, UFFDIO_COPY_MODE_DONTWAKE, 0 };
		if (ioctl(uffd, UFFDIO_COPY, &c) < 0)
			bench_die_errno("UFFDIO_COPY");
	}
}

enum method { WP_COPY_FRESH, WP_COPY_WARM, COPY_WARM, MOVE, DROP_MOVE, DROP, NMETHODS };
static const char *const names[] = { "wp_copy_fresh", "wp_copy_warm", "copy_warm", "move", "drop_move", "drop" };

static void evict_run(int uffd, enum method m, char *r, char *mi, size_t n)
{
	size_t len = n * BENCH_PAGE;
	if (m == WP_COPY_FRESH || m == WP_COPY_WARM) {
		struct uffdio_writeprotect wp = { { (uint64_t)(uintptr_t)r, len }, UFFDIO_WRITEPROTECT_MODE_WP };
		if (ioctl(uffd, UFFDIO_WRITEPROTECT, &wp) < 0)
			bench_die_errno("UFFDIO_WRITEPROTECT");
	}
	if (m == WP_COPY_FRESH || m == WP_COPY_WARM || m == COPY_WARM)
		for (size_t i = 0; i < n; i++)
			memcpy(mi + i * BENCH_PAGE, r + i * BENCH_PAGE, BENCH_PAGE);
	if (m == DROP_MOVE)
		madvise(mi, len, MADV_DONTNEED);
	if (m == MOVE || m == DROP_MOVE) {
		struct uffdio_move mv = { (uint64_t)(uintptr_t)mi, (uint64_t)(uintptr_t)r, len,
					  UFFDIO_MOVE_MODE_DONTWAKE | UFFDIO_MOVE_MODE_ALLOW_SRC_HOLES, 0 };
		if (ioctl(uffd, UFFDIO_MOVE, &mv) < 0)
			bench_die_errno("UFFDIO_MOVE of %zu pages", n);
		return;
	}
	if (madvise(r, len, MADV_DONTNEED) < 0)
		bench_die_errno("madvise");
}

enum scattered { MOVE_EACH, BATCH_COPY, NSCATTERED };
static const char *const scattered_names[] = { "move_each", "batch_copy" };

/* Evicts the N present pages at r, r + stride, ... (mirror at mi) by method M. */
static void evict_scattered(int uffd, int pidfd, enum scattered m, char *r, char *mi, size_t n, size_t stride)
{
	struct iovec region[256], mirror[256];
	if (m == MOVE_EACH) {
		for (size_t i = 0; i < n; i++) {
			struct uffdio_move mv = { (uint64_t)(uintptr_t)(mi + i * stride * BENCH_PAGE),
						  (uint64_t)(uintptr_t)(r + i * stride * BENCH_PAGE), BENCH_PAGE,
						  UFFDIO_MOVE_MODE_DONTWAKE, 0 };
			if (ioctl(uffd, UFFDIO_MOVE, &mv) < 0)
				bench_die_errno("UFFDIO_MOVE");
		}
		return;
	}
	struct uffdio_writeprotect wp = { { (uint64_t)(uintptr_t)r, ((n - 1) * stride + 1) * BENCH_PAGE },
					  UFFDIO_WRITEPROTECT_MODE_WP };
	if (ioctl(uffd, UFFDIO_WRITEPROTECT, &wp) < 0)
		bench_die_errno("UFFDIO_WRITEPROTECT");
	for (size_t i = 0; i < n; i++) {
		region[i] = (struct iovec){ r + i * stride * BENCH_PAGE, BENCH_PAGE };
		mirror[i] = (struct iovec){ mi + i * stride * BENCH_PAGE, BENCH_PAGE };
	}
	if (process_vm_writev(getpid(), region, n, mirror, n, 0) != (ssize_t)(n * BENCH_PAGE))
		bench_die_errno("process_vm_writev");
	if (syscall(SYS_process_madvise, pidfd, region, n, MADV_DONTNEED, 0) != (long)(n * BENCH_PAGE))
		bench_die_errno("process_madvise");
}

/* STRIDE > 1: scattered victims, RUN at a time, by each method (fresh mirror pages). */
static void run_scattered(int uffd, char *region, char *mirror, size_t pages, size_t run, size_t stride, int sibling)
{
	int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (pidfd < 0)
		bench_die_errno("pidfd_open");
	if (run > 256)
		run = 256;
	size_t victims = (pages + stride - 1) / stride;
	for (int rep = 0; rep < 2; rep++) {
		for (enum scattered m = 0; m < NSCATTERED; m++) {
			fill(uffd, region, pages, stride);
			madvise(mirror, pages * BENCH_PAGE, MADV_DONTNEED);
			uint64_t c0 = bench_cpu_ns(), t0 = bench_now_ns();
			for (size_t v = 0; v < victims; v += run)
				evict_scattered(uffd, pidfd, m, region + v * stride * BENCH_PAGE, mirror + v * stride * BENCH_PAGE,
						v + run <= victims ? run : victims - v, stride);
			uint64_t t1 = bench_now_ns(), c1 = bench_cpu_ns();
			if (rep == 1)
				printf("evict method=%s run=%zu stride=%zu pages=%zu sibling=%d ns_per_page=%.0f cpu_ns_per_page=%.0f\n",
				       scattered_names[m], run, stride, victims, sibling, (double)(t1 - t0) / (double)victims,
				       (double)(c1 - c0) / (double)victims);
			fflush(stdout);
		}
	}
	close(pidfd);
}

int main(int argc, char **argv)
{
	size_t run = bench_arg(argc, argv, 1, 64);
	size_t mib = bench_arg(argc, argv, 2, 64);
	int sibling = (int)bench_arg(argc, argv, 3, 0);
	size_t stride = bench_arg(argc, argv, 4, 1);
	size_t pages = mib * BENCH_MiB / BENCH_PAGE;
	int uffd = open_uffd();
	char *region = map_registered(uffd, pages * BENCH_PAGE, UFFDIO_REGISTER_MODE_MISSING | UFFDIO_REGISTER_MODE_WP);
	char *mirror = map_registered(uffd, pages * BENCH_PAGE, UFFDIO_REGISTER_MODE_WP);
	pthread_t th;
	if (sibling && pthread_create(&th, NULL, spin, NULL))
		bench_die("pthread_create");
	if (stride > 1)
		run_scattered(uffd, region, mirror, pages, run, stride, sibling);
	for (int rep = 0; rep < 2 && stride <= 1; rep++) {
		for (enum method m = 0; m < NMETHODS; m++) {
			fill(uffd, region, pages, 1);
			if (m == WP_COPY_FRESH || m == MOVE)
				madvise(mirror, pages * BENCH_PAGE, MADV_DONTNEED);
			else /* mirror present (stale copies) */
				for (size_t i = 0; i < pages; i++)
					mirror[i * BENCH_PAGE] = 1;
			uint64_t c0 = bench_cpu_ns(), t0 = bench_now_ns();
			for (size_t p = 0; p < pages; p += run)
				evict_run(uffd, m, region + p * BENCH_PAGE, mirror + p * BENCH_PAGE,
					  p + run <= pages ? run : pages - p);
			uint64_t t1 = bench_now_ns(), c1 = bench_cpu_ns();
			if (rep == 1)
				printf("evict method=%s run=%zu pages=%zu sibling=%d ns_per_page=%.0f cpu_ns_per_page=%.0f\n",
				       names[m], run, pages, sibling, (double)(t1 - t0) / (double)pages,
				       (double)(c1 - c0) / (double)pages / (sibling ? 1.0 : 1.0));
			fflush(stdout);
		}
	}
	atomic_store(&stop, true);
	if (sibling)
		pthread_join(th, NULL);
	return 0;
}
