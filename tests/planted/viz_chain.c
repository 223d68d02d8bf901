/* viz_chain.c: a call chain with a known shape for the flame graph tests: main → a → b → c → d,
 * each noinline and doing work after its call (so no call becomes a tail call), and d the only
 * function that touches the heap array: it writes one word in each of N pages (default 2048) of a
 * malloc'ed buffer, then sums them back. Every fault of the array is therefore taken in d, whose
 * caller chain is exactly main;a;b;c;d (no helper is inlined into d). A second chain, main → e,
 * writes a smaller array (N/4 pages) through e_fill, always inlined into e, then reads it back in e
 * itself, so the graph also has main;e;e_fill (an inlined frame) and main;e.
 *
 * usage: viz_chain [PAGES]
 * Prints a checksum (the same in every correct run). */
#include "planted.h"

/* Keeps the compiler from folding the calls away or turning them into jumps. */
static volatile uint64_t sink;

__attribute__((noinline)) static uint64_t d(uint64_t *array, size_t pages, uint64_t seed)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < pages; i++)
		array[i * WORDS_PER_PAGE] = (i + 1) * seed;
	for (size_t i = 0; i < pages; i++)
		sum += array[i * WORDS_PER_PAGE];
	return sum;
}

__attribute__((noinline)) static uint64_t c(uint64_t *array, size_t pages, uint64_t seed)
{
	uint64_t r = d(array, pages, seed);
	sink = r;
	return r ^ 3;
}

__attribute__((noinline)) static uint64_t b(uint64_t *array, size_t pages, uint64_t seed)
{
	uint64_t r = c(array, pages, seed + 1);
	sink = r;
	return r ^ 2;
}

__attribute__((noinline)) static uint64_t a(uint64_t *array, size_t pages, uint64_t seed)
{
	uint64_t r = b(array, pages, seed + 1);
	sink = r;
	return r ^ 1;
}

/* Inlined into e: its faults are drawn as main;e;e_fill (an inlined frame the symbolizer expands). */
__attribute__((always_inline)) static inline void e_fill(uint64_t *array, size_t pages)
{
	for (size_t i = 0; i < pages; i++)
		array[i * WORDS_PER_PAGE] = i + 1;
}

__attribute__((noinline)) static uint64_t e(size_t pages)
{
	uint64_t *array = malloc(pages * PAGE_SIZE_BYTES);
	uint64_t sum = 0;
	if (!array)
		die_errno("malloc(%zu pages)", pages);
	e_fill(array, pages);
	for (size_t i = 0; i < pages; i++)
		sum += array[i * WORDS_PER_PAGE];
	sink = sum;
	free(array);
	return sum;
}

int main(int argc, char **argv)
{
	size_t pages = arg_ulong(argc, argv, 1, 2048);
	uint64_t *array = malloc(pages * PAGE_SIZE_BYTES);
	uint64_t sum;

	if (!array)
		die_errno("malloc(%zu pages)", pages);
	sum = a(array, pages, 7);
	sink = sum;
	sum ^= e(pages / 4 ? pages / 4 : 1);
	printf("viz_chain %zu pages checksum %016llx\n", pages, (unsigned long long)sum);
	free(array);
	return 0;
}
