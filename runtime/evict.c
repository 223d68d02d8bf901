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
 * Unmapping a run of pages (never one page per call: with other threads running each call
 * pays a ~10 µs TLB shootdown): dirty pages are write-protected first (a write now waits for
 * the handlers, which see the page BUSY and wait for us), copied to the mirror, then the whole
 * run is dropped with one MADV_DONTNEED. Clean pages (write-protected since they came in from
 * the far store) are dropped without a copy.
 *
 * Everything here runs on handler threads under evict_lock, which application threads never
 * take; pages are claimed with trylock only, so eviction never waits for a page. */
#include "pages.h"
#include "diag.h"
#include "uffd_compat.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

static int ring_init(struct fl_page_ring *r, size_t cap)
{
	r->cap = cap, r->head = r->tail = 0;
	r->pages = fl_sys_mmap(NULL, cap * sizeof(uint32_t), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	r->epochs = fl_sys_mmap(NULL, cap * sizeof(uint32_t), PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r->pages == MAP_FAILED || r->epochs == MAP_FAILED) {
		fl_log_errno("mmap(eviction ring)", errno);
		return -1;
	}
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

int fl_evict_setup(struct fl_runtime *rt)
{
	size_t limit = rt->local_limit_pages;
	pthread_mutex_init(&rt->evict_lock, NULL);
	rt->clock_hand = 0;
	if (limit == 0)
		return 0;
	if (rt->policy == FL_POLICY_CLOCK) {
		size_t target = limit / 8;
		if (target < FL_EVICT_BATCH)
			target = FL_EVICT_BATCH;
		if (target > 16384)
			target = 16384;
		rt->soft_target_pages = target;
		return ring_init(&rt->soft, 4 * (target + FL_EVICT_BATCH));
	}
	return ring_init(&rt->fifo, 2 * limit + 4096);
}

/* SOFT -> FAR for pages this thread has locked, as one batch: the backend writes the dirty
 * ones together (far_store.c; for the in-memory store nothing moves, others then drop the
 * mirror pages), and only then are the pages published FAR. */
static void finalize_locked(struct fl_runtime *rt, const size_t *pages, const uint8_t *old, size_t n)
{
	if (n == 0)
		return;
	int err = fl_far_write_back(rt, pages, old, n);
	if (err) {
		fl_log_errno("far store: writing evicted pages", err);
		fl_fatal_stop("a page of the program's memory cannot be written to the far store");
	}
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

/* Pops the oldest soft pages and evicts them for real, in batches; returns how many. */
static size_t finalize_oldest_soft(struct fl_runtime *rt, size_t want)
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
			finalize_locked(rt, batch, olds, n);
			n = 0;
		}
	}
	finalize_locked(rt, batch, olds, n);
	return done;
}

/* Unmaps a run of locked, resident pages [first, first + n): dirty content goes to the mirror. */
static void unmap_run(struct fl_runtime *rt, size_t first, size_t n, const uint8_t *old)
{
	char *start = fl_page_addr(rt, first);
	bool any_dirty = false;
	for (size_t i = 0; i < n; i++)
		any_dirty |= (old[i] & PG_DIRTY) != 0;
	if (any_dirty && rt->write_protect) {
		struct uffdio_writeprotect wp = {
			.range = { .start = (uint64_t)(uintptr_t)start, .len = n * FL_PAGE_SIZE },
			.mode = UFFDIO_WRITEPROTECT_MODE_WP,
		};
		if (ioctl(rt->uffd, UFFDIO_WRITEPROTECT, &wp) < 0 && errno != ESRCH && errno != ENOENT)
			fl_log_errno("ioctl(UFFDIO_WRITEPROTECT) before eviction", errno);
	}
	/* clean pages keep a valid copy in the mirror only when the mirror is the far store */
	for (size_t i = 0; i < n; i++)
		if ((old[i] & PG_DIRTY) || !rt->write_protect || !rt->far->mirror_is_far)
			memcpy(fl_mirror_addr(rt, first + i), start + i * FL_PAGE_SIZE, FL_PAGE_SIZE);
	if (fl_sys_madvise(start, n * FL_PAGE_SIZE, MADV_DONTNEED) < 0)
		fl_log_errno("madvise(MADV_DONTNEED) of evicted pages", errno);
}

/* Evicts a run of locked pages: to the soft pool (clock) or straight to FAR (fifo). */
static void evict_run(struct fl_runtime *rt, size_t first, size_t n, const uint8_t *old, bool to_soft)
{
	if (n == 0)
		return;
	size_t fin_pages[FL_EVICT_BATCH], nfin = 0;
	uint8_t fin_old[FL_EVICT_BATCH];
	unmap_run(rt, first, n, old);
	for (size_t i = 0; i < n; i++) {
		size_t page = first + i;
		uint8_t dirty = rt->write_protect ? (old[i] & PG_DIRTY) : PG_DIRTY;
		uint8_t soft = (uint8_t)(PG_SOFT | dirty | (old[i] & PG_NOACCESS));
		atomic_fetch_add_explicit(&rt->soft_pages, 1, memory_order_relaxed);
		if (!to_soft) {
			fin_pages[nfin] = page, fin_old[nfin] = soft; /* n <= FL_EVICT_BATCH */
			nfin++;
			continue;
		}
		atomic_fetch_add_explicit(&rt->evict.soft_evictions, 1, memory_order_relaxed);
		if (ring_count(&rt->soft) == rt->soft.cap)
			finalize_oldest_soft(rt, 1);
		ring_push_raw(&rt->soft, page, rt->epoch[page]);
		fl_page_unlock(rt, page, soft);
	}
	finalize_locked(rt, fin_pages, fin_old, nfin);
}

