/* live_objects.c: the program's live heap objects and the allocation sites they came from, kept
 * by the runtime outside the region, so that every fault record names the object it hit and that
 * object's site (fl_objects_resolve) without a log line per malloc.
 *
 * Writers are the allocating and freeing threads, inside the shim's malloc family (alloc_log.c);
 * the reader is the handler thread serving a fault. No lock is shared between them, nothing here
 * allocates, and region memory is never touched: everything lives in raw MAP_NORESERVE mappings.
 *
 * The map of live objects has two parts:
 *  - shadow: one 64-bit word per 16-byte granule of the region, non-zero only at the granule
 *    where a small object (< 16 KiB) starts:
 *        bits 0-13 size | 14-29 site index | 30 logged | 31 faulted | 32-63 alloc_id
 *    Requests below 16 bytes are served as 16 bytes by the shim (jemalloc's 8-byte class would
 *    put two objects in one granule). A fault at address A finds its object by scanning back
 *    from A's granule to the nearest object start (at most 1024 words: objects are < 16 KiB and
 *    never overlap), whose size says whether it covers A. Allocation and free are one store each.
 *    Cost: the shadow's pages take half the small-object heap they describe, in runtime memory.
 *  - large objects (>= 16 KiB, and every anonymous mmap): a slot each (address, size, id, site;
 *    jemalloc puts large objects at a random cache-line offset into their first page),
 *    and one u32 per region page naming the slot of the object on it, written for every page of
 *    the object (4 bytes per 4 KiB page: a 16 MiB block costs a 16 KiB memset at malloc and free).
 *    A partial munmap clears its pages; the slot is freed when its last page goes. Slots are
 *    taken and freed under a spin lock that only application threads take.
 *
 * Sites: a site is where the program called the allocator, keyed by the call's return address
 * (the cheap key: __builtin_return_address in the shim). When that is inside libstdc++ (operator
 * new) or libc (qsort's buffer, strdup, fopen, getline), the key is the return address of the
 * program's call into the library, found with a short unwind: about 130 ns more per such call
 * (5 M strdup/free pairs: 0.35 s of CPU under record before, 1.0 s after; natively 0.14 s),
 * where the library's own address made one site of every caller, named after the first (qsort
 * called from two functions: the second's 7.6 MiB buffer counted under the first). A per-thread direct-mapped cache (256 keys) sits in front of a lock-free
 * open-addressing table (2^17 keys, the stacks.c pattern: claim by compare-and-swap, publish the
 * site index); only when a key is new is the full stack unwound (DWARF, libunwind, ~1 µs) and
 * interned as the site's stack. Up to 65535 sites; later ones are counted in site 0 (flagged
 * FL_SITE_OVERFLOW). Per-site counters (allocations, frees, bytes, live bytes and their peak,
 * objects that faulted, faults) are relaxed atomics on the site's own cache lines, fed from
 * per-thread deltas (see publish below).
 *
 * Why this structure. Measured on this 2-vCPU VM with tests/planted/alloc_heavy 20000000 (44 M
 * malloc/free calls, 2,080 faults; CPU seconds, user + system, 3 runs each, 2026-11-25):
 * native (glibc) 1.24, on jemalloc alone 1.19, under `record` (default options) 1.54-1.84, of
 * which ~0.2 is start-up and the faults (the same record with N = 16000): about 8-13 ns per
 * malloc/free call above jemalloc's own. The first version kept the site counters as atomics
 * updated at every call: fl_objects_insert + fl_objects_remove were 50 % of the traced program's
 * samples (perf; a locked add costs several times a plain one here), 10 % with per-thread deltas.
 * The shadow store is one plain store per call next to the memory jemalloc just handed out;
 * the fault side scans at most 8 KiB of shadow, once per fault (~tens of µs each anyway). Not
 * measured, rejected on their face: a hash table keyed by object address (a probe per call like
 * the shadow, but "which object holds A" would need a probe per earlier granule), and the log
 * line per call this replaces (a clock read, ~80 ns here, and 40 bytes of output per call). */
