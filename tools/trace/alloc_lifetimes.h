/* alloc_lifetimes.h: the end time of every MALLOC/MMAP record of a process: a FREE of its start
 * address, a MUNMAP covering it from its start, or a new object at the same start ends it. Partial
 * unmaps are ignored (a lifetime drawn from it is approximate). */
#ifndef FAULTLINE_TOOLS_ALLOC_LIFETIMES_H
#define FAULTLINE_TOOLS_ALLOC_LIFETIMES_H

#include <stdint.h>

#include "trace_reader.h"

/* Per index of proc->allocs, its end in process time (UINT64_MAX: live at the end; meaningless for
 * FREE and MUNMAP records). A malloc'd array (free it), or NULL when out of memory. */
uint64_t *fl_alloc_end_times(const struct fl_process *proc);

#endif
