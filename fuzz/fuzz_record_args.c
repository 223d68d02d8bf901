/* fuzz_record_args.c: libFuzzer harness for `faultline record`'s option parser
 * (record_parse_args in tools/record/record_options.c, over cli_option_value/cli_parse_size/cli_parse_uint) and
 * its LD_PRELOAD composition (record_ld_preload). Nothing is run: the parser only parses.
 *
 * Input: argument strings separated by NUL bytes (at most 64); argv[0] is "record", as for the
 * verb. Checks, besides the sanitizers:
 *   - success leaves options inside their documented bounds: both sizes whole pages,
 *     RECORD_MIN_REGION_BYTES <= -M <= RECORD_MAX_REGION_BYTES, -L 0 or RECORD_MIN_LOCAL_BYTES..-M, -c and --stack-depth <= their maxima, -s >= 1
 *     (--alloc-sample 0 is its "follow -s" default), policy clock|fifo, --far "mem" or as given, --pmu
 *     without spaces; the command is a non-empty tail of argv, NULL-terminated; every string
 *     option points into argv;
 *   - parsing is deterministic (a second parse gives the same options);
 *   - failure gives a non-empty reason (one printable line under FUZZ_STRICT=1);
 *   - record_ld_preload(a, b) keeps a as the prefix of a list that holds b.
 * Dictionary: fuzz/record_args.dict. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#include "record.h"

#define MAX_ARGS 64


/* True when p points into one of the argument strings (or is NULL and null_ok). */
static bool in_argv(const char *p, char **argv, int argc)
{
	for (int i = 0; i < argc; i++) {
		if (p >= argv[i] && p <= argv[i] + strlen(argv[i]))
			return true;
	}
	return false;
}

static void check_options(const struct record_options *o, char **argv, int argc)
{
	CHECK(o->max_bytes >= RECORD_MIN_REGION_BYTES && o->max_bytes % 4096 == 0 &&
	      o->max_bytes <= RECORD_MAX_REGION_BYTES, "max_bytes %llu", (unsigned long long)o->max_bytes);
	CHECK(o->local_bytes % 4096 == 0 && o->local_bytes <= o->max_bytes &&
	      (o->local_bytes == 0 || o->local_bytes >= RECORD_MIN_LOCAL_BYTES), "local_bytes %llu, max %llu",
	      (unsigned long long)o->local_bytes, (unsigned long long)o->max_bytes);
	CHECK(o->handlers <= RECORD_MAX_HANDLERS, "handlers %u", o->handlers);
	CHECK(o->stack_depth <= RECORD_MAX_STACK_DEPTH, "stack_depth %u", o->stack_depth);
	CHECK(o->sample >= 1, "sample %u", o->sample); /* alloc_sample 0 means "as -s" */
	CHECK(o->policy && (strcmp(o->policy, "clock") == 0 || strcmp(o->policy, "fifo") == 0), "policy %s",
	      o->policy ? o->policy : "(null)");
	/* --far: "mem" by default, else the value given (its syntax checked by far_spec_syntax). */
	CHECK(o->far && *o->far && (strcmp(o->far, "mem") == 0 || in_argv(o->far, argv, argc)), "far %s",
	      o->far ? o->far : "(null)");
	CHECK(memchr(o->far_spec, '\0', sizeof(o->far_spec)) != NULL, "far_spec not NUL-terminated");
	CHECK(!o->keep_far || in_argv(o->keep_far, argv, argc), "keep_far '%s'", o->keep_far);
	CHECK(!o->pmu || (*o->pmu && !strpbrk(o->pmu, " \t\n") && in_argv(o->pmu, argv, argc)), "pmu '%s'",
	      o->pmu);
	CHECK(!o->output || (*o->output && in_argv(o->output, argv, argc)), "output '%s'", o->output);
	CHECK(o->command != NULL && o->command_argc >= 1 && o->command_argc < argc, "command_argc %d of %d",
	      o->command_argc, argc);
	CHECK(o->command == argv + (argc - o->command_argc), "command is not the tail of argv");
	CHECK(o->command[0][0] != '\0' && o->command[o->command_argc] == NULL, "command[0] empty or argv "
	      "not NULL-terminated");
}

static void check_ld_preload(const char *existing, const char *library)
{
	char *value = record_ld_preload(existing, library);
	size_t elen = existing ? strlen(existing) : 0, llen = strlen(library);

	CHECK(value != NULL, "record_ld_preload returned NULL");
	if (elen == 0) {
		CHECK(strcmp(value, library) == 0, "no existing value: got '%s'", value);
	} else {
		CHECK(strncmp(value, existing, elen) == 0, "existing '%s' not kept as the prefix of '%s'", existing,
		      value);
		CHECK(value[elen] == '\0' || (value[elen] == ':' && strcmp(value + elen + 1, library) == 0),
		      "'%s' + '%s' gave '%s'", existing, library, value);
		/* A library path that LD_PRELOAD can carry must be in the list now. */
		if (llen > 0 && !strpbrk(library, ": ")) {
			bool found = false;
			for (const char *p = value; *p && !found;) {
				size_t n = strcspn(p, ": ");
				found = n == llen && strncmp(p, library, llen) == 0;
				p += n;
				if (*p)
					p++;
			}
			CHECK(found, "'%s' does not list '%s'", value, library);
		}
	}
	free(value);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = malloc(size + 1);
	char *argv[MAX_ARGS + 2];
	int argc = 0;
	struct record_options first, second;
	char err[512], err2[512];

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	argv[argc++] = "record";
	for (size_t at = 0; at < size && argc <= MAX_ARGS;) {
		argv[argc++] = copy + at;
		at += strlen(copy + at) + 1;
	}
	argv[argc] = NULL;

	memset(err, 'x', sizeof(err));
	int rc = record_parse_args(argc, argv, &first, err, sizeof(err));
	int rc2 = record_parse_args(argc, argv, &second, err2, sizeof(err2));
	CHECK(rc == rc2, "two parses of one argv: %d then %d", rc, rc2);
	if (rc == 0) {
		CHECK(memcmp(&first, &second, sizeof(first)) == 0, "two parses of one argv differ");
		if (!first.help)
			check_options(&first, argv, argc);
	} else {
		CHECK(rc == -1, "record_parse_args returned %d", rc);
		CHECK(memchr(err, '\0', sizeof(err)) != NULL, "reason not NUL-terminated");
		CHECK(check_text_line("reason", err) > 0, "empty reason");
		CHECK(strcmp(err, err2) == 0, "two parses of one argv: reasons differ");
	}
	check_ld_preload(argc > 1 ? argv[1] : NULL, argc > 2 ? argv[2] : "/usr/lib/libfaultline.so");
	free(copy);
	return 0;
}
