/* refault.c: the refault path — fills a working set larger than local memory, then reads it back,
 * so that (nearly) every read brings a page back from the far store: faultline's refault, or the
 * kernel's swap-in when run natively under a memory cgroup limit with swap.
 *
 * usage: refault seq|rand MIB [PASSES (1)]
 * Fill: one malloc of MIB MiB; two words written in every page (first word = page index, last
 * word = its complement, so no page is "same-filled" for zswap-like tricks). Then PASSES read
 * passes, each reading the first word of every page once and checking it: seq in address order,
 * rand in a pseudo-random permutation of the pages (a bijective hash over the next power of two,
 * values past the end skipped: no index array that would itself need memory).
 * prints:  fill pages=N ns=T cpu_ns=C
 *          pass mode=M pages=N ns=T cpu_ns=C majflt=A minflt=B ns_per_page=X ns_per_refault=Y
 * where C is the CPU time of the whole process during the phase (under faultline, the handler
 * threads' too: the cost of a fault wherever it is paid)
 * and A + B are the page faults of the pass (getrusage): with swap, a swap-in is a major fault
 * and a page found in the swap cache (read ahead) a minor one; a userfaultfd fault counts as
 * major. ns_per_refault = T / (A + B). */
#include "bench.h"

/* A bijection of [0, 2^bits): xorshift and odd multiplications, each invertible mod 2^bits. */
static uint64_t permute(uint64_t x, unsigned bits, uint64_t seed)
{
	uint64_t mask = (bits >= 64) ? ~0ULL : ((1ULL << bits) - 1);
	unsigned s = bits / 2 ? bits / 2 : 1;
	x = (x ^ seed) & mask;
	x = (x * 0x9e3779b97f4a7c15ULL) & mask;
	x ^= x >> s;
	x = (x * 0xbf58476d1ce4e5b9ULL) & mask;
	x ^= x >> s;
	x = (x * 0x94d049bb133111ebULL) & mask;
	x ^= x >> s;
	return x;
}

static void read_pass(uint64_t *buf, size_t pages, int random, unsigned bits, unsigned pass)
{
	const size_t wpp = BENCH_PAGE / sizeof(uint64_t);
	uint64_t span = 1ULL << bits, seed = 0x5eed0000ULL + pass;
	size_t done = 0;
	struct bench_faults f0 = bench_faults_now();
	uint64_t c0 = bench_cpu_ns();
	uint64_t t0 = bench_now_ns();
	for (uint64_t k = 0; k < (random ? span : pages); k++) {
		uint64_t i = random ? permute(k, bits, seed) : k;
		if (i >= pages)
			continue;
		uint64_t v = ((volatile uint64_t *)buf)[i * wpp];
		if (v != i)
			bench_die("page %llu holds %#llx, want %#llx", (unsigned long long)i,
				  (unsigned long long)v, (unsigned long long)i);
		done++;
	}
	uint64_t t1 = bench_now_ns();
	uint64_t c1 = bench_cpu_ns();
	struct bench_faults f1 = bench_faults_now();
	long maj = f1.major - f0.major, min = f1.minor - f0.minor;
	if (done != pages)
		bench_die("pass read %zu pages, want %zu", done, pages);
	printf("pass mode=%s pages=%zu ns=%llu cpu_ns=%llu majflt=%ld minflt=%ld ns_per_page=%.1f "
	       "ns_per_refault=%.1f\n", random ? "rand" : "seq", pages,
	       (unsigned long long)(t1 - t0), (unsigned long long)(c1 - c0), maj, min, (double)(t1 - t0) / (double)pages,
	       maj + min > 0 ? (double)(t1 - t0) / (double)(maj + min) : 0.0);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	if (argc < 3 || (strcmp(argv[1], "seq") && strcmp(argv[1], "rand")))
		bench_die("usage: refault seq|rand MIB [PASSES]");
	int random = !strcmp(argv[1], "rand");
	size_t mib = bench_arg(argc, argv, 2, 64);
	unsigned passes = (unsigned)bench_arg(argc, argv, 3, 1);
	size_t pages = mib * BENCH_MiB / BENCH_PAGE, wpp = BENCH_PAGE / sizeof(uint64_t);
	unsigned bits = 1;
	while ((1ULL << bits) < pages)
		bits++;
	uint64_t *buf = aligned_alloc(BENCH_PAGE, pages * BENCH_PAGE);
	if (!buf)
		bench_die_errno("aligned_alloc(%zu MiB)", mib);
	uint64_t c0 = bench_cpu_ns();
	uint64_t t0 = bench_now_ns();
	for (size_t i = 0; i < pages; i++) {
		buf[i * wpp] = i;
		buf[i * wpp + wpp - 1] = ~(uint64_t)i;
	}
	uint64_t t1 = bench_now_ns();
	printf("fill pages=%zu ns=%llu cpu_ns=%llu\n", pages, (unsigned long long)(t1 - t0),
	       (unsigned long long)(bench_cpu_ns() - c0));
	for (unsigned p = 0; p < passes; p++)
		read_pass(buf, pages, random, bits, p);
	free(buf);
	return 0;
}
