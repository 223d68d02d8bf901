/* rel_churn.c: many threads allocating, writing, verifying, reallocating and freeing blocks of random
 * sizes (8 B .. 8 MiB, log-uniform) for a fixed time, with the total of live bytes capped.
 *
 * Each thread owns SLOTS slots. One step picks a slot at random:
 *   empty slot:    malloc (or calloc, checked to read zeros) a random size, fill it with the block's
 *                  own pattern (position-dependent, seeded by thread, slot and generation);
 *   occupied slot: verify the whole block, then either free it, or realloc it to a new random size
 *                  (the kept prefix must be intact, the new tail is filled), or rewrite it with a new
 *                  seed.
 * Live bytes are reserved from a global budget (atomic) before an allocation; a thread that cannot
 * reserve frees its own blocks first, then halves the size. So at most BUDGET bytes are live, which
 * is the program's working set (a test runs it with -L a fraction of BUDGET).
 * At the end every thread verifies and frees what it still holds. Any wrong byte: exit 1 with the
 * block, offset and values on stderr.
 *
 * usage: rel_churn THREADS SECONDS BUDGET_MiB
 * stdout (identical in every correct run): "rel_churn THREADS threads BUDGET MiB: ok";
 * stderr: operation counts (vary with timing). */
#include "planted.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#define SLOTS 8
#define MIN_SHIFT 3   /* 8 B */
#define MAX_SHIFT 22  /* sizes up to 2 << 22 = 8 MiB */

struct block {
	uint8_t *p;
	size_t size;
	uint64_t seed;
};

struct worker {
	pthread_t thread;
	unsigned index;
	uint64_t rng;
	struct block slot[SLOTS];
	unsigned long mallocs, callocs, reallocs, frees, rewrites, verified_mib;
};

static atomic_size_t budget_left;
static atomic_bool stop;
static unsigned run_seconds;

/* Byte j of a block holds byte j % 8 (little-endian) of pattern_word(j / 8, seed): whole words are
 * written and checked as words, so a page copied to the wrong place or served as zeros never matches. */
static inline uint8_t block_byte(size_t j, uint64_t seed)
{
	return (uint8_t)(pattern_word(j / 8, seed) >> (8 * (j % 8)));
}

/* Writes the pattern to p[from .. size). */
static void fill_block(uint8_t *p, size_t from, size_t size, uint64_t seed)
{
	size_t j = from;
	for (; j < size && j % 8; j++)
		p[j] = block_byte(j, seed);
	for (; j + 8 <= size; j += 8)
		memcpy(p + j, &(uint64_t){ pattern_word(j / 8, seed) }, 8);
	for (; j < size; j++)
		p[j] = block_byte(j, seed);
}

static void verify_block(const struct worker *w, unsigned s, const uint8_t *p, size_t size, uint64_t seed,
			 const char *when)
{
	size_t words = size / 8;
	for (size_t i = 0; i < words; i++) {
		uint64_t got;
		memcpy(&got, p + i * 8, 8);
		if (got != pattern_word(i, seed))
			die("thread %u slot %u (%s): block %p of %zu bytes, word %zu (%p): expected %#llx, got %#llx",
			    w->index, s, when, (const void *)p, size, i, (const void *)(p + i * 8),
			    (unsigned long long)pattern_word(i, seed), (unsigned long long)got);
	}
	for (size_t j = words * 8; j < size; j++) {
		uint8_t want = block_byte(j, seed);
		if (p[j] != want)
			die("thread %u slot %u (%s): block %p of %zu bytes, byte %zu: expected %#x, got %#x", w->index, s,
			    when, (const void *)p, size, j, want, p[j]);
	}
}

static size_t random_size(uint64_t *rng)
{
	unsigned shift = MIN_SHIFT + (unsigned)(rng_next(rng) % (MAX_SHIFT - MIN_SHIFT + 1));
	size_t lo = (size_t)1 << shift;
	return lo + (size_t)(rng_next(rng) % (lo + 1)); /* [2^shift, 2^(shift+1)]: 8 B .. 8 MiB */
}

static bool reserve(size_t n)
{
	size_t left = atomic_load(&budget_left);
	while (left >= n)
		if (atomic_compare_exchange_weak(&budget_left, &left, left - n))
			return true;
	return false;
}

static void release(size_t n)
{
	atomic_fetch_add(&budget_left, n);
}

static void free_slot(struct worker *w, unsigned s)
{
	struct block *b = &w->slot[s];
	verify_block(w, s, b->p, b->size, b->seed, "before free");
	free(b->p);
	release(b->size);
	b->p = NULL;
	b->size = 0;
	w->frees++;
}

/* Reserves n bytes (growing by n - have for a realloc), freeing this thread's other blocks and then
 * halving n when the budget is exhausted. Returns the size reserved (>= 8), never fails. */
