/* report_map.c: the pair-keyed hash map of report_map.h (open addressing, linear probing). */
#include "report_map.h"

#include <errno.h>
#include <stdlib.h>

static uint64_t mix(uint64_t x) /* splitmix64 finaliser */
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static size_t slot_of(uint64_t a, uint64_t b, size_t cap)
{
	return (size_t)(mix(a ^ mix(b + 0x9e3779b97f4a7c15ull)) & (cap - 1));
}

static int grow(struct report_map *map)
{
	size_t cap = map->cap ? map->cap * 2 : 64;
	struct report_map_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots) {
		errno = ENOMEM;
		return -1;
	}
	for (size_t i = 0; i < map->cap; i++) {
		const struct report_map_slot *old = &map->slots[i];
		if (!old->used)
			continue;
		size_t j = slot_of(old->a, old->b, cap);
		while (slots[j].used)
			j = (j + 1) & (cap - 1);
		slots[j] = *old;
	}
	free(map->slots);
	map->slots = slots;
	map->cap = cap;
	return 0;
}

uint64_t *report_map_add(struct report_map *map, uint64_t a, uint64_t b, bool *added)
{
	if ((map->count + 1) * 2 > map->cap && grow(map) < 0)
		return NULL;
	size_t mask = map->cap - 1, j = slot_of(a, b, map->cap);
	for (; map->slots[j].used; j = (j + 1) & mask) {
		if (map->slots[j].a == a && map->slots[j].b == b) {
			if (added)
				*added = false;
			return &map->slots[j].value;
		}
	}
	map->slots[j] = (struct report_map_slot){ a, b, 0, true };
	map->count++;
	if (added)
		*added = true;
	return &map->slots[j].value;
}

uint64_t *report_map_find(const struct report_map *map, uint64_t a, uint64_t b)
{
	if (map->cap == 0)
		return NULL;
	size_t mask = map->cap - 1, j = slot_of(a, b, map->cap);
	for (; map->slots[j].used; j = (j + 1) & mask) {
		if (map->slots[j].a == a && map->slots[j].b == b)
			return &map->slots[j].value;
	}
	return NULL;
}

const struct report_map_slot *report_map_next(const struct report_map *map, size_t *index)
{
	while (*index < map->cap) {
		const struct report_map_slot *slot = &map->slots[(*index)++];
		if (slot->used)
			return slot;
	}
	return NULL;
}

void report_map_free(struct report_map *map)
{
	free(map->slots);
	*map = (struct report_map)REPORT_MAP_INIT;
}
