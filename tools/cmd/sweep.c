/* sweep.c: `faultline sweep` — records one program at several local-memory sizes and tabulates how
 * its faults and far traffic grow as local memory shrinks (the model is analyze/sweep.c, the
 * outputs render/sweep_output.c).
 *
 * Each size is one `faultline record -q --force -L SIZE -o DIR/NAME [record options] -- CMD` run as
 * a child process (this very binary, /proc/self/exe), its output (the program's and record's) in
 * DIR/NAME/record.log, so every size's recording is an ordinary recording that every verb reads.
 * Times: wall from the fork to the exit of record; virtual = user + system CPU time from wait4's
 * rusage of record, which holds the program and its runtime's threads (record waits for them).
 *
 * Every run reads the same stdin (struct sweep_stdin, below).
 *
 * Signals: SIGINT, SIGTERM and SIGHUP received by sweep are passed to the running record (which
 * passes them to the program); the sweep then stops after that run, with 128 + the signal.
 *
 * A run fails when its recording has no process or no stats.json (record could not trace it), when
 * it exits 70 (the runtime stopped the program, e.g. its far store failed, or did not start), or
 * when it exits with another status than the first run did: a program that exits non-zero at every
 * size (grep without a match, diff) sweeps as any other; one that fails only at small sizes does not.
 *
 * Exit status: 0; 1 when a run fails or the output cannot be written; 2 on a usage error (sweep's,
 * or record's for the options given). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <faultline/env.h>

#include "cli.h"
#include "fd_copy.h"
#include "record.h"
#include "sweep.h"
#include "sweep_render.h"

static void sweep_usage(FILE *out)
{
	fputs("usage: faultline sweep (-L LIST | --auto) [options] [record options] -- CMD [ARGS...]\n"
	      "\n"
	      "Records CMD once per local-memory size and shows how its faults and far traffic grow as local\n"
	      "memory shrinks: per size, faults by kind, far bytes read and written (stats.json), wall time and\n"
	      "virtual time (user + system CPU time of the program and its runtime threads, from wait4's rusage).\n"
	      "Writes DIR/sweep.csv, DIR/sweep.svg (refaults against -L, the knee marked) and one recording per\n"
	      "size, DIR/L-<size>, usable by every verb (faultline report DIR/L-8M).\n"
	      "\n"
	      "  -L, --local LIST     sizes separated by commas: 8M,16M,64M (a bare number is MiB)\n"
	      "      --auto           an unlimited run first (DIR/unlimited), then its peak resident memory and\n"
	      "                       halves of it down to 1/16\n"
	      "      --stacks         record each fault's stack and PMU values, as record does; without it (and\n"
	      "                       without -s, --stack-depth or --pmu) the runs are recorded with -s 0,\n"
	      "                       and without --timeline or --timeline-every with --timeline 0: the\n"
	      "                       table needs counts only, the faults are the same and each costs less;\n"
	      "                       allocation sites are kept (faultline report DIR/L-8M --by alloc)\n"
	      "      --format FMT     table (default) or csv on stdout; csv has the columns\n"
	      "                       " SWEEP_CSV_HEADER "\n"
	      "  -o, --output DIR     output directory (default: faultline-sweep-<command>-<pid>)\n"
	      "      --force          reuse a non-empty output directory\n"
	      "  -h, --help           this help\n"
	      "\n"
	      "Every other option before CMD is record's (faultline record --help), given to each run as is:\n"
	      "-M, --policy fifo|clock, -c, --far, ... (with -- before CMD, any option record takes).\n"
	      "The knee is the smallest size whose refaults stay within 10% of the curve's range above its\n"
	      "minimum. Progress goes to stderr. Exit status 1 when a run fails (its log:\n"
	      "DIR/L-<size>/record.log): record could not trace it, exited 70 (the runtime stopped\n"
	      "the program), or exited with another status than the first run (a program that exits\n"
	      "non-zero at every size is swept as any other);\n"
	      "128 + N when stopped by signal N, 2 on a usage error (also one record reports\n"
	      "for the options it is given, e.g. -L above -M: its reason is shown).\n"
	      "\n"
	      "example: faultline sweep --policy fifo -L 16M,32M,64M,128M -o sw -- ./prog\n", out);
}

#define usage_error(...) cli_usage_error("sweep", __VA_ARGS__)

/* record's options that take a value (record.c), handed through with it. */
static const char *const record_value_options[][2] = {
	{ "-M", "--max" }, { "-c", "--handlers" }, { NULL, "--policy" }, { "-s", "--sample" },
	{ NULL, "--stack-depth" }, { NULL, "--pmu" }, { NULL, "--alloc-log" }, { NULL, "--alloc-sample-bytes" },
	{ NULL, "--alloc-sample" }, { NULL, "--far" }, { NULL, "--keep-far" }, { NULL, "--far-latency" },
	{ NULL, "--far-bandwidth" }, { NULL, "--prefetch" },
};

