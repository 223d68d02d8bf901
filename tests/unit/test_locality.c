/* test_locality.c: locality scores against closed forms, a brute-force reference, and the clock.
 *
 *  1. The closed forms (derived below, printed) reproduce the table in
 *     docs/design.md, "Ranges and locality"
 *  2. Synthetic page streams: sequential scan, interleaved streams, cyclic loops over 2^m pages,
 *     uniform random pages over 2^m — scores match the closed forms within 0.02.
 *  3. Random streams and random parameters against an O(n) LRU-stack / full-history reference:
 *     identical reuse histograms and stride sums (exercises compaction, eviction at N, hash
 *     deletion); scores always in [0, 1].
 *  4. Memory stays under its bound; thousands of scorers are cheap; everything is released.
 *  5. 10^6-access streams: accesses per second printed.
 * FAULTLINE_TEST_LONG=1 adds the m = 20 random stream and bigger reference runs. */
#include "locality.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rng_state = 0x243f6a8885a308d3ull;

static uint64_t rng_next(void) /* splitmix64 */
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static struct locality *new_scorer(unsigned window, unsigned bins, unsigned log2_n, enum locality_stride0 stride0)
{
	struct locality_params p = { window, bins, log2_n, stride0 };
	struct locality *loc = locality_new(&p);
	if (!loc) {
		perror("locality_new");
		exit(1);
	}
	return loc;
}

static struct locality *default_scorer(void)
{
	struct locality *loc = locality_new(NULL);
	if (!loc) {
		perror("locality_new");
		exit(1);
	}
	return loc;
}

static void feed(struct locality *loc, uint64_t page)
{
	if (locality_access(loc, page) != 0) {
		perror("locality_access");
		exit(1);
	}
}

static bool near(double a, double b, double tolerance)
{
	return fabs(a - b) <= tolerance;
}

/* ------------------------------------------------------------------------------------------------
 * Closed forms (defaults: W = 32, B = 128 stride bins, L = 17).
 *
 * Temporal weight of Mattson depth s: 1 for s ≤ 2; (L − i)/L for 2^i < s ≤ 2^(i+1), i ≥ 1; 0 for
 * s > 2^L — locality_reuse_weight, checked against this definition in test_closed_forms.
 *
 * Cyclic loop over P = 2^m pages, T accesses: the first P are cold; every later access has seen
 * exactly the P − 1 other pages since its page's last access: s = P. So
 *     temporal(T) = (T − P)/T · weight(P),   steady state weight(P) = (L − m + 1)/L  (1 ≤ m ≤ L).
 * Spatial: if P ≤ W, every access after the first pass finds its own page in the window (stride
 * 0, excluded): only the first pass's P − 1 unit strides count: spatial = 1. If P > W, all strides
 * are 1 except at each wrap (page 0 after P−1), whose window holds P−W..P−1: stride P − W:
 *     spatial(T) = ((T − 1 − wraps) + wraps · w(P − W)) / (T − 1),  wraps = ⌊(T − 1)/P⌋,
 *     w(k) = 1/k for k ≤ B, else 0.
 *
 * Uniform random pages over n = 2^m: after an access to x, every page not yet seen since —
 * including x — is equally likely to be the next first appearance, so x's reuse distance d is
 * uniform on 0..n−1 and s = d + 1 uniform on 1..n (notes: Gu, MSPC'08, re-proved):
 *     temporal = Σ_{s=1}^{n} weight(s)/n = 1/n + Σ_{i=0}^{min(m,L)−1} (2^i/n)(L − i)/L.
 * Spatial: given the current page x, the W window pages are i.i.d. uniform; with
 * q_k(x) = #{y : |x − y| ≤ k}/n, P(stride ≤ k | x) = 1 − (1 − q_k(x))^W. Excluding stride 0:
 *     spatial = E_x[Σ_{k=1}^{B} P(stride = k | x)/k] / E_x[1 − P(stride = 0 | x)].
 * ------------------------------------------------------------------------------------------------ */

static double weight_by_definition(unsigned L, uint64_t s)
{
	if (s == 0 || s > (1ull << L))
		return 0;
	if (s <= 2)
		return 1;
	for (unsigned i = 1; i < L; i++)
		if (s > (1ull << i) && s <= (1ull << (i + 1)))
			return (double)(L - i) / L;
	return 0;
}

