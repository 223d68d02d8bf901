/* test_rap.c: unit tests of the RAP library (inc/faultline/rap.h, lib/rap.c, lib/rap_dump.c).
 *
 * Vectors from docs/design.md, "Ranges and locality":
 *   config       invalid configurations refused with a message; points outside the universe
 *                and overflowing weights rejected; odd geometries (k not dividing W, b = 256)
 *   point mass   W = 32, b = 2, ε = 0.01: exactly 1 + b·D = 65 nodes before the first merge,
 *                error of the hot unit exactly D; still D after 200 000 events
 *   vector table uniform and 90/10 at W = 32, b = 2, 200 000 events: nodes, worst error printed
 *   streams      uniform, 90/10 hot region, adversarial (ascending sweep, then zoom on one page,
 *                weights 1..4), 10^6 points each at 48-bit addresses, 4 KiB units, b = 4
 *                (and 90/10 at b = 2): after every batch of 10^4 points the invariant holds, every
 *                node's estimate is in [true - (ε·n + D·w_max), true] (exact counter: the points
 *                kept sorted), random range queries bracket the truth, nodes <= 3·b·D/ε; every
 *                10 batches a merge pass on a copy keeps n and every surviving subtree sum
 *   hot report   90/10 at φ = 0.05 holds a range covering the hot MiB with est >= 0.9n - εn
 *   budget       8 KiB of nodes (512): bounds hold; hot-range accuracy printed
 *   serialize    round trip byte-identical and state-identical; every flipped byte, every cut
 *                and trailing bytes rejected with a message; re-checksummed mutations never crash
 *   tree merge   4 per-thread trees of a split stream merged: same n, bounds true, same hot MiB
 *   dump         tree and flat text forms
 *   speed        updates/s, single thread (printed, not asserted)
 * Measured numbers are printed as "RESULT <test> key=value ..." lines for the benchmark. */
#include "faultline/rap.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static uint64_t below(uint64_t *state, uint64_t n)
{
	return splitmix64(state) % n;
}

static double clock_s(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

static void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);
	REQUIRE(p, "malloc(%zu) failed", size);
	return p;
}

static rap_t *make_tree(double eps, unsigned k, unsigned addr_bits, unsigned gran, size_t budget)
{
	struct rap_config cfg = { .eps = eps, .branch_log2 = k, .addr_bits = addr_bits,
				  .gran_log2 = gran, .node_budget = budget };
	char err[256];
	rap_t *r = rap_init(&cfg, err, sizeof(err));
	REQUIRE(r, "rap_init: %s", err);
	return r;
}

static void check_invariant(const rap_t *r, const char *when)
{
	char err[256];
	REQUIRE(rap_check_invariant(r, err, sizeof(err)) == 0, "%s: %s", when, err);
}

/* ---- exact counter: the points so far, sorted, with prefix sums of their weights ---- */

struct exact {
	uint64_t *addr, *w, *cum; /* cum[i] = total weight of addr[0..i) */
	uint64_t *tmp_addr, *tmp_w;
	size_t n, cap;
};

static void exact_init(struct exact *e, size_t cap)
{
	e->addr = xmalloc(cap * 8);
	e->w = xmalloc(cap * 8);
	e->cum = xmalloc((cap + 1) * 8);
	e->tmp_addr = xmalloc(cap * 8);
	e->tmp_w = xmalloc(cap * 8);
	e->n = 0;
	e->cap = cap;
	e->cum[0] = 0;
}

static void exact_free(struct exact *e)
{
	free(e->addr);
	free(e->w);
	free(e->cum);
	free(e->tmp_addr);
	free(e->tmp_w);
}

struct pair {
	uint64_t addr, w;
};

static int pair_order(const void *a, const void *b)
{
	uint64_t x = ((const struct pair *)a)->addr, y = ((const struct pair *)b)->addr;
	return x < y ? -1 : x > y;
}

/* Add a batch: sort it, merge it into the sorted points, rebuild the prefix sums. */
static void exact_add(struct exact *e, const uint64_t *addr, const uint64_t *w, size_t count)
{
	REQUIRE(e->n + count <= e->cap, "exact counter full");
	struct pair *batch = xmalloc(count * sizeof(*batch));
	for (size_t i = 0; i < count; i++)
		batch[i] = (struct pair){ addr[i], w ? w[i] : 1 };
	qsort(batch, count, sizeof(*batch), pair_order);
	size_t i = 0, j = 0, o = 0;
	while (i < e->n || j < count) {
		if (j == count || (i < e->n && e->addr[i] <= batch[j].addr)) {
			e->tmp_addr[o] = e->addr[i];
			e->tmp_w[o++] = e->w[i++];
		} else {
			e->tmp_addr[o] = batch[j].addr;
			e->tmp_w[o++] = batch[j++].w;
		}
	}
	free(batch);
	uint64_t *t = e->addr;
	e->addr = e->tmp_addr;
	e->tmp_addr = t;
	t = e->w;
	e->w = e->tmp_w;
	e->tmp_w = t;
	e->n = o;
	for (size_t k = 0; k < o; k++)
		e->cum[k + 1] = e->cum[k] + e->w[k];
}

static size_t lower_bound(const struct exact *e, uint64_t a)
{
	size_t lo = 0, hi = e->n;
	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		if (e->addr[m] < a)
			lo = m + 1;
		else
			hi = m;
	}
	return lo;
}

/* True weight of the points in [a, c). */
static uint64_t exact_count(const struct exact *e, uint64_t a, uint64_t c)
{
	if (a >= c)
		return 0;
	return e->cum[lower_bound(e, c)] - e->cum[lower_bound(e, a)];
}

/* ---- streams ----------------------------------------------------------------------- */

enum stream_kind { UNIFORM, HOT90, ADVERSARIAL };

struct stream {
	const char *name;
	uint64_t *addr, *w; /* w NULL = weight 1 */
	size_t n;
	uint64_t hot_lo, hot_hi; /* HOT90: the 1 MiB region */
};

