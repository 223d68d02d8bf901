/* mmap.c: the program's anonymous memory mappings, served from the region.
 *
 * mmap of private anonymous memory (no address hint, not executable, not a stack) is carved
 * from the region; munmap gives it back (contents discarded); mremap grows in place when the
 * addresses after it are free, else moves by copying; madvise(DONTNEED/FREE) discards (pages
 * read back as zeros, far copies dropped), see madvise below for the rest; mprotect works as usual and PROT_NONE
 * pages are never evicted. A MAP_FIXED mapping of anonymous memory over region memory
 * replaces its contents with zeros; unmapped addresses stay PROT_NONE until reused, so a
 * use after munmap faults as it would without faultline; a file or shared MAP_FIXED mapping over the region cannot
 * be supported and fails with one clear message. jemalloc's own calls (for its non-region
 * arenas) and the runtime's threads always get real mappings. */
#include "shim.h"
#include "../runtime/runtime_api.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>

#define PAGE_MASK (FL_PAGE_SIZE - 1)

static bool managed(const void *caller)
{
	return atomic_load_explicit(&fl_rt_state, memory_order_acquire) == FL_RT_READY && !fl_internal_thread &&
	       !fl_in_runtime_call && !fl_shim_return_in_jemalloc(caller);
}

static size_t round_up(size_t len) { return (len + PAGE_MASK) & ~PAGE_MASK; }

/* The part of [addr, addr+len) inside the region, if any. */
static bool region_part(void *addr, size_t len, char **start, size_t *plen)
{
	char *a = addr, *end = a + len;
	char *rs = fl_region_span.start, *re = fl_region_span.start + fl_region_span.bytes;
	char *s = a > rs ? a : rs, *e = end < re ? end : re;
	if (s >= e)
		return false;
	*start = s, *plen = (size_t)(e - s);
	return true;
}

static bool eligible(void *addr, int prot, int flags)
{
	int bad = MAP_FIXED | MAP_FIXED_NOREPLACE | MAP_GROWSDOWN | MAP_STACK | MAP_HUGETLB | MAP_32BIT;
	return addr == NULL && (flags & MAP_ANONYMOUS) && (flags & MAP_TYPE) == MAP_PRIVATE && !(flags & bad) &&
	       !(prot & PROT_EXEC);
}

static void apply_prot(void *p, size_t len, int prot)
{
	if (prot != (PROT_READ | PROT_WRITE))
		fl_sys_mprotect(p, len, prot);
	fl_region_set_noaccess(p, len, !(prot & PROT_READ));
}

static void *map_fixed_over_region(void *addr, size_t len, int prot, int flags)
{
	if (!(flags & MAP_ANONYMOUS) || (flags & MAP_TYPE) != MAP_PRIVATE || (prot & PROT_EXEC)) {
		fl_log("MAP_FIXED mapping of a file, shared or executable memory over heap memory is not supported");
		errno = ENOTSUP;
		return MAP_FAILED;
	}
	/* MAP_FIXED_NOREPLACE: only where every address is free (the program unmapped them);
	 * MAP_FIXED: whatever was there is replaced, and its free addresses are taken too, or a later
	 * mapping would be given them again */
	if (flags & MAP_FIXED_NOREPLACE) {
		if (!fl_region_alloc_at(addr, len)) {
			errno = EEXIST;
			return MAP_FAILED;
		}
	} else {
		fl_region_claim(addr, len);
	}
	fl_region_discard(addr, len);
	fl_sys_mprotect(addr, len, prot);
	fl_region_set_noaccess(addr, len, !(prot & PROT_READ));
	return addr;
}

FL_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (managed(__builtin_return_address(0)) && len) {
		char *rs;
		size_t rl;
		if (eligible(addr, prot, flags)) {
			void *p = fl_region_alloc(round_up(len), FL_PAGE_SIZE);
			if (!p) {
				errno = ENOMEM;
				return MAP_FAILED;
			}
			apply_prot(p, round_up(len), prot);
			fl_alloc_event(FL_ALLOC_MMAP, p, len, __builtin_return_address(0));
			return p;
		}
		if ((flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) && region_part(addr, round_up(len), &rs, &rl)) {
			if (rs != (char *)addr || rl != round_up(len) || ((uintptr_t)addr & PAGE_MASK)) {
				fl_log("MAP_FIXED mapping straddling the heap region is not supported");
				errno = ENOTSUP;
				return MAP_FAILED;
			}
			return map_fixed_over_region(addr, rl, prot, flags);
		}
	}
	return fl_sys_mmap(addr, len, prot, flags, fd, off);
}

