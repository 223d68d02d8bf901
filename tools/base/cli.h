/* cli.h: helpers shared by every `faultline` verb — the table-driven option parser, option
 * matching in all the usual spellings, strict number and size parsing, human-readable sizes, and the one format of
 * messages on stderr ("faultline: ...").
 *
 * Parsers never print: they return 0 on success or -1 with a one-line reason in err, so the
 * caller decides how to report and tests can check the reason. */
#ifndef FAULTLINE_TOOLS_CLI_H
#define FAULTLINE_TOOLS_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CLI_KIB ((uint64_t)1 << 10)
#define CLI_MIB ((uint64_t)1 << 20)
#define CLI_GIB ((uint64_t)1 << 30)
#define CLI_TIB ((uint64_t)1 << 40)

/* Exit status for usage errors (bad option, bad value, refused request). */
#define CLI_EXIT_USAGE 2

/* Prints "faultline: <message>\n" on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Parses a size: a decimal number with an optional binary unit, case-insensitive:
 *   B (bytes), K/KB/KiB, M/MB/MiB, G/GB/GiB, T/TB/TiB.
 * A number without a unit is in default_unit bytes. A decimal fraction is accepted
 * ("1.5G", at most 9 fractional digits) and rounded up to a whole byte. Rejects empty
 * text, signs, spaces, hex, unknown units and results that do not fit in 64 bits. */
int cli_parse_size(const char *text, uint64_t default_unit, uint64_t *out, char *err, size_t errlen);

/* Parses a plain decimal integer in [min, max] (no sign, no unit, no spaces). */
int cli_parse_uint(const char *text, uint64_t min, uint64_t max, uint64_t *out, char *err, size_t errlen);

/* --pid PID: a pid (1 .. 2^31 - 1) into *out; 0, or -1 with a reason in err ("PID.N", an exec image
 * as process directories name them, is refused with a hint: a pid selects all its images). */
int cli_parse_pid(const char *text, uint32_t *out, char *err, size_t errlen);

/* Appends VALUE (an argv string, not copied) to the growing list *list of *n entries, for an
 * option given several times (--skip). 0, or -1 with "out of memory" in err. */
int cli_append_value(char ***list, size_t *n, const char *value, char *err, size_t errlen);

/* Matches argv[*index] against an option that takes a value, in any of the forms
 *   -L VALUE   -LVALUE   -L=VALUE   --local VALUE   --local=VALUE
 * (short_name "-L" or NULL, long_name "--local" or NULL). Returns 1 and sets *value and
 * advances *index past the value when it matches, 0 when argv[*index] is another option,
 * -1 with a reason in err when the option is given without its value (last argument,
 * or followed by "--"). */
int cli_option_value(int argc, char **argv, int *index, const char *short_name,
		     const char *long_name, const char **value, char *err, size_t errlen);

/* True when arg is exactly short_name or long_name (either may be NULL). */
int cli_is_flag(const char *arg, const char *short_name, const char *long_name);

/* ---- the one option parser of the verbs: a table of options, a handler, consistent errors ----
 *
 * A verb describes its options in a table and handles each one by its id:
 *
 *     static const struct cli_opt opts[] = {
 *         { "-o", "--output", CLI_VALUE, OPT_OUTPUT },
 *         { NULL, "--reverse", CLI_FLAG, OPT_REVERSE },
 *     };
 *
 * The parser walks argv[1..]: -h/--help prints the verb's usage on stdout (when it has one); an
 * option of the table (in every spelling of cli_option_value) goes to on_option with its value
 * (NULL for a flag); any other word, "-" alone and everything after "--" is an operand. Every
 * error names the option the same way, and cli_parse_verb prints it in one form:
 *     faultline: VERB: unknown option '--bogus' (see faultline VERB --help)
 *     faultline: VERB: option --top needs a value (see faultline VERB --help)
 *     faultline: VERB: -o/--output: REASON (see faultline VERB --help)
 *     faultline: VERB: REASON (see faultline VERB --help)          (from on_operand) */
enum { CLI_FLAG = 0, CLI_VALUE = 1 };

