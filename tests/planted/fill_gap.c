/* fill_gap.c: starts writing a fresh buffer A, leaves it for a while, then finishes it. Allocates A
 * (264 pages: the fill that reaches its end has 62 pages more to go) and right after it C (1 MiB,
 * never touched), writes the first two pages of A, then fills a
 * second buffer B of N MiB (default 16) in order, then writes the rest of A, then checks every word
 * of A and B. Then writes one word in each of 2,000 pages of a fresh 32 MiB buffer D chosen at
 * random (a fixed sequence), and checks them. Prints the checksum of the contents,
 * identical in every correct run.
 *
 * usage: fill_gap [N_MiB]
 * Under `record -L X --fill-ahead K` with X well below N: A's second page is a first-touch write
 * after a resident page, so the pages after it are filled ahead; B's pages then evict them before
 * the program wrote them, and the later writes of A find them evicted with nothing but zeros in
 * them: first touches, not refaults (stats.json filled_ahead_unused). A fill stays inside the
 * object written: none of the pages after A's end is filled. Random writes are no forward walk:
 * D's pages are not filled, however many of their neighbours are resident. */
#include "planted.h"

int main(int argc, char **argv)
{
	size_t mib = arg_ulong(argc, argv, 1, 16);
	size_t a_words = 264 * WORDS_PER_PAGE, first_words = 2 * WORDS_PER_PAGE;
	uint64_t *a = malloc(a_words * sizeof(uint64_t));
	char *c = malloc(MiB);
	if (!a || !c)
		die_errno("malloc(1 MiB)");
	fill_words(a, first_words, 0xa11);
	size_t b_words;
	uint64_t *b = malloc_filled(mib, 0xb22, &b_words);
	for (size_t i = first_words; i < a_words; i++)
		a[i] = pattern_word(i, 0xa11);
	uint64_t sum = verify_words(a, a_words, 0xa11, "buffer A") ^ verify_words(b, b_words, 0xb22, "buffer B");
	size_t d_pages = 32 * MiB / PAGE_SIZE_BYTES;
	uint64_t *d = malloc(32 * MiB), x = 88172645463325252ULL;
	if (!d)
		die_errno("malloc(32 MiB)");
	for (int i = 0; i < 2000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		size_t w = (x % d_pages) * WORDS_PER_PAGE;
		d[w] = pattern_word(w, 0xd44);
	}
	x = 88172645463325252ULL;
	for (int i = 0; i < 2000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		size_t w = (x % d_pages) * WORDS_PER_PAGE;
		if (d[w] != pattern_word(w, 0xd44))
			die("buffer D, page %zu: %#llx", w / WORDS_PER_PAGE, (unsigned long long)d[w]);
		sum = (sum ^ d[w]) * 0x100000001B3ULL;
	}
	free(d);
	printf("fill_gap %zu MiB checksum %016llx\n", mib, (unsigned long long)sum);
	free(b);
	free(c);
	free(a);
	return 0;
}
