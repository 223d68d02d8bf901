/* rap.h: Range Adaptive Profiling (RAP) — adaptive range counters over a stream of addresses.
 *
 * A RAP tree counts events (page faults, here) by address range, and refines a range into
 * b = 2^k aligned pieces only where events are frequent: hot areas end up counted to the
 * page, cold ones stay coarse. Memory is bounded by O(b·D/ε) nodes, independent of the
 * stream, and every count comes with a guaranteed error. The algorithm is the one in
 * docs/design.md, "Ranges and locality" (Mysore et al., CGO'06; Hershberger et al., ASP):
 *
 *   Units.    An address a is counted as unit x = a >> gran_log2 of the universe
 *             [0, 2^W), W = addr_bits - gran_log2. D = ceil(W / k) levels lie above a unit
 *             (the root's fan-out is smaller than b when k does not divide W).
 *   Update.   Descend to the deepest node containing x; add the weight w to its own
 *             counter and to n. If that counter now exceeds the threshold thr (= ε·n/D;
 *             see Memory for the budget's floor) and the node is wider than a unit, split
 *             it: create its b pieces with count 0. It keeps its own count (no cascade);
 *             later events go to the pieces.
 *   Merge.    At n = 1024·2^j (batched, exponential back-off) a bottom-up pass removes a
 *             child c of p whenever p.count + c.count <= μ·thr and c has at most one
 *             child: c's count is folded into p and c's only child (if any) takes c's
 *             place. For a leaf c this is the leaf merge (a family of leaves whose total is
 *             <= μ·thr is folded whole); for an internal c it is the internal merge, i.e.
 *             path compression ([0,255] -> [0,63] -> [12,13] becomes [0,255] -> [12,13]).
 *             A merge moves counts only to an ancestor, so it never changes n nor the
 *             subtree sum of a node that survives it.
 *   Invariant (I). thr never decreases; every node wider than a unit has own count
 *             <= thr + T·w_max, where w_max is the largest weight ever added and T the
 *             number of trees combined into this one (1 unless rap_merge() was used); and
 *             a node whose count exceeds thr has all of its pieces, so no event lands on it.
 *   Bounds.   Every event is charged to a node whose range contains it. So for any node v,
 *             est(v) = subtree sum of v satisfies
 *                 true(v) - anc(v) <= est(v) <= true(v),
 *             anc(v) = sum of the own counts of v's ancestors (at most D of them), and by
 *             (I) anc(v) <= D·thr + T·D·w_max = ε·n + T·D·w_max without a budget floor
 *             (stats.guarantee). For any range [a, c), lower = sum of the nodes inside it,
 *             upper = lower + own counts of the nodes overlapping it partially: lower <=
 *             true <= upper always, whatever the tree looks like; for unit-aligned a and c,
 *             upper - lower <= 2·stats.guarantee.
 *
 * Memory: a node is 16 bytes (range, 40-bit count, 24-bit child-block index). Children are
 * kept in blocks of b slots; all nodes come from one pool allocated at init (its size is
 * the node budget, or a default of 4·b·D/ε nodes). The update path allocates nothing; it
 * costs O(D), plus a pass over all nodes at each scheduled merge (log2(n/1024) of them in
 * all). When the pool cannot supply a split, the tree first runs an unscheduled merge
 * pass; if that frees less than an eighth of the pool it "merges harder": it doubles the
 * threshold by raising an absolute floor (thr = ε·n/D + thr_floor) and merges again, as
 * often as needed. (I) and the bounds then hold with thr·D/n (stats.eps_now) in place of
 * ε; they never become false. Because the floor is a count, not a fraction, the effective
 * ε falls back towards the nominal one as n grows.
 *
 * Threads: a tree is not thread-safe; use one per thread and combine them with rap_merge().
 * Only libc is used. Errors are reported as a message in a caller-supplied buffer (err,
 * errlen; err may be NULL). */
#ifndef FAULTLINE_RAP_H
#define FAULTLINE_RAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct rap rap_t;

#define RAP_BYTES_PER_NODE 16                     /* size of one node of the pool */
#define RAP_MAX_TOTAL ((UINT64_C(1) << 40) - 1)   /* largest total weight n a tree can hold */
#define RAP_MERGE_FIRST 1024                      /* first merge pass at n = 1024, then 2048, ... */
#define RAP_DEFAULT_MU 0.5                        /* merge strictness μ */
#define RAP_DEFAULT_BUDGET_FACTOR 4               /* default pool: 4·b·D/ε nodes */

/* Parameters of a tree. Fields left 0 take their defaults (mu, node_budget). */
struct rap_config {
	double eps;            /* error fraction ε, 0 < ε < 1 (e.g. 0.01) */
	unsigned branch_log2;  /* k: branching factor b = 2^k, 1 <= k <= 8 */
	unsigned addr_bits;    /* addresses lie in [0, 2^addr_bits), 1 <= addr_bits <= 63 (so that
	                          every range end, 2^addr_bits included, fits in a uint64_t) */
	unsigned gran_log2;    /* a unit is 2^gran_log2 bytes (12 = 4 KiB pages); < addr_bits */
	size_t node_budget;    /* nodes in the pool (root included); 0 = 4·b·D/ε; at least 1 + 2b */
	double mu;             /* merge strictness μ, 0 < μ <= 1; 0 = RAP_DEFAULT_MU */
};

