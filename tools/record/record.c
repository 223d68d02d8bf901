/* record.c: `faultline record [options] [--] CMD [ARGS...]` — runs a command with the
 * far-memory runtime preloaded and leaves its trace in an output directory.
 *
 * One run, step by step, a file each (as perf splits builtin-record.c from its util/):
 *   1. options        record_options.c: every option in every spelling, checked values
 *   2. checks         record_checks.c: the command exists and can carry LD_PRELOAD (not
 *                     static, not set-user-ID), the runtime library exists, userfaultfd opens
 *   3. output dir     record_outdir.c: default name, refuse a non-empty one unless --force
 *   4. environment    record_env.c: the FAULTLINE_* contract of inc/faultline/env.h, LD_PRELOAD
 *   5. run            here: fork + execvp, forward SIGINT/SIGTERM/SIGHUP/SIGQUIT, wait, exit
 *                     with the child's status (128+N when killed by signal N); and cmd_record,
 *                     which runs the steps in order
 *   6. summary        record_summary.c: every DIR/<pid>/stats.json read back, one screen on stderr
 * `record` never writes to stdout while recording: the traced program owns it. */
#include "record.h"
#include "record_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "cli.h"
#include "far_cleanup.h"
#include "far_spec.h"
#include "record_binaries.h"
#include "record_exit.h"
#include "faultline/pmu_events.h"
#include "faultline/trace.h"

/* ---------------------------------------------------------------------------------------
 * 5. Running the command
 * ------------------------------------------------------------------------------------- */

/* The signals record forwards to the child; record itself takes them with sigwaitinfo,
 * so they never kill it while it waits. SIGCHLD is in the same set to wake the wait. */
static void forwarded_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGQUIT);
	sigaddset(set, SIGCHLD);
}

/* Exit status of a shell for a command that could not be executed. */
static int exec_failure_status(int error)
{
	return error == ENOENT || error == ENOTDIR ? 127 : 126;
}

/* In the child: restore what record changed, install the environment, exec. Reports
 * errno through report_fd (close-on-exec, so a successful exec closes it silently). */
static void __attribute__((noreturn))
child_exec(const struct record_options *o, const struct child_env *env, const sigset_t *old_mask,
	   const struct sigaction *old_sigchld, int report_fd, pid_t record_pid)
{
	int error;

	/* the program dies with record: a record killed with SIGKILL leaves no orphan recording on */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != record_pid)
		_exit(128 + SIGKILL);
	sigaction(SIGCHLD, old_sigchld, NULL);
	sigprocmask(SIG_SETMASK, old_mask, NULL);
	if (child_env_apply(env) == 0)
		execvp(o->command[0], o->command);
	error = errno;
	while (write(report_fd, &error, sizeof(error)) < 0 && errno == EINTR)
		;
	_exit(exec_failure_status(error));
}

static double monotonic_seconds(void);

/* Waits for the child; forwards the signals record receives from other processes.
 * Terminal-generated signals (si_code SI_KERNEL) already reached the child, which is in
 * record's foreground process group, so they are not sent twice. However the signal came,
 * record waits for the program's runtime to finish its trace (the runtime's handler writes
 * every buffered record and stats.json before the program dies), as `perf record` finishes its
 * file on Ctrl-C. The same stop signal again, a second or more after the first (a second Ctrl-C,
 * not the burst of copies that `timeout` or a scheduler sends to the whole group), cuts that
 * short: the program is killed with SIGKILL and its trace keeps what was written until then.
 * Another signal is forwarded as the first was (a SIGTERM after a SIGINT the program caught). */
