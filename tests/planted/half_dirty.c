/* half_dirty.c: writes half of its pages and only reads the other half, sleeps, then reads
 * everything back — for the eviction events (clean vs dirty) and the fault times (service time,
 * the thread's virtual time, which must not advance during the sleep).
 *
 * usage: half_dirty [N_MiB] [SLEEP_MS]   (defaults 16 MiB, 400 ms)
 * One page-aligned allocation of N MiB (posix_memalign: a plain malloc of this size may start at a
 * random offset into its first page (jemalloc's cache-oblivious large allocations), and then
 * every page would be written; its pages start as zeros). Pass 1, in address order: every
 * even page gets a position-dependent pattern written to each word, every odd page is only read
 * (and must read as zeros). Then it sleeps SLEEP_MS, then pass 2 reads every page and verifies it.
 * Under `record -L X` with X well below N, every written page is evicted dirty exactly once (its
 * first eviction; after a read refault it is clean), every read-only page is evicted clean. Prints
 * the pages written and its (only) thread's CPU time at the end (CLOCK_THREAD_CPUTIME_ID, ns). */
#include "planted.h"

#include <time.h>

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
		die_errno("clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	size_t mib = arg_ulong(argc, argv, 1, 16), sleep_ms = arg_ulong(argc, argv, 2, 400);
	size_t pages = mib * MiB / PAGE_SIZE_BYTES, written = 0;
	uint64_t *buf = NULL, zeros = 0;
	int err = posix_memalign((void **)&buf, PAGE_SIZE_BYTES, mib * MiB);
	if (err)
		die_errno_at(err, "posix_memalign(%zu MiB)", mib);
	for (size_t p = 0; p < pages; p++) {
		uint64_t *page = buf + p * WORDS_PER_PAGE;
		if (p % 2 == 0) {
			fill_words(page, WORDS_PER_PAGE, 0x4a1f + p);
			written++;
		} else {
			for (size_t w = 0; w < WORDS_PER_PAGE; w++)
				zeros |= ((volatile uint64_t *)page)[w];
		}
	}
	if (zeros)
		die("a page never written reads as non-zero");
	struct timespec pause = { (time_t)(sleep_ms / 1000), (long)(sleep_ms % 1000) * 1000000L };
	while (nanosleep(&pause, &pause) < 0)
		;
	for (size_t p = 0; p < pages; p++) {
		const uint64_t *page = buf + p * WORDS_PER_PAGE;
		if (p % 2 == 0)
			verify_words(page, WORDS_PER_PAGE, 0x4a1f + p, "written page");
		else if (first_nonzero(page, PAGE_SIZE_BYTES) != PAGE_SIZE_BYTES)
			die("page %zu, never written, reads as non-zero", p);
	}
	printf("half_dirty %zu MiB pages_written %zu thread_cpu_ns %llu\n", mib, written, (unsigned long long)cpu_ns());
	free(buf);
	return 0;
}
