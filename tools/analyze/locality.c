/* locality.c: spatial and temporal locality scores of one group's page access stream.
 *
 * Definitions (Weinberg, McCracken, Strohmaier, Snavely, SC'05, as reconstructed in
 * docs/design.md, "Ranges and locality", with the unit changed from 8-byte words to pages):
 *
 *   Units.   Accesses are page numbers (address >> page shift), in the order the group made them.
 *            Strides and reuse distances are counted in pages.
 *
 *   Spatial. For access t, stride_t = min over j = 1..W of |page_t − page_{t−j}| (only the j < t
 *            that exist: the first access has no stride and is not a sample). The window W is in
 *            accesses of this group (default 32); the whole window is scanned (it stops early only on
 *            stride 0, which nothing beats).
 *            Spatial = Σ_samples w(stride) / #samples, w(k) = 1/k for 1 ≤ k ≤ B, 0 for k > B
 *            (B = stride_bins, default 128: the bounded stride histogram, f_i for i = 1..B, of the
 *            reconstruction; its value for uniform random pages over 2^14, 0.0195, is the notes').
 *            So a unit-stride scan scores 1, stride 2 scores 0.5, random pages ≈ 0.
 *            Stride 0 (page_t seen within the window): EXCLUDE (default) drops the access from the
 *            samples; ZERO counts it with weight 0.
 *
 *   Temporal. Reuse distance d_t = number of distinct *other* pages accessed since the previous
 *            access to page_t ("a b c b d d a": the last a has d = 3); Mattson depth s = d + 1
 *            (an LRU memory of C pages hits iff s ≤ C). With N = 2^L (L = log2_n, default 17, so
 *            N = 131072 pages = 512 MiB of 4 KiB pages):
 *              weight(s) = 1            if s ≤ 2                  (bin 0)
 *                          (L − i) / L  if 2^i < s ≤ 2^(i+1), i = 1 .. L−1   (bin i)
 *                          0            if s > N, or the access is cold (first access to the page)
 *            Temporal = Σ_accesses weight / #accesses — every access in the denominator, cold ones
 *            included. This is the SC'05 form Σ_i (reuse_{2^(i+1)} − reuse_{2^i})·(L − i)/L with
 *            the d ≤ 1 edge fixed as the notes fix it. Closed forms (steady state): a cyclic loop
 *            over 2^m pages scores (L − m + 1)/L (m ≥ 1, ≤ L; 0 for m > L); uniform random pages
 *            over n = 2^m score 1/n + Σ_{i=0}^{min(m,L)−1} (2^i/n)·(L − i)/L (d is uniform on
 *            0..n−1).
 *
 * Data structures (Bennett–Kruskal / Olken, Fenwick variant):
 *   - time slots 0..C−1: access t occupies slot t; page_at[slot] is its page; a Fenwick tree over
 *     the slots counts the *live* ones: a slot is live iff it holds its page's latest access.
 *   - a hash map page → slot of its latest access (open addressing, linear probing).
 *   Access to page p at slot t with previous slot s: d = live slots after s = live − prefix(s + 1);
 *   clear s, set t. O(log C).
 *   - Bounded memory: only the N most recently used distinct pages are kept (LRU by slot order).
 *     A page not among them has at least N other distinct pages since its last access, so its
 *     reuse weighs 0 exactly like a cold access: forgetting it changes no score. So live ≤ N.
 *   - When the slots run out (t = C), live slots are renumbered 0..live−1 in order and the tree
 *     is rebuilt in O(C); C doubles when more than half were live, so C ≤ 2N and compaction costs
 *     O(1) amortized per access.
 *   - A bitmap mirrors the liveness, to find the oldest live slot and walk the live ones without
 *     hash lookups.
 *   Memory: hash ≤ 2N entries × 16 B, page_at + tree + bitmap ≤ 2N × 12.125 B: ≤ 56.25 B × N,
 *   growing from ~1 KiB. */
#include "locality.h"

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_WINDOW 32
#define DEFAULT_STRIDE_BINS 128
#define DEFAULT_LOG2_N 17
#define MAX_WINDOW 1024
#define INITIAL_SLOTS 16     /* time slots: a power of two */
#define INITIAL_HASH 32      /* hash slots: a power of two */
#define EMPTY_SLOT UINT32_MAX

struct page_entry {
	uint64_t page;
	uint32_t slot; /* EMPTY_SLOT: free entry */
};

struct locality {
	struct locality_params params;
	uint64_t n_max; /* N = 2^L: most distinct pages tracked */

