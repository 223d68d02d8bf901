/* realloc_storm.c: the malloc family's edge cases, then a storm of realloc growing and shrinking
 * many buffers (small, medium and large, up to MAX MiB), checking after every call that the
 * surviving prefix still holds its pattern.
 *
 * usage: realloc_storm [ITERATIONS [MAX_MiB]]   (defaults 3000, 32)
 * Prints a summary line that is the same in every correct run. */
#include "planted.h"
#include <malloc.h>

#define SLOTS 64

struct slot {
	uint8_t *p;
	size_t size;
	uint32_t seed;
};

static void check_usable(void *p, size_t want, const char *what)
{
	size_t usable = malloc_usable_size(p);
	if (usable < want)
		die("%s: malloc_usable_size %zu < requested %zu", what, usable, want);
}

static void check_aligned(void *p, size_t align, const char *what)
{
	if ((uintptr_t)p % align)
		die("%s: %p is not aligned to %zu", what, p, align);
}

/* Fills a fresh block with its pattern and checks it reads back. */
static void use_block(void *p, size_t n, uint32_t seed, const char *what)
{
	fill_bytes(p, n, seed);
	verify_bytes(p, n, seed, what);
}

static void test_zero_and_null(void)
{
	free(NULL);
	void *p = malloc(0);
	if (!p)
		die_errno("malloc(0) returned NULL");
	void *q = malloc(0);
	if (!q || q == p)
		die("malloc(0) twice: %p and %p, want two distinct non-NULL pointers", p, q);
	free(p);
	free(q);

	p = realloc(NULL, 1000);
	if (!p)
		die_errno("realloc(NULL, 1000)");
	check_usable(p, 1000, "realloc(NULL, 1000)");
	use_block(p, 1000, 1, "realloc(NULL, 1000)");
	/* realloc(p, 0) either frees p and returns NULL (glibc) or returns a minimal block (jemalloc);
	 * both are allowed, both results may be passed to free. */
	free(realloc(p, 0));

	p = realloc(NULL, 3 * MiB);
	if (!p)
		die_errno("realloc(NULL, 3 MiB)");
	use_block(p, 3 * MiB, 2, "realloc(NULL, 3 MiB)");
	free(p);
}

static void test_overflow(void)
{
	/* volatile: keeps gcc from rejecting the (deliberately) impossible sizes at compile time */
	volatile size_t half = SIZE_MAX / 2, quarter = SIZE_MAX / 4, huge = SIZE_MAX - 4096;
	errno = 0;
	void *p = calloc(half, 3);
	if (p || errno != ENOMEM)
		die("calloc(SIZE_MAX/2, 3): got %p errno %d, want NULL with ENOMEM", p, errno);
	errno = 0;
	p = reallocarray(NULL, quarter, 8);
	if (p || errno != ENOMEM)
		die("reallocarray(NULL, SIZE_MAX/4, 8): got %p errno %d, want NULL with ENOMEM", p, errno);
	errno = 0;
	p = malloc(huge);
	if (p || errno != ENOMEM)
		die("malloc(SIZE_MAX - 4096): got %p errno %d, want NULL with ENOMEM", p, errno);
}

static void test_reallocarray(void)
{
	uint8_t *p = reallocarray(NULL, 1000, 24);
	if (!p)
		die_errno("reallocarray(NULL, 1000, 24)");
	check_usable(p, 24000, "reallocarray");
	fill_bytes(p, 24000, 3);
	p = reallocarray(p, 100000, 24);
	if (!p)
		die_errno("reallocarray(p, 100000, 24)");
	check_usable(p, 2400000, "reallocarray grow");
	size_t bad = check_bytes(p, 0, 24000, 3);
	if (bad < 24000)
		die("reallocarray grow lost the prefix at byte %zu", bad);
	free(p);
}

/* calloc must return zeros even where the same addresses just held other data (and were perhaps
 * evicted with it in between: the biggest size is MAX_MiB, more than the tests' -L). */
