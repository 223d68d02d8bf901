/* test_cli.c: unit tests of the command-line front end — size and number parsing
 * (tools/cli.c), `record`'s argument parser and LD_PRELOAD composition (tools/record.c),
 * and the flat JSON reader (tools/stats_json.c), including malformed input.
 * Prints each failure with file:line, ends with a summary line, exits 1 on any failure. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "record.h"
#include "stats_json.h"

#include "check.h"
#define ARGC(argv) ((int)(sizeof(argv) / sizeof((argv)[0])) - 1)

/* ------------------------------------------------------------------ sizes and numbers */

#define SIZE_OK(text, expected) size_ok(text, expected, __FILE__, __LINE__)
static void size_ok(const char *text, uint64_t expected, const char *file, int line)
{
	uint64_t got = 0;
	char err[256] = "";
	int rc = cli_parse_size(text, CLI_MIB, &got, err, sizeof(err));

	check_at(rc == 0 && got == expected, file, line, "size '%s': rc %d, got %llu, want %llu (%s)",
		 text, rc, (unsigned long long)got, (unsigned long long)expected, err);
}

#define SIZE_BAD(text, reason) size_bad(text, reason, __FILE__, __LINE__)
static void size_bad(const char *text, const char *reason, const char *file, int line)
{
	uint64_t got = 0;
	char err[256] = "";
	int rc = cli_parse_size(text, CLI_MIB, &got, err, sizeof(err));

	check_at(rc == -1 && strstr(err, reason) != NULL, file, line,
		 "size '%s': rc %d (got %llu), err \"%s\", want an error with \"%s\"", text, rc,
		 (unsigned long long)got, err, reason);
}

static void test_sizes(void)
{
	SIZE_OK("64", 64 * CLI_MIB);             /* bare number: MiB */
	SIZE_OK("0", 0);
	SIZE_OK("64M", 64 * CLI_MIB);
	SIZE_OK("64m", 64 * CLI_MIB);
	SIZE_OK("64MiB", 64 * CLI_MIB);
	SIZE_OK("64mib", 64 * CLI_MIB);
	SIZE_OK("64MB", 64 * CLI_MIB);
	SIZE_OK("4K", 4096);
	SIZE_OK("4k", 4096);
	SIZE_OK("4KiB", 4096);
	SIZE_OK("1G", CLI_GIB);
	SIZE_OK("1g", CLI_GIB);
	SIZE_OK("1GiB", CLI_GIB);
	SIZE_OK("2T", 2 * CLI_TIB);
	SIZE_OK("2tib", 2 * CLI_TIB);
	SIZE_OK("4096B", 4096);
	SIZE_OK("7b", 7);
	SIZE_OK("007", 7 * CLI_MIB);
	SIZE_OK("1.5G", CLI_GIB + CLI_GIB / 2);
	SIZE_OK("0.5", CLI_MIB / 2);
	SIZE_OK("0.25k", 256);
	SIZE_OK("0.1K", 103);                    /* 102.4 bytes, rounded up */
	SIZE_OK("1.000000001G", CLI_GIB + 2);    /* 1.073741824 bytes, rounded up */
	SIZE_OK("18446744073709551615B", UINT64_MAX);
	SIZE_OK("16777215T", 16777215 * CLI_TIB);

	SIZE_BAD("", "empty");
	SIZE_BAD(NULL, "empty");
	SIZE_BAD("-1", "positive");
	SIZE_BAD("-0", "positive");
	SIZE_BAD("+1", "positive");
	SIZE_BAD(" 1", "expected a number");
	SIZE_BAD("1 ", "unknown unit");
	SIZE_BAD("1 M", "unknown unit");
	SIZE_BAD("abc", "expected a number");
	SIZE_BAD("M", "expected a number");
	SIZE_BAD(".5G", "expected a number");
	SIZE_BAD("1.", "digits after '.'");
	SIZE_BAD("1.G", "digits after '.'");
	SIZE_BAD("1.5.5", "unknown unit");
	SIZE_BAD("1,5G", "unknown unit");
	SIZE_BAD("1.0000000001G", "digits after '.'");
	SIZE_BAD("0x10", "unknown unit");
	SIZE_BAD("12Q", "unknown unit 'Q'");
	SIZE_BAD("1KK", "unknown unit");
	SIZE_BAD("1Mi", "unknown unit");
	SIZE_BAD("1e3", "unknown unit");
	SIZE_BAD("18446744073709551616B", "too large");   /* 2^64 */
	SIZE_BAD("99999999999999999999999", "too large");
	SIZE_BAD("17179869184G", "too large");            /* exactly 2^64 bytes */
	SIZE_BAD("16777216T", "too large");
	SIZE_BAD("18446744073709551615.5B", "too large");   /* the fraction overflows */
}

