/* evict.c: keeps local memory (resident + soft pages) at or under -L.
 *
 * Policies:
 *   clock (default): a hand walks the region in address order. A resident page whose REF bit
 *     is set (a fault brought it in since the hand last passed) loses the bit and stays; one
 *     without it is unmapped *on trial* into the soft pool: its content goes to the far mirror
 *     but it still counts as local memory. Touching it again is a cheap "soft" fault that
 *     brings it back with REF set, so pages in use keep getting second chances; this is how
 *     read accesses become visible without hardware access bits. Room is made by evicting the
 *     oldest soft pages for real (SOFT -> FAR), which for the in-memory far store is only
 *     accounting. Address order keeps victims contiguous, so they are unmapped in runs.
 *   fifo: pages leave in the order they came in (fltrace's policy), directly to FAR.
 *
 * Unmapping a run of pages (up to FL_EVICT_RUN = 512 per system call, never one page per call:
 * with other threads running each call pays a TLB shootdown): pages whose content must be kept
 * are moved into their mirror pages with one UFFDIO_MOVE (the mirror is registered with the
 * userfaultfd in WP mode only, so it can be a MOVE destination); clean pages whose far copy is
 * valid are dropped with MADV_DONTNEED, the clock sweep's in batches of up to 64 runs per
 * process_madvise (struct drop_batch). A move is atomic per page (a write meanwhile faults
 * and waits for the page's BUSY bit), so no write-protect is needed first. Where the kernel
 * refuses to move (pages shared with a forked process, pinned, a range the program mprotect'ed)
 * the rest of the run is copied as before: write-protect, memcpy, MADV_DONTNEED.
 * A move can report an error (EEXIST) for a page it did move: seen on this kernel (6.18) while
 * pages were being migrated (memory compaction): the region page gone and the mirror page
 * present after the call. So before the mirror page of a failed move is dropped as an older
 * copy, or the page is copied instead, the page's presence is checked (fl_evict_moved_anyway):
 * dropping it would lose the only copy (the page would read as zeros), copying it would fault
 * on the region with the page BUSY.
 *
 * The reserve: faults take a free page of local memory (fl_evict_reserve) and kick the evictor
 * thread when fewer than reserve_low (1/32 of -L) are left; it evicts, one run per hold of
 * evict_lock, until reserve_high (1/16 of -L, 16..4096 pages) are free. Only when none is free
 * does a fault evict inline (fl_evict_make_room, counted in evict_inline_rounds). The hard cap
 * holds at every instant: local_pages (resident + soft + staged) only grows by a compare-and-swap
 * below -L, so resident + reserve + soft <= -L. Below 16 MiB of -L, and with
 * FAULTLINE_EVICT_INLINE=1, there is no evictor thread.
 *
 * Why runs are moved (UFFDIO_MOVE) rather than copied: in this kind of guest a user-mode touch of a
 * page whose PTE is new or just changed costs an exception reflected through the host, so copying
 * into never-touched mirror pages made eviction the dominant cost of a tight -L; a move changes
 * no PTE the program or the runtime reads afterwards. The measurements behind this (per-page costs
 * of each primitive, before and after, dated) are in docs/design.md, "Eviction diary".
 *
 * Everything here runs on handler threads or the evictor under evict_lock, which application
 * threads never take; pages are claimed with trylock only, so eviction never waits for a page. */
#include "evict.h"
#include "fds.h"
#include "pages.h"
#include "diag.h"
#include "uffd_compat.h"
#include "evict_log.h"
#include "far_store.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* For comparisons (scripts/bench.sh): "1" = copy evicted pages (memcpy + madvise) instead of
 * moving them; "1" = no evictor thread, faults evict when local memory is full. */
#define EVICT_ENV_COPY "FAULTLINE_EVICT_COPY"
#define EVICT_ENV_INLINE "FAULTLINE_EVICT_INLINE"
#define FL_EVICT_RUN 512 /* pages unmapped per system call, at most */
/* Below 16 MiB of -L (FL_EVICTOR_MIN_PAGES, faultline/evict_sizes.h) the reserve (1/16 of it) is
 * too small to pay for the evictor's wake-ups and remote TLB flushes (measured slower with -L 1
 * and 4 MiB): faults evict inline. */

static int ring_init(struct fl_page_ring *r, size_t cap)
{
	r->cap = cap, r->head = r->tail = 0;
	r->pages = fl_sys_reserve(cap * sizeof(uint32_t), "mmap(eviction ring)");
	r->epochs = r->pages ? fl_sys_reserve(cap * sizeof(uint32_t), "mmap(eviction ring)") : NULL;
	if (!r->pages || !r->epochs)
		return -1;
	return 0;
}

static size_t ring_count(const struct fl_page_ring *r) { return r->tail - r->head; }

static void ring_push_raw(struct fl_page_ring *r, size_t page, uint32_t epoch)
{
	r->pages[r->tail % r->cap] = (uint32_t)page;
	r->epochs[r->tail % r->cap] = epoch;
	r->tail++;
}

static bool ring_pop(struct fl_page_ring *r, size_t *page, uint32_t *epoch)
{
	if (r->head == r->tail)
		return false;
	*page = r->pages[r->head % r->cap];
	*epoch = r->epochs[r->head % r->cap];
	r->head++;
	return true;
}

static void evict_lock_init(struct fl_runtime *rt)
{
	pthread_mutexattr_t attr;
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP); /* held for one run at most */
	pthread_mutex_init(&rt->evict_lock, &attr);
	pthread_mutexattr_destroy(&attr);
}