#include "live_objects.h"
#include "diag.h"
#include "stacks.h"
#include "thread_slot.h"
#include "thread_ctx.h"

#include <errno.h>
#include <link.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#define GRANULE_SHIFT 4
#define W_SIZE_MASK 0x3fffull
#define W_SITE_SHIFT 14
#define W_SITE_MASK 0xffffull
#define W_LOGGED (1ull << 30)
#define W_FAULTED (1ull << 31)
#define W_ID_SHIFT 32
#define SCAN_GRANULES (FL_SMALL_OBJECT_LIMIT >> GRANULE_SHIFT)

#define KEY_BITS 17
#define KEY_SLOTS (1u << KEY_BITS)
#define KEY_PROBES 128
#define MAX_SITES 65536u
#define MAX_WRAPPERS 4     /* libraries allocating for their callers (is_wrapper_library) */

struct site_key {
	_Atomic uint64_t key;
	_Atomic uint32_t site1;     /* site index + 1, once published */
	uint32_t pad;
};

struct site {
	_Atomic uint64_t allocs, frees, bytes, live_peak, objects_faulted, faults;
	_Atomic int64_t live_bytes;
	uint64_t key;
	_Atomic uint32_t stack_id;
	uint32_t flags;
} __attribute__((aligned(64)));

struct large {
	_Atomic uint64_t addr;
	_Atomic uint64_t size;
	_Atomic uint32_t alloc_id;
	_Atomic uint32_t site;
	_Atomic uint32_t flags;     /* LARGE_LOGGED, LARGE_FAULTED */
	uint32_t pages;             /* pages still naming this slot (under slot_lock) */
	uint32_t next_free;         /* free list, slot index + 1 (under slot_lock) */
	uint32_t pad;
};
#define LARGE_LOGGED 1u
#define LARGE_FAULTED 2u

static struct {
	uint64_t base;              /* region start */
	size_t npages;
	_Atomic uint64_t *shadow;
	_Atomic uint32_t *page_slot;  /* slot index + 1; 0 = none */
	struct large *slots;
	uint32_t slots_high, free_head; /* under slot_lock */
	_Atomic int slot_lock;
	struct site_key *keys;
	struct site *sites;
	_Atomic uint32_t nsites;
	struct { uintptr_t start, end; } wrappers[MAX_WRAPPERS]; /* code of libstdc++ and libc (is_wrapper_library) */
	unsigned nwrappers;
} objs;

/* The sites file's snapshot state (see "the sites file" below). */
static struct {
	_Atomic int lock;
	bool final;                    /* the shutdown snapshot was written: no periodic one after */
	struct fl_site_record *buf;    /* MAX_SITES records, by site index, reserved on first use */
	size_t written;                /* records in the file */
} sites_file;

/* The libraries whose allocations are made for their callers: libstdc++ (operator new) and libc
 * (qsort's buffer, strdup, fopen, getline, ...). A site inside one of them is keyed by where the
 * program called into it, or qsort called from two places would be one site, named after the
 * first (wrapper_caller). */
static bool is_wrapper_library(const char *name)
{
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	return strncmp(base, "libstdc++.so", 12) == 0 || strncmp(base, "libc.so", 7) == 0;
}

static int find_wrappers(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size, (void)data;
	if (!info->dlpi_name || !is_wrapper_library(info->dlpi_name) || objs.nwrappers == MAX_WRAPPERS)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			uintptr_t start = info->dlpi_addr + ph->p_vaddr;
			objs.wrappers[objs.nwrappers].start = start;
			objs.wrappers[objs.nwrappers++].end = start + ph->p_memsz;
			return 0;
		}
	}
	return 0;
}

static bool in_wrapper(uintptr_t pc)
{
	for (unsigned i = 0; i < objs.nwrappers; i++)
		if (pc >= objs.wrappers[i].start && pc < objs.wrappers[i].end)
			return true;
	return false;
}

