/* far_prefetch.c: read-ahead of far pages (record --prefetch N).
 *
 * After every refault of page p (prefetch hits included, so a sequential stream keeps its
 * window ahead), the handler queues p; one prefetch thread takes the FAR pages among
 * p+1 .. p+N (by address, not yet staged, not in transition) and reads them — one far request,
 * so one emulated latency for the whole batch — into their mirror pages, WITHOUT mapping them.
 * When p+1 is staged already, it waits until at least half the window is missing (as the
 * kernel's read-ahead starts its next window asynchronously), so requests carry N/2..N pages.
 * They become FAR | STAGED (pages.h): counted in local memory (room is made for them first,
 * as for a fault), the far copy still valid. A later access still faults and is recorded as a
 * refault, flagged FL_FAULT_PREFETCH_HIT, and is served from the mirror without the far latency;
 * fault counts are therefore the same with and without read-ahead.
 *
 * State machine: the prefetch thread claims each page with trylock (BUSY), checks it is still
 * FAR and not staged, reads, and publishes FAR | STAGED. A fault meanwhile waits for BUSY as for
 * any transition, then takes the staged copy. The staged pool is bounded (`budget`); when full,
 * the oldest staged pages are dropped again (FAR, counted as prefetch_unused), so read-ahead
 * never holds more than a small part of -L (the count is fl_far_state.prefetch_staged). Discard
 * (far backends call fl_far_discard_staged, far_store.c) and fork (the child drops every staged
 * copy) keep the count exact.
 *
 * Handlers only append to a small queue under a mutex shared with the prefetch thread (no
 * application thread takes it) and write an eventfd when the thread sleeps. The prefetch
 * thread allocates nothing and touches only the mirror. */
#include "far_prefetch.h"
#include "fds.h"
#include "far_store.h"
#include "far_latency.h"
#include "context.h"
#include "evict.h"
#include "pages.h"
#include "diag.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#define QUEUE_LEN 64

struct fl_prefetch {
	pthread_t thread;
	int wake_fd;
	pthread_mutex_t lock;                /* queue, among handlers and the prefetch thread */
	size_t queue[QUEUE_LEN];
	unsigned qhead, qtail;
	_Atomic bool sleeping;
	/* staged pages, oldest first (prefetch thread only) */
	uint32_t *ring_pages, *ring_epochs;
	size_t cap, head, tail;
	size_t budget;
	bool started;
};

static void count_unused(struct fl_runtime *rt, size_t n)
{
	atomic_fetch_sub(&rt->farst.prefetch_staged, n);
	atomic_fetch_add(&rt->farst.stats.prefetch_unused, n);
	fl_local_sub(rt, n);
}

void fl_prefetch_hit(struct fl_runtime *rt, size_t page)
{
	(void)page;
	atomic_fetch_sub(&rt->farst.prefetch_staged, 1);
	atomic_fetch_add_explicit(&rt->farst.stats.prefetch_hits, 1, memory_order_relaxed);
}

