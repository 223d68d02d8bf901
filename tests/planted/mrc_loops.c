/* mrc_loops.c: a program whose LRU miss-ratio curve has a closed form, for `faultline mrc`.
 * Allocates four arrays of 10 %, 20 %, 30 % and 40 % of TOTAL_MIB, then, one array after the
 * other, sweeps each one LOOPS times, page by page in address order (the first sweep writes the
 * pattern: first touches; the later ones check every word of the page WORK times, so a page is
 * reused milliseconds after its previous use, not microseconds: the --mrc prober, which re-arms
 * a touched page about a millisecond later, sees each reuse). A sweep's page is reused after
 * exactly its array's other pages, so with C pages of LRU memory the refaults are
 *     sum over arrays of size S > C of  S x (LOOPS - 1)   (sizes in pages),
 * and nothing else refaults (an array finished is never touched again).
 *
 * usage: mrc_loops [TOTAL_MIB (64)] [LOOPS (4)] [WORK (4)]
 * prints: mrc_loops pages=P1,P2,P3,P4 loops=L checksum=X */
#include "planted.h"

int main(int argc, char **argv)
{
	size_t total = arg_ulong(argc, argv, 1, 64) * MiB, loops = arg_ulong(argc, argv, 2, 4);
	size_t work = arg_ulong(argc, argv, 3, 4);
	static const unsigned tenths[4] = { 1, 2, 3, 4 };
	uint64_t *arrays[4], sum = 0;
	size_t pages[4];
	for (int a = 0; a < 4; a++) {
		pages[a] = total / 10 * tenths[a] / PAGE_SIZE_BYTES;
		arrays[a] = aligned_alloc(PAGE_SIZE_BYTES, pages[a] * PAGE_SIZE_BYTES);
		if (!arrays[a])
			die_errno("aligned_alloc(%zu pages)", pages[a]);
	}
	for (int a = 0; a < 4; a++) {
		for (size_t l = 0; l < loops; l++) {
			for (size_t p = 0; p < pages[a]; p++) {
				uint64_t *page = arrays[a] + p * WORDS_PER_PAGE;
				if (l == 0) {
					fill_words(page, WORDS_PER_PAGE, (uint64_t)a * 1000003 + p);
					continue;
				}
				for (size_t k = 0; k < work; k++)
					sum = sum * 31 + verify_words(page, WORDS_PER_PAGE, (uint64_t)a * 1000003 + p, "sweep");
			}
		}
	}
	printf("mrc_loops pages=%zu,%zu,%zu,%zu loops=%zu checksum=%llx\n", pages[0], pages[1], pages[2],
	       pages[3], loops, (unsigned long long)sum);
	for (int a = 0; a < 4; a++)
		free(arrays[a]);
	return 0;
}