#define UINT_OK(text, min, max, expected) do { \
		uint64_t got_ = 0; char err_[256] = ""; \
		int rc_ = cli_parse_uint(text, min, max, &got_, err_, sizeof(err_)); \
		CHECK(rc_ == 0 && got_ == (expected), "uint '%s': rc %d got %llu (%s)", text, rc_, \
		      (unsigned long long)got_, err_); \
	} while (0)
#define UINT_BAD(text, min, max, reason) do { \
		uint64_t got_ = 0; char err_[256] = ""; \
		int rc_ = cli_parse_uint(text, min, max, &got_, err_, sizeof(err_)); \
		CHECK(rc_ == -1 && strstr(err_, reason), "uint '%s': rc %d, err \"%s\", want \"%s\"", \
		      text ? text : "(null)", rc_, err_, reason); \
	} while (0)

static void test_numbers(void)
{
	UINT_OK("0", 0, 10, 0);
	UINT_OK("10", 0, 10, 10);
	UINT_OK("256", 0, 256, 256);
	UINT_OK("18446744073709551615", 0, UINT64_MAX, UINT64_MAX);
	UINT_BAD("11", 0, 10, "between 0 and 10");
	UINT_BAD("0", 1, 10, "between 1 and 10");
	UINT_BAD("18446744073709551616", 0, UINT64_MAX, "between");
	UINT_BAD("-1", 0, 10, "plain decimal");
	UINT_BAD("+1", 0, 10, "plain decimal");
	UINT_BAD("1a", 0, 10, "plain decimal");
	UINT_BAD(" 1", 0, 10, "plain decimal");
	UINT_BAD("1.0", 0, 10, "plain decimal");
	UINT_BAD("", 0, 10, "empty");
	UINT_BAD(NULL, 0, 10, "empty");

	char err[256];
	uint32_t pid = 0;
	CHECK(cli_parse_pid("4242", &pid, err, sizeof(err)) == 0 && pid == 4242, "--pid 4242: %u", pid);
	CHECK(cli_parse_pid("4242.1", &pid, err, sizeof(err)) < 0 &&
	      strstr(err, "names one exec image of pid 4242") && strstr(err, "--pid 4242 selects all its images"),
	      "--pid 4242.1: %s", err);
	CHECK(cli_parse_pid("0", &pid, err, sizeof(err)) < 0 && strstr(err, "between 1"), "--pid 0: %s", err);
	CHECK(cli_parse_pid(".1", &pid, err, sizeof(err)) < 0 && strstr(err, "plain decimal"), "--pid .1: %s", err);
}

static void test_formatting(void)
{
	char buf[64];

	CHECK(strcmp(cli_format_size(0, buf, sizeof(buf)), "0 B") == 0, "0 -> %s", buf);
	CHECK(strcmp(cli_format_size(1023, buf, sizeof(buf)), "1023 B") == 0, "1023 -> %s", buf);
	CHECK(strcmp(cli_format_size(4096, buf, sizeof(buf)), "4 KiB") == 0, "4096 -> %s", buf);
	CHECK(strcmp(cli_format_size(67004416, buf, sizeof(buf)), "63.9 MiB") == 0, "63.9M -> %s", buf);
	CHECK(strcmp(cli_format_size(3 * CLI_GIB / 2, buf, sizeof(buf)), "1.5 GiB") == 0, "1.5G -> %s", buf);
	CHECK(strcmp(cli_format_size(64 * CLI_TIB, buf, sizeof(buf)), "64 TiB") == 0, "64T -> %s", buf);
	CHECK(strcmp(cli_format_count(0, buf, sizeof(buf)), "0") == 0, "count 0 -> %s", buf);
	CHECK(strcmp(cli_format_count(999, buf, sizeof(buf)), "999") == 0, "count 999 -> %s", buf);
	CHECK(strcmp(cli_format_count(1000, buf, sizeof(buf)), "1,000") == 0, "count 1000 -> %s", buf);
	CHECK(strcmp(cli_format_count(1234567, buf, sizeof(buf)), "1,234,567") == 0, "-> %s", buf);
	CHECK(strcmp(cli_format_count(UINT64_MAX, buf, sizeof(buf)), "18,446,744,073,709,551,615") == 0,
	      "count max -> %s", buf);
	CHECK(strcmp(cli_path_dir("out/d.svg", buf, sizeof(buf)), "out/") == 0, "dir of out/d.svg -> %s", buf);
	CHECK(strcmp(cli_path_dir("/x", buf, sizeof(buf)), "/") == 0, "dir of /x -> %s", buf);
	CHECK(strcmp(cli_path_dir("d.svg", buf, sizeof(buf)), ".") == 0, "dir of d.svg -> %s", buf);
	CHECK(strcmp(cli_shell_quote("faultline-sh-12", buf, sizeof(buf)), "faultline-sh-12") == 0, "%s", buf);
	CHECK(strcmp(cli_shell_quote("a b", buf, sizeof(buf)), "'a b'") == 0, "quote 'a b' -> %s", buf);
	CHECK(strcmp(cli_shell_quote("it's", buf, sizeof(buf)), "'it'\\''s'") == 0, "quote it's -> %s", buf);
	CHECK(strcmp(cli_shell_quote("", buf, sizeof(buf)), "''") == 0, "quote empty -> %s", buf);
	CHECK(strlen(cli_shell_quote("a very long name with spaces that does not fit", buf, 16)) < 16,
	      "quote truncation -> %s", buf);
}

