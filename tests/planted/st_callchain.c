/* st_callchain.c: a heap array written from the bottom of a known call chain, main -> chain_a ->
 * chain_b -> chain_c -> chain_d, built like every planted program (-O2 -fomit-frame-pointer): the
 * stacks of those faults must read chain_d, chain_c, chain_b, chain_a, main (frame 0 the faulting
 * store inside chain_d), and since every fault of a pass comes from the same instruction, they must
 * share one stack id (or a few).
 *
 * usage: st_callchain [MIB [PASSES]]   (defaults 16 MiB, 2 passes)
 * One page-aligned allocation of MIB MiB; each pass writes every word through the chain (pass 0 first-touches every
 * page; under -L < MIB later passes refault them); then check_all() reads everything back and
 * verifies the last pass's pattern. Prints on stdout (st_common.h):
 *     range array ADDRESS BYTES
 *     window pass<N> T0 T1        around each pass through the chain
 *     window check T0 T1          around the verification
 *     callchain MIB MiB PASSES passes checksum HEX     (identical in every correct run) */
#include "planted.h"
#include "st_common.h"

/* The bottom of the chain: writes every word; the first store to each page faults here. */
ST_FRAME uint64_t chain_d(uint64_t *p, size_t nwords, uint64_t seed)
{
	for (size_t i = 0; i < nwords; i++)
		p[i] = pattern_word(i, seed);
	return p[nwords / 2] ^ seed;
}

ST_FRAME uint64_t chain_c(uint64_t *p, size_t nwords, uint64_t seed)
{
	uint64_t r = chain_d(p, nwords, seed);
	ST_KEEP(r);
	return r + 3;
}

ST_FRAME uint64_t chain_b(uint64_t *p, size_t nwords, uint64_t seed)
{
	uint64_t r = chain_c(p, nwords, seed);
	ST_KEEP(r);
	return r * 5;
}

ST_FRAME uint64_t chain_a(uint64_t *p, size_t nwords, uint64_t seed)
{
	uint64_t r = chain_b(p, nwords, seed);
	ST_KEEP(r);
	return r ^ 0x77;
}

ST_FRAME uint64_t check_all(const uint64_t *p, size_t nwords, uint64_t seed)
{
	uint64_t r = verify_words(p, nwords, seed, "check_all");
	ST_KEEP(r);
	return r;
}

int main(int argc, char **argv)
{
	size_t mib = arg_ulong(argc, argv, 1, 16);
	unsigned passes = (unsigned)arg_ulong(argc, argv, 2, 2);
	size_t bytes = mib * MiB, nwords = bytes / sizeof(uint64_t);
	uint64_t *array = NULL, acc = 0, seed = 0;
	char name[32];

	/* page-aligned, so the array spans exactly MIB MiB of pages in every run (malloc places large
	 * blocks at a random offset within their first page) */
	int err = posix_memalign((void **)&array, PAGE_SIZE_BYTES, bytes);
	if (err)
		die_errno_at(err, "posix_memalign(%zu MiB)", mib);
	st_range("array", array, bytes);
	for (unsigned pass = 0; pass < passes; pass++) {
		seed = 0xca11c4a1ULL + pass;
		uint64_t t0 = st_now_ns();
		uint64_t r = chain_a(array, nwords, seed);
		ST_KEEP(r);
		uint64_t t1 = st_now_ns();
		acc = acc * 31 + r;
		snprintf(name, sizeof(name), "pass%u", pass);
		st_window(name, t0, t1);
	}
	uint64_t t0 = st_now_ns();
	uint64_t sum = check_all(array, nwords, seed);
	uint64_t t1 = st_now_ns();
	st_window("check", t0, t1);
	printf("callchain %zu MiB %u passes checksum %016llx\n", mib, passes, (unsigned long long)(sum ^ acc));
	free(array);
	return 0;
}
