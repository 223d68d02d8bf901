/* main.c: the `faultline` command — picks the verb and hands it the arguments; `faultline help
 * VERB` (the verb's man page, or its --help without man) and the hidden `faultline __options`
 * (the verbs and their option tables, for the generated shell completion: completion/).
 *
 * Each verb is `int cmd_<verb>(int argc, char **argv)` in its own file of the cmd stage; it gets
 * argv starting at the verb's name (argv[0] = "record"), handles its own --help, and
 * returns the exit status. Adding a verb is one line in FAULTLINE_VERBS.
 *
 * tools/ is a pipeline of stage folders, cmd → record, analyze/render → frames → trace → inc,
 * with base under them all; every arrow points down, none up, no circles (tools/README.md). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "faultline/pmu_events.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

/* The verbs, in the order `faultline --help` lists them (the README's): X(name, one-line description).
 * Every line ends with a backslash; the list ends at the comment. */
#define FAULTLINE_VERBS(X) \
	X(record, "run a command with the far-memory runtime and trace its page faults") \
	X(report, "rank the faults of a recording by callsite, function, allocation site, thread or process") \
	X(visualize, "flame graphs (SVG, folded stacks) and an address x time heatmap of the faults") \
	X(mrc, "predicted refaults for every -L from one `record --mrc` run (miss-ratio curve)") \
	X(ranges, "hot address ranges of the faults (RAP), with allocation sites and mappings") \
	X(export, "write a whole recording into one SQLite database (--sqlite FILE) or a pprof profile (--pprof FILE)") \
	X(diff, "compare two recordings: faults per callsite or allocation site, deltas, differential flame graph") \
	X(sweep, "record a command at several local-memory sizes: faults, far traffic and time per size") \
	X(dump, "print every fault of a recording, one line each, in time order") \
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
	      "  faultline help <command>     its manual page (its --help without man)\n"
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

/* Where the man page of a verb is looked for before man's own search path, relative to the
 * directory of this binary: the build tree (build/man/man1, made by `make`), then an installed
 * tree whose prefix is not in man's path (PREFIX/bin, PREFIX/share/man/man1). */
static const char *const man_page_places[] = { "/man/man1", "/../share/man/man1" };
#define MAN_PAGE_PLACES (sizeof(man_page_places) / sizeof(man_page_places[0]))

/* Runs man with args (NULL-terminated, args[0] "man"); its exit status, or -1 when man cannot be
 * run (not installed: the caller prints --help instead). */
static int run_man(char *const *args)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		cli_error("help: fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		execvp(args[0], args);
		_exit(127); /* man is not installed */
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			cli_error("help: waitpid %ld: %s", (long)pid, strerror(errno));
			return -1;
		}
	}
	if (!WIFEXITED(status))
		return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	return WEXITSTATUS(status) == 127 ? -1 : WEXITSTATUS(status);
}

/* Opens faultline-VERB(1) with man: the page of this build or installation when there is one
 * (man -l FILE), else the one man finds. 0 when man showed it; -1 when man is missing or has no
 * such page (FAULTLINE_NO_MAN=1 asks for -1: the --help text). */
static int show_man_page(const char *verb)
{
	char exe[PATH_MAX], page[PATH_MAX + 128], name[64], *slash;
	const char *no_man = getenv("FAULTLINE_NO_MAN");
	ssize_t n;

	if (no_man != NULL && strcmp(no_man, "1") == 0)
		return -1;
	snprintf(name, sizeof(name), "faultline-%s", verb);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		if ((slash = strrchr(exe, '/')) != NULL)
			*slash = '\0';
		for (size_t k = 0; k < MAN_PAGE_PLACES; k++) {
			if ((size_t)snprintf(page, sizeof(page), "%s%s/%s.1", exe, man_page_places[k], name) >= sizeof(page))
				continue;
			if (access(page, R_OK) == 0) {
				char *args[] = { "man", "-l", page, NULL };
				return run_man(args) == 0 ? 0 : -1;
			}
		}
	}
	char *args[] = { "man", "1", name, NULL };
	return run_man(args) == 0 ? 0 : -1;
}

/* `faultline help [command]`: the command's man page, or its --help where man cannot show it. */
static int help(int argc, char **argv)
{
	const struct verb *verb;
	char *help_argv[] = { NULL, "--help", NULL };

	if (argc < 2 || cli_is_flag(argv[1], "-h", "--help")) { /* `help --help`: what help does is the usage */
		usage(stdout);
		return 0;
	}
	verb = find_verb(argv[1]);
	if (verb == NULL) {
		cli_error("unknown command '%s'", argv[1]);
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (show_man_page(verb->name) == 0)
		return 0;
	help_argv[0] = argv[1];
	return verb->run(2, help_argv);
}

/* `faultline __options`: the verbs, one a line; `__options VERB`: its option table (cli.h,
 * cli_list_tables); `__options --pmu-events`: the events record --pmu takes. The shell completion
 * is generated from these (completion/faultline.bash.in, make), never written by hand. */
static int list_options(int argc, char **argv)
{
	const struct verb *verb;

	if (argc < 2) {
		for (size_t i = 0; i < VERB_COUNT; i++)
			printf("%s\n", verbs[i].name);
		return 0;
	}
	if (strcmp(argv[1], "--pmu-events") == 0) {
		for (size_t i = 0; i < FL_PMU_EVENT_COUNT; i++)
			printf("%s\n", fl_pmu_events[i].name);
		return 0;
	}
	if ((verb = find_verb(argv[1])) == NULL) {
		cli_error("__options: unknown command '%s'", argv[1]);
		return CLI_EXIT_USAGE;
	}
	char *verb_argv[] = { argv[1], NULL };
	cli_list_tables(stdout);
	verb->run(1, verb_argv); /* exits 0 in its option parser, once the table is printed */
	cli_error("__options: %s did not list its options", argv[1]);
	return 1;
}

/* Runs the verb named by argv[1]. */
static int run(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : NULL;
	const struct verb *verb;

	if (name == NULL) {
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (cli_is_flag(name, "-h", "--help") || strcmp(name, "help") == 0)
		return help(argc - 1, argv + 1);
	if (strcmp(name, "__options") == 0)
		return list_options(argc - 1, argv + 1);
	if (cli_is_flag(name, "-V", "--version") || strcmp(name, "version") == 0) {
		if (argc > 2) {
			cli_error("%s takes no argument (got '%s')", name, argv[2]);
			return CLI_EXIT_USAGE;
		}
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

int main(int argc, char **argv)
{
	int rc = run(argc, argv);

	/* what a verb printed (its help included) must have reached stdout: a full disk or a closed
	 * pipe is a failure, as in any Unix tool; a verb that failed has said why (its own check of
	 * its output, most often), so this adds no second message */
	int error = cli_output_errno(stdout);
	if (error && rc == 0) {
		cli_error("writing standard output: %s", strerror(error));
		return 1;
	}
	return rc;
}