/* ------------------------------------------------------------------ option matching */

static void test_option_forms(void)
{
	char *forms[][4] = {
		{ "-L", "64", NULL, NULL }, { "-L64", NULL, NULL, NULL }, { "-L=64", NULL, NULL, NULL },
		{ "--local", "64", NULL, NULL }, { "--local=64", NULL, NULL, NULL },
	};

	for (size_t k = 0; k < sizeof(forms) / sizeof(forms[0]); k++) {
		int argc = forms[k][1] ? 2 : 1, i = 0;
		const char *value = NULL;
		char err[128] = "";
		int rc = cli_option_value(argc, forms[k], &i, "-L", "--local", &value, err, sizeof(err));

		CHECK(rc == 1 && value && strcmp(value, "64") == 0 && i == argc - 1,
		      "form %s: rc %d value %s index %d", forms[k][0], rc, value ? value : "(null)", i);
	}
	{
		char *argv[] = { "--localx=3", "-M", "--", NULL };
		const char *value = NULL;
		char err[128] = "";
		int i = 0;

		CHECK(cli_option_value(3, argv, &i, "-L", "--local", &value, err, sizeof(err)) == 0,
		      "--localx is not --local");
		i = 1;
		CHECK(cli_option_value(3, argv, &i, "-M", "--max", &value, err, sizeof(err)) == -1 &&
		      strstr(err, "needs a value"), "-M followed by -- has no value: %s", err);
		i = 1;
		CHECK(cli_option_value(2, argv, &i, "-M", "--max", &value, err, sizeof(err)) == -1 &&
		      strstr(err, "-M needs a value"), "-M at the end has no value: %s", err);
	}
	CHECK(cli_is_flag("-q", "-q", "--quiet") && cli_is_flag("--quiet", "-q", "--quiet") &&
	      !cli_is_flag("-qq", "-q", "--quiet") && !cli_is_flag("--force", NULL, "--forc"),
	      "cli_is_flag");
}

/* ------------------------------------------------------------------ record's parser */

#define PARSE_OK(argv, o) parse_ok(ARGC(argv), argv, o, __FILE__, __LINE__)
static int parse_ok(int argc, char **argv, struct record_options *o, const char *file, int line)
{
	char err[512] = "";
	int rc = record_parse_args(argc, argv, o, err, sizeof(err));

	check_at(rc == 0, file, line, "parse of '%s %s ...' failed: %s", argv[0], argc > 1 ? argv[1] : "", err);
	return rc;
}

#define PARSE_BAD(argv, reason) parse_bad(ARGC(argv), argv, reason, __FILE__, __LINE__)
static void parse_bad(int argc, char **argv, const char *reason, const char *file, int line)
{
	struct record_options o;
	char err[512] = "";
	int rc = record_parse_args(argc, argv, &o, err, sizeof(err));

	check_at(rc == -1 && strstr(err, reason) != NULL, file, line,
		 "parse of '%s %s' should fail with \"%s\": rc %d, err \"%s\"", argv[1],
		 argc > 2 ? argv[2] : "", reason, rc, err);
}

