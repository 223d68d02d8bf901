/* trace_load_allocs.h: loading a process's allocations and sites, and joining faults to them (trace_load_allocs.c), for trace_load.c's process loader. */
#ifndef FAULTLINE_TOOLS_TRACE_LOAD_ALLOCS_H
#define FAULTLINE_TOOLS_TRACE_LOAD_ALLOCS_H

#include "trace_load_state.h"

int fl_load_allocs(struct loader *ld);    /* allocs or allocs.zst */
int fl_load_sites(struct loader *ld);     /* sites */
int fl_load_attribute(struct loader *ld); /* every fault joined to its allocation */

/* Streaming: appends the N records MADE for faulted objects the log lacks (FL_ALLOC_UNLOGGED, in
 * alloc_id order, each from the object's first fault), then puts the log in time order and
 * indexes it again, as fl_load_attribute does for a held recording. 0, or -1 (ENOMEM). */
int fl_load_add_unlogged(struct loader *ld, const struct fl_alloc_record *made, size_t n);

#endif
