/* touch.c: the first-touch program — allocates PAGES pages with one aligned_alloc and writes one
 * byte to each, once, in address order. The touch loop alone is timed (CLOCK_MONOTONIC), so the
 * result is the cost of a first-touch page fault without process start and exit around it:
 * natively the kernel's anonymous fault, under faultline a userfaultfd fault served by its
 * runtime.
 *
 * usage: touch [PAGES (16384)]
 * prints: touch pages=N ns_per_page=X faults=F ns_per_fault=Y
 * (F = minor + major page faults of the process during the loop, from getrusage: a userfaultfd
 * fault is retried by the kernel and counts as major). */
#include "bench.h"

int main(int argc, char **argv)
{
	size_t pages = bench_arg(argc, argv, 1, 16384);
	if (pages == 0)
		bench_die("PAGES must be > 0");
	char *p = aligned_alloc(BENCH_PAGE, pages * BENCH_PAGE);
	if (!p)
		bench_die_errno("aligned_alloc(%zu pages)", pages);
	struct bench_faults f0 = bench_faults_now();
	uint64_t t0 = bench_now_ns();
	for (size_t i = 0; i < pages; i++)
		((volatile char *)p)[i * BENCH_PAGE] = (char)i;
	uint64_t t1 = bench_now_ns();
	struct bench_faults f1 = bench_faults_now();
	long faults = (f1.minor - f0.minor) + (f1.major - f0.major);
	printf("touch pages=%zu ns_per_page=%.1f faults=%ld ns_per_fault=%.1f\n", pages,
	       (double)(t1 - t0) / (double)pages, faults,
	       faults > 0 ? (double)(t1 - t0) / (double)faults : 0.0);
	free(p);
	return 0;
}
