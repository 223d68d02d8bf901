/* rap.c: Range Adaptive Profiling — the tree, its updates and merges, queries, the
 * invariant check and the on-disk form. What the tree computes and guarantees is described
 * in inc/faultline/rap.h; this file explains how it is stored.
 *
 * Ranges. All arithmetic is in units (x = addr >> gran_log2). A node covers an aligned range
 * [lo, lo + 2^s) of the universe [0, 2^W); its shift s is W for the root and a multiple of
 * k (b = 2^k) for every other node. Such a range is stored in one word, its key:
 *     key = (lo << 1) | (1 << s)        (the lowest set bit gives s; 0 means "no node")
 * A node of shift s > 0 has pieces of shift child_shift[s] (s - k, or the largest multiple
 * of k below W for the root), fanout(s) = 2^(s - child_shift[s]) <= b of them.
 *
 * Nodes and blocks. A node is 16 bytes: its key, and one word holding its own count (low 40
 * bits) and the index of its child block (high 24 bits; 0 = leaf). A child block is b
 * consecutive nodes ("slots"); slot i belongs to the i-th piece of the parent and is empty
 * (key 0), or holds the piece itself, or — after path compression — a narrower node inside
 * that piece. A node is "closed" when every slot holds its exact piece: then every unit of
 * its range lies below a child and no update lands on it. The pool is one array: pool[0] is
 * the root, block j >= 1 is pool[1 + (j-1)·b ...]. Blocks come from a bump pointer, and
 * freed blocks go to a free list threaded through their first slot.
 *
 * Nothing here allocates after init except rap_check_invariant (a bitmap), rap_init and
 * rap_deserialize. Recursion is bounded by the depth, at most D + 1 <= 64 levels. */
#include "faultline/rap.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#define COUNT_BITS 40
#define COUNT_MASK ((UINT64_C(1) << COUNT_BITS) - 1)
#define BLOCK_MAX ((UINT32_C(1) << (64 - COUNT_BITS)) - 1)
#define MAX_DEPTH 64

struct rap_node {
	uint64_t key;   /* (lo << 1) | (1 << shift), in units; 0 = empty slot */
	uint64_t word;  /* own count (COUNT_BITS) | child block index << COUNT_BITS */
};
_Static_assert(sizeof(struct rap_node) == RAP_BYTES_PER_NODE, "a node is 16 bytes");

struct rap {
	/* geometry and parameters */
	unsigned addr_bits, gran_log2, branch_log2, branch;
	unsigned universe_bits;         /* W = addr_bits - gran_log2 */
	unsigned depth;                 /* D = ceil(W / k) */
	uint8_t child_shift[MAX_DEPTH]; /* shift of the pieces of a node of shift s (s >= 1) */
	double eps, mu, eps_eff;        /* eps_eff: max ε of the trees merged into this one */
	double thr_per_n;               /* eps_eff / D */
	double thr_floor;               /* added to the threshold by budget escalations */
	size_t budget;                  /* as configured (0 = default) */
	/* state */
	uint64_t n, w_max, next_merge, rejected;
	uint32_t trees;
	size_t nodes;                   /* live nodes, root included */
	/* pool */
	struct rap_node *pool;
	uint32_t nblocks;               /* blocks in the pool */
	uint32_t free_blocks;           /* blocks not in use (bump area + free list) */
	uint32_t bump;                  /* next never-used block */
	uint32_t free_head;             /* first block of the free list, 0 = none */
	bool owns_memory;
	size_t memory_bytes;
	/* counters */
	uint64_t splits, leaf_merges, internal_merges, merge_passes, escalations;
};

/* ---- messages ---------------------------------------------------------------------- */

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	if (!err || !errlen)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static bool finite_double(double x)
{
	return x - x == 0.0; /* false for NaN and ±inf */
}

/* ---- keys and nodes ---------------------------------------------------------------- */

static inline uint64_t key_make(uint64_t lo, unsigned shift)
{
	return (lo << 1) | (UINT64_C(1) << shift);
}

static inline unsigned key_shift(uint64_t key)
{
	return (unsigned)__builtin_ctzll(key);
}

static inline uint64_t key_lo(uint64_t key)
{
	return (key ^ (UINT64_C(1) << key_shift(key))) >> 1;
}

/* Does the node with this key (non-zero, not the root) contain unit x? */
static inline bool key_contains(uint64_t key, uint64_t x)
{
	return key && (((x << 1) ^ key) >> (key_shift(key) + 1)) == 0;
}

/* Does range a contain range k (a ⊇ k)? */
static inline bool key_covers(uint64_t a, uint64_t k)
{
	unsigned sa = key_shift(a);
	return sa >= key_shift(k) && ((key_lo(k) ^ key_lo(a)) >> sa) == 0;
}

static inline uint64_t node_count(const struct rap_node *v)
{
	return v->word & COUNT_MASK;
}

static inline uint32_t node_block(const struct rap_node *v)
{
	return (uint32_t)(v->word >> COUNT_BITS);
}

static inline void node_set_block(struct rap_node *v, uint32_t blk)
{
	v->word = node_count(v) | (uint64_t)blk << COUNT_BITS;
}

static inline uint32_t block_base(const struct rap *r, uint32_t blk)
{
	return 1 + ((blk - 1) << r->branch_log2);
}

static inline struct rap_node *block_slots(const struct rap *r, uint32_t blk)
{
	return &r->pool[block_base(r, blk)];
}

static inline unsigned fanout(const struct rap *r, unsigned shift)
{
	return 1u << (shift - r->child_shift[shift]);
}

/* Slot of a node of shift s that unit x falls in. */
static inline unsigned slot_of(const struct rap *r, unsigned s, uint64_t x)
{
	return (unsigned)((x >> r->child_shift[s]) & (fanout(r, s) - 1));
}

/* thr = eps_eff·n/D + thr_floor. Both terms only grow, so the threshold never decreases. */
static inline double threshold(const struct rap *r)
{
	return r->thr_per_n * (double)r->n + r->thr_floor;
}

/* ---- configuration and init -------------------------------------------------------- */

/* The validated geometry of a configuration. */
struct rap_geometry {
	unsigned universe_bits, depth, branch;
	double mu;
	uint32_t nblocks;
};

