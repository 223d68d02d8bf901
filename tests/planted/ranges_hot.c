/* ranges_hot.c: a planted hot range for `faultline ranges`. Allocates a HOT_MiB array (default 8)
 * and a COLD_MiB one (default 512), then runs ROUNDS rounds (default 60); each round touches
 * every page of the hot array once, in address order, and interleaves one access to a random page
 * of the cold array after every fourth hot page. Under `record -L 4` the hot array (larger than
 * local memory) refaults on every round, and nearly every cold access faults too, so about 80 % of
 * the faults fall inside the hot array and 20 % spread over the cold one:
 *     faults ≈ ROUNDS · (hot pages + hot pages / 4) = 60 · 2,560 = 153,600 by default.
 * Every access checks the word it finds (the value the previous round wrote, or zero) before
 * writing its own, so a wrong page is caught. Prints the two arrays' address ranges:
 *     hot 0xSTART 0xEND
 *     cold 0xSTART 0xEND
 *     checksum 0x...
 * usage: ranges_hot [HOT_MiB [COLD_MiB [ROUNDS]]] */
#include "planted.h"

#include <inttypes.h>

#define SEED_HOT 0x407ULL
#define SEED_COLD 0xc01dULL

/* One word per page is used: word 0 of page i holds value(i, round). */
static uint64_t hot_value(size_t page, unsigned long round)
{
	return pattern_word(page, SEED_HOT + round);
}

static void touch_hot(uint64_t *hot, size_t page, unsigned long round)
{
	uint64_t *w = &hot[page * WORDS_PER_PAGE];
	uint64_t want = round ? hot_value(page, round - 1) : 0;
	if (*w != want)
		die("hot page %zu (%p), round %lu: found %#llx, want %#llx", page, (void *)w, round,
		    (unsigned long long)*w, (unsigned long long)want);
	*w = hot_value(page, round);
}

/* Cold pages hold 0 (never written) or their one fixed value. */
static void touch_cold(uint64_t *cold, size_t page)
{
	uint64_t *w = &cold[page * WORDS_PER_PAGE];
	uint64_t want = pattern_word(page, SEED_COLD);
	if (*w != 0 && *w != want)
		die("cold page %zu (%p): found %#llx, want 0 or %#llx", page, (void *)w,
		    (unsigned long long)*w, (unsigned long long)want);
	*w = want;
}

int main(int argc, char **argv)
{
	size_t hot_mib = arg_ulong(argc, argv, 1, 8), cold_mib = arg_ulong(argc, argv, 2, 512);
	unsigned long rounds = arg_ulong(argc, argv, 3, 60);
	size_t hot_pages = hot_mib * MiB / PAGE_SIZE_BYTES, cold_pages = cold_mib * MiB / PAGE_SIZE_BYTES;
	uint64_t *hot = malloc(hot_mib * MiB);
	uint64_t *cold = malloc(cold_mib * MiB);
	uint64_t rng = 0x5eed, sum = 0;

	if (!hot || !cold)
		die_errno("malloc(%zu MiB + %zu MiB)", hot_mib, cold_mib);
	printf("hot 0x%" PRIxPTR " 0x%" PRIxPTR "\n", (uintptr_t)hot, (uintptr_t)hot + hot_mib * MiB);
	printf("cold 0x%" PRIxPTR " 0x%" PRIxPTR "\n", (uintptr_t)cold, (uintptr_t)cold + cold_mib * MiB);
	fflush(stdout);
	for (unsigned long r = 0; r < rounds; r++) {
		for (size_t i = 0; i < hot_pages; i++) {
			touch_hot(hot, i, r);
			if (i % 4 == 3)
				touch_cold(cold, (size_t)(rng_next(&rng) % cold_pages));
		}
	}
	for (size_t i = 0; i < hot_pages; i++)
		sum = (sum ^ hot[i * WORDS_PER_PAGE]) * 0x100000001B3ULL;
	printf("checksum 0x%016llx\n", (unsigned long long)sum);
	free(cold);
	free(hot);
	return 0;
}
