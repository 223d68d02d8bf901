/* threads.h: the application threads' lifecycle (threads.c): a thread's end, the flush of every
 * thread at exit, and a fork child's threads. Called by runtime.c only. */
#ifndef FL_THREADS_H
#define FL_THREADS_H

struct fl_runtime;

int fl_threads_setup(struct fl_runtime *rt);
void fl_threads_flush_all(void);
void fl_threads_after_fork(void);

#endif