struct cli_opt {
	const char *short_name; /* "-o", or NULL */
	const char *long_name;  /* "--output", or NULL */
	int takes_value;        /* CLI_FLAG or CLI_VALUE */
	int id;                 /* what on_option switches on */
};

struct cli_verb {
	const char *name;                 /* "report": the word in messages */
	void (*usage)(FILE *out);         /* printed for -h/--help; NULL: the table handles them */
	const struct cli_opt *opts;
	size_t nopts;
	/* 0 to go on, 1 to stop parsing (success), or -1 with the value's problem in err */
	int (*on_option)(void *ctx, int id, const char *value, char *err, size_t errlen);
	/* 0 to go on, or -1 with a reason in err (reported as it is). NULL: see dir_slot */
	int (*on_operand)(void *ctx, const char *arg, char *err, size_t errlen);
	/* without on_operand: the verb takes at most one operand, a recording directory, stored
	 * here; with neither, options end at the first operand (a command to run: record) */
	const char **dir_slot;
	void *ctx;
};

/* Parses argv (argv[0] the verb) without printing anything but --help. Returns 0 with *next the
 * index of the first operand left (argc when none: only verbs with neither on_operand nor
 * dir_slot leave any), -1 after --help (exit 0), or CLI_EXIT_USAGE with the reason in err. */
int cli_parse_options(const struct cli_verb *v, int argc, char **argv, int *next, char *err, size_t errlen);

/* cli_parse_options, and a usage error printed in the one form above. Returns 0 to run, -1
 * after --help, or CLI_EXIT_USAGE. */
int cli_parse_verb(const struct cli_verb *v, int argc, char **argv);

/* ---- the option tables, listed for the shell completion (faultline __options VERB) ----
 *
 * After cli_list_tables(out), the next verb to parse its options does not: cli_parse_options
 * (and cli_list_table_if_asked, for a verb with a parser of its own) prints the verb's table on
 * out and the process exits 0. One line per option, "SHORT LONG flag|value" ("-" for a missing
 * name; -h --help included), after one line saying what the operands are:
 *     operands dir          at most one recording directory (dir_slot)
 *     operands recordings   recording directories (on_operand: diff's A and B)
 *     operands command      a command to run (neither: record, sweep)
 * So the completion is generated from the tables the parser walks, and cannot drift from them. */
void cli_list_tables(FILE *out);

/* Lists v's table and exits 0 when cli_list_tables asked for it; returns otherwise. */
void cli_list_table_if_asked(const struct cli_verb *v);

/* Prints "faultline: VERB: <message> (see faultline VERB --help)"; returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* VALUE's index among the N names, or -1 with "'VALUE' is not one of a, b, c" in err. */
int cli_pick(const char *value, const char *const *names, size_t n, char *err, size_t errlen);

/* Formats bytes for people: "512 B", "4 KiB", "63.9 MiB" (one decimal unless exact).
 * Returns buf. */
const char *cli_format_size(uint64_t bytes, char *buf, size_t len);

/* Formats a count with thousands separators: "1,234,567". Returns buf. */
const char *cli_format_count(uint64_t count, char *buf, size_t len);

/* The directory part of PATH, with its last slash ("out/d.svg" -> "out/", "/x" -> "/"), or "." for a
 * bare name, into buf. Returns buf. */
const char *cli_path_dir(const char *path, char *buf, size_t len);

/* Flushes OUT and checks that everything written to it arrived: 0, or why not (the flush's errno,
 * or EIO when only the stream's error flag tells: an earlier write failed). */
int cli_output_errno(FILE *out);

/* cli_output_errno, said: 0, or 1 after "VERB: writing the output: REASON". */
int cli_finish_output(const char *verb, FILE *out);

/* Whether VERB can write an output file at PATH, checked before any work: its directory exists and
 * is writable, and PATH is not a directory. 0, or 1 after saying why ("VERB: PATH: cannot write in
 * DIR: reason"). */
int cli_check_output_path(const char *verb, const char *path);

/* Quotes text for a POSIX shell when it needs quoting ('it'\''s'), so that a printed
 * command can be pasted back. Returns buf; text longer than len is cut with "...". */
const char *cli_shell_quote(const char *text, char *buf, size_t len);

#endif
