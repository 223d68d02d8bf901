/* alloc_heavy.c: an allocation-heavy program with few faults, whose per-site allocation counts are
 * known by construction (the sites file must repeat them exactly), in the class of cfrac and
 * espresso: millions of small objects allocated, written, read and freed, next to one array.
 *
 * usage: alloc_heavy [N]   (default 20000000)
 * Three allocation sites, each a function calling malloc itself:
 *   churn_one    N objects, one live at a time: object i is 16 + 8 * (i % 16) bytes, written
 *                whole and summed, then freed. bytes = N * 76 (N a multiple of 16), live peak 136.
 *   batch_fill   after every 1000 churn objects, 100 objects of 64 bytes live together, then
 *                freed: allocs = 100 * floor(N / 1000), bytes = 64 * allocs, live peak 6400.
 *   make_array   one 8 MiB array, every page written once (2048 first touches), freed at the end.
 * Prints "range array ADDR LEN", then "alloc_heavy N churn C batch B checksum HEX". */
#include "planted.h"
#include "st_common.h"

#define ARRAY_BYTES (8 * MiB)
#define BATCH 100

ST_FRAME uint64_t *churn_one(size_t bytes)
{
	uint64_t *p = malloc(bytes);
	ST_KEEP(p);
	return p;
}

ST_FRAME uint64_t *batch_fill(void)
{
	uint64_t *p = malloc(64);
	ST_KEEP(p);
	return p;
}

ST_FRAME uint64_t *make_array(void)
{
	uint64_t *p = malloc(ARRAY_BYTES);
	ST_KEEP(p);
	return p;
}

/* Some work on each object, as real programs do between their allocations (cfrac's bignum steps,
 * espresso's cube operations): about 60-80 ns here natively, so the allocator is a large but not
 * the only part of the run (print the native time per object to compare). */
static inline uint64_t use_object(uint64_t *p, size_t words, uint64_t seed)
{
	uint64_t sum = 0;
	for (size_t w = 0; w < words; w++)
		p[w] = seed * 0x9e3779b97f4a7c15ull + w;
	for (unsigned round = 0; round < 4; round++)
		for (size_t w = 0; w < words; w++) {
			sum = (sum ^ p[w]) * 0x100000001b3ull;
			p[w] = sum >> 7;
		}
	return sum;
}

int main(int argc, char **argv)
{
	size_t n = arg_ulong(argc, argv, 1, 20000000);
	uint64_t sum = 0, churn = 0, batch = 0;
	uint64_t *keep[BATCH];

	n -= n % 16;
	uint64_t *array = make_array();
	if (!array)
		die_errno("malloc(8 MiB)");
	st_range("array", array, ARRAY_BYTES);
	for (size_t i = 0; i < ARRAY_BYTES / sizeof(uint64_t); i += WORDS_PER_PAGE)
		array[i] = i;
	for (size_t i = 0; i < n; i++) {
		size_t bytes = 16 + 8 * (i % 16);
		uint64_t *p = churn_one(bytes);
		if (!p)
			die_errno("malloc(%zu)", bytes);
		sum += use_object(p, bytes / sizeof(uint64_t), i);
		free(p);
		churn++;
		if (i % 1000 == 999) {
			for (size_t k = 0; k < BATCH; k++) {
				keep[k] = batch_fill();
				if (!keep[k])
					die_errno("malloc(64)");
				sum += use_object(keep[k], 8, k);
			}
			for (size_t k = 0; k < BATCH; k++)
				free(keep[k]);
			batch += BATCH;
		}
	}
	for (size_t i = 0; i < ARRAY_BYTES / sizeof(uint64_t); i += WORDS_PER_PAGE)
		sum += array[i];
	free(array);
	printf("alloc_heavy %zu churn %llu batch %llu checksum %016llx\n", n, (unsigned long long)churn,
	       (unsigned long long)batch, (unsigned long long)sum);
	return 0;
}
