/* main.c: the `faultline` command — picks the verb and hands it the arguments.
 *
 * Each verb is `int cmd_<verb>(int argc, char **argv)` in its own file of the cmd stage; it gets
 * argv starting at the verb's name (argv[0] = "record"), handles its own --help, and
 * returns the exit status. Adding a verb is one line in FAULTLINE_VERBS.
 *
 * tools/ is a pipeline of stage folders, cmd → record, analyze/render → frames → trace → inc,
 * with base under them all; every arrow points down, none up, no circles (tools/README.md). */
#include <stdio.h>
#include <string.h>

#include "cli.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

/* The verbs, in the order `faultline --help` lists them: X(name, one-line description).
 * Every line ends with a backslash; the list ends at the comment. */
#define FAULTLINE_VERBS(X) \
	X(record, "run a command with the far-memory runtime and trace its page faults") \
	X(dump, "print every fault of a recording, one line each, in time order") \
	X(visualize, "flame graphs (SVG, folded stacks) and an address x time heatmap of the faults") \
	X(report, "rank the faults of a recording by callsite, function, allocation site, thread or process") \
	X(export, "write a whole recording into one SQLite database (--sqlite FILE) or a pprof profile (--pprof FILE)") \
	X(ranges, "hot address ranges of the faults (RAP), with allocation sites and mappings") \
	X(mrc, "predicted refaults for every -L from one `record --mrc` run (miss-ratio curve)") \
	X(diff, "compare two recordings: faults per callsite or allocation site, deltas, differential flame graph") \
	X(sweep, "record a command at several local-memory sizes: faults, far traffic and time per size") \
	/* end of FAULTLINE_VERBS */

#define DECLARE_VERB(name, summary) int cmd_##name(int argc, char **argv);
FAULTLINE_VERBS(DECLARE_VERB)

struct verb {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);
};

#define VERB_ENTRY(name, summary) { #name, summary, cmd_##name },
static const struct verb verbs[] = { FAULTLINE_VERBS(VERB_ENTRY) };
#define VERB_COUNT (sizeof(verbs) / sizeof(verbs[0]))

static void usage(FILE *out)
{
	fputs("usage: faultline <command> [options] [args]\n"
	      "\n"
	      "Traces the page faults of a program whose heap lives in bounded local memory.\n"
	      "\n"
	      "commands:\n", out);
	for (size_t i = 0; i < VERB_COUNT; i++)
		fprintf(out, "  %-11s %s\n", verbs[i].name, verbs[i].summary);
	fputs("\n"
	      "  faultline <command> --help   options of a command\n"
	      "  faultline --version          version\n", out);
}

static const struct verb *find_verb(const char *name)
{
	for (size_t i = 0; i < VERB_COUNT; i++) {
		if (strcmp(verbs[i].name, name) == 0)
			return &verbs[i];
	}
	return NULL;
}

/* `faultline help [command]`. */
static int help(int argc, char **argv)
{
	const struct verb *verb;
	char *help_argv[] = { NULL, "--help", NULL };

	if (argc < 2) {
		usage(stdout);
		return 0;
	}
	verb = find_verb(argv[1]);
	if (verb == NULL) {
		cli_error("unknown command '%s'", argv[1]);
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	help_argv[0] = argv[1];
	return verb->run(2, help_argv);
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : NULL;
	const struct verb *verb;

	if (name == NULL) {
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (cli_is_flag(name, "-h", "--help") || strcmp(name, "help") == 0)
		return help(argc - 1, argv + 1);
	if (cli_is_flag(name, "-V", "--version") || strcmp(name, "version") == 0) {
		printf("faultline %s\n", PACKAGE_VERSION);
		return 0;
	}
	verb = find_verb(name);
	if (verb == NULL) {
		cli_error("unknown %s '%s'", name[0] == '-' ? "option" : "command", name);
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	return verb->run(argc - 1, argv + 1);
}
