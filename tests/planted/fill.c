/* fill.c: allocates N MiB with one malloc (default 256), writes a position-dependent pattern to every
 * word in address order (so every page is first touched once, in order), then reads everything back
 * twice, verifying each word. Prints the checksum of the contents, identical in every correct run.
 *
 * usage: fill [N_MiB]
 * Under `record -L X` with X < N, the write pass evicts the first pages and both read passes refault
 * them; the expected first-touch count is N MiB / 4 KiB pages (plus allocator metadata). */
#include "planted.h"

int main(int argc, char **argv)
{
	size_t mib = arg_ulong(argc, argv, 1, 256);
	size_t bytes = mib * MiB, nwords = bytes / sizeof(uint64_t);
	uint64_t *buf = malloc(bytes);
	if (!buf)
		die_errno("malloc(%zu MiB)", mib);
	fill_words(buf, nwords, 0xf111);
	uint64_t sum1 = verify_words(buf, nwords, 0xf111, "read pass 1");
	uint64_t sum2 = verify_words(buf, nwords, 0xf111, "read pass 2");
	if (sum1 != sum2)
		die("checksums of the two read passes differ: %#llx vs %#llx",
		    (unsigned long long)sum1, (unsigned long long)sum2);
	printf("fill %zu MiB checksum %016llx\n", mib, (unsigned long long)sum1);
	free(buf);
	return 0;
}
