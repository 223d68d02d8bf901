/* internal_thread.c: the flag and the start-up of the runtime's own threads (internal_thread.h). */
#include "internal_thread.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

__thread int fl_internal_thread;

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
	unsigned n = atomic_exchange(&nstacks, 0);
	for (unsigned i = 0; i < n && i < THREAD_STACKS_MAX; i++)
		syscall(SYS_munmap, stacks[i], THREAD_STACK_BYTES);
}
