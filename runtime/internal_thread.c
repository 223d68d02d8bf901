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
#include <unistd.h>

__thread int fl_internal_thread;

#define RUNTIME_TIDS_MAX 64 /* the runtime's threads: handlers (FL_MAX_HANDLERS), a handful more */
static _Atomic int runtime_tids[RUNTIME_TIDS_MAX];

void fl_internal_thread_mark(void)
{
	int tid = (int)syscall(SYS_gettid);
	fl_internal_thread = 1;
	for (unsigned i = 0; i < RUNTIME_TIDS_MAX; i++) {
		int free_slot = 0;
		if (atomic_compare_exchange_strong(&runtime_tids[i], &free_slot, tid))
			return;
	}
}

static bool runtime_tid(int tid)
{
	for (unsigned i = 0; i < RUNTIME_TIDS_MAX; i++)
		if (atomic_load_explicit(&runtime_tids[i], memory_order_relaxed) == tid)
			return true;
	return false;
}

/* Whether thread TID of this process has ended but is still listed (a zombie group leader). */
static bool ended(int tid)
{
	char path[64], stat[256];
	int n = snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	if (n < 0 || (size_t)n >= sizeof(path))
		return false;
	int fd = (int)syscall(SYS_open, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true; /* gone meanwhile */
	ssize_t got = syscall(SYS_read, fd, stat, sizeof(stat) - 1);
	syscall(SYS_close, fd);
	if (got <= 0)
		return true;
	stat[got] = '\0';
	const char *paren = strrchr(stat, ')'); /* "TID (comm) S ..." : comm may hold anything */
	return paren && (paren[2] == 'Z' || paren[2] == 'X');
}

int fl_program_threads_left(void)
{
	int fd = (int)syscall(SYS_open, "/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int self = (int)syscall(SYS_gettid), leader = (int)syscall(SYS_getpid), left = 0;
	char buf[4096];
	long got;
	while ((got = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long at = 0; at < got;) {
			const struct dirent64 *d = (const struct dirent64 *)(buf + at);
			at += d->d_reclen;
			int tid = atoi(d->d_name);
			if (tid <= 0 || tid == self || runtime_tid(tid) || (tid == leader && ended(tid)))
				continue;
			left++;
		}
	}
	syscall(SYS_close, fd);
	return got < 0 ? -1 : left;
}

int fl_internal_thread_enter(const char *name)
{
	sigset_t all;
	fl_internal_thread_mark();
	prctl(PR_SET_NAME, name, 0, 0, 0); /* a name only: a failure changes nothing else */
	sigfillset(&all);
	return (int)syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, NULL, _NSIG / 8);
}

#define THREAD_STACK_BYTES (8ul << 20) /* reserved, not committed: as libc's default */
#define THREAD_GUARD_BYTES 4096ul
#define THREAD_STACKS_MAX 64           /* stacks remembered for fl_thread_stacks_after_fork */

static void *stacks[THREAD_STACKS_MAX];
static _Atomic unsigned nstacks;

int fl_thread_create(pthread_t *thread, void *(*start)(void *), void *arg)
{
	/* raw system calls: the shim serves the program's mmap from the region */
	void *stack = (void *)syscall(SYS_mmap, NULL, THREAD_STACK_BYTES, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return ENOMEM;
	syscall(SYS_mprotect, stack, THREAD_GUARD_BYTES, PROT_NONE); /* an overflow faults, never corrupts */
	pthread_attr_t attr;
	int err = pthread_attr_init(&attr);
	if (err == 0)
		err = pthread_attr_setstack(&attr, (char *)stack + THREAD_GUARD_BYTES, THREAD_STACK_BYTES - THREAD_GUARD_BYTES);
	if (err == 0)
		err = pthread_create(thread, &attr, start, arg);
	pthread_attr_destroy(&attr);
	if (err) {
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
	for (unsigned i = 0; i < RUNTIME_TIDS_MAX; i++) /* none of them runs in the child */
		atomic_store(&runtime_tids[i], 0);
	unsigned n = atomic_exchange(&nstacks, 0);
	for (unsigned i = 0; i < n && i < THREAD_STACKS_MAX; i++)
		syscall(SYS_munmap, stacks[i], THREAD_STACK_BYTES);
}