struct sweep_options {
	const char *list;
	uint64_t sizes[SWEEP_MAX_POINTS]; /* -L's, parsed */
	size_t nsizes;
	bool autosize, csv, force, stacks;
	const char *output;
	char **passthrough;          /* record's options, as given (pointing into argv) */
	int npassthrough;
	char **command;              /* NULL-terminated */
};

/* One argv word (or two) of record's; 1 matched, -1 error in err. With "--" on the line (BOUNDED),
 * an option this table does not know is handed to record as it is (record checks it: options
 * added to record later need no edit here). */
static int record_option(int argc, char **argv, int *i, bool bounded, struct sweep_options *o, char *err,
			 size_t errlen)
{
	const char *value;

	for (size_t k = 0; k < sizeof(record_value_options) / sizeof(record_value_options[0]); k++) {
		int start = *i, rc = cli_option_value(argc, argv, i, record_value_options[k][0], record_value_options[k][1],
						     &value, err, errlen);
		if (rc < 0)
			return -1;
		if (rc > 0) {
			for (int j = start; j <= *i; j++)
				o->passthrough[o->npassthrough++] = argv[j];
			return 1;
		}
	}
	if (cli_is_flag(argv[*i], "-q", "--quiet"))
		return 1; /* every run is quiet already */
	if (bounded) {
		o->passthrough[o->npassthrough++] = argv[*i];
		return 1;
	}
	snprintf(err, errlen, "unknown option '%s' (neither sweep's nor record's)", argv[*i]);
	return -1;
}

/* sweep's own options (every other option before CMD is record's: record_option). */
enum { SWEEP_LOCAL, SWEEP_AUTO, SWEEP_FORMAT, SWEEP_OUTPUT, SWEEP_FORCE, SWEEP_STACKS };
static const struct cli_opt sweep_opts[] = {
	{ "-L", "--local", CLI_VALUE, SWEEP_LOCAL },
	{ NULL, "--auto", CLI_FLAG, SWEEP_AUTO },
	{ NULL, "--format", CLI_VALUE, SWEEP_FORMAT },
	{ "-o", "--output", CLI_VALUE, SWEEP_OUTPUT },
	{ NULL, "--force", CLI_FLAG, SWEEP_FORCE },
	{ NULL, "--stacks", CLI_FLAG, SWEEP_STACKS },
};
#define SWEEP_NOPTS (sizeof(sweep_opts) / sizeof(sweep_opts[0]))

/* argv[*i] as one of sweep_opts: its id (and *value, advancing *i past it), -1 when it is none of
 * them, -2 with the reason in err (the option's value missing). */
static int sweep_option(int argc, char **argv, int *i, const char **value, char *err, size_t errlen)
{
	for (size_t k = 0; k < SWEEP_NOPTS; k++) {
		const struct cli_opt *opt = &sweep_opts[k];
		int rc;
		*value = NULL;
		if (opt->takes_value == CLI_FLAG) {
			if (cli_is_flag(argv[*i], opt->short_name, opt->long_name))
				return opt->id;
			continue;
		}
		rc = cli_option_value(argc, argv, i, opt->short_name, opt->long_name, value, err, errlen);
		if (rc < 0)
			return -2;
		if (rc > 0)
			return opt->id;
	}
	return -1;
}

