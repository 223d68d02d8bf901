/* internal_thread.h: what marks a thread as the runtime's own (internal_thread.c), a leaf. The
 * runtime's threads (handlers, evictor, prefetcher, timeline sampler, probe) allocate outside the
 * region, take no stack signal and no program signal, and carry a name (fl-...) that shows in
 * /proc/PID/task/TID/comm. */
#ifndef FL_INTERNAL_THREAD_H
#define FL_INTERNAL_THREAD_H

/* Set on the runtime's own threads (also declared in runtime_api.h for the shim). */
extern __thread int fl_internal_thread;

/* The start of every runtime thread: sets fl_internal_thread, blocks every signal libc lets a
 * thread block with the raw system call (never the shim's pthread_sigmask, which in a forked
 * child would keep the stack signal open), and names the thread NAME (at most 15 bytes).
 * Returns 0, or -1 with errno when the mask could not be set. */
int fl_internal_thread_enter(const char *name);

#endif
