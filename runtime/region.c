/* region.c: the region's virtual memory — reservation, address allocation, discarding.
 *
 * The region is one MAP_NORESERVE reservation of -M bytes, registered with userfaultfd once.
 * Addresses in it are handed out by a first-fit allocator over a sorted array of free extents
 * (in pages, coalesced on free), so addresses are reused after free: -M bounds the peak heap,
 * not the total ever allocated. Freed or discarded pages lose their content (they read back
 * as zeros) and their far copies. The far mirror and the per-page arrays are reserved here
 * too, outside the region, with raw system calls (the shim interposes mmap).
 *
 * Callers: the shim (jemalloc's extent hooks, the program's mmap family) on application
 * threads. va_lock is never taken by handler threads. */
#include "region.h"
#include "pages.h"
#include "diag.h"
#include "uffd_compat.h"
#include "far_store.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <unistd.h>

struct fl_region_span fl_region_span;

int fl_region_setup(struct fl_runtime *rt)
{
	size_t pages = rt->max_bytes >> FL_PAGE_SHIFT;
	rt->region_pages = pages;
	rt->region = fl_sys_reserve(pages * FL_PAGE_SIZE, "mmap(region of -M bytes)");
	rt->mirror = fl_sys_reserve(pages * FL_PAGE_SIZE, "mmap(far store mirror)");
	rt->state = fl_sys_reserve(pages, "mmap(page states)");
	rt->epoch = fl_sys_reserve(pages * sizeof(uint32_t), "mmap(page epochs)");
	rt->free_cap = 1024;
	rt->free_extents = fl_sys_reserve(rt->free_cap * sizeof(struct fl_extent), "mmap(free extents)");
	if (!rt->region || !rt->mirror || !rt->state || !rt->epoch || !rt->free_extents)
		return -1;
	/* 4 KiB pages only: the runtime tracks and moves single pages */
	fl_sys_madvise(rt->region, pages * FL_PAGE_SIZE, MADV_NOHUGEPAGE);
	fl_sys_madvise(rt->mirror, pages * FL_PAGE_SIZE, MADV_NOHUGEPAGE);
	fl_region_span = (struct fl_region_span){ rt->region, pages * FL_PAGE_SIZE };
	rt->free_extents[0] = (struct fl_extent){ .first = 0, .count = pages };
	rt->nfree = 1;
	pthread_mutex_init(&rt->va_lock, NULL);
	return 0;
}

static int grow_extents(struct fl_runtime *rt)
{
	size_t old_bytes = rt->free_cap * sizeof(struct fl_extent);
	void *p = fl_sys_mremap(rt->free_extents, old_bytes, 2 * old_bytes, MREMAP_MAYMOVE, NULL);
	if (p == MAP_FAILED) {
		fl_log_errno("mremap(free extents)", errno);
		return -1;
	}
	rt->free_extents = p;
	rt->free_cap *= 2;
	return 0;
}

static void remove_extent(struct fl_runtime *rt, size_t i)
{
	memmove(&rt->free_extents[i], &rt->free_extents[i + 1], (rt->nfree - i - 1) * sizeof(struct fl_extent));
	rt->nfree--;
}

static int insert_extent(struct fl_runtime *rt, size_t i, size_t first, size_t count)
{
	if (rt->nfree == rt->free_cap && grow_extents(rt) < 0)
		return -1;
	memmove(&rt->free_extents[i + 1], &rt->free_extents[i], (rt->nfree - i) * sizeof(struct fl_extent));
	rt->free_extents[i] = (struct fl_extent){ .first = first, .count = count };
	rt->nfree++;
	return 0;
}

/* Addresses the program unmapped are PROT_NONE while free; make them usable again. */
static void lift_guards(struct fl_runtime *rt, size_t first, size_t count)
{
	bool guarded = false;
	for (size_t p = first; p < first + count && !guarded; p++)
		guarded = atomic_load_explicit(&rt->state[p], memory_order_relaxed) & PG_GUARD;
	if (!guarded)
		return;
	if (fl_sys_mprotect(fl_page_addr(rt, first), count << FL_PAGE_SHIFT, PROT_READ | PROT_WRITE) < 0)
		fl_log_errno("mprotect(reused region addresses)", errno);
	for (size_t p = first; p < first + count; p++)
		atomic_fetch_and(&rt->state[p], (uint8_t) ~(PG_GUARD | PG_NOACCESS));
}

