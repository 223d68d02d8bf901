/* thread_slot.h: an application thread's slot (thread_slot.c): the pool, and the slot of the
 * calling thread. */
#ifndef FL_THREAD_SLOT_H
#define FL_THREAD_SLOT_H

#include <stdbool.h>
#include <stddef.h>

#include "thread_ctx.h"

/* The pool (raw mmap) and the pthread key whose destructor ON_EXIT (threads.c) runs at a thread's
 * end with its slot; 0, or -1 after saying why. */
int fl_thread_slots_setup(void (*on_exit)(void *slot));
/* From the exit destructor: has it called again, with VALUE, in libc's next round of destructors
 * (after the program's own of this round). False when that cannot be had. */
bool fl_thread_exit_again(void *value);
struct fl_thread *fl_thread_self(void);       /* NULL if none can be had */
/* This thread's slot (NULL until fl_thread_self gave it one): the allocation path's fast check. */
extern __thread struct fl_thread *fl_thread_tls;
/* Slot I of those ever used (I below fl_thread_slots_used()), in use or not. */
size_t fl_thread_slots_used(void);
struct fl_thread *fl_thread_slot(size_t i);
void fl_threads_flush_periodic(void);
/* Calls visit for every pending site-counter delta of every thread in use (read while they run). */
void fl_threads_visit_site_deltas(void (*visit)(const struct fl_site_delta *d, void *arg), void *arg);
size_t fl_threads_tids(int *tids, size_t max);  /* tid per thread slot (0: free), for timeline.c */

#endif