int fl_evict_setup(struct fl_runtime *rt)
{
	size_t limit = rt->local_limit_pages;
	/* read here, at start, never in a forked child: the environment may be evicted there,
	 * and a read before the child's region is registered would map a zero page over it */
	const char *copy = getenv(EVICT_ENV_COPY), *inl = getenv(EVICT_ENV_INLINE);
	rt->evictor.off = inl && strcmp(inl, "1") == 0;
	evict_lock_init(rt);
	rt->clock_hand = 0;
	rt->move_uffd = (copy && strcmp(copy, "1") == 0) ? -2 : -1;
	rt->evictor.wake_fd = -1;
	rt->evictor.pidfd = fl_fd_keep((int)syscall(SYS_pidfd_open, getpid(), 0));
	if (limit == 0)
		return 0;
	/* the reserve: 1/16 of -L, within [16, 4096] pages; refilled from half of it */
	rt->reserve_high = fl_evict_reserve_high(limit);
	rt->reserve_low = rt->reserve_high / 2;
	if (rt->policy == FL_POLICY_CLOCK) {
		size_t target = fl_evict_soft_target(limit);
		rt->clock_trial = true; /* trials until the adaptive clock has seen a window */
		rt->rescue = fl_sys_reserve(rt->region_pages, "mmap(adaptive clock's rescue marks)");
		rt->arrived = fl_sys_reserve(rt->region_pages * sizeof(*rt->arrived), "mmap(adaptive clock's arrivals)");
		if (!rt->rescue || !rt->arrived)
			return -1;
		rt->young_installs = fl_evict_young_installs(limit);
		rt->soft_target_pages = target;
		if (ring_init(&rt->soft, 4 * (target + FL_EVICT_BATCH)) < 0)
			return -1;
	} else if (ring_init(&rt->fifo, 2 * limit + 4096) < 0) {
		return -1;
	}
	return 0;
}

/* SOFT -> FAR for pages this thread has locked, as one batch: the backend writes the dirty
 * ones together (far_store.c; for the in-memory store nothing moves, others then drop the
 * mirror pages), and only then are the pages published FAR. */
static void finalize_locked(struct fl_runtime *rt, const size_t *pages, const uint8_t *old, size_t n,
			    uint8_t decision)
{
	if (n == 0)
		return;
	int err = fl_far_write_back(rt, pages, old, n);
	if (err) {
		fl_log_errno("far store: writing evicted pages", err);
		fl_fatal_stop("a page of the program's memory cannot be written to the far store");
	}
	fl_evict_log(rt, pages, 0, old, n, decision); /* eviction events (evict_log.c) */
	for (size_t i = 0; i < n; i++) {
		atomic_fetch_add_explicit(&rt->evict.evictions, 1, memory_order_relaxed);
		if (old[i] & PG_DIRTY)
			atomic_fetch_add_explicit(&rt->evict.writebacks, 1, memory_order_relaxed);
		else
			atomic_fetch_add_explicit(&rt->evict.evictions_clean, 1, memory_order_relaxed);
		fl_page_unlock(rt, pages[i], (uint8_t)(PG_FAR | (old[i] & PG_NOACCESS)));
	}
	atomic_fetch_sub_explicit(&rt->soft_pages, n, memory_order_relaxed);
	fl_local_sub(rt, n);
}

/* Pops the oldest soft pages and evicts them for real, in batches; returns how many. DECISION
 * says why, for the eviction events: room (FL_EVICT_CLOCK_SOFT) or the ring's cap. */
static size_t finalize_oldest_soft(struct fl_runtime *rt, size_t want, uint8_t decision)
{
	size_t done = 0, page, batch[FL_EVICT_BATCH], n = 0;
	uint8_t olds[FL_EVICT_BATCH];
	uint32_t epoch;
	uint8_t old;
	while (done < want && ring_pop(&rt->soft, &page, &epoch)) {
		if (rt->epoch[page] != epoch || !fl_page_trylock(rt, page, &old))
			continue; /* brought back since (stale entry), or in transition */
		if ((old & PG_WHERE) != PG_SOFT) {
			fl_page_unlock(rt, page, old);
			continue;
		}
		batch[n] = page, olds[n] = old;
		n++, done++;
		if (n == FL_EVICT_BATCH) {
			finalize_locked(rt, batch, olds, n, decision);
			n = 0;
		}
	}
	finalize_locked(rt, batch, olds, n, decision);
	return done;
}

/* ---- unmapping a run of pages ---- */

/* UFFDIO_MOVE needs its destination registered with the same userfaultfd. The mirror is
 * registered in WP mode only: nothing there is ever write-protected, so it never raises a
 * message, and its holes stay ordinary anonymous memory. Once per userfaultfd (a forked child
 * has a new one), under evict_lock. */
static bool mirror_movable(struct fl_runtime *rt)
{
	if (rt->move_uffd == rt->uffd)
		return true;
	if (rt->move_uffd == -2)
		return false;
	struct uffdio_register reg = {
		.range = { .start = (uint64_t)(uintptr_t)rt->mirror, .len = rt->region_pages * FL_PAGE_SIZE },
		.mode = UFFDIO_REGISTER_MODE_WP,
	};
	if (!rt->write_protect || ioctl(rt->uffd, UFFDIO_REGISTER, &reg) < 0 ||
	    !(reg.ioctls & (1ULL << _UFFDIO_MOVE))) {
		rt->move_uffd = -2; /* eviction copies (memcpy + madvise) */
		return false;
	}
	rt->move_uffd = rt->uffd;
	return true;
}

/* For the access prober (probe.c), which unmaps pages on trial too. */
bool fl_evict_mirror_movable(struct fl_runtime *rt)
{
	return mirror_movable(rt);
}

bool fl_evict_mapped(const void *addr)
{
	unsigned char present = 0;
	return mincore((void *)(uintptr_t)addr, FL_PAGE_SIZE, &present) == 0 && (present & 1);
}

/* After a UFFDIO_MOVE of a locked page failed: true when it moved all the same (its region page
 * is no longer mapped and its mirror page is; see the top comment). Only the page's owner maps
 * or unmaps either, so what mincore sees is settled. A region page found unmapped with no mirror
 * page either has no content left anywhere: said once. */
bool fl_evict_moved_anyway(struct fl_runtime *rt, size_t page)
{
	static _Atomic bool lost_reported;
	if (fl_evict_mapped(fl_page_addr(rt, page)))
		return false;
	if (fl_evict_mapped(fl_mirror_addr(rt, page)))
		return true;
	if (!atomic_exchange(&lost_reported, true))
		fl_log_u64("a page being moved to the mirror is in neither place (it reads as zeros): page ", page, "");
	return false;
}

/* Dirty pages are write-protected before they are copied, so a write meanwhile waits (for
 * the handlers, which see the page BUSY and wait for us) instead of being lost. */