int fl_objects_setup(struct fl_runtime *rt)
{
	objs.base = (uint64_t)(uintptr_t)rt->region;
	objs.npages = rt->region_pages;
	objs.shadow = fl_sys_reserve(rt->region_pages * (FL_PAGE_SIZE >> GRANULE_SHIFT) * sizeof(uint64_t), "mmap(object shadow)");
	objs.page_slot = fl_sys_reserve(rt->region_pages * sizeof(uint32_t), "mmap(object page table)");
	objs.slots = fl_sys_reserve(rt->region_pages * sizeof(struct large), "mmap(large objects)");
	objs.keys = fl_sys_reserve(KEY_SLOTS * sizeof(struct site_key), "mmap(site keys)");
	objs.sites = fl_sys_reserve(MAX_SITES * sizeof(struct site), "mmap(sites)");
	if (!objs.shadow || !objs.page_slot || !objs.slots || !objs.keys || !objs.sites)
		return -1;
	atomic_store(&objs.nsites, 1); /* site 0: the overflow site */
	objs.sites[0].flags = FL_SITE_OVERFLOW;
	dl_iterate_phdr(find_wrappers, NULL);
	return 0;
}

/* A forked child's trace starts afresh: the parent's objects are not in it (as its allocation
 * log never was), its sites' stacks are in the parent's stacks file. */
void fl_objects_after_fork(struct fl_runtime *rt)
{
	fl_sys_madvise(objs.shadow, rt->region_pages * (FL_PAGE_SIZE >> GRANULE_SHIFT) * sizeof(uint64_t), MADV_DONTNEED);
	fl_sys_madvise(objs.page_slot, rt->region_pages * sizeof(uint32_t), MADV_DONTNEED);
	fl_sys_madvise(objs.slots, rt->region_pages * sizeof(struct large), MADV_DONTNEED);
	fl_sys_madvise(objs.keys, KEY_SLOTS * sizeof(struct site_key), MADV_DONTNEED);
	fl_sys_madvise(objs.sites, MAX_SITES * sizeof(struct site), MADV_DONTNEED);
	objs.slots_high = objs.free_head = 0;
	atomic_store(&objs.slot_lock, 0);
	atomic_store(&objs.nsites, 1);
	objs.sites[0].flags = FL_SITE_OVERFLOW;
	/* the child's sites file is new; the parent's handler may have held the lock at the fork */
	atomic_store(&sites_file.lock, 0);
	sites_file.final = false;
	sites_file.written = 0;
}

/* ---------------------------------------------------------------- sites */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

/* The return address of the program's call into libstdc++ or libc (operator new, qsort, strdup)
 * that allocated, or 0 (not found within 12 frames). */
static uint64_t wrapper_caller(void)
{
	void *raw[12];
	int n = unw_backtrace(raw, 12);
	for (int i = 0; i + 1 < n; i++)
		if (in_wrapper((uintptr_t)raw[i]) && !in_wrapper((uintptr_t)raw[i + 1]))
			return (uint64_t)(uintptr_t)raw[i + 1];
	return 0;
}

static uint32_t new_site(struct fl_thread *t, uint64_t key)
{
	uint32_t site = atomic_fetch_add(&objs.nsites, 1);
	if (site >= MAX_SITES)
		return 0;
	struct site *s = &objs.sites[site];
	s->key = key;
	if (fl_rt.stack_depth) {
		uint64_t frames[FL_MAX_STACK_DEPTH];
		unsigned n = fl_stack_capture_here(frames, fl_rt.stack_depth);
		atomic_store(&s->stack_id, fl_stack_intern(&t->alloc_stacks, frames, n, 0, true));
	}
	return site;
}

