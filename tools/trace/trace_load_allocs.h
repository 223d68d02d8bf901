/* trace_load_allocs.h: loading a process's allocations and sites, and joining faults to them (trace_load_allocs.c), for trace_load.c's process loader. */
#ifndef FAULTLINE_TOOLS_TRACE_LOAD_ALLOCS_H
#define FAULTLINE_TOOLS_TRACE_LOAD_ALLOCS_H

#include "trace_load_state.h"

int fl_load_allocs(struct loader *ld);    /* allocs or allocs.zst */
int fl_load_sites(struct loader *ld);     /* sites */
int fl_load_attribute(struct loader *ld); /* every fault joined to its allocation */

#endif
