/* fill_ahead.c: fresh pages zero-filled ahead of a first-touch write (record --fill-ahead N).
 *
 * A program that initialises a new buffer takes one first-touch fault per page, each a full
 * userfaultfd round trip (the thread sleeps, a handler wakes, installs zeros, wakes it): a
 * 20 MiB buffer is 5,120 of them where the kernel alone takes ~1 µs a page. With --fill-ahead N,
 * a first-touch *write* whose previous page is resident (the program walks forward over fresh
 * memory) makes its handler install zeros in the next never-touched pages too, up to N, in one
 * UFFDIO_COPY; the program then writes them without faulting.
 *
 * What that costs in exactness, and what the counts then mean: a page filled ahead is local
 * memory like any other (room is made for it first, so the cap holds), but no fault happened
 * on it, so it has no fault record, no stack and no object attributed to it; stats.json counts
 * it apart (filled_ahead_pages). faults_first_touch counts the first touches that faulted, and
 * first touches + pages filled ahead is at least the pages the program first touched: a page
 * filled ahead but never used is counted there too. A page filled ahead can be evicted before
 * the program reaches it (the clock's direct sweep goes in address order); the fault that then
 * brings it back, still all zeros, is its first touch and is counted as one (fl_fill_ahead_kind,
 * stats.json filled_ahead_unused), not as a refault: a per-page mark, set here and cleared by the
 * page's next fault, tells.
 *
 * Only pages of the object the fault hit (the live object of the allocation log: every
 * allocation of a page or more is one) are filled, and only those in state FREE (never touched,
 * or given back): the run stops at the object's end or the first other page. So a page filled
 * and never used is one the program allocated and then left untouched, and no more local memory
 * goes to the fill than the object being written holds. The pages are counted in before they
 * are locked (fl_evict_reserve may evict, and must not meet our locks), and the ones not locked
 * after all are given back. */
#include "fill_ahead.h"
#include "pages.h"
#include "diag.h"
#include "evict.h"
#include "uffd_compat.h"
#include "sys.h"

#include <errno.h>
#include <sys/ioctl.h>

static char zero_run[FL_FILL_AHEAD_MAX * FL_PAGE_SIZE] __attribute__((aligned(FL_PAGE_SIZE)));

static bool is_free(const struct fl_runtime *rt, size_t page)
{
	return atomic_load_explicit(&rt->state[page], memory_order_relaxed) == PG_FREE;
}

/* Installs zeros in the N pages from FIRST (locked by us); returns how many were installed.
 * *MAPPED: the page after them was found mapped behind our back (EEXIST). */
static size_t install_zeros(struct fl_runtime *rt, size_t first, size_t n, bool *mapped)
{
	struct uffdio_copy copy = {
		.dst = (uint64_t)(uintptr_t)fl_page_addr(rt, first),
		.src = (uint64_t)(uintptr_t)zero_run,
		.len = n * FL_PAGE_SIZE,
		.mode = 0,
	};
	if (ioctl(rt->uffd, UFFDIO_COPY, &copy) == 0)
		return n;
	int err = errno;
	*mapped = err == EEXIST;
	/* EEXIST (a page mapped behind our back), EAGAIN (the address space changing), ESRCH
	 * (exiting): what was copied stays; the rest is left to its own faults */
	if (err != EEXIST && err != EAGAIN && err != ESRCH && err != ENOENT)
		fl_log_errno("ioctl(UFFDIO_COPY, fill ahead)", err);
	return copy.copy > 0 ? (size_t)copy.copy / FL_PAGE_SIZE : 0;
}

int fl_fill_ahead_setup(struct fl_runtime *rt)
{
	if (rt->fill_ahead == 0)
		return 0;
	rt->filled = fl_sys_reserve(rt->region_pages, "mmap(pages filled ahead)");
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
	if (!rt->filled || !rt->filled[page])
		return kind;
	rt->filled[page] = 0;
	if ((kind != FL_FAULT_REFAULT && kind != FL_FAULT_SOFT) || !content || !all_zero(content))
		return kind;
	atomic_fetch_add_explicit(&h->stats.filled_unused, 1, memory_order_relaxed);
	return FL_FAULT_FIRST_TOUCH;
}

void fl_fill_ahead(struct fl_handler *h, size_t page, size_t end)
{
	struct fl_runtime *rt = h->rt;
	size_t high = __atomic_load_n(&rt->va_high_pages, __ATOMIC_RELAXED);
	if (end < high)
		high = end;
	if (page == 0 || (atomic_load_explicit(&rt->state[page - 1], memory_order_relaxed) & PG_WHERE) != PG_RESIDENT)
		return; /* not a forward walk */
	size_t want = 0;
	while (want < rt->fill_ahead && page + 1 + want < high && is_free(rt, page + 1 + want))
		want++;
	if (want == 0)
		return;
	fl_evict_reserve(rt, want);
	size_t first = page + 1, n = 0;
	uint8_t old;
	while (n < want && fl_page_trylock(rt, first + n, &old)) {
		if (old != PG_FREE) {
			fl_page_unlock(rt, first + n, old);
			break;
		}
		n++;
	}
	bool mapped = false;
	size_t done = n ? install_zeros(rt, first, n, &mapped) : 0;
	size_t resident = done + (mapped && done < n); /* a page mapped behind our back: resident, as fault.c takes it */
	for (size_t i = 0; i < n; i++) {
		size_t p = first + i;
		if (i >= resident) {
			fl_page_unlock(rt, p, PG_FREE);
			continue;
		}
		rt->epoch[p]++;
		rt->filled[p] = 1;
		fl_evict_note_arrival(rt, p, FL_FAULT_FIRST_TOUCH);
		fl_page_unlock(rt, p, PG_RESIDENT | PG_REF | PG_DIRTY);
		fl_evict_note_installed(rt, p);
	}
	if (want > resident)
		fl_local_sub(rt, want - resident);
	if (done)
		atomic_fetch_add_explicit(&h->stats.filled_ahead, done, memory_order_relaxed);
}