static int check_config(const struct rap_config *cfg, struct rap_geometry *g, char *err,
			size_t errlen)
{
	if (!cfg) {
		set_err(err, errlen, "rap: no configuration");
		return -1;
	}
	if (!finite_double(cfg->eps) || cfg->eps <= 0 || cfg->eps >= 1) {
		set_err(err, errlen, "rap: eps = %g, need 0 < eps < 1", cfg->eps);
		return -1;
	}
	if (cfg->branch_log2 < 1 || cfg->branch_log2 > 8) {
		set_err(err, errlen, "rap: branch_log2 = %u, need 1..8 (b = 2..256)", cfg->branch_log2);
		return -1;
	}
	if (cfg->addr_bits < 1 || cfg->addr_bits > 63) {
		set_err(err, errlen, "rap: addr_bits = %u, need 1..63", cfg->addr_bits);
		return -1;
	}
	if (cfg->gran_log2 >= cfg->addr_bits) {
		set_err(err, errlen, "rap: gran_log2 = %u, need < addr_bits = %u", cfg->gran_log2,
			cfg->addr_bits);
		return -1;
	}
	double mu = cfg->mu == 0 ? RAP_DEFAULT_MU : cfg->mu;
	if (!finite_double(mu) || mu <= 0 || mu > 1) {
		set_err(err, errlen, "rap: mu = %g, need 0 < mu <= 1", cfg->mu);
		return -1;
	}
	g->mu = mu;
	g->branch = 1u << cfg->branch_log2;
	g->universe_bits = cfg->addr_bits - cfg->gran_log2;
	g->depth = (g->universe_bits + cfg->branch_log2 - 1) / cfg->branch_log2;
	double budget = (double)cfg->node_budget;
	if (cfg->node_budget == 0)
		budget = RAP_DEFAULT_BUDGET_FACTOR * (double)g->branch * g->depth / cfg->eps + 1;
	if (budget < 1 + 2.0 * g->branch) {
		set_err(err, errlen, "rap: node_budget = %zu, need at least 1 + 2b = %u",
			cfg->node_budget, 1 + 2 * g->branch);
		return -1;
	}
	double blocks = (budget - 1) / g->branch;
	if (blocks > BLOCK_MAX) {
		set_err(err, errlen, "rap: %s node budget %.0f exceeds %.0f nodes; raise eps or set "
			"node_budget", cfg->node_budget ? "the" : "the default", budget,
			(double)BLOCK_MAX * g->branch + 1);
		return -1;
	}
	g->nblocks = (uint32_t)blocks;
	return 0;
}

static size_t descriptor_size(void)
{
	return (sizeof(struct rap) + 15) & ~(size_t)15;
}

static size_t pool_nodes(const struct rap_geometry *g)
{
	return 1 + (size_t)g->nblocks * g->branch;
}

size_t rap_memory_size(const struct rap_config *cfg, char *err, size_t errlen)
{
	struct rap_geometry g;
	if (check_config(cfg, &g, err, errlen))
		return 0;
	return descriptor_size() + pool_nodes(&g) * sizeof(struct rap_node);
}

rap_t *rap_init_in(const struct rap_config *cfg, void *mem, size_t size, char *err, size_t errlen)
{
	struct rap_geometry g;
	if (check_config(cfg, &g, err, errlen))
		return NULL;
	size_t need = descriptor_size() + pool_nodes(&g) * sizeof(struct rap_node);
	if (!mem || size < need || ((uintptr_t)mem & 15)) {
		set_err(err, errlen, "rap_init_in: memory %p of %zu bytes, need %zu bytes, 16-aligned",
			mem, size, need);
		return NULL;
	}
	struct rap *r = mem;
	memset(r, 0, sizeof(*r));
	r->addr_bits = cfg->addr_bits;
	r->gran_log2 = cfg->gran_log2;
	r->branch_log2 = cfg->branch_log2;
	r->branch = g.branch;
	r->universe_bits = g.universe_bits;
	r->depth = g.depth;
	for (unsigned s = 1; s < MAX_DEPTH; s++)
		r->child_shift[s] = (uint8_t)((s - 1) / cfg->branch_log2 * cfg->branch_log2);
	r->eps = r->eps_eff = cfg->eps;
	r->thr_per_n = cfg->eps / g.depth;
	r->mu = g.mu;
	r->budget = cfg->node_budget;
	r->next_merge = RAP_MERGE_FIRST;
	r->trees = 1;
	r->pool = (struct rap_node *)((char *)mem + descriptor_size());
	r->pool[0].key = key_make(0, g.universe_bits);
	r->pool[0].word = 0;
	r->nodes = 1;
	r->nblocks = r->free_blocks = g.nblocks;
	r->bump = 1;
	r->memory_bytes = need;
	return r;
}

rap_t *rap_init(const struct rap_config *cfg, char *err, size_t errlen)
{
	size_t size = rap_memory_size(cfg, err, errlen);
	if (!size)
		return NULL;
	void *mem = NULL;
	int rc = posix_memalign(&mem, 64, size);
	if (rc) {
		set_err(err, errlen, "rap_init: posix_memalign(64, %zu): %s", size, strerror(rc));
		return NULL;
	}
	struct rap *r = rap_init_in(cfg, mem, size, err, errlen);
	if (!r) {
		free(mem);
		return NULL;
	}
	r->owns_memory = true;
	return r;
}

void rap_free(rap_t *r)
{
	if (r && r->owns_memory)
		free(r);
}

/* ---- the block pool ---------------------------------------------------------------- */

/* A cleared block, or 0 when the pool is exhausted. */
static uint32_t block_alloc(struct rap *r)
{
	uint32_t blk;
	if (r->free_head) {
		blk = r->free_head;
		r->free_head = node_block(block_slots(r, blk));
	} else if (r->bump <= r->nblocks) {
		blk = r->bump++;
	} else {
		return 0;
	}
	r->free_blocks--;
	memset(block_slots(r, blk), 0, sizeof(struct rap_node) * r->branch);
	return blk;
}

static void block_free(struct rap *r, uint32_t blk)
{
	struct rap_node *first = block_slots(r, blk);
	first->key = 0;
	first->word = (uint64_t)r->free_head << COUNT_BITS;
	r->free_head = blk;
	r->free_blocks++;
}

/* ---- descent and splits ------------------------------------------------------------ */

/* Index of the deepest node containing unit x. The hot loop of every update: one dependent
 * load of the node's word and one of the child's key per level. */
static inline uint32_t descend(const struct rap *r, uint64_t x)
{
	uint32_t vi = 0;
	unsigned s = r->universe_bits;
	for (;;) {
		uint32_t blk = node_block(&r->pool[vi]);
		if (!blk)
			return vi;
		unsigned cs = r->child_shift[s];
		uint32_t ci = block_base(r, blk) + (uint32_t)((x >> cs) & ((1u << (s - cs)) - 1));
		uint64_t ck = r->pool[ci].key;
		if (!ck)
			return vi;
		s = key_shift(ck);
		if (((x << 1) ^ ck) >> (s + 1))
			return vi;
		vi = ci;
	}
}