static void write_protect(struct fl_runtime *rt, char *start, size_t len)
{
	struct uffdio_writeprotect wp = {
		.range = { .start = (uint64_t)(uintptr_t)start, .len = len },
		.mode = UFFDIO_WRITEPROTECT_MODE_WP,
	};
	if (ioctl(rt->uffd, UFFDIO_WRITEPROTECT, &wp) < 0 && errno != ESRCH && errno != ENOENT)
		fl_log_errno("ioctl(UFFDIO_WRITEPROTECT) before eviction", errno);
}

static void drop(void *start, size_t len, const char *what)
{
	if (fl_sys_madvise(start, len, MADV_DONTNEED) < 0)
		fl_log_errno(what, errno);
}

/* Clean pages dropped by the clock sweep, batched: a random access pattern leaves victims
 * scattered (runs of ~1 page), and one madvise per run paid a TLB shootdown per page (bench
 * refault rand: 10,857 madvise calls for 12,521 dropped pages; bench/graph_bfs 20 64 3 at -L 64,
 * 2.9 M clean evictions: 818 s wall, 474 s CPU before, 481 s and 335 s after, load ~18). The
 * batch's ranges go in one process_madvise (the kernel batches its TLB flush), and only then
 * are its pages published: SOFT (trials), or FAR (the adaptive clock's direct evictions, TO_FAR).
 * Until the drop they stay BUSY, so nothing can fault them back in between. */
#define DROP_BATCH_RANGES 64
#define DROP_BATCH_PAGES 1024
struct drop_batch {
	bool to_far;                         /* published FAR (clock-direct), else SOFT */
	struct iovec ranges[DROP_BATCH_RANGES];
	size_t nranges, npages;
	uint32_t pages[DROP_BATCH_PAGES];
	uint8_t old[DROP_BATCH_PAGES];
};

static void drop_ranges(struct fl_runtime *rt, struct iovec *ranges, size_t n)
{
	size_t bytes = 0;
	for (size_t i = 0; i < n; i++)
		bytes += ranges[i].iov_len;
	if (n > 1 && rt->evictor.pidfd >= 0 &&
	    syscall(SYS_process_madvise, rt->evictor.pidfd, ranges, n, MADV_DONTNEED, 0) == (long)bytes)
		return;
	for (size_t i = 0; i < n; i++) /* no process_madvise of MADV_DONTNEED here (before 6.13) */
		drop(ranges[i].iov_base, ranges[i].iov_len, "madvise(MADV_DONTNEED) of evicted pages");
}

static void publish_soft(struct fl_runtime *rt, size_t page, uint8_t old);
static uint8_t soft_state(const struct fl_runtime *rt, uint8_t old);

/* The batch's pages, dropped, go to FAR as clock-direct evictions, FL_EVICT_RUN at a time. */
static void finalize_dropped(struct fl_runtime *rt, const struct drop_batch *b)
{
	size_t pages[FL_EVICT_RUN];
	uint8_t olds[FL_EVICT_RUN];
	for (size_t i = 0; i < b->npages; i += FL_EVICT_RUN) {
		size_t n = b->npages - i < FL_EVICT_RUN ? b->npages - i : FL_EVICT_RUN;
		for (size_t k = 0; k < n; k++)
			pages[k] = b->pages[i + k], olds[k] = soft_state(rt, b->old[i + k]);
		atomic_fetch_add_explicit(&rt->soft_pages, n, memory_order_relaxed); /* finalize_locked takes them off */
		finalize_locked(rt, pages, olds, n, FL_EVICT_CLOCK_DIRECT);
		atomic_fetch_add_explicit(&rt->evict.clock_direct, n, memory_order_relaxed);
	}
}

/* Drops the batch's ranges, then publishes its pages (SOFT, or FAR). */
static void drop_batch_flush(struct fl_runtime *rt, struct drop_batch *b)
{
	if (b->nranges)
		drop_ranges(rt, b->ranges, b->nranges);
	if (b->to_far)
		finalize_dropped(rt, b);
	else
		for (size_t i = 0; i < b->npages; i++)
			publish_soft(rt, b->pages[i], b->old[i]);
	b->nranges = b->npages = 0;
}

/* Adds the locked clean pages [first, first + n) to the batch (flushing it when full). */
static void drop_batch_add(struct fl_runtime *rt, struct drop_batch *b, size_t first, size_t n, const uint8_t *old)
{
	if (b->nranges == DROP_BATCH_RANGES || b->npages + n > DROP_BATCH_PAGES)
		drop_batch_flush(rt, b);
	b->ranges[b->nranges].iov_base = fl_page_addr(rt, first);
	b->ranges[b->nranges].iov_len = n * FL_PAGE_SIZE;
	b->nranges++;
	for (size_t i = 0; i < n; i++) {
		b->pages[b->npages] = (uint32_t)(first + i);
		b->old[b->npages] = old[i];
		b->npages++;
	}
	atomic_fetch_add_explicit(&rt->evict.dropped, n, memory_order_relaxed);
}

/* Moves pages [first, first + n) into their mirror pages: one ioctl, no copy, no page
 * allocated, and atomic for each page (a write meanwhile faults and waits for us). Returns
 * how many pages moved; the kernel refuses pages shared with a forked process or pinned
 * (EBUSY) and ranges split by the program's mprotect (EINVAL): the caller copies the rest. A
 * mirror page still holding an older copy (a page evicted before, since brought back and
 * written, or a stale page of a non-mem store) makes it stop with EEXIST: those copies are
 * obsolete, so the rest of the mirror run is dropped and the move retried. Region holes (a
 * page the program dropped behind the runtime's back) are skipped: they read as zeros. */