/* 0 to run, -1 after --help, CLI_EXIT_USAGE after the message. */
static int parse_args(int argc, char **argv, struct sweep_options *o)
{
	static const char *const formats[] = { "table", "csv" };
	const struct cli_verb table = { "sweep", sweep_usage, sweep_opts, SWEEP_NOPTS, NULL, NULL, NULL, NULL };
	char err[512];
	const char *value;
	bool bounded = false;
	int i, id, choice;

	cli_list_table_if_asked(&table);
	for (i = 1; i < argc && !bounded; i++)
		bounded = strcmp(argv[i], "--") == 0;
	memset(o, 0, sizeof(*o));
	if (!(o->passthrough = calloc((size_t)argc + 1, sizeof(char *))))
		return usage_error("out of memory");
	for (i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (strcmp(arg, "--") == 0) {
			i++;
			break;
		}
		if (arg[0] != '-' || arg[1] == '\0') {
			if (!bounded)
				break; /* the command, without "--" */
			o->passthrough[o->npassthrough++] = argv[i]; /* a value of a record option */
			continue;
		}
		if (cli_is_flag(arg, "-h", "--help")) {
			sweep_usage(stdout);
			return -1;
		}
		switch ((id = sweep_option(argc, argv, &i, &value, err, sizeof(err)))) {
		case -2:
			return usage_error("%s", err);
		case SWEEP_LOCAL:
			o->list = value;
			break;
		case SWEEP_FORMAT:
			if ((choice = cli_pick(value, formats, 2, err, sizeof(err))) < 0)
				return usage_error("--format: %s", err);
			o->csv = choice == 1;
			break;
		case SWEEP_OUTPUT:
			o->output = value;
			break;
		case SWEEP_AUTO:
			o->autosize = true;
			break;
		case SWEEP_FORCE:
			o->force = true;
			break;
		case SWEEP_STACKS:
			o->stacks = true;
			break;
		default:
			if (record_option(argc, argv, &i, bounded, o, err, sizeof(err)) < 0)
				return usage_error("%s", err);
		}
	}
	if (i >= argc)
		return usage_error("no command to run (faultline sweep -L 8M,16M -- CMD)");
	o->command = argv + i;
	if (!o->list == !o->autosize)
		return usage_error(o->list ? "-L LIST and --auto exclude each other" : "give the sizes: -L LIST or --auto");
	if (o->list && sweep_parse_list(o->list, o->sizes, &o->nsizes, err, sizeof(err)) < 0)
		return usage_error("-L: %s", err);
	return 0;
}

/* ----------------------------------------------------------------- one run */

/* The one state a signal handler needs (a handler cannot be given a context): the running record's
 * pid and the signal that asked the sweep to stop. */
static volatile sig_atomic_t running_child;
static volatile sig_atomic_t stop_signal;

static void forward_signal(int sig)
{
	stop_signal = sig;
	if (running_child > 0)
		kill((pid_t)running_child, sig);
}