/* Takes pages [first, first + count) out of free extent i, which contains them. */
static int carve(struct fl_runtime *rt, size_t i, size_t first, size_t count)
{
	struct fl_extent *e = &rt->free_extents[i];
	size_t head = first - e->first, tail = e->first + e->count - (first + count);
	if (head && tail) {
		if (insert_extent(rt, i + 1, first + count, tail) < 0)
			return -1;
		rt->free_extents[i].count = head;
	} else if (head) {
		e->count = head;
	} else if (tail) {
		e->first = first + count, e->count = tail;
	} else {
		remove_extent(rt, i);
	}
	if (first + count > rt->va_high_pages)
		__atomic_store_n(&rt->va_high_pages, first + count, __ATOMIC_RELAXED);
	lift_guards(rt, first, count);
	return 0;
}

/* Invariant of the free extents (checked in the debug build): sorted, disjoint, coalesced
 * (no two touch), inside the region. */
static bool extents_valid(const struct fl_runtime *rt)
{
	for (size_t i = 0; i < rt->nfree; i++) {
		const struct fl_extent *e = &rt->free_extents[i];
		if (e->count == 0 || e->first + e->count > rt->region_pages)
			return false;
		if (i && rt->free_extents[i - 1].first + rt->free_extents[i - 1].count >= e->first)
			return false;
	}
	return true;
}

static void note_heap(struct fl_runtime *rt, size_t bytes)
{
	size_t now = atomic_fetch_add(&rt->heap_bytes, bytes) + bytes;
	size_t peak = atomic_load(&rt->peak_heap_bytes);
	while (now > peak && !atomic_compare_exchange_weak(&rt->peak_heap_bytes, &peak, now))
		;
}

void *fl_region_alloc(size_t size, size_t align)
{
	struct fl_runtime *rt = &fl_rt;
	size_t count = (size + FL_PAGE_SIZE - 1) >> FL_PAGE_SHIFT;
	size_t align_pages = align > FL_PAGE_SIZE ? align >> FL_PAGE_SHIFT : 1;
	size_t base_page = (uintptr_t)rt->region >> FL_PAGE_SHIFT;
	void *result = NULL;

	if (count == 0)
		return NULL;
	pthread_mutex_lock(&rt->va_lock);
	for (size_t i = 0; i < rt->nfree; i++) {
		struct fl_extent *e = &rt->free_extents[i];
		/* align the absolute page number, not the offset in the region */
		size_t abs = base_page + e->first;
		size_t first = e->first + ((align_pages - abs % align_pages) % align_pages);
		if (first + count > e->first + e->count)
			continue;
		if (carve(rt, i, first, count) == 0)
			result = fl_page_addr(rt, first);
		break;
	}
	FL_ASSERT(extents_valid(rt));
	pthread_mutex_unlock(&rt->va_lock);
	if (result)
		note_heap(rt, count << FL_PAGE_SHIFT);
	else
		fl_region_report_exhausted(size);
	return result;
}

bool fl_region_alloc_at(void *addr, size_t size)
{
	struct fl_runtime *rt = &fl_rt;
	size_t first = fl_page_index(rt, (uint64_t)(uintptr_t)addr);
	size_t count = (size + FL_PAGE_SIZE - 1) >> FL_PAGE_SHIFT;
	bool ok = false;

	if (!fl_in_region(addr) || first + count > rt->region_pages || ((uintptr_t)addr & (FL_PAGE_SIZE - 1)))
		return false;
	pthread_mutex_lock(&rt->va_lock);
	for (size_t i = 0; i < rt->nfree; i++) {
		struct fl_extent *e = &rt->free_extents[i];
		if (e->first > first)
			break;
		if (first + count <= e->first + e->count) {
			ok = carve(rt, i, first, count) == 0;
			break;
		}
	}
	pthread_mutex_unlock(&rt->va_lock);
	if (ok)
		note_heap(rt, count << FL_PAGE_SHIFT);
	return ok;
}