static double cyclic_temporal_steady(unsigned L, unsigned m)
{
	return weight_by_definition(L, 1ull << m);
}

static double cyclic_temporal(unsigned L, unsigned m, uint64_t T)
{
	uint64_t P = 1ull << m;
	return T <= P ? 0 : (double)(T - P) / (double)T * weight_by_definition(L, P);
}

static double stride_weight(uint64_t k, unsigned bins)
{
	return k >= 1 && k <= bins ? 1.0 / (double)k : 0.0;
}

static double cyclic_spatial(unsigned W, unsigned bins, unsigned m, uint64_t T)
{
	uint64_t P = 1ull << m;
	if (P <= W)
		return 1.0;
	uint64_t wraps = (T - 1) / P;
	return ((double)(T - 1 - wraps) + (double)wraps * stride_weight(P - W, bins)) / (double)(T - 1);
}

static double uniform_temporal(unsigned L, unsigned m)
{
	double n = (double)(1ull << m), sum = 1.0 / n;
	unsigned top = m < L ? m : L;
	for (unsigned i = 0; i < top; i++)
		sum += ((double)(1ull << i) / n) * (double)(L - i) / L;
	return sum;
}

/* P(stride ≤ k | x) for uniform pages over n, window W: 1 − (1 − q)^W, q = #{y : |x − y| ≤ k}/n. */
static double p_stride_at_most(uint64_t n, unsigned W, uint64_t k, uint64_t x)
{
	uint64_t lo = x >= k ? x - k : 0, hi = x + k < n ? x + k : n - 1;
	return 1.0 - pow(1.0 - (double)(hi - lo + 1) / (double)n, W);
}

/* Σ_x P(stride ≤ k | x): the x farther than k from both ends are alike; x and n−1−x are alike. */
static double sum_p_stride_at_most(uint64_t n, unsigned W, uint64_t k)
{
	double sum = 0;
	if (n <= 2 * k) {
		for (uint64_t x = 0; x < n; x++)
			sum += p_stride_at_most(n, W, k, x);
		return sum;
	}
	for (uint64_t x = 0; x < k; x++)
		sum += 2 * p_stride_at_most(n, W, k, x);
	return sum + (double)(n - 2 * k) * p_stride_at_most(n, W, k, k);
}

static double uniform_spatial(unsigned W, unsigned bins, unsigned m)
{
	uint64_t n = 1ull << m;
	double previous = sum_p_stride_at_most(n, W, 0), numerator = 0;
	double denominator = (double)n - previous; /* stride 0 excluded */
	for (uint64_t k = 1; k <= bins; k++) {
		double at_most = sum_p_stride_at_most(n, W, k);
		numerator += (at_most - previous) / (double)k;
		previous = at_most;
	}
	return numerator / denominator;
}

