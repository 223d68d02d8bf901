/* rap_bench.c: RAP (lib/rap.c) on a 90/10 address stream against exact counting.
 *
 * usage: rap_bench [EVENTS (2000000)] [RUNS (5)] [BUDGET_BYTES (8192)] [PHI (0.05)]
 *
 * Stream (one per run, seed = run): 90 % of the addresses uniform in one 1 MiB region (aligned to
 * 1 MiB), 10 % uniform over 2^36 pages (a 48-bit address space). Generated into an array first,
 * so only the counting is timed.
 * Baseline: exact per-page counts in an open-addressing hash table (16 bytes per slot, doubled
 * at half full) — what a tool keeps when it counts every page.
 * RAP: ε = 0.01, b = 4 (k = 2), 4 KiB units, 48-bit addresses, the node budget the largest whose
 * rap_memory_size() fits BUDGET_BYTES (the paper's "8k bytes"); updates with rap_add_points().
 * Accuracy: 1 - Σ|est - true| / Σ true over the ranges rap_hot_ranges() reports at PHI, the true
 * counts taken from the sorted stream.
 * prints per run: rap run=R events=N exact_ups=U exact_bytes=B rap_ups=U rap_bytes=B
 *                 rap_nodes=K accuracy=A accuracy_noroot=A' hot_ranges=H hot_inside=I eps_now=E
 * (accuracy_noroot: the same sum without the root range, whose estimate is always exact)
 * (hot_inside: how many of the H reported ranges lie inside the 1 MiB region) */
#include "bench.h"
#include "faultline/rap.h"

#define HOT_BASE 0x7f3a12300000ULL
#define HOT_BYTES BENCH_MiB
#define COLD_PAGES_LOG2 36

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void make_stream(uint64_t *addrs, size_t n, uint64_t seed)
{
	uint64_t s = seed * 0x2545f4914f6cdd1dULL + 1;
	for (size_t i = 0; i < n; i++) {
		uint64_t r = splitmix64(&s);
		if (r % 10 != 0)
			addrs[i] = HOT_BASE + (splitmix64(&s) % HOT_BYTES);
		else
			addrs[i] = splitmix64(&s) & ((1ULL << (COLD_PAGES_LOG2 + 12)) - 1);
	}
}

/* Exact counter: page -> count, linear probing; key 0 = empty (keys stored as page + 1). */
struct exact {
	uint64_t *keys, *counts;
	size_t cap, used;
};

static size_t exact_slot(const struct exact *e, uint64_t key)
{
	size_t i = (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 20) & (e->cap - 1);
	while (e->keys[i] && e->keys[i] != key)
		i = (i + 1) & (e->cap - 1);
	return i;
}

static void exact_alloc(struct exact *e, size_t cap)
{
	e->cap = cap;
	e->used = 0;
	e->keys = calloc(cap, sizeof(uint64_t));
	e->counts = calloc(cap, sizeof(uint64_t));
	if (!e->keys || !e->counts)
		bench_die_errno("calloc(%zu slots)", cap);
}

