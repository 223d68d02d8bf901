/* reorder.c: the bounded reorder buffer (reorder.h): sorted lanes linked through the slots, or a
 * binary heap over slot indexes once the lanes do not suffice. */
#include "reorder.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int reorder_init(struct reorder *r, size_t capacity, size_t size)
{
	memset(r, 0, sizeof(*r));
	r->capacity = capacity;
	r->size = size;
	r->payload = malloc((capacity + 1) * (size ? size : 1));
	r->free_slots = malloc((capacity + 1) * sizeof(*r->free_slots));
	r->key_a = malloc((capacity + 1) * sizeof(*r->key_a));
	r->key_b = malloc((capacity + 1) * sizeof(*r->key_b));
	r->next = malloc((capacity + 1) * sizeof(*r->next));
	if (!r->payload || !r->free_slots || !r->key_a || !r->key_b || !r->next) {
		reorder_free(r);
		errno = ENOMEM;
		return -1;
	}
	for (size_t i = 0; i <= capacity; i++)
		r->free_slots[i] = (uint32_t)(capacity - i);
	r->nfree = capacity + 1;
	return 0;
}

void reorder_free(struct reorder *r)
{
	free(r->payload);
	free(r->free_slots);
	free(r->key_a);
	free(r->key_b);
	free(r->next);
	free(r->heap);
	memset(r, 0, sizeof(*r));
}

static bool less(uint64_t a1, uint64_t b1, uint64_t a2, uint64_t b2)
{
	return a1 != a2 ? a1 < a2 : b1 < b2;
}

/* ----------------------------------------------------------------- heap */

static void heap_add(struct reorder *r, struct reorder_entry e, size_t i)
{
	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!less(e.a, e.b, r->heap[parent].a, r->heap[parent].b))
			break;
		r->heap[i] = r->heap[parent];
		i = parent;
	}
	r->heap[i] = e;
}

/* Moves every lane's records into a heap. -1 on ENOMEM. */
static int become_heap(struct reorder *r)
{
	r->heap = malloc((r->capacity + 1) * sizeof(*r->heap));
	if (!r->heap)
		return -1;
	size_t n = 0;
	for (unsigned l = 0; l < r->nlanes; l++)
		for (uint32_t s = r->lanes[l].head;; s = r->next[s]) {
			heap_add(r, (struct reorder_entry){ r->key_a[s], r->key_b[s], s }, n++);
			if (s == r->lanes[l].tail)
				break;
		}
	r->nlanes = 0;
	return 0;
}

static const void *heap_pop(struct reorder *r, uint64_t *a, uint64_t *b)
{
	struct reorder_entry top = r->heap[0], last = r->heap[r->n - 1];
	size_t i = 0, n = --r->n;
	for (;;) {
		size_t l = 2 * i + 1, m = l;
		if (l >= n)
			break;
		if (l + 1 < n && less(r->heap[l + 1].a, r->heap[l + 1].b, r->heap[l].a, r->heap[l].b))
			m = l + 1;
		if (!less(r->heap[m].a, r->heap[m].b, last.a, last.b))
			break;
		r->heap[i] = r->heap[m];
		i = m;
	}
	if (n)
		r->heap[i] = last;
	r->free_slots[r->nfree++] = top.slot;
	*a = top.a;
	*b = top.b;
	return r->payload + (size_t)top.slot * r->size;
}

/* ----------------------------------------------------------------- lanes */

/* The lane whose last key is the greatest not above (a, b); REORDER_LANES when none. */
static unsigned lane_for(const struct reorder *r, uint64_t a, uint64_t b)
{
	unsigned best = REORDER_LANES;
	for (unsigned l = 0; l < r->nlanes; l++) {
		uint32_t t = r->lanes[l].tail;
		if (less(a, b, r->key_a[t], r->key_b[t]))
			continue;
		if (best == REORDER_LANES ||
		    less(r->key_a[r->lanes[best].tail], r->key_b[r->lanes[best].tail], r->key_a[t], r->key_b[t]))
			best = l;
	}
	return best;
}

void *reorder_push(struct reorder *r, uint64_t a, uint64_t b)
{
	uint32_t slot = r->free_slots[--r->nfree];
	r->n++;
	if (r->heap) {
		heap_add(r, (struct reorder_entry){ a, b, slot }, r->n - 1);
		return r->payload + (size_t)slot * r->size;
	}
	r->key_a[slot] = a;
	r->key_b[slot] = b;
	/* the tightest fit (patience sorting): as many lanes as interleaved runs */
	unsigned l = lane_for(r, a, b);
	if (l == REORDER_LANES && r->nlanes < REORDER_LANES) {
		l = r->nlanes++;
		r->lanes[l].head = slot;
	} else if (l == REORDER_LANES) {
		r->n--;
		r->nfree++; /* not pushed yet: the heap takes it */
		if (become_heap(r) < 0)
			return NULL;
		return reorder_push(r, a, b);
	} else {
		r->next[r->lanes[l].tail] = slot;
	}
	r->lanes[l].tail = slot;
	return r->payload + (size_t)slot * r->size;
}

const void *reorder_pop(struct reorder *r, uint64_t *a, uint64_t *b)
{
	if (r->n == 0)
		return NULL;
	if (r->heap)
		return heap_pop(r, a, b);
	unsigned best = 0;
	for (unsigned l = 1; l < r->nlanes; l++) {
		uint32_t h = r->lanes[l].head, bh = r->lanes[best].head;
		if (less(r->key_a[h], r->key_b[h], r->key_a[bh], r->key_b[bh]))
			best = l;
	}
	uint32_t slot = r->lanes[best].head;
	if (slot == r->lanes[best].tail) { /* the lane is empty now */
		r->lanes[best] = r->lanes[--r->nlanes];
	} else {
		r->lanes[best].head = r->next[slot];
	}
	r->n--;
	r->free_slots[r->nfree++] = slot;
	*a = r->key_a[slot];
	*b = r->key_b[slot];
	return r->payload + (size_t)slot * r->size;
}
