/* rel_crash.c: a multi-threaded program that dies while its threads are faulting: of SIGSEGV or
 * SIGABRT raised in a worker thread, of _exit(N) called by a worker thread, of SIGKILL (sent by a
 * worker to its own process, or from outside). `record` must exit with the status the program would
 * have had natively and leave a readable trace; nothing may survive the program (processes, threads,
 * temporary files).
 *
 * WORKERS threads (default 4) each write one word per page of their own 4 MiB buffer, pass after
 * pass, checking the previous pass (so under a small -L they refault all the time). Once every worker
 * has made 2 passes, main prints "rel_crash MODE: crashing" (flushed) and worker 0 ends the process:
 *   segv          stores through a NULL pointer
 *   abort         abort()
 *   exit N        _exit(N) from worker 0 (the other threads are still faulting)
 *   selfkill      kill(getpid(), SIGKILL), once the process has run for at least 1.5 s (a SIGKILL
 *                 loses what the runtime's writer had not written yet, and it writes an open
 *                 frame of records 0.5 s after its first record: a quick run left no fault)
 *   spin          never ends by itself: forks a child first (which faults too and dies with its
 *                 parent: PR_SET_PDEATHSIG), prints "rel_crash spin: ready PID CHILD_PID" and waits
 *                 to be killed from outside
 * usage: rel_crash MODE [N] */
#include "planted.h"
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/prctl.h>

#define WORKERS 4
#define WORKER_PAGES 1024

static atomic_uint passes_done[WORKERS];
static atomic_bool go_crash;
static const char *mode;
static int exit_status;

static void crash(void)
{
	if (!strcmp(mode, "segv")) {
		volatile int *volatile nowhere = NULL;
		*nowhere = 1;
	} else if (!strcmp(mode, "abort")) {
		abort();
	} else if (!strcmp(mode, "exit")) {
		_exit(exit_status);
	} else if (!strcmp(mode, "selfkill")) {
		kill(getpid(), SIGKILL);
	}
	die("mode %s: still alive after crashing", mode);
}

static void fault_forever(unsigned index, bool may_crash)
{
	uint64_t *p = aligned_alloc(PAGE_SIZE_BYTES, WORKER_PAGES * PAGE_SIZE_BYTES);
	if (!p)
		die_errno("worker %u: aligned_alloc", index);
	for (uint64_t pass = 0;; pass++) {
		for (size_t i = 0; i < WORKER_PAGES; i++) {
			uint64_t *w = p + i * WORDS_PER_PAGE;
			if (pass && *w != pattern_word(i + index * WORKER_PAGES, pass - 1))
				die("worker %u: page %zu holds %#llx after pass %llu", index, i, (unsigned long long)*w,
				    (unsigned long long)pass - 1);
			*w = pattern_word(i + index * WORKER_PAGES, pass);
		}
		if (index < WORKERS)
			atomic_store(&passes_done[index], (unsigned)pass + 1);
		if (may_crash && atomic_load(&go_crash))
			crash();
	}
}

static void *worker(void *arg)
{
	unsigned index = (unsigned)(uintptr_t)arg;
	fault_forever(index, index == 0 && strcmp(mode, "spin"));
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: rel_crash segv|abort|exit N|selfkill|spin\n");
		return 2;
	}
	mode = argv[1];
	if (!strcmp(mode, "exit"))
		exit_status = (int)arg_ulong(argc, argv, 2, 3);
	else if (strcmp(mode, "segv") && strcmp(mode, "abort") && strcmp(mode, "selfkill") && strcmp(mode, "spin"))
		die("unknown mode '%s'", mode);

	pid_t child = 0;
	if (!strcmp(mode, "spin")) {
		fflush(NULL);
		pid_t parent = getpid();
		child = fork();
		if (child < 0)
			die_errno("fork");
		if (child == 0) {
			if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
				_exit(1); /* the parent is already gone */
			fault_forever(WORKERS, false);
		}
	}
	pthread_t t[WORKERS];
	for (unsigned i = 0; i < WORKERS; i++) {
		int err = pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i);
		if (err)
			die_errno_at(err, "pthread_create(worker %u)", i);
	}
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (unsigned i = 0; i < WORKERS; i++)
		while (atomic_load(&passes_done[i]) < 2)
			usleep(1000);
	if (!strcmp(mode, "selfkill")) {
		struct timespec now;
		do {
			usleep(10000);
			clock_gettime(CLOCK_MONOTONIC, &now);
		} while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) < 1500000000L);
	}
	if (child)
		printf("rel_crash spin: ready %d %d\n", (int)getpid(), (int)child);
	else
		printf("rel_crash %s: crashing\n", mode);
	fflush(stdout);
	atomic_store(&go_crash, true);
	for (;;)
		pause();
}