static void handle_stop_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = forward_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* Every run reads the same input. A regular file (or block device) on stdin is rewound to where it
 * stood before each run (the runs share its offset); a pipe or socket is read whole first into an
 * unlinked file in the output directory, which each run gets as its stdin (unless it gives nothing,
 * not even its end, for STDIN_WAIT_MS: then it is each run's as it comes). A terminal, or any other
 * device, is each run's as it comes. */
struct sweep_stdin {
	bool rewind;        /* stdin is seekable: back to `start` before each run */
	off_t start;
	int copy;           /* the pipe's content, or -1 */
};

#define STDIN_WAIT_MS 2000 /* a pipe on stdin with no input (not even its end) this long is left as it is */

/* Sets IN up for the runs. 0, or 1 after the message. */
static int stdin_prepare(struct sweep_stdin *in, const char *out_dir)
{
	struct stat st;
	char path[PATH_MAX], shown[32];
	uint64_t total = 0;

	in->rewind = false, in->copy = -1;
	if (fstat(STDIN_FILENO, &st) < 0)
		return 0; /* closed: every run finds it closed */
	if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)) {
		in->start = lseek(STDIN_FILENO, 0, SEEK_CUR);
		in->rewind = in->start >= 0;
		return 0;
	}
	if (!S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode))
		return 0;
	/* a pipe that stays open without input (ssh's stdin, a CI runner's) would be read for ever */
	struct pollfd ready = { .fd = STDIN_FILENO, .events = POLLIN };
	int n;
	while ((n = poll(&ready, 1, STDIN_WAIT_MS)) < 0 && errno == EINTR && !stop_signal)
		;
	if (n <= 0) {
		cli_error("sweep: stdin is a pipe that gave nothing in %d s: each run reads it as it comes "
			  "(< FILE gives every run the same input)", STDIN_WAIT_MS / 1000);
		return 0;
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/.stdin.%ld", out_dir, (long)getpid()) >= sizeof(path)) {
		cli_error("sweep: stdin is a pipe, to be kept for every run: %s: path too long", out_dir);
		return 1;
	}
	in->copy = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (in->copy < 0) {
		cli_error("sweep: stdin is a pipe, to be kept for every run: open %s: %s", path, strerror(errno));
		return 1;
	}
	unlink(path); /* gone with the last descriptor */
	if (fd_copy(STDIN_FILENO, in->copy, &total, &stop_signal) < 0) { /* a stop signal ends it */
		cli_error("sweep: stdin is a pipe, to be kept for every run: copying it: %s", strerror(errno));
		close(in->copy);
		in->copy = -1;
		return 1;
	}
	cli_error("sweep: stdin is a pipe: read whole (%s) so that every run gets the same input",
		  cli_format_size(total, shown, sizeof(shown)));
	return 0;
}

/* Before a run: its stdin at the start of the input. 0, or 1 after the message. */
static int stdin_rewind(const struct sweep_stdin *in)
{
	if (in->rewind && lseek(STDIN_FILENO, in->start, SEEK_SET) < 0) {
		cli_error("sweep: rewinding stdin for the next run: lseek: %s", strerror(errno));
		return 1;
	}
	if (in->copy >= 0 && lseek(in->copy, 0, SEEK_SET) < 0) {
		cli_error("sweep: rewinding the kept stdin for the next run: lseek: %s", strerror(errno));
		return 1;
	}
	return 0;
}

struct run_argv {
	char *words[256 + 16];
	char size[32];
	char dir[PATH_MAX];
};

/* Whether the user gave one of the record options NAMES (a long one also as --name=value). */
static bool passes_option(const struct sweep_options *o, const char *const *names)
{
	for (int k = 0; k < o->npassthrough; k++)
		for (const char *const *name = names; *name; name++) {
			const char *w = o->passthrough[k];
			size_t len = strlen(*name);
			if (strncmp(w, *name, len) == 0 && (w[len] == '\0' || (w[1] == '-' && w[len] == '=')))
				return true;
		}
	return false;
}

/* `faultline record ...` for SIZE (0: unlimited) into DIR: its word count, or -1 when too long.
 * Without --stacks the runs take no fault stacks (-s 0), unless the user chose stacks or PMU events,
 * and no timeline (--timeline 0: its per-thread counters cost each fault a few µs more), unless the
 * user chose one. */