/* The table: key -> site index, inserting (and unwinding) when the key is new. */
static uint32_t site_lookup(struct fl_thread *t, uint64_t key)
{
	uint64_t h = mix(key);
	for (unsigned probe = 0; probe < KEY_PROBES; probe++) {
		struct site_key *k = &objs.keys[(h + probe) & (KEY_SLOTS - 1)];
		uint64_t seen = atomic_load_explicit(&k->key, memory_order_acquire);
		if (seen == 0) {
			if (atomic_compare_exchange_strong(&k->key, &seen, key)) {
				uint32_t site = new_site(t, key);
				atomic_store_explicit(&k->site1, site + 1, memory_order_release);
				return site;
			}
		}
		if (seen != key)
			continue;
		for (;;) {
			uint32_t s1 = atomic_load_explicit(&k->site1, memory_order_acquire);
			if (s1)
				return s1 - 1;
			sched_yield(); /* another thread is unwinding this site's stack */
		}
	}
	return 0; /* table crowded: the overflow site */
}

uint32_t fl_site_resolve(struct fl_thread *t, const void *caller)
{
	uint64_t key = (uint64_t)(uintptr_t)caller;
	if (in_wrapper(key)) {
		uint64_t outer = wrapper_caller();
		if (outer)
			key = outer;
	}
	if (key == 0)
		key = 1;
	unsigned c = (unsigned)((key >> 2) ^ (key >> 11)) & (FL_SITE_CACHE - 1);
	if (__builtin_expect(t->site_cache[c].key == key, 1))
		return t->site_cache[c].site;
	uint32_t site = site_lookup(t, key);
	t->site_cache[c].key = key;
	t->site_cache[c].site = site;
	return site;
}

uint32_t fl_site_stack(uint32_t site)
{
	return atomic_load_explicit(&objs.sites[site].stack_id, memory_order_relaxed);
}

/* Site counters are kept per thread as deltas (plain adds: a locked add per counter per call
 * cost ~3x the rest of the bookkeeping in this VM) and published to the site's atomics when the
 * thread's slot for that site is taken by another site, when the thread ends, and at shutdown.
 * The live peak is checked at every allocation against the published live bytes plus this
 * thread's delta: exact when a site's objects are allocated and freed by one thread; with
 * several threads, the others' unpublished deltas are not seen. */
static void publish(struct fl_site_delta *d)
{
	struct site *s = &objs.sites[d->site];
	if (!d->used)
		return;
	if (d->allocs)
		atomic_fetch_add_explicit(&s->allocs, d->allocs, memory_order_relaxed);
	if (d->frees)
		atomic_fetch_add_explicit(&s->frees, d->frees, memory_order_relaxed);
	if (d->bytes)
		atomic_fetch_add_explicit(&s->bytes, d->bytes, memory_order_relaxed);
	if (d->live)
		atomic_fetch_add_explicit(&s->live_bytes, d->live, memory_order_relaxed);
	d->used = 0;
	d->live = 0;
	d->allocs = d->frees = d->bytes = 0;
}

static inline struct fl_site_delta *delta_of(struct fl_thread *t, uint32_t site)
{
	struct fl_site_delta *d = &t->site_delta[site & (FL_SITE_CACHE - 1)];
	if (__builtin_expect(d->site != site || !d->used, 0)) {
		publish(d);
		d->site = site;
		d->used = 1;
	}
	return d;
}

void fl_site_deltas_publish(struct fl_thread *t)
{
	for (unsigned i = 0; i < FL_SITE_CACHE; i++)
		publish(&t->site_delta[i]);
}

static inline void site_alloc(struct fl_thread *t, uint32_t site, uint64_t size)
{
	struct fl_site_delta *d = delta_of(t, site);
	struct site *s = &objs.sites[site];
	d->allocs++;
	d->bytes += size;
	d->live += (int64_t)size;
	int64_t live = atomic_load_explicit(&s->live_bytes, memory_order_relaxed) + d->live;
	uint64_t peak = atomic_load_explicit(&s->live_peak, memory_order_relaxed);
	while (live > 0 && (uint64_t)live > peak &&
	       !atomic_compare_exchange_weak_explicit(&s->live_peak, &peak, (uint64_t)live, memory_order_relaxed,
						      memory_order_relaxed))
		;
}

