/* bigbuf.c: large buffers replaced and re-initialised, like a malloc benchmark — a set of live
 * buffers of a few MB, where a randomly chosen one is freed and allocated again with a new random
 * size, written entirely (value-initialised), then read a little.
 *
 * usage: bigbuf ROUNDS [MIN_KIB (5120)] [MAX_KIB (25600)] [SLOTS (20)]
 *
 * First fills all SLOTS with buffers of MIN_KIB..MAX_KIB KiB (sizes pseudo-random: the same in every
 * run). Then, ROUNDS times: picks a slot, frees its buffer, mallocs one of a new size, writes every
 * 8-byte word of it (a value that depends on the round and the word's index), and reads one word in
 * every 64 back into a running sum. Peak heap: about SLOTS × (MIN + MAX) / 2 (20 × 15 MiB = 300 MiB
 * by default), every round writes (MIN + MAX) / 2 of fresh memory. A checksum over every word read
 * and, at the end, a sample of every live buffer catches any page that came back wrong.
 *
 * prints: bigbuf rounds=R slots=S min_kib=A max_kib=B bytes_written=W ns=T cpu_ns=C checksum=X */
#include "bench.h"

struct slot {
	uint64_t *words;
	size_t count;  /* 8-byte words */
	uint64_t seed; /* word i holds (bench_mix64(seed) + i) × a constant: see fill */
};

static size_t pick_words(uint64_t draw, uint64_t min_kib, uint64_t max_kib)
{
	uint64_t kib = min_kib + draw % (max_kib - min_kib + 1);
	return (size_t)(kib * 1024 / sizeof(uint64_t));
}

/* The value-initialisation: every word written, cheaply (one multiply per word, not a full hash),
 * so the program's own work stays small next to its memory traffic. */
static void fill(struct slot *s)
{
	uint64_t base = bench_mix64(s->seed);
	for (size_t i = 0; i < s->count; i++)
		s->words[i] = (base + i) * 0x9e3779b97f4a7c15ULL;
}

/* "A little work reading it": one word in STRIDE (64: one in every 512 bytes, 8 a page), each
 * checked against the value fill wrote. */
static uint64_t read_sample(const struct slot *s, size_t stride)
{
	uint64_t base = bench_mix64(s->seed), sum = 0;
	for (size_t i = 0; i < s->count; i += stride) {
		uint64_t want = (base + i) * 0x9e3779b97f4a7c15ULL;
		if (s->words[i] != want)
			bench_die("buffer seed %llu, word %zu: read %016llx, wrote %016llx", (unsigned long long)s->seed,
				  i, (unsigned long long)s->words[i], (unsigned long long)want);
		sum += bench_mix64(s->words[i] ^ i);
	}
	return sum;
}

static void allocate(struct slot *s, uint64_t seed, uint64_t min_kib, uint64_t max_kib)
{
	s->seed = seed;
	s->count = pick_words(bench_mix64(seed ^ 0x5bd1e995ULL), min_kib, max_kib);
	s->words = malloc(s->count * sizeof(uint64_t));
	if (!s->words)
		bench_die_errno("malloc(%zu)", s->count * sizeof(uint64_t));
	fill(s);
}

int main(int argc, char **argv)
{
	uint64_t rounds = bench_arg(argc, argv, 1, 200);
	uint64_t min_kib = bench_arg(argc, argv, 2, 5120);
	uint64_t max_kib = bench_arg(argc, argv, 3, 25600);
	uint64_t slots = bench_arg(argc, argv, 4, 20);
	if (argc < 2 || min_kib < 4 || max_kib < min_kib || max_kib > (1u << 22) || slots < 1 || slots > 4096)
		bench_die("usage: bigbuf ROUNDS [MIN_KIB(>=4) [MAX_KIB(>=MIN, <=4 GiB) [SLOTS(1..4096)]]]");
	struct slot *slot = calloc(slots, sizeof(*slot));
	if (!slot)
		bench_die_errno("calloc(%llu slots)", (unsigned long long)slots);
	uint64_t c0 = bench_cpu_ns(), t0 = bench_now_ns();
	uint64_t checksum = 0, written = 0;
	for (uint64_t i = 0; i < slots; i++) {
		allocate(&slot[i], i + 1, min_kib, max_kib);
		written += slot[i].count * sizeof(uint64_t);
		checksum += read_sample(&slot[i], 64);
	}
	for (uint64_t r = 0; r < rounds; r++) {
		struct slot *s = &slot[bench_mix64(r * 0x2545f4914f6cdd1dULL + 7) % slots];
		free(s->words);
		allocate(s, slots + r + 1, min_kib, max_kib);
		written += s->count * sizeof(uint64_t);
		checksum = checksum * 31 + read_sample(s, 64);
	}
	for (uint64_t i = 0; i < slots; i++) /* what is live at the end, sampled more sparsely */
		checksum = checksum * 31 + read_sample(&slot[i], 4096);
	uint64_t t1 = bench_now_ns(), c1 = bench_cpu_ns();
	printf("bigbuf rounds=%llu slots=%llu min_kib=%llu max_kib=%llu bytes_written=%llu ns=%llu cpu_ns=%llu "
	       "checksum=%016llx\n",
	       (unsigned long long)rounds, (unsigned long long)slots, (unsigned long long)min_kib,
	       (unsigned long long)max_kib, (unsigned long long)written, (unsigned long long)(t1 - t0),
	       (unsigned long long)(c1 - c0), (unsigned long long)checksum);
	for (uint64_t i = 0; i < slots; i++)
		free(slot[i].words);
	free(slot);
	return 0;
}
