/* alloc_log.h: the allocation log (alloc_log.c): its setup, and a thread's part of the full
 * log; the event the shim logs is in runtime_api.h. */
#ifndef FL_ALLOC_LOG_H
#define FL_ALLOC_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fl_runtime;
struct fl_thread;

int fl_alloc_log_setup(struct fl_runtime *rt);
void fl_alloc_log_flush_thread(struct fl_thread *t, bool try_only); /* full log: write its chunk */
void fl_alloc_log_discard_thread(struct fl_thread *t);  /* fork child: the parent writes its own */

#endif