static int make_record_argv(const struct sweep_options *o, uint64_t size, const char *dir, struct run_argv *a)
{
	static const char *const stack_options[] = { "-s", "--sample", "--stack-depth", "--pmu", NULL };
	static const char *const timeline_options[] = { "--timeline", "--timeline-every", NULL };
	size_t n = 0, ncmd = 0;

	while (o->command[ncmd])
		ncmd++;
	if ((size_t)o->npassthrough + ncmd + 16 > sizeof(a->words) / sizeof(a->words[0]))
		return -1;
	snprintf(a->size, sizeof(a->size), "%" PRIu64 "K", size / CLI_KIB);
	snprintf(a->dir, sizeof(a->dir), "%s", dir);
	a->words[n++] = "faultline";
	a->words[n++] = "record";
	a->words[n++] = "-q";
	a->words[n++] = "--force";
	a->words[n++] = "-L";
	a->words[n++] = size ? a->size : "unlimited";
	a->words[n++] = "-o";
	a->words[n++] = a->dir;
	if (!o->stacks && !passes_option(o, stack_options)) {
		a->words[n++] = "-s";
		a->words[n++] = "0";
	}
	if (!o->stacks && !passes_option(o, timeline_options)) {
		a->words[n++] = "--timeline";
		a->words[n++] = "0";
	}
	for (int k = 0; k < o->npassthrough; k++)
		a->words[n++] = o->passthrough[k];
	a->words[n++] = "--";
	for (size_t k = 0; k < ncmd; k++)
		a->words[n++] = o->command[k];
	a->words[n] = NULL;
	return (int)n;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The first line of the file at PATH that record wrote as an error ("faultline: ..."), without
 * its prefix and newline, into buf; false when there is none. */
static bool first_log_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	bool found = false;
	if (!f)
		return false;
	while (!found && fgets(buf, (int)len, f))
		found = strncmp(buf, "faultline: ", 11) == 0;
	fclose(f);
	if (found) {
		memmove(buf, buf + 11, strlen(buf + 11) + 1);
		buf[strcspn(buf, "\n")] = '\0';
	}
	return found;
}

/* Runs record for P (its dir made here); 0, or sweep's exit status after the message: 2 when
 * record refused its options (a usage error), 1 for any other failure. */
static int run_one(const struct sweep_options *o, const struct sweep_stdin *in, const char *self,
		   const char *out_dir, struct sweep_point *p)
{
	struct run_argv a;
	char dir[PATH_MAX], log[PATH_MAX + 16], err[1024];
	struct rusage ru;
	int status;
	pid_t pid;

	char shown[32]; /* the size as the progress lines show it */
	if (p->local_bytes)
		cli_format_size(p->local_bytes, shown, sizeof(shown));
	else
		snprintf(shown, sizeof(shown), "unlimited");
	snprintf(dir, sizeof(dir), "%s/%s", out_dir, p->name);
	snprintf(log, sizeof(log), "%s/record.log", dir);
	if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
		cli_error("sweep: mkdir %s: %s", dir, strerror(errno));
		return 1;
	}
	if (make_record_argv(o, p->local_bytes, dir, &a) < 0) {
		cli_error("sweep: the command line is too long");
		return 1;
	}
	int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0) {
		cli_error("sweep: open %s: %s", log, strerror(errno));
		return 1;
	}
	if (stdin_rewind(in) != 0) {
		close(fd);
		return 1;
	}
	double start = now_s();
	pid = fork();
	if (pid < 0) {
		cli_error("sweep: fork: %s", strerror(errno));
		close(fd);
		return 1;
	}
	if (pid == 0) {
		if (dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0 ||
		    (in->copy >= 0 && dup2(in->copy, STDIN_FILENO) < 0))
			_exit(127);
		execv(self, a.words);
		dprintf(STDERR_FILENO, "faultline: sweep: execv %s: %s\n", self, strerror(errno));
		_exit(127);
	}
	close(fd);
	running_child = pid;
	if (stop_signal) /* it came before the handler could know the child */
		kill(pid, stop_signal);
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			cli_error("sweep: wait4 %ld: %s", (long)pid, strerror(errno));
			return 1;
		}
	}
	running_child = 0;
	p->wall_s = now_s() - start;
	p->cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
		   (double)ru.ru_stime.tv_usec / 1e6;
	p->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (stop_signal) {
		cli_error("sweep: stopped by signal %d during -L %s (its output: %s)", (int)stop_signal,
			  shown, log);
		return 1;
	}
	if (p->exit_status == FL_EXIT_RUNTIME_FAILURE) { /* the runtime stopped the program (far store) */
		cli_error("sweep: -L %s: record exited %d: the runtime stopped the program or could not start "
			  "(its output: %s)", shown, p->exit_status, log);
		return 1;
	}
	if (sweep_point_load(p, dir, err, sizeof(err)) < 0) {
		char why[512];
		if (p->exit_status == 2 && first_log_line(log, why, sizeof(why))) { /* record's usage error */
			cli_error("sweep: -L %s: record refused the options: %s", shown, why);
			return 2;
		}
		cli_error("sweep: -L %s: record exited %d: %s (its output: %s)", shown,
			  p->exit_status, err, log);
		return 1;
	}
	return 0;
}

