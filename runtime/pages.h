/* pages.h: the state byte of a region page and its transitions.
 *
 *   bits 0-1  where the page's content is:
 *             FREE      nowhere: never touched since (re)allocation; reads as zeros
 *             RESIDENT  mapped in the region (local memory)
 *             SOFT      unmapped on trial by the clock policy; content in the far mirror,
 *                       still counted as local memory; a fault here is kind "soft"
 *             FAR       evicted; content in the far store (zeros if the mirror page is a hole)
 *   DIRTY     the far store lacks the current content (always set for never-evicted pages
 *             that were written; clear for pages copied in from the far store and not written
 *             since, which are write-protected so a write is noticed)
 *   REF       referenced since the clock hand last passed (set when a fault installs the page)
 *   BUSY      one thread owns a transition of this page; others wait (briefly) for it
 *   NOACCESS  the program made the page PROT_NONE: never evicted (the runtime cannot read it)
 *   GUARD     free addresses the program unmapped: PROT_NONE until handed out again
 *   STAGED    with FAR only: read ahead into the page's mirror page by the prefetcher
 *             (far_prefetch.c), counted in local memory; a fault here is a refault served
 *             from the mirror (FL_FAULT_PREFETCH_HIT) without going far
 *
 * Invariants: a FREE page has no far copy (its mirror page is a hole). A page is BUSY only
 * while its owner runs code that needs no fault service (so waiting for BUSY cannot deadlock).
 * local_pages = number of RESIDENT + SOFT + (FAR | STAGED) pages. */
#ifndef FL_PAGES_H
#define FL_PAGES_H

#include <errno.h>
#include <sched.h>
#include <sys/ioctl.h>
#include "context.h"
#include "diag.h"
#include "uffd_compat.h"

#define PG_WHERE    0x03
#define PG_FREE     0x00
#define PG_RESIDENT 0x01
#define PG_SOFT     0x02
#define PG_FAR      0x03
#define PG_DIRTY    0x04
#define PG_REF      0x08
#define PG_BUSY     0x10
#define PG_NOACCESS 0x20
#define PG_GUARD    0x40  /* free, made PROT_NONE by munmap: access faults as after a real munmap */
#define PG_STAGED   0x80  /* FAR, with a prefetched copy in the mirror (counted as local) */

static inline size_t fl_page_index(const struct fl_runtime *rt, uint64_t addr)
{
	return (size_t)((addr - (uint64_t)(uintptr_t)rt->region) >> FL_PAGE_SHIFT);
}

static inline char *fl_page_addr(const struct fl_runtime *rt, size_t page)
{
	return rt->region + (page << FL_PAGE_SHIFT);
}

static inline char *fl_mirror_addr(const struct fl_runtime *rt, size_t page)
{
	return rt->mirror + (page << FL_PAGE_SHIFT);
}

/* Take ownership of a page's transition; returns the state it had (without BUSY).
 * Spins (yielding) while another thread owns it: owners never wait for fault service. */
static inline uint8_t fl_page_lock(struct fl_runtime *rt, size_t page, uint64_t *waits)
{
	uint8_t s = atomic_load_explicit(&rt->state[page], memory_order_acquire);
	for (;;) {
		if (s & PG_BUSY) {
			if (waits)
				(*waits)++;
			sched_yield();
			s = atomic_load_explicit(&rt->state[page], memory_order_acquire);
			continue;
		}
		if (atomic_compare_exchange_weak_explicit(&rt->state[page], &s, (uint8_t)(s | PG_BUSY),
							  memory_order_acq_rel, memory_order_acquire))
			return s;
	}
}

/* Take ownership only if the page is not busy; returns false if it is. */
static inline bool fl_page_trylock(struct fl_runtime *rt, size_t page, uint8_t *old)
{
	uint8_t s = atomic_load_explicit(&rt->state[page], memory_order_acquire);
	while (!(s & PG_BUSY)) {
		if (atomic_compare_exchange_weak_explicit(&rt->state[page], &s, (uint8_t)(s | PG_BUSY),
							  memory_order_acq_rel, memory_order_acquire)) {
			*old = s;
			return true;
		}
	}
	return false;
}

/* Publish a page's new state and release ownership. */
static inline void fl_page_unlock(struct fl_runtime *rt, size_t page, uint8_t new_state)
{
	FL_ASSERT(atomic_load_explicit(&rt->state[page], memory_order_relaxed) & PG_BUSY); /* locked by us */
	FL_ASSERT(!(new_state & PG_STAGED) || (new_state & PG_WHERE) == PG_FAR);     /* STAGED only with FAR */
	atomic_store_explicit(&rt->state[page], (uint8_t)(new_state & ~PG_BUSY), memory_order_release);
}

/* Wakes the threads waiting in a fault on the page (one whose page came in without an install
 * that woke them: found mapped, or installed DONTWAKE). */
static inline void fl_page_wake(struct fl_runtime *rt, size_t page)
{
	struct uffdio_range range = { .start = (uint64_t)(uintptr_t)fl_page_addr(rt, page), .len = FL_PAGE_SIZE };
	if (ioctl(rt->uffd, UFFDIO_WAKE, &range) < 0 && errno != ESRCH && errno != ENOENT)
		fl_log_errno("ioctl(UFFDIO_WAKE)", errno);
}

static inline void fl_local_add(struct fl_runtime *rt, size_t n)
{
	size_t now = atomic_fetch_add_explicit(&rt->local_pages, n, memory_order_relaxed) + n;
	size_t peak = atomic_load_explicit(&rt->peak_local_pages, memory_order_relaxed);
	while (now > peak && !atomic_compare_exchange_weak_explicit(&rt->peak_local_pages, &peak, now,
								    memory_order_relaxed, memory_order_relaxed))
		;
}

static inline void fl_local_sub(struct fl_runtime *rt, size_t n)
{
	size_t before = atomic_fetch_sub_explicit(&rt->local_pages, n, memory_order_relaxed);
	FL_ASSERT(before >= n); /* no underflow: every page taken out was counted in */
	(void)before;
}

#endif
