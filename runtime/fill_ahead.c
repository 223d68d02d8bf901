/* fill_ahead.c: fresh pages zero-filled ahead of a first-touch write (record --fill-ahead N).
 *
 * A program that initialises a new buffer takes one first-touch fault per page, each a full
 * userfaultfd round trip (the thread sleeps, a handler wakes, installs zeros, wakes it): a
 * 20 MiB buffer is 5,120 of them where the kernel alone takes ~1 µs a page. With --fill-ahead N,
 * a first-touch *write* that walks forward over fresh memory (below) makes its handler install
 * zeros in the next FREE pages too (never touched, or given back), up to N, in one UFFDIO_COPY,
 * before the faulting page's own install wakes the thread; the program then writes them
 * without faulting.
 *
 * When: a first-touch write on page P is a forward walk when P - 1 was the page of the last
 * first-touch write served (two in a row), or was filled ahead and P is the first page past
 * the fill (the walk goes on). A random write that lands next to a resident page fills nothing.
 *
 * What that costs in exactness, and what the counts then mean: a page filled ahead is local
 * memory like any other (room is made for it first, so the cap holds), but no fault happened
 * on it, so it has no fault record, no stack and no object attributed to it; stats.json counts
 * it apart (filled_ahead_pages). First touches + pages filled ahead is at least the pages the
 * program first touched: a page filled ahead but never used is counted there too, and a thread
 * whose first-touch fault was already on its way when its page was filled is counted as a
 * concurrent fault.
 *
 * A page filled ahead can also be evicted before the program reaches it, and its next fault
 * would then be a refault of a page the program never wrote. Per page, a mark says what a fill
 * knows: FILLED_SHORT when the fill stopped before the end of its object (the program may stop
 * writing there: buffer A of tests/planted/fill_gap), FILLED_TO_END when it reached the end
 * (the program initialises the whole object). A fault past a fill means the program wrote
 * through it: the marks behind it are cleared. A page's next fault clears its mark too, and
 * a FILLED_SHORT page that comes back still all zeros is counted as first touched by that
 * fault (fl_fill_ahead_kind, stats.json filled_ahead_unused), not refaulted. So a page the
 * program zeroed and had read back (calloc, memset) stays a refault unless it was the end of a
 * walk that stopped short of its object's end.
 *
 * Only pages of the object the fault hit (the live object of the allocation log: every
 * allocation of a page or more is one) are filled, and only FREE ones: the run stops at the
 * object's end or the first other page. So the fill takes no more local memory than the object
 * being written holds. The pages are locked first (trylock), then counted in: eviction only
 * trylocks, and FREE pages are never its candidates. A fill is at most 1/16 of -L
 * (fl_fill_ahead_setup), so it cannot wait for room that pages the runtime may not evict
 * (PROT_NONE, armed by the prober) hold. */
#include "fill_ahead.h"
#include "pages.h"
#include "diag.h"
#include "evict.h"
#include "uffd_compat.h"
#include "sys.h"

#include <errno.h>
#include <sys/ioctl.h>

#define FILLED_SHORT 1   /* filled by a fill that stopped before its object's end */
#define FILLED_TO_END 2  /* filled by a fill that reached its object's end */

static char zero_run[FL_FILL_AHEAD_MAX * FL_PAGE_SIZE] __attribute__((aligned(FL_PAGE_SIZE)));

int fl_fill_ahead_setup(struct fl_runtime *rt)
{
	if (rt->fill_ahead > FL_FILL_AHEAD_MAX)
		rt->fill_ahead = FL_FILL_AHEAD_MAX;
	if (rt->local_limit_pages && rt->fill_ahead > rt->local_limit_pages / 16)
		rt->fill_ahead = (unsigned)(rt->local_limit_pages / 16); /* meta.json says what is used */
	if (rt->fill_ahead == 0)
		return 0;
	rt->filled = fl_sys_reserve(rt->region_pages, "mmap(pages filled ahead)");
	atomic_store(&rt->fill_last_write, SIZE_MAX);
	return rt->filled ? 0 : -1;
}

static bool all_zero(const void *content)
{
	const uint64_t *w = content;
	for (size_t i = 0; i < FL_PAGE_SIZE / sizeof(*w); i++)
		if (w[i])
			return false;
	return true;
}

