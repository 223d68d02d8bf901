/* fuzz_text.c: libFuzzer harness for the two text parsers a recording goes through, directly
 * (fuzz_trace_reader reaches them too, but behind the binary files' checks):
 *   stats_json_parse (tools/stats_json.c)  meta.json / stats.json: flat JSON objects;
 *   maps_parse (tools/maps.c)              /proc/PID/maps snapshots.
 * The whole input goes to both. Checks, besides the sanitizers:
 *   - JSON: success gives unique non-NULL keys, NUL-free strings, and typed getters that agree with
 *     each member's type; failure leaves the object empty with a non-empty reason;
 *   - maps: entries sorted, disjoint, non-empty, kinds as their paths say, maps_find hitting each
 *     entry's first and last byte and missing the byte after; entries plus rejected lines never
 *     exceed the lines of the input; every diagnostic is non-empty (one printable line under
 *     FUZZ_STRICT=1, fuzz/check.h). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#include "maps.h"
#include "stats_json.h"


static void check_json(const uint8_t *data, size_t size)
{
	struct flat_json json;
	char err[512];

	memset(err, 'x', sizeof(err));
	if (stats_json_parse((const char *)data, size, &json, err, sizeof(err)) < 0) {
		CHECK(json.values == NULL && json.count == 0, "failed parse left %zu values", json.count);
		CHECK(memchr(err, '\0', sizeof(err)) != NULL, "reason not NUL-terminated");
		CHECK(check_text_line("reason", err) > 0, "empty reason");
		return;
	}
	for (size_t i = 0; i < json.count; i++) {
		const struct flat_json_value *v = &json.values[i];
		int64_t integer;
		uint64_t uinteger;
		char *const *strings;
		size_t count;

		CHECK(v->key != NULL, "member %zu without a key", i);
		CHECK(stats_json_find(&json, v->key) == v, "key '%s' given twice or not found", v->key);
		CHECK((stats_json_int(&json, v->key, &integer) == 0) == (v->type == FLAT_JSON_INT), "int getter");
		if (v->type == FLAT_JSON_INT) {
			CHECK(integer == v->integer, "int value");
			CHECK((stats_json_uint(&json, v->key, &uinteger) == 0) == (v->integer >= 0), "uint getter");
		}
		const char *s = stats_json_string(&json, v->key);
		CHECK((s != NULL) == (v->type == FLAT_JSON_STRING), "string getter");
		if (s)
			(void)strlen(s);
		int rc = stats_json_strings(&json, v->key, &strings, &count);
		CHECK((rc == 0) == (v->type == FLAT_JSON_STRING_ARRAY), "strings getter");
		for (size_t k = 0; rc == 0 && k < count; k++)
			CHECK(strings[k] != NULL && strlen(strings[k]) < size, "array string %zu", k);
	}
	stats_json_free(&json);
	CHECK(json.values == NULL && json.count == 0, "free left values");
}

static void diag_one_line(void *ctx, const char *message)
{
	CHECK(message && check_text_line("maps diagnostic", message) > 0, "empty maps diagnostic");
	++*(unsigned *)ctx;
}

static void check_maps(const uint8_t *data, size_t size)
{
	unsigned diags = 0;
	size_t lines = 0;
	struct maps *m = maps_parse((const char *)data, size, "fuzz", diag_one_line, &diags);

	CHECK(m != NULL, "maps_parse out of memory");
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	lines += size > 0 && data[size - 1] != '\n';
	CHECK(m->count + m->malformed <= lines, "%zu entries + %u malformed from %zu lines", m->count,
	      m->malformed, lines);
	CHECK(diags == m->malformed, "%u diagnostics for %u malformed lines", diags, m->malformed);
	for (size_t i = 0; i < m->count; i++) {
		const struct maps_entry *e = &m->entries[i];
		CHECK(e->start < e->end, "entry %zu empty", i);
		CHECK(i == 0 || m->entries[i - 1].end <= e->start, "entries %zu and %zu overlap", i - 1, i);
		CHECK(e->path != NULL, "entry %zu without a path", i);
		enum maps_kind want = e->path[0] == '\0' ? MAPS_ANON : e->path[0] == '/' ? MAPS_FILE : MAPS_PSEUDO;
		CHECK(e->kind == want, "entry %zu path '%s' kind %d", i, e->path, e->kind);
		CHECK(e->line >= 1 && e->line <= lines, "entry %zu line %u of %zu", i, e->line, lines);
		CHECK(maps_find(m, e->start) == e && maps_find(m, e->end - 1) == e, "maps_find misses entry %zu", i);
		CHECK(maps_find(m, e->end) != e, "maps_find past entry %zu", i);
	}
	if (m->count == 0) {
		CHECK(maps_find(m, 0) == NULL && maps_find(m, UINT64_MAX) == NULL, "maps_find in an empty table");
	}
	maps_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_json(data, size);
	check_maps(data, size);
	return 0;
}
