/* cli.c: option matching, strict number/size parsing and human formatting shared by the
 * `faultline` verbs (see cli.h for the contracts). The one state kept is where cli_list_tables
 * asked the next table to be listed (NULL: parse as usual). */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

void cli_error(const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "faultline: %s\n", line);
}

/* Units of cli_parse_size, matched case-insensitively against the whole suffix. */
static const struct size_unit {
	const char *name;
	uint64_t bytes;
} size_units[] = {
	{ "b", 1 },
	{ "k", CLI_KIB }, { "kb", CLI_KIB }, { "kib", CLI_KIB },
	{ "m", CLI_MIB }, { "mb", CLI_MIB }, { "mib", CLI_MIB },
	{ "g", CLI_GIB }, { "gb", CLI_GIB }, { "gib", CLI_GIB },
	{ "t", CLI_TIB }, { "tb", CLI_TIB }, { "tib", CLI_TIB },
};

static int size_unit_lookup(const char *suffix, uint64_t default_unit, uint64_t *unit)
{
	if (*suffix == '\0') {
		*unit = default_unit;
		return 0;
	}
	for (size_t i = 0; i < sizeof(size_units) / sizeof(size_units[0]); i++) {
		if (strcasecmp(suffix, size_units[i].name) == 0) {
			*unit = size_units[i].bytes;
			return 0;
		}
	}
	return -1;
}

/* Reads decimal digits at *p into *value; returns the number of digits, or -1 on overflow. */
static int read_digits(const char **p, uint64_t *value)
{
	int count = 0;

	*value = 0;
	while (isdigit((unsigned char)**p)) {
		if (__builtin_mul_overflow(*value, 10, value) ||
		    __builtin_add_overflow(*value, (uint64_t)(**p - '0'), value))
			return -1;
		(*p)++;
		count++;
	}
	return count;
}

#define SIZE_MAX_FRACTION_DIGITS 9

/* whole.fraction (fraction has `digits` digits) times unit, rounded up; -1 on overflow. */
static int size_scale(uint64_t whole, uint64_t fraction, int digits, uint64_t unit, uint64_t *out)
{
	unsigned __int128 scale = 1, part;
	uint64_t bytes;

	if (__builtin_mul_overflow(whole, unit, &bytes))
		return -1;
	for (int i = 0; i < digits; i++)
		scale *= 10;
	part = ((unsigned __int128)fraction * unit + scale - 1) / scale;
	if (part > UINT64_MAX || __builtin_add_overflow(bytes, (uint64_t)part, &bytes))
		return -1;
	*out = bytes;
	return 0;
}

int cli_parse_size(const char *text, uint64_t default_unit, uint64_t *out, char *err, size_t errlen)
{
	const char *p = text;
	uint64_t whole, fraction = 0, unit;
	int digits = 0;

	if (text == NULL || *text == '\0') {
		snprintf(err, errlen, "empty size");
		return -1;
	}
	if (*p == '-' || *p == '+') {
		snprintf(err, errlen, "invalid size '%s': give a plain positive number, e.g. 64M", text);
		return -1;
	}
	if (!isdigit((unsigned char)*p)) {
		snprintf(err, errlen, "invalid size '%s': expected a number, e.g. 64M or 2G", text);
		return -1;
	}
	if (read_digits(&p, &whole) < 0)
		goto too_large;
	if (*p == '.') {
		p++;
		digits = read_digits(&p, &fraction);
		if (digits <= 0 || digits > SIZE_MAX_FRACTION_DIGITS) {
			snprintf(err, errlen, "invalid size '%s': expected 1 to %d digits after '.'",
				 text, SIZE_MAX_FRACTION_DIGITS);
			return -1;
		}
	}
	if (size_unit_lookup(p, default_unit, &unit) < 0) {
		snprintf(err, errlen, "invalid size '%s': unknown unit '%s' (use B, K, M, G or T)", text, p);
		return -1;
	}
	if (size_scale(whole, fraction, digits, unit, out) < 0)
		goto too_large;
	return 0;
too_large:
	snprintf(err, errlen, "invalid size '%s': too large", text);
	return -1;
}

