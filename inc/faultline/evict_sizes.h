/* evict_sizes.h: how much of local memory the runtime's eviction keeps free or on trial, as
 * functions of -L in pages. runtime/evict.c sizes its reserve, soft pool and inline batches with
 * them, and tools/analyze/mrc.c models the same sizes (one definition, so they cannot drift). */
#ifndef FAULTLINE_EVICT_SIZES_H
#define FAULTLINE_EVICT_SIZES_H

#include <stdint.h>

#define FL_EVICT_BATCH 64           /* pages evicted per eviction round, at least */
#define FL_EVICTOR_MIN_PAGES 4096   /* below this -L no evictor thread: faults evict inline */

/* The evictor keeps between half of this and this many pages free (1/16 of -L, 16 .. 4096). */
static inline uint64_t fl_evict_reserve_high(uint64_t limit_pages)
{
	uint64_t v = limit_pages / 16;
	return v < 16 ? 16 : v > 4096 ? 4096 : v;
}

/* The clock's soft pool: pages unmapped on trial but still local (-L/8, FL_EVICT_BATCH .. 16384). */
static inline uint64_t fl_evict_soft_target(uint64_t limit_pages)
{
	uint64_t v = limit_pages / 8;
	return v < FL_EVICT_BATCH ? FL_EVICT_BATCH : v > 16384 ? 16384 : v;
}

/* The adaptive clock evicting directly, while first touches are most installs, passes over pages
 * first touched during the last this many installs (-L/4), and judges that phase over as many:
 * the young segment of 2Q (Johnson and Shasha, VLDB'94), whose authors also found a quarter of
 * the cache best. */
static inline uint64_t fl_evict_young_installs(uint64_t limit_pages)
{
	return limit_pages / 4;
}

/* Inline eviction (a fault found no free page) frees this many pages at once. */
static inline uint64_t fl_evict_inline_batch(uint64_t limit_pages)
{
	return limit_pages / 4 < FL_EVICT_BATCH ? limit_pages / 4 : FL_EVICT_BATCH;
}

#endif
