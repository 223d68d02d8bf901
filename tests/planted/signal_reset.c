/* signal_reset.c: a program that sets every signal to SIG_DFL or SIG_IGN, as git does in each child
 * between fork and exec, and as `env --default-signal` or a daemon does, then goes on working. The
 * runtime's own signals (the fault handlers' wake-up, the stack signal) must keep working under it:
 * the handlers' periodic wake-up would otherwise kill the process, or be lost.
 *
 *   child:  every signal to SIG_DFL (git's run-command.c), sleeps past a few of the handlers'
 *           periodic flushes, fills and verifies N MiB, then execs `echo child-ok`
 *   parent: waits for the child; every signal to SIG_IGN, each read back as SIG_IGN; sleeps; fills
 *           and verifies N MiB; every signal back to SIG_DFL, each read back as SIG_DFL; sleeps;
 *           verifies again; exits 0
 *
 * usage: signal_reset N_MiB. Prints the same lines in every correct run. */
#include "planted.h"
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#define SEED 0x516eULL

static void set_all(void (*disposition)(int))
{
	for (int sig = 1; sig < NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP || (sig > 31 && sig < SIGRTMIN)) /* glibc's own */
			continue;
		if (signal(sig, disposition) == SIG_ERR)
			die_errno("signal(%d)", sig);
	}
}

/* Every signal the program may set reads back as DISPOSITION. */
static void check_all(void (*disposition)(int), const char *name)
{
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction old;
		if (sig == SIGKILL || sig == SIGSTOP || (sig > 31 && sig < SIGRTMIN))
			continue;
		if (sigaction(sig, NULL, &old) != 0)
			die_errno("sigaction(%d)", sig);
		if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != disposition)
			die("signal %d does not read back as %s", sig, name);
	}
}

static void nap_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&t, &t) != 0 && errno == EINTR)
		;
}

static uint64_t fill_and_verify(size_t bytes, uint64_t seed)
{
	uint64_t *p = malloc(bytes);
	if (!p)
		die("malloc(%zu) failed", bytes);
	size_t nwords = bytes / sizeof(uint64_t);
	fill_words(p, nwords, seed);
	uint64_t sum = 0;
	for (size_t i = 0; i < nwords; i++) {
		if (p[i] != pattern_word(i, seed))
			die("word %zu: wrong content", i);
		sum += p[i];
	}
	free(p);
	return sum;
}

int main(int argc, char **argv)
{
	size_t bytes = arg_ulong(argc, argv, 1, 16) * MiB;
	pid_t child = fork_flushed();
	if (child == 0) {
		set_all(SIG_DFL);
		check_all(SIG_DFL, "SIG_DFL");
		nap_ms(350); /* past the handlers' periodic flushes (every 100 ms) */
		printf("child sum %llx\n", (unsigned long long)fill_and_verify(bytes, SEED));
		fflush(stdout);
		execlp("echo", "echo", "child-ok", (char *)NULL);
		die_errno("execlp(echo)");
	}
	int status;
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			die_errno("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		die("child: %s %d", WIFSIGNALED(status) ? "killed by signal" : "exit status",
		    WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	set_all(SIG_IGN);
	check_all(SIG_IGN, "SIG_IGN");
	nap_ms(350);
	printf("parent sum %llx\n", (unsigned long long)fill_and_verify(bytes, SEED + 1));
	set_all(SIG_DFL);
	check_all(SIG_DFL, "SIG_DFL");
	nap_ms(350);
	printf("parent sum %llx\n", (unsigned long long)fill_and_verify(bytes, SEED + 2));
	return 0;
}