/* Index of the deepest node whose range contains the range key. */
static uint32_t descend_key(const struct rap *r, uint64_t key)
{
	uint32_t vi = 0;
	uint64_t x = key_lo(key);
	for (;;) {
		const struct rap_node *v = &r->pool[vi];
		uint32_t blk = node_block(v);
		if (!blk || v->key == key)
			return vi;
		uint32_t ci = block_base(r, blk) + slot_of(r, key_shift(v->key), x);
		uint64_t ck = r->pool[ci].key;
		if (!ck || !key_covers(ck, key))
			return vi;
		vi = ci;
	}
}

/* Blocks that closing node v needs: its own block if missing, plus one per slot holding a
 * compressed node (which must move below a new node for its exact piece). */
static unsigned blocks_to_close(const struct rap *r, const struct rap_node *v)
{
	uint32_t blk = node_block(v);
	if (!blk)
		return 1;
	unsigned s = key_shift(v->key), cs = r->child_shift[s], need = 0;
	uint64_t lo = key_lo(v->key);
	const struct rap_node *slots = block_slots(r, blk);
	for (unsigned i = 0; i < fanout(r, s); i++)
		if (slots[i].key && slots[i].key != key_make(lo + ((uint64_t)i << cs), cs))
			need++;
	return need;
}

static bool node_is_open(const struct rap *r, const struct rap_node *v)
{
	if (!node_block(v))
		return true;
	unsigned s = key_shift(v->key), cs = r->child_shift[s];
	uint64_t lo = key_lo(v->key);
	const struct rap_node *slots = block_slots(r, node_block(v));
	for (unsigned i = 0; i < fanout(r, s); i++)
		if (slots[i].key != key_make(lo + ((uint64_t)i << cs), cs))
			return true;
	return false;
}

/* Place node u (a copy) into the right slot of a fresh block that belongs to a node of
 * shift s. */
static void put_in_block(struct rap *r, uint32_t blk, unsigned s, const struct rap_node *u)
{
	block_slots(r, blk)[slot_of(r, s, key_lo(u->key))] = *u;
}

/* Split (close) node vi: give it every piece, each with count 0, keeping compressed nodes
 * below their piece. Returns false, changing nothing, if the pool lacks the blocks. */
static bool split_node(struct rap *r, uint32_t vi)
{
	struct rap_node *v = &r->pool[vi];
	unsigned need = blocks_to_close(r, v);
	if (need > r->free_blocks)
		return false;
	if (!node_block(v))
		node_set_block(v, block_alloc(r));
	unsigned s = key_shift(v->key), cs = r->child_shift[s];
	uint64_t lo = key_lo(v->key);
	struct rap_node *slots = block_slots(r, node_block(v));
	for (unsigned i = 0; i < fanout(r, s); i++) {
		struct rap_node *c = &slots[i];
		uint64_t piece = key_make(lo + ((uint64_t)i << cs), cs);
		if (c->key == piece)
			continue;
		if (c->key) { /* compressed node: goes one level down, below its piece */
			uint32_t nb = block_alloc(r);
			put_in_block(r, nb, cs, c);
			c->word = (uint64_t)nb << COUNT_BITS;
		} else {
			c->word = 0;
		}
		c->key = piece;
		r->nodes++;
	}
	r->splits++;
	return true;
}

static void merge_pass(struct rap *r);

/* The pool cannot supply a split. First an unscheduled merge pass at the current threshold
 * (the pool may just have filled up since the last scheduled one); if that leaves less than
 * an eighth of the blocks free — so passes cannot follow each other closely — merge harder:
 * raising the floor doubles the threshold (it never decreases, so (I) still holds) and
 * another pass frees more. The floor is an absolute count, so as n grows the tree returns
 * towards its nominal ε: exhaustion while n is small (thr < 1: every event splits) costs
 * nothing later. */
static void escalate(struct rap *r)
{
	merge_pass(r);
	if (r->free_blocks >= r->nblocks / 8 + 2)
		return;
	r->thr_floor += threshold(r);
	r->escalations++;
	merge_pass(r);
}

static inline bool over_threshold(const struct rap *r, const struct rap_node *v)
{
	return key_shift(v->key) > 0 && (double)node_count(v) > threshold(r);
}

/* After node vi's count grew: while it is over the threshold and open, close it; if the
 * pool is short, escalate and look again (the node may have been folded away). Terminates:
 * once μ·thr >= n a merge pass folds the whole tree into the root. */
static void settle(struct rap *r, uint32_t vi, uint64_t key)
{
	while (over_threshold(r, &r->pool[vi]) && node_is_open(r, &r->pool[vi])) {
		if (split_node(r, vi))
			return;
		escalate(r);
		vi = descend_key(r, key);
	}
}

/* ---- merge pass -------------------------------------------------------------------- */

static bool block_is_empty(const struct rap *r, const struct rap_node *v)
{
	const struct rap_node *slots = block_slots(r, node_block(v));
	for (unsigned i = 0; i < fanout(r, key_shift(v->key)); i++)
		if (slots[i].key)
			return false;
	return true;
}

/* Remove child c of p if p.count + c.count <= limit and c has at most one child, which then
 * takes c's slot. Returns true if c's slot changed. */
static bool fold_child(struct rap *r, struct rap_node *p, struct rap_node *c, double limit)
{
	uint64_t pc = node_count(p), cc = node_count(c);
	if ((double)(pc + cc) > limit)
		return false;
	uint32_t cblk = node_block(c);
	if (cblk && block_is_empty(r, c)) { /* never left so by the tree itself; defensive */
		block_free(r, cblk);
		node_set_block(c, 0);
		cblk = 0;
	}
	if (!cblk) { /* leaf merge */
		p->word += cc;
		c->key = c->word = 0;
		r->nodes--;
		r->leaf_merges++;
		return true;
	}
	struct rap_node *only = NULL, *slots = block_slots(r, cblk);
	for (unsigned i = 0; i < fanout(r, key_shift(c->key)); i++) {
		if (!slots[i].key)
			continue;
		if (only)
			return false;
		only = &slots[i];
	}
	p->word += cc; /* internal merge: path compression */
	*c = *only;
	block_free(r, cblk);
	r->nodes--;
	r->internal_merges++;
	return true;
}

