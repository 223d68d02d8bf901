/* exit_code.c: touches some heap, then ends in a chosen way, so a test can check that `record`
 * passes the status through (N, or 128 + signal number).
 *
 * usage: exit_code N            exit(N) after touching 8 MiB of heap
 *        exit_code _exit N      _exit(N) (no atexit handlers, no stdio flush)
 *        exit_code signal SIG   raise(SIG) (unblocked; an inherited SIG_IGN is reset to SIG_DFL, any
 *                               other disposition, e.g. a handler of the runtime, is left alone);
 *                               SIG is a number or a name (TERM, SIGTERM, KILL, SEGV, ABRT, ...)
 *        exit_code signal-dfl SIG   signal(SIG, SIG_DFL), then raise(SIG): the pattern of programs
 *                               that clean up on a signal and then die of it (GNU sort does this)
 *        exit_code vfork-signal SIG   a vfork child dies of SIG first (it shares the process's memory,
 *                               not its signal actions), then the process raises SIG too
 * Exits 99 with a message if it is still alive after raising the signal. */
#include "planted.h"
#include <signal.h>
#include <sys/wait.h>

static int signal_number(const char *s)
{
	char *end;
	long n = strtol(s, &end, 10);
	if (end != s && !*end && n > 0 && n < NSIG)
		return (int)n;
	if (!strncmp(s, "SIG", 3))
		s += 3;
	for (int sig = 1; sig < NSIG; sig++) {
		const char *abbrev = sigabbrev_np(sig);
		if (abbrev && !strcmp(abbrev, s))
			return sig;
	}
	die("unknown signal '%s'", s);
}

static int exit_status(const char *s)
{
	char *end;
	long n = strtol(s, &end, 10);
	if (end == s || *end || n < 0 || n > 255)
		die("exit status must be 0..255, got '%s'", s);
	return (int)n;
}

static void touch_heap(void)
{
	size_t nwords = 8 * MiB / sizeof(uint64_t);
	uint64_t *p = malloc(8 * MiB);
	if (!p)
		die_errno("malloc(8 MiB)");
	fill_words(p, nwords, 0xe1e1);
	verify_words(p, nwords, 0xe1e1, "heap");
	/* kept allocated on purpose: the process ends with live, partly evicted heap */
}

int main(int argc, char **argv)
{
	if (argc == 2) {
		int status = exit_status(argv[1]);
		touch_heap();
		exit(status);
	}
	if (argc == 3 && !strcmp(argv[1], "_exit")) {
		int status = exit_status(argv[2]);
		touch_heap();
		_exit(status);
	}
	if (argc == 3 && !strcmp(argv[1], "vfork-signal")) {
		int sig = signal_number(argv[2]), status;
		touch_heap();
		pid_t pid = vfork();
		if (pid == 0) {
			kill(getpid(), sig);
			_exit(98);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFSIGNALED(status) || WTERMSIG(status) != sig)
			die("the vfork child did not die of signal %d", sig);
		raise(sig);
		fprintf(stderr, "exit_code: still alive after raise(%d)\n", sig);
		return 99;
	}
	if (argc == 3 && (!strcmp(argv[1], "signal") || !strcmp(argv[1], "signal-dfl"))) {
		int sig = signal_number(argv[2]);
		touch_heap();
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, sig);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		struct sigaction old;
		if (!strcmp(argv[1], "signal-dfl") || (!sigaction(sig, NULL, &old) && old.sa_handler == SIG_IGN))
			signal(sig, SIG_DFL);
		raise(sig);
		fprintf(stderr, "exit_code: still alive after raise(%d)\n", sig);
		return 99;
	}
	fprintf(stderr, "usage: exit_code N | exit_code _exit N | exit_code signal|signal-dfl|vfork-signal SIG\n");
	return 2;
}