static void test_closed_forms(void)
{
	struct locality_params p;
	locality_params_default(&p);
	CHECK(p.window == 32 && p.stride_bins == 128 && p.log2_n == 17 && p.stride0 == LOCALITY_STRIDE0_EXCLUDE,
	      "defaults");
	for (uint64_t s = 0; s <= (1u << 18) + 5; s += s < 100 ? 1 : 997)
		CHECK(locality_reuse_weight(&p, s) == weight_by_definition(17, s), "weight(%llu)", (unsigned long long)s);
	for (unsigned i = 1; i <= 18; i++) {
		uint64_t s = 1ull << i;
		CHECK(locality_reuse_weight(&p, s) == weight_by_definition(17, s) &&
			      locality_reuse_weight(&p, s + 1) == weight_by_definition(17, s + 1),
		      "weight at 2^%u", i);
	}
	/* The notes' table (L = 17): cyclic (L − m + 1)/L and uniform random. */
	static const struct {
		unsigned m;
		double value;
	} cyclic[] = { { 4, 0.8235 }, { 8, 0.5882 }, { 12, 0.3529 }, { 16, 0.1176 }, { 17, 0.0588 }, { 18, 0 } },
	  uniform[] = { { 10, 0.5293 }, { 14, 0.2941 }, { 17, 0.1176 }, { 20, 0.0147 } };
	printf("closed forms (L = 17, W = 32, B = 128):\n  cyclic over 2^m pages, temporal (L - m + 1)/L:");
	for (size_t i = 0; i < sizeof cyclic / sizeof cyclic[0]; i++) {
		double v = cyclic_temporal_steady(17, cyclic[i].m);
		printf(" m=%u %.4f", cyclic[i].m, v);
		CHECK(near(v, cyclic[i].value, 5e-5), "cyclic m=%u: %.5f, notes %.4f", cyclic[i].m, v, cyclic[i].value);
	}
	printf("\n  uniform over 2^m pages, temporal 1/n + sum (2^i/n)(L-i)/L:");
	for (size_t i = 0; i < sizeof uniform / sizeof uniform[0]; i++) {
		double v = uniform_temporal(17, uniform[i].m);
		printf(" m=%u %.4f", uniform[i].m, v);
		CHECK(near(v, uniform[i].value, 5e-5), "uniform m=%u: %.5f, notes %.4f", uniform[i].m, v, uniform[i].value);
	}
	double s14 = uniform_spatial(32, 128, 14);
	printf("\n  uniform over 2^14 pages, spatial: %.4f (notes: 0.0195)\n", s14);
	CHECK(near(s14, 0.0195, 0.0005), "uniform spatial %.5f", s14);
	/* the notes' finite-stream row: cyclic over 4096, 200 k refs → 0.3457 temporal, 0.9998 spatial */
	double t4096 = cyclic_temporal(17, 12, 200000), sp4096 = cyclic_spatial(32, 128, 12, 200000);
	printf("  cyclic over 2^12, 200000 accesses: temporal %.4f (notes 0.3457), spatial %.4f (notes 0.9998)\n",
	       t4096, sp4096);
	CHECK(near(t4096, 0.3457, 5e-5) && near(sp4096, 0.9998, 5e-5), "finite cyclic row");
}

/* ------------------------------------------------------------------------------------------------
 * Synthetic streams. */

static void test_sequential(void)
{
	struct locality *loc = default_scorer();
	for (uint64_t p = 0; p < 200000; p++)
		feed(loc, 0x7f0000000ull + p);
	struct locality_scores s;
	locality_get_scores(loc, &s);
	printf("sequential scan, 200000 pages: spatial %.4f temporal %.4f\n", s.spatial, s.temporal);
	CHECK(near(s.spatial, 1.0, 0.01) && s.temporal == 0.0, "sequential: %.4f %.4f", s.spatial, s.temporal);
	CHECK(s.accesses == 200000 && s.cold == 200000 && s.spatial_samples == 199999 && s.stride_one == 199999,
	      "sequential counts");
	locality_free(loc);

	/* STREAM-triad-like: b[i], c[i], a[i] in three arrays far apart. The stride of each access is to
	 * its own array's previous page, 3 accesses back: a window scan that stops early fails here. */
	loc = default_scorer();
	for (uint64_t i = 0; i < 60000; i++) {
		feed(loc, 1000000 + i);
		feed(loc, 5000000 + i);
		feed(loc, 9000000 + i);
	}
	locality_get_scores(loc, &s);
	printf("three interleaved sequential streams: spatial %.4f temporal %.4f\n", s.spatial, s.temporal);
	CHECK(near(s.spatial, 1.0, 0.01) && s.temporal == 0.0, "interleaved: %.4f %.4f", s.spatial, s.temporal);
	locality_free(loc);

	/* Stride 2 scores 1/2; the same page twice in a row is stride 0 (excluded) and reuse s = 1. */
	loc = default_scorer();
	for (uint64_t i = 0; i < 10000; i++)
		feed(loc, 2 * i);
	locality_get_scores(loc, &s);
	CHECK(near(s.spatial, 0.5, 1e-9), "stride 2: %.6f", s.spatial);
	locality_free(loc);
	loc = default_scorer();
	for (uint64_t i = 0; i < 10000; i++) {
		feed(loc, i);
		feed(loc, i);
	}
	locality_get_scores(loc, &s);
	CHECK(near(s.spatial, 1.0, 1e-9) && s.stride_zero == 10000 && near(s.temporal, 0.5, 1e-9),
	      "pairs: spatial %.6f temporal %.6f", s.spatial, s.temporal);
	locality_free(loc);
	loc = new_scorer(32, 128, 17, LOCALITY_STRIDE0_ZERO);
	for (uint64_t i = 0; i < 10000; i++) {
		feed(loc, i);
		feed(loc, i);
	}
	locality_get_scores(loc, &s);
	CHECK(near(s.spatial, 9999.0 / 19999.0, 1e-9), "pairs, stride 0 as zero: %.6f", s.spatial);
	locality_free(loc);
}

