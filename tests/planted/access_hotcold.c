/* access_hotcold.c: issue 16's sampled-accesses workload. First touches (writes) a hot array and
 * a cold one, each from its own allocation site, then for SECONDS makes 95 % of its accesses to
 * random words of the hot array and 5 % to random words of the cold one, checking every word it
 * reads. Under `record --sample-accesses` without -L, the access samples per MiB of the hot array
 * must far exceed the cold array's, and there is no refault.
 *
 * usage: access_hotcold [HOT_MIB (8)] [COLD_MIB (512)] [SECONDS (3)]
 * prints: hotcold ok (the number of accesses depends on the machine's speed, not printed); on
 * stderr the accesses per second of wall time and per second of the process's CPU time */
#include "planted.h"

#include <stdbool.h>
#include <time.h>

/* Two allocation sites (no tail call: the site is the call in each function). */
__attribute__((noipa, optimize("no-optimize-sibling-calls"))) static uint64_t *alloc_hot_array(size_t bytes)
{
	uint64_t *p = malloc(bytes);
	return p;
}

__attribute__((noipa, optimize("no-optimize-sibling-calls"))) static uint64_t *alloc_cold_array(size_t bytes)
{
	uint64_t *p = malloc(bytes);
	return p;
}

static double clock_s(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

int main(int argc, char **argv)
{
	size_t hot_mib = arg_ulong(argc, argv, 1, 8), cold_mib = arg_ulong(argc, argv, 2, 512);
	double seconds = (double)arg_ulong(argc, argv, 3, 3);
	size_t hot_words = hot_mib * MiB / 8, cold_words = cold_mib * MiB / 8;
	uint64_t *hot = alloc_hot_array(hot_mib * MiB);
	uint64_t *cold = alloc_cold_array(cold_mib * MiB);
	if (!hot || !cold)
		die_errno("malloc(%zu + %zu MiB)", hot_mib, cold_mib);
	fill_words(hot, hot_words, 0x407);
	fill_words(cold, cold_words, 0xc01d);
	uint64_t rng = 0x9e3779b97f4a7c15ULL;
	double start = now_s(), end = start + seconds, cpu_start = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	uint64_t accesses = 0;
	while (now_s() < end) {
		accesses += 65536;
		for (int i = 0; i < 65536; i++) {
			rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
			bool to_hot = rng % 100 < 95;
			size_t w = (size_t)((rng >> 8) % (to_hot ? hot_words : cold_words));
			uint64_t got = to_hot ? hot[w] : cold[w];
			if (got != pattern_word(w, to_hot ? 0x407 : 0xc01d))
				die("%s array, word %zu: 0x%llx", to_hot ? "hot" : "cold", w, (unsigned long long)got);
		}
	}
	/* per second of the process's CPU time too (every thread's, a tracer's own included): on a
	 * shared machine the wall rate follows the share of a CPU the program got */
	fprintf(stderr, "access_hotcold: %.1f M accesses/s, %.1f M per CPU-second\n", (double)accesses / (now_s() - start) / 1e6,
		(double)accesses / (clock_s(CLOCK_PROCESS_CPUTIME_ID) - cpu_start) / 1e6);
	puts("hotcold ok");
	free(hot);
	free(cold);
	return 0;
}