/* UNIFORM: uniform over [0, 2^bits). HOT90: point i is in the hot MiB unless i % 10 == 9
 * (exactly 90 %), then uniform over everything. ADVERSARIAL: the first half sweeps the
 * universe in ascending order, the second half hits one page in its middle; weights 1..4. */
static void make_stream(struct stream *s, enum stream_kind kind, size_t n, unsigned bits,
			uint64_t seed)
{
	static const char *names[] = { "uniform", "hot90", "adversarial" };
	uint64_t st = seed, span = UINT64_C(1) << bits;
	s->name = names[kind];
	s->n = n;
	s->addr = xmalloc(n * 8);
	s->w = NULL;
	s->hot_lo = (span / 2 + span / 8) & ~((UINT64_C(1) << 20) - 1);
	s->hot_hi = s->hot_lo + (UINT64_C(1) << 20);
	if (kind == ADVERSARIAL)
		s->w = xmalloc(n * 8);
	uint64_t page = (span / 2 + 12345 * 4096) & ~UINT64_C(4095);
	for (size_t i = 0; i < n; i++) {
		switch (kind) {
		case UNIFORM:
			s->addr[i] = below(&st, span);
			break;
		case HOT90:
			s->addr[i] = i % 10 == 9 ? below(&st, span) : s->hot_lo + below(&st, 1 << 20);
			break;
		case ADVERSARIAL:
			if (i < n / 2)
				s->addr[i] = (uint64_t)((double)i / (double)(n / 2) * (double)span);
			else
				s->addr[i] = page + below(&st, 4096);
			s->w[i] = 1 + below(&st, 4);
			break;
		}
	}
}

static void stream_free(struct stream *s)
{
	free(s->addr);
	free(s->w);
}

/* ---- checks against the exact counter ---------------------------------------------- */

struct node_check {
	const struct exact *ex;
	double guarantee;       /* ε_eff·n + T·D·w_max */
	uint64_t unit;          /* bytes per unit */
	uint64_t worst;         /* max true - est over nodes */
	uint64_t max_own;       /* largest own count of a node wider than a unit */
	double abs_err, truth;  /* over hot ranges (accuracy) */
};

static int check_node(const struct rap_node_info *v, void *ctx)
{
	struct node_check *c = ctx;
	uint64_t t = exact_count(c->ex, v->lo, v->hi);
	REQUIRE(v->sub <= t && t <= v->sub + v->anc,
	      "node [%#" PRIx64 ",%#" PRIx64 "): est %" PRIu64 " anc %" PRIu64 " true %" PRIu64,
	      v->lo, v->hi, v->sub, v->anc, t);
	REQUIRE((double)(t - v->sub) <= c->guarantee,
	      "node [%#" PRIx64 ",%#" PRIx64 "): error %" PRIu64 " > guarantee %.1f", v->lo, v->hi,
	      t - v->sub, c->guarantee);
	if (t - v->sub > c->worst)
		c->worst = t - v->sub;
	if (v->hi - v->lo > c->unit && v->own > c->max_own)
		c->max_own = v->own;
	return 0;
}

/* Random queries [a, c) of every scale, half of them inside the hot region when there is
 * one; unit-aligned ones must also have upper - lower <= 2·guarantee. */
static void check_queries(const rap_t *r, const struct exact *ex, const struct rap_stats *st,
			  const struct stream *s, uint64_t *seed, unsigned count)
{
	uint64_t span = UINT64_C(1) << st->addr_bits, unit = UINT64_C(1) << st->gran_log2;
	for (unsigned q = 0; q < count; q++) {
		bool hot = s && s->hot_hi && (q & 1);
		uint64_t a = hot ? s->hot_lo - (1 << 16) + below(seed, 1 << 21) : below(seed, span);
		uint64_t len = 1 + below(seed, UINT64_C(1) << below(seed, st->addr_bits + 1));
		bool aligned = q % 4 < 2;
		if (aligned) {
			a &= ~(unit - 1);
			len = (len + unit - 1) & ~(unit - 1);
		}
		uint64_t c = a + len > span ? span : a + len;
		uint64_t lower, upper, t = exact_count(ex, a, c);
		rap_query(r, a, c, &lower, &upper);
		REQUIRE(lower <= t && t <= upper, "query [%#" PRIx64 ",%#" PRIx64 "): %" PRIu64
		      " not in [%" PRIu64 ", %" PRIu64 "]", a, c, t, lower, upper);
		if (aligned)
			REQUIRE((double)(upper - lower) <= 2 * st->guarantee, "query [%#" PRIx64 ",%#" PRIx64
			      "): width %" PRIu64 " > 2*guarantee %.1f", a, c, upper - lower,
			      st->guarantee);
	}
}

/* Every node, and random queries, against the exact counter. Returns the worst node error. */
static struct node_check check_against_exact(const rap_t *r, const struct exact *ex,
					     const struct stream *s, uint64_t *seed, unsigned queries)
{
	struct rap_stats st;
	rap_get_stats(r, &st);
	REQUIRE(st.n == ex->cum[ex->n], "tree n %" PRIu64 " != exact %" PRIu64, st.n, ex->cum[ex->n]);
	struct node_check c = { .ex = ex, .guarantee = st.guarantee,
				.unit = UINT64_C(1) << st.gran_log2 };
	rap_walk(r, check_node, &c);
	uint64_t bound = rap_error_bound(r);
	REQUIRE(c.worst <= bound && (double)bound <= st.guarantee * (1 + 1e-12),
	      "worst %" PRIu64 ", rap_error_bound %" PRIu64 ", guarantee %.1f", c.worst, bound,
	      st.guarantee);
	check_queries(r, ex, &st, s, seed, queries);
	return c;
}

/* ---- merge pass on a copy: n and every surviving subtree sum unchanged ------------- */