int cli_parse_uint(const char *text, uint64_t min, uint64_t max, uint64_t *out, char *err, size_t errlen)
{
	const char *p = text;
	uint64_t value;
	int digits;

	if (text == NULL || *text == '\0') {
		snprintf(err, errlen, "empty number");
		return -1;
	}
	digits = read_digits(&p, &value);
	if (digits < 0) {
		snprintf(err, errlen, "invalid number '%s': too large, must be between %llu and %llu", text,
			 (unsigned long long)min, (unsigned long long)max);
		return -1;
	}
	if (digits == 0 || *p != '\0') {
		snprintf(err, errlen, "invalid number '%s': expected a plain decimal integer", text);
		return -1;
	}
	if (value < min || value > max) {
		snprintf(err, errlen, "invalid number '%s': must be between %llu and %llu", text,
			 (unsigned long long)min, (unsigned long long)max);
		return -1;
	}
	*out = value;
	return 0;
}

int cli_parse_pid(const char *text, uint32_t *out, char *err, size_t errlen)
{
	uint64_t value;
	const char *dot = strchr(text, '.');

	if (dot && dot > text) { /* "PID.N", as process directories and report headers name exec images */
		char pid[32];
		snprintf(pid, sizeof(pid), "%.*s", (int)(dot - text), text);
		if (cli_parse_uint(pid, 1, INT32_MAX, &value, err, errlen) == 0) {
			snprintf(err, errlen, "'%s' names one exec image of pid %s: give the pid (--pid %s selects all "
				 "its images)", text, pid, pid);
			return -1;
		}
	}
	if (cli_parse_uint(text, 1, INT32_MAX, &value, err, errlen) < 0)
		return -1;
	*out = (uint32_t)value;
	return 0;
}

/* If arg is name, or name followed by "=VALUE" (or, for a short name, by VALUE), returns
 * 1 and the attached value (NULL when the value must come from the next argument). */
static int option_matches(const char *arg, const char *name, int is_short, const char **attached)
{
	size_t n;

	if (name == NULL)
		return 0;
	n = strlen(name);
	if (strncmp(arg, name, n) != 0)
		return 0;
	if (arg[n] == '\0') {
		*attached = NULL;
		return 1;
	}
	if (arg[n] == '=') {
		*attached = arg + n + 1;
		return 1;
	}
	if (is_short) {
		*attached = arg + n;
		return 1;
	}
	return 0;
}

int cli_option_value(int argc, char **argv, int *index, const char *short_name,
		     const char *long_name, const char **value, char *err, size_t errlen)
{
	const char *arg = argv[*index], *attached = NULL;

	if (!option_matches(arg, short_name, 1, &attached) &&
	    !option_matches(arg, long_name, 0, &attached))
		return 0;
	if (attached != NULL) {
		*value = attached;
		return 1;
	}
	if (*index + 1 >= argc || strcmp(argv[*index + 1], "--") == 0) {
		snprintf(err, errlen, "option %s needs a value", arg);
		return -1;
	}
	(*index)++;
	*value = argv[*index];
	return 1;
}

int cli_is_flag(const char *arg, const char *short_name, const char *long_name)
{
	return (short_name != NULL && strcmp(arg, short_name) == 0) ||
	       (long_name != NULL && strcmp(arg, long_name) == 0);
}

const char *cli_format_size(uint64_t bytes, char *buf, size_t len)
{
	static const char *const names[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	unsigned unit = 0;
	uint64_t divisor = 1;

	while (unit + 1 < sizeof(names) / sizeof(names[0]) && bytes / divisor >= 1024) {
		divisor <<= 10;
		unit++;
	}
	if (bytes % divisor == 0)
		snprintf(buf, len, "%llu %s", (unsigned long long)(bytes / divisor), names[unit]);
	else
		snprintf(buf, len, "%.1f %s", (double)bytes / (double)divisor, names[unit]);
	return buf;
}

const char *cli_format_count(uint64_t count, char *buf, size_t len)
{
	char digits[32], grouped[48];
	int n = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)count);
	size_t out = 0;

	for (int i = 0; i < n; i++) {
		if (i > 0 && (n - i) % 3 == 0)
			grouped[out++] = ',';
		grouped[out++] = digits[i];
	}
	grouped[out] = '\0';
	snprintf(buf, len, "%s", grouped);
	return buf;
}