static void merge_below(struct rap *r, uint32_t pi, double limit)
{
	struct rap_node *p = &r->pool[pi];
	uint32_t blk = node_block(p);
	if (!blk)
		return;
	uint32_t base = block_base(r, blk);
	unsigned live = 0, fan = fanout(r, key_shift(p->key));
	for (unsigned i = 0; i < fan; i++) {
		struct rap_node *c = &r->pool[base + i];
		if (!c->key)
			continue;
		merge_below(r, base + i, limit);
		while (c->key && fold_child(r, p, c, limit))
			;
		live += c->key != 0;
	}
	if (!live) {
		block_free(r, blk);
		node_set_block(p, 0);
	}
}

static void merge_pass(struct rap *r)
{
	merge_below(r, 0, r->mu * threshold(r));
	r->merge_passes++;
}

void rap_merge_pass(rap_t *r)
{
	merge_pass(r);
}

static void scheduled_merges(struct rap *r)
{
	if (r->n < r->next_merge)
		return;
	merge_pass(r);
	while (r->next_merge <= r->n)
		r->next_merge *= 2; /* n <= 2^40: no overflow */
}

/* ---- updates ----------------------------------------------------------------------- */

static inline int add_one(struct rap *r, uint64_t addr, uint64_t w)
{
	if ((addr >> r->addr_bits) || w > RAP_MAX_TOTAL - r->n) {
		r->rejected++;
		return -1;
	}
	if (!w)
		return 0;
	uint64_t x = addr >> r->gran_log2;
	uint32_t vi = descend(r, x);
	r->pool[vi].word += w;
	r->n += w;
	if (w > r->w_max)
		r->w_max = w;
	if (over_threshold(r, &r->pool[vi]))
		settle(r, vi, key_make(x, 0));
	if (r->n >= r->next_merge)
		scheduled_merges(r);
	return 0;
}

int rap_add(rap_t *r, uint64_t addr, uint64_t w)
{
	return add_one(r, addr, w);
}

size_t rap_add_points(rap_t *r, const uint64_t *addrs, size_t count)
{
	size_t ok = 0;
	for (size_t i = 0; i < count; i++)
		ok += add_one(r, addrs[i], 1) == 0;
	return ok;
}

size_t rap_add_weighted(rap_t *r, const uint64_t *addrs, const uint64_t *weights, size_t count)
{
	size_t ok = 0;
	for (size_t i = 0; i < count; i++)
		ok += add_one(r, addrs[i], weights[i]) == 0;
	return ok;
}

/* ---- merging trees ----------------------------------------------------------------- */

/* Make sure a node with exactly range key exists (creating it, and at most one new
 * intermediate node, below the deepest node containing it); return its index. Needs at
 * most 2 free blocks. */
static uint32_t find_or_insert(struct rap *r, uint64_t key)
{
	uint32_t vi = descend_key(r, key);
	struct rap_node *v = &r->pool[vi];
	if (v->key == key)
		return vi;
	if (!node_block(v))
		node_set_block(v, block_alloc(r));
	unsigned s = key_shift(v->key);
	uint32_t ci = block_base(r, node_block(v)) + slot_of(r, s, key_lo(key));
	struct rap_node *c = &r->pool[ci];
	struct rap_node fresh = { key, 0 };
	if (!c->key) {
		*c = fresh;
		r->nodes++;
		return ci;
	}
	uint32_t nb = block_alloc(r);
	if (key_covers(key, c->key)) { /* the new node goes between v and c */
		put_in_block(r, nb, key_shift(key), c);
		fresh.word = (uint64_t)nb << COUNT_BITS;
		*c = fresh;
		r->nodes++;
		return ci;
	}
	/* c and the new range are disjoint: a new node for the smallest aligned range holding
	 * both (its shift is a multiple of k above their highest differing bit). */
	unsigned k = r->branch_log2;
	unsigned high = 63 - (unsigned)__builtin_clzll(key_lo(key) ^ key_lo(c->key));
	unsigned ps = (high / k + 1) * k;
	struct rap_node join = { key_make(key_lo(key) >> ps << ps, ps), (uint64_t)nb << COUNT_BITS };
	put_in_block(r, nb, ps, c);
	put_in_block(r, nb, ps, &fresh);
	*c = join;
	r->nodes += 2;
	return block_base(r, nb) + slot_of(r, ps, key_lo(key));
}

/* Add count to dst's node of range key. If dst has no such node and the deepest node
 * containing the range can take the count within the merge rule (a.count + count <=
 * μ·thr), it goes there: what a merge pass would do right after inserting the node. */
static void merge_node(struct rap *dst, uint64_t key, uint64_t count)
{
	uint32_t vi = descend_key(dst, key);
	struct rap_node *a = &dst->pool[vi];
	if (a->key != key && (double)(node_count(a) + count) <= dst->mu * threshold(dst)) {
		a->word += count;
		return;
	}
	while (dst->free_blocks < 2)
		escalate(dst);
	vi = find_or_insert(dst, key);
	dst->pool[vi].word += count;
	settle(dst, vi, key);
}

static void merge_subtree(struct rap *dst, const struct rap *src, uint32_t vi)
{
	const struct rap_node *v = &src->pool[vi];
	if (node_count(v))
		merge_node(dst, v->key, node_count(v));
	uint32_t blk = node_block(v);
	if (!blk)
		return;
	for (unsigned i = 0; i < fanout(src, key_shift(v->key)); i++)
		if (src->pool[block_base(src, blk) + i].key)
			merge_subtree(dst, src, block_base(src, blk) + i);
}

int rap_merge(rap_t *dst, const rap_t *src, char *err, size_t errlen)
{
	if (dst == src) {
		set_err(err, errlen, "rap_merge: a tree cannot be merged into itself");
		return -1;
	}
	if (dst->addr_bits != src->addr_bits || dst->gran_log2 != src->gran_log2 ||
	    dst->branch_log2 != src->branch_log2) {
		set_err(err, errlen, "rap_merge: geometry differs: dst addr_bits=%u gran_log2=%u "
			"branch_log2=%u, src %u %u %u", dst->addr_bits, dst->gran_log2,
			dst->branch_log2, src->addr_bits, src->gran_log2, src->branch_log2);
		return -1;
	}
	if (src->n > RAP_MAX_TOTAL - dst->n) {
		set_err(err, errlen, "rap_merge: total %llu + %llu exceeds RAP_MAX_TOTAL",
			(unsigned long long)dst->n, (unsigned long long)src->n);
		return -1;
	}
	/* A node of the union holds the sum of one node of each tree, each within its own
	 * tree's (I): so thresholds add up (eps_eff as the max ε, floors summed) and so does T.
	 * An empty dst contributes nothing, and keeps no T of its own. Thresholds use the
	 * combined n from the start, so that src's nodes are not split for being heavy
	 * relative to a partial total. */
	dst->trees = dst->n == 0 ? src->trees
		   : src->trees > UINT32_MAX - dst->trees ? UINT32_MAX : dst->trees + src->trees;
	dst->n += src->n;
	if (src->eps_eff > dst->eps_eff) {
		dst->eps_eff = src->eps_eff;
		dst->thr_per_n = dst->eps_eff / dst->depth;
	}
	dst->thr_floor += src->thr_floor;
	if (src->w_max > dst->w_max)
		dst->w_max = src->w_max;
	dst->rejected += src->rejected;
	merge_subtree(dst, src, 0);
	scheduled_merges(dst);
	return 0;
}