FL_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
	__attribute__((alias("mmap")));

FL_EXPORT int munmap(void *addr, size_t len)
{
	char *rs;
	size_t rl;
	if (atomic_load(&fl_rt_state) == FL_RT_READY && region_part(addr, round_up(len), &rs, &rl)) {
		char *a = addr, *end = a + round_up(len);
		if ((uintptr_t)addr & PAGE_MASK) {
			errno = EINVAL;
			return -1;
		}
		fl_alloc_event(FL_ALLOC_MUNMAP, rs, rl, NULL);
		fl_region_unmap(rs, rl);
		if (a < rs && fl_sys_munmap(a, (size_t)(rs - a)) < 0)
			return -1;
		if (rs + rl < end && fl_sys_munmap(rs + rl, (size_t)(end - (rs + rl))) < 0)
			return -1;
		return 0;
	}
	return fl_sys_munmap(addr, len);
}

/* Discards the allocated pages of [start, start + len), page by page (a range with unmapped
 * addresses in it: those are left alone). */
static void discard_allocated(char *start, size_t len)
{
	for (size_t off = 0; off < len; off += FL_PAGE_SIZE)
		if (!fl_region_any_free(start + off, FL_PAGE_SIZE))
			fl_region_discard(start + off, FL_PAGE_SIZE);
}

/* mremap(MREMAP_FIXED) of region memory to addresses in the region: whatever was at the
 * target is replaced, the content moves (by copy), the old range is unmapped. */
static void *remap_fixed(char *old, size_t oldsz, size_t newsz, char *target)
{
	char *rs;
	size_t rl;
	if (((uintptr_t)target & PAGE_MASK) || !region_part(target, newsz, &rs, &rl) || rs != target || rl != newsz) {
		fl_log("mremap(MREMAP_FIXED) of heap memory to addresses outside the heap region is not supported");
		errno = EINVAL;
		return MAP_FAILED;
	}
	if (target < old + oldsz && old < target + newsz) {
		errno = EINVAL; /* the kernel refuses overlapping ranges too */
		return MAP_FAILED;
	}
	fl_region_alloc_at(target, newsz); /* claim the target if it was free */
	fl_region_discard(target, newsz);
	fl_sys_mprotect(target, newsz, PROT_READ | PROT_WRITE);
	fl_region_set_noaccess(target, newsz, false);
	memcpy(target, old, oldsz < newsz ? oldsz : newsz);
	fl_region_unmap(old, oldsz);
	return target;
}

static void *remap_in_region(char *old, size_t oldsz, size_t newsz, int flags, void *target)
{
	oldsz = round_up(oldsz), newsz = round_up(newsz);
	if (flags & MREMAP_DONTUNMAP) {
		fl_log("mremap with MREMAP_DONTUNMAP of heap memory is not supported");
		errno = EINVAL;
		return MAP_FAILED;
	}
	if (flags & MREMAP_FIXED) {
		if (!(flags & MREMAP_MAYMOVE)) {
			errno = EINVAL;
			return MAP_FAILED;
		}
		return remap_fixed(old, oldsz, newsz, target);
	}
	if (newsz <= oldsz) {
		if (newsz < oldsz)
			fl_region_unmap(old + newsz, oldsz - newsz);
		return old;
	}
	if (fl_region_alloc_at(old + oldsz, newsz - oldsz))
		return old;
	if (!(flags & MREMAP_MAYMOVE)) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	char *moved = fl_region_alloc(newsz, FL_PAGE_SIZE);
	if (!moved) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	memcpy(moved, old, oldsz);
	fl_region_unmap(old, oldsz);
	return moved;
}