	/* temporal: time slots, Fenwick tree, page → slot */
	uint32_t slots;     /* C: capacity in time slots (power of two) */
	uint32_t now;       /* next slot to use; = slots: compact before the next access */
	uint32_t oldest;    /* every slot below it is dead */
	uint32_t live;      /* live slots = distinct pages tracked */
	uint64_t *page_at;  /* [slots] */
	uint32_t *tree;     /* [slots + 1], 1-based Fenwick tree of liveness */
	uint64_t *live_bits;/* [slots / 64], the same liveness as a bitmap: finds the oldest live slot
			       and walks live slots without hash lookups */
	struct page_entry *table;
	uint32_t table_cap; /* power of two, at least twice live */

	/* counters */
	uint64_t accesses, cold;
	uint64_t reuse_bins[LOCALITY_MAX_LOG2_N];
	uint64_t spatial_samples, stride_one, stride_zero;
	double spatial_sum;

	/* spatial: the last min(accesses, W) pages, a ring */
	uint32_t ring_next;
	uint64_t ring[]; /* [window] */
};

void locality_params_default(struct locality_params *p)
{
	p->window = DEFAULT_WINDOW;
	p->stride_bins = DEFAULT_STRIDE_BINS;
	p->log2_n = DEFAULT_LOG2_N;
	p->stride0 = LOCALITY_STRIDE0_EXCLUDE;
}

/* --- Fenwick tree over time slots (index = slot + 1) --- */

static void tree_add(struct locality *loc, uint32_t slot, int delta)
{
	for (uint32_t i = slot + 1; i <= loc->slots; i += i & -i)
		loc->tree[i] += (uint32_t)delta;
}

/* Live slots in [0, end). */
static uint32_t tree_prefix(const struct locality *loc, uint32_t end)
{
	uint32_t sum = 0;
	for (uint32_t i = end; i > 0; i -= i & -i)
		sum += loc->tree[i];
	return sum;
}

/* Rebuilds the tree with slots [0, live) live, in O(slots). */
static void tree_rebuild(struct locality *loc)
{
	memset(loc->tree, 0, ((size_t)loc->slots + 1) * sizeof loc->tree[0]);
	for (uint32_t i = 1; i <= loc->live; i++)
		loc->tree[i] = 1;
	for (uint32_t i = 1; i <= loc->slots; i++) {
		uint32_t parent = i + (i & -i);
		if (parent <= loc->slots)
			loc->tree[parent] += loc->tree[i];
	}
}

/* --- hash map page → slot (linear probing, backward-shift deletion) --- */

static uint32_t page_hash(uint64_t page, uint32_t mask)
{
	page ^= page >> 33; /* murmur3 finaliser */
	page *= 0xff51afd7ed558ccdull;
	page ^= page >> 33;
	page *= 0xc4ceb9fe1a85ec53ull;
	page ^= page >> 33;
	return (uint32_t)page & mask;
}

/* The entry of PAGE, or the free entry where it would go. */
static struct page_entry *table_find(const struct locality *loc, uint64_t page)
{
	uint32_t mask = loc->table_cap - 1;
	for (uint32_t i = page_hash(page, mask);; i = (i + 1) & mask) {
		struct page_entry *e = &loc->table[i];
		if (e->slot == EMPTY_SLOT || e->page == page)
			return e;
	}
}

static int table_grow(struct locality *loc)
{
	uint32_t cap = loc->table_cap * 2;
	struct page_entry *table = malloc((size_t)cap * sizeof *table);
	if (!table)
		return -1;
	for (uint32_t i = 0; i < cap; i++)
		table[i].slot = EMPTY_SLOT;
	struct page_entry *old = loc->table;
	uint32_t old_cap = loc->table_cap;
	loc->table = table;
	loc->table_cap = cap;
	for (uint32_t i = 0; i < old_cap; i++)
		if (old[i].slot != EMPTY_SLOT)
			*table_find(loc, old[i].page) = old[i];
	free(old);
	return 0;
}

static void table_remove(struct locality *loc, struct page_entry *e)
{
	uint32_t mask = loc->table_cap - 1, hole = (uint32_t)(e - loc->table);
	e->slot = EMPTY_SLOT;
	for (uint32_t i = (hole + 1) & mask; loc->table[i].slot != EMPTY_SLOT; i = (i + 1) & mask) {
		uint32_t home = page_hash(loc->table[i].page, mask);
		/* move entry i into the hole unless its home lies cyclically in (hole, i] */
		bool stays = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
		if (!stays) {
			loc->table[hole] = loc->table[i];
			loc->table[i].slot = EMPTY_SLOT;
			hole = i;
		}
	}
}

static size_t bitmap_words(uint32_t slots)
{
	return (slots + 63) / 64;
}

static inline bool slot_is_live(const struct locality *loc, uint32_t slot)
{
	return loc->live_bits[slot / 64] >> (slot % 64) & 1;
}