static inline void site_free(struct fl_thread *t, uint32_t site, uint64_t size)
{
	struct fl_site_delta *d = delta_of(t, site);
	d->frees++;
	d->live -= (int64_t)size;
}

/* ---------------------------------------------------------------- objects */

static void slot_lock(void)
{
	while (atomic_exchange_explicit(&objs.slot_lock, 1, memory_order_acquire))
		sched_yield();
}

static void slot_unlock(void) { atomic_store_explicit(&objs.slot_lock, 0, memory_order_release); }

static void insert_large(uint64_t addr, const struct fl_object *obj)
{
	uint64_t first = (addr - objs.base) >> FL_PAGE_SHIFT;
	uint64_t last = (addr + obj->size - 1 - objs.base) >> FL_PAGE_SHIFT;
	uint32_t idx;

	if (last >= objs.npages)
		last = objs.npages - 1;
	slot_lock();
	if (objs.free_head) {
		idx = objs.free_head - 1;
		objs.free_head = objs.slots[idx].next_free;
	} else if (objs.slots_high < objs.npages) {
		idx = objs.slots_high++;
	} else {
		slot_unlock();
		return; /* cannot happen: an object takes at least a page */
	}
	struct large *l = &objs.slots[idx];
	l->pages = (uint32_t)(last - first + 1);
	slot_unlock();
	atomic_store_explicit(&l->addr, addr, memory_order_relaxed);
	atomic_store_explicit(&l->size, obj->size, memory_order_relaxed);
	atomic_store_explicit(&l->alloc_id, obj->alloc_id, memory_order_relaxed);
	atomic_store_explicit(&l->site, obj->site, memory_order_relaxed);
	atomic_store_explicit(&l->flags, obj->logged ? LARGE_LOGGED : 0, memory_order_relaxed);
	for (uint64_t p = first; p <= last; p++)
		atomic_store_explicit(&objs.page_slot[p], idx + 1, memory_order_release);
}

static void describe_large(const struct large *l, struct fl_object *out)
{
	out->size = atomic_load_explicit(&l->size, memory_order_relaxed);
	out->alloc_id = atomic_load_explicit(&l->alloc_id, memory_order_relaxed);
	out->site = atomic_load_explicit(&l->site, memory_order_relaxed);
	out->logged = atomic_load_explicit(&l->flags, memory_order_relaxed) & LARGE_LOGGED;
}

/* Drops COUNT pages of slot IDX; frees the slot when none is left (true). */
static bool release_pages(uint32_t idx, uint32_t count)
{
	bool gone;
	slot_lock();
	struct large *l = &objs.slots[idx];
	l->pages = l->pages > count ? l->pages - count : 0;
	gone = l->pages == 0;
	if (gone) {
		atomic_store_explicit(&l->addr, 0, memory_order_relaxed);
		l->next_free = objs.free_head;
		objs.free_head = idx + 1;
	}
	slot_unlock();
	return gone;
}

void fl_objects_insert(struct fl_thread *t, uint64_t addr, const struct fl_object *obj, bool is_mmap)
{
	if (!objs.shadow || addr < objs.base || addr - objs.base >= objs.npages * FL_PAGE_SIZE)
		return;
	site_alloc(t, obj->site, obj->size);
	if (is_mmap || obj->size >= FL_SMALL_OBJECT_LIMIT) {
		insert_large(addr, obj);
		return;
	}
	uint64_t w = (obj->size & W_SIZE_MASK) | ((uint64_t)obj->site << W_SITE_SHIFT) | (obj->logged ? W_LOGGED : 0) |
		     ((uint64_t)obj->alloc_id << W_ID_SHIFT);
	atomic_store_explicit(&objs.shadow[(addr - objs.base) >> GRANULE_SHIFT], w ? w : 1, memory_order_relaxed);
}

