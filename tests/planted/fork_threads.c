/* fork_threads.c: fork while other threads thrash, with the heap larger than local memory.
 *
 * In the child of a fork, libc keeps the stacks of the parent's other threads in its cache, and a
 * thread created there may take one: pthread_create then clears that stack's thread-local table,
 * which the program's malloc put on the heap. With those pages evicted, the child's runtime, which
 * starts its own threads at the fork, faulted before any of its handlers ran, and the child hung.
 *
 *   4 threads: each fills its own 8 MiB and keeps rewriting it (and mallocs and frees 100 kB)
 *   main: 3 times: fork; the child writes and checks 1 MiB, checks its parent's pattern, exits 0;
 *         the parent waits for it and counts the children that exited 0
 *   main: stops the threads, verifies their buffers
 *
 * usage: fork_threads   Prints "forks ok 3" and a checksum line, the same in every correct run. */
#include "planted.h"
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>

#define THREADS 4
#define MIB_EACH 8
#define FORKS 3

static atomic_int stop;
static uint64_t *buffers[THREADS];
static size_t words[THREADS];

static void *work(void *arg)
{
	long id = (long)arg;
	uint64_t *p = malloc_filled(MIB_EACH, (uint64_t)id + 1, &words[id]);
	buffers[id] = p;
	while (!atomic_load(&stop)) {
		for (size_t i = 0; i < words[id]; i += WORDS_PER_PAGE)
			p[i] = pattern_word(i, (uint64_t)id + 1); /* a write per page: the same value */
		void *q = malloc(100000);
		memset(q, 1, 100000);
		free(q);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];
	size_t nmain;
	uint64_t *mine = malloc_filled(4, 0xf0c5, &nmain);
	for (long i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, work, (void *)i) != 0)
			die("pthread_create");
	int ok = 0;
	for (int k = 0; k < FORKS; k++) {
		struct timespec nap = { 0, 300 * 1000 * 1000 };
		nanosleep(&nap, NULL);
		pid_t pid = fork_flushed();
		if (pid == 0) {
			size_t n;
			uint64_t *x = malloc_filled(1, 0xc41d, &n);
			verify_words(x, n, 0xc41d, "the child's new buffer");
			verify_words(mine, nmain, 0xf0c5, "the parent's buffer, in the child");
			_exit(0);
		}
		int status;
		if (waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0)
			ok++;
	}
	atomic_store(&stop, 1);
	uint64_t sum = verify_words(mine, nmain, 0xf0c5, "the parent's buffer");
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		sum ^= verify_words(buffers[i], words[i], (uint64_t)i + 1, "a thread's buffer");
	}
	printf("forks ok %d\nfork_threads: checksum %016llx\n", ok, (unsigned long long)sum);
	return 0;
}