static size_t reserve_size(struct worker *w, unsigned keep, size_t n, size_t have)
{
	for (;;) {
		if (n <= have || reserve(n - have))
			return n;
		bool freed = false;
		for (unsigned s = 0; s < SLOTS && !freed; s++)
			if (s != keep && w->slot[s].p) {
				free_slot(w, s);
				freed = true;
			}
		if (!freed && n > 8)
			n /= 2;
		if (!freed && n <= 8) {
			if (have >= 8 || reserve(8 - have))
				return 8;
			sched_yield(); /* others hold the whole budget for now */
		}
	}
}

static uint64_t next_seed(struct worker *w, unsigned s)
{
	return ((uint64_t)w->index << 40) ^ ((uint64_t)s << 32) ^ (rng_next(&w->rng) & 0xffffffffULL);
}

static void step(struct worker *w)
{
	unsigned s = (unsigned)(rng_next(&w->rng) % SLOTS);
	struct block *b = &w->slot[s];
	if (!b->p) {
		size_t n = reserve_size(w, s, random_size(&w->rng), 0);
		bool zeroed = rng_next(&w->rng) % 4 == 0;
		b->p = zeroed ? calloc(1, n) : malloc(n);
		if (!b->p)
			die_errno("thread %u: %s(%zu)", w->index, zeroed ? "calloc" : "malloc", n);
		if (zeroed) {
			size_t nz = first_nonzero(b->p, n);
			if (nz < n)
				die("thread %u: calloc(%zu) = %p: byte %zu is %#x, want 0", w->index, n, (void *)b->p, nz,
				    b->p[nz]);
			w->callocs++;
		} else {
			w->mallocs++;
		}
		b->size = n;
		b->seed = next_seed(w, s);
		fill_block(b->p, 0, n, b->seed);
		return;
	}
	verify_block(w, s, b->p, b->size, b->seed, "step");
	w->verified_mib += b->size >> 20;
	switch (rng_next(&w->rng) % 3) {
	case 0:
		free_slot(w, s);
		return;
	case 1: {
		size_t want = random_size(&w->rng);
		size_t n = want > b->size ? reserve_size(w, s, want, b->size) : want;
		uint8_t *q = realloc(b->p, n);
		if (!q)
			die_errno("thread %u: realloc(%p, %zu)", w->index, (void *)b->p, n);
		if (n < b->size)
			release(b->size - n);
		size_t kept = n < b->size ? n : b->size;
		verify_block(w, s, q, kept, b->seed, "prefix kept by realloc");
		if (n > kept)
			fill_block(q, kept, n, b->seed);
		b->p = q;
		b->size = n;
		w->reallocs++;
		return;
	}
	default:
		b->seed = next_seed(w, s);
		fill_block(b->p, 0, b->size, b->seed);
		w->rewrites++;
		return;
	}
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	while (!atomic_load(&stop))
		step(w);
	for (unsigned s = 0; s < SLOTS; s++)
		if (w->slot[s].p)
			free_slot(w, s);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: rel_churn THREADS SECONDS BUDGET_MiB\n");
		return 2;
	}
	unsigned nthreads = (unsigned)arg_ulong(argc, argv, 1, 64);
	run_seconds = (unsigned)arg_ulong(argc, argv, 2, 20);
	size_t budget_mib = arg_ulong(argc, argv, 3, 64);
	atomic_store(&budget_left, budget_mib * MiB);

	struct worker *w = calloc(nthreads, sizeof(*w));
	if (!w)
		die_errno("calloc(%u workers)", nthreads);
	for (unsigned i = 0; i < nthreads; i++) {
		w[i].index = i;
		w[i].rng = 0x5eed0000ULL + i * 0x9E3779B97F4A7C15ULL;
		int err = pthread_create(&w[i].thread, NULL, work, &w[i]);
		if (err)
			die_errno_at(err, "pthread_create(thread %u)", i);
	}
	double start = now();
	while (now() - start < run_seconds)
		usleep(50000);
	atomic_store(&stop, true);
	unsigned long m = 0, c = 0, r = 0, f = 0, rw = 0, mib = 0;
	for (unsigned i = 0; i < nthreads; i++) {
		int err = pthread_join(w[i].thread, NULL);
		if (err)
			die_errno_at(err, "pthread_join(thread %u)", i);
		m += w[i].mallocs, c += w[i].callocs, r += w[i].reallocs, f += w[i].frees, rw += w[i].rewrites;
		mib += w[i].verified_mib;
	}
	if (atomic_load(&budget_left) != budget_mib * MiB)
		die("budget accounting: %zu bytes left at the end, want %zu", atomic_load(&budget_left), budget_mib * MiB);
	fprintf(stderr, "rel_churn: %.1f s: %lu malloc, %lu calloc, %lu realloc, %lu free, %lu rewrite, %lu MiB verified\n",
		now() - start, m, c, r, f, rw, mib);
	if (m + c == 0 || f == 0 || r == 0)
		die("too little work done: %lu malloc, %lu calloc, %lu realloc, %lu free", m, c, r, f);
	printf("rel_churn %u threads %zu MiB: ok\n", nthreads, budget_mib);
	free(w);
	return 0;
}