static void test_record_local_forms(void)
{
	char *a1[] = { "record", "-L", "64", "-M", "1G", "true", NULL };
	char *a2[] = { "record", "-L64", "-M1G", "true", NULL };
	char *a3[] = { "record", "-L=64", "-M=1G", "true", NULL };
	char *a4[] = { "record", "--local", "64", "--max", "1G", "true", NULL };
	char *a5[] = { "record", "--local=64", "--max=1G", "true", NULL };
	char **all[] = { a1, a2, a3, a4, a5 };
	int counts[] = { ARGC(a1), ARGC(a2), ARGC(a3), ARGC(a4), ARGC(a5) };

	for (int k = 0; k < 5; k++) {
		struct record_options o;
		char err[512] = "";
		int rc = record_parse_args(counts[k], all[k], &o, err, sizeof(err));

		CHECK(rc == 0 && o.local_bytes == 64 * CLI_MIB && o.max_bytes == CLI_GIB && o.max_given &&
		      o.command_argc == 1 && strcmp(o.command[0], "true") == 0,
		      "form %d (%s): rc %d local %llu max %llu err %s", k + 1, all[k][1], rc,
		      (unsigned long long)o.local_bytes, (unsigned long long)o.max_bytes, err);
	}
}

/* -s 0: no fault stacks (allocation sites kept) */
static void test_record_sample_zero(void)
{
	char *argv[] = { "record", "-s", "0", "prog", NULL };
	struct record_options o;

	if (PARSE_OK(argv, &o) != 0)
		return;
	CHECK(o.sample == 0 && o.stack_depth == 64, "-s 0: sample %u, stack depth %u", o.sample, o.stack_depth);
}

static void test_record_defaults(void)
{
	char *argv[] = { "record", "prog", NULL };
	struct record_options o;
	uint64_t ram = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);

	if (PARSE_OK(argv, &o) != 0)
		return;
	CHECK(o.local_bytes == 0, "default -L is unlimited (0), got %llu", (unsigned long long)o.local_bytes);
	CHECK(!o.max_given && o.max_bytes >= ram && o.max_bytes - ram < 4096 && o.max_bytes % 4096 == 0,
	      "default -M is the RAM (%llu), got %llu", (unsigned long long)ram,
	      (unsigned long long)o.max_bytes);
	CHECK(o.handlers == 0 && strcmp(o.policy, "clock") == 0 && o.sample == 1 && o.stack_depth == 64 &&
	      o.alloc_sample == 0 /* follows -s */ && strcmp(o.far, "mem") == 0 && o.pmu == NULL && o.output == NULL &&
	      !o.force && !o.quiet && !o.help, "defaults");
}

static void test_record_all_options(void)
{
	char *argv[] = { "record", "-c", "4", "--policy", "fifo", "-o", "out", "--force", "-s5",
			 "--stack-depth=32", "--pmu", "task-clock,page-faults", "--alloc-sample", "10",
			 "--far=mem", "-q", "-M", "2097153B", "-L", "1048577B", "--", "prog", NULL };
	struct record_options o;

	if (PARSE_OK(argv, &o) != 0)
		return;
	CHECK(o.handlers == 4 && strcmp(o.policy, "fifo") == 0 && strcmp(o.output, "out") == 0 && o.force &&
	      o.sample == 5 && o.stack_depth == 32 && strcmp(o.pmu, "task-clock,page-faults") == 0 &&
	      o.alloc_sample == 10 && strcmp(o.far, "mem") == 0 && o.quiet,
	      "all options applied");
	CHECK(o.local_bytes == 1052672 && o.max_bytes == 2101248, "sizes rounded up to pages: L %llu M %llu",
	      (unsigned long long)o.local_bytes, (unsigned long long)o.max_bytes);
	{
		char *more[] = { "record", "-oDIR", "--output=DIR2", "-c=256", "-L", "unlimited", "x", NULL };

		if (PARSE_OK(more, &o) == 0)
			CHECK(strcmp(o.output, "DIR2") == 0 && o.handlers == 256 && o.local_bytes == 0,
			      "later option wins, -c 256, -L unlimited");
	}
	{
		char *round[] = { "record", "-L", "1025K", "-M", "2049K", "x", NULL };

		if (PARSE_OK(round, &o) == 0)
			CHECK(o.local_bytes == 1052672 && o.max_bytes == 2101248, "1025K -> 1052672, 2049K -> 2101248");
	}
}