static size_t move_to_mirror(struct fl_runtime *rt, size_t first, size_t n)
{
	size_t done = 0;
	bool dropped = false;
	unsigned again = 0;
	while (done < n) {
		struct uffdio_move mv = {
			.dst = (uint64_t)(uintptr_t)fl_mirror_addr(rt, first + done),
			.src = (uint64_t)(uintptr_t)fl_page_addr(rt, first + done),
			.len = (n - done) * FL_PAGE_SIZE,
			.mode = UFFDIO_MOVE_MODE_DONTWAKE | UFFDIO_MOVE_MODE_ALLOW_SRC_HOLES,
		};
		if (ioctl(rt->uffd, UFFDIO_MOVE, &mv) == 0)
			return n;
		int err = errno;
		if (mv.move > 0) { /* moved part of it: the next call says why it stopped */
			done += (size_t)mv.move / FL_PAGE_SIZE;
			continue;
		}
		if (fl_evict_moved_anyway(rt, first + done)) { /* reported an error, moved all the same */
			FL_TESTCASE(err == EEXIST);
			done++;
			continue;
		}
		if (err == EEXIST && !dropped) {
			drop(fl_mirror_addr(rt, first + done), (n - done) * FL_PAGE_SIZE,
			     "madvise(MADV_DONTNEED) of obsolete mirror pages");
			dropped = true;
			continue;
		}
		if (err == EAGAIN && ++again < 100) { /* the address space is changing: retry */
			sched_yield();
			continue;
		}
		break;
	}
	return done;
}

/* Copies pages [first, first + n) into the mirror and drops them (the fallback of a move). A
 * page no longer mapped is not read: reading it would be a fault on a page this thread holds
 * BUSY, which no handler can serve. Its content is in its mirror page already (a move that
 * reported an error but moved it), or it is a hole (dropped behind the runtime's back; it reads
 * as zeros, as the move skips it). */
static void copy_to_mirror(struct fl_runtime *rt, size_t first, size_t n, const uint8_t *old)
{
	char *start = fl_page_addr(rt, first);
	unsigned char present[FL_EVICT_RUN];
	bool any_dirty = false;
	for (size_t i = 0; i < n; i++)
		any_dirty |= (old[i] & PG_DIRTY) != 0;
	if (any_dirty && rt->write_protect)
		write_protect(rt, start, n * FL_PAGE_SIZE);
	if (mincore(start, n * FL_PAGE_SIZE, present) < 0) {
		fl_log_errno("mincore(pages to copy into the mirror)", errno);
		memset(present, 1, n);
	}
	for (size_t i = 0; i < n; i++) {
		FL_TESTCASE(!(present[i] & 1));
		if (present[i] & 1)
			memcpy(fl_mirror_addr(rt, first + i), start + i * FL_PAGE_SIZE, FL_PAGE_SIZE);
	}
	drop(start, n * FL_PAGE_SIZE, "madvise(MADV_DONTNEED) of evicted pages");
}

/* Whether a page's content must reach the mirror: not when it is clean and the mirror is the
 * far store (its far copy there is valid). */
static bool must_save(const struct fl_runtime *rt, uint8_t old)
{
	return (old & PG_DIRTY) || !rt->write_protect || !rt->far->mirror_is_far;
}

/* Pages [first, first + n) that must be saved: moved, or copied where a move is refused. */
static void save_pages(struct fl_runtime *rt, size_t first, size_t n, const uint8_t *old)
{
	size_t moved = mirror_movable(rt) ? move_to_mirror(rt, first, n) : 0;
	if (moved < n)
		copy_to_mirror(rt, first + moved, n - moved, old + moved);
	atomic_fetch_add_explicit(&rt->evict.moved, moved, memory_order_relaxed);
	atomic_fetch_add_explicit(&rt->evict.copied, n - moved, memory_order_relaxed);
}

/* Unmaps a run of locked, resident pages [first, first + n): pages to save go to the mirror,
 * clean pages with a valid far copy are dropped. The run is split where that changes, unless
 * it changes often: then every page is saved (moving a clean page over its own far copy is
 * as valid as dropping it), so a run never costs more than a few system calls. */
static void unmap_run(struct fl_runtime *rt, size_t first, size_t n, const uint8_t *old, bool *deferred,
		      struct drop_batch *batch)
{
	unsigned parts = 1;
	for (size_t i = 1; i < n; i++)
		parts += must_save(rt, old[i]) != must_save(rt, old[i - 1]);
	for (size_t i = 0, j; i < n; i = j) {
		bool save = parts > 3 || must_save(rt, old[i]);
		for (j = i + 1; j < n && (parts > 3 || must_save(rt, old[j]) == save); j++)
			;
		for (size_t k = i; k < j; k++)
			deferred[k] = !save && batch;
		if (save) {
			save_pages(rt, first + i, j - i, old + i);
		} else if (batch) {
			drop_batch_add(rt, batch, first + i, j - i, old + i);
		} else {
			drop(fl_page_addr(rt, first + i), (j - i) * FL_PAGE_SIZE, "madvise(MADV_DONTNEED) of evicted pages");
			atomic_fetch_add_explicit(&rt->evict.dropped, j - i, memory_order_relaxed);
		}
	}
}

static uint8_t soft_state(const struct fl_runtime *rt, uint8_t old)
{
	uint8_t dirty = rt->write_protect ? (old & PG_DIRTY) : PG_DIRTY;
	return (uint8_t)(PG_SOFT | dirty | (old & PG_NOACCESS));
}

/* An unmapped page enters the soft pool (clock): counted, queued, unlocked. */
static void publish_soft(struct fl_runtime *rt, size_t page, uint8_t old)
{
	atomic_fetch_add_explicit(&rt->soft_pages, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&rt->evict.soft_evictions, 1, memory_order_relaxed);
	if (ring_count(&rt->soft) == rt->soft.cap)
		finalize_oldest_soft(rt, 1, FL_EVICT_SOFT_CAP);
	ring_push_raw(&rt->soft, page, rt->epoch[page]);
	fl_page_unlock(rt, page, soft_state(rt, old));
}

/* Evicts a run of locked pages: to the soft pool (clock's trial) or straight to FAR (fifo,
 * clock's direct evictions: DECISION says which). With a drop batch (the clock's), clean pages
 * to drop are published when the batch is flushed. */
static void evict_run(struct fl_runtime *rt, size_t first, size_t n, const uint8_t *old, bool to_soft,
		      struct drop_batch *batch, uint8_t decision)
{
	if (n == 0)
		return;
	size_t fin_pages[FL_EVICT_RUN], nfin = 0;
	uint8_t fin_old[FL_EVICT_RUN];
	bool deferred[FL_EVICT_RUN];
	unmap_run(rt, first, n, old, deferred, batch);
	if (to_soft)
		fl_evict_log(rt, NULL, first, old, n, FL_EVICT_CLOCK_TRIAL); /* eviction events (evict_log.c) */
	for (size_t i = 0; i < n; i++) {
		size_t page = first + i;
		if (deferred[i])
			continue;
		if (to_soft) {
			publish_soft(rt, page, old[i]);
			continue;
		}
		atomic_fetch_add_explicit(&rt->soft_pages, 1, memory_order_relaxed);
		fin_pages[nfin] = page, fin_old[nfin] = soft_state(rt, old[i]); /* n <= FL_EVICT_RUN */
		nfin++;
	}
	finalize_locked(rt, fin_pages, fin_old, nfin, decision);
	if (decision == FL_EVICT_CLOCK_DIRECT)
		atomic_fetch_add_explicit(&rt->evict.clock_direct, nfin, memory_order_relaxed);
}

