/* string_set.c: interned strings (string_set.h). */
#include "string_set.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

uint64_t string_set_hash(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h;
}

static int grow_slots(struct string_set *set)
{
	size_t nslots = set->nslots ? set->nslots * 2 : 1024;
	uint32_t *slots = calloc(nslots, sizeof(*slots));
	if (!slots)
		return -1;
	for (size_t i = 0; i < set->count; i++) {
		size_t s = string_set_hash(set->strings[i], strlen(set->strings[i])) & (nslots - 1);
		while (slots[s])
			s = (s + 1) & (nslots - 1);
		slots[s] = (uint32_t)i + 1;
	}
	free(set->slots);
	set->slots = slots;
	set->nslots = nslots;
	return 0;
}

/* The slot holding S[0..LEN), or the empty slot where it would go (the table is not empty). */
static size_t slot_of(const struct string_set *set, const char *s, size_t len)
{
	size_t slot = string_set_hash(s, len) & (set->nslots - 1);
	for (; set->slots[slot]; slot = (slot + 1) & (set->nslots - 1)) {
		const char *t = set->strings[set->slots[slot] - 1];
		if (strncmp(t, s, len) == 0 && t[len] == '\0')
			break;
	}
	return slot;
}

uint32_t string_set_find(const struct string_set *set, const char *s, size_t len)
{
	if (set->nslots == 0)
		return STRING_SET_NONE;
	size_t slot = slot_of(set, s, len);
	return set->slots[slot] ? set->slots[slot] - 1 : STRING_SET_NONE;
}

uint32_t string_set_add(struct string_set *set, const char *s, size_t len, bool *added)
{
	if (added)
		*added = false;
	if (set->count >= STRING_SET_NONE - 1) {
		errno = ENOMEM;
		return STRING_SET_NONE;
	}
	if ((set->count + 1) * 2 > set->nslots && grow_slots(set) < 0)
		return STRING_SET_NONE;
	size_t slot = slot_of(set, s, len);
	if (set->slots[slot])
		return set->slots[slot] - 1;
	if (set->count == set->cap) {
		size_t cap = set->cap ? set->cap * 2 : 256;
		char **strings = realloc(set->strings, cap * sizeof(*strings));
		if (!strings)
			return STRING_SET_NONE;
		set->strings = strings;
		set->cap = cap;
	}
	char *copy = malloc(len + 1);
	if (!copy)
		return STRING_SET_NONE;
	memcpy(copy, s, len);
	copy[len] = '\0';
	set->strings[set->count] = copy;
	set->slots[slot] = (uint32_t)set->count + 1;
	if (added)
		*added = true;
	return (uint32_t)set->count++;
}

void string_set_free(struct string_set *set)
{
	for (size_t i = 0; i < set->count; i++)
		free(set->strings[i]);
	free(set->strings);
	free(set->slots);
	*set = (struct string_set)STRING_SET_INIT;
}
