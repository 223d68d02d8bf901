/* fork_locale.c: fork in a program that set its locale, with its heap larger than local memory.
 *
 * setlocale(LC_ALL, LOCALE) makes libc allocate the locale's data with malloc, on the heap, where a
 * thread's start-up in libc reads it (__ctype_init, for the new thread's character tables). The
 * program then fills N MiB, so under a small -L that data is evicted, and forks: every thread a
 * forked child starts (the runtime's own included) reads it at start-up.
 *
 *   parent: setlocale, fill N MiB with pattern A, fork, wait for the child
 *   child:  start a thread (which reads the locale at start-up), verify A everywhere, exit 3
 *   parent: check the child's exit status (3), verify A
 *
 * usage: fork_locale LOCALE [N_MiB]   (default 32). Exits 0 and prints a checksum line, the same in
 * every correct run; exits 1 with a message when LOCALE is not installed. */
#include "planted.h"
#include <locale.h>
#include <pthread.h>
#include <sys/wait.h>

#define SEED_A 0x10ca1eULL

static void *thread_main(void *arg)
{
	return arg;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		die("usage: fork_locale LOCALE [N_MiB]");
	if (!setlocale(LC_ALL, argv[1]))
		die("setlocale(LC_ALL, %s) failed: the locale is not installed", argv[1]);
	size_t mib = arg_ulong(argc, argv, 2, 32), nwords;
	uint64_t *p = malloc_filled(mib, SEED_A, &nwords);
	pid_t pid = fork_flushed();
	if (pid == 0) {
		pthread_t t;
		int err = pthread_create(&t, NULL, thread_main, NULL);
		if (err || pthread_join(t, NULL))
			die("child: pthread_create: %s", strerror(err));
		verify_words(p, nwords, SEED_A, "child");
		_exit(3);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid)
		die_errno("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 3)
		die("the child ended with status %#x, not exit 3", status);
	uint64_t sum = verify_words(p, nwords, SEED_A, "parent");
	printf("fork_locale %s %zu MiB: child exited 3, checksum %016llx\n", argv[1], mib, (unsigned long long)sum);
	free(p);
	return 0;
}
