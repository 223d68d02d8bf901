/* cyclic_scan.c: a program whose refaults at every local-memory size are known by construction.
 * It allocates N pages with one malloc, then reads one word of every page in address order, R
 * times over (pass 1 first-touches each page, passes 2..R re-touch them), and touches nothing else
 * of its heap in between.
 *
 * usage: cyclic_scan N_PAGES R_PASSES
 * Under `record --policy fifo -L X`: with X < N pages every access of passes 2..R misses (FIFO, like
 * LRU, keeps the last X pages of a cyclic scan, and the next page wanted is always the oldest, just
 * evicted): (R - 1) * N refaults. With X comfortably above N pages (allocator metadata and stdio
 * take a few pages): none. */
#include "planted.h"

int main(int argc, char **argv)
{
	size_t pages = arg_ulong(argc, argv, 1, 1024), passes = arg_ulong(argc, argv, 2, 4);
	volatile uint64_t *buf = malloc(pages * PAGE_SIZE_BYTES);
	uint64_t sum = 0;

	if (!buf)
		die_errno("malloc(%zu pages)", pages);
	for (size_t pass = 0; pass < passes; pass++) {
		for (size_t p = 0; p < pages; p++)
			sum += buf[p * WORDS_PER_PAGE];
	}
	printf("cyclic_scan %zu pages x %zu passes sum %llu\n", pages, passes, (unsigned long long)sum);
	free((void *)buf);
	return 0;
}