static void test_record_sizes_rejected(void)
{
	char *l_gt_m[] = { "record", "-L", "2G", "-M", "1G", "x", NULL };
	char *l_gt_m_rounded[] = { "record", "-L", "2097153B", "-M", "2097152B", "x", NULL };
	char *m_zero[] = { "record", "-M", "0", "x", NULL };
	char *m_zero_bytes[] = { "record", "-M", "0B", "x", NULL };
	char *m_huge[] = { "record", "-M", "33T", "x", NULL };
	char *m_small[] = { "record", "-M", "1M", "x", NULL };
	char *l_small[] = { "record", "-L", "512K", "x", NULL };
	char *l_bad[] = { "record", "-L", "lots", "x", NULL };
	char *l_neg[] = { "record", "-L=-64", "x", NULL };
	char *l_over[] = { "record", "--local", "99999999999T", "x", NULL };
	char *l_over_ram[] = { "record", "-L", "1048576T", "x", NULL };
	char *l_missing[] = { "record", "-L", NULL };
	char *l_missing_dd[] = { "record", "-L", "--", "x", NULL };
	struct record_options o;
	char *l_eq_m[] = { "record", "-L", "1G", "-M", "1G", "x", NULL };

	PARSE_BAD(l_gt_m, "larger than -M");
	PARSE_BAD(l_gt_m_rounded, "larger than -M");
	PARSE_BAD(m_zero, "-M/--max: the region size must be larger than 0");
	PARSE_BAD(m_zero_bytes, "larger than 0");
	PARSE_BAD(m_huge, "-M/--max: at most 32 TiB");
	PARSE_BAD(m_small, "-M/--max: at least 2 MiB");
	PARSE_BAD(l_small, "-L/--local: at least 1 MiB");
	PARSE_BAD(l_bad, "-L/--local: invalid size 'lots'");
	PARSE_BAD(l_neg, "invalid size '-64'");
	PARSE_BAD(l_over, "too large");
	PARSE_BAD(l_over_ram, "larger than -M");
	PARSE_BAD(l_missing, "needs a value");
	PARSE_BAD(l_missing_dd, "needs a value");
	if (PARSE_OK(l_eq_m, &o) == 0)
		CHECK(o.local_bytes == o.max_bytes, "-L == -M is fine");
}

static void test_record_other_rejections(void)
{
	char *no_cmd[] = { "record", "-M", "64", NULL };
	char *only_dd[] = { "record", "--", NULL };
	char *empty_cmd[] = { "record", "", "x", NULL };
	char *unknown[] = { "record", "--bogus", "x", NULL };
	char *unknown_short[] = { "record", "-Z", "x", NULL };
	char *policy[] = { "record", "--policy", "lru", "x", NULL };
	char *far[] = { "record", "--far", "tape:/tmp/x", "x", NULL };
	char *handlers[] = { "record", "-c", "257", "x", NULL };
	char *sample[] = { "record", "-s", "1000000001", "x", NULL };
	char *depth[] = { "record", "--stack-depth", "257", "x", NULL };
	char *alloc[] = { "record", "--alloc-sample", "-1", "x", NULL };
	char *pmu[] = { "record", "--pmu=", "x", NULL };
	char *output[] = { "record", "-o", "", "x", NULL };

	PARSE_BAD(no_cmd, "no command");
	PARSE_BAD(only_dd, "no command");
	PARSE_BAD(empty_cmd, "empty command");
	PARSE_BAD(unknown, "unknown option '--bogus'");
	PARSE_BAD(unknown_short, "unknown option '-Z'");
	PARSE_BAD(policy, "--policy: unknown policy 'lru'");
	PARSE_BAD(far, "unknown far store 'tape:/tmp/x'");
	PARSE_BAD(handlers, "-c/--handlers: invalid number '257': must be between 0 and 256");
	PARSE_BAD(sample, "between 0 and 1000000000");
	PARSE_BAD(depth, "between 0 and 256");
	PARSE_BAD(alloc, "--alloc-sample");
	PARSE_BAD(pmu, "--pmu");
	PARSE_BAD(output, "empty directory");
}

static void test_record_command_start(void)
{
	char *after_dd[] = { "record", "-M", "64", "--", "-L", "x", NULL };
	char *first_plain[] = { "record", "-M", "64", "sh", "-c", "exit 3", "--", "-L", NULL };
	char *empties[] = { "record", "--", "prog", "", "a b", "", NULL };
	char *dash[] = { "record", "-", "x", NULL };
	char *help[] = { "record", "-q", "--help", NULL };
	char *help_bad_later[] = { "record", "-h", "--bogus", NULL };
	struct record_options o;

	if (PARSE_OK(after_dd, &o) == 0)
		CHECK(o.command_argc == 2 && strcmp(o.command[0], "-L") == 0 && strcmp(o.command[1], "x") == 0 &&
		      o.command[2] == NULL && o.local_bytes == 0, "command after --");
	if (PARSE_OK(first_plain, &o) == 0)
		CHECK(o.command_argc == 5 && strcmp(o.command[0], "sh") == 0 && strcmp(o.command[1], "-c") == 0 &&
		      strcmp(o.command[3], "--") == 0 && strcmp(o.command[4], "-L") == 0 && o.local_bytes == 0,
		      "the command starts at the first non-option; its options are its own");
	if (PARSE_OK(empties, &o) == 0)
		CHECK(o.command_argc == 4 && strcmp(o.command[1], "") == 0 && strcmp(o.command[2], "a b") == 0 &&
		      strcmp(o.command[3], "") == 0 && o.command[4] == NULL, "empty arguments preserved");
	if (PARSE_OK(dash, &o) == 0)
		CHECK(strcmp(o.command[0], "-") == 0, "'-' alone is a command name");
	if (PARSE_OK(help, &o) == 0)
		CHECK(o.help && o.quiet, "--help without a command");
	if (PARSE_OK(help_bad_later, &o) == 0)
		CHECK(o.help, "-h stops parsing");
}

