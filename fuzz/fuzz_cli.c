/* fuzz_cli.c: libFuzzer harness for the number and size parsing and the formatting helpers of
 * tools/cli.c, each against a reference written here from cli.h's contract (a differential test):
 *   cli_parse_size   digits [. 1-9 digits] [unit], unit B/K/KB/KiB/M/.../TiB in any case, a bare
 *                    number in default_unit bytes, a fraction rounded up to a whole byte, anything
 *                    else or a result beyond 64 bits rejected;
 *   cli_parse_uint   plain decimal digits within [min, max];
 *   cli_format_size  "N UNIT" exact, else one decimal close to the value;
 *   cli_format_count digits grouped by three with commas;
 *   cli_shell_quote  pasted into a POSIX shell, gives the text back (or is visibly cut with "...");
 *                    never writes past len.
 * Input: byte 0 picks the default unit and the bounds, byte 1 the buffer length for quoting, the
 * rest is the text (cut at its first NUL). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#include "cli.h"


static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static char lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c; }

/* The unit named by suffix (whole suffix, any case): 0 when it is none. */
static uint64_t reference_unit(const char *suffix, uint64_t default_unit)
{
	static const struct { const char *name; uint64_t bytes; } units[] = {
		{ "b", 1 }, { "k", 1ull << 10 }, { "kb", 1ull << 10 }, { "kib", 1ull << 10 },
		{ "m", 1ull << 20 }, { "mb", 1ull << 20 }, { "mib", 1ull << 20 },
		{ "g", 1ull << 30 }, { "gb", 1ull << 30 }, { "gib", 1ull << 30 },
		{ "t", 1ull << 40 }, { "tb", 1ull << 40 }, { "tib", 1ull << 40 },
	};
	if (*suffix == '\0')
		return default_unit;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		size_t n = strlen(units[i].name), k = 0;
		while (k < n && suffix[k] && lower(suffix[k]) == units[i].name[k])
			k++;
		if (k == n && suffix[k] == '\0')
			return units[i].bytes;
	}
	return 0;
}

/* Digits at *p as a 128-bit value; *too_big when above 2^64 - 1 (leading zeros are fine). */
static unsigned __int128 reference_digits(const char **p, int *count, bool *too_big)
{
	unsigned __int128 v = 0;
	*count = 0;
	*too_big = false;
	while (is_digit(**p)) {
		if (!*too_big)
			v = v * 10 + (unsigned)(**p - '0');
		if (v > UINT64_MAX)
			*too_big = true;
		(*p)++;
		(*count)++;
	}
	return v;
}

/* The size text means, or -1 when it must be rejected. */
static int reference_size(const char *text, uint64_t default_unit, uint64_t *out)
{
	const char *p = text;
	int wdigits, fdigits = 0;
	bool wbig, fbig = false;
	unsigned __int128 whole = reference_digits(&p, &wdigits, &wbig), fraction = 0, scale = 1;

	if (wdigits == 0 || wbig)
		return -1;
	if (*p == '.') {
		p++;
		fraction = reference_digits(&p, &fdigits, &fbig);
		if (fdigits < 1 || fdigits > 9)
			return -1;
	}
	uint64_t unit = reference_unit(p, default_unit);
	if (unit == 0)
		return -1;
	for (int i = 0; i < fdigits; i++)
		scale *= 10;
	unsigned __int128 bytes = whole * unit + (fraction * unit + scale - 1) / scale;
	if (bytes > UINT64_MAX)
		return -1;
	*out = (uint64_t)bytes;
	return 0;
}

