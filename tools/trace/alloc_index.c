/* alloc_index.c: the allocation sweep (trace_reader.h, fl_alloc_sweep_*): the live objects of one
 * process at a moving time, as non-overlapping pieces in a treap (a binary search tree on start,
 * heap-ordered on random priorities) whose nodes live in one array addressed by index. */
#include "trace_reader.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* One live object piece of an allocation sweep (see trace_reader.h). */
struct fl_alloc_piece {
	uint64_t start, end;        /* [start, end), non-empty, disjoint from every other piece */
	uint32_t alloc;             /* index into proc->allocs of the MALLOC/MMAP record */
	uint32_t left, right;       /* children (0 = none); left keys < start < right keys */
	uint32_t priority;          /* a parent's priority is >= its children's */
};
void fl_alloc_sweep_init(struct fl_alloc_sweep *sweep, const struct fl_process *proc)
{
	memset(sweep, 0, sizeof(*sweep));
	sweep->proc = proc;
	sweep->rng = 0x9e3779b97f4a7c15ull;
}

void fl_alloc_sweep_free(struct fl_alloc_sweep *sweep)
{
	free(sweep->nodes);
	sweep->nodes = NULL;
	sweep->nnodes = sweep->cap = sweep->free_list = sweep->root = sweep->live = sweep->hint = 0;
}

/* Makes room for N more nodes, so that no operation runs out of memory halfway through. */
static int sweep_reserve(struct fl_alloc_sweep *s, uint32_t n)
{
	uint32_t avail = s->cap - s->nnodes, on_free_list = 0;
	for (uint32_t i = s->free_list; i && on_free_list < n; i = s->nodes[i].left)
		on_free_list++;
	if (avail + on_free_list >= n)
		return 0;
	size_t cap = s->cap ? (size_t)s->cap * 2 : 64;
	if (cap < (size_t)s->nnodes + n)
		cap = (size_t)s->nnodes + n;
	if (cap > UINT32_MAX) {
		errno = ENOMEM;
		return -1;
	}
	struct fl_alloc_piece *grown = realloc(s->nodes, cap * sizeof(*grown));
	if (!grown)
		return -1;
	s->nodes = grown;
	if (s->nnodes == 0)
		s->nnodes = 1; /* node 0 stands for "none" */
	s->cap = (uint32_t)cap;
	return 0;
}

static uint32_t sweep_new_node(struct fl_alloc_sweep *s, uint64_t start, uint64_t end, uint32_t alloc)
{
	uint32_t n;
	if (s->free_list) {
		n = s->free_list;
		s->free_list = s->nodes[n].left;
	} else {
		n = s->nnodes++; /* sweep_reserve made room */
	}
	/* xorshift64: a fixed seed keeps runs reproducible. */
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	s->nodes[n] = (struct fl_alloc_piece){ start, end, alloc, 0, 0, (uint32_t)(s->rng >> 32) };
	s->live++;
	return n;
}

/* Returns a subtree's nodes to the free list. */
static void sweep_free_tree(struct fl_alloc_sweep *s, uint32_t t)
{
	while (t) {
		uint32_t right = s->nodes[t].right;
		sweep_free_tree(s, s->nodes[t].left);
		s->nodes[t].left = s->free_list;
		s->free_list = t;
		s->live--;
		t = right;
	}
}

/* Splits tree T into *l (starts < key) and *r (starts >= key). */
static void sweep_split(struct fl_alloc_sweep *s, uint32_t t, uint64_t key, uint32_t *l, uint32_t *r)
{
	if (!t) {
		*l = *r = 0;
	} else if (s->nodes[t].start < key) {
		sweep_split(s, s->nodes[t].right, key, &s->nodes[t].right, r);
		*l = t;
	} else {
		sweep_split(s, s->nodes[t].left, key, l, &s->nodes[t].left);
		*r = t;
	}
}

/* Joins trees L and R where every start in L is below every start in R. */
static uint32_t sweep_merge(struct fl_alloc_sweep *s, uint32_t l, uint32_t r)
{
	if (!l || !r)
		return l ? l : r;
	if (s->nodes[l].priority >= s->nodes[r].priority) {
		s->nodes[l].right = sweep_merge(s, s->nodes[l].right, r);
		return l;
	}
	s->nodes[r].left = sweep_merge(s, l, s->nodes[r].left);
	return r;
}

static uint32_t sweep_rightmost(const struct fl_alloc_sweep *s, uint32_t t)
{
	while (t && s->nodes[t].right)
		t = s->nodes[t].right;
	return t;
}

/* Removes [lo, hi) (lo < hi) from every live piece: pieces inside go, a piece straddling an end is
 * trimmed, a piece covering the whole range is split in two. Needs 1 node reserved. */