bool fl_objects_remove(struct fl_thread *t, uint64_t addr, struct fl_object *out)
{
	if (!objs.shadow || addr < objs.base || addr - objs.base >= objs.npages * FL_PAGE_SIZE)
		return false;
	uint64_t off = addr - objs.base;
	_Atomic uint64_t *sw = &objs.shadow[off >> GRANULE_SHIFT];
	uint64_t w = atomic_load_explicit(sw, memory_order_relaxed);
	if (w) {
		atomic_store_explicit(sw, 0, memory_order_relaxed);
		out->size = w & W_SIZE_MASK;
		out->site = (uint32_t)((w >> W_SITE_SHIFT) & W_SITE_MASK);
		out->logged = w & W_LOGGED;
		out->alloc_id = (uint32_t)(w >> W_ID_SHIFT);
		site_free(t, out->site, out->size);
		return true;
	}
	uint32_t s1 = atomic_load_explicit(&objs.page_slot[off >> FL_PAGE_SHIFT], memory_order_acquire);
	if (!s1)
		return false;
	struct large *l = &objs.slots[s1 - 1];
	if (atomic_load_explicit(&l->addr, memory_order_relaxed) != addr)
		return false;
	describe_large(l, out);
	uint64_t first = off >> FL_PAGE_SHIFT, last = (off + out->size - 1) >> FL_PAGE_SHIFT;
	if (last >= objs.npages)
		last = objs.npages - 1;
	for (uint64_t p = first; p <= last; p++) {
		uint32_t expect = s1;
		atomic_compare_exchange_strong(&objs.page_slot[p], &expect, 0);
	}
	release_pages(s1 - 1, UINT32_MAX);
	site_free(t, out->site, out->size);
	return true;
}

unsigned fl_objects_unmap(struct fl_thread *t, uint64_t addr, uint64_t len, void (*ended)(const struct fl_object *obj, void *arg), void *arg)
{
	unsigned n = 0;
	if (!objs.shadow || addr < objs.base || len == 0)
		return 0;
	uint64_t first = (addr - objs.base) >> FL_PAGE_SHIFT, last = (addr + len - 1 - objs.base) >> FL_PAGE_SHIFT;
	if (last >= objs.npages)
		last = objs.npages - 1;
	for (uint64_t p = first; p <= last;) {
		uint32_t s1 = atomic_exchange_explicit(&objs.page_slot[p], 0, memory_order_acq_rel);
		if (!s1) {
			p++;
			continue;
		}
		uint32_t count = 1; /* the run of pages of the same object */
		for (p++; p <= last; p++) {
			uint32_t expect = s1;
			if (!atomic_compare_exchange_strong(&objs.page_slot[p], &expect, 0))
				break;
			count++;
		}
		struct fl_object obj;
		describe_large(&objs.slots[s1 - 1], &obj);
		if (release_pages(s1 - 1, count)) {
			site_free(t, obj.site, obj.size);
			ended(&obj, arg);
			n++;
		}
	}
	return n;
}

/* ---------------------------------------------------------------- the fault's side */

static void count_fault(uint32_t site, bool first_fault_of_object)
{
	struct site *s = &objs.sites[site < MAX_SITES ? site : 0];
	atomic_fetch_add_explicit(&s->faults, 1, memory_order_relaxed);
	if (first_fault_of_object)
		atomic_fetch_add_explicit(&s->objects_faulted, 1, memory_order_relaxed);
}

static void fill(struct fl_fault_record *rec, uint64_t start, uint64_t size, uint32_t id, uint32_t site)
{
	rec->obj_addr = start;
	rec->obj_size = size;
	rec->obj_alloc_id = id;
	rec->obj_stack_id = atomic_load_explicit(&objs.sites[site < MAX_SITES ? site : 0].stack_id, memory_order_relaxed);
}

/* Handler thread: the live object holding addr and its site, into the fault record. Reads the
 * runtime's tables only (a racing free can at worst name the object that just ended). */