void fl_region_discard(void *addr, size_t size)
{
	struct fl_runtime *rt = &fl_rt;
	size_t first = fl_page_index(rt, (uint64_t)(uintptr_t)addr);
	size_t count = (size + FL_PAGE_SIZE - 1) >> FL_PAGE_SHIFT;
	size_t local = 0, soft = 0;

	if (count == 0)
		return;
	for (size_t p = first; p < first + count; p++) {
		uint8_t old = fl_page_lock(rt, p, NULL);
		if ((old & PG_WHERE) == PG_RESIDENT)
			local++;
		else if ((old & PG_WHERE) == PG_SOFT)
			local++, soft++;
	}
	if (fl_sys_madvise(fl_page_addr(rt, first), count << FL_PAGE_SHIFT, MADV_DONTNEED) < 0)
		fl_log_errno("madvise(MADV_DONTNEED) of discarded region pages", errno);
	if (fl_sys_madvise(fl_mirror_addr(rt, first), count << FL_PAGE_SHIFT, MADV_DONTNEED) < 0)
		fl_log_errno("madvise(MADV_DONTNEED) of discarded far copies", errno);
	rt->far->discard(rt, first, count);
	for (size_t p = first; p < first + count; p++) {
		uint8_t s = atomic_load(&rt->state[p]);
		fl_page_unlock(rt, p, (uint8_t)(PG_FREE | (s & PG_NOACCESS)));
	}
	atomic_fetch_sub(&rt->soft_pages, soft);
	fl_local_sub(rt, local);
}

void fl_region_set_noaccess(void *addr, size_t size, bool noaccess)
{
	struct fl_runtime *rt = &fl_rt;
	size_t first = fl_page_index(rt, (uint64_t)(uintptr_t)addr);
	size_t count = (size + FL_PAGE_SIZE - 1) >> FL_PAGE_SHIFT;
	for (size_t p = first; p < first + count && p < rt->region_pages; p++) {
		if (noaccess)
			atomic_fetch_or(&rt->state[p], PG_NOACCESS);
		else
			atomic_fetch_and(&rt->state[p], (uint8_t)~PG_NOACCESS);
	}
}