/* ---- queries ----------------------------------------------------------------------- */

static uint64_t subtree_sum(const struct rap *r, uint32_t vi)
{
	const struct rap_node *v = &r->pool[vi];
	uint64_t sum = node_count(v);
	uint32_t blk = node_block(v);
	if (blk)
		for (unsigned i = 0; i < fanout(r, key_shift(v->key)); i++)
			if (r->pool[block_base(r, blk) + i].key)
				sum += subtree_sum(r, block_base(r, blk) + i);
	return sum;
}

/* Query [a, c) in units: a node [L, H) is inside when in_lo <= L && H <= in_hi, overlaps
 * when L < ov_hi && H > ov_lo. */
struct query {
	uint64_t in_lo, in_hi, ov_lo, ov_hi;
	uint64_t lower, partial;
};

static void query_node(const struct rap *r, uint32_t vi, struct query *q)
{
	const struct rap_node *v = &r->pool[vi];
	uint64_t lo = key_lo(v->key), hi = lo + (UINT64_C(1) << key_shift(v->key));
	if (lo >= q->ov_hi || hi <= q->ov_lo)
		return;
	if (lo >= q->in_lo && hi <= q->in_hi) {
		q->lower += subtree_sum(r, vi);
		return;
	}
	q->partial += node_count(v);
	uint32_t blk = node_block(v);
	if (blk)
		for (unsigned i = 0; i < fanout(r, key_shift(v->key)); i++)
			if (r->pool[block_base(r, blk) + i].key)
				query_node(r, block_base(r, blk) + i, q);
}

void rap_query(const rap_t *r, uint64_t a, uint64_t c, uint64_t *lower, uint64_t *upper)
{
	*lower = *upper = 0;
	if (a >= c)
		return;
	unsigned g = r->gran_log2;
	uint64_t unit_mask = (UINT64_C(1) << g) - 1;
	struct query q = {
		.in_lo = (a >> g) + ((a & unit_mask) != 0),
		.in_hi = c >> g,
		.ov_lo = a >> g,
		.ov_hi = (c >> g) + ((c & unit_mask) != 0),
	};
	query_node(r, 0, &q);
	*lower = q.lower;
	*upper = q.lower + q.partial;
}

static void range_bytes(const struct rap *r, uint64_t key, uint64_t *lo, uint64_t *hi)
{
	uint64_t ulo = key_lo(key);
	*lo = ulo << r->gran_log2;
	*hi = (ulo + (UINT64_C(1) << key_shift(key))) << r->gran_log2;
}

struct hot_walk {
	double cut;               /* phi·n */
	struct rap_range *out;
	size_t max, total;
};

/* Post-order: returns the node's discounted count; *sub gets its subtree sum, *hot whether
 * it was reported. */
static uint64_t hot_node(const struct rap *r, uint32_t vi, unsigned depth, uint64_t anc,
			 struct hot_walk *h, uint64_t *sub, bool *hot)
{
	const struct rap_node *v = &r->pool[vi];
	uint64_t own = node_count(v), disc = own;
	*sub = own;
	uint32_t blk = node_block(v);
	if (blk) {
		for (unsigned i = 0; i < fanout(r, key_shift(v->key)); i++) {
			if (!r->pool[block_base(r, blk) + i].key)
				continue;
			uint64_t csub;
			bool chot;
			uint64_t cdisc = hot_node(r, block_base(r, blk) + i, depth + 1, anc + own, h,
						  &csub, &chot);
			*sub += csub;
			if (!chot)
				disc += cdisc;
		}
	}
	*hot = (double)disc >= h->cut;
	if (*hot) {
		if (h->total < h->max) {
			struct rap_range *o = &h->out[h->total];
			range_bytes(r, v->key, &o->lo, &o->hi);
			o->est = o->lower = *sub;
			o->discounted = disc;
			o->upper = *sub + anc;
			o->depth = depth;
		}
		h->total++;
	}
	return disc;
}

static int range_order(const void *pa, const void *pb)
{
	const struct rap_range *a = pa, *b = pb;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->hi > b->hi ? -1 : a->hi < b->hi;
}

size_t rap_hot_ranges(const rap_t *r, double phi, struct rap_range *out, size_t max)
{
	if (r->n == 0 || !(phi > 0))
		return 0;
	struct hot_walk h = { .cut = phi * (double)r->n, .out = out, .max = out ? max : 0 };
	uint64_t sub;
	bool hot;
	hot_node(r, 0, 0, 0, &h, &sub, &hot);
	size_t stored = h.total < h.max ? h.total : h.max;
	if (stored > 1)
		qsort(out, stored, sizeof(*out), range_order);
	return h.total;
}

static int walk_node(const struct rap *r, uint32_t vi, unsigned depth, uint64_t anc,
		     rap_walk_fn fn, void *ctx)
{
	const struct rap_node *v = &r->pool[vi];
	struct rap_node_info info = { .own = node_count(v), .sub = subtree_sum(r, vi),
				      .anc = anc, .depth = depth };
	range_bytes(r, v->key, &info.lo, &info.hi);
	int rc = fn(&info, ctx);
	uint32_t blk = node_block(v);
	if (rc || !blk)
		return rc;
	for (unsigned i = 0; i < fanout(r, key_shift(v->key)); i++) {
		if (!r->pool[block_base(r, blk) + i].key)
			continue;
		rc = walk_node(r, block_base(r, blk) + i, depth + 1, anc + info.own, fn, ctx);
		if (rc)
			return rc;
	}
	return 0;
}

int rap_walk(const rap_t *r, rap_walk_fn fn, void *ctx)
{
	return walk_node(r, 0, 0, 0, fn, ctx);
}