struct snapshot {
	struct rap_node_info *v;
	size_t n, cap;
};

static int snap_node(const struct rap_node_info *v, void *ctx)
{
	struct snapshot *s = ctx;
	REQUIRE(s->n < s->cap, "snapshot overflow");
	s->v[s->n++] = *v;
	return 0;
}

/* A copy by serialize + deserialize, checked to serialize to the same bytes. */
static rap_t *copy_tree(const rap_t *r)
{
	size_t size = rap_serialize(r, NULL, 0);
	uint8_t *buf = xmalloc(size), *again = xmalloc(size);
	REQUIRE(rap_serialize(r, buf, size) == size, "serialize size changed");
	char err[256];
	rap_t *c = rap_deserialize(buf, size, err, sizeof(err));
	REQUIRE(c, "deserialize own output: %s", err);
	REQUIRE(rap_serialize(c, again, size) == size && !memcmp(buf, again, size),
	      "round trip not byte-identical");
	free(buf);
	free(again);
	return c;
}

static size_t find_node(const struct snapshot *s, uint64_t lo, uint64_t hi)
{
	size_t a = 0, b = s->n; /* pre-order = (lo ascending, hi descending) */
	while (a < b) {
		size_t m = a + (b - a) / 2;
		const struct rap_node_info *v = &s->v[m];
		if (v->lo == lo && v->hi == hi)
			return m;
		if (v->lo < lo || (v->lo == lo && v->hi > hi))
			a = m + 1;
		else
			b = m;
	}
	return SIZE_MAX;
}

static void check_merge_pass(const rap_t *r)
{
	struct rap_stats st;
	rap_get_stats(r, &st);
	struct snapshot before = { xmalloc(st.nodes * sizeof(*before.v)), 0, st.nodes };
	rap_walk(r, snap_node, &before);
	rap_t *copy = copy_tree(r);
	rap_merge_pass(copy);
	check_invariant(copy, "after a forced merge pass");
	struct rap_stats cs;
	rap_get_stats(copy, &cs);
	REQUIRE(cs.n == st.n, "merge pass changed n: %" PRIu64 " -> %" PRIu64, st.n, cs.n);
	REQUIRE(cs.nodes <= st.nodes, "merge pass added nodes");
	struct snapshot after = { xmalloc(cs.nodes * sizeof(*after.v)), 0, cs.nodes };
	rap_walk(copy, snap_node, &after);
	for (size_t i = 0; i < after.n; i++) {
		size_t j = find_node(&before, after.v[i].lo, after.v[i].hi);
		REQUIRE(j != SIZE_MAX, "merge pass created node [%#" PRIx64 ",%#" PRIx64 ")",
		      after.v[i].lo, after.v[i].hi);
		REQUIRE(before.v[j].sub == after.v[i].sub, "merge pass changed subtree sum of [%#" PRIx64
		      ",%#" PRIx64 "): %" PRIu64 " -> %" PRIu64, after.v[i].lo, after.v[i].hi,
		      before.v[j].sub, after.v[i].sub);
	}
	free(before.v);
	free(after.v);
	rap_free(copy);
}

/* ---- hot ranges -------------------------------------------------------------------- */

/* What the hot ranges at phi say about a region [lo, hi). */
struct hot_summary {
	size_t count;           /* hot ranges in all */
	struct rap_range cover; /* the narrowest hot range covering the region (hi = 0: none) */
	uint64_t inside_disc;   /* sum of discounted counts of hot ranges inside the region */
	size_t inside;          /* how many */
	double abs_err, truth;  /* accuracy terms: sum |est - true|, sum true, over all */
};

/* The hot ranges at phi, their bounds and order checked. Discounted counts of different hot
 * ranges never count an event twice, so they can be summed over a region. */
static struct hot_summary hot_cover(const rap_t *r, const struct exact *ex, double phi,
				    uint64_t lo, uint64_t hi)
{
	size_t n = rap_hot_ranges(r, phi, NULL, 0);
	struct rap_range *h = xmalloc(n * sizeof(*h));
	REQUIRE(rap_hot_ranges(r, phi, h, n) == n, "hot range count changed");
	struct hot_summary sum = { .count = n };
	struct rap_stats st;
	rap_get_stats(r, &st);
	for (size_t i = 0; i < n; i++) {
		uint64_t t = exact_count(ex, h[i].lo, h[i].hi);
		REQUIRE(h[i].lower <= t && t <= h[i].upper, "hot range bounds");
		REQUIRE(i == 0 || h[i - 1].lo < h[i].lo || (h[i - 1].lo == h[i].lo && h[i - 1].hi > h[i].hi),
		      "hot ranges not in address order");
		REQUIRE(h[i].discounted <= h[i].est && (double)h[i].discounted >= phi * (double)st.n,
		      "hot range discounted %" PRIu64 ", est %" PRIu64, h[i].discounted, h[i].est);
		sum.abs_err += (double)(t - h[i].est);
		sum.truth += (double)t;
		if (h[i].lo <= lo && h[i].hi >= hi &&
		    (sum.cover.hi == 0 || h[i].hi - h[i].lo < sum.cover.hi - sum.cover.lo))
			sum.cover = h[i];
		if (h[i].lo >= lo && h[i].hi <= hi) {
			sum.inside_disc += h[i].discounted;
			sum.inside++;
		}
	}
	free(h);
	return sum;
}

/* ---- one stream, with checks after every batch ------------------------------------- */

struct run {
	rap_t *tree;
	struct exact ex;
};

