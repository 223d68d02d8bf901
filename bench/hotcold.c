/* hotcold.c: a hot array used all the time while a cold array streams past — the case an
 * eviction policy must get right: keep the hot pages local, let the cold ones go.
 *
 * usage: hotcold [HOT_MIB (16)] [COLD_MIB (256)] [CHUNK_KIB (1024)]
 * The hot array is written once (every page), then the cold array is written page by page in
 * chunks of CHUNK_KIB; after each chunk, one round over the hot array increments one word in
 * every hot page. At the end every hot page is checked (its word = page index + rounds).
 * Under `faultline record -L X` with HOT < X < HOT + COLD, a policy that tracks use (CLOCK) keeps
 * the hot array resident and faults only on cold first touches; FIFO evicts hot pages as they
 * age and faults them back again and again.
 * prints: hotcold hot_mib=H cold_mib=C rounds=R ns=T */
#include "bench.h"

int main(int argc, char **argv)
{
	size_t hot_mib = bench_arg(argc, argv, 1, 16), cold_mib = bench_arg(argc, argv, 2, 256);
	size_t chunk_kib = bench_arg(argc, argv, 3, 1024);
	const size_t wpp = BENCH_PAGE / sizeof(uint64_t);
	size_t hot_pages = hot_mib * BENCH_MiB / BENCH_PAGE, cold_pages = cold_mib * BENCH_MiB / BENCH_PAGE;
	size_t chunk_pages = chunk_kib * 1024 / BENCH_PAGE;
	if (!hot_pages || !cold_pages || !chunk_pages)
		bench_die("sizes must be > 0 (HOT_MIB, COLD_MIB, CHUNK_KIB >= 4)");
	uint64_t *hot = aligned_alloc(BENCH_PAGE, hot_pages * BENCH_PAGE);
	uint64_t *cold = aligned_alloc(BENCH_PAGE, cold_pages * BENCH_PAGE);
	if (!hot || !cold)
		bench_die_errno("aligned_alloc(%zu + %zu MiB)", hot_mib, cold_mib);
	uint64_t t0 = bench_now_ns();
	for (size_t i = 0; i < hot_pages; i++)
		hot[i * wpp] = i;
	size_t rounds = 0;
	for (size_t c = 0; c < cold_pages; c += chunk_pages) {
		for (size_t i = c; i < c + chunk_pages && i < cold_pages; i++)
			((volatile uint64_t *)cold)[i * wpp] = i;
		for (size_t i = 0; i < hot_pages; i++)
			((volatile uint64_t *)hot)[i * wpp] += 1;
		rounds++;
	}
	for (size_t i = 0; i < hot_pages; i++)
		if (hot[i * wpp] != i + rounds)
			bench_die("hot page %zu holds %llu, want %zu", i,
				  (unsigned long long)hot[i * wpp], i + rounds);
	uint64_t t1 = bench_now_ns();
	printf("hotcold hot_mib=%zu cold_mib=%zu rounds=%zu ns=%llu\n", hot_mib, cold_mib, rounds,
	       (unsigned long long)(t1 - t0));
	free(cold);
	free(hot);
	return 0;
}
