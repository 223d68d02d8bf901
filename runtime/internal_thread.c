/* internal_thread.c: the flag and the start-up of the runtime's own threads (internal_thread.h). */
#include "internal_thread.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

__thread int fl_internal_thread;

#define RUNTIME_TIDS_MAX 64 /* the runtime's threads: handlers (FL_MAX_HANDLERS), a handful more */
static _Atomic int runtime_tids[RUNTIME_TIDS_MAX];
static _Atomic int unmarked; /* runtime threads created that have not noted their id yet */

static bool runtime_tid(int tid)
{
	for (unsigned i = 0; i < RUNTIME_TIDS_MAX; i++)
		if (atomic_load_explicit(&runtime_tids[i], memory_order_relaxed) == tid)
			return true;
	return false;
}

/* Notes the calling runtime thread's id (start_marked, before its start routine). */
static void note_runtime_tid(void)
{
	int tid = (int)syscall(SYS_gettid);
	for (unsigned i = 0; i < RUNTIME_TIDS_MAX; i++) {
		int free_slot = 0;
		if (atomic_compare_exchange_strong(&runtime_tids[i], &free_slot, tid))
			return;
	}
}

/* Whether thread TID of this process has ended but is still listed (a zombie group leader): only
 * when /proc says so (gone, or state Z or X); any other failure counts as alive. */
static bool ended(int tid)
{
	char path[64], stat[256];
	int n = snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	if (n < 0 || (size_t)n >= sizeof(path))
		return false;
	int fd = (int)syscall(SYS_open, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH;
	ssize_t got = syscall(SYS_read, fd, stat, sizeof(stat) - 1);
	int err = errno;
	syscall(SYS_close, fd);
	if (got <= 0)
		return got < 0 && err == ESRCH;
	stat[got] = '\0';
	const char *paren = strrchr(stat, ')'); /* "TID (comm) S ...": comm may hold anything */
	return paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X');
}

#define TASK_LIST_BYTES (256u << 10) /* one getdents64 call reads about 8,000 tasks */

int fl_program_threads_left(bool (*leaving)(int tid))
{
	for (int waited = 0; atomic_load(&unmarked) > 0; waited++) { /* a second at most */
		if (waited == 1000)
			return -1;
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
	}
	int fd = (int)syscall(SYS_open, "/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	char *buf = (char *)syscall(SYS_mmap, NULL, TASK_LIST_BYTES, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		syscall(SYS_close, fd);
		return -1;
	}
	int self = (int)syscall(SYS_gettid), leader = (int)syscall(SYS_getpid), left = 0;
	long got, calls = 0;
	while ((got = syscall(SYS_getdents64, fd, buf, TASK_LIST_BYTES)) > 0) {
		calls++;
		for (long at = 0; at < got;) {
			const struct dirent64 *d = (const struct dirent64 *)(buf + at);
			at += d->d_reclen;
			int tid = atoi(d->d_name);
			if (tid <= 0 || tid == self || runtime_tid(tid) || (leaving && leaving(tid)) ||
			    (tid == leader && ended(tid)))
				continue;
			left++;
		}
	}
	syscall(SYS_munmap, buf, TASK_LIST_BYTES);
	syscall(SYS_close, fd);
	/* a list read in several calls may have skipped a task that was listed all along: unsure */
	return got < 0 || calls > 1 ? -1 : left;
}

int fl_internal_thread_enter(const char *name)
{
	sigset_t all;
	fl_internal_thread = 1;
	prctl(PR_SET_NAME, name, 0, 0, 0); /* a name only: a failure changes nothing else */
	sigfillset(&all);
	return (int)syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, NULL, _NSIG / 8);
}

#define THREAD_STACK_BYTES (8ul << 20) /* reserved, not committed: as libc's default */
#define THREAD_GUARD_BYTES 4096ul
#define THREAD_STACKS_MAX 64           /* stacks remembered for fl_thread_stacks_after_fork */

static void *stacks[THREAD_STACKS_MAX];
static _Atomic unsigned nstacks;

/* The new thread notes its id before its start routine runs; until every runtime thread has,
 * fl_program_threads_left waits (a program thread that ends at once, main(){ pthread_exit(NULL); },
 * must not count a runtime thread that has not run yet as one of the program's). The creator
 * does not wait: in a forked child the first handler's start-up may fault, and the creator is
 * what serves that fault until a handler runs (handler.c). */
struct marked_start {
	void *(*start)(void *);
	void *arg;
};

static void *start_marked(void *p)
{
	struct marked_start m = *(struct marked_start *)p;
	syscall(SYS_munmap, p, 4096);
	fl_internal_thread = 1;
	note_runtime_tid();
	atomic_fetch_sub(&unmarked, 1);
	return m.start(m.arg);
}

int fl_thread_create(pthread_t *thread, void *(*start)(void *), void *arg)
{
	/* the start arguments outlive this call: a page of their own (raw mmap, outside the region) */
	struct marked_start *m = (struct marked_start *)syscall(SYS_mmap, NULL, 4096, PROT_READ | PROT_WRITE,
								 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return ENOMEM;
	m->start = start, m->arg = arg;
	/* raw system calls: the shim serves the program's mmap from the region */
	void *stack = (void *)syscall(SYS_mmap, NULL, THREAD_STACK_BYTES, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED) {
		syscall(SYS_munmap, m, 4096);
		return ENOMEM;
	}
	syscall(SYS_mprotect, stack, THREAD_GUARD_BYTES, PROT_NONE); /* an overflow faults, never corrupts */
	pthread_attr_t attr;
	int err = pthread_attr_init(&attr);
	if (err == 0)
		err = pthread_attr_setstack(&attr, (char *)stack + THREAD_GUARD_BYTES, THREAD_STACK_BYTES - THREAD_GUARD_BYTES);
	atomic_fetch_add(&unmarked, 1);
	if (err == 0)
		err = pthread_create(thread, &attr, start_marked, m);
	pthread_attr_destroy(&attr);
	if (err) {
		atomic_fetch_sub(&unmarked, 1);
		syscall(SYS_munmap, m, 4096);
		syscall(SYS_munmap, stack, THREAD_STACK_BYTES);
		return err;
	}
	unsigned i = atomic_fetch_add(&nstacks, 1);
	if (i < THREAD_STACKS_MAX)
		stacks[i] = stack;
	return 0;
}

void fl_thread_stacks_after_fork(void)
{
	atomic_store(&unmarked, 0); /* the parent's threads not yet started never start here */
	for (unsigned i = 0; i < RUNTIME_TIDS_MAX; i++) /* none of them runs in the child */
		atomic_store(&runtime_tids[i], 0);
	unsigned n = atomic_exchange(&nstacks, 0);
	for (unsigned i = 0; i < n && i < THREAD_STACKS_MAX; i++)
		syscall(SYS_munmap, stacks[i], THREAD_STACK_BYTES);
}