static struct run run_stream(const struct stream *s, double eps, unsigned k, unsigned bits,
			     unsigned gran, size_t budget, size_t batch, bool checks, const char *label)
{
	struct run run;
	run.tree = make_tree(eps, k, bits, gran, budget);
	exact_init(&run.ex, s->n);
	uint64_t seed = 42;
	uint64_t worst = 0, max_own = 0;
	double worst_frac = 0, max_ratio = 0;
	size_t batches = 0;
	for (size_t at = 0; at < s->n; at += batch) {
		size_t m = s->n - at < batch ? s->n - at : batch;
		size_t ok = s->w ? rap_add_weighted(run.tree, s->addr + at, s->w + at, m)
				 : rap_add_points(run.tree, s->addr + at, m);
		REQUIRE(ok == m, "%s: %zu of %zu points accepted", label, ok, m);
		batches++;
		if (!checks && at + m < s->n)
			continue;
		/* The exact counter follows the tree batch by batch, or all at once at the end. */
		size_t from = checks ? at : 0;
		exact_add(&run.ex, s->addr + from, s->w ? s->w + from : NULL, at + m - from);
		check_invariant(run.tree, label);
		struct node_check c = check_against_exact(run.tree, &run.ex, s, &seed, 200);
		struct rap_stats st;
		rap_get_stats(run.tree, &st);
		double ratio = (double)st.nodes / (st.branch * st.depth / st.eps);
		if (!budget)
			REQUIRE(ratio <= 3, "%s: %zu nodes > 3*b*D/eps = %.0f", label, st.nodes,
			      3 * st.branch * st.depth / st.eps);
		if (ratio > max_ratio)
			max_ratio = ratio;
		if (c.worst > worst)
			worst = c.worst;
		if ((double)c.worst / (double)st.n > worst_frac)
			worst_frac = (double)c.worst / (double)st.n;
		if (c.max_own > max_own)
			max_own = c.max_own;
		if (batches % 10 == 0)
			check_merge_pass(run.tree);
	}
	struct rap_stats st;
	rap_get_stats(run.tree, &st);
	printf("RESULT %s n=%" PRIu64 " b=%u D=%u eps=%.4f eps_now=%.4f nodes=%zu nodes_reserved=%zu "
	       "ratio_nodes_over_bD_eps=%.3f max_ratio=%.3f worst_err=%" PRIu64 " worst_err_over_n=%.6f "
	       "eps_n=%.0f max_own=%" PRIu64 " thr=%.1f bytes=%zu splits=%" PRIu64 " leaf_merges=%"
	       PRIu64 " internal_merges=%" PRIu64 " merge_passes=%" PRIu64 " escalations=%" PRIu64 "\n", label, st.n,
	       st.branch, st.depth, st.eps, st.eps_now, st.nodes, st.nodes_reserved,
	       (double)st.nodes / (st.branch * st.depth / st.eps), max_ratio, worst, worst_frac,
	       st.eps * (double)st.n, max_own, st.threshold, st.nodes_reserved * st.bytes_per_node,
	       st.splits, st.leaf_merges, st.internal_merges, st.merge_passes, st.escalations);
	return run;
}

static void run_free(struct run *run)
{
	rap_free(run->tree);
	exact_free(&run->ex);
}

/* ---- tests ------------------------------------------------------------------------- */

static void test_config(void)
{
	struct rap_config good = { .eps = 0.01, .branch_log2 = 2, .addr_bits = 48, .gran_log2 = 12 };
	struct rap_config bad[] = {
		{ .eps = 0, .branch_log2 = 2, .addr_bits = 48, .gran_log2 = 12 },
		{ .eps = 1, .branch_log2 = 2, .addr_bits = 48, .gran_log2 = 12 },
		{ .eps = 0.0 / 0.0, .branch_log2 = 2, .addr_bits = 48, .gran_log2 = 12 },
		{ .eps = 0.01, .branch_log2 = 0, .addr_bits = 48, .gran_log2 = 12 },
		{ .eps = 0.01, .branch_log2 = 9, .addr_bits = 48, .gran_log2 = 12 },
		{ .eps = 0.01, .branch_log2 = 2, .addr_bits = 64, .gran_log2 = 12 },
		{ .eps = 0.01, .branch_log2 = 2, .addr_bits = 12, .gran_log2 = 12 },
		{ .eps = 0.01, .branch_log2 = 2, .addr_bits = 48, .gran_log2 = 12, .mu = 1.5 },
		{ .eps = 0.01, .branch_log2 = 2, .addr_bits = 48, .gran_log2 = 12, .node_budget = 8 },
		{ .eps = 1e-9, .branch_log2 = 1, .addr_bits = 63, .gran_log2 = 0 },
	};
	char err[256];
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		rap_t *r = rap_init(&bad[i], err, sizeof(err));
		REQUIRE(!r && err[0], "bad config %zu accepted", i);
		printf("config %zu refused: %s\n", i, err);
	}
	rap_t *r = rap_init(&good, err, sizeof(err));
	REQUIRE(r, "%s", err);
	REQUIRE(rap_add(r, UINT64_C(1) << 48, 1) == -1, "address beyond the universe accepted");
	REQUIRE(rap_add(r, 4096, RAP_MAX_TOTAL) == 0, "max weight refused");
	REQUIRE(rap_add(r, 4096, 1) == -1, "overflowing weight accepted");
	REQUIRE(rap_add(r, 4096, 0) == 0, "zero weight refused");
	rap_t *r2 = rap_init(&good, err, sizeof(err));
	uint64_t addrs[4] = { 0, UINT64_C(1) << 47, UINT64_MAX, (UINT64_C(1) << 48) - 1 };
	uint64_t ws[4] = { 3, 0, 5, 7 };
	REQUIRE(rap_add_points(r2, addrs, 4) == 3, "batch: out-of-range point counted");
	REQUIRE(rap_add_weighted(r2, addrs, ws, 4) == 3, "weighted batch");
	struct rap_stats st2;
	rap_get_stats(r2, &st2);
	REQUIRE(st2.n == 3 + 10 && st2.w_max == 7 && st2.rejected == 2, "batch stats");
	uint64_t l2, u2;
	rap_query(r2, (UINT64_C(1) << 48) - 4096, UINT64_C(1) << 48, &l2, &u2);
	REQUIRE(l2 <= 8 && u2 >= 8, "last page: [%" PRIu64 ", %" PRIu64 "]", l2, u2);
	check_invariant(r2, "batch");
	rap_free(r2);
	struct rap_stats st;
	rap_get_stats(r, &st);
	REQUIRE(st.rejected == 2 && st.n == RAP_MAX_TOTAL, "rejected %" PRIu64, st.rejected);
	check_invariant(r, "max weight");
	uint64_t lo, hi;
	rap_query(r, 4096, 8192, &lo, &hi);
	REQUIRE(lo <= RAP_MAX_TOTAL && hi >= RAP_MAX_TOTAL, "max weight query");
	rap_free(r);

	/* Empty tree; caller memory. */
	size_t size = rap_memory_size(&good, err, sizeof(err));
	REQUIRE(size, "%s", err);
	void *mem = aligned_alloc(64, (size + 63) & ~(size_t)63);
	REQUIRE(mem, "aligned_alloc");
	r = rap_init_in(&good, mem, size, err, sizeof(err));
	REQUIRE(r, "%s", err);
	REQUIRE(!rap_init_in(&good, mem, size - 1, err, sizeof(err)), "short memory accepted");
	r = rap_init_in(&good, mem, size, err, sizeof(err));
	rap_query(r, 0, UINT64_C(1) << 48, &lo, &hi);
	REQUIRE(lo == 0 && hi == 0, "empty query");
	REQUIRE(rap_hot_ranges(r, 0.05, NULL, 0) == 0, "empty hot ranges");
	check_invariant(r, "empty");
	rap_t *c = copy_tree(r);
	check_invariant(c, "empty copy");
	rap_free(c);
	rap_free(r); /* no-op for caller memory */
	free(mem);
	printf("RESULT config memory_b4_eps0.01_48bit=%zu\n", size);
}