static int reference_uint(const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
	const char *p = text;
	int digits;
	bool big;
	unsigned __int128 v = reference_digits(&p, &digits, &big);

	if (digits == 0 || big || *p != '\0' || v < min || v > max)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

static void check_size(const char *text, uint64_t unit)
{
	char err[256];
	uint64_t got = 0xdeadbeef, want = 0;
	int rc = cli_parse_size(text, unit, &got, err, sizeof(err));
	int wrc = reference_size(text, unit, &want);

	CHECK(rc == wrc, "cli_parse_size(\"%s\", %llu) returned %d, reference %d (%s)", text,
	      (unsigned long long)unit, rc, wrc, rc < 0 ? err : "");
	if (rc == 0)
		CHECK(got == want, "cli_parse_size(\"%s\", %llu) = %llu, reference %llu", text,
		      (unsigned long long)unit, (unsigned long long)got, (unsigned long long)want);
	else
		CHECK(check_text_line("reason", err) > 0, "empty reason");
}

static void check_uint(const char *text, uint64_t min, uint64_t max)
{
	char err[256];
	uint64_t got = 0, want = 0;
	int rc = cli_parse_uint(text, min, max, &got, err, sizeof(err));
	int wrc = reference_uint(text, min, max, &want);

	CHECK(rc == wrc, "cli_parse_uint(\"%s\", %llu, %llu) returned %d, reference %d", text,
	      (unsigned long long)min, (unsigned long long)max, rc, wrc);
	if (rc == 0)
		CHECK(got == want, "cli_parse_uint(\"%s\") = %llu, reference %llu", text, (unsigned long long)got,
		      (unsigned long long)want);
}

static void check_format_size(uint64_t bytes)
{
	static const char *const names[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	char buf[64], *end;
	cli_format_size(bytes, buf, sizeof(buf));
	double value = strtod(buf, &end);
	int unit = -1;

	CHECK(*end == ' ', "cli_format_size(%llu) = '%s'", (unsigned long long)bytes, buf);
	for (int i = 0; i < 7; i++) {
		if (strcmp(end + 1, names[i]) == 0)
			unit = i;
	}
	CHECK(unit >= 0, "cli_format_size(%llu) = '%s': unknown unit", (unsigned long long)bytes, buf);
	long double divisor = (long double)(1ull << (10 * unit)), shown = (long double)value * divisor;
	long double diff = shown > (long double)bytes ? shown - (long double)bytes : (long double)bytes - shown;
	CHECK(diff <= divisor * 0.0501L + 0.5L, "cli_format_size(%llu) = '%s'", (unsigned long long)bytes, buf);
	CHECK(unit == 6 || value < 1024.5, "cli_format_size(%llu) = '%s': a larger unit fits",
	      (unsigned long long)bytes, buf);
}

static void check_format_count(uint64_t count)
{
	char buf[48], digits[32], stripped[48];
	size_t n = 0, len;

	cli_format_count(count, buf, sizeof(buf));
	snprintf(digits, sizeof(digits), "%llu", (unsigned long long)count);
	len = strlen(buf);
	for (size_t i = 0; i < len; i++) {
		if (buf[i] == ',') {
			CHECK((len - i - 1) % 4 == 3 && i > 0, "cli_format_count(%llu) = '%s'", (unsigned long long)count, buf);
			continue;
		}
		stripped[n++] = buf[i];
	}
	stripped[n] = '\0';
	CHECK(strcmp(stripped, digits) == 0, "cli_format_count(%llu) = '%s'", (unsigned long long)count, buf);
}

/* What a POSIX shell makes of one word made of plain characters, '...' and \' : -1 if it holds
 * anything else outside quotes. */
static int shell_unquote(const char *word, char *out, size_t cap)
{
	size_t n = 0;
	for (const char *p = word; *p;) {
		if (*p == '\'') {
			const char *close = strchr(p + 1, '\'');
			if (!close)
				return -1;
			for (const char *q = p + 1; q < close && n + 1 < cap; q++)
				out[n++] = *q;
			p = close + 1;
		} else if (p[0] == '\\' && p[1] == '\'') {
			if (n + 1 < cap)
				out[n++] = '\'';
			p += 2;
		} else {
			if (!strchr("@%_+=:,./-", *p) && !(*p >= '0' && *p <= '9') && !((*p | 32) >= 'a' && (*p | 32) <= 'z'))
				return -1;
			if (n + 1 < cap)
				out[n++] = *p;
			p++;
		}
	}
	out[n] = '\0';
	return 0;
}

static void check_quote(const char *text, size_t len)
{
	char buf[300 + 16], back[1200];
	size_t textlen = strlen(text);

	memset(buf, 0x5a, sizeof(buf));
	cli_shell_quote(text, buf, len);
	for (size_t i = len; i < sizeof(buf); i++)
		CHECK((unsigned char)buf[i] == 0x5a, "cli_shell_quote(len %zu) wrote byte %zu", len, i);
	if (len == 0)
		return;
	CHECK(memchr(buf, '\0', len) != NULL, "cli_shell_quote(len %zu): no NUL inside the buffer", len);
	if (len < 8) {
		CHECK(buf[0] == '\0', "cli_shell_quote(len %zu) = '%s', want empty", len, buf);
		return;
	}
	size_t outlen = strlen(buf);
	bool cut = outlen >= 3 && (strstr(buf, "...") != NULL);
	if (shell_unquote(buf, back, sizeof(back)) == 0 && strcmp(back, text) == 0)
		return; /* pastes back exactly */
	/* Otherwise it must have been cut, visibly, and what is left must be the text's beginning. */
	CHECK(cut, "cli_shell_quote('%s', %zu) = '%s' does not give the text back", text, len, buf);
	CHECK(textlen > 0, "empty text cut");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t units[] = { 1, 1ull << 10, 1ull << 20, 1ull << 30, 1ull << 40, 4096, 1000, 3 };
	char text[1024];

	if (size < 2)
		return 0;
	uint8_t selector = data[0];
	size_t quote_len = data[1] + (selector & 0x80 ? 45u : 0u); /* 0 .. 300 */
	size_t n = size - 2 < sizeof(text) - 1 ? size - 2 : sizeof(text) - 1;
	memcpy(text, data + 2, n);
	text[n] = '\0';

	uint64_t unit = units[selector & 7];
	check_size(text, unit);

	uint64_t min = (selector >> 3) & 3 ? (uint64_t)1 << ((selector >> 3) & 3) * 8 : 0;
	uint64_t max = (selector & 0x40) ? UINT64_MAX : (uint64_t)UINT32_MAX;
	check_uint(text, min, max);

	uint64_t value = 0;
	memcpy(&value, data + 2, size - 2 < 8 ? size - 2 : 8);
	check_format_size(value);
	check_format_size(value >> (selector & 63));
	check_format_count(value);
	uint64_t parsed;
	char err[128];
	if (cli_parse_size(text, unit, &parsed, err, sizeof(err)) == 0) {
		check_format_size(parsed);
		check_format_count(parsed);
	}
	check_quote(text, quote_len);
	return 0;
}