/* A range of addresses [lo, hi) with its counts, as reported by rap_hot_ranges(). */
struct rap_range {
	uint64_t lo, hi;       /* bytes; hi is exclusive */
	uint64_t est;          /* subtree sum: events counted inside [lo, hi) (= lower) */
	uint64_t discounted;   /* est minus the est of hot ranges nested inside (HHH count) */
	uint64_t lower, upper; /* lower <= true count of [lo, hi) <= upper */
	unsigned depth;        /* depth of the node in the tree (root = 0) */
};

/* One node as seen by rap_walk(). */
struct rap_node_info {
	uint64_t lo, hi;       /* bytes; hi is exclusive */
	uint64_t own;          /* the node's own counter */
	uint64_t sub;          /* subtree sum = estimate = lower bound of the true count */
	uint64_t anc;          /* sum of the ancestors' own counts: true <= sub + anc */
	unsigned depth;        /* root = 0 */
};

/* Counters and sizes, for reports and benchmarks. */
struct rap_stats {
	uint64_t n;              /* total weight counted */
	uint64_t rejected;       /* points refused: outside the universe, or total would overflow */
	uint64_t w_max;          /* largest weight added */
	uint64_t next_merge;     /* n at which the next scheduled merge pass runs */
	double eps;              /* configured ε */
	double eps_eff;          /* max ε of the trees merged into this one (= eps if none) */
	double thr_floor;        /* absolute count added to thr by budget escalations */
	double eps_now;          /* effective ε at this n: thr·D/n */
	double mu;
	double threshold;        /* thr = eps_eff·n/D + thr_floor */
	double guarantee;        /* thr·D + T·D·w_max = eps_now·n + T·D·w_max: max underestimate
	                            of any node's est */
	unsigned depth;          /* D, levels above a unit */
	unsigned branch;         /* b */
	unsigned addr_bits, gran_log2;
	unsigned trees;          /* T: trees combined into this one (1 + those merged in) */
	size_t nodes;            /* live nodes (root included) */
	size_t nodes_reserved;   /* pool slots in use: root + b per allocated block */
	size_t node_capacity;    /* pool size in nodes */
	size_t bytes_per_node;   /* RAP_BYTES_PER_NODE */
	size_t pool_bytes;       /* node_capacity · bytes_per_node */
	size_t memory_bytes;     /* everything allocated for the tree (pool + descriptor) */
	uint64_t splits, leaf_merges, internal_merges, merge_passes, escalations;
};

/* Dump modes for rap_dump(). */
#define RAP_DUMP_TREE 1  /* every node, pre-order, indented by depth; hot nodes marked HOT */
#define RAP_DUMP_FLAT 2  /* only the hot ranges: "lo hi est lower upper pct" */

/* rap_memory_size: bytes rap_init_in() needs for this configuration, or 0 if the
 * configuration is invalid (the reason is written to err). */
size_t rap_memory_size(const struct rap_config *cfg, char *err, size_t errlen);

/* rap_init: allocate (one malloc) and initialise an empty tree. Returns NULL with a message
 * on an invalid configuration or when the allocation fails. Free with rap_free(). */
rap_t *rap_init(const struct rap_config *cfg, char *err, size_t errlen);

/* rap_init_in: like rap_init, in caller-provided memory of size >= rap_memory_size(cfg)
 * (16-byte aligned). For callers that must not use malloc (the runtime's handler threads).
 * rap_free() on such a tree does nothing; the caller owns the memory. */
rap_t *rap_init_in(const struct rap_config *cfg, void *mem, size_t size, char *err, size_t errlen);

/* rap_free: release a tree made by rap_init, rap_deserialize or a NULL pointer. */
void rap_free(rap_t *rap);

/* rap_add: count one event at address addr with weight w (w = 0 does nothing). Returns 0,
 * or -1 (and counts it in stats.rejected) when addr >= 2^addr_bits or n + w would exceed
 * RAP_MAX_TOTAL. O(D), allocates nothing. */
int rap_add(rap_t *rap, uint64_t addr, uint64_t w);

/* rap_add_points: rap_add(rap, addrs[i], 1) for each of the count addresses. Returns how
 * many were counted (the others were rejected). */
size_t rap_add_points(rap_t *rap, const uint64_t *addrs, size_t count);

/* rap_add_weighted: rap_add(rap, addrs[i], weights[i]) for each i < count. Returns how
 * many were accepted. */
size_t rap_add_weighted(rap_t *rap, const uint64_t *addrs, const uint64_t *weights, size_t count);

/* rap_query: bounds on the number of events with address in [a, c) (bytes; a < c, else
 * both bounds are 0): *lower <= true <= *upper. Cost: the nodes overlapping the range. */
void rap_query(const rap_t *rap, uint64_t a, uint64_t c, uint64_t *lower, uint64_t *upper);