static int wait_forwarding_signals(pid_t pid, const sigset_t *signals, int *status)
{
	double first_at[NSIG] = { 0 }; /* per signal: when record first got it */
	bool killed = false;
	for (;;) {
		siginfo_t info;
		pid_t done = waitpid(pid, status, WNOHANG);
		int sig;

		if (done == pid)
			return 0;
		if (done < 0 && errno != EINTR) {
			cli_error("waitpid %ld: %s", (long)pid, strerror(errno));
			return -1;
		}
		sig = sigwaitinfo(signals, &info);
		if (sig < 0 && errno != EINTR) {
			cli_error("sigwaitinfo: %s", strerror(errno));
			return -1;
		}
		if (sig <= 0 || sig == SIGCHLD)
			continue;
		double now = monotonic_seconds();
		if (first_at[sig] == 0) {
			first_at[sig] = now;
		} else if (now - first_at[sig] >= 1.0 && !killed) {
			cli_error("%s again: killing the program (SIGKILL); its trace keeps what was written until now",
				  strsignal(sig));
			kill(pid, SIGKILL);
			killed = true;
			continue;
		}
		if (info.si_code != SI_KERNEL)
			kill(pid, sig);
	}
}

/* Reads the exec report: 0 when exec succeeded, else the child's errno (child reaped). */
static int read_exec_report(int fd, pid_t pid)
{
	int error = 0, status;
	ssize_t n;

	do
		n = read(fd, &error, sizeof(error));
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(error))
		return 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return error;
}

static double monotonic_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The outcome of running the command. */

/* Forks, execs and waits. Returns 0 with *run filled, or the exit status to give up with
 * (127/126 when exec failed, 1 on a system error) after saying why. Forwarded signals stay
 * blocked afterwards, so a late Ctrl-C cannot cut the summary short. */
static int run_command(const struct record_options *o, const struct child_env *env,
		       struct record_run *run)
{
	struct sigaction default_sigchld = { .sa_handler = SIG_DFL }, old_sigchld;
	sigset_t signals, old_mask;
	int report[2], error;
	pid_t pid;

	if (pipe2(report, O_CLOEXEC) < 0) {
		cli_error("pipe2: %s", strerror(errno));
		return 1;
	}
	forwarded_signals(&signals);
	sigprocmask(SIG_BLOCK, &signals, &old_mask);
	sigaction(SIGCHLD, &default_sigchld, &old_sigchld);   /* SIG_IGN would auto-reap */
	fflush(NULL);
	run->seconds = monotonic_seconds();
	pid_t record_pid = getpid();
	pid = fork();
	if (pid == 0) {
		close(report[0]);
		child_exec(o, env, &old_mask, &old_sigchld, report[1], record_pid);
	}
	close(report[1]);
	if (pid < 0) {
		cli_error("fork: %s", strerror(errno));
		close(report[0]);
		return 1;
	}
	error = read_exec_report(report[0], pid);
	close(report[0]);
	if (error != 0) {
		cli_error("cannot run '%s': %s", o->command[0], strerror(error));
		return exec_failure_status(error);
	}
	if (wait_forwarding_signals(pid, &signals, &run->status) < 0)
		return 1;
	run->seconds = monotonic_seconds() - run->seconds;
	return 0;
}