static int needs_shell_quoting(const char *text)
{
	if (*text == '\0')
		return 1;
	for (const char *p = text; *p; p++) {
		if (!isalnum((unsigned char)*p) && strchr("@%_+=:,./-", *p) == NULL)
			return 1;
	}
	return 0;
}

const char *cli_path_dir(const char *path, char *buf, size_t len)
{
	const char *slash = strrchr(path, '/');
	snprintf(buf, len, "%.*s", slash ? (int)(slash - path) + 1 : 1, slash ? path : ".");
	return buf;
}

int cli_output_errno(FILE *out)
{
	errno = 0;
	int flushed = fflush(out), error = errno;
	if (flushed == 0 && !ferror(out))
		return 0;
	return flushed != 0 && error ? error : EIO;
}

int cli_finish_output(const char *verb, FILE *out)
{
	int error = cli_output_errno(out);
	if (error == 0)
		return 0;
	cli_error("%s: writing the output: %s", verb, strerror(error));
	return 1;
}

int cli_check_output_path(const char *verb, const char *path)
{
	char dir[PATH_MAX];
	struct stat st;
	if (access(cli_path_dir(path, dir, sizeof(dir)), W_OK | X_OK) < 0) {
		cli_error("%s: %s: cannot write in %s: %s", verb, path, dir, strerror(errno));
		return 1;
	}
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		cli_error("%s: %s is a directory", verb, path);
		return 1;
	}
	return 0;
}

const char *cli_shell_quote(const char *text, char *buf, size_t len)
{
	size_t out = 0;

	if (len < 8) {
		if (len > 0)
			buf[0] = '\0';
		return buf;
	}
	if (!needs_shell_quoting(text)) {
		snprintf(buf, len, "%s", text);
		if (strlen(text) >= len)
			memcpy(buf + len - 4, "...", 4);
		return buf;
	}
	buf[out++] = '\'';
	for (const char *p = text; *p; p++) {
		const char *piece = *p == '\'' ? "'\\''" : NULL;
		size_t piece_len = piece ? 4 : 1;

		if (out + piece_len + 5 > len) {   /* room for "...'" and NUL */
			memcpy(buf + out, "...", 3);
			out += 3;
			break;
		}
		if (piece)
			memcpy(buf + out, piece, piece_len);
		else
			buf[out] = *p;
		out += piece_len;
	}
	buf[out++] = '\'';
	buf[out] = '\0';
	return buf;
}