static void test_cyclic(void)
{
	static const unsigned ms[] = { 4, 8, 12, 16, 17, 18 };
	printf("cyclic loop over 2^m pages (measured / closed form for this length / steady state):\n");
	for (size_t k = 0; k < sizeof ms / sizeof ms[0]; k++) {
		unsigned m = ms[k];
		uint64_t P = 1ull << m, T = P * 8 > 1000000 ? P * 8 : 1000000;
		struct locality *loc = default_scorer();
		for (uint64_t t = 0; t < T; t++)
			feed(loc, 0x100000 + t % P);
		struct locality_scores s;
		locality_get_scores(loc, &s);
		double want_t = cyclic_temporal(17, m, T), want_s = cyclic_spatial(32, 128, m, T);
		printf("  m=%2u T=%7llu: temporal %.4f / %.4f / %.4f   spatial %.4f / %.4f\n", m, (unsigned long long)T,
		       s.temporal, want_t, cyclic_temporal_steady(17, m), s.spatial, want_s);
		CHECK(near(s.temporal, want_t, 0.02) && near(s.spatial, want_s, 0.02), "cyclic m=%u", m);
		CHECK(near(s.temporal, want_t, 1e-9), "cyclic m=%u exact: %.9f vs %.9f", m, s.temporal, want_t);
		locality_free(loc);
	}
}

/* Scores of the accesses fed between two snapshots. */
static void scores_between(const struct locality_scores *a, const struct locality_scores *b, double *spatial,
			   double *temporal)
{
	*spatial = (b->spatial_sum - a->spatial_sum) / (double)(b->spatial_samples - a->spatial_samples);
	*temporal = (b->temporal_sum - a->temporal_sum) / (double)(b->accesses - a->accesses);
}

static void test_uniform(void)
{
	unsigned ms[] = { 10, 14, 17, 20 };
	size_t count = getenv("FAULTLINE_TEST_LONG") ? 4 : 3;
	printf("uniform random over 2^m pages, steady state (warm-up 16n accesses, then 10^6 measured):\n");
	for (size_t k = 0; k < count; k++) {
		unsigned m = ms[k];
		uint64_t n = 1ull << m;
		struct locality *loc = default_scorer();
		for (uint64_t t = 0; t < 16 * n; t++)
			feed(loc, rng_next() & (n - 1));
		struct locality_scores before, after;
		locality_get_scores(loc, &before);
		for (uint64_t t = 0; t < 1000000; t++)
			feed(loc, rng_next() & (n - 1));
		locality_get_scores(loc, &after);
		double spatial, temporal;
		scores_between(&before, &after, &spatial, &temporal);
		double want_t = uniform_temporal(17, m), want_s = uniform_spatial(32, 128, m);
		printf("  m=%2u: temporal %.4f (closed form %.4f)   spatial %.4f (closed form %.4f)\n", m, temporal, want_t,
		       spatial, want_s);
		CHECK(near(temporal, want_t, 0.02), "uniform m=%u temporal %.4f vs %.4f", m, temporal, want_t);
		CHECK(near(spatial, want_s, 0.02), "uniform m=%u spatial %.4f vs %.4f", m, spatial, want_s);
		/* 10^6 samples of weights in [0, 1]: the standard error is below 0.0005; the seed is fixed */
		CHECK(near(temporal, want_t, 0.003) && near(spatial, want_s, 0.003), "uniform m=%u, tight", m);
		CHECK(after.spatial >= 0 && after.spatial <= 1 && after.temporal >= 0 && after.temporal <= 1, "range");
		locality_free(loc);
	}
}

/* ------------------------------------------------------------------------------------------------
 * Reference: the definitions computed the slow way (LRU stack, full history). */

struct reference {
	unsigned window, bins, L;
	enum locality_stride0 stride0;
	uint64_t *stack; /* most recent first */
	size_t depth;
	uint64_t *history;
	size_t accesses;
	uint64_t cold_or_beyond, bins_count[LOCALITY_MAX_LOG2_N], samples;
	double spatial_sum;
};