static int exit_status_of(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

/* ---------------------------------------------------------------------------------------
 * The verb
 * ------------------------------------------------------------------------------------- */

/* Everything that must hold before anything is created or started. */
static int check_before_start(const struct record_options *o, char *library, size_t len)
{
	char path[PATH_MAX];

	if (find_command(o->command[0], path, sizeof(path)) < 0) {
		int error = errno;

		cli_error("cannot run '%s': %s", o->command[0], strerror(error));
		return exec_failure_status(error);
	}
	int status = check_interpreters(path, o->command[0]);
	if (status)
		return status;
	if (check_traceable(path, o->command[0]) < 0)
		return CLI_EXIT_USAGE;
	if (find_runtime_library(library, len) < 0 || check_userfaultfd() < 0)
		return CLI_EXIT_USAGE;
	return 0;
}

static void print_banner(const struct record_options *o, const char *dir_shown)
{
	char local[32], max[32], quoted[PATH_MAX + 64];

	if (o->quiet)
		return;
	cli_error("recording '%s' into %s (local %s, max %s, %s)", o->command[0],
		  cli_shell_quote(dir_shown, quoted, sizeof(quoted)),
		  o->local_bytes ? cli_format_size(o->local_bytes, local, sizeof(local)) : "unlimited",
		  cli_format_size(o->max_bytes, max, sizeof(max)), o->policy);
}

/* --far memcached: the items of the run are deleted from the servers (every process has exited). */
static void clean_far_store(const struct record_options *o, const char *dir)
{
	char err[512], line[1024], count[32];
	uint64_t deleted[FAR_CLEANUP_MAX_SERVERS], total = 0;
	unsigned servers;

	if (strncmp(o->far_spec, "memcached:", 10) != 0)
		return;
	if (far_cleanup_memcached(o->far_spec, dir, deleted, &servers, err, sizeof(err)) < 0) {
		cli_error("WARNING: the run's items could not all be deleted from memcached: %s (key prefixes "
			  "in %s/*/" FL_FILE_NAME_FAR_KEYS ")", err, dir);
		return;
	}
	size_t n = 0;
	for (unsigned i = 0; i < servers && n < sizeof(line); i++) {
		total += deleted[i];
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%" PRIu64, i ? ", " : "", deleted[i]);
	}
	if (!o->quiet && total)
		cli_error("deleted the run's %s items from memcached (per server, in --far order: %s)",
			  cli_format_count(total, count, sizeof(count)), line);
}

static int record_run_parsed(const struct record_options *o)
{
	char library[PATH_MAX], dir_shown[PATH_MAX], dir[PATH_MAX];
	struct child_env env;
	struct record_run run;
	int rc;

	rc = check_before_start(o, library, sizeof(library));
	if (rc != 0)
		return rc;
	if (output_dir_name(o, dir_shown, sizeof(dir_shown)) < 0 ||
	    prepare_output_dir(dir_shown, o, dir) < 0)
		return CLI_EXIT_USAGE;
	if (child_env_build(o, dir, library, &env) < 0) {
		cli_error("building the environment: %s (or more than %d variables)", strerror(ENOMEM), CHILD_ENV_MAX);
		return 1;
	}
	print_banner(o, dir_shown);
	struct timespec started;
	clock_gettime(CLOCK_REALTIME, &started);
	rc = run_command(o, &env, &run);
	child_env_free(&env);
	if (rc != 0)
		return rc;
	record_binaries(dir, o->archive, &started, o->quiet); /* says why when it fails */
	record_exit_write(dir, run.status);                   /* the same */
	clean_far_store(o, dir);
	unsigned traced = print_summary(o, &run, dir_shown, dir);
	rc = exit_status_of(run.status);
	if (traced == 0 && o->quiet) /* without -q the summary said so */
		cli_error("no process wrote a trace into %s (the runtime did not start)", dir_shown);
	/* a program that ran untraced and exited 0 is no success of record's */
	return rc == 0 && traced == 0 ? RECORD_EXIT_UNTRACED : rc;
}

int cmd_record(int argc, char **argv)
{
	struct record_options o;
	char err[512];

	if (record_parse_args(argc, argv, &o, err, sizeof(err)) < 0) {
		return cli_usage_error("record", "%s", err);
	}
	if (o.help) {
		record_usage();
		return 0;
	}
	if (far_spec_check(o.far, o.far_spec, sizeof(o.far_spec), err, sizeof(err)) < 0) {
		cli_error("record: --far: %s", err); /* a path or server that cannot be used */
		return CLI_EXIT_USAGE;
	}
	if (o.pmu && check_pmu(o.pmu, true, err, sizeof(err)) < 0) {
		cli_error("record: --pmu: %s", err);
		return CLI_EXIT_USAGE;
	}
	return record_run_parsed(&o);
}
