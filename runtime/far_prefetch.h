/* far_prefetch.h: read-ahead of far pages (far_prefetch.c, record --prefetch N). Above the far
 * store and the evictor: it reads through the store's backend and makes room for the pages it
 * stages as a fault does; fault.c and runtime.c call it, nothing below them. */
#ifndef FL_FAR_PREFETCH_H
#define FL_FAR_PREFETCH_H

#include <stddef.h>

struct fl_runtime;

int fl_prefetch_setup(struct fl_runtime *rt);          /* the queue, when prefetch > 0; after fl_far_open */
int fl_prefetch_start(struct fl_runtime *rt);          /* its thread, once every setup step passed */
void fl_prefetch_after_fork(struct fl_runtime *rt);    /* child: staged pages dropped, thread restarted */
void fl_prefetch_after_refault(struct fl_runtime *rt, size_t page);  /* fault path: queue read-ahead */
void fl_prefetch_hit(struct fl_runtime *rt, size_t page);            /* a STAGED page was faulted in */

#endif