uint8_t fl_fill_ahead_kind(struct fl_handler *h, size_t page, uint8_t kind, const void *content)
{
	struct fl_runtime *rt = h->rt;
	uint8_t mark = rt->filled ? __atomic_load_n(&rt->filled[page], __ATOMIC_RELAXED) : 0;
	if (!mark)
		return kind;
	__atomic_store_n(&rt->filled[page], 0, __ATOMIC_RELAXED);
	if (mark != FILLED_SHORT || (kind != FL_FAULT_REFAULT && kind != FL_FAULT_SOFT) || !content || !all_zero(content))
		return kind;
	atomic_fetch_add_explicit(&h->stats.filled_unused, 1, memory_order_relaxed);
	return FL_FAULT_FIRST_TOUCH;
}

/* Installs zeros in the N pages from FIRST (locked by us); returns how many were installed.
 * *MAPPED: the page after those was found mapped behind our back, as fault.c's EEXIST (a copy
 * that stops there after other pages reports EAGAIN, one that starts there EEXIST). */
static size_t install_zeros(struct fl_runtime *rt, size_t first, size_t n, bool *mapped)
{
	struct uffdio_copy copy = {
		.dst = (uint64_t)(uintptr_t)fl_page_addr(rt, first),
		.src = (uint64_t)(uintptr_t)zero_run,
		.len = n * FL_PAGE_SIZE,
		.mode = 0,
	};
	*mapped = false;
	if (ioctl(rt->uffd, UFFDIO_COPY, &copy) == 0)
		return n;
	int err = errno;
	size_t done = copy.copy > 0 ? (size_t)copy.copy / FL_PAGE_SIZE : 0;
	/* EEXIST, EAGAIN (the address space changing, or a mapped page after others), ESRCH and
	 * ENOENT (exiting): what was copied stays; the rest is left to its own faults */
	if (err != EEXIST && err != EAGAIN && err != ESRCH && err != ENOENT)
		fl_log_errno("ioctl(UFFDIO_COPY, fill ahead)", err);
	*mapped = (err == EEXIST || err == EAGAIN) && done < n && fl_evict_mapped(fl_page_addr(rt, first + done));
	return done;
}

/* A first-touch write on PAGE after a fill: the program wrote through the pages behind it. */
static bool walked_past_fill(struct fl_runtime *rt, size_t page)
{
	bool any = false;
	for (size_t p = page; p > 0 && page - p < FL_FILL_AHEAD_MAX && __atomic_load_n(&rt->filled[p - 1], __ATOMIC_RELAXED); p--)
		__atomic_store_n(&rt->filled[p - 1], 0, __ATOMIC_RELAXED), any = true;
	return any;
}

void fl_fill_ahead(struct fl_handler *h, size_t page, size_t end)
{
	struct fl_runtime *rt = h->rt;
	size_t last = atomic_exchange_explicit(&rt->fill_last_write, page, memory_order_relaxed);
	bool walk = walked_past_fill(rt, page) || (page > 0 && last == page - 1);
	size_t high = __atomic_load_n(&rt->va_high_pages, __ATOMIC_RELAXED);
	if (end < high)
		high = end;
	if (!walk || page + 1 >= high)
		return;
	size_t first = page + 1, n = 0;
	uint8_t old;
	while (n < rt->fill_ahead && first + n < high && fl_page_trylock(rt, first + n, &old)) {
		if (old != PG_FREE) {
			fl_page_unlock(rt, first + n, old);
			break;
		}
		/* before the install wakes a thread waiting there: a stack another handler takes from
		 * that thread's sample meanwhile is then seen to be stale (fault.c, stack_from_sample) */
		rt->epoch[first + n]++;
		n++;
	}
	if (n == 0)
		return;
	fl_evict_reserve(rt, n);
	bool mapped;
	size_t done = install_zeros(rt, first, n, &mapped);
	size_t resident = done + (mapped ? 1 : 0); /* a page mapped behind our back: resident, as fault.c takes it */
	uint8_t mark = first + done >= end ? FILLED_TO_END : FILLED_SHORT;
	for (size_t i = 0; i < n; i++) {
		size_t p = first + i;
		if (i >= resident) {
			fl_page_unlock(rt, p, PG_FREE);
			continue;
		}
		__atomic_store_n(&rt->filled[p], i < done ? mark : 0, __ATOMIC_RELAXED);
		fl_evict_note_arrival(rt, p, FL_FAULT_FIRST_TOUCH);
		fl_page_unlock(rt, p, PG_RESIDENT | PG_REF | PG_DIRTY);
	}
	if (mapped)
		fl_page_wake(rt, first + done); /* no install woke a thread waiting there */
	if (n > resident)
		fl_local_sub(rt, n - resident);
	fl_evict_note_installed_run(rt, first, resident);
	if (done)
		atomic_fetch_add_explicit(&h->stats.filled_ahead, done, memory_order_relaxed);
}
