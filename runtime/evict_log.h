/* evict_log.h: eviction events, to the evictions file (evict_log.c, trace.h). */
#ifndef FL_EVICT_LOG_H
#define FL_EVICT_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fl_runtime;

/* Under evict_lock: one call per batch of evicted pages (PAGES, or the run [FIRST, FIRST + N) when
 * PAGES is NULL; OLD their states before eviction, PG_DIRTY telling dirty from clean). No
 * allocation, one clock read. */
void fl_evict_log(struct fl_runtime *rt, const size_t *pages, size_t first, const uint8_t *old, size_t n,
		  uint8_t decision);
void fl_evict_log_flush(struct fl_runtime *rt, bool wait); /* the evictor's stream: handler 0's cadence */

#endif