static void reference_access(struct reference *r, uint64_t page)
{
	size_t k;
	for (k = 0; k < r->depth && r->stack[k] != page; k++)
		;
	if (k == r->depth) {
		r->cold_or_beyond++;
		r->depth++;
	} else {
		uint64_t s = k + 1; /* k distinct others were used since */
		if (s > (1ull << r->L))
			r->cold_or_beyond++;
		else
			r->bins_count[s <= 2 ? 0 : 63 - __builtin_clzll(s - 1)]++;
	}
	memmove(r->stack + 1, r->stack, k * sizeof r->stack[0]);
	r->stack[0] = page;

	if (r->accesses > 0) {
		uint64_t stride = UINT64_MAX;
		for (size_t j = 1; j <= r->window && j <= r->accesses; j++) {
			uint64_t q = r->history[r->accesses - j], diff = page > q ? page - q : q - page;
			if (diff < stride)
				stride = diff;
		}
		if (stride > 0 || r->stride0 == LOCALITY_STRIDE0_ZERO)
			r->samples++;
		if (stride > 0 && stride <= r->bins)
			r->spatial_sum += 1.0 / (double)stride;
	}
	r->history[r->accesses++] = page;
}

/* A stream mixing patterns, with pages drawn from a small or large universe. */
static uint64_t next_page(uint64_t t, uint64_t universe, uint64_t *cursor)
{
	switch (rng_next() % 5) {
	case 0: /* sequential run */
		return (*cursor += 1) % universe;
	case 1: /* small stride */
		return (*cursor += 1 + rng_next() % 4) % universe;
	case 2: /* hot set */
		return rng_next() % 8;
	case 3: /* recent page */
		return (t * 7 + rng_next() % 16) % universe;
	default:
		return rng_next() % universe;
	}
}

static void test_against_reference(void)
{
	int rounds = getenv("FAULTLINE_TEST_LONG") ? 200 : 60;
	size_t total = 0;
	for (int round = 0; round < rounds; round++) {
		unsigned window = 1 + (unsigned)(rng_next() % 40), bins = 1 + (unsigned)(rng_next() % 200);
		unsigned L = 1 + (unsigned)(rng_next() % 9);
		if (round % 4 == 0)
			L = 17;
		enum locality_stride0 stride0 = rng_next() % 2 ? LOCALITY_STRIDE0_ZERO : LOCALITY_STRIDE0_EXCLUDE;
		uint64_t universe = rng_next() % 2 ? 50 : 3000;
		size_t n = 2000 + (size_t)(rng_next() % 8000);
		struct reference r = { window, bins, L, stride0, calloc(n + 1, 8), 0, calloc(n, 8), 0, 0, { 0 }, 0, 0 };
		struct locality *loc = new_scorer(window, bins, L, stride0);
		uint64_t cursor = rng_next();
		for (size_t t = 0; t < n; t++) {
			uint64_t page = next_page(t, universe, &cursor) + 0x1000;
			reference_access(&r, page);
			feed(loc, page);
			if (t % 997 == 0 || t == n - 1) {
				struct locality_scores s;
				locality_get_scores(loc, &s);
				CHECK(s.spatial >= 0 && s.spatial <= 1 && s.temporal >= 0 && s.temporal <= 1,
				      "range: %f %f", s.spatial, s.temporal);
			}
		}
		struct locality_scores s;
		locality_get_scores(loc, &s);
		bool same = s.cold == r.cold_or_beyond && s.spatial_samples == r.samples &&
			    near(s.spatial_sum, r.spatial_sum, 1e-9 * (1 + r.spatial_sum));
		for (unsigned i = 0; i < L; i++)
			same = same && s.reuse_bins[i] == r.bins_count[i];
		CHECK(same, "round %d (W %u, B %u, L %u, stride0 %d, universe %llu, n %zu): cold %llu/%llu samples %llu/%llu "
			    "sum %f/%f",
		      round, window, bins, L, stride0, (unsigned long long)universe, n, (unsigned long long)s.cold,
		      (unsigned long long)r.cold_or_beyond, (unsigned long long)s.spatial_samples,
		      (unsigned long long)r.samples, s.spatial_sum, r.spatial_sum);
		total += n;
		locality_free(loc);
		free(r.stack);
		free(r.history);
	}
	printf("against the O(n) reference: %d random streams, %zu accesses, random W/B/L/stride-0: identical\n", rounds,
	       total);
}