int cli_usage_error(const char *verb, const char *fmt, ...)
{
	char line[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	cli_error("%s: %s (see faultline %s --help)", verb, line, verb);
	return CLI_EXIT_USAGE;
}

int cli_pick(const char *value, const char *const *names, size_t n, char *err, size_t errlen)
{
	size_t used;

	for (size_t i = 0; i < n; i++) {
		if (strcmp(value, names[i]) == 0)
			return (int)i;
	}
	used = (size_t)snprintf(err, errlen, "'%s' is not one of ", value);
	for (size_t i = 0; i < n && used < errlen; i++)
		used += (size_t)snprintf(err + used, errlen - used, "%s%s", i ? ", " : "", names[i]);
	return -1;
}

/* An operand: on_operand, or the one recording directory. 0, or CLI_EXIT_USAGE with err. */
static int operand(const struct cli_verb *v, const char *arg, char *err, size_t errlen)
{
	if (v->on_operand)
		return v->on_operand(v->ctx, arg, err, errlen) < 0 ? CLI_EXIT_USAGE : 0;
	if (*v->dir_slot) {
		snprintf(err, errlen, "one recording directory at most: '%s' and '%s' given", *v->dir_slot, arg);
		return CLI_EXIT_USAGE;
	}
	*v->dir_slot = arg;
	return 0;
}

/* argv[*i] as one of the table's options: OPTION_DONE handled, OPTION_STOP handled and stop,
 * 0 not in the table, CLI_EXIT_USAGE with err. */
enum { OPTION_DONE = 10, OPTION_STOP = 11 };
static int table_option(const struct cli_verb *v, int argc, char **argv, int *i, char *err, size_t errlen)
{
	char reason[512];

	for (size_t k = 0; k < v->nopts; k++) {
		const struct cli_opt *o = &v->opts[k];
		const char *value = NULL;
		int rc;
		if (o->takes_value == CLI_FLAG) {
			if (!cli_is_flag(argv[*i], o->short_name, o->long_name))
				continue;
		} else if ((rc = cli_option_value(argc, argv, i, o->short_name, o->long_name, &value, err, errlen)) == 0) {
			continue;
		} else if (rc < 0) {
			return CLI_EXIT_USAGE; /* "option --pid needs a value" */
		}
		rc = v->on_option(v->ctx, o->id, value, reason, sizeof(reason));
		if (rc < 0) {
			snprintf(err, errlen, "%s%s%s: %s", o->short_name ? o->short_name : "",
				 o->short_name && o->long_name ? "/" : "", o->long_name ? o->long_name : "", reason);
			return CLI_EXIT_USAGE;
		}
		return rc == 1 ? OPTION_STOP : OPTION_DONE;
	}
	return 0;
}

static FILE *table_listing;

void cli_list_tables(FILE *out)
{
	table_listing = out;
}

static void list_option(FILE *out, const char *short_name, const char *long_name, int takes_value)
{
	fprintf(out, "%s %s %s\n", short_name ? short_name : "-", long_name ? long_name : "-",
		takes_value == CLI_VALUE ? "value" : "flag");
}

void cli_list_table_if_asked(const struct cli_verb *v)
{
	FILE *out = table_listing;
	bool help_in_table = false;

	if (out == NULL)
		return;
	fprintf(out, "operands %s\n", v->on_operand ? "recordings" : v->dir_slot ? "dir" : "command");
	for (size_t k = 0; k < v->nopts; k++) {
		list_option(out, v->opts[k].short_name, v->opts[k].long_name, v->opts[k].takes_value);
		help_in_table |= v->opts[k].long_name && strcmp(v->opts[k].long_name, "--help") == 0;
	}
	if (v->usage && !help_in_table)
		list_option(out, "-h", "--help", CLI_FLAG);
	int error = cli_output_errno(out);
	if (error) {
		cli_error("%s: listing the options: %s", v->name, strerror(error));
		exit(1);
	}
	exit(0);
}

int cli_parse_options(const struct cli_verb *v, int argc, char **argv, int *next, char *err, size_t errlen)
{
	bool options_done = false, operands = v->on_operand || v->dir_slot;
	int i;

	cli_list_table_if_asked(v);
	for (i = 1; i < argc; i++) {
		const char *arg = argv[i];
		int rc = 0;
		if (options_done || arg[0] != '-' || arg[1] == '\0') {
			if (!operands)
				break;
			rc = operand(v, arg, err, errlen);
		} else if (strcmp(arg, "--") == 0) {
			if (!operands) {
				i++;
				break;
			}
			options_done = true;
		} else if (v->usage && cli_is_flag(arg, "-h", "--help")) {
			v->usage(stdout);
			return -1;
		} else if ((rc = table_option(v, argc, argv, &i, err, errlen)) == 0) {
			snprintf(err, errlen, "unknown option '%s'", arg);
			rc = CLI_EXIT_USAGE;
		} else if (rc == OPTION_STOP) {
			i++;
			break;
		} else if (rc == OPTION_DONE) {
			rc = 0;
		}
		if (rc != 0)
			return rc;
	}
	*next = i;
	return 0;
}

int cli_parse_verb(const struct cli_verb *v, int argc, char **argv)
{
	char err[768];
	int next, rc = cli_parse_options(v, argc, argv, &next, err, sizeof(err));

	if (rc == CLI_EXIT_USAGE)
		cli_usage_error(v->name, "%s", err);
	return rc;
}

int cli_append_value(char ***list, size_t *n, const char *value, char *err, size_t errlen)
{
	char **grown = realloc(*list, (*n + 1) * sizeof(*grown));
	if (!grown) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	*list = grown;
	grown[(*n)++] = (char *)value;
	return 0;
}
