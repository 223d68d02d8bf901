/* malloc_large.c: mimalloc-bench's malloc-large pattern: 20 buffer slots, each iteration replaces a
 * random slot with a new block of 5-25 MiB that is zeroed whole (as make_unique<char[]>(n) does),
 * freeing the slot's old block. Few objects, many pages: every byte of a new block is written
 * once, and freed blocks come back as the next ones.
 *
 * usage: malloc_large [ITERATIONS]   (default 500)
 * One byte per page of each block is then marked and checked at the end (exit 1 if one is lost).
 * Prints "malloc_large ITERATIONS checksum HEX" (a sum over the marks). */
#include "planted.h"

#define SLOTS 20
#define MIN_BYTES (5 * MiB)
#define MAX_BYTES (25 * MiB)

int main(int argc, char **argv)
{
	unsigned long iterations = arg_ulong(argc, argv, 1, 500);
	char *slot[SLOTS] = { 0 };
	size_t size[SLOTS] = { 0 };
	unsigned long mark[SLOTS] = { 0 };
	uint64_t rng = 42, sum = 0;

	for (unsigned long i = 0; i < iterations; i++) {
		unsigned k = (unsigned)(rng_next(&rng) % SLOTS);
		size_t n = MIN_BYTES + rng_next(&rng) % (MAX_BYTES - MIN_BYTES);
		char *p = malloc(n);
		if (!p)
			die_errno("malloc(%zu)", n);
		memset(p, 0, n); /* as make_unique<char[]>(n) */
		for (size_t b = 0; b < n; b += PAGE_SIZE_BYTES)
			p[b] = (char)(i + 1); /* one mark per page, checked at the end */
		free(slot[k]);
		slot[k] = p;
		size[k] = n;
		mark[k] = i + 1;
	}
	for (unsigned k = 0; k < SLOTS; k++) {
		for (size_t b = 0; b < size[k]; b += PAGE_SIZE_BYTES) {
			if ((unsigned char)slot[k][b] != (unsigned char)mark[k])
				die("slot %u: byte %zu of %zu is %u, want %u", k, b, size[k], (unsigned char)slot[k][b],
				    (unsigned char)mark[k]);
			sum += (unsigned char)slot[k][b];
		}
		free(slot[k]);
	}
	printf("malloc_large %lu checksum %016llx\n", iterations, (unsigned long long)sum);
	return 0;
}