/* Collects victims into contiguous runs and evicts each run when it ends. */
struct run {
	size_t first, n;
	uint8_t old[FL_EVICT_RUN];
	bool to_soft;                        /* clock's trial: into the soft pool */
	uint8_t decision;                    /* otherwise: to FAR, for this reason (enum fl_evict_decision) */
	struct drop_batch *batch;            /* the clock's: clean pages dropped together; NULL = at once */
};

static void run_flush(struct fl_runtime *rt, struct run *r)
{
	evict_run(rt, r->first, r->n, r->old, r->to_soft, r->batch, r->decision);
	r->n = 0;
}

static void run_add(struct fl_runtime *rt, struct run *r, size_t page, uint8_t old)
{
	if (r->n && (r->first + r->n != page || r->n == FL_EVICT_RUN))
		run_flush(rt, r);
	if (r->n == 0)
		r->first = page;
	r->old[r->n++] = old;
}

/* ---- the adaptive clock ----
 *
 * Trial unmaps pay off only where pages are reused: a page touched in the soft pool costs a
 * soft fault, and that fault is worth it only if the page it keeps is hotter than the pages
 * evicted instead. Under random access (a graph build's scatter) a kept page is no hotter than
 * any other, and the trials cost more faults than they save (fifo took 23 % fewer). So the
 * clock watches whether a page rescued from the soft pool is rescued again at its next trial:
 *   r1 = rescues / trials                              (any page)
 *   r2 = rescues / trials, of pages rescued at their previous trial
 * With locality r2 is far above r1 (hot pages keep coming back); without it the two are equal.
 * While r2 < ADAPT_LOCALITY x r1, or rescues are too rare to tell, resident pages go straight to
 * the far store as the hand passes them, referenced or not (without locality a second chance
 * keeps no hotter page, and each referenced page it spares splits the runs evicted together:
 * bench/csr_scatter 14 16 2 at -L 1M took as many faults either way, and the CPU per fault fell
 * by about a fifth), except the pages of a fixed sample (1 chunk of 16 pages in 32,
 * by hash) that keep taking trials, so the evidence keeps coming and the clock returns to
 * trials when the program's access pattern changes. The counts are of every page taking trials
 * (all of them, or the sample), halved after each decision (every ADAPT_WINDOW trials), so a
 * decision rests mostly on the last few windows. Until the first decision: trials. */
#define ADAPT_CHUNK_SHIFT 4    /* 16 pages */
#define ADAPT_SAMPLE_SHIFT 5   /* 1 chunk in 32 */
#define ADAPT_WINDOW 512       /* trials per decision */
#define ADAPT_MIN_REPEAT 32    /* trials after a rescue, at least, to trust r2 */
#define ADAPT_LOCALITY 2       /* r2 >= 2 x r1: rescued pages are hot */
#define RESCUE_LAST 0x01       /* per page: rescued (soft fault) after its last trial */
#define RESCUE_REPEAT 0x02     /* per page: its current trial follows a rescue */

static bool in_sample(size_t page)
{
	uint32_t h = (uint32_t)(page >> ADAPT_CHUNK_SHIFT) * 0x9e3779b1u; /* Fibonacci hashing */
	return h >> (32 - ADAPT_SAMPLE_SHIFT) == 0;
}

/* A page unmapped on trial (clock_sweep, page locked). */
static void adapt_note_trial(struct fl_runtime *rt, size_t page)
{
	struct fl_clock_adapt *a = &rt->adapt;
	uint8_t f = rt->rescue[page];
	rt->rescue[page] = (f & RESCUE_LAST) ? RESCUE_REPEAT : 0;
	a->trials++;
	if (f & RESCUE_LAST)
		a->trials_repeat++;
}

void fl_evict_note_soft(struct fl_runtime *rt, size_t page)
{
	if (!rt->rescue)
		return;
	uint8_t f = rt->rescue[page]; /* the page is locked by this handler */
	rt->rescue[page] = RESCUE_LAST;
	atomic_fetch_add_explicit(&rt->adapt.rescues, 1, memory_order_relaxed);
	if (f & RESCUE_REPEAT)
		atomic_fetch_add_explicit(&rt->adapt.rescues_repeat, 1, memory_order_relaxed);
}

/* After a window of trials: trials for every page, or direct eviction but for the sample. */
static void adapt_decide(struct fl_runtime *rt)
{
	struct fl_clock_adapt *a = &rt->adapt;
	if (a->trials < ADAPT_WINDOW)
		return;
	uint64_t rescues = atomic_load(&a->rescues), repeat = atomic_load(&a->rescues_repeat);
	/* r2 >= LOCALITY x r1, as rescues_repeat x trials >= LOCALITY x rescues x trials_repeat */
	rt->clock_trial = a->trials_repeat >= ADAPT_MIN_REPEAT &&
			  (double)repeat * (double)a->trials >= ADAPT_LOCALITY * (double)rescues * (double)a->trials_repeat;
	atomic_fetch_add_explicit(rt->clock_trial ? &rt->evict.adapt_chose_trial : &rt->evict.adapt_chose_direct, 1,
				  memory_order_relaxed);
	a->trials /= 2, a->trials_repeat /= 2;
	atomic_store(&a->rescues, rescues / 2), atomic_store(&a->rescues_repeat, repeat / 2);
}

/* Evicting directly, in a fresh phase (below), the hand passes over fresh pages, first touched
 * during the last quarter of -L's worth of installs (fl_evict_young_installs): in address order
 * it evicted buffers written moments before (bench/bigbuf 60 5120 25600 at -L 80M: 20,720
 * refaults against fifo's 7,999; with it 7,636). Pages that came back (refaults, soft faults) are
 * never spared, and the sample's pages, taking trials, are not concerned. */