void fl_objects_resolve(struct fl_runtime *rt, uint64_t addr, struct fl_fault_record *rec)
{
	(void)rt;
	rec->obj_addr = rec->obj_size = 0;
	rec->obj_alloc_id = rec->obj_stack_id = 0;
	rec->flags |= FL_FAULT_OBJECT;
	if (!objs.shadow || addr < objs.base || addr - objs.base >= objs.npages * FL_PAGE_SIZE)
		return;
	uint64_t off = addr - objs.base;
	uint32_t s1 = atomic_load_explicit(&objs.page_slot[off >> FL_PAGE_SHIFT], memory_order_acquire);
	if (s1) {
		struct large *l = &objs.slots[s1 - 1];
		uint64_t start = atomic_load_explicit(&l->addr, memory_order_relaxed);
		uint64_t size = atomic_load_explicit(&l->size, memory_order_relaxed);
		if (start && addr >= start && addr - start < size) {
			uint32_t site = atomic_load_explicit(&l->site, memory_order_relaxed);
			fill(rec, start, size, atomic_load_explicit(&l->alloc_id, memory_order_relaxed), site);
			uint32_t old = atomic_fetch_or_explicit(&l->flags, LARGE_FAULTED, memory_order_relaxed);
			count_fault(site, !(old & LARGE_FAULTED));
			return;
		}
	}
	uint64_t g = off >> GRANULE_SHIFT, lo = g >= SCAN_GRANULES ? g - SCAN_GRANULES : 0;
	for (uint64_t i = g + 1; i-- > lo;) {
		uint64_t w = atomic_load_explicit(&objs.shadow[i], memory_order_relaxed);
		if (!w)
			continue;
		uint64_t start = objs.base + (i << GRANULE_SHIFT), size = w & W_SIZE_MASK;
		if (addr - start >= (size ? size : 1))
			return; /* the nearest object ends before addr: addr is in none */
		uint32_t site = (uint32_t)((w >> W_SITE_SHIFT) & W_SITE_MASK);
		fill(rec, start, size, (uint32_t)(w >> W_ID_SHIFT), site);
		bool first = false;
		while (!(w & W_FAULTED)) {
			if (atomic_compare_exchange_weak_explicit(&objs.shadow[i], &w, w | W_FAULTED, memory_order_relaxed,
								  memory_order_relaxed)) {
				first = true;
				break;
			}
			if (!w)
				break; /* freed meanwhile */
		}
		count_fault(site, first);
		return;
	}
}

/* ---------------------------------------------------------------- the sites file */

/* The sites file is a snapshot of every site's counters, rewritten in place: every ~100 ms by
 * handler 0 (fl_sites_write_periodic, on the cadence of the threads' record streams, handler.c)
 * and once more at shutdown (fl_sites_write), so a SIGKILLed process keeps its per-site
 * aggregates up to its last ~100 ms. A snapshot is one pwrite(2) of every record after the
 * header: a kill leaves the previous snapshot or this one. It never shrinks in normal work
 * (sites are only added, counters only grow); when it does, the stale tail is cut after.
 *
 * A periodic snapshot adds, to the published counters, the deltas the running threads have not
 * published yet (thread_slot.c lends them), read without stopping their owners: the counters are
 * read first and the deltas second, so a delta published in between is missed for that one
 * snapshot, never counted twice. The shutdown snapshot comes after every delta was published;
 * a periodic one never runs after it (and never at the same time: sites_file.lock). */