/* Collects victims into contiguous runs and evicts each run when it ends. */
struct run {
	size_t first, n;
	uint8_t old[FL_EVICT_BATCH];
};

static void run_flush(struct fl_runtime *rt, struct run *r, bool to_soft)
{
	evict_run(rt, r->first, r->n, r->old, to_soft);
	r->n = 0;
}

static void run_add(struct fl_runtime *rt, struct run *r, size_t page, uint8_t old, bool to_soft)
{
	if (r->n && (r->first + r->n != page || r->n == FL_EVICT_BATCH))
		run_flush(rt, r, to_soft);
	if (r->n == 0)
		r->first = page;
	r->old[r->n++] = old;
}

/* Clock: moves up to `want` unreferenced resident pages into the soft pool. */
static size_t clock_sweep(struct fl_runtime *rt, size_t want)
{
	size_t high = __atomic_load_n(&rt->va_high_pages, __ATOMIC_RELAXED);
	size_t got = 0, examined = 0;
	struct run run = { .n = 0 };
	uint8_t old;

	while (high && got < want && examined < 2 * high + FL_EVICT_BATCH) {
		size_t page = rt->clock_hand;
		rt->clock_hand = (page + 1 < high) ? page + 1 : 0;
		examined++;
		uint8_t s = atomic_load_explicit(&rt->state[page], memory_order_relaxed);
		if ((s & PG_WHERE) != PG_RESIDENT || (s & (PG_BUSY | PG_NOACCESS))) {
			if (s & PG_NOACCESS)
				atomic_fetch_add_explicit(&rt->evict.skipped_noaccess, 1, memory_order_relaxed);
			run_flush(rt, &run, true);
			continue;
		}
		if (s & PG_REF) {
			atomic_fetch_and_explicit(&rt->state[page], (uint8_t)~PG_REF, memory_order_relaxed);
			run_flush(rt, &run, true);
			continue;
		}
		if (!fl_page_trylock(rt, page, &old))
			continue;
		if ((old & PG_WHERE) != PG_RESIDENT || (old & (PG_REF | PG_NOACCESS))) {
			fl_page_unlock(rt, page, old);
			continue;
		}
		run_add(rt, &run, page, old, true);
		got++;
	}
	run_flush(rt, &run, true);
	return got;
}

/* Fifo: evicts up to `want` pages in fault-in order. */
static size_t fifo_evict(struct fl_runtime *rt, size_t want)
{
	size_t got = 0, examined = 0, budget = ring_count(&rt->fifo), page;
	struct run run = { .n = 0 };
	uint32_t epoch;
	uint8_t old;

	while (got < want && examined++ < budget && ring_pop(&rt->fifo, &page, &epoch)) {
		if (rt->epoch[page] != epoch)
			continue; /* freed or evicted since: stale entry */
		if (!fl_page_trylock(rt, page, &old)) {
			ring_push_raw(&rt->fifo, page, epoch); /* in transition: keep its place in line */
			continue;
		}
		if ((old & PG_WHERE) != PG_RESIDENT || (old & PG_NOACCESS)) {
			fl_page_unlock(rt, page, old);
			if (old & PG_NOACCESS)
				ring_push_raw(&rt->fifo, page, epoch);
			continue;
		}
		run_add(rt, &run, page, old, false);
		got++;
	}
	run_flush(rt, &run, false);
	return got;
}

void fl_evict_note_installed(struct fl_runtime *rt, size_t page)
{
	if (rt->local_limit_pages == 0)
		return;
	pthread_mutex_lock(&rt->evict_lock);
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
	pthread_mutex_unlock(&rt->evict_lock);
}

void fl_evict_make_room(struct fl_runtime *rt, size_t need)
{
	size_t limit = rt->local_limit_pages;
	size_t batch = limit / 4 < FL_EVICT_BATCH ? limit / 4 : FL_EVICT_BATCH;
	unsigned stalls = 0;

	pthread_mutex_lock(&rt->evict_lock);
	if (atomic_load(&rt->local_pages) + need <= limit) {
		pthread_mutex_unlock(&rt->evict_lock);
		return;
	}
	atomic_fetch_add_explicit(&rt->evict.rounds, 1, memory_order_relaxed);
	while (atomic_load(&rt->local_pages) + batch > limit) {
		size_t excess = atomic_load(&rt->local_pages) + batch - limit, done;
		if (rt->policy == FL_POLICY_FIFO) {
			done = fifo_evict(rt, excess);
		} else {
			size_t soft = atomic_load(&rt->soft_pages);
			if (soft < rt->soft_target_pages + excess)
				clock_sweep(rt, rt->soft_target_pages + excess - soft);
			done = finalize_oldest_soft(rt, excess);
		}
		if (done)
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

/* After fork, in the child: recount local memory and rebuild the rings from the states. */
void fl_evict_rebuild_after_fork(struct fl_runtime *rt)
{
	size_t local = 0, soft = 0;
	rt->soft.head = rt->soft.tail = 0;
	rt->fifo.head = rt->fifo.tail = 0;
	rt->clock_hand = 0;
	pthread_mutex_init(&rt->evict_lock, NULL);
	for (size_t p = 0; p < rt->va_high_pages; p++) {
		uint8_t s = atomic_load(&rt->state[p]) & PG_WHERE;
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