/* The first free extent that ends after page P (under va_lock). */
static size_t extent_after(const struct fl_runtime *rt, size_t p)
{
	size_t lo = 0, hi = rt->nfree;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (rt->free_extents[mid].first + rt->free_extents[mid].count <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Pages [first, first + count), none of them free, join the free extents (under va_lock). */
static void free_run(struct fl_runtime *rt, size_t first, size_t count)
{
	size_t i = extent_after(rt, first);
	bool join_prev = i > 0 && rt->free_extents[i - 1].first + rt->free_extents[i - 1].count == first;
	bool join_next = i < rt->nfree && first + count == rt->free_extents[i].first;
	if (join_prev && join_next) {
		rt->free_extents[i - 1].count += count + rt->free_extents[i].count;
		remove_extent(rt, i);
	} else if (join_prev) {
		rt->free_extents[i - 1].count += count;
	} else if (join_next) {
		rt->free_extents[i].first = first, rt->free_extents[i].count += count;
	} else {
		insert_extent(rt, i, first, count);
	}
}

/* Gives pages [first, first + count) back to the free extents. Pages already free stay as they
 * are: a program may munmap a range twice, or a range with holes (munmap of its middle first, an
 * mremap that shrank it), and the kernel accepts that; giving such pages back twice would hand
 * the same addresses to two later mappings. */
static void release_addresses(struct fl_runtime *rt, size_t first, size_t count)
{
	size_t end = first + count, released = 0;
	pthread_mutex_lock(&rt->va_lock);
	for (size_t p = first; p < end;) {
		size_t i = extent_after(rt, p);
		if (i < rt->nfree && rt->free_extents[i].first <= p) { /* p is free already: skip its extent */
			p = rt->free_extents[i].first + rt->free_extents[i].count;
			continue;
		}
		size_t run_end = i < rt->nfree && rt->free_extents[i].first < end ? rt->free_extents[i].first : end;
		free_run(rt, p, run_end - p);
		released += run_end - p;
		p = run_end;
	}
	FL_ASSERT(extents_valid(rt));
	pthread_mutex_unlock(&rt->va_lock);
	atomic_fetch_sub(&rt->heap_bytes, released << FL_PAGE_SHIFT);
}

bool fl_region_any_free(void *addr, size_t size)
{
	struct fl_runtime *rt = &fl_rt;
	size_t first = fl_page_index(rt, (uint64_t)(uintptr_t)addr);
	size_t end = first + ((size + FL_PAGE_SIZE - 1) >> FL_PAGE_SHIFT);
	if (end < first || end > rt->region_pages)
		return true; /* past the region: not the program's memory there */
	pthread_mutex_lock(&rt->va_lock);
	size_t i = extent_after(rt, first);
	bool any = i < rt->nfree && rt->free_extents[i].first < end;
	pthread_mutex_unlock(&rt->va_lock);
	return any;
}

void fl_region_claim(void *addr, size_t size)
{
	struct fl_runtime *rt = &fl_rt;
	size_t first = fl_page_index(rt, (uint64_t)(uintptr_t)addr);
	size_t end = first + ((size + FL_PAGE_SIZE - 1) >> FL_PAGE_SHIFT), claimed = 0;

	if (!fl_in_region(addr) || end > rt->region_pages || ((uintptr_t)addr & (FL_PAGE_SIZE - 1)))
		return;
	pthread_mutex_lock(&rt->va_lock);
	for (size_t p = first; p < end;) {
		size_t i = extent_after(rt, p);
		if (i >= rt->nfree || rt->free_extents[i].first >= end)
			break;
		size_t lo = rt->free_extents[i].first > p ? rt->free_extents[i].first : p;
		size_t hi = rt->free_extents[i].first + rt->free_extents[i].count;
		if (hi > end)
			hi = end;
		if (carve(rt, i, lo, hi - lo) < 0)
			break; /* no room to split the extent (out of memory): those pages stay free */
		claimed += hi - lo;
		p = hi;
	}
	FL_ASSERT(extents_valid(rt));
	pthread_mutex_unlock(&rt->va_lock);
	if (claimed)
		note_heap(rt, claimed << FL_PAGE_SHIFT);
}

void fl_region_free(void *addr, size_t size)
{
	struct fl_runtime *rt = &fl_rt;
	size_t count = (size + FL_PAGE_SIZE - 1) >> FL_PAGE_SHIFT;
	if (count == 0)
		return;
	fl_region_discard(addr, size);
	fl_region_set_noaccess(addr, size, false);
	release_addresses(rt, fl_page_index(rt, (uint64_t)(uintptr_t)addr), count);
}

void fl_region_unmap(void *addr, size_t size)
{
	struct fl_runtime *rt = &fl_rt;
	size_t first = fl_page_index(rt, (uint64_t)(uintptr_t)addr);
	size_t count = (size + FL_PAGE_SIZE - 1) >> FL_PAGE_SHIFT;
	if (count == 0)
		return;
	fl_region_discard(addr, size);
	if (fl_sys_mprotect(addr, count << FL_PAGE_SHIFT, PROT_NONE) < 0)
		fl_log_errno("mprotect(PROT_NONE) of unmapped region addresses", errno);
	for (size_t p = first; p < first + count; p++)
		atomic_fetch_or(&rt->state[p], PG_GUARD | PG_NOACCESS);
	release_addresses(rt, first, count);
}

/* Whether the kernel would refuse a private anonymous mapping of REQUEST bytes anyway: under its
 * default heuristic overcommit (vm.overcommit_memory 0), one larger than RAM and swap together.
 * Such a request fails natively too, silently; so it does here. */
static bool natively_refused(size_t request)
{
	char mode = '0';
	int fd = (int)syscall(SYS_open, "/proc/sys/vm/overcommit_memory", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (syscall(SYS_read, fd, &mode, 1) != 1)
			mode = '0';
		syscall(SYS_close, fd);
	}
	struct sysinfo si;
	if (mode != '0' || syscall(SYS_sysinfo, &si) < 0)
		return false;
	unsigned long long total = ((unsigned long long)si.totalram + si.totalswap) * si.mem_unit;
	return request > total;
}

void fl_region_report_exhausted(size_t request)
{
	struct fl_runtime *rt = &fl_rt;
	char tmp[512];
	struct fl_buf b = { tmp, 0, sizeof(tmp) };
	bool expected = false;
	if (natively_refused(request) || !atomic_compare_exchange_strong(&rt->exhausted_reported, &expected, true))
		return;
	/* REQUEST is what the region was asked for: an anonymous mmap's length, or the allocator's
	 * extent for a malloc (the request rounded up to its size class), not always the call's size */
	fl_buf_str(&b, "region exhausted: ");
	fl_buf_u64(&b, request);
	fl_buf_str(&b, " more bytes asked of the region (an mmap, or an allocator extent) with ");
	fl_buf_u64(&b, atomic_load(&rt->heap_bytes) >> 20);
	fl_buf_str(&b, " MiB of the -M limit of ");
	fl_buf_u64(&b, rt->max_bytes >> 20);
	fl_buf_str(&b, " MiB in use; the call fails with ENOMEM (malloc returns NULL, mmap MAP_FAILED), "
		       "and this is said only once. Raise -M (faultline record -M SIZE)");
	fl_log(tmp);
}