void fl_prefetch_after_refault(struct fl_runtime *rt, size_t page)
{
	struct fl_prefetch *pf = rt->farst.pf;
	bool queued = false;
	if (!pf)
		return;
	pthread_mutex_lock(&pf->lock);
	if (pf->qtail - pf->qhead < QUEUE_LEN &&
	    (pf->qtail == pf->qhead || pf->queue[(pf->qtail - 1) % QUEUE_LEN] != page)) {
		pf->queue[pf->qtail++ % QUEUE_LEN] = page;
		queued = true;
	}
	pthread_mutex_unlock(&pf->lock);
	if (queued && atomic_load(&pf->sleeping)) {
		uint64_t one = 1;
		if (fl_sys_write(pf->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
			fl_log_errno("write(prefetch eventfd)", errno);
	}
}

/* Drops the oldest staged page still staged; false when there is none. */
static bool recycle_oldest(struct fl_runtime *rt, struct fl_prefetch *pf)
{
	while (pf->head != pf->tail) {
		size_t page = pf->ring_pages[pf->head % pf->cap];
		uint32_t epoch = pf->ring_epochs[pf->head % pf->cap];
		uint8_t old;
		pf->head++;
		if (rt->epoch[page] != epoch || !fl_page_trylock(rt, page, &old))
			continue; /* faulted in since (stale entry), or in transition */
		if ((old & PG_WHERE) != PG_FAR || !(old & PG_STAGED)) {
			fl_page_unlock(rt, page, old);
			continue;
		}
		if (!rt->far->mirror_is_far)
			fl_sys_madvise(fl_mirror_addr(rt, page), FL_PAGE_SIZE, MADV_DONTNEED);
		fl_page_unlock(rt, page, (uint8_t)(old & ~PG_STAGED));
		count_unused(rt, 1);
		return true;
	}
	return false;
}

/* n pages of local memory for staged copies, evicting first when at the limit. */
static void reserve_local(struct fl_runtime *rt, size_t n)
{
	fl_evict_reserve(rt, n);
}

/* Stages the FAR pages among page+1 .. page+N. */
static void read_ahead(struct fl_runtime *rt, struct fl_prefetch *pf, size_t page)
{
	size_t high = __atomic_load_n(&rt->va_high_pages, __ATOMIC_RELAXED);
	size_t want[FL_EVICT_BATCH], got[FL_EVICT_BATCH];
	uint8_t olds[FL_EVICT_BATCH];
	char *dst[FL_EVICT_BATCH];
	size_t n = 0, k = 0, window = rt->farst.prefetch;

	if (window > FL_EVICT_BATCH)
		window = FL_EVICT_BATCH;
	bool behind = false;
	for (size_t q = page + 1; q < high && q <= page + window; q++) {
		uint8_t s = atomic_load_explicit(&rt->state[q], memory_order_relaxed);
		if ((s & (PG_WHERE | PG_BUSY | PG_STAGED | PG_NOACCESS)) == PG_FAR) {
			want[n++] = q;
			behind |= q == page + 1;
		}
	}
	/* the next page is staged already: wait until half a window is missing, so each far
	 * request (one emulated latency) brings a batch, not the one page the stream moved on */
	if (!behind && n < (window + 1) / 2)
		return;
	while (n && atomic_load(&rt->farst.prefetch_staged) + n > pf->budget)
		if (!recycle_oldest(rt, pf))
			n = atomic_load(&rt->farst.prefetch_staged) >= pf->budget ? 0 : pf->budget - atomic_load(&rt->farst.prefetch_staged);
	if (n == 0)
		return;
	fl_far_delay(rt, n * FL_PAGE_SIZE); /* one far request for the window, before claiming it */
	reserve_local(rt, n);
	for (size_t i = 0; i < n; i++) {
		uint8_t old;
		if (!fl_page_trylock(rt, want[i], &old))
			continue;
		if ((old & (PG_WHERE | PG_STAGED | PG_NOACCESS)) != PG_FAR) {
			fl_page_unlock(rt, want[i], old);
			continue;
		}
		got[k] = want[i], olds[k] = old, dst[k] = fl_mirror_addr(rt, want[i]);
		k++;
	}
	if (k < n)
		fl_local_sub(rt, n - k);
	if (k == 0)
		return;
	int err = 0;
	uint64_t t0 = fl_now_ns();
	if (!rt->far->mirror_is_far) {
		if (rt->far->get_many)
			err = rt->far->get_many(rt, got, dst, k);
		else
			for (size_t i = 0; i < k && !err; i++)
				err = rt->far->get(rt, got[i], dst[i]);
	}
	if (err) {
		fl_log_errno("far store: reading ahead", err);
		fl_fatal_stop("a page of the program's memory cannot be read back from the far store");
	}
	struct fl_far_stats *st = &rt->farst.stats;
	atomic_fetch_add_explicit(&st->read_ns, fl_now_ns() - t0, memory_order_relaxed);
	atomic_fetch_add_explicit(&st->reads, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&st->read_pages, k, memory_order_relaxed);
	atomic_fetch_add_explicit(&st->prefetch_requests, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&st->prefetched, k, memory_order_relaxed);
	atomic_fetch_add(&rt->farst.prefetch_staged, k);
	for (size_t i = 0; i < k; i++) {
		if (pf->tail - pf->head == pf->cap)
			pf->head++; /* oldest entry forgotten: the page stays staged until used or discarded */
		pf->ring_pages[pf->tail % pf->cap] = (uint32_t)got[i];
		pf->ring_epochs[pf->tail % pf->cap] = rt->epoch[got[i]];
		pf->tail++;
		fl_page_unlock(rt, got[i], (uint8_t)(olds[i] | PG_STAGED));
	}
}

static void *prefetch_main(void *arg)
{
	struct fl_runtime *rt = arg;
	struct fl_prefetch *pf = rt->farst.pf;
	fl_internal_thread_enter("fl-prefetch");
	for (;;) {
		size_t page;
		pthread_mutex_lock(&pf->lock);
		bool empty = pf->qhead == pf->qtail;
		if (!empty)
			page = pf->queue[pf->qhead++ % QUEUE_LEN];
		atomic_store(&pf->sleeping, empty);
		pthread_mutex_unlock(&pf->lock);
		if (empty) {
			uint64_t v;
			if (fl_sys_read(pf->wake_fd, &v, sizeof(v)) < 0 && errno != EINTR) {
				fl_log_errno("read(prefetch eventfd)", errno);
				return NULL;
			}
			continue;
		}
		read_ahead(rt, pf, page);
	}
	return NULL;
}

static int start_thread(struct fl_runtime *rt)
{
	struct fl_prefetch *pf = rt->farst.pf;
	pthread_mutex_init(&pf->lock, NULL);
	pf->qhead = pf->qtail = 0;
	pf->head = pf->tail = 0;
	atomic_store(&rt->farst.prefetch_staged, 0);
	atomic_store(&pf->sleeping, false);
	pf->wake_fd = fl_fd_keep(eventfd(0, EFD_CLOEXEC));
	if (pf->wake_fd < 0) {
		fl_log_errno("eventfd(prefetch)", errno);
		return -1;
	}
	int err = fl_thread_create(&pf->thread, prefetch_main, rt);
	if (err) {
		fl_log_errno("pthread_create(prefetch)", err);
		return -1;
	}
	return 0;
}

int fl_prefetch_setup(struct fl_runtime *rt)
{
	struct fl_far_state *fs = &rt->farst;
	if (fs->prefetch == 0 || rt->local_limit_pages == 0)
		return 0; /* nothing is ever evicted without -L: nothing to read ahead */
	size_t budget = 4 * (size_t)fs->prefetch;
	if (budget < 64)
		budget = 64;
	if (budget > rt->local_limit_pages / 4)
		budget = rt->local_limit_pages / 4;
	size_t cap = 2 * budget;
	size_t bytes = sizeof(struct fl_prefetch) + 2 * cap * sizeof(uint32_t);
	struct fl_prefetch *pf = fl_sys_reserve(bytes, "mmap(prefetch state)");
	if (!pf)
		return -1;
	memset(pf, 0, sizeof(*pf));
	pf->ring_pages = (uint32_t *)(pf + 1);
	pf->ring_epochs = pf->ring_pages + cap;
	pf->cap = cap;
	pf->budget = budget;
	fs->pf = pf;
	return 0;
}

int fl_prefetch_start(struct fl_runtime *rt)
{
	return rt->farst.pf ? start_thread(rt) : 0;
}

void fl_prefetch_after_fork(struct fl_runtime *rt)
{
	struct fl_prefetch *pf = rt->farst.pf;
	if (!pf)
		return;
	/* the parent's staged copies are not counted here (fl_evict_rebuild_after_fork counts
	 * resident and soft pages): drop them; the child reads those pages from the far store */
	for (size_t p = 0; p < rt->va_high_pages; p++) {
		uint8_t s = atomic_load(&rt->state[p]);
		if ((s & PG_WHERE) == PG_FAR && (s & PG_STAGED)) {
			if (!rt->far->mirror_is_far)
				fl_sys_madvise(fl_mirror_addr(rt, p), FL_PAGE_SIZE, MADV_DONTNEED);
			atomic_store(&rt->state[p], (uint8_t)(s & ~PG_STAGED));
		}
	}
	fl_sys_close(pf->wake_fd);
	if (start_thread(rt) < 0)
		rt->farst.pf = NULL;
}