static uint64_t max_anc(const struct rap *r, uint32_t vi, uint64_t anc)
{
	const struct rap_node *v = &r->pool[vi];
	uint64_t best = anc;
	uint32_t blk = node_block(v);
	if (blk)
		for (unsigned i = 0; i < fanout(r, key_shift(v->key)); i++) {
			if (!r->pool[block_base(r, blk) + i].key)
				continue;
			uint64_t m = max_anc(r, block_base(r, blk) + i, anc + node_count(v));
			if (m > best)
				best = m;
		}
	return best;
}

uint64_t rap_error_bound(const rap_t *r)
{
	return max_anc(r, 0, 0);
}

void rap_get_stats(const rap_t *r, struct rap_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->n = r->n;
	st->rejected = r->rejected;
	st->w_max = r->w_max;
	st->next_merge = r->next_merge;
	st->eps = r->eps;
	st->eps_eff = r->eps_eff;
	st->mu = r->mu;
	st->threshold = threshold(r);
	st->thr_floor = r->thr_floor;
	st->eps_now = r->n ? threshold(r) * r->depth / (double)r->n : r->eps_eff;
	st->guarantee = threshold(r) * r->depth + (double)r->trees * r->depth * (double)r->w_max;
	st->depth = r->depth;
	st->branch = r->branch;
	st->addr_bits = r->addr_bits;
	st->gran_log2 = r->gran_log2;
	st->trees = r->trees;
	st->nodes = r->nodes;
	st->nodes_reserved = 1 + (size_t)(r->nblocks - r->free_blocks) * r->branch;
	st->node_capacity = 1 + (size_t)r->nblocks * r->branch;
	st->bytes_per_node = sizeof(struct rap_node);
	st->pool_bytes = st->node_capacity * sizeof(struct rap_node);
	st->memory_bytes = r->memory_bytes;
	st->splits = r->splits;
	st->leaf_merges = r->leaf_merges;
	st->internal_merges = r->internal_merges;
	st->merge_passes = r->merge_passes;
	st->escalations = r->escalations;
}

/* ---- invariant check --------------------------------------------------------------- */

struct check {
	const struct rap *r;
	uint8_t *seen;           /* one bit per block */
	uint64_t sum;
	size_t nodes, blocks;
	char *err;
	size_t errlen;
};

static int check_fail(struct check *ck, uint64_t key, const char *what)
{
	uint64_t lo, hi;
	range_bytes(ck->r, key, &lo, &hi);
	set_err(ck->err, ck->errlen, "rap invariant: node [%#llx,%#llx) (key %#llx): %s",
		(unsigned long long)lo, (unsigned long long)hi, (unsigned long long)key, what);
	return -1;
}

static int check_block_ref(struct check *ck, uint64_t key, uint32_t blk)
{
	const struct rap *r = ck->r;
	if (blk >= r->bump)
		return check_fail(ck, key, "child block index out of the used pool");
	if (ck->seen[blk / 8] & (1u << (blk % 8)))
		return check_fail(ck, key, "child block shared with another node or free");
	ck->seen[blk / 8] |= (uint8_t)(1u << (blk % 8));
	ck->blocks++;
	return 0;
}

static int check_node(struct check *ck, uint32_t vi, const struct rap_node *parent)
{
	const struct rap *r = ck->r;
	const struct rap_node *v = &r->pool[vi];
	unsigned s = key_shift(v->key);
	if (parent) {
		unsigned ps = key_shift(parent->key);
		if (s % r->branch_log2 || s > r->child_shift[ps])
			return check_fail(ck, v->key, "shift not a multiple of k below its parent's pieces");
		if (!key_covers(parent->key, v->key))
			return check_fail(ck, v->key, "not inside its parent");
		uint32_t expect = block_base(r, node_block(parent)) + slot_of(r, ps, key_lo(v->key));
		if (expect != vi)
			return check_fail(ck, v->key, "in the wrong slot of its parent's block");
	}
	uint64_t count = node_count(v);
	ck->sum += count;
	ck->nodes++;
	/* (I): own count <= thr + T·w_max; and a node over the threshold is closed. */
	if (s > 0) {
		double thr = threshold(r);
		double slack = (double)r->trees * (double)r->w_max;
		if ((double)count > (thr + slack) * (1 + 1e-12))
			return check_fail(ck, v->key, "(I) violated: own count > thr + T*w_max");
		if ((double)count > thr && node_is_open(r, v))
			return check_fail(ck, v->key, "over the threshold but not split");
	}
	uint32_t blk = node_block(v);
	if (!blk)
		return 0;
	if (s == 0)
		return check_fail(ck, v->key, "unit node with children");
	if (check_block_ref(ck, v->key, blk))
		return -1;
	const struct rap_node *slots = block_slots(r, blk);
	unsigned live = 0;
	for (unsigned i = 0; i < r->branch; i++) {
		if (!slots[i].key)
			continue;
		if (i >= fanout(r, s))
			return check_fail(ck, v->key, "slot beyond the fan-out in use");
		if (check_node(ck, block_base(r, blk) + i, v))
			return -1;
		live++;
	}
	if (!live)
		return check_fail(ck, v->key, "child block with no child");
	return 0;
}

static int check_pool(struct check *ck)
{
	const struct rap *r = ck->r;
	uint32_t on_list = 0;
	for (uint32_t blk = r->free_head; blk; blk = node_block(block_slots(r, blk))) {
		if (blk >= r->bump || (ck->seen[blk / 8] & (1u << (blk % 8)))) {
			set_err(ck->err, ck->errlen, "rap invariant: free list entry %u in use or "
				"out of range", blk);
			return -1;
		}
		ck->seen[blk / 8] |= (uint8_t)(1u << (blk % 8));
		on_list++;
	}
	uint32_t unused = r->nblocks - (r->bump - 1);
	if (on_list + unused != r->free_blocks || ck->blocks + r->free_blocks != r->nblocks) {
		set_err(ck->err, ck->errlen, "rap invariant: block accounting: %zu in use, %u free "
			"listed, %u never used, free_blocks %u, total %u", ck->blocks, on_list,
			unused, r->free_blocks, r->nblocks);
		return -1;
	}
	return 0;
}