static void test_ld_preload(void)
{
	struct { const char *existing, *want; } cases[] = {
		{ NULL, "/x/libfaultline.so" },
		{ "", "/x/libfaultline.so" },
		{ "/a/liba.so", "/a/liba.so:/x/libfaultline.so" },
		{ "/a/liba.so /b/libb.so", "/a/liba.so /b/libb.so:/x/libfaultline.so" },
		{ "/x/libfaultline.so", "/x/libfaultline.so" },
		{ "/a/liba.so:/x/libfaultline.so", "/a/liba.so:/x/libfaultline.so" },
		{ "/x/libfaultline.so.old", "/x/libfaultline.so.old:/x/libfaultline.so" },
	};

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		char *got = record_ld_preload(cases[k].existing, "/x/libfaultline.so");

		CHECK(got && strcmp(got, cases[k].want) == 0, "LD_PRELOAD from '%s': got '%s', want '%s'",
		      cases[k].existing ? cases[k].existing : "(unset)", got ? got : "(null)", cases[k].want);
		free(got);
	}
}

/* ------------------------------------------------------------------ stats_json */

static const char stats_example[] =
	"{\n"
	"  \"wall_ns\": 123456789, \"pid\" : 4242,\n"
	"\t\"faults_total\":1234,\"faults_first_touch\": 1000, \"faults_refault\": 200,\r\n"
	"  \"faults_soft\": 30, \"faults_concurrent\": 4, \"evictions\": 300, \"writebacks\": 120,\n"
	"  \"evictions_clean\": 180, \"soft_evictions\": 0, \"peak_resident_bytes\": 67004416,\n"
	"  \"local_limit_bytes\": 67108864, \"max_bytes\": 1073741824, \"peak_heap_bytes\": 12582912,\n"
	"  \"records_written\": 1234, \"records_dropped\": 0, \"exit\": \"normal\",\n"
	"  \"future_real\": 1.5e3, \"future_obj\": {\"a\": [1, {\"b\": null}], \"c\": \"}\"},\n"
	"  \"future_neg\": -17, \"flag\": true, \"off\": false, \"nothing\": null,\n"
	"  \"cmdline\": [\"sh\", \"-c\", \"echo \\\"hi\\\"\", \"\"], \"empty\": [], \"mixed\": [\"a\", 1]\n"
	"}\n";