static void test_calloc_reuse(size_t max_bytes)
{
	const size_t sizes[] = { 24, 200, 4096, 5000, 65536, 1 * MiB + 100, max_bytes / 4 + 4096 + 12, max_bytes + 100 };
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t n = sizes[s], count = n < 100000 ? 64 : 1;
		void *blocks[64];
		for (int round = 0; round < 2; round++) {
			for (size_t i = 0; i < count; i++) {
				blocks[i] = malloc(n);
				if (!blocks[i])
					die_errno("malloc(%zu)", n);
				memset(blocks[i], 0xA5 + round, n);
			}
			for (size_t i = 0; i < count; i++)
				free(blocks[i]);
			for (size_t i = 0; i < count; i++) {
				blocks[i] = calloc(1, n);
				if (!blocks[i])
					die_errno("calloc(1, %zu)", n);
				size_t nz = first_nonzero(blocks[i], n);
				if (nz < n)
					die("calloc(1, %zu) round %d block %zu: byte %zu is %#x, want 0", n, round, i,
					    nz, ((uint8_t *)blocks[i])[nz]);
				check_usable(blocks[i], n, "calloc");
			}
			for (size_t i = 0; i < count; i++)
				free(blocks[i]);
		}
	}
	/* calloc with nmemb * size not a multiple of anything in particular */
	uint32_t *a = calloc(123457, sizeof(uint32_t));
	if (!a)
		die_errno("calloc(123457, 4)");
	if (first_nonzero(a, 123457 * sizeof(uint32_t)) < 123457 * sizeof(uint32_t))
		die("calloc(123457, 4) is not zeroed");
	free(a);
}

static void test_alignment(void)
{
	static const size_t aligns[] = { 8, 16, 32, 64, 256, 4096, 8192, 65536, 1 << 20, 4 << 20 };
	static const size_t sizes[] = { 1, 100, 4096, 40000, 300000, 3 * MiB };
	uint32_t seed = 10;
	for (size_t a = 0; a < sizeof(aligns) / sizeof(aligns[0]); a++) {
		for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			size_t al = aligns[a], n = sizes[s];
			if (n > MiB && al < 65536)
				continue; /* big blocks only with big alignments: keeps the fault count down */
			char what[96];
			void *p = NULL;
			int err = posix_memalign(&p, al, n);
			snprintf(what, sizeof(what), "posix_memalign(%zu, %zu)", al, n);
			if (err)
				die_errno_at(err, "%s", what);
			check_aligned(p, al, what);
			check_usable(p, n, what);
			use_block(p, n, seed++, what);
			free(p);

			snprintf(what, sizeof(what), "aligned_alloc(%zu, %zu)", al, n);
			size_t rounded = (n + al - 1) / al * al; /* C11 wants size a multiple of alignment */
			p = aligned_alloc(al, rounded);
			if (!p)
				die_errno("%s", what);
			check_aligned(p, al, what);
			check_usable(p, rounded, what);
			use_block(p, rounded, seed++, what);
			free(p);

			snprintf(what, sizeof(what), "memalign(%zu, %zu)", al, n);
			p = memalign(al, n);
			if (!p)
				die_errno("%s", what);
			check_aligned(p, al, what);
			check_usable(p, n, what);
			use_block(p, n, seed++, what);
			free(p);
		}
	}
	void *p = NULL;
	int err = posix_memalign(&p, 24, 100);
	if (err != EINVAL)
		die("posix_memalign(alignment 24) returned %d, want EINVAL", err);
	err = posix_memalign(&p, 4, 100); /* not a multiple of sizeof(void *) */
	if (err != EINVAL)
		die("posix_memalign(alignment 4) returned %d, want EINVAL", err);

	long page = sysconf(_SC_PAGESIZE);
	p = valloc(10000);
	if (!p)
		die_errno("valloc(10000)");
	check_aligned(p, page, "valloc");
	check_usable(p, 10000, "valloc");
	use_block(p, 10000, seed++, "valloc");
	free(p);
	p = pvalloc(10000);
	if (!p)
		die_errno("pvalloc(10000)");
	check_aligned(p, page, "pvalloc");
	check_usable(p, 12288, "pvalloc"); /* pvalloc rounds the size up to whole pages */
	use_block(p, 12288, seed++, "pvalloc");
	free(p);
}

/* Size of the next request: mostly small, some medium, a few large. */
static size_t pick_size(uint64_t *rng, size_t max_bytes)
{
	uint64_t r = rng_next(rng), kind = r % 100;
	r >>= 8;
	if (kind < 70)
		return 1 + r % 4096;
	if (kind < 97)
		return 4096 + r % MiB;
	return MiB + r % (max_bytes - MiB + 1);
}

