/* reorder.c: the bounded reorder buffer (reorder.h), a binary heap over slot indexes. */
#include "reorder.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int reorder_init(struct reorder *r, size_t capacity, size_t size)
{
	memset(r, 0, sizeof(*r));
	r->capacity = capacity;
	r->size = size;
	r->heap = malloc((capacity + 1) * sizeof(*r->heap));
	r->payload = malloc((capacity + 1) * (size ? size : 1));
	r->free_slots = malloc((capacity + 1) * sizeof(*r->free_slots));
	if (!r->heap || !r->payload || !r->free_slots) {
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
	free(r->heap);
	free(r->payload);
	free(r->free_slots);
	memset(r, 0, sizeof(*r));
}

static bool less(const struct reorder_entry *x, const struct reorder_entry *y)
{
	return x->a != y->a ? x->a < y->a : x->b < y->b;
}

void *reorder_push(struct reorder *r, uint64_t a, uint64_t b)
{
	uint32_t slot = r->free_slots[--r->nfree];
	size_t i = r->n++;
	struct reorder_entry e = { a, b, slot };
	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!less(&e, &r->heap[parent]))
			break;
		r->heap[i] = r->heap[parent];
		i = parent;
	}
	r->heap[i] = e;
	return r->payload + (size_t)slot * r->size;
}

const void *reorder_pop(struct reorder *r, uint64_t *a, uint64_t *b)
{
	if (r->n == 0)
		return NULL;
	struct reorder_entry top = r->heap[0], last = r->heap[--r->n];
	size_t i = 0;
	for (;;) {
		size_t l = 2 * i + 1, m = l;
		if (l >= r->n)
			break;
		if (l + 1 < r->n && less(&r->heap[l + 1], &r->heap[l]))
			m = l + 1;
		if (!less(&r->heap[m], &last))
			break;
		r->heap[i] = r->heap[m];
		i = m;
	}
	if (r->n)
		r->heap[i] = last;
	r->free_slots[r->nfree++] = top.slot;
	*a = top.a;
	*b = top.b;
	return r->payload + (size_t)top.slot * r->size;
}
