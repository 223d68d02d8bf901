/* stats_json.c: reader for flat JSON objects (stats.json, meta.json); see stats_json.h.
 *
 * A recursive-descent parser over a byte range. Strict JSON (RFC 8259) except that only
 * the value shapes listed in stats_json.h are kept; everything else is validated and
 * skipped. The first error stops the parse and is reported with its line and column. */
#include "stats_json.h"
#include "regular_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define JSON_MAX_FILE_BYTES (16u << 20)
#define JSON_MAX_DEPTH 64

struct json_cursor {
	const char *start;  /* first byte of the text */
	const char *p;      /* next byte to read */
	const char *end;    /* one past the last byte */
	char *err;
	size_t errlen;
};

static int json_fail(struct json_cursor *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Writes "line L, column C: reason" for the current position; returns -1. */
static int json_fail(struct json_cursor *c, const char *fmt, ...)
{
	unsigned line = 1, column = 1;
	char reason[256];
	va_list ap;

	for (const char *q = c->start; q < c->p; q++) {
		if (*q == '\n') {
			line++;
			column = 1;
		} else {
			column++;
		}
	}
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	snprintf(c->err, c->errlen, "line %u, column %u: %s", line, column, reason);
	return -1;
}

static void json_skip_space(struct json_cursor *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
		c->p++;
}

static int json_at_end(struct json_cursor *c)
{
	return c->p >= c->end;
}

/* Consumes the byte ch (after whitespace) or fails naming what was expected. */
static int json_expect(struct json_cursor *c, char ch, const char *what)
{
	json_skip_space(c);
	if (json_at_end(c))
		return json_fail(c, "unexpected end of input, expected %s", what);
	if (*c->p != ch)
		return json_fail(c, "expected %s, found '%c'", what, *c->p);
	c->p++;
	return 0;
}

/* A growable byte buffer for decoded strings. */
struct json_buffer {
	char *data;
	size_t len, cap;
};

static int buffer_push(struct json_buffer *b, const char *bytes, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 32;
		char *data;

		while (cap < b->len + n + 1)
			cap *= 2;
		data = realloc(b->data, cap);
		if (data == NULL)
			return -1;
		b->data = data;
		b->cap = cap;
	}
	memcpy(b->data + b->len, bytes, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

static int hex_value(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* Reads the 4 hex digits of a \u escape (c->p is at the first digit). */
static int json_read_hex4(struct json_cursor *c, unsigned *code)
{
	*code = 0;
	for (int i = 0; i < 4; i++) {
		int digit = c->p < c->end ? hex_value(*c->p) : -1;

		if (digit < 0)
			return json_fail(c, "expected 4 hex digits after \\u");
		*code = *code * 16 + (unsigned)digit;
		c->p++;
	}
	return 0;
}

/* Reads the code point of a \u escape, joining a surrogate pair (c->p after "\u"). */
static int json_read_code_point(struct json_cursor *c, unsigned *code)
{
	unsigned low;

	if (json_read_hex4(c, code) < 0)
		return -1;
	if (*code >= 0xDC00 && *code <= 0xDFFF)
		return json_fail(c, "unpaired low surrogate in \\u escape");
	if (*code < 0xD800 || *code > 0xDBFF)
		return 0;
	if (c->end - c->p < 2 || c->p[0] != '\\' || c->p[1] != 'u')
		return json_fail(c, "unpaired high surrogate in \\u escape");
	c->p += 2;
	if (json_read_hex4(c, &low) < 0)
		return -1;
	if (low < 0xDC00 || low > 0xDFFF)
		return json_fail(c, "invalid low surrogate in \\u escape");
	*code = 0x10000 + ((*code - 0xD800) << 10) + (low - 0xDC00);
	return 0;
}

static size_t utf8_encode(unsigned code, char out[4])
{
	if (code < 0x80) {
		out[0] = (char)code;
		return 1;
	}
	if (code < 0x800) {
		out[0] = (char)(0xC0 | (code >> 6));
		out[1] = (char)(0x80 | (code & 0x3F));
		return 2;
	}
	if (code < 0x10000) {
		out[0] = (char)(0xE0 | (code >> 12));
		out[1] = (char)(0x80 | ((code >> 6) & 0x3F));
		out[2] = (char)(0x80 | (code & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | (code >> 18));
	out[1] = (char)(0x80 | ((code >> 12) & 0x3F));
	out[2] = (char)(0x80 | ((code >> 6) & 0x3F));
	out[3] = (char)(0x80 | (code & 0x3F));
	return 4;
}

/* Decodes one escape sequence (c->p after the backslash) into b. */
static int json_read_escape(struct json_cursor *c, struct json_buffer *b)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *hit;
	char utf8[4];
	unsigned code;

	if (json_at_end(c))
		return json_fail(c, "unexpected end of input in a string escape");
	hit = strchr(from, *c->p);
	if (hit != NULL && *c->p != '\0') {
		c->p++;
		return buffer_push(b, &to[hit - from], 1) < 0 ? json_fail(c, "out of memory") : 0;
	}
	if (*c->p != 'u')
		return json_fail(c, "invalid escape '\\%c' in a string", *c->p);
	c->p++;
	if (json_read_code_point(c, &code) < 0)
		return -1;
	if (code == 0)
		return json_fail(c, "\\u0000 (NUL) inside a string is not supported");
	if (buffer_push(b, utf8, utf8_encode(code, utf8)) < 0)
		return json_fail(c, "out of memory");
	return 0;
}

/* Reads a string (c->p at the opening quote) into a new allocation *out. */
static int json_read_string(struct json_cursor *c, char **out)
{
	struct json_buffer b = { 0 };

	c->p++;
	if (buffer_push(&b, "", 0) < 0)
		return json_fail(c, "out of memory");
	for (;;) {
		if (json_at_end(c)) {
			free(b.data);
			return json_fail(c, "unterminated string");
		}
		if (*c->p == '"')
			break;
		if ((unsigned char)*c->p < 0x20) {
			free(b.data);
			return json_fail(c, "control character 0x%02x inside a string", (unsigned char)*c->p);
		}
		if (*c->p == '\\') {
			c->p++;
			if (json_read_escape(c, &b) < 0) {
				free(b.data);
				return -1;
			}
			continue;
		}
		if (buffer_push(&b, c->p, 1) < 0) {
			free(b.data);
			return json_fail(c, "out of memory");
		}
		c->p++;
	}
	c->p++;
	*out = b.data;
	return 0;
}

static int is_digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

/* Reads a JSON number. An integer in int64_t range becomes FLAT_JSON_INT; a number with
 * a fraction or exponent becomes FLAT_JSON_OTHER; a larger integer is an error. */
static int json_read_number(struct json_cursor *c, struct flat_json_value *v)
{
	const char *begin = c->p;
	int negative = 0, real = 0;
	uint64_t magnitude = 0, limit;

	if (*c->p == '-') {
		negative = 1;
		c->p++;
	}
	if (json_at_end(c) || !is_digit(*c->p))
		return json_fail(c, "invalid number");
	if (*c->p == '0' && c->p + 1 < c->end && is_digit(c->p[1]))
		return json_fail(c, "invalid number: leading zero");
	limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; !json_at_end(c) && is_digit(*c->p); c->p++) {
		if (__builtin_mul_overflow(magnitude, 10, &magnitude) ||
		    __builtin_add_overflow(magnitude, (uint64_t)(*c->p - '0'), &magnitude) ||
		    magnitude > limit) {
			c->p = begin;
			return json_fail(c, "integer out of range");
		}
	}
	if (!json_at_end(c) && *c->p == '.') {
		real = 1;
		c->p++;
		if (json_at_end(c) || !is_digit(*c->p))
			return json_fail(c, "invalid number: expected digits after '.'");
		while (!json_at_end(c) && is_digit(*c->p))
			c->p++;
	}
	if (!json_at_end(c) && (*c->p == 'e' || *c->p == 'E')) {
		real = 1;
		c->p++;
		if (!json_at_end(c) && (*c->p == '+' || *c->p == '-'))
			c->p++;
		if (json_at_end(c) || !is_digit(*c->p))
			return json_fail(c, "invalid number: expected digits in the exponent");
		while (!json_at_end(c) && is_digit(*c->p))
			c->p++;
	}
	if (real) {
		v->type = FLAT_JSON_OTHER;
		return 0;
	}
	v->type = FLAT_JSON_INT;
	v->integer = negative ? (int64_t)(0 - magnitude) : (int64_t)magnitude;
	return 0;
}

/* Reads one of the words true, false, null. */
static int json_read_word(struct json_cursor *c, struct flat_json_value *v)
{
	static const struct { const char *word; enum flat_json_type type; bool value; } words[] = {
		{ "true", FLAT_JSON_BOOL, true },
		{ "false", FLAT_JSON_BOOL, false },
		{ "null", FLAT_JSON_NULL, false },
	};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		size_t n = strlen(words[i].word);

		if ((size_t)(c->end - c->p) >= n && memcmp(c->p, words[i].word, n) == 0) {
			c->p += n;
			v->type = words[i].type;
			v->boolean = words[i].value;
			return 0;
		}
	}
	return json_fail(c, "unexpected '%c', expected a value", *c->p);
}

static int json_skip_value(struct json_cursor *c, int depth);

/* Skips the members or elements of an object or array (c->p after the opening bracket). */
static int json_skip_container(struct json_cursor *c, char close, int depth)
{
	json_skip_space(c);
	if (!json_at_end(c) && *c->p == close) {
		c->p++;
		return 0;
	}
	for (;;) {
		if (close == '}') {
			char *key;

			json_skip_space(c);
			if (json_at_end(c) || *c->p != '"')
				return json_fail(c, "expected a string key");
			if (json_read_string(c, &key) < 0)
				return -1;
			free(key);
			if (json_expect(c, ':', "':'") < 0)
				return -1;
		}
		if (json_skip_value(c, depth + 1) < 0)
			return -1;
		json_skip_space(c);
		if (!json_at_end(c) && *c->p == ',') {
			c->p++;
			continue;
		}
		return json_expect(c, close, close == '}' ? "',' or '}'" : "',' or ']'");
	}
}

/* Validates and skips any JSON value. */
static int json_skip_value(struct json_cursor *c, int depth)
{
	struct flat_json_value scratch = { 0 };
	char *text;

	if (depth > JSON_MAX_DEPTH)
		return json_fail(c, "nested more than %d levels deep", JSON_MAX_DEPTH);
	json_skip_space(c);
	if (json_at_end(c))
		return json_fail(c, "unexpected end of input, expected a value");
	switch (*c->p) {
	case '{':
		c->p++;
		return json_skip_container(c, '}', depth);
	case '[':
		c->p++;
		return json_skip_container(c, ']', depth);
	case '"':
		if (json_read_string(c, &text) < 0)
			return -1;
		free(text);
		return 0;
	case '-': case '0': case '1': case '2': case '3': case '4':
	case '5': case '6': case '7': case '8': case '9':
		return json_read_number(c, &scratch);
	default:
		return json_read_word(c, &scratch);
	}
}

static void free_strings(char **strings, size_t count)
{
	for (size_t i = 0; i < count; i++)
		free(strings[i]);
	free(strings);
}

static int strings_push(struct flat_json_value *v, char *text, size_t *cap)
{
	if (v->count == *cap) {
		size_t new_cap = *cap ? *cap * 2 : 4;
		char **grown = realloc(v->strings, new_cap * sizeof(*grown));

		if (grown == NULL)
			return -1;
		v->strings = grown;
		*cap = new_cap;
	}
	v->strings[v->count++] = text;
	return 0;
}

/* Reads one array element into v: a string is kept, anything else marks v as OTHER. */
static int json_read_array_element(struct json_cursor *c, struct flat_json_value *v, size_t *cap)
{
	char *text;

	json_skip_space(c);
	if (json_at_end(c) || *c->p != '"' || v->type == FLAT_JSON_OTHER) {
		v->type = FLAT_JSON_OTHER;
		return json_skip_value(c, 1);
	}
	if (json_read_string(c, &text) < 0)
		return -1;
	if (strings_push(v, text, cap) < 0) {
		free(text);
		return json_fail(c, "out of memory");
	}
	return 0;
}

/* Reads an array (c->p at '['): all strings → FLAT_JSON_STRING_ARRAY, else OTHER. */
static int json_read_array(struct json_cursor *c, struct flat_json_value *v)
{
	size_t cap = 0;

	c->p++;
	v->type = FLAT_JSON_STRING_ARRAY;
	json_skip_space(c);
	if (!json_at_end(c) && *c->p == ']') {
		c->p++;
		return 0;
	}
	for (;;) {
		if (json_read_array_element(c, v, &cap) < 0)
			return -1;
		json_skip_space(c);
		if (!json_at_end(c) && *c->p == ',') {
			c->p++;
			continue;
		}
		if (json_expect(c, ']', "',' or ']'") < 0)
			return -1;
		break;
	}
	if (v->type == FLAT_JSON_OTHER) {
		free_strings(v->strings, v->count);
		v->strings = NULL;
		v->count = 0;
	}
	return 0;
}

/* Reads the value of a member into v. */
static int json_read_value(struct json_cursor *c, struct flat_json_value *v)
{
	json_skip_space(c);
	if (json_at_end(c))
		return json_fail(c, "unexpected end of input, expected a value");
	switch (*c->p) {
	case '"':
		v->type = FLAT_JSON_STRING;
		return json_read_string(c, &v->string);
	case '[':
		return json_read_array(c, v);
	case '{':
		v->type = FLAT_JSON_OTHER;
		return json_skip_value(c, 1);
	case '-': case '0': case '1': case '2': case '3': case '4':
	case '5': case '6': case '7': case '8': case '9':
		return json_read_number(c, v);
	default:
		return json_read_word(c, v);
	}
}

static void value_free(struct flat_json_value *v)
{
	free(v->key);
	free(v->string);
	free_strings(v->strings, v->count);
}

/* Appends an empty member to json; returns it, or NULL when out of memory. */
static struct flat_json_value *json_add_member(struct flat_json *json, size_t *cap)
{
	if (json->count == *cap) {
		size_t new_cap = *cap ? *cap * 2 : 16;
		struct flat_json_value *grown = realloc(json->values, new_cap * sizeof(*grown));

		if (grown == NULL)
			return NULL;
		json->values = grown;
		*cap = new_cap;
	}
	memset(&json->values[json->count], 0, sizeof(json->values[0]));
	return &json->values[json->count++];
}

/* Reads one "key": value member into json. */
static int json_read_member(struct json_cursor *c, struct flat_json *json, size_t *cap)
{
	const char *key_at;
	char *key;
	struct flat_json_value *v;

	json_skip_space(c);
	if (json_at_end(c) || *c->p != '"')
		return json_at_end(c) ? json_fail(c, "unexpected end of input, expected a key")
				      : json_fail(c, "expected a string key, found '%c'", *c->p);
	key_at = c->p;
	if (json_read_string(c, &key) < 0)
		return -1;
	if (stats_json_find(json, key) != NULL) {
		c->p = key_at;
		json_fail(c, "duplicate key \"%s\"", key);
		free(key);
		return -1;
	}
	v = json_add_member(json, cap);
	if (v == NULL) {
		free(key);
		return json_fail(c, "out of memory");
	}
	v->key = key;
	if (json_expect(c, ':', "':' after the key") < 0)
		return -1;
	return json_read_value(c, v);
}

/* Reads the top-level object and checks nothing but whitespace follows it. */
static int json_read_object(struct json_cursor *c, struct flat_json *json)
{
	size_t cap = 0;

	json_skip_space(c);
	if (json_at_end(c))
		return json_fail(c, "empty input, expected an object");
	if (json_expect(c, '{', "'{' (a JSON object)") < 0)
		return -1;
	json_skip_space(c);
	if (!json_at_end(c) && *c->p == '}') {
		c->p++;
	} else {
		for (;;) {
			if (json_read_member(c, json, &cap) < 0)
				return -1;
			json_skip_space(c);
			if (!json_at_end(c) && *c->p == ',') {
				c->p++;
				continue;
			}
			if (json_expect(c, '}', "',' or '}'") < 0)
				return -1;
			break;
		}
	}
	json_skip_space(c);
	if (!json_at_end(c))
		return json_fail(c, "unexpected text after the object");
	return 0;
}

int stats_json_parse(const char *text, size_t len, struct flat_json *out, char *err, size_t errlen)
{
	struct json_cursor c = { text, text, text + len, err, errlen };

	out->values = NULL;
	out->count = 0;
	if (memchr(text, '\0', len) != NULL) {
		c.p = memchr(text, '\0', len);
		return json_fail(&c, "NUL byte in the input");
	}
	if (json_read_object(&c, out) < 0) {
		stats_json_free(out);
		return -1;
	}
	return 0;
}

/* Reads all of fd into a new buffer (at most JSON_MAX_FILE_BYTES); -1 with errno. */
static int read_whole_fd(int fd, char **data, size_t *len)
{
	size_t cap = 4096, used = 0;
	char *buf = malloc(cap);

	if (buf == NULL)
		return -1;
	for (;;) {
		ssize_t n;

		if (used == cap) {
			char *grown;

			if (cap >= JSON_MAX_FILE_BYTES) {
				free(buf);
				errno = EFBIG;
				return -1;
			}
			grown = realloc(buf, cap * 2);
			if (grown == NULL) {
				free(buf);
				return -1;
			}
			buf = grown;
			cap *= 2;
		}
		n = read(fd, buf + used, cap - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			return -1;
		}
		if (n == 0)
			break;
		used += (size_t)n;
	}
	*data = buf;
	*len = used;
	return 0;
}

int stats_json_load(const char *path, struct flat_json *out, char *err, size_t errlen)
{
	char reason[512], *data;
	size_t len;
	int fd, rc;

	out->values = NULL;
	out->count = 0;
	struct stat st;
	fd = regular_file_open(path, &st, err, errlen);
	if (fd < 0)
		return -1;
	rc = read_whole_fd(fd, &data, &len);
	if (rc < 0)
		snprintf(err, errlen, "%s: read: %s", path, strerror(errno));
	close(fd);
	if (rc < 0)
		return -1;
	if (len == 0) {
		snprintf(err, errlen, "%s: empty file (the runtime names it only once written and then rewrites it in place, never empty: it was damaged after the run)", path);
		free(data);
		return STATS_JSON_DAMAGED;
	}
	rc = stats_json_parse(data, len, out, reason, sizeof(reason));
	if (rc < 0)
		snprintf(err, errlen, "%s: %s", path, reason);
	free(data);
	return rc < 0 ? STATS_JSON_DAMAGED : 0;
}

void stats_json_free(struct flat_json *json)
{
	for (size_t i = 0; i < json->count; i++)
		value_free(&json->values[i]);
	free(json->values);
	json->values = NULL;
	json->count = 0;
}

const struct flat_json_value *stats_json_find(const struct flat_json *json, const char *key)
{
	for (size_t i = 0; i < json->count; i++) {
		if (strcmp(json->values[i].key, key) == 0)
			return &json->values[i];
	}
	return NULL;
}

int stats_json_int(const struct flat_json *json, const char *key, int64_t *out)
{
	const struct flat_json_value *v = stats_json_find(json, key);

	if (v == NULL || v->type != FLAT_JSON_INT)
		return -1;
	*out = v->integer;
	return 0;
}

int stats_json_uint(const struct flat_json *json, const char *key, uint64_t *out)
{
	int64_t value;

	if (stats_json_int(json, key, &value) < 0 || value < 0)
		return -1;
	*out = (uint64_t)value;
	return 0;
}

const char *stats_json_string(const struct flat_json *json, const char *key)
{
	const struct flat_json_value *v = stats_json_find(json, key);

	return v != NULL && v->type == FLAT_JSON_STRING ? v->string : NULL;
}

int stats_json_strings(const struct flat_json *json, const char *key, char *const **strings,
		       size_t *count)
{
	const struct flat_json_value *v = stats_json_find(json, key);

	if (v == NULL || v->type != FLAT_JSON_STRING_ARRAY)
		return -1;
	*strings = v->strings;
	*count = v->count;
	return 0;
}
