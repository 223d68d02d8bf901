/* reorder.h: a bounded reorder buffer of at most `capacity` records keyed by a pair (a, b), that
 * turns a stream which is almost in key order (sorted runs interleaved by their writers, each
 * record at most `capacity` places late) into one in key order, in memory that does not grow with
 * the stream. Whether a window is wide enough for a file is learned by running a buffer of that
 * capacity over the file's keys once and checking that the keys come out in order: reading the
 * file again through a buffer of the same capacity then gives exactly its records in key order.
 *
 * Every pop gives the least record held, whatever the inside: the records are kept as a few
 * sorted lanes (a record goes to the end of a lane whose last key is not greater; the least is
 * among the lanes' heads), which costs O(1) a record for the few interleaved runs the recordings
 * hold; a stream with more disorder than REORDER_LANES lanes hold turns the buffer into a binary
 * heap (O(log capacity) a record) for the rest of its life. */
#ifndef FAULTLINE_TOOLS_REORDER_H
#define FAULTLINE_TOOLS_REORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REORDER_LANES 16

struct reorder_entry {
	uint64_t a, b;     /* the key: a, then b */
	uint32_t slot;     /* where its record is in the payload array */
};

struct reorder_lane {
	uint32_t head, tail; /* slots: the lane's least and greatest record (linked by next[]) */
};

struct reorder {
	size_t n, capacity;
	unsigned char *payload;   /* capacity + 1 records of `size` bytes */
	size_t size;
	uint32_t *free_slots;
	size_t nfree;
	/* lanes (while heap is NULL) */
	uint64_t *key_a, *key_b;  /* per slot: its record's key */
	uint32_t *next;           /* per slot: the next slot of its lane */
	struct reorder_lane lanes[REORDER_LANES];
	unsigned nlanes;
	/* the heap, once the lanes did not suffice */
	struct reorder_entry *heap;
};

/* Room for CAPACITY records of SIZE bytes (plus one: a record is pushed before the least is
 * popped). 0, or -1 (ENOMEM). */
int reorder_init(struct reorder *r, size_t capacity, size_t size);
void reorder_free(struct reorder *r);

/* Whether another record may be pushed before one must be popped (n <= capacity). */
static inline bool reorder_has_room(const struct reorder *r)
{
	return r->n <= r->capacity;
}

/* Adds a record with key (a, b): returns where to write its SIZE bytes (valid until the next
 * push or pop), or NULL when memory ran out (for the heap the buffer turns into). The buffer must
 * have room. */
void *reorder_push(struct reorder *r, uint64_t a, uint64_t b);

/* Removes the record with the least key; returns it (valid until the next push) with its key.
 * NULL when empty. */
const void *reorder_pop(struct reorder *r, uint64_t *a, uint64_t *b);

#endif
