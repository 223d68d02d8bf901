/* site_agree.c: an object allocated inside libc (strdup calls malloc itself), so that its
 * allocation stack starts with a libc frame, and its pages first touched inside libc too (strdup's
 * copy), then read back by the program. The old resolvers disagreed on it: visualize named the
 * heatmap's allocation "from strdup" (it skipped only libfaultline's frames) while report --by
 * alloc and ranges named main; tests/cases/site_agree.sh checks every verb now names the same
 * callsite, the strdup line of main.
 *
 * usage: site_agree [N_MiB]   (default 8) */
#include "planted.h"

int main(int argc, char **argv)
{
	size_t mib = arg_ulong(argc, argv, 1, 8), bytes = mib * MiB;
	char *text = malloc(bytes + 1);
	if (!text)
		die_errno("malloc(%zu MiB)", mib);
	memset(text, 'x', bytes);
	text[bytes] = '\0';
	free(text);
	text = NULL;
	char *seed = malloc(bytes + 1);
	if (!seed)
		die_errno("malloc(%zu MiB)", mib);
	memset(seed, 'y', bytes);
	seed[bytes] = '\0';
	char *copy = strdup(seed); /* SITE: the allocation site every verb must name */
	if (!copy)
		die_errno("strdup(%zu MiB)", mib);
	free(seed);
	uint64_t sum = 0;
	for (size_t pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < bytes; i += 64)
			sum += (unsigned char)copy[i];
	printf("site_agree %zu MiB sum %llu\n", mib, (unsigned long long)sum);
	free(copy);
	return 0;
}