/* rap_hot_ranges: hierarchical heavy hitters at threshold phi (ε < phi <= 1, e.g. 0.05):
 * walking bottom-up, a node is hot when its discounted count (subtree sum minus the
 * subtree sums of hot nodes below it with no hot node between) is >= phi·n. Stores up to
 * max ranges in out, sorted by address (an enclosing range before those nested in it),
 * and returns how many there are in all (call with max = 0 to size the array). */
size_t rap_hot_ranges(const rap_t *rap, double phi, struct rap_range *out, size_t max);

/* rap_walk: call fn for every node in pre-order (address order, a node before the nodes
 * nested in it). Stops early and returns fn's value when fn returns non-zero; else 0. */
typedef int (*rap_walk_fn)(const struct rap_node_info *node, void *ctx);
int rap_walk(const rap_t *rap, rap_walk_fn fn, void *ctx);

/* rap_dump: write the tree as text. RAP_DUMP_TREE: a header line
 *   # rap eps=0.0100 eps_now=0.0100 b=4 n=200000 nodes=689 depth=13 gran=4096 thr=125.0 phi=0.0500
 * then one line per node, pre-order, indented two spaces per depth:
 *   [0x0000000040000000,0x0000000050000000) own=3 sub=180211 90.11% HOT
 * (percent = sub/n; HOT = reported by rap_hot_ranges at phi). RAP_DUMP_FLAT: the same
 * header, then "# lo hi est lower upper pct" and one line per hot range. Both flags may be
 * given (tree first). Returns 0, or -1 if writing (or a temporary allocation) failed. */
int rap_dump(const rap_t *rap, FILE *out, double phi, unsigned mode);

/* rap_merge: add every event counted in src to dst (the runtime keeps one tree per handler
 * thread and merges them at exit). Both trees must have the same addr_bits, gran_log2 and
 * branch_log2; src is unchanged. Semantics: the union of the two trees — each node of src
 * adds its own count to the node of dst with exactly the same range (created if missing,
 * unless the deepest dst node containing that range can absorb the count within the merge
 * rule, count + its own <= μ·thr — what the next merge pass would do anyway); then dst
 * splits and merges as usual. A node of the union holds the counts of (at most) one node
 * of each tree, each within its own tree's (I), so the thresholds add up: dst takes the
 * combined n, eps_eff = max of the two ε, thr_floor = sum of the floors, T = T_dst + T_src
 * (just T_src if dst was empty), and (I) holds for the result. Error bound, hence, for
 * any node (stats.guarantee):
 *     true - est <= eps_eff·n + D·thr_floor + T·D·w_max
 * — for T unbudgeted trees ε·n + T·D·w_max: merging T per-thread trees costs (T-1)·D·w_max
 * beyond one tree of the whole stream (the sum of the trees' own bounds, ε·n_i + D·w_max).
 * rap_query() bounds stay true. Returns 0, or -1 with a message (nothing changed) on
 * mismatched geometry, dst == src or overflow of n. */
int rap_merge(rap_t *dst, const rap_t *src, char *err, size_t errlen);

/* rap_merge_pass: run a merge pass now (the scheduled ones run by themselves). */
void rap_merge_pass(rap_t *rap);

/* rap_serialize: write the tree in the versioned little-endian format below into buf when
 * cap is large enough. Returns the size of the serialized tree (whether written or not).
 *   header, 104 bytes: magic "FLRAP\0\0\0"; u32 version = 1; u32 header_size = 104;
 *   u32 node_size = 16; u32 node_count; u8 addr_bits, gran_log2, branch_log2, 0;
 *   u32 trees; f64 eps, eps_eff, thr_floor, mu; u64 n, w_max, next_merge, node_budget;
 *   u64 checksum (FNV-1a 64 of bytes [0, 96) followed by the node records).
 *   node_count records of 16 bytes, pre-order: u64 key = (lo << 1) | (1 << s) for the
 *   range [lo, lo + 2^s) in units; u64 own count. */
size_t rap_serialize(const rap_t *rap, void *buf, size_t cap);

/* rap_deserialize: rebuild a tree from rap_serialize()'s output. Everything is validated
 * (sizes, checksum, parameters, ranges nested and in pre-order, one node per slot, counts
 * summing to n, invariant (I)); on any problem returns NULL and a message saying what and
 * where. Never reads outside [buf, buf + len). Free the result with rap_free(). */
rap_t *rap_deserialize(const void *buf, size_t len, char *err, size_t errlen);

/* rap_check_invariant: verify the tree's structure (ranges nested and in the right slots,
 * block accounting, live node count, counts summing to n) and invariant (I). Returns 0,
 * or -1 with a message naming the first violation. O(nodes); allocates a bitmap. */
int rap_check_invariant(const rap_t *rap, char *err, size_t errlen);

/* rap_error_bound: the largest anc(v) over all nodes — the tightest error bound this tree
 * can state: every node's est is within [true - bound, true]. <= stats.guarantee. */
uint64_t rap_error_bound(const rap_t *rap);

/* rap_get_stats: fill *st. */
void rap_get_stats(const rap_t *rap, struct rap_stats *st);

#endif
