/* string_set.h: interned strings — each distinct string stored once and known by a dense index
 * (0, 1, 2, ... in the order first added) whose string stays put until the set is freed. The one
 * string table of the tools: the symbolizer's names (symbolize.c), the flame graph's frame names
 * (flame_tree.c) and report.html's names (html_model.c).
 *
 * Open addressing with linear probing over a power-of-two table kept at most half full, FNV-1a.
 *
 *     struct string_set names = STRING_SET_INIT;
 *     uint32_t i = string_set_add(&names, "main", 4, NULL);
 *     if (i == STRING_SET_NONE) ... out of memory
 *     puts(names.strings[i]);
 *     string_set_free(&names); */
#ifndef FAULTLINE_TOOLS_STRING_SET_H
#define FAULTLINE_TOOLS_STRING_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STRING_SET_NONE UINT32_MAX

struct string_set {
	char **strings;      /* by index, NUL-terminated copies */
	size_t count, cap;   /* strings held, and room */
	uint32_t *slots;     /* index + 1, 0 for an empty slot */
	size_t nslots;       /* 0 or a power of two, count * 2 <= nslots */
};

#define STRING_SET_INIT { NULL, 0, 0, NULL, 0 }

/* The index of S[0..LEN) (which holds no NUL), copied in when new (*ADDED says which, when not
 * NULL). STRING_SET_NONE with errno ENOMEM when it cannot be added. */
uint32_t string_set_add(struct string_set *set, const char *s, size_t len, bool *added);

/* The index of S[0..LEN), or STRING_SET_NONE when the set does not hold it. */
uint32_t string_set_find(const struct string_set *set, const char *s, size_t len);

/* The hash the set files S[0..LEN) under (FNV-1a, 64 bits), for others keyed by the same names. */
uint64_t string_set_hash(const char *s, size_t len);

/* Frees every string and the table; the set is empty (STRING_SET_INIT) again. */
void string_set_free(struct string_set *set);

#endif