/* The runs must agree on the program's exit status (see the top comment); 0 or -1 after the
 * message. */
static int check_status(const struct sweep_point *first, const struct sweep_point *p, const char *out_dir)
{
	char a[32], b[32];
	if (p->exit_status == first->exit_status)
		return 0;
	cli_error("sweep: -L %s: record exited %d where the run at -L %s exited %d (its output: %s/%s/record.log)",
		  p->local_bytes ? cli_format_size(p->local_bytes, a, sizeof(a)) : "unlimited", p->exit_status,
		  first->local_bytes ? cli_format_size(first->local_bytes, b, sizeof(b)) : "unlimited", first->exit_status,
		  out_dir, p->name);
	return -1;
}

/* ----------------------------------------------------------------- the verb */

/* Creates OUT (refusing a non-empty one without --force). 0, or the exit status. */
static int make_output_dir(const char *out, bool force)
{
	if (mkdir(out, 0777) == 0)
		return 0;
	if (errno != EEXIST) {
		cli_error("sweep: mkdir %s: %s", out, strerror(errno));
		return 1;
	}
	if (!force) {
		cli_error("sweep: %s exists (use --force to reuse it)", out);
		return 1;
	}
	return 0;
}

static int write_outputs(const struct sweep_point *points, size_t n, size_t knee, const char *out_dir,
			 const char *title)
{
	static const char *const names[] = { "sweep.csv", "sweep.svg" };

	for (int k = 0; k < 2; k++) {
		char path[PATH_MAX + 16];
		snprintf(path, sizeof(path), "%s/%s", out_dir, names[k]);
		FILE *f = fopen(path, "w");
		if (!f) {
			cli_error("sweep: fopen %s: %s", path, strerror(errno));
			return 1;
		}
		if (k == 0)
			sweep_print_csv(points, n, f);
		else
			sweep_write_svg(points, n, knee, title, f);
		if (ferror(f) | fclose(f)) {
			cli_error("sweep: writing %s: %s", path, strerror(errno));
			return 1;
		}
	}
	return 0;
}

static void progress(size_t i, size_t n, const struct sweep_point *p, const char *out_dir)
{
	char size[32];
	cli_error("sweep: [%zu/%zu] -L %s: recording into %s/%s", i + 1, n,
		  p->local_bytes ? cli_format_size(p->local_bytes, size, sizeof(size)) : "unlimited", out_dir, p->name);
}