int rap_check_invariant(const rap_t *r, char *err, size_t errlen)
{
	struct check ck = { .r = r, .err = err, .errlen = errlen };
	if (r->pool[0].key != key_make(0, r->universe_bits)) {
		set_err(err, errlen, "rap invariant: root key %#llx is not the universe",
			(unsigned long long)r->pool[0].key);
		return -1;
	}
	ck.seen = calloc((size_t)r->nblocks / 8 + 1, 1);
	if (!ck.seen) {
		set_err(err, errlen, "rap_check_invariant: calloc(%zu): %s",
			(size_t)r->nblocks / 8 + 1, strerror(errno));
		return -1;
	}
	int rc = check_node(&ck, 0, NULL);
	if (!rc)
		rc = check_pool(&ck);
	free(ck.seen);
	if (rc)
		return rc;
	if (ck.sum != r->n) {
		set_err(err, errlen, "rap invariant: counts sum to %llu, n = %llu",
			(unsigned long long)ck.sum, (unsigned long long)r->n);
		return -1;
	}
	if (ck.nodes != r->nodes) {
		set_err(err, errlen, "rap invariant: %zu nodes reachable, %zu recorded", ck.nodes,
			r->nodes);
		return -1;
	}
	return 0;
}

/* ---- on-disk form ------------------------------------------------------------------ */

#define RAP_MAGIC "FLRAP\0\0"        /* 7 characters + NUL = 8 bytes */
#define RAP_VERSION 1
#define RAP_HEADER_SIZE 104
#define RAP_CHECKSUM_AT 96

static void put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put_u64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put_f64(uint8_t *p, double d)
{
	uint64_t v;
	memcpy(&v, &d, sizeof(v));
	put_u64(p, v);
}