static void test_stats_json_good(void)
{
	struct flat_json j;
	char err[256] = "";
	int64_t v = 0;
	uint64_t u = 0;
	char *const *strings = NULL;
	size_t n = 99;

	if (stats_json_parse(stats_example, strlen(stats_example), &j, err, sizeof(err)) != 0) {
		CHECK(0, "stats example rejected: %s", err);
		return;
	}
	CHECK(j.count == 27, "27 members, got %zu", j.count);
	CHECK(stats_json_int(&j, "pid", &v) == 0 && v == 4242, "pid");
	CHECK(stats_json_uint(&j, "faults_total", &u) == 0 && u == 1234, "faults_total");
	CHECK(stats_json_uint(&j, "peak_resident_bytes", &u) == 0 && u == 67004416, "peak_resident_bytes");
	CHECK(stats_json_int(&j, "future_neg", &v) == 0 && v == -17, "negative integer");
	CHECK(stats_json_uint(&j, "future_neg", &u) == -1, "uint refuses a negative");
	CHECK(stats_json_string(&j, "exit") && strcmp(stats_json_string(&j, "exit"), "normal") == 0, "exit");
	CHECK(stats_json_string(&j, "pid") == NULL && stats_json_int(&j, "exit", &v) == -1, "type checks");
	CHECK(stats_json_int(&j, "absent", &v) == -1 && stats_json_find(&j, "absent") == NULL, "missing key");
	CHECK(stats_json_find(&j, "future_real")->type == FLAT_JSON_OTHER, "real skipped as OTHER");
	CHECK(stats_json_find(&j, "future_obj")->type == FLAT_JSON_OTHER, "object skipped as OTHER");
	CHECK(stats_json_find(&j, "mixed")->type == FLAT_JSON_OTHER, "mixed array skipped as OTHER");
	CHECK(stats_json_find(&j, "flag")->type == FLAT_JSON_BOOL && stats_json_find(&j, "flag")->boolean &&
	      !stats_json_find(&j, "off")->boolean, "booleans");
	CHECK(stats_json_find(&j, "nothing")->type == FLAT_JSON_NULL, "null");
	CHECK(stats_json_strings(&j, "cmdline", &strings, &n) == 0 && n == 4 && strcmp(strings[0], "sh") == 0 &&
	      strcmp(strings[2], "echo \"hi\"") == 0 && strcmp(strings[3], "") == 0, "string array");
	CHECK(stats_json_strings(&j, "empty", &strings, &n) == 0 && n == 0, "empty array");
	CHECK(stats_json_strings(&j, "exit", &strings, &n) == -1, "a string is not an array");
	CHECK(strcmp(j.values[0].key, "wall_ns") == 0, "file order kept");
	stats_json_free(&j);
	CHECK(j.count == 0 && j.values == NULL, "free empties");
	stats_json_free(&j);
}

static void test_stats_json_values(void)
{
	static const char text[] =
		"{\"max\": 9223372036854775807, \"min\": -9223372036854775808, \"zero\": -0,"
		" \"esc\": \"\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\u20ac \\ud83d\\ude00\", \"\": 1}";
	struct flat_json j;
	char err[256] = "";
	int64_t v;

	if (stats_json_parse(text, strlen(text), &j, err, sizeof(err)) != 0) {
		CHECK(0, "values rejected: %s", err);
		return;
	}
	CHECK(stats_json_int(&j, "max", &v) == 0 && v == INT64_MAX, "INT64_MAX");
	CHECK(stats_json_int(&j, "min", &v) == 0 && v == INT64_MIN, "INT64_MIN");
	CHECK(stats_json_int(&j, "zero", &v) == 0 && v == 0, "-0");
	CHECK(stats_json_int(&j, "", &v) == 0 && v == 1, "empty key");
	CHECK(strcmp(stats_json_string(&j, "esc"),
		     "\" \\ / \b \f \n \r \t \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80") == 0, "escapes: %s",
	      stats_json_string(&j, "esc"));
	stats_json_free(&j);
	CHECK(stats_json_parse("{}", 2, &j, err, sizeof(err)) == 0 && j.count == 0, "empty object");
	stats_json_free(&j);
}

#define JSON_BAD(text, reason) json_bad(text, sizeof(text) - 1, reason, __FILE__, __LINE__)
static void json_bad(const char *text, size_t len, const char *reason, const char *file, int line)
{
	struct flat_json j = { (void *)1, 7 };
	char err[256] = "";
	int rc = stats_json_parse(text, len, &j, err, sizeof(err));

	check_at(rc == -1 && strstr(err, reason) != NULL && j.count == 0 && j.values == NULL, file, line,
		 "json '%.40s' should fail with \"%s\": rc %d, err \"%s\"", text, reason, rc, err);
	if (rc == 0)
		stats_json_free(&j);
}

