/* threads.c: the application threads' lifecycle — a thread's end, the flush of every thread at
 * process exit, and the threads of a fork child — over the slots of thread_slot.c. Each slot
 * holds state of several subsystems (record streams, the full allocation log's chunk, site
 * counters, the perf group), so this file, above them all, is the one that ends it.
 *
 * When a thread exits, the pthread key destructor flushes its streams, closes its counters and
 * frees the slot for reuse. At process exit every slot in use is flushed (threads still running,
 * or ended without the destructor: the main thread), without waiting long for a stream whose
 * thread was stopped inside an append (fatal signal). */
#include "threads.h"
#include "thread_slot.h"
#include "alloc_log.h"
#include "fault_sample.h"
#include "live_objects.h"
#include "stream.h"
#include "internal_thread.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The thread's perf group outlives the slot: the thread still faults on its way out (its
 * allocator caches are freed after this destructor), and those faults keep their samples and
 * counters. The group is closed when another thread takes the slot, or at process exit. */
static void release_slot(struct fl_thread *t)
{
	fl_stream_flush(&t->allocs);
	fl_alloc_log_flush_thread(t, false);
	fl_site_deltas_publish(t);
	fl_stream_flush(&t->alloc_stacks);
	fl_stream_flush(&t->contexts);
	fl_stream_flush(&t->fault_stacks);
	fl_sample_thread_ended(t);
	atomic_store(&t->in_use, 0);
}

/* The process ends when its last thread does, with status 0: once main has called pthread_exit,
 * glibc calls exit(0) in the last thread to end. The runtime's threads never end on their own, so
 * without this the process would live on with no program thread left, and record wait for ever.
 * Each program thread that ends, once the program's own destructors of it have run (a second
 * round of libc's: fl_thread_exit_again), says it is leaving (departed) and then, when main's
 * thread has ended, looks for program threads still alive (fl_program_threads_left, the leaving
 * ones left out): the last one calls exit(0), only one of several (exit_claimed). Main's thread
 * says it ended (main_ended) before it looks; both are sequentially consistent, so of a worker
 * and main ending together, at least one sees the other gone. Programs whose main thread returns
 * or calls exit never look. A thread that never took a slot has no destructor: if it is the last
 * one, the process lives on, as before. */
#define DEPARTED_MAX 64
static _Atomic bool main_ended, exit_claimed;
static _Atomic int departed[DEPARTED_MAX];
static _Atomic unsigned departed_next;
static char second_round; /* the destructor's value for its second round */

static bool departing(int tid)
{
	for (unsigned i = 0; i < DEPARTED_MAX; i++)
		if (atomic_load(&departed[i]) == tid)
			return true;
	return false;
}

static void leave(void)
{
	int self = (int)syscall(SYS_gettid);
	if (self == getpid())
		atomic_store(&main_ended, true);
	else
		atomic_store(&departed[atomic_fetch_add(&departed_next, 1) % DEPARTED_MAX], self);
	if (!atomic_load(&main_ended))
		return;
	if (fl_program_threads_left(departing) == 0 && !atomic_exchange(&exit_claimed, true))
		exit(0);
}

static void on_thread_exit(void *arg)
{
	if (arg == &second_round) { /* the program's destructors of this thread have run */
		leave();
		return;
	}
	struct fl_thread *t = arg;
	if (t && t == fl_thread_tls) {
		fl_thread_tls = NULL;
		release_slot(t);
	}
	if (!fl_thread_exit_again(&second_round))
		leave();
}

int fl_threads_setup(struct fl_runtime *rt)
{
	(void)rt;
	return fl_thread_slots_setup(on_thread_exit);
}

void fl_threads_flush_all(void)
{
	size_t high = fl_thread_slots_used();
	for (size_t i = 0; i < high; i++) {
		struct fl_thread *t = fl_thread_slot(i);
		if (!atomic_load(&t->in_use))
			continue;
		fl_alloc_log_flush_thread(t, true);
		fl_site_deltas_publish(t); /* a thread still running may lose a concurrent change */
		/* definitions before the records that name them */
		fl_stream_try_flush(&t->alloc_stacks);
		fl_stream_try_flush(&t->allocs);
		fl_stream_try_flush(&t->fault_stacks);
		fl_stream_try_flush(&t->contexts);
	}
}

/* In a forked child only the forking thread exists; what the others had buffered belongs to
 * the parent, which writes it itself. The counters were the parent's threads'. */
void fl_threads_after_fork(void)
{
	/* the child's one thread is its main thread, alive; no thread of its has ended */
	atomic_store(&main_ended, false), atomic_store(&exit_claimed, false);
	for (unsigned i = 0; i < DEPARTED_MAX; i++)
		atomic_store(&departed[i], 0);
	size_t high = fl_thread_slots_used();
	for (size_t i = 0; i < high; i++) {
		struct fl_thread *t = fl_thread_slot(i);
		if (!atomic_load(&t->in_use))
			continue;
		fl_stream_discard(&t->allocs);
		fl_alloc_log_discard_thread(t);
		fl_site_cache_clear(t);
		memset(t->site_delta, 0, sizeof(t->site_delta));
		fl_stream_discard(&t->alloc_stacks);
		fl_stream_discard(&t->contexts);
		fl_stream_discard(&t->fault_stacks);
		fl_sample_after_fork(t);
		if (t != fl_thread_tls)
			atomic_store(&t->in_use, 0);
		else
			t->tid = (int)syscall(SYS_gettid);
	}
}