static void sweep_remove_range(struct fl_alloc_sweep *s, uint64_t lo, uint64_t hi)
{
	uint32_t left, middle, right, rest, tail = 0;

	sweep_split(s, s->root, lo, &left, &rest);
	sweep_split(s, rest, hi, &middle, &right);
	uint32_t p = sweep_rightmost(s, left);
	if (p && s->nodes[p].end > lo) {          /* starts before lo, reaches into the range */
		uint64_t end = s->nodes[p].end;
		s->nodes[p].end = lo;
		if (end > hi)                      /* covers it: the part after hi lives on */
			tail = sweep_new_node(s, hi, end, s->nodes[p].alloc);
	}
	p = sweep_rightmost(s, middle);
	if (p && s->nodes[p].end > hi) {          /* starts inside, reaches past hi */
		uint64_t end = s->nodes[p].end;
		uint32_t alloc = s->nodes[p].alloc;
		sweep_free_tree(s, middle);
		middle = 0;
		tail = sweep_new_node(s, hi, end, alloc);
	}
	sweep_free_tree(s, middle);
	s->root = sweep_merge(s, sweep_merge(s, left, tail), right);
}

/* The piece with the greatest start below KEY, or 0. */
static uint32_t sweep_below(const struct fl_alloc_sweep *s, uint64_t key)
{
	uint32_t t = s->root, best = 0;
	while (t) {
		if (s->nodes[t].start < key) {
			best = t;
			t = s->nodes[t].right;
		} else {
			t = s->nodes[t].left;
		}
	}
	return best;
}

/* True when some live piece overlaps [lo, hi) (lo < hi): the last piece starting below hi
 * reaches past lo. */
static bool sweep_overlaps(const struct fl_alloc_sweep *s, uint64_t lo, uint64_t hi)
{
	uint32_t p = sweep_below(s, hi);
	return p && s->nodes[p].end > lo;
}

/* Inserts node N, whose range overlaps no live piece: down to where its priority belongs, then
 * the subtree there is split around it (one descent, no rebuilding above). */
static void sweep_insert(struct fl_alloc_sweep *s, uint32_t n)
{
	uint32_t *link = &s->root; /* points into nodes[]: nothing below reallocates it */
	while (*link && s->nodes[*link].priority >= s->nodes[n].priority)
		link = s->nodes[n].start < s->nodes[*link].start ? &s->nodes[*link].left : &s->nodes[*link].right;
	sweep_split(s, *link, s->nodes[n].start, &s->nodes[n].left, &s->nodes[n].right);
	*link = n;
}

/* Removes the piece that starts exactly at START, if any. */
static void sweep_erase(struct fl_alloc_sweep *s, uint64_t start)
{
	uint32_t *link = &s->root;
	while (*link && s->nodes[*link].start != start)
		link = start < s->nodes[*link].start ? &s->nodes[*link].left : &s->nodes[*link].right;
	uint32_t n = *link;
	if (!n)
		return;
	*link = sweep_merge(s, s->nodes[n].left, s->nodes[n].right);
	s->nodes[n].left = s->free_list;
	s->free_list = n;
	s->live--;
}

/* Applies one allocation event (index I of proc->allocs). */
static int sweep_apply(struct fl_alloc_sweep *s, uint32_t i)
{
	const struct fl_alloc_record *a = &s->proc->allocs[i];

	if (sweep_reserve(s, 2) < 0)
		return -1;
	s->hint = 0; /* the piece it named may change or go */
	switch (a->kind) {
	case FL_ALLOC_MALLOC:
	case FL_ALLOC_MMAP:
		if (a->size == 0)
			return 0;
		if (sweep_overlaps(s, a->addr, a->addr + a->size))
			sweep_remove_range(s, a->addr, a->addr + a->size);
		sweep_insert(s, sweep_new_node(s, a->addr, a->addr + a->size, i));
		return 0;
	case FL_ALLOC_FREE:
		sweep_erase(s, a->addr);
		return 0;
	case FL_ALLOC_MUNMAP:
		if (a->size && sweep_overlaps(s, a->addr, a->addr + a->size))
			sweep_remove_range(s, a->addr, a->addr + a->size);
		return 0;
	default:
		return 0; /* the loader rejected other kinds */
	}
}

int fl_alloc_sweep_advance(struct fl_alloc_sweep *sweep, uint64_t time_ns)
{
	const struct fl_process *proc = sweep->proc;

	while (sweep->next_event < proc->nallocs && proc->allocs[sweep->next_event].time_ns <= time_ns) {
		if (sweep_apply(sweep, (uint32_t)sweep->next_event) < 0)
			return -1;
		sweep->next_event++;
	}
	return 0;
}

uint32_t fl_alloc_sweep_find(struct fl_alloc_sweep *sweep, uint64_t addr)
{
	uint32_t hint = sweep->hint;
	if (hint && sweep->nodes[hint].start <= addr && addr < sweep->nodes[hint].end)
		return sweep->nodes[hint].alloc;
	uint32_t best = addr == UINT64_MAX ? 0 : sweep_below(sweep, addr + 1); /* greatest start <= addr */
	if (!best || addr >= sweep->nodes[best].end)
		return FL_NONE;
	sweep->hint = best;
	return sweep->nodes[best].alloc;
}