static uint32_t get_u32(const uint8_t *p)
{
	uint32_t v = 0;
	for (int i = 3; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static double get_f64(const uint8_t *p)
{
	uint64_t v = get_u64(p);
	double d;
	memcpy(&d, &v, sizeof(d));
	return d;
}

/* FNV-1a 64: every step is a bijection of the state, so any single changed byte changes
 * the result. */
static uint64_t fnv1a(uint64_t h, const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * UINT64_C(0x100000001b3);
	return h;
}

static uint64_t checksum(const uint8_t *buf, size_t len)
{
	uint64_t h = fnv1a(UINT64_C(0xcbf29ce484222325), buf, RAP_CHECKSUM_AT);
	return fnv1a(h, buf + RAP_HEADER_SIZE, len - RAP_HEADER_SIZE);
}

static uint8_t *write_nodes(const struct rap *r, uint32_t vi, uint8_t *p)
{
	const struct rap_node *v = &r->pool[vi];
	put_u64(p, v->key);
	put_u64(p + 8, node_count(v));
	p += 16;
	uint32_t blk = node_block(v);
	if (blk)
		for (unsigned i = 0; i < fanout(r, key_shift(v->key)); i++)
			if (r->pool[block_base(r, blk) + i].key)
				p = write_nodes(r, block_base(r, blk) + i, p);
	return p;
}

size_t rap_serialize(const rap_t *r, void *buf, size_t cap)
{
	size_t size = RAP_HEADER_SIZE + r->nodes * 16;
	if (!buf || cap < size)
		return size;
	uint8_t *h = buf;
	memset(h, 0, RAP_HEADER_SIZE);
	memcpy(h, RAP_MAGIC, 8);
	put_u32(h + 8, RAP_VERSION);
	put_u32(h + 12, RAP_HEADER_SIZE);
	put_u32(h + 16, 16);
	put_u32(h + 20, (uint32_t)r->nodes);
	h[24] = (uint8_t)r->addr_bits;
	h[25] = (uint8_t)r->gran_log2;
	h[26] = (uint8_t)r->branch_log2;
	put_u32(h + 28, r->trees);
	put_f64(h + 32, r->eps);
	put_f64(h + 40, r->eps_eff);
	put_f64(h + 48, r->thr_floor);
	put_f64(h + 56, r->mu);
	put_u64(h + 64, r->n);
	put_u64(h + 72, r->w_max);
	put_u64(h + 80, r->next_merge);
	put_u64(h + 88, (uint64_t)r->budget);
	write_nodes(r, 0, h + RAP_HEADER_SIZE);
	put_u64(h + RAP_CHECKSUM_AT, checksum(h, size));
	return size;
}

/* Header fields after the sizes and checksum have been verified. */
struct header {
	uint32_t node_count, trees;
	struct rap_config cfg;
	double eps_eff, thr_floor;
	uint64_t n, w_max, next_merge, budget;
};

static int parse_header(const uint8_t *h, size_t len, struct header *hd, char *err, size_t errlen)
{
	if (len < RAP_HEADER_SIZE) {
		set_err(err, errlen, "rap: truncated: %zu bytes, the header alone is %d", len,
			RAP_HEADER_SIZE);
		return -1;
	}
	if (memcmp(h, RAP_MAGIC, 8)) {
		set_err(err, errlen, "rap: bad magic: not a serialized RAP tree");
		return -1;
	}
	uint32_t version = get_u32(h + 8), header_size = get_u32(h + 12), node_size = get_u32(h + 16);
	if (version != RAP_VERSION) {
		set_err(err, errlen, "rap: format version %u, this build reads %d", version, RAP_VERSION);
		return -1;
	}
	if (header_size != RAP_HEADER_SIZE || node_size != 16) {
		set_err(err, errlen, "rap: header_size %u / node_size %u, expected %d / 16",
			header_size, node_size, RAP_HEADER_SIZE);
		return -1;
	}
	hd->node_count = get_u32(h + 20);
	uint64_t expect = RAP_HEADER_SIZE + (uint64_t)hd->node_count * 16;
	if (len != expect) {
		set_err(err, errlen, "rap: %s: %zu bytes, %u nodes need %llu",
			len < expect ? "truncated" : "trailing bytes", len, hd->node_count,
			(unsigned long long)expect);
		return -1;
	}
	uint64_t stored = get_u64(h + RAP_CHECKSUM_AT), computed = checksum(h, len);
	if (stored != computed) {
		set_err(err, errlen, "rap: checksum mismatch: stored %016llx, computed %016llx",
			(unsigned long long)stored, (unsigned long long)computed);
		return -1;
	}
	if (h[27] != 0) {
		set_err(err, errlen, "rap: reserved header byte 27 is %u, not 0", h[27]);
		return -1;
	}
	hd->cfg = (struct rap_config){ .addr_bits = h[24], .gran_log2 = h[25], .branch_log2 = h[26],
				       .eps = get_f64(h + 32), .mu = get_f64(h + 56) };
	hd->trees = get_u32(h + 28);
	hd->eps_eff = get_f64(h + 40);
	hd->thr_floor = get_f64(h + 48);
	hd->n = get_u64(h + 64);
	hd->w_max = get_u64(h + 72);
	hd->next_merge = get_u64(h + 80);
	hd->budget = get_u64(h + 88);
	return 0;
}

/* The state fields that rap_init does not set. */
static int check_state(const struct header *hd, char *err, size_t errlen)
{
	const char *bad = NULL;
	if (hd->cfg.mu == 0)
		bad = "mu is 0";
	else if (!finite_double(hd->eps_eff) || hd->eps_eff < hd->cfg.eps)
		bad = "eps_eff is not a number >= eps";
	else if (!finite_double(hd->thr_floor) || hd->thr_floor < 0)
		bad = "thr_floor is not a number >= 0";
	else if (hd->trees == 0)
		bad = "trees is 0";
	else if (hd->n > RAP_MAX_TOTAL)
		bad = "n exceeds RAP_MAX_TOTAL";
	else if (hd->w_max > hd->n || (hd->n && !hd->w_max))
		bad = "w_max is not in [1, n]";
	else if (hd->next_merge < RAP_MERGE_FIRST || hd->next_merge <= hd->n ||
		 (hd->next_merge & (hd->next_merge - 1)) || hd->next_merge > 2 * (RAP_MAX_TOTAL + 1))
		bad = "next_merge is not a power of two >= 1024 above n";
	else if (hd->node_count == 0)
		bad = "no nodes (the root is missing)";
	if (bad) {
		set_err(err, errlen, "rap: bad header: %s", bad);
		return -1;
	}
	return 0;
}

/* Insert one record as a new child of the node on top of the stack. */
static int load_node(struct rap *r, uint32_t *stack, unsigned *top, uint64_t key, uint64_t count,
		     uint32_t index, char *err, size_t errlen)
{
	while (*top > 0 && !key_covers(r->pool[stack[*top - 1]].key, key))
		(*top)--;
	if (*top == 0) { /* cannot happen for a key inside the universe; defensive */
		set_err(err, errlen, "rap: node %u: key %#llx outside the root", index,
			(unsigned long long)key);
		return -1;
	}
	struct rap_node *parent = &r->pool[stack[*top - 1]];
	if (!node_block(parent)) {
		uint32_t blk = block_alloc(r);
		if (!blk) {
			set_err(err, errlen, "rap: node %u: more internal nodes than the node budget "
				"(%u blocks) holds", index, r->nblocks);
			return -1;
		}
		node_set_block(parent, blk);
	}
	uint32_t ci = block_base(r, node_block(parent)) + slot_of(r, key_shift(parent->key), key_lo(key));
	if (r->pool[ci].key) {
		set_err(err, errlen, "rap: node %u: key %#llx shares a slot with key %#llx", index,
			(unsigned long long)key, (unsigned long long)r->pool[ci].key);
		return -1;
	}
	r->pool[ci].key = key;
	r->pool[ci].word = count;
	r->nodes++;
	stack[(*top)++] = ci;
	return 0;
}

static int check_record(const struct rap *r, uint64_t key, uint64_t count, uint64_t prev,
			uint32_t index, char *err, size_t errlen)
{
	const char *bad = NULL;
	unsigned s = key ? key_shift(key) : 0;
	if (!key)
		bad = "key is 0";
	else if (s >= r->universe_bits || s % r->branch_log2)
		bad = "shift is not a multiple of k below the root's";
	else if (key_lo(key) >> r->universe_bits)
		bad = "range lies outside the universe";
	else if (key_lo(key) < key_lo(prev) ||
		 (key_lo(key) == key_lo(prev) && s >= key_shift(prev)))
		bad = "not in pre-order after the previous node";
	else if (count > RAP_MAX_TOTAL)
		bad = "count exceeds RAP_MAX_TOTAL";
	if (bad) {
		set_err(err, errlen, "rap: node %u (key %#llx): %s", index, (unsigned long long)key, bad);
		return -1;
	}
	return 0;
}

static int load_nodes(struct rap *r, const uint8_t *p, const struct header *hd, char *err,
		      size_t errlen)
{
	if (get_u64(p) != r->pool[0].key) {
		set_err(err, errlen, "rap: node 0 (key %#llx) is not the root %#llx",
			(unsigned long long)get_u64(p), (unsigned long long)r->pool[0].key);
		return -1;
	}
	uint64_t sum = get_u64(p + 8), prev = r->pool[0].key;
	if (sum > RAP_MAX_TOTAL) {
		set_err(err, errlen, "rap: node 0: count exceeds RAP_MAX_TOTAL");
		return -1;
	}
	r->pool[0].word = sum;
	uint32_t stack[MAX_DEPTH + 1] = { 0 };
	unsigned top = 1;
	for (uint32_t i = 1; i < hd->node_count; i++) {
		uint64_t key = get_u64(p + 16 * (size_t)i), count = get_u64(p + 16 * (size_t)i + 8);
		if (check_record(r, key, count, prev, i, err, errlen) ||
		    load_node(r, stack, &top, key, count, i, err, errlen))
			return -1;
		sum += count;
		if (sum > hd->n) {
			set_err(err, errlen, "rap: node %u: counts exceed n = %llu", i,
				(unsigned long long)hd->n);
			return -1;
		}
		prev = key;
	}
	if (sum != hd->n) {
		set_err(err, errlen, "rap: counts sum to %llu, header says n = %llu",
			(unsigned long long)sum, (unsigned long long)hd->n);
		return -1;
	}
	return 0;
}

rap_t *rap_deserialize(const void *buf, size_t len, char *err, size_t errlen)
{
	struct header hd;
	if (!buf || parse_header(buf, len, &hd, err, errlen) || check_state(&hd, err, errlen))
		return NULL;
	hd.cfg.node_budget = (size_t)hd.budget;
	struct rap *r = rap_init(&hd.cfg, err, errlen);
	if (!r)
		return NULL;
	r->eps_eff = hd.eps_eff;
	r->thr_per_n = r->eps_eff / r->depth;
	r->thr_floor = hd.thr_floor;
	r->n = hd.n;
	r->w_max = hd.w_max;
	r->next_merge = hd.next_merge;
	r->trees = hd.trees;
	char why[200];
	if (load_nodes(r, (const uint8_t *)buf + RAP_HEADER_SIZE, &hd, err, errlen))
		goto fail;
	if (rap_check_invariant(r, why, sizeof(why))) {
		set_err(err, errlen, "rap: loaded tree fails its invariant: %s", why);
		goto fail;
	}
	return r;
fail:
	rap_free(r);
	return NULL;
}