static void slot_set_live(struct locality *loc, uint32_t slot, bool live)
{
	if (live)
		loc->live_bits[slot / 64] |= 1ull << (slot % 64);
	else
		loc->live_bits[slot / 64] &= ~(1ull << (slot % 64));
}

/* The first live slot at or after FROM (there is one below loc->now). */
static uint32_t next_live(const struct locality *loc, uint32_t from)
{
	uint32_t word = from / 64;
	uint64_t bits = loc->live_bits[word] & (~0ull << (from % 64));
	while (bits == 0)
		bits = loc->live_bits[++word];
	return word * 64 + (uint32_t)__builtin_ctzll(bits);
}

/* --- time slots --- */

/* Renumbers the live slots 0..live−1 (order kept), doubling the capacity if more than half are
 * live. Called when every slot has been used. */
static int slots_compact(struct locality *loc)
{
	uint32_t slots = loc->slots;
	if ((uint64_t)loc->live * 2 > slots) {
		slots *= 2;
		uint64_t *page_at = realloc(loc->page_at, (size_t)slots * sizeof *page_at);
		if (!page_at)
			return -1;
		loc->page_at = page_at;
		uint32_t *tree = realloc(loc->tree, ((size_t)slots + 1) * sizeof *tree);
		if (!tree)
			return -1; /* page_at merely larger: still consistent */
		loc->tree = tree;
		uint64_t *bits = realloc(loc->live_bits, bitmap_words(slots) * sizeof *bits);
		if (!bits)
			return -1; /* likewise */
		loc->live_bits = bits;
	}
	uint32_t next = 0;
	for (uint32_t s = loc->oldest; next < loc->live; s++) {
		s = next_live(loc, s);
		struct page_entry *e = table_find(loc, loc->page_at[s]);
		assert(e->slot == s && s < loc->now);
		loc->page_at[next] = e->page; /* next ≤ s: in place */
		e->slot = next++;
	}
	memset(loc->live_bits, 0, bitmap_words(slots) * sizeof *loc->live_bits);
	for (uint32_t s = 0; s < next; s++)
		slot_set_live(loc, s, true);
	loc->slots = slots;
	loc->now = next;
	loc->oldest = 0;
	tree_rebuild(loc);
	return 0;
}

/* Forgets the least recently used page (to make room for a new one when N are tracked). */
static void evict_oldest(struct locality *loc)
{
	loc->oldest = next_live(loc, loc->oldest);
	table_remove(loc, table_find(loc, loc->page_at[loc->oldest]));
	tree_add(loc, loc->oldest, -1);
	slot_set_live(loc, loc->oldest, false);
	loc->oldest++;
	loc->live--;
}

/* --- scoring --- */

static unsigned reuse_bin(uint64_t depth) /* depth ≥ 1 */
{
	return depth <= 2 ? 0 : 63 - (unsigned)__builtin_clzll(depth - 1);
}

double locality_reuse_weight(const struct locality_params *params, uint64_t depth)
{
	unsigned L = params->log2_n;
	if (depth == 0 || depth > (1ull << L))
		return 0.0;
	unsigned bin = reuse_bin(depth);
	return bin == 0 ? 1.0 : (double)(L - bin) / L;
}

static void spatial_update(struct locality *loc, uint64_t page)
{
	uint64_t filled = loc->accesses < loc->params.window ? loc->accesses : loc->params.window;
	if (filled > 0) {
		uint64_t stride = UINT64_MAX;
		for (uint64_t j = 0; j < filled && stride != 0; j++) { /* the whole window, unless 0 is found */
			uint64_t q = loc->ring[j];
			uint64_t diff = page > q ? page - q : q - page;
			if (diff < stride)
				stride = diff;
		}
		if (stride == 0) {
			loc->stride_zero++;
			if (loc->params.stride0 == LOCALITY_STRIDE0_ZERO)
				loc->spatial_samples++;
		} else {
			loc->spatial_samples++;
			loc->stride_one += stride == 1;
			if (stride <= loc->params.stride_bins)
				loc->spatial_sum += 1.0 / (double)stride;
		}
	}
	loc->ring[loc->ring_next] = page;
	loc->ring_next = loc->ring_next + 1 == loc->params.window ? 0 : loc->ring_next + 1;
}