static void add_thread_delta(const struct fl_site_delta *d, void *arg)
{
	struct fl_site_record *buf = arg;
	uint32_t used = __atomic_load_n(&d->used, __ATOMIC_RELAXED);
	uint32_t site = __atomic_load_n(&d->site, __ATOMIC_RELAXED);
	if (!used || site >= atomic_load_explicit(&objs.nsites, memory_order_relaxed) || site >= MAX_SITES)
		return;
	struct fl_site_record *r = &buf[site];
	int64_t live = (int64_t)r->live_bytes + __atomic_load_n(&d->live, __ATOMIC_RELAXED);
	r->allocs += __atomic_load_n(&d->allocs, __ATOMIC_RELAXED);
	r->frees += __atomic_load_n(&d->frees, __ATOMIC_RELAXED);
	r->bytes += __atomic_load_n(&d->bytes, __ATOMIC_RELAXED);
	r->live_bytes = live > 0 ? (uint64_t)live : 0;
}

/* Fills sites_file.buf with the sites that allocated, in site order; returns how many. */
static size_t take_snapshot(bool with_deltas)
{
	struct fl_site_record *buf = sites_file.buf;
	uint32_t n = atomic_load(&objs.nsites);
	if (n > MAX_SITES)
		n = MAX_SITES;
	for (uint32_t i = 0; i < n; i++) {
		struct site *s = &objs.sites[i];
		int64_t live = atomic_load(&s->live_bytes);
		buf[i] = (struct fl_site_record){
			.stack_id = atomic_load(&s->stack_id),
			.flags = s->flags,
			.key = s->key,
			.allocs = atomic_load(&s->allocs),
			.frees = atomic_load(&s->frees),
			.bytes = atomic_load(&s->bytes),
			.live_peak_bytes = atomic_load(&s->live_peak),
			.live_bytes = live > 0 ? (uint64_t)live : 0,
			.objects_faulted = atomic_load(&s->objects_faulted),
			.faults = atomic_load(&s->faults),
		};
	}
	if (with_deltas)
		fl_threads_visit_site_deltas(add_thread_delta, buf);
	size_t kept = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (buf[i].allocs == 0)
			continue;
		if (buf[i].live_peak_bytes < buf[i].live_bytes)
			buf[i].live_peak_bytes = buf[i].live_bytes; /* a peak still in a thread's delta */
		buf[kept++] = buf[i];
	}
	return kept;
}

/* Writes one snapshot; the caller holds sites_file.lock. */
static void write_snapshot(struct fl_runtime *rt, bool with_deltas)
{
	const off_t at = sizeof(struct fl_file_header);
	if (!sites_file.buf) {
		sites_file.buf = fl_sys_reserve(MAX_SITES * sizeof(struct fl_site_record), "mmap(sites snapshot)");
		if (!sites_file.buf)
			return;
	}
	size_t n = take_snapshot(with_deltas), len = n * sizeof(struct fl_site_record), done = 0;
	while (done < len) {
		ssize_t w = fl_sys_pwrite(rt->sites_fd, (char *)sites_file.buf + done, len - done, at + (off_t)done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			fl_side_write_failed(w < 0 ? errno : EIO);
			return;
		}
		done += (size_t)w;
	}
	if (n < sites_file.written && ftruncate(rt->sites_fd, at + (off_t)len) < 0)
		fl_side_write_failed(errno);
	sites_file.written = n;
}

/* At shutdown (and again if called again): every site, after the threads published their deltas. */
void fl_sites_write(struct fl_runtime *rt)
{
	if (rt->sites_fd < 0 || !objs.sites)
		return;
	while (atomic_exchange_explicit(&sites_file.lock, 1, memory_order_acquire))
		sched_yield(); /* a periodic snapshot is being written: a few ms at most */
	write_snapshot(rt, true);
	sites_file.final = true;
	atomic_store_explicit(&sites_file.lock, 0, memory_order_release);
}

/* Every ~100 ms from handler 0: never waits, never after the shutdown snapshot. */
void fl_sites_write_periodic(struct fl_runtime *rt)
{
	if (rt->sites_fd < 0 || !objs.sites)
		return;
	if (atomic_exchange_explicit(&sites_file.lock, 1, memory_order_acquire))
		return;
	if (!sites_file.final)
		write_snapshot(rt, true);
	atomic_store_explicit(&sites_file.lock, 0, memory_order_release);
}