/* Universe bits not a multiple of k (root fan-out < b), and b = 256. */
static void test_geometry(void)
{
	static const struct { unsigned k, bits, gran; } geo[] = { { 2, 33, 0 }, { 8, 48, 12 },
								  { 3, 40, 12 }, { 5, 63, 0 } };
	for (size_t g = 0; g < sizeof(geo) / sizeof(geo[0]); g++) {
		struct stream s;
		make_stream(&s, HOT90, 60000, geo[g].bits, 7 + g);
		char label[64];
		snprintf(label, sizeof(label), "geometry_k%u_bits%u_gran%u", geo[g].k, geo[g].bits,
			 geo[g].gran);
		struct run run = run_stream(&s, 0.02, geo[g].k, geo[g].bits, geo[g].gran, 0, 5000, true,
					    label);
		run_free(&run);
		stream_free(&s);
	}
}

static int find_unit(const struct rap_node_info *v, void *ctx)
{
	struct rap_node_info *want = ctx;
	if (v->hi - v->lo == 1 && v->lo == want->lo) {
		*want = *v;
		return 1;
	}
	return 0;
}

static void test_point_mass(void)
{
	const uint64_t addr = 0x12345678;
	rap_t *r = make_tree(0.01, 1, 32, 0, 0); /* b = 2, D = 32 */
	for (int i = 1; i <= 1000; i++) {
		REQUIRE(rap_add(r, addr, 1) == 0, "add");
		check_invariant(r, "point mass");
	}
	struct rap_stats st;
	rap_get_stats(r, &st);
	REQUIRE(st.depth == 32, "D = %u", st.depth);
	REQUIRE(st.nodes == 1 + 2 * 32, "point mass: %zu nodes, expected 65", st.nodes);
	struct rap_node_info leaf = { .lo = addr };
	REQUIRE(rap_walk(r, find_unit, &leaf) == 1, "no unit node for the point");
	REQUIRE(leaf.sub == 1000 - 32 && leaf.anc == 32, "unit est %" PRIu64 " anc %" PRIu64, leaf.sub,
	      leaf.anc);
	REQUIRE(rap_error_bound(r) == 32, "error bound %" PRIu64, rap_error_bound(r));
	size_t nodes_before = st.nodes;
	for (int i = 1000; i < 200000; i++)
		rap_add(r, addr, 1);
	check_invariant(r, "point mass 200000");
	rap_get_stats(r, &st);
	leaf = (struct rap_node_info){ .lo = addr };
	REQUIRE(rap_walk(r, find_unit, &leaf) == 1, "no unit node for the point");
	REQUIRE(200000 - leaf.sub == 32, "error %" PRIu64 ", expected D = 32", 200000 - leaf.sub);
	REQUIRE(st.nodes <= 65, "nodes grew: %zu", st.nodes);
	printf("RESULT point_mass nodes_at_1000=%zu error=%" PRIu64 " nodes_at_200000=%zu "
	       "error_at_200000=%" PRIu64 " internal_merges=%" PRIu64 " leaf_merges=%" PRIu64 "\n",
	       nodes_before, (uint64_t)32, st.nodes, 200000 - leaf.sub, st.internal_merges,
	       st.leaf_merges);
	rap_free(r);
}

/* the test vector table of docs/design.md ("Ranges and locality"): W = 32, ε = 0.01, 200 000 events (our μ = 0.5 and internal merges). */
static void test_table_15(void)
{
	struct stream u, h;
	make_stream(&u, UNIFORM, 200000, 32, 11);
	make_stream(&h, HOT90, 200000, 32, 12);
	struct run r1 = run_stream(&u, 0.01, 1, 32, 0, 0, 20000, true, "table15_uniform_b2");
	struct run r2 = run_stream(&h, 0.01, 1, 32, 0, 0, 20000, true, "table15_hot90_b2");
	struct run r3 = run_stream(&h, 0.01, 2, 32, 12, 0, 20000, true, "table15_hot90_b4_gran4096");
	run_free(&r1);
	run_free(&r2);
	run_free(&r3);
	stream_free(&u);
	stream_free(&h);
}

