/* evict_copy.c: saving scattered pages into their mirror pages together — how the adaptive
 * clock's direct evictions save dirty pages that lie apart (evict.c's save batch).
 *
 * Why. Under random access the pages a sweep evicts are about one page apart, and a
 * UFFDIO_MOVE of each pays one TLB shootdown: the kernel batches a move's flushes only over
 * consecutive present pages, so one move over a span with holes costs as much as a move per
 * page. Measured on this kind of guest, 64 pages 5 apart with another thread of the process
 * running: 29-41 us per page by moves (one per page, or one per span alike), 9.4 us per page
 * here; contiguous runs still move (0.8 us per page at 64 pages a move).
 *
 * How. One UFFDIO_WRITEPROTECT over the whole span of the batch (one flush): from then on a
 * write to a page of the batch faults and waits for the page's BUSY bit, which the caller
 * holds, so nothing written is lost. One process_vm_writev copies the pages into their mirror
 * pages: the kernel copies, so no user-mode touch of a page whose PTE just changed (each costs
 * an exit to the host here) and no fresh mirror page faulted in from user mode. The caller
 * then drops the pages with one process_madvise (the second flush).
 * Present pages of the span that are not in the batch are write-protected as well. A clean one
 * was already; a dirty one takes one write-protect fault at its next write, and fault.c lifts
 * the protection of a resident dirty page (serve_write_protect).
 * A page of the batch that is not mapped (the program dropped it behind the runtime's back,
 * mincore says) is not read: reading it would be a fault on a page this thread holds BUSY. It
 * reads as zeros, as a move would have left it. */
#include "evict_copy.h"
#include "context.h"
#include "pages.h"
#include "diag.h"
#include "uffd_compat.h"

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

/* The local (region) and remote (mirror) vectors of one copy, holes left out. */
struct copy_vectors {
	struct iovec region[FL_EVICT_COPY_RANGES];
	struct iovec mirror[FL_EVICT_COPY_RANGES];
	size_t n;
};

static void add_page(struct fl_runtime *rt, struct copy_vectors *v, size_t page)
{
	char *at = fl_page_addr(rt, page);
	if (v->n && (char *)v->region[v->n - 1].iov_base + v->region[v->n - 1].iov_len == at) {
		v->region[v->n - 1].iov_len += FL_PAGE_SIZE;
		v->mirror[v->n - 1].iov_len += FL_PAGE_SIZE;
		return;
	}
	v->region[v->n] = (struct iovec){ at, FL_PAGE_SIZE };
	v->mirror[v->n] = (struct iovec){ fl_mirror_addr(rt, page), FL_PAGE_SIZE };
	v->n++;
}

/* The copy itself; where the kernel copies short, the rest is copied by hand (the pages are
 * mapped and write-protected, so reading them cannot fault). */
static void copy_vectors(const struct copy_vectors *v)
{
	size_t bytes = 0;
	for (size_t i = 0; i < v->n; i++)
		bytes += v->region[i].iov_len;
	ssize_t done = process_vm_writev(getpid(), v->region, v->n, v->mirror, v->n, 0);
	if (done == (ssize_t)bytes)
		return;
	if (done < 0) {
		fl_log_errno("process_vm_writev(evicted pages into the mirror), copied by hand", errno);
		done = 0;
	}
	size_t skip = (size_t)done;
	for (size_t i = 0; i < v->n; i++) {
		size_t len = v->region[i].iov_len;
		if (skip >= len) {
			skip -= len;
			continue;
		}
		memcpy((char *)v->mirror[i].iov_base + skip, (char *)v->region[i].iov_base + skip, len - skip);
		skip = 0;
	}
}

void fl_evict_copy_scattered(struct fl_runtime *rt, const uint32_t *pages, size_t n)
{
	if (n == 0)
		return;
	size_t lo = pages[0], hi = pages[n - 1] + 1; /* ascending (evict.c's save batch) */
	FL_ASSERT(hi - lo <= FL_EVICT_COPY_SPAN);
	struct uffdio_writeprotect wp = {
		.range = { .start = (uint64_t)(uintptr_t)fl_page_addr(rt, lo), .len = (hi - lo) * FL_PAGE_SIZE },
		.mode = UFFDIO_WRITEPROTECT_MODE_WP,
	};
	if (ioctl(rt->uffd, UFFDIO_WRITEPROTECT, &wp) < 0 && errno != ESRCH && errno != ENOENT)
		fl_log_errno("ioctl(UFFDIO_WRITEPROTECT) before copying evicted pages", errno);
	unsigned char present[FL_EVICT_COPY_SPAN];
	if (mincore(fl_page_addr(rt, lo), (hi - lo) * FL_PAGE_SIZE, present) < 0) {
		fl_log_errno("mincore(evicted pages to copy into the mirror)", errno);
		memset(present, 1, hi - lo);
	}
	struct copy_vectors v;
	v.n = 0;
	for (size_t i = 0; i < n; i++) {
		FL_TESTCASE(!(present[pages[i] - lo] & 1));
		if (!(present[pages[i] - lo] & 1))
			continue; /* a hole: reads as zeros */
		if (v.n == FL_EVICT_COPY_RANGES) {
			copy_vectors(&v);
			v.n = 0;
		}
		add_page(rt, &v, pages[i]);
	}
	if (v.n)
		copy_vectors(&v);
}