/* ------------------------------------------------------------------------------------------------
 * Memory, parameters, speed. */

static void test_memory(void)
{
	/* Bound: at most N pages tracked; ≤ 56.25 B × N plus the fixed part. */
	unsigned logs[] = { 10, 17 };
	for (size_t k = 0; k < 2; k++) {
		struct locality *loc = new_scorer(32, 128, logs[k], LOCALITY_STRIDE0_EXCLUDE);
		size_t peak = 0;
		for (uint64_t p = 0; p < 1000000; p++) {
			feed(loc, p * 3);
			if (p % 1024 == 0 && locality_memory(loc) > peak)
				peak = locality_memory(loc);
		}
		size_t bound = 57 * ((size_t)1 << logs[k]) + 4096;
		printf("10^6 distinct pages, N = 2^%u: peak %zu bytes (bound %zu)\n", logs[k], peak, bound);
		CHECK(peak <= bound, "memory %zu > bound %zu", peak, bound);
		locality_free(loc);
	}
	/* Thousands of scorers: one per callsite. */
	enum { GROUPS = 10000 };
	struct locality **groups = calloc(GROUPS, sizeof *groups);
	size_t total = 0;
	for (int g = 0; g < GROUPS; g++) {
		groups[g] = default_scorer();
		for (int i = 0; i < 10; i++)
			feed(groups[g], (uint64_t)g * 100 + (uint64_t)i);
		total += locality_memory(groups[g]);
	}
	printf("%d scorers fed 10 pages each: %zu bytes (%zu per scorer)\n", GROUPS, total, total / GROUPS);
	CHECK(total / GROUPS <= 2048, "%zu bytes per idle scorer", total / GROUPS);
	for (int g = 0; g < GROUPS; g++)
		locality_free(groups[g]);
	free(groups);
	locality_free(NULL);

	/* Parameters out of range. */
	struct locality_params bad[] = { { 0, 128, 17, 0 }, { 2000, 128, 17, 0 }, { 32, 0, 17, 0 },
					 { 32, 128, 0, 0 }, { 32, 128, 29, 0 }, { 32, 128, 17, 7 } };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		errno = 0;
		struct locality *loc = locality_new(&bad[i]);
		CHECK(loc == NULL && errno == EINVAL, "bad parameters %zu accepted", i);
		locality_free(loc);
	}
	/* Empty scorer. */
	struct locality *loc = default_scorer();
	struct locality_scores s;
	locality_get_scores(loc, &s);
	CHECK(s.spatial == 0 && s.temporal == 0 && s.accesses == 0, "empty scorer");
	locality_free(loc);
}

static void test_speed(void)
{
	const char *names[] = { "sequential", "cyclic over 2^12", "random over 2^14", "random over 2^20" };
	printf("speed, 10^6 accesses each (default parameters):\n");
	for (int kind = 0; kind < 4; kind++) {
		struct locality *loc = default_scorer();
		uint64_t *pages = malloc(1000000 * sizeof *pages);
		for (uint64_t t = 0; t < 1000000; t++)
			pages[t] = kind == 0 ? t : kind == 1 ? t % 4096 : kind == 2 ? rng_next() % 16384 : rng_next() % (1u << 20);
		double t0 = now_seconds();
		for (uint64_t t = 0; t < 1000000; t++)
			feed(loc, pages[t]);
		double dt = now_seconds() - t0;
		struct locality_scores s;
		locality_get_scores(loc, &s);
		printf("  %-18s %6.2f M accesses/s  (%.3f s; spatial %.4f temporal %.4f; %zu bytes)\n", names[kind],
		       1e-6 / dt * 1e6, dt, s.spatial, s.temporal, locality_memory(loc));
		/* speed: printed, never asserted (this machine is noisy) */
		free(pages);
		locality_free(loc);
	}
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_closed_forms();
	test_sequential();
	test_cyclic();
	test_uniform();
	test_against_reference();
	test_memory();
	test_speed();
	return check_summary("test_locality");
}