static void test_hot_report(const struct run *run, const struct stream *s, const char *label)
{
	struct rap_stats st;
	rap_get_stats(run->tree, &st);
	struct hot_summary h = hot_cover(run->tree, &run->ex, 0.05, s->hot_lo, s->hot_hi);
	double need = 0.9 * (double)st.n - st.eps * (double)st.n;
	/* as the design says: some hot range covers the region with est >= 0.9n - εn (the root
	 * always does, so also:) the hot ranges inside the region resolve it: their discounted
	 * counts add up to >= 0.9n - εn. */
	REQUIRE(h.cover.hi && (double)h.cover.est >= need, "%s: no hot range covers the hot MiB with "
	      "est >= %.0f", label, need);
	REQUIRE(h.inside && (double)h.inside_disc >= need, "%s: %zu hot ranges inside the hot MiB hold "
	      "%" PRIu64 " < %.0f", label, h.inside, h.inside_disc, need);
	printf("RESULT %s phi=0.05 hot_ranges=%zu narrowest_cover=[%#" PRIx64 ",%#" PRIx64 ") est=%"
	       PRIu64 " inside_ranges=%zu inside_discounted=%" PRIu64 " need=%.0f accuracy=%.6f\n",
	       label, h.count, h.cover.lo, h.cover.hi, h.cover.est, h.inside, h.inside_disc, need,
	       h.truth ? 1 - h.abs_err / h.truth : 1.0);
}

/* 8 KiB of nodes. */
static void test_budget(const struct stream *hot, const struct run *full)
{
	for (unsigned k = 1; k <= 4; k++) {
		size_t budget = 8192 / RAP_BYTES_PER_NODE;
		char label[64];
		snprintf(label, sizeof(label), "budget8k_hot90_b%u", 1u << k);
		struct run run = run_stream(hot, 0.01, k, 48, 12, budget, 10000, k == 2, label);
		struct rap_stats st;
		rap_get_stats(run.tree, &st);
		REQUIRE(st.node_capacity * st.bytes_per_node <= 8192, "pool %zu bytes",
		      st.node_capacity * st.bytes_per_node);
		uint64_t seed = 9;
		check_invariant(run.tree, label);
		check_against_exact(run.tree, &run.ex, hot, &seed, 2000);
		struct hot_summary h = hot_cover(run.tree, &run.ex, 0.05, hot->hot_lo, hot->hot_hi);
		printf("RESULT %s pool_bytes=%zu memory_bytes=%zu nodes=%zu eps_now=%.4f thr_floor=%.0f "
		       "escalations=%" PRIu64 " hot_ranges=%zu accuracy=%.6f inside_ranges=%zu "
		       "inside_discounted=%" PRIu64 " error_bound=%" PRIu64 "\n", label,
		       st.node_capacity * st.bytes_per_node, st.memory_bytes, st.nodes, st.eps_now,
		       st.thr_floor, st.escalations, h.count, h.truth ? 1 - h.abs_err / h.truth : 1.0,
		       h.inside, h.inside_disc, rap_error_bound(run.tree));
		REQUIRE(h.cover.hi && (double)h.inside_disc >= 0.9 * (double)st.n - st.eps_now * (double)st.n,
		      "%s: the hot MiB is not resolved", label);
		REQUIRE(st.thr_floor > 0, "%s: the budget never escalated", label);
		rap_free(copy_tree(run.tree)); /* round trip with a threshold floor */
		run_free(&run);
	}
	(void)full;
}

static uint64_t fnv1a(const uint8_t *p, size_t len, uint64_t h)
{
	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * UINT64_C(0x100000001b3);
	return h;
}

static void fix_checksum(uint8_t *buf, size_t len)
{
	uint64_t h = fnv1a(buf, 96, UINT64_C(0xcbf29ce484222325));
	h = fnv1a(buf + 104, len - 104, h);
	for (int i = 0; i < 8; i++)
		buf[96 + i] = (uint8_t)(h >> (8 * i));
}