static bool arrived_lately(struct fl_runtime *rt, size_t page)
{
	if (!rt->phase.fresh)
		return false;
	/* the count read after the stamp: a page installed while the sweep runs is not older than it */
	uint32_t arrived = __atomic_load_n(&rt->arrived[page], __ATOMIC_ACQUIRE);
	return atomic_load_explicit(&rt->installs, memory_order_relaxed) - arrived < rt->young_installs;
}

/* A fresh phase: at least half of the last quarter of -L's worth of installs were first touches
 * (the program initialises new memory: that is its working set). Otherwise fresh pages are as
 * likely cold as any (a log appended while a table is looked up at random), and sparing them
 * cost random lookups 11 % more refaults (examples/kvstore at -L 16M) and graph_bfs 4-5 %. Judged
 * at each sweep once that many installs have passed since the last judgement; under evict_lock. */
static void judge_phase(struct fl_runtime *rt, uint32_t installs)
{
	struct fl_fresh_phase *ph = &rt->phase;
	uint32_t n = installs - ph->installs;
	if (n < rt->young_installs)
		return;
	uint32_t first = atomic_load_explicit(&rt->first_installs, memory_order_relaxed);
	ph->fresh = 2 * (uint64_t)(first - ph->first) >= n;
	ph->installs = installs, ph->first = first;
}

/* The soft pool's target: the sample's share of it while the others are evicted directly. */
static size_t soft_target(struct fl_runtime *rt)
{
	size_t t = rt->soft_target_pages >> (rt->clock_trial ? 0 : ADAPT_SAMPLE_SHIFT);
	return t < 16 ? 16 : t;
}

/* Clock: takes up to `want` resident pages: unreferenced ones into the soft pool (trial) or,
 * while the adaptive clock says so, any straight to the far store; *direct counts the latter. */
static size_t clock_sweep(struct fl_runtime *rt, size_t want, size_t *direct)
{
	size_t high = __atomic_load_n(&rt->va_high_pages, __ATOMIC_RELAXED);
	size_t got = 0, examined = 0;
	bool trial_unmaps = rt->clock_trial;
	*direct = 0;
	judge_phase(rt, atomic_load_explicit(&rt->installs, memory_order_relaxed));
	struct drop_batch batch = { .to_far = false, .nranges = 0, .npages = 0 };
	struct drop_batch direct_drops = { .to_far = true, .nranges = 0, .npages = 0 };
	struct run trial = { .n = 0, .to_soft = true, .decision = FL_EVICT_CLOCK_TRIAL, .batch = &batch };
	struct run straight = { .n = 0, .to_soft = false, .decision = FL_EVICT_CLOCK_DIRECT, .batch = &direct_drops };
	uint8_t old;

	atomic_fetch_add_explicit(trial_unmaps ? &rt->evict.sweeps_trial : &rt->evict.sweeps_direct, 1,
				  memory_order_relaxed);
	while (high && got < want && examined < 2 * high + FL_EVICT_BATCH) {
		size_t page = rt->clock_hand;
		rt->clock_hand = (page + 1 < high) ? page + 1 : 0;
		examined++;
		uint8_t s = atomic_load_explicit(&rt->state[page], memory_order_relaxed);
		if ((s & PG_WHERE) != PG_RESIDENT || (s & (PG_BUSY | PG_NOACCESS))) {
			if (s & PG_NOACCESS)
				atomic_fetch_add_explicit(&rt->evict.skipped_noaccess, 1, memory_order_relaxed);
			run_flush(rt, &trial);
			run_flush(rt, &straight);
			continue;
		}
		bool on_trial = trial_unmaps || in_sample(page);
		if (!on_trial && arrived_lately(rt, page)) {
			run_flush(rt, &trial);
			run_flush(rt, &straight);
			continue;
		}
		if ((s & PG_REF) && on_trial) {
			atomic_fetch_and_explicit(&rt->state[page], (uint8_t)~PG_REF, memory_order_relaxed);
			run_flush(rt, &trial);
			run_flush(rt, &straight);
			continue;
		}
		if (!fl_page_trylock(rt, page, &old))
			continue;
		if ((old & PG_WHERE) != PG_RESIDENT || (old & PG_NOACCESS) || ((old & PG_REF) && on_trial)) {
			fl_page_unlock(rt, page, old);
			continue;
		}
		if (on_trial) /* the clock runs only with its rescue marks (fl_evict_setup) */
			adapt_note_trial(rt, page);
		run_add(rt, on_trial ? &trial : &straight, page, old);
		*direct += !on_trial; /* a direct run evicts every page it holds */
		got++;
	}
	run_flush(rt, &trial);
	run_flush(rt, &straight);
	drop_batch_flush(rt, &batch);
	drop_batch_flush(rt, &direct_drops);
	return got;
}

/* Puts back at the head of the ring the N entries a round popped and skipped (oldest first in
 * PAGES/EPOCHS), so they keep their place in line. The round popped at least N entries and pushed
 * no more than it popped, so the ring has room for them; the ring is only changed under
 * evict_lock. */
static void ring_unpop(struct fl_page_ring *r, const uint32_t *pages, const uint32_t *epochs, size_t n)
{
	for (size_t i = n; i-- > 0;) {
		r->head--;
		r->pages[r->head % r->cap] = pages[i];
		r->epochs[r->head % r->cap] = epochs[i];
	}
}

#define FIFO_MAX_SKIPPED 64 /* busy pages a round passes over and puts back in place */

/* Fifo: evicts up to `want` pages in fault-in order. A page locked by a handler (its install not
 * finished, or a write-protect fault) is passed over and keeps its place at the head of the line
 * (up to FIFO_MAX_SKIPPED a round), so it leaves as soon as it is unlocked: moved to the tail, it
 * stayed resident for a whole extra -L of installs, and a cyclic scan missed its refault. A page
 * the program made PROT_NONE cannot leave at all: it goes to the tail. */
