/* internal_thread.h: what marks a thread as the runtime's own (internal_thread.c), a leaf. The
 * runtime's threads (handlers, evictor, prefetcher, timeline sampler, probe) allocate outside the
 * region, take no stack signal and no program signal, and carry a name (fl-...) that shows in
 * /proc/PID/task/TID/comm. */
#ifndef FL_INTERNAL_THREAD_H
#define FL_INTERNAL_THREAD_H

#include <pthread.h>
#include <stdbool.h>

/* Set on the runtime's own threads (also declared in runtime_api.h for the shim). */
extern __thread int fl_internal_thread;

/* The start of every runtime thread: sets fl_internal_thread, blocks every signal libc lets a
 * thread block with the raw system call (never the shim's pthread_sigmask, which in a forked
 * child would keep the stack signal open), and names the thread NAME (at most 15 bytes).
 * Returns 0, or -1 with errno when the mask could not be set. */
int fl_internal_thread_enter(const char *name);

/* Threads of the program still alive besides the caller: the process's tasks less the runtime's
 * threads (each notes its id as fl_thread_create starts it), the caller, those LEAVING says are on their way out (may be NULL), and a thread group
 * leader that has ended (a zombie: main called pthread_exit). 0 when no program thread is left;
 * -1 when that is not sure (/proc unreadable, or the list read in several parts). Raw system
 * calls, no allocation in the region. */
int fl_program_threads_left(bool (*leaving)(int tid));

/* pthread_create for the runtime's threads, on a stack of their own mapped here (outside the
 * region, so libc takes none from its cache of exited threads' stacks: in a forked child, taking
 * one clears its descriptor's thread-local table, which the program's malloc put in the region,
 * and an evicted page there would fault before any handler runs). Returns what pthread_create
 * returns (ENOMEM when no stack could be mapped). */
int fl_thread_create(pthread_t *thread, void *(*start)(void *), void *arg);

/* In a forked child, where none of the parent's runtime threads runs (libc forgets threads on
 * stacks of their own there): their stacks unmapped, not left to add up over generations. */
void fl_thread_stacks_after_fork(void);  /* ... and the runtime's thread ids forgotten */

#endif