static void test_serialize(const struct run *big, const struct stream *s)
{
	char err[256];
	/* Round trip of a big tree; then both copies evolve identically. */
	size_t size = rap_serialize(big->tree, NULL, 0);
	uint8_t *a = xmalloc(size), *b = xmalloc(size);
	REQUIRE(rap_serialize(big->tree, a, size) == size, "serialize");
	rap_t *copy = rap_deserialize(a, size, err, sizeof(err));
	REQUIRE(copy, "round trip: %s", err);
	REQUIRE(rap_serialize(copy, b, size) == size && !memcmp(a, b, size), "round trip differs");
	struct rap_stats s1, s2;
	rap_get_stats(big->tree, &s1);
	rap_get_stats(copy, &s2);
	REQUIRE(s1.n == s2.n && s1.eps_eff == s2.eps_eff && s1.thr_floor == s2.thr_floor &&
	      s1.next_merge == s2.next_merge && s1.trees == s2.trees &&
	      s1.w_max == s2.w_max && s1.nodes == s2.nodes, "state differs after round trip");
	rap_t *orig = copy_tree(big->tree);
	for (size_t i = 0; i < s->n / 4; i++) {
		rap_add(orig, s->addr[i] ^ 0x5000, 1);
		rap_add(copy, s->addr[i] ^ 0x5000, 1);
	}
	size_t sz1 = rap_serialize(orig, NULL, 0), sz2 = rap_serialize(copy, NULL, 0);
	uint8_t *c1 = xmalloc(sz1), *c2 = xmalloc(sz2);
	rap_serialize(orig, c1, sz1);
	rap_serialize(copy, c2, sz2);
	REQUIRE(sz1 == sz2 && !memcmp(c1, c2, sz1), "copies diverged after identical updates");
	free(c1);
	free(c2);
	rap_free(orig);
	rap_free(copy);
	printf("RESULT serialize bytes=%zu nodes=%zu bytes_per_node_on_disk=16\n", size, s1.nodes);
	free(a);
	free(b);

	/* Corruption of a small tree: every byte flipped three ways, every cut, extensions. */
	rap_t *small = make_tree(0.1, 2, 48, 12, 0);
	rap_add_points(small, s->addr, 3000);
	size = rap_serialize(small, NULL, 0);
	a = xmalloc(size + 16);
	rap_serialize(small, a, size);
	size_t flips = 0, cuts = 0, accepted_mut = 0, rejected_mut = 0;
	static const uint8_t masks[] = { 0x01, 0x80, 0xff };
	for (size_t i = 0; i < size; i++) {
		for (size_t m = 0; m < 3; m++) {
			a[i] ^= masks[m];
			err[0] = 0;
			rap_t *r = rap_deserialize(a, size, err, sizeof(err));
			REQUIRE(!r && err[0], "flip of byte %zu by %#x accepted", i, masks[m]);
			if (flips++ == 0 || (i == 100 && m == 0))
				printf("corrupt byte %zu: %s\n", i, err);
			/* With the checksum repaired, structural validation alone must hold. */
			fix_checksum(a, size);
			r = rap_deserialize(a, size, err, sizeof(err));
			if (r) {
				check_invariant(r, "accepted mutation");
				accepted_mut++;
				rap_free(r);
			} else {
				rejected_mut++;
			}
			a[i] ^= masks[m];
			fix_checksum(a, size);
		}
	}
	for (size_t len = 0; len < size; len++) {
		err[0] = 0;
		REQUIRE(!rap_deserialize(a, len, err, sizeof(err)) && err[0], "cut at %zu accepted", len);
		if (len == size - 1)
			printf("cut to %zu bytes: %s\n", len, err);
		cuts++;
	}
	memset(a + size, 0, 16);
	REQUIRE(!rap_deserialize(a, size + 1, err, sizeof(err)), "trailing byte accepted");
	REQUIRE(!rap_deserialize(a, size + 16, err, sizeof(err)), "trailing record accepted");
	printf("trailing: %s\n", err);
	rap_t *r = rap_deserialize(a, size, err, sizeof(err));
	REQUIRE(r, "intact small tree: %s", err);
	rap_free(r);
	/* Random bodies with a valid header and checksum. */
	uint64_t seed = 5;
	for (int t = 0; t < 2000; t++) {
		for (size_t i = 104; i < size; i++)
			if (below(&seed, 8) == 0)
				a[i] = (uint8_t)splitmix64(&seed);
		fix_checksum(a, size);
		r = rap_deserialize(a, size, err, sizeof(err));
		if (r)
			check_invariant(r, "accepted random body");
		rap_free(r);
		rap_serialize(small, a, size);
	}
	printf("RESULT corrupt bytes=%zu flips_rejected=%zu cuts_rejected=%zu "
	       "rechecksummed_mutations_accepted=%zu rejected=%zu\n", size, flips, cuts, accepted_mut,
	       rejected_mut);
	free(a);
	rap_free(small);
}

static void test_tree_merge(const struct stream *s, const struct run *whole)
{
	enum { THREADS = 4, CHUNK = 10000 };
	rap_t *part[THREADS];
	for (int t = 0; t < THREADS; t++)
		part[t] = make_tree(0.01, 2, 48, 12, 0);
	for (size_t at = 0, c = 0; at < s->n; at += CHUNK, c++) {
		size_t m = s->n - at < CHUNK ? s->n - at : CHUNK;
		rap_add_points(part[c % THREADS], s->addr + at, m);
	}
	rap_t *merged = make_tree(0.01, 2, 48, 12, 0);
	char err[256];
	for (int t = 0; t < THREADS; t++) {
		check_invariant(part[t], "part");
		REQUIRE(rap_merge(merged, part[t], err, sizeof(err)) == 0, "merge: %s", err);
		check_invariant(merged, "merged");
	}
	REQUIRE(rap_merge(merged, merged, err, sizeof(err)) == -1, "self merge accepted");
	rap_t *other = make_tree(0.01, 1, 48, 12, 0);
	REQUIRE(rap_merge(merged, other, err, sizeof(err)) == -1, "geometry mismatch accepted");
	printf("merge mismatch: %s\n", err);
	rap_free(other);

	struct rap_stats ms, ws;
	rap_get_stats(merged, &ms);
	rap_get_stats(whole->tree, &ws);
	REQUIRE(ms.n == ws.n && ms.trees == THREADS, "merged n %" PRIu64 " trees %u", ms.n, ms.trees);
	uint64_t seed = 77;
	struct node_check c = check_against_exact(merged, &whole->ex, s, &seed, 3000);
	test_hot_report(&(struct run){ merged, whole->ex }, s, "tree_merge_hot");

	/* Hot ranges of either tree: both trees' bounds bracket the truth. */
	const rap_t *trees[2] = { merged, whole->tree };
	size_t compared = 0;
	for (int w = 0; w < 2; w++) {
		size_t n = rap_hot_ranges(trees[w], 0.05, NULL, 0);
		struct rap_range *h = xmalloc(n * sizeof(*h));
		rap_hot_ranges(trees[w], 0.05, h, n);
		for (size_t i = 0; i < n; i++) {
			uint64_t t = exact_count(&whole->ex, h[i].lo, h[i].hi), l0, u0, l1, u1;
			rap_query(merged, h[i].lo, h[i].hi, &l0, &u0);
			rap_query(whole->tree, h[i].lo, h[i].hi, &l1, &u1);
			REQUIRE(l0 <= t && t <= u0 && l1 <= t && t <= u1, "hot range bounds disagree");
			compared++;
		}
		free(h);
	}
	/* Merging into a budgeted tree keeps the bounds too. */
	rap_t *small = make_tree(0.01, 2, 48, 12, 512);
	for (int t = 0; t < THREADS; t++)
		REQUIRE(rap_merge(small, part[t], err, sizeof(err)) == 0, "merge: %s", err);
	check_invariant(small, "budgeted merge");
	rap_free(copy_tree(merged)); /* round trip with T > 1 */
	check_against_exact(small, &whole->ex, s, &seed, 1000);
	struct rap_stats bs;
	rap_get_stats(small, &bs);
	printf("RESULT tree_merge threads=%d merged_nodes=%zu whole_nodes=%zu merged_worst=%" PRIu64
	       " merged_bound=%" PRIu64 " whole_bound=%" PRIu64 " guarantee=%.0f hot_compared=%zu "
	       "budget8k_nodes=%zu budget8k_eps_now=%.4f budget8k_bound=%" PRIu64 "\n", THREADS,
	       ms.nodes, ws.nodes, c.worst, rap_error_bound(merged), rap_error_bound(whole->tree),
	       ms.guarantee, compared, bs.nodes, bs.eps_now, rap_error_bound(small));
	rap_free(small);
	for (int t = 0; t < THREADS; t++)
		rap_free(part[t]);
	rap_free(merged);
}

