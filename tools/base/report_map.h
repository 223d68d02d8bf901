/* report_map.h: a hash map from a pair of 64-bit keys to a 64-bit value, for the counting the report
 * and export verbs do per fault (row of a fault, faults per (row, stack), live allocations by address).
 *
 * Open addressing with linear probing; the capacity is a power of two and the table is kept at most
 * half full, so a lookup probes O(1) slots on average. Keys are hashed with the splitmix64 finaliser,
 * so dense or patterned keys (indexes, aligned addresses) spread well. Entries are never removed.
 *
 *     struct report_map map = REPORT_MAP_INIT;
 *     uint64_t *count = report_map_add(&map, row, stack, NULL);
 *     if (!count) ... out of memory
 *     (*count)++;
 *     report_map_free(&map); */
#ifndef FAULTLINE_TOOLS_REPORT_MAP_H
#define FAULTLINE_TOOLS_REPORT_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct report_map_slot {
	uint64_t a, b;     /* the key */
	uint64_t value;    /* 0 when the entry was added */
	bool used;
};

struct report_map {
	struct report_map_slot *slots;
	size_t cap;        /* 0 or a power of two */
	size_t count;      /* used slots; count * 2 <= cap */
};

#define REPORT_MAP_INIT { NULL, 0, 0 }

/* The value of key (a, b), added with value 0 when absent (*added tells which, when not NULL).
 * NULL with errno ENOMEM when the table cannot grow. The pointer is valid until the next add. */
uint64_t *report_map_add(struct report_map *map, uint64_t a, uint64_t b, bool *added);

/* The value of key (a, b), or NULL when absent. */
uint64_t *report_map_find(const struct report_map *map, uint64_t a, uint64_t b);

/* Walks the entries: for (size_t i = 0; (slot = report_map_next(map, &i)) != NULL; ) ... */
const struct report_map_slot *report_map_next(const struct report_map *map, size_t *index);

void report_map_free(struct report_map *map);

#endif