FL_EXPORT void *mremap(void *old, size_t oldsz, size_t newsz, int flags, ...)
{
	void *newaddr = NULL;
	if (flags & MREMAP_FIXED) {
		va_list ap;
		va_start(ap, flags);
		newaddr = va_arg(ap, void *);
		va_end(ap);
	}
	if (atomic_load(&fl_rt_state) == FL_RT_READY && fl_in_region(old)) {
		/* the kernel's own checks, in its order: region memory is private, so an old size
		 * of 0 (which duplicates a shared mapping) is refused too */
		if ((flags & ~(MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP)) || ((uintptr_t)old & PAGE_MASK) ||
		    ((flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)) && !(flags & MREMAP_MAYMOVE)) || round_up(newsz) == 0 ||
		    oldsz == 0) {
			errno = EINVAL;
			return MAP_FAILED;
		}
		if (round_up(oldsz) < oldsz || fl_region_any_free(old, round_up(oldsz))) {
			errno = EFAULT; /* the old range is not all mapped (or runs past the region) */
			return MAP_FAILED;
		}
		void *moved = remap_in_region(old, oldsz, newsz, flags, newaddr);
		if (moved != MAP_FAILED) { /* logged as the old mapping ending and a new one starting */
			fl_alloc_event(FL_ALLOC_MUNMAP, old, round_up(oldsz), NULL);
			fl_alloc_event(FL_ALLOC_MMAP, moved, newsz, __builtin_return_address(0));
		}
		return moved;
	}
	return fl_sys_mremap(old, oldsz, newsz, flags, newaddr);
}

/* The advice values this kernel knows (others: EINVAL, as the kernel says). */
static bool known_advice(int advice)
{
	switch (advice) {
	case MADV_NORMAL: case MADV_RANDOM: case MADV_SEQUENTIAL: case MADV_WILLNEED: case MADV_DONTNEED:
	case MADV_FREE: case MADV_REMOVE: case MADV_DONTFORK: case MADV_DOFORK: case MADV_MERGEABLE:
	case MADV_UNMERGEABLE: case MADV_HUGEPAGE: case MADV_NOHUGEPAGE: case MADV_DONTDUMP: case MADV_DODUMP:
	case MADV_WIPEONFORK: case MADV_KEEPONFORK: case MADV_COLD: case MADV_PAGEOUT: case MADV_HWPOISON:
	case 22: /* MADV_POPULATE_READ */
	case 23: /* MADV_POPULATE_WRITE */
	case 24: /* MADV_DONTNEED_LOCKED */
	case 25: /* MADV_COLLAPSE */
		return true;
	default:
		return false;
	}
}

/* madvise on region memory. DONTNEED and FREE discard (pages read back as zeros, far copies
 * dropped). REMOVE needs shared memory: EINVAL, as the kernel says for private anonymous memory.
 * WIPEONFORK cannot be honoured (a forked child gets the region whole): EINVAL, as for memory the
 * kernel cannot give it to, so that the program knows (a random-number generator then reseeds by
 * its pid). DONTFORK cannot be either, but is accepted and ignored, as before: RDMA libraries ask
 * it of memory they register and give up when it fails. Other advice is ignored (huge pages
 * would break page-granular tracking). A range with addresses that are not mapped
 * (the program unmapped them, and nothing took them since) fails with ENOMEM, as in the kernel,
 * after the advice is given to the rest. */
FL_EXPORT int madvise(void *addr, size_t len, int advice)
{
	char *rs;
	size_t rl;
	if (atomic_load(&fl_rt_state) == FL_RT_READY && region_part(addr, round_up(len), &rs, &rl)) {
		if (((uintptr_t)addr & PAGE_MASK) || !known_advice(advice) || advice == MADV_REMOVE ||
		    advice == MADV_WIPEONFORK) {
			errno = EINVAL;
			return -1;
		}
		bool holes = fl_region_any_free(rs, rl);
		if (advice == MADV_DONTNEED || advice == MADV_FREE) {
			if (holes)
				discard_allocated(rs, rl);
			else
				fl_region_discard(rs, rl);
		}
		char *a = addr, *end = a + round_up(len);
		if (a < rs && fl_sys_madvise(a, (size_t)(rs - a), advice) < 0)
			return -1;
		if (rs + rl < end && fl_sys_madvise(rs + rl, (size_t)(end - (rs + rl)), advice) < 0)
			return -1;
		if (holes) {
			errno = ENOMEM;
			return -1;
		}
		return 0;
	}
	return fl_sys_madvise(addr, len, advice);
}

FL_EXPORT int mprotect(void *addr, size_t len, int prot)
{
	char *rs;
	size_t rl;
	int r = fl_sys_mprotect(addr, len, prot);
	if (r == 0 && atomic_load(&fl_rt_state) == FL_RT_READY && region_part(addr, round_up(len), &rs, &rl))
		fl_region_set_noaccess(rs, rl, !(prot & PROT_READ));
	return r;
}