static void test_dump(const struct run *run)
{
	struct rap_stats st;
	rap_get_stats(run->tree, &st);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	REQUIRE(f, "open_memstream");
	REQUIRE(rap_dump(run->tree, f, 0.05, RAP_DUMP_TREE) == 0, "dump");
	fclose(f);
	size_t lines = 0, hot = 0;
	for (char *p = text; *p; p++)
		lines += *p == '\n';
	for (char *p = text; (p = strstr(p, " HOT\n")); p++)
		hot++;
	REQUIRE(!strncmp(text, "# rap eps=0.0100 ", 17), "dump header: %.80s", text);
	REQUIRE(lines == st.nodes + 1, "dump has %zu lines for %zu nodes", lines, st.nodes);
	REQUIRE(hot == rap_hot_ranges(run->tree, 0.05, NULL, 0), "dump marks %zu HOT", hot);
	char *second = strchr(text, '\n') + 1;
	REQUIRE(!strncmp(second, "[0x0000000000000000,0x0001000000000000) own=", 44), "root line: %.80s",
	      second);
	printf("dump head:\n%.*s", (int)(strchr(strchr(second, '\n') + 1, '\n') + 1 - text), text);
	free(text);
	f = open_memstream(&text, &len);
	REQUIRE(rap_dump(run->tree, f, 0.05, RAP_DUMP_FLAT) == 0, "flat dump");
	fclose(f);
	lines = 0;
	for (char *p = text; *p; p++)
		lines += *p == '\n';
	REQUIRE(lines == hot + 2, "flat dump has %zu lines for %zu hot ranges", lines, hot);
	printf("flat dump:\n%s", text);
	free(text);
}

static void test_speed(const struct stream *hot, const struct stream *uni)
{
	const struct stream *streams[2] = { hot, uni };
	for (int i = 0; i < 2; i++) {
		for (unsigned k = 1; k <= 4; k *= 2) {
			rap_t *r = make_tree(0.01, k, 48, 12, 0);
			double t0 = now_s(), c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
			for (int rep = 0; rep < 2; rep++)
				rap_add_points(r, streams[i]->addr, streams[i]->n);
			double dt = now_s() - t0, cpu = clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
			double points = 2.0 * (double)streams[i]->n;
			struct rap_stats st;
			rap_get_stats(r, &st);
			printf("RESULT speed stream=%s b=%u points=%.0f wall_s=%.3f cpu_s=%.3f "
			       "updates_per_cpu_s=%.0f ns_per_update_cpu=%.1f updates_per_wall_s=%.0f "
			       "nodes=%zu bytes=%zu\n", streams[i]->name, 1u << k, points, dt, cpu,
			       points / cpu, cpu * 1e9 / points, points / dt, st.nodes,
			       st.nodes_reserved * st.bytes_per_node);
			rap_free(r);
		}
	}
}

static double lap_t0;

static void lap(const char *what)
{
	double t = now_s();
	printf("time %s %.2f s\n", what, t - lap_t0);
	lap_t0 = t;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	double t0 = lap_t0 = now_s();
	test_config();
	test_geometry();
	lap("config+geometry");
	test_point_mass();
	test_table_15();
	lap("point_mass+table15");

	const size_t N = 1000000, BATCH = 10000;
	struct stream uni, hot, adv;
	make_stream(&uni, UNIFORM, N, 48, 1);
	make_stream(&hot, HOT90, N, 48, 2);
	make_stream(&adv, ADVERSARIAL, N, 48, 3);
	lap("streams made");
	struct run ru = run_stream(&uni, 0.01, 2, 48, 12, 0, BATCH, true, "stream_uniform_b4");
	run_free(&ru);
	lap("uniform");
	struct run ra = run_stream(&adv, 0.01, 2, 48, 12, 0, BATCH, true, "stream_adversarial_b4");
	run_free(&ra);
	lap("adversarial");
	struct run rh2 = run_stream(&hot, 0.01, 1, 48, 12, 0, BATCH, true, "stream_hot90_b2");
	test_hot_report(&rh2, &hot, "hot_report_b2");
	run_free(&rh2);
	struct run rh = run_stream(&hot, 0.01, 2, 48, 12, 0, BATCH, true, "stream_hot90_b4");
	test_hot_report(&rh, &hot, "hot_report_b4");
	lap("hot90 b2+b4");

	test_budget(&hot, &rh);
	lap("budget");
	test_serialize(&rh, &hot);
	lap("serialize");
	test_tree_merge(&hot, &rh);
	test_dump(&rh);
	run_free(&rh);
	lap("tree merge+dump");
	test_speed(&hot, &uni);
	lap("speed");
	stream_free(&uni);
	stream_free(&hot);
	stream_free(&adv);
	printf("test_rap: all passed in %.1f s (cpu %.1f s)\n", now_s() - t0,
	       clock_s(CLOCK_PROCESS_CPUTIME_ID));
	return 0;
}