int locality_access(struct locality *loc, uint64_t page)
{
	/* Everything that can fail comes before the first change. */
	if (loc->now == loc->slots && slots_compact(loc) != 0)
		goto nomem;
	struct page_entry *e = table_find(loc, page);
	if (e->slot != EMPTY_SLOT) {
		uint32_t previous = e->slot;
		assert(slot_is_live(loc, previous) && loc->page_at[previous] == page);
		uint64_t distance = loc->live - tree_prefix(loc, previous + 1); /* live slots after it */
		uint64_t depth = distance + 1;
		assert(depth <= loc->n_max);
		loc->reuse_bins[reuse_bin(depth)]++;
		tree_add(loc, previous, -1);
		slot_set_live(loc, previous, false);
		loc->live--;
	} else {
		if (loc->live == loc->n_max) {
			evict_oldest(loc); /* the table already holds N pages at load ≤ 1/2 */
		} else if ((uint64_t)(loc->live + 1) * 2 > loc->table_cap && table_grow(loc) != 0) {
			goto nomem;
		}
		e = table_find(loc, page); /* eviction and growth move entries */
		e->page = page;
		loc->cold++;
	}
	e->slot = loc->now;
	loc->page_at[loc->now] = page;
	tree_add(loc, loc->now, +1);
	slot_set_live(loc, loc->now, true);
	loc->now++;
	loc->live++;
	assert(loc->live <= loc->n_max && (uint64_t)loc->live * 2 <= loc->table_cap);

	spatial_update(loc, page);
	loc->accesses++;
	return 0;
nomem:
	errno = ENOMEM;
	return -1;
}

void locality_get_scores(const struct locality *loc, struct locality_scores *out)
{
	memset(out, 0, sizeof *out);
	unsigned L = loc->params.log2_n;
	double temporal_sum = 0;
	for (unsigned i = 0; i < L; i++) {
		out->reuse_bins[i] = loc->reuse_bins[i];
		temporal_sum += (double)loc->reuse_bins[i] * (i == 0 ? 1.0 : (double)(L - i) / L);
	}
	out->accesses = loc->accesses;
	out->cold = loc->cold;
	out->temporal_sum = temporal_sum;
	out->temporal = loc->accesses ? temporal_sum / (double)loc->accesses : 0.0;
	out->spatial_samples = loc->spatial_samples;
	out->spatial_sum = loc->spatial_sum;
	out->spatial = loc->spatial_samples ? loc->spatial_sum / (double)loc->spatial_samples : 0.0;
	out->stride_one = loc->stride_one;
	out->stride_zero = loc->stride_zero;
	/* Each sample adds at most 1 (stride ≥ 1 → 1/stride ≤ 1), each access weight ≤ 1. */
	assert(out->spatial >= 0.0 && out->spatial <= 1.0 + 1e-12);
	assert(out->temporal >= 0.0 && out->temporal <= 1.0 + 1e-12);
	if (out->spatial > 1.0)
		out->spatial = 1.0;
	if (out->temporal > 1.0)
		out->temporal = 1.0;
}

struct locality *locality_new(const struct locality_params *params)
{
	struct locality_params p;
	if (params)
		p = *params;
	else
		locality_params_default(&p);
	if (p.window < 1 || p.window > MAX_WINDOW || p.stride_bins < 1 || p.log2_n < 1 ||
	    p.log2_n > LOCALITY_MAX_LOG2_N ||
	    (p.stride0 != LOCALITY_STRIDE0_EXCLUDE && p.stride0 != LOCALITY_STRIDE0_ZERO)) {
		errno = EINVAL;
		return NULL;
	}
	struct locality *loc = calloc(1, sizeof *loc + p.window * sizeof loc->ring[0]);
	if (!loc) {
		errno = ENOMEM;
		return NULL;
	}
	loc->params = p;
	loc->n_max = 1ull << p.log2_n;
	loc->slots = INITIAL_SLOTS;
	loc->table_cap = INITIAL_HASH;
	loc->page_at = malloc(INITIAL_SLOTS * sizeof *loc->page_at);
	loc->tree = calloc(INITIAL_SLOTS + 1, sizeof *loc->tree);
	loc->table = malloc(INITIAL_HASH * sizeof *loc->table);
	loc->live_bits = calloc(bitmap_words(INITIAL_SLOTS), sizeof *loc->live_bits);
	if (!loc->page_at || !loc->tree || !loc->table || !loc->live_bits) {
		locality_free(loc);
		errno = ENOMEM;
		return NULL;
	}
	for (uint32_t i = 0; i < INITIAL_HASH; i++)
		loc->table[i].slot = EMPTY_SLOT;
	return loc;
}

size_t locality_memory(const struct locality *loc)
{
	return sizeof *loc + loc->params.window * sizeof loc->ring[0] + (size_t)loc->slots * sizeof *loc->page_at +
	       ((size_t)loc->slots + 1) * sizeof *loc->tree + (size_t)loc->table_cap * sizeof *loc->table +
	       bitmap_words(loc->slots) * sizeof *loc->live_bits;
}

void locality_free(struct locality *loc)
{
	if (!loc)
		return;
	free(loc->page_at);
	free(loc->tree);
	free(loc->table);
	free(loc->live_bits);
	free(loc);
}
