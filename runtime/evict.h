/* evict.h: eviction (evict.c): the clock and fifo policies, the reserve and the evictor
 * thread, and what the prober asks of them. */
#ifndef FL_EVICT_H
#define FL_EVICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fl_runtime;

void fl_evict_reserve(struct fl_runtime *rt, size_t n);  /* take n free local pages (fault path) */
void fl_evict_make_room(struct fl_runtime *rt, size_t need);
/* PAGE, locked, is being installed by a fault of KIND (enum fl_fault_kind): its arrival, for the
 * clock's direct sweep. Lock-free. */
void fl_evict_note_arrival(struct fl_runtime *rt, size_t page, unsigned kind);
/* PAGE was installed (resident again, unlocked): fifo's line. The _locked form for a caller that
 * holds evict_lock (the prober mapping a page back). */
void fl_evict_note_installed(struct fl_runtime *rt, size_t page);
void fl_evict_note_installed_locked(struct fl_runtime *rt, size_t page);
void fl_evict_note_installed_run(struct fl_runtime *rt, size_t first, size_t n); /* pages installed together */
/* A soft fault on PAGE, which its caller holds locked: the adaptive clock's evidence. */
void fl_evict_note_soft(struct fl_runtime *rt, size_t page);
int fl_evict_setup(struct fl_runtime *rt);   /* state and rings, no thread */
void fl_evict_start(struct fl_runtime *rt);  /* the evictor thread, once every setup step passed */
void fl_evict_rebuild_after_fork(struct fl_runtime *rt);
bool fl_evict_mirror_movable(struct fl_runtime *rt);              /* under evict_lock */
bool fl_evict_moved_anyway(struct fl_runtime *rt, size_t page);   /* the page is locked */
bool fl_evict_mapped(const void *addr);   /* a page of the region or the mirror is mapped (mincore) */

#endif