static void storm(unsigned long iterations, size_t max_bytes, uint64_t *summary)
{
	struct slot slots[SLOTS] = { { 0 } };
	uint64_t rng = 0x5eed5eed5eedULL;
	size_t live = 0, moves = 0, reallocs = 0;
	const size_t live_cap = 3 * max_bytes; /* bounds the working set */
	for (unsigned long it = 0; it < iterations; it++) {
		struct slot *s = &slots[rng_next(&rng) % SLOTS];
		uint64_t action = rng_next(&rng) % 10;
		if (s->p && action == 0) { /* free */
			verify_bytes(s->p, s->size, s->seed, "before free");
			free(s->p);
			live -= s->size;
			*s = (struct slot){ 0 };
			continue;
		}
		size_t n = pick_size(&rng, max_bytes);
		while (live - s->size + n > live_cap) { /* make room: free the biggest other buffer */
			struct slot *big = NULL;
			for (int i = 0; i < SLOTS; i++)
				if (slots[i].p && &slots[i] != s && (!big || slots[i].size > big->size))
					big = &slots[i];
			if (!big)
				break;
			verify_bytes(big->p, big->size, big->seed, "before free (room)");
			free(big->p);
			live -= big->size;
			*big = (struct slot){ 0 };
		}
		if (!s->p) {
			s->seed = (uint32_t)rng_next(&rng);
			if (action < 5) {
				s->p = malloc(n);
			} else if (action < 8) {
				s->p = calloc(n, 1);
				if (s->p && first_nonzero(s->p, n) < n)
					die("iteration %lu: calloc(%zu, 1) not zeroed at byte %zu", it, n,
					    first_nonzero(s->p, n));
			} else {
				s->p = realloc(NULL, n);
			}
			if (!s->p)
				die_errno("iteration %lu: allocating %zu bytes", it, n);
			check_usable(s->p, n, "new buffer");
			fill_bytes(s->p, n, s->seed);
			s->size = n;
			live += n;
			continue;
		}
		/* realloc: the prefix min(old, new) must survive, the rest is ours to fill */
		uint8_t *old = s->p;
		uint8_t *p = realloc(s->p, n);
		if (!p)
			die_errno("iteration %lu: realloc(%zu -> %zu)", it, s->size, n);
		reallocs++;
		moves += p != old;
		check_usable(p, n, "realloc");
		size_t keep = s->size < n ? s->size : n;
		size_t bad = check_bytes(p, 0, keep, s->seed);
		if (bad < keep)
			die("iteration %lu: realloc(%zu -> %zu) %s: byte %zu of the preserved prefix is %#x, want %#x",
			    it, s->size, n, p == old ? "in place" : "moved", bad, p[bad],
			    pattern_byte(bad, s->seed));
		if (n > s->size)
			for (size_t i = s->size; i < n; i++)
				p[i] = pattern_byte(i, s->seed);
		live += n;
		live -= s->size;
		s->p = p;
		s->size = n;
	}
	uint64_t sum = 0;
	for (int i = 0; i < SLOTS; i++) {
		if (!slots[i].p)
			continue;
		verify_bytes(slots[i].p, slots[i].size, slots[i].seed, "final check");
		sum = sum * 31 + slots[i].size;
		free(slots[i].p);
	}
	summary[0] = reallocs;
	summary[1] = sum;
	(void)moves; /* moved or not depends on the allocator: not part of the output */
}

int main(int argc, char **argv)
{
	unsigned long iterations = arg_ulong(argc, argv, 1, 3000);
	size_t max_mib = arg_ulong(argc, argv, 2, 32);
	if (max_mib < 2)
		die("MAX_MiB must be at least 2");
	test_zero_and_null();
	test_overflow();
	test_reallocarray();
	test_alignment();
	test_calloc_reuse(max_mib * MiB);
	uint64_t summary[2];
	storm(iterations, max_mib * MiB, summary);
	test_calloc_reuse(max_mib * MiB);
	printf("realloc_storm %lu iterations, max %zu MiB: %llu reallocs, final sizes %016llx\n", iterations,
	       max_mib, (unsigned long long)summary[0], (unsigned long long)summary[1]);
	return 0;
}
