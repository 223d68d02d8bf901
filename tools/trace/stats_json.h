/* stats_json.h: a small reader for the flat JSON objects the runtime writes (stats.json,
 * meta.json): one top-level object whose values are integers, strings, booleans, null,
 * or arrays of strings. Other values (reals, nested objects, other arrays) are accepted
 * and skipped: their key is present with type FLAT_JSON_OTHER. Keys may come in any order;
 * a key given twice is an error. Malformed input is reported as "line:column: reason",
 * never by crashing. */
#ifndef FAULTLINE_TOOLS_STATS_JSON_H
#define FAULTLINE_TOOLS_STATS_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum flat_json_type {
	FLAT_JSON_NULL,
	FLAT_JSON_BOOL,
	FLAT_JSON_INT,          /* integer in int64_t range */
	FLAT_JSON_STRING,       /* UTF-8, no NUL inside */
	FLAT_JSON_STRING_ARRAY, /* ["a", "b"] */
	FLAT_JSON_OTHER,        /* a real number, object or mixed array: skipped */
};

struct flat_json_value {
	char *key;
	enum flat_json_type type;
	bool boolean;           /* FLAT_JSON_BOOL */
	int64_t integer;        /* FLAT_JSON_INT */
	char *string;           /* FLAT_JSON_STRING */
	char **strings;         /* FLAT_JSON_STRING_ARRAY: count strings */
	size_t count;
};

/* A parsed object: its members in file order. */
struct flat_json {
	struct flat_json_value *values;
	size_t count;
};

/* Reads and parses the file at path (at most 16 MiB). On error leaves *out empty, writes
 * "path: reason" into err and returns STATS_JSON_UNREADABLE (no regular file, cannot be opened or
 * read) or STATS_JSON_DAMAGED (read, but empty or no JSON object). */
#define STATS_JSON_UNREADABLE (-1)
#define STATS_JSON_DAMAGED (-2)
int stats_json_load(const char *path, struct flat_json *out, char *err, size_t errlen);

/* Parses len bytes of text. On error returns -1, leaves *out empty, reason in err. */
int stats_json_parse(const char *text, size_t len, struct flat_json *out, char *err, size_t errlen);

/* Releases everything *json owns and empties it (safe on an empty object). */
void stats_json_free(struct flat_json *json);

/* The member named key, or NULL. */
const struct flat_json_value *stats_json_find(const struct flat_json *json, const char *key);

/* The integer member key: 0 and *out set, or -1 if it is missing or not an integer. */
int stats_json_int(const struct flat_json *json, const char *key, int64_t *out);

/* Like stats_json_int for a non-negative integer. */
int stats_json_uint(const struct flat_json *json, const char *key, uint64_t *out);

/* The string member key, or NULL if it is missing or not a string. */
const char *stats_json_string(const struct flat_json *json, const char *key);

/* The string-array member key: 0 with *strings and *count set (an empty array gives
 * *count 0), or -1 if it is missing or not an array of strings. */
int stats_json_strings(const struct flat_json *json, const char *key, char *const **strings,
		       size_t *count);

#endif