static size_t fifo_evict(struct fl_runtime *rt, size_t want)
{
	size_t got = 0, examined = 0, budget = ring_count(&rt->fifo), page, nskipped = 0;
	struct run run = { .n = 0, .to_soft = false, .decision = FL_EVICT_FIFO, .batch = NULL };
	uint32_t epoch, skipped_pages[FIFO_MAX_SKIPPED], skipped_epochs[FIFO_MAX_SKIPPED];
	uint8_t old;

	while (got < want && examined++ < budget && ring_pop(&rt->fifo, &page, &epoch)) {
		if (rt->epoch[page] != epoch)
			continue; /* freed or evicted since: stale entry */
		FL_TESTCASE(atomic_load(&rt->state[page]) & PG_BUSY);
		if (!fl_page_trylock(rt, page, &old)) { /* in transition */
			FL_TESTCASE(nskipped == FIFO_MAX_SKIPPED);
			if (nskipped < FIFO_MAX_SKIPPED) {
				skipped_pages[nskipped] = (uint32_t)page;
				skipped_epochs[nskipped++] = epoch;
			} else {
				ring_push_raw(&rt->fifo, page, epoch);
			}
			continue;
		}
		if ((old & PG_WHERE) != PG_RESIDENT || (old & PG_NOACCESS)) {
			fl_page_unlock(rt, page, old);
			if (old & PG_NOACCESS)
				ring_push_raw(&rt->fifo, page, epoch);
			continue;
		}
		run_add(rt, &run, page, old);
		got++;
	}
	run_flush(rt, &run);
	FL_TESTCASE(nskipped > 0);
	ring_unpop(&rt->fifo, skipped_pages, skipped_epochs, nskipped);
	return got;
}

/* The page's age for the direct sweep (arrived_lately): an access sample (the prober's, which
 * counts no fault) is not an arrival. */
void fl_evict_note_arrival(struct fl_runtime *rt, size_t page, unsigned kind)
{
	if (rt->local_limit_pages == 0 || rt->policy != FL_POLICY_CLOCK || kind == FL_FAULT_ACCESS_SAMPLE)
		return;
	bool first_touch = kind == FL_FAULT_FIRST_TOUCH;
	uint32_t now = atomic_fetch_add_explicit(&rt->installs, 1, memory_order_relaxed);
	/* a page that came back (refault, soft fault) is stamped as old already: never spared */
	__atomic_store_n(&rt->arrived[page], first_touch ? now : now - rt->young_installs, __ATOMIC_RELAXED);
	if (first_touch)
		atomic_fetch_add_explicit(&rt->first_installs, 1, memory_order_relaxed);
}

void fl_evict_note_installed(struct fl_runtime *rt, size_t page)
{
	fl_evict_note_installed_run(rt, page, 1);
}

void fl_evict_note_installed_run(struct fl_runtime *rt, size_t first, size_t n)
{
	if (n == 0 || rt->local_limit_pages == 0 || rt->policy != FL_POLICY_FIFO)
		return;
	pthread_mutex_lock(&rt->evict_lock);
	for (size_t i = 0; i < n; i++)
		fl_evict_note_installed_locked(rt, first + i);
	pthread_mutex_unlock(&rt->evict_lock);
}

void fl_evict_note_installed_locked(struct fl_runtime *rt, size_t page)
{
	if (rt->local_limit_pages == 0 || rt->policy != FL_POLICY_FIFO)
		return;
	if (ring_count(&rt->fifo) == rt->fifo.cap) {
		/* full of stale entries (live ones are at most -L): keep only the live ones */
		size_t n = ring_count(&rt->fifo), p;
		uint32_t e;
		for (size_t i = 0; i < n && ring_pop(&rt->fifo, &p, &e); i++)
			if (rt->epoch[p] == e && (atomic_load(&rt->state[p]) & PG_WHERE) == PG_RESIDENT)
				ring_push_raw(&rt->fifo, p, e);
	}
	if (ring_count(&rt->fifo) < rt->fifo.cap)
		ring_push_raw(&rt->fifo, page, rt->epoch[page]);
}

/* Evicts about `excess` pages (fewer when all candidates are busy); under evict_lock. */
static size_t evict_some(struct fl_runtime *rt, size_t excess)
{
	if (rt->policy == FL_POLICY_FIFO)
		return fifo_evict(rt, excess);
	size_t soft = atomic_load(&rt->soft_pages), target = soft_target(rt);
	size_t got = 0, direct = 0;
	bool swept = soft < target + excess;
	if (swept) {
		/* trials fill the pool up to its target, then the pool's oldest leave; evicting
		 * directly, the sweep takes just what is needed (more would leave -L unused) */
		clock_sweep(rt, rt->clock_trial ? target + excess - soft : excess, &direct);
		got = direct;
	}
	if (got < excess)
		got += finalize_oldest_soft(rt, excess - got, FL_EVICT_CLOCK_SOFT);
	if (got < excess && !swept) { /* the pool looked full, but of soft pages that cannot leave: */
		clock_sweep(rt, excess - got, &direct); /* pages the prober armed (probe.c) */
		got += direct;
		if (got < excess)
			got += finalize_oldest_soft(rt, excess - got, FL_EVICT_CLOCK_SOFT);
	}
	adapt_decide(rt);
	return got;
}

/* Inline eviction: a fault found no free page (the evictor fell behind, or is off). */
void fl_evict_make_room(struct fl_runtime *rt, size_t need)
{
	size_t limit = rt->local_limit_pages;
	size_t batch = fl_evict_inline_batch(limit);
	unsigned stalls = 0;

	pthread_mutex_lock(&rt->evict_lock);
	if (atomic_load(&rt->local_pages) + need <= limit) {
		pthread_mutex_unlock(&rt->evict_lock);
		return;
	}
	atomic_fetch_add_explicit(&rt->evict.rounds, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&rt->evict.inline_rounds, 1, memory_order_relaxed);
	while (atomic_load(&rt->local_pages) + batch > limit) {
		if (evict_some(rt, atomic_load(&rt->local_pages) + batch - limit))
			continue;
		/* every candidate is in transition: let its owner finish */
		if (++stalls == 100000)
			fl_log("eviction is stalled: no page of local memory can be evicted (all busy or PROT_NONE)");
		pthread_mutex_unlock(&rt->evict_lock);
		sched_yield();
		pthread_mutex_lock(&rt->evict_lock);
		if (atomic_load(&rt->local_pages) + need <= limit)
			break;
	}
	pthread_mutex_unlock(&rt->evict_lock);
}

