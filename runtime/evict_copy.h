/* evict_copy.h: saving scattered pages into their mirror pages together (evict_copy.c). */
#ifndef FL_EVICT_COPY_H
#define FL_EVICT_COPY_H

#include <stddef.h>
#include <stdint.h>

struct fl_runtime;

#define FL_EVICT_COPY_SPAN 4096   /* pages from the first page of a batch to its last, at most */
#define FL_EVICT_COPY_RANGES 64   /* runs of consecutive pages per process_vm_writev */

/* Copies PAGES[0..n) (ascending, locked by the caller, resident, spanning at most
 * FL_EVICT_COPY_SPAN pages) into their mirror pages, after write-protecting the span. The
 * caller then drops them from the region. Requires the region's write-protect mode. */
void fl_evict_copy_scattered(struct fl_runtime *rt, const uint32_t *pages, size_t n);

#endif
