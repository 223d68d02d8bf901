/* shim.h: what the shim's files share — how application threads are routed to allocators. */
#ifndef FL_SHIM_H
#define FL_SHIM_H

#include <stdbool.h>
#include <stddef.h>

#define FL_EXPORT __attribute__((visibility("default")))

/* malloc.c */
void fl_shim_start(void);                   /* start the runtime and the region arena */
bool fl_shim_return_in_jemalloc(const void *ret); /* was this call made by jemalloc itself? */
void fl_shim_enter_bootstrap(int *saved);   /* route this thread's mallocs to the bootstrap heap */
void fl_shim_leave_bootstrap(int saved);

/* signals.c */
void fl_shim_signals_start(void);          /* flush the trace on fatal signals */

#endif