static int sweep_run(const struct sweep_options *o, const struct sweep_stdin *in, const char *out_dir)
{
	struct sweep_point points[SWEEP_MAX_POINTS + 1];
	uint64_t sizes[SWEEP_MAX_POINTS];
	size_t n = 0, nsizes = 0, first = 0;
	char self[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (len < 0) {
		cli_error("sweep: readlink /proc/self/exe: %s", strerror(errno));
		return 1;
	}
	self[len] = '\0';
	memset(points, 0, sizeof(points));
	if (o->list) {
		memcpy(sizes, o->sizes, o->nsizes * sizeof(sizes[0]));
		nsizes = o->nsizes;
	}
	if (o->autosize) {
		sweep_point_name(0, points[0].name, sizeof(points[0].name));
		progress(0, SWEEP_AUTO_HALVINGS + 2, &points[0], out_dir);
		int rc = run_one(o, in, self, out_dir, &points[0]);
		if (rc != 0)
			return rc;
		if (points[0].peak_resident_bytes == 0) {
			cli_error("sweep: --auto: the unlimited run had no resident heap (peak_resident_bytes 0)");
			return 1;
		}
		nsizes = sweep_auto_sizes(points[0].peak_resident_bytes, sizes);
		n = first = 1;
	}
	for (size_t k = 0; k < nsizes; k++, n++) {
		points[n].local_bytes = sizes[k];
		sweep_point_name(sizes[k], points[n].name, sizeof(points[n].name));
		progress(n, nsizes + first, &points[n], out_dir);
		int rc = run_one(o, in, self, out_dir, &points[n]);
		if (rc != 0)
			return rc;
		if (check_status(&points[0], &points[n], out_dir) < 0)
			return 1;
		char status[64] = "";
		if (points[n].exit_status)
			snprintf(status, sizeof(status), " (exit status %d, as at every size so far)", points[n].exit_status);
		cli_error("sweep:   %" PRIu64 " faults, %" PRIu64 " refaults, %.2f s%s", points[n].faults_total, points[n].refault,
			  points[n].wall_s, status);
	}
	sweep_sort(points, n);
	size_t knee = sweep_knee(points, n);
	int rc = write_outputs(points, n, knee, out_dir, o->command[0]);
	if (rc == 0) {
		if (o->csv)
			sweep_print_csv(points, n, stdout);
		else
			sweep_print_table(points, n, knee, out_dir, stdout);
		if (cli_finish_output("sweep", stdout) != 0)
			rc = 1;
		cli_error("sweep: wrote %s/sweep.csv and %s/sweep.svg", out_dir, out_dir);
	}
	return rc;
}

int cmd_sweep(int argc, char **argv)
{
	struct sweep_options o;
	struct record_options check;
	struct run_argv a;
	char err[512], out_dir[PATH_MAX];
	int rc = parse_args(argc, argv, &o);

	if (rc == 0 && make_record_argv(&o, CLI_MIB, "x", &a) < 0)
		rc = usage_error("the command line is too long");
	if (rc == 0 && record_parse_args(make_record_argv(&o, CLI_MIB, "x", &a) - 1, a.words + 1, &check, err, sizeof(err)) < 0)
		rc = usage_error("%s", err);
	else if (rc == 0 && strcmp(check.command[0], o.command[0]) != 0) /* a stray word before "--" */
		rc = usage_error("'%s' is neither an option nor the command (the command follows --)", check.command[0]);
	/* each size of -L as record takes it (-L above -M...), before the first run */
	for (size_t k = 0; rc == 0 && k < o.nsizes; k++) {
		int words = make_record_argv(&o, o.sizes[k], "x", &a);
		if (record_parse_args(words - 1, a.words + 1, &check, err, sizeof(err)) < 0)
			rc = usage_error("%s", err);
	}
	if (rc == 0) {
		const char *base = strrchr(o.command[0], '/');
		if (o.output)
			snprintf(out_dir, sizeof(out_dir), "%s", o.output);
		else
			snprintf(out_dir, sizeof(out_dir), "faultline-sweep-%s-%ld", base ? base + 1 : o.command[0], (long)getpid());
		rc = make_output_dir(out_dir, o.force);
	}
	if (rc == 0) {
		struct sweep_stdin in;
		handle_stop_signals();
		rc = stdin_prepare(&in, out_dir);
		if (rc == 0)
			rc = sweep_run(&o, &in, out_dir);
		if (in.copy >= 0)
			close(in.copy);
		if (stop_signal)
			rc = 128 + stop_signal;
	}
	free(o.passthrough);
	return rc < 0 ? 0 : rc;
}
