/* zero_fill.c: allocates N MiB (default 32), writes zeros over all of it in address order
 * (explicit_bzero: the compiler may not turn it into calloc, so every page is written), then
 * reads every word back twice, checking it is zero. Prints the number of words read.
 *
 * usage: zero_fill [N_MiB]
 * Under `record -L X --fill-ahead K` with X < N: the pages were written (with zeros) before
 * they were evicted, so the read passes' faults are refaults, exactly as without --fill-ahead;
 * none is taken for the first touch of a page filled ahead and never used. */
#include "planted.h"

#include <string.h>

int main(int argc, char **argv)
{
	size_t mib = arg_ulong(argc, argv, 1, 32);
	size_t bytes = mib * MiB, nwords = bytes / sizeof(uint64_t), read = 0;
	uint64_t *buf = malloc(bytes);
	if (!buf)
		die_errno("malloc(%zu MiB)", mib);
	explicit_bzero(buf, bytes);
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < nwords; i++, read++)
			if (((volatile uint64_t *)buf)[i])
				die("pass %d, word %zu: %#llx, want 0", pass + 1, i, (unsigned long long)buf[i]);
	printf("zero_fill %zu MiB, %zu words read, all zero\n", mib, read);
	free(buf);
	return 0;
}