/* ---- the reserve and the evictor thread ---- */

static void evictor_kick(struct fl_runtime *rt)
{
	struct fl_evictor *ev = &rt->evictor;
	uint64_t one = 1;
	if (ev->wake_fd < 0 || !atomic_exchange_explicit(&ev->sleeping, false, memory_order_acq_rel))
		return;
	if (syscall(SYS_write, ev->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		fl_log_errno("write(evictor eventfd)", errno);
}

void fl_evict_reserve(struct fl_runtime *rt, size_t n)
{
	size_t limit = rt->local_limit_pages;
	if (limit == 0) {
		fl_local_add(rt, n);
		return;
	}
	for (;;) {
		size_t cur = atomic_load_explicit(&rt->local_pages, memory_order_relaxed);
		if (cur + n <= limit) {
			if (!atomic_compare_exchange_weak_explicit(&rt->local_pages, &cur, cur + n,
								   memory_order_relaxed, memory_order_relaxed))
				continue;
			fl_local_add(rt, 0); /* update the peak */
			if (limit - (cur + n) < rt->reserve_low)
				evictor_kick(rt);
			return;
		}
		fl_evict_make_room(rt, n);
	}
}

static bool reserve_short(struct fl_runtime *rt)
{
	return atomic_load_explicit(&rt->local_pages, memory_order_relaxed) + rt->reserve_high > rt->local_limit_pages;
}

/* Refills the reserve: evicts until reserve_high pages are free, one run at a time (the lock
 * is released between runs, so a fault that needs evict_lock waits for one run at most). */
static void refill(struct fl_runtime *rt)
{
	unsigned idle = 0;
	atomic_fetch_add_explicit(&rt->evict.evictor_rounds, 1, memory_order_relaxed);
	while (reserve_short(rt) && !atomic_load(&rt->stopping)) {
		size_t excess = atomic_load(&rt->local_pages) + rt->reserve_high - rt->local_limit_pages;
		pthread_mutex_lock(&rt->evict_lock);
		size_t done = evict_some(rt, excess < FL_EVICT_RUN ? excess : FL_EVICT_RUN);
		pthread_mutex_unlock(&rt->evict_lock);
		FL_TESTCASE(done == 0);
		if (done == 0 && ++idle == 100)
			return; /* everything busy or PROT_NONE: faults evict inline if they must */
		if (done == 0)
			sched_yield();
	}
}

static void *evictor_main(void *arg)
{
	struct fl_runtime *rt = arg;
	struct fl_evictor *ev = &rt->evictor;
	uint64_t v;

	fl_internal_thread_enter("fl-evictor"); /* raw mask: the shim's would leave the stack signal open after fork */
	atomic_store(&ev->tid, (int)syscall(SYS_gettid));
	/* Acts only when kicked, never on its own: in a forked child it starts before the child's
	 * runtime is complete (new userfaultfd, far store), and only its handlers kick. A kick
	 * lost while it was awake is harmless: every later fault that finds the reserve low and
	 * the evictor asleep kicks again (and without faults there is nothing to make room for). */
	for (;;) {
		if (syscall(SYS_read, ev->wake_fd, &v, sizeof(v)) < 0) {
			if (errno == EINTR)
				continue;
			fl_log_errno("read(evictor eventfd)", errno);
			atomic_store(&ev->sleeping, false); /* faults evict inline from now on */
			return NULL;
		}
		refill(rt);
		atomic_store(&ev->sleeping, true);
	}
	return NULL;
}

/* Starts the evictor (at start, after every setup step, and in a forked child); without it
 * faults evict inline. */
void fl_evict_start(struct fl_runtime *rt)
{
	struct fl_evictor *ev = &rt->evictor;
	ev->wake_fd = -1;
	atomic_store(&ev->sleeping, true);
	atomic_store(&ev->tid, 0); /* in a forked child: the parent's evictor does not run here */
	if (rt->local_limit_pages < FL_EVICTOR_MIN_PAGES || ev->off)
		return;
	int fd = fl_fd_keep(eventfd(0, EFD_CLOEXEC));
	if (fd < 0) {
		fl_log_errno("eventfd(evictor)", errno);
		return;
	}
	ev->wake_fd = fd;
	int err = fl_thread_create(&ev->thread, evictor_main, rt);
	if (err) {
		fl_log_errno("pthread_create(evictor)", err);
		fl_sys_close(fd);
		ev->wake_fd = -1;
	}
}

/* After fork, in the child: recount local memory and rebuild the rings from the states. */
void fl_evict_rebuild_after_fork(struct fl_runtime *rt)
{
	size_t local = 0, soft = 0;
	rt->soft.head = rt->soft.tail = 0;
	rt->fifo.head = rt->fifo.tail = 0;
	rt->clock_hand = 0;
	evict_lock_init(rt);
	if (rt->move_uffd != -2)
		rt->move_uffd = -1; /* the child's userfaultfd is new: the mirror is registered again */
	if (rt->evictor.wake_fd >= 0)
		fl_sys_close(rt->evictor.wake_fd); /* the parent's; its thread does not exist here */
	if (rt->evictor.pidfd >= 0)
		fl_sys_close(rt->evictor.pidfd); /* the parent's process */
	rt->evictor.pidfd = fl_fd_keep((int)syscall(SYS_pidfd_open, getpid(), 0));
	fl_evict_start(rt);
	for (size_t p = 0; p < rt->va_high_pages; p++) {
		uint8_t s = atomic_load(&rt->state[p]) & PG_WHERE;
		FL_TESTCASE(s == PG_FAR); /* a forked child that starts with evicted pages */
		if (s == PG_RESIDENT) {
			local++;
			if (rt->local_limit_pages && rt->policy == FL_POLICY_FIFO && ring_count(&rt->fifo) < rt->fifo.cap)
				ring_push_raw(&rt->fifo, p, rt->epoch[p]);
		} else if (s == PG_SOFT) {
			local++, soft++;
			if (ring_count(&rt->soft) < rt->soft.cap)
				ring_push_raw(&rt->soft, p, rt->epoch[p]);
		}
	}
	atomic_store(&rt->local_pages, local);
	atomic_store(&rt->peak_local_pages, local);
	atomic_store(&rt->soft_pages, soft);
}
