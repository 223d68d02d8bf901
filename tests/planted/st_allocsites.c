/* st_allocsites.c: two arrays allocated at two call sites (alloc_a and alloc_b, each calling malloc
 * itself), faulted 3:1. The recording must attribute every fault to the allocation it hit, and the
 * two allocation records' stacks must name the two calling functions.
 *
 * usage: st_allocsites [MIB]   (default 8: two arrays of MIB MiB each)
 * Writes one word per page of A, of B, then of A twice more: under -L < MIB every pass faults every
 * page again (first touch, then refaults), so A takes 3 faults per page and B 1. Verifies the words.
 * Prints on stdout (st_common.h) "range A ...", "range B ...", then "allocsites MIB MiB checksum HEX". */
#include "planted.h"
#include "st_common.h"

ST_FRAME uint64_t *alloc_a(size_t bytes)
{
	uint64_t *p = malloc(bytes);
	ST_KEEP(p);
	return p;
}

ST_FRAME uint64_t *alloc_b(size_t bytes)
{
	uint64_t *p = malloc(bytes);
	ST_KEEP(p);
	return p;
}

/* One word per page (the stride is one page, so each write lands in a distinct page). */
ST_FRAME uint64_t touch_pages(uint64_t *p, size_t pages, uint64_t seed)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < pages; i++) {
		if (seed != 1 && p[i * WORDS_PER_PAGE] != pattern_word(i, seed - 1))
			die("page %zu of %p holds %#llx", i, (void *)p, (unsigned long long)p[i * WORDS_PER_PAGE]);
		p[i * WORDS_PER_PAGE] = pattern_word(i, seed);
		sum += p[i * WORDS_PER_PAGE];
	}
	return sum;
}

int main(int argc, char **argv)
{
	size_t mib = arg_ulong(argc, argv, 1, 8);
	size_t bytes = mib * MiB, pages = bytes / PAGE_SIZE_BYTES;
	uint64_t *a = alloc_a(bytes);
	uint64_t *b = alloc_b(bytes);
	if (!a || !b)
		die_errno("malloc(%zu MiB)", mib);
	st_range("A", a, bytes);
	st_range("B", b, bytes);
	uint64_t sum = touch_pages(a, pages, 1);
	sum = sum * 31 + touch_pages(b, pages, 1);
	sum = sum * 31 + touch_pages(a, pages, 2);
	sum = sum * 31 + touch_pages(a, pages, 3);
	printf("allocsites %zu MiB checksum %016llx\n", mib, (unsigned long long)sum);
	free(b);
	free(a);
	return 0;
}