static void test_stats_json_malformed(void)
{
	char deep[300];

	JSON_BAD("", "empty input");
	JSON_BAD("  \n ", "empty input");
	JSON_BAD("[]", "expected '{'");
	JSON_BAD("42", "expected '{'");
	JSON_BAD("{", "unexpected end of input");
	JSON_BAD("{\"pid\": 1", "unexpected end of input, expected ',' or '}'");
	JSON_BAD("{\"pid\": 1,", "unexpected end of input, expected a key");
	JSON_BAD("{\"pid\":}", "expected a value");
	JSON_BAD("{\"pid\" 1}", "expected ':'");
	JSON_BAD("{\"pid\": 1,}", "expected a string key");
	JSON_BAD("{\"pid\": 1 \"x\": 2}", "expected ',' or '}'");
	JSON_BAD("{pid: 1}", "expected a string key");
	JSON_BAD("{'pid': 1}", "expected a string key");
	JSON_BAD("{\"pid\": 1} x", "unexpected text after the object");
	JSON_BAD("{\"pid\": 1}{}", "unexpected text after the object");
	JSON_BAD("{\"pid\": 01}", "leading zero");
	JSON_BAD("{\"pid\": -}", "invalid number");
	JSON_BAD("{\"pid\": 1.}", "digits after '.'");
	JSON_BAD("{\"pid\": 1e}", "exponent");
	JSON_BAD("{\"pid\": +1}", "expected a value");
	JSON_BAD("{\"pid\": 0x10}", "expected ',' or '}'");
	JSON_BAD("{\"big\": 9223372036854775808}", "integer out of range");
	JSON_BAD("{\"big\": -9223372036854775809}", "integer out of range");
	JSON_BAD("{\"big\": 99999999999999999999999}", "integer out of range");
	JSON_BAD("{\"pid\": tru}", "expected a value");
	JSON_BAD("{\"pid\": nul}", "expected a value");
	JSON_BAD("{\"exit\": \"normal}", "unterminated string");
	JSON_BAD("{\"exit\": \"a\\x\"}", "invalid escape");
	JSON_BAD("{\"exit\": \"\\u12\"}", "4 hex digits");
	JSON_BAD("{\"exit\": \"\\u0000\"}", "NUL");
	JSON_BAD("{\"exit\": \"\\ud83d\"}", "unpaired high surrogate");
	JSON_BAD("{\"exit\": \"\\ude00\"}", "unpaired low surrogate");
	JSON_BAD("{\"exit\": \"a\tb\"}", "control character");
	JSON_BAD("{\"exit\": \"a\nb\"}", "control character");
	JSON_BAD("{\"a\": 1, \"a\": 2}", "duplicate key \"a\"");
	JSON_BAD("{\"a\": [\"x\",]}", "expected a value");
	JSON_BAD("{\"a\": [\"x\" \"y\"]}", "expected ',' or ']'");
	JSON_BAD("{\"a\": [\"x\"", "expected ',' or ']'");
	JSON_BAD("{\"a\": [1, 2}", "expected ',' or ']'");
	JSON_BAD("{\"a\": {\"b\" 1}}", "expected ':'");
	JSON_BAD("{\"a\": {1: 1}}", "expected a string key");
	JSON_BAD("{\"pid\": 1, \"x\": \0}", "NUL byte");
	JSON_BAD("{\n\"a\": 1,\n  \"b\" 2}", "line 3, column 7");
	memset(deep, '[', sizeof(deep));
	memcpy(deep, "{\"a\":", 5);
	json_bad(deep, sizeof(deep), "nested more than", __FILE__, __LINE__);
	for (size_t cut = 0; cut < strlen(stats_example) - 2; cut += 7)
		json_bad(stats_example, cut, cut == 0 ? "empty" : "", __FILE__, __LINE__);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f == NULL) {
		CHECK(0, "fopen %s", path);
		return;
	}
	fputs(text, f);
	fclose(f);
}

static void test_stats_json_load(void)
{
	char dir[] = "/tmp/test_cli.XXXXXX", path[128], err[512] = "";
	struct flat_json j;
	uint64_t u = 0;

	if (mkdtemp(dir) == NULL) {
		CHECK(0, "mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "%s/stats.json", dir);
	CHECK(stats_json_load(path, &j, err, sizeof(err)) == -1 && strstr(err, path) &&
	      strstr(err, "No such file"), "missing file: %s", err);
	write_file(path, "");
	CHECK(stats_json_load(path, &j, err, sizeof(err)) == STATS_JSON_DAMAGED && strstr(err, "empty file"), "empty: %s", err);
	write_file(path, "{\"faults_total\": 12,\n\"exit\": ");
	CHECK(stats_json_load(path, &j, err, sizeof(err)) == STATS_JSON_DAMAGED && strstr(err, path) && strstr(err, "line 2"),
	      "truncated: %s", err);
	write_file(path, stats_example);
	CHECK(stats_json_load(path, &j, err, sizeof(err)) == 0 && stats_json_uint(&j, "evictions", &u) == 0 &&
	      u == 300, "good file: %s", err);
	stats_json_free(&j);
	CHECK(stats_json_load(dir, &j, err, sizeof(err)) == -1 && strstr(err, "not a regular file"),
	      "directory: %s", err);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	test_sizes();
	test_numbers();
	test_formatting();
	test_option_forms();
	test_record_local_forms();
	test_record_defaults();
	test_record_sample_zero();
	test_record_all_options();
	test_record_sizes_rejected();
	test_record_other_rejections();
	test_record_command_start();
	test_ld_preload();
	test_stats_json_good();
	test_stats_json_values();
	test_stats_json_malformed();
	test_stats_json_load();
	return check_summary("test_cli");
}