static void exact_add(struct exact *e, uint64_t addr)
{
	if (2 * (e->used + 1) > e->cap) {
		struct exact old = *e;
		exact_alloc(e, old.cap * 2);
		for (size_t i = 0; i < old.cap; i++)
			if (old.keys[i]) {
				size_t j = exact_slot(e, old.keys[i]);
				e->keys[j] = old.keys[i];
				e->counts[j] = old.counts[i];
				e->used++;
			}
		free(old.keys);
		free(old.counts);
	}
	uint64_t key = (addr >> 12) + 1;
	size_t i = exact_slot(e, key);
	if (!e->keys[i]) {
		e->keys[i] = key;
		e->used++;
	}
	e->counts[i]++;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Number of sorted[] values < v. */
static size_t count_below(const uint64_t *sorted, size_t n, uint64_t v)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sorted[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static rap_t *make_rap(size_t budget_bytes)
{
	char err[256];
	struct rap_config cfg = { .eps = 0.01, .branch_log2 = 2, .addr_bits = 48, .gran_log2 = 12 };
	size_t nodes = budget_bytes / RAP_BYTES_PER_NODE;
	for (; nodes > 9; nodes--) {
		cfg.node_budget = nodes;
		size_t need = rap_memory_size(&cfg, err, sizeof(err));
		if (need && need <= budget_bytes)
			break;
	}
	rap_t *rap = rap_init(&cfg, err, sizeof(err));
	if (!rap)
		bench_die("rap_init(budget %zu nodes): %s", nodes, err);
	return rap;
}

int main(int argc, char **argv)
{
	size_t n = bench_arg(argc, argv, 1, 2000000);
	unsigned runs = (unsigned)bench_arg(argc, argv, 2, 5);
	size_t budget = bench_arg(argc, argv, 3, 8192);
	double phi = argc > 4 ? strtod(argv[4], NULL) : 0.05;
	uint64_t *addrs = malloc(n * sizeof(uint64_t)), *sorted = malloc(n * sizeof(uint64_t));
	if (!addrs || !sorted)
		bench_die_errno("malloc(2 x %zu addresses)", n);
	for (unsigned run = 0; run < runs; run++) {
		make_stream(addrs, n, run + 1);

		struct exact e;
		uint64_t t0 = bench_now_ns();
		exact_alloc(&e, 1024);
		for (size_t i = 0; i < n; i++)
			exact_add(&e, addrs[i]);
		uint64_t t1 = bench_now_ns();
		size_t exact_bytes = e.cap * 2 * sizeof(uint64_t);
		free(e.keys);
		free(e.counts);

		uint64_t t2 = bench_now_ns();
		rap_t *rap = make_rap(budget);
		size_t added = rap_add_points(rap, addrs, n);
		uint64_t t3 = bench_now_ns();
		if (added != n)
			bench_die("rap_add_points counted %zu of %zu", added, n);
		struct rap_stats st;
		rap_get_stats(rap, &st);

		memcpy(sorted, addrs, n * sizeof(uint64_t));
		qsort(sorted, n, sizeof(uint64_t), cmp_u64);
		size_t nhot = rap_hot_ranges(rap, phi, NULL, 0);
		struct rap_range *hot = calloc(nhot ? nhot : 1, sizeof(*hot));
		if (!hot)
			bench_die_errno("calloc(%zu ranges)", nhot);
		rap_hot_ranges(rap, phi, hot, nhot);
		double err_sum = 0, true_sum = 0, err_noroot = 0, true_noroot = 0;
		size_t inside = 0;
		for (size_t i = 0; i < nhot; i++) {
			double t = (double)(count_below(sorted, n, hot[i].hi) -
					    count_below(sorted, n, hot[i].lo));
			double e = t > (double)hot[i].est ? t - (double)hot[i].est : (double)hot[i].est - t;
			err_sum += e;
			true_sum += t;
			if (hot[i].depth > 0) {
				err_noroot += e;
				true_noroot += t;
			}
			if (hot[i].lo >= HOT_BASE && hot[i].hi <= HOT_BASE + HOT_BYTES)
				inside++;
		}
		double accuracy = true_sum > 0 ? 1.0 - err_sum / true_sum : 0.0;
		double acc_noroot = true_noroot > 0 ? 1.0 - err_noroot / true_noroot : 0.0;
		printf("rap run=%u events=%zu exact_ups=%.0f exact_bytes=%zu rap_ups=%.0f rap_bytes=%zu "
		       "rap_nodes=%zu accuracy=%.6f accuracy_noroot=%.6f hot_ranges=%zu hot_inside=%zu eps_now=%.4f\n",
		       run, n, (double)n * 1e9 / (double)(t1 - t0), exact_bytes,
		       (double)n * 1e9 / (double)(t3 - t2), st.memory_bytes, st.nodes, accuracy, acc_noroot, nhot,
		       inside, st.eps_now);
		fflush(stdout);
		free(hot);
		rap_free(rap);
	}
	free(addrs);
	free(sorted);
	return 0;
}
