/* malloc.c: the malloc family, served by a jemalloc arena whose extents come from the region.
 *
 * Routing, per thread (tls_mode):
 *   REGION     application thread bound to the region arena (thread.arena), with its tcache:
 *              the fast path, one TLS load and one jemalloc call
 *   PLAIN      an untraced process: plain jemalloc
 *   INTERNAL   a runtime thread: arena 0 without tcache, so region objects never enter its cache
 *   BOOTSTRAP  inside the atfork child handler, where jemalloc's locks are still held by the
 *              fork: a bump allocator over raw mmap (its blocks are never really freed)
 *   UNBOUND    not decided yet; before the shim's constructor started the runtime (malloc runs
 *              before any constructor) calls go to arena 0 without binding
 * jemalloc's exported `malloc` is shadowed by ours; its non-standard API (mallocx & co) serves
 * every call with flags, and jemalloc's own malloc/calloc/realloc/free, found with dlsym on its
 * handle at start-up, serve the common calls through its fast paths (a thread bound with
 * thread.arena allocates from the region arena through them too).
 * Every allocation and free by a thread bound to the region goes to alloc_log.c, with the
 * return address of the program's call (the allocation site's key).
 * Extent hooks: alloc carves addresses from the region (always zeroed and committed), dalloc
 * gives them back, purge_forced discards pages (they read back as zeros, far copies dropped),
 * decommit and purge_lazy opt out, split/merge are allowed. */
#include "shim.h"
#include "../runtime/runtime_api.h"

#include <dlfcn.h>
#include <errno.h>
#include <jemalloc/jemalloc.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { MODE_UNBOUND = 0, MODE_REGION, MODE_PLAIN, MODE_INTERNAL, MODE_BINDING, MODE_BOOTSTRAP };
#define INTERNAL_FLAGS (MALLOCX_ARENA(0) | MALLOCX_TCACHE_NONE)
#define BOOTSTRAP (-1)

static __thread int tls_mode;
static unsigned region_arena;

/* jemalloc's own entry points (fast paths), or NULL before start-up */
static void *(*je_malloc)(size_t);
static void *(*je_calloc)(size_t, size_t);
static void *(*je_realloc)(void *, size_t);
static void (*je_free)(void *);
static uintptr_t jemalloc_text_start, jemalloc_text_end;

/* jemalloc options: give memory back (so -M bounds the peak), purge freed pages after 1 s. */
FL_EXPORT const char *malloc_conf = "retain:false,dirty_decay_ms:1000,muzzy_decay_ms:0";

/* ---- bootstrap heap ---- */
#define BOOT_SIZE (8UL << 20)
static char *boot_base;
static _Atomic size_t boot_used;

static bool boot_owns(const void *p)
{
	return boot_base && (const char *)p >= boot_base && (const char *)p < boot_base + BOOT_SIZE;
}

static void *boot_alloc(size_t size, size_t align)
{
	if (align < 16)
		align = 16;
	if (!boot_base)
		return NULL;
	for (;;) {
		size_t used = atomic_load(&boot_used);
		size_t start = (used + 16 + align - 1) & ~(align - 1);
		if (start + size > BOOT_SIZE)
			return NULL;
		if (atomic_compare_exchange_weak(&boot_used, &used, start + size)) {
			((size_t *)(boot_base + start))[-1] = size;
			return boot_base + start;
		}
	}
}

static size_t boot_size_of(const void *p) { return ((const size_t *)p)[-1]; }

void fl_shim_enter_bootstrap(int *saved)
{
	*saved = tls_mode;
	tls_mode = MODE_BOOTSTRAP;
}

void fl_shim_leave_bootstrap(int saved) { tls_mode = saved; }

/* ---- extent hooks over the region ---- */
static void *hook_alloc(extent_hooks_t *h, void *new_addr, size_t size, size_t alignment, bool *zero,
			bool *commit, unsigned arena_ind)
{
	(void)h, (void)arena_ind;
	void *p = new_addr ? (fl_region_alloc_at(new_addr, size) ? new_addr : NULL) : fl_region_alloc(size, alignment);
	if (p)
		*zero = true, *commit = true;
	return p;
}

static bool hook_dalloc(extent_hooks_t *h, void *addr, size_t size, bool committed, unsigned arena_ind)
{
	(void)h, (void)committed, (void)arena_ind;
	fl_region_free(addr, size);
	return false;
}

static void hook_destroy(extent_hooks_t *h, void *addr, size_t size, bool committed, unsigned arena_ind)
{
	(void)h, (void)committed, (void)arena_ind;
	fl_region_free(addr, size);
}

static bool hook_commit(extent_hooks_t *h, void *addr, size_t size, size_t offset, size_t length, unsigned ind)
{
	(void)h, (void)addr, (void)size, (void)offset, (void)length, (void)ind;
	return false;
}

static bool hook_decommit(extent_hooks_t *h, void *addr, size_t size, size_t offset, size_t length, unsigned ind)
{
	(void)h, (void)addr, (void)size, (void)offset, (void)length, (void)ind;
	return true; /* opt out: the pages stay committed */
}

static bool hook_purge_forced(extent_hooks_t *h, void *addr, size_t size, size_t offset, size_t length,
			      unsigned ind)
{
	(void)h, (void)size, (void)ind;
	fl_region_discard((char *)addr + offset, length);
	return false;
}

static bool hook_split(extent_hooks_t *h, void *addr, size_t size, size_t size_a, size_t size_b, bool committed,
		       unsigned ind)
{
	(void)h, (void)addr, (void)size, (void)size_a, (void)size_b, (void)committed, (void)ind;
	return false;
}

static bool hook_merge(extent_hooks_t *h, void *addr_a, size_t size_a, void *addr_b, size_t size_b, bool committed,
		       unsigned ind)
{
	(void)h, (void)addr_a, (void)size_a, (void)addr_b, (void)size_b, (void)committed, (void)ind;
	return false;
}

static extent_hooks_t region_hooks = {
	hook_alloc, hook_dalloc, hook_destroy, hook_commit, hook_decommit, NULL, hook_purge_forced, hook_split, hook_merge,
};

/* ---- start-up ---- */
static int find_jemalloc_text(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size, (void)data;
	uintptr_t probe = (uintptr_t)&mallocx;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && probe >= start && probe < start + ph->p_memsz) {
			jemalloc_text_start = start, jemalloc_text_end = start + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

bool fl_shim_return_in_jemalloc(const void *ret)
{
	return (uintptr_t)ret >= jemalloc_text_start && (uintptr_t)ret < jemalloc_text_end;
}

static void atfork_child(void)
{
	int saved;
	if (atomic_load(&fl_rt_state) != FL_RT_READY)
		return;
	fl_shim_enter_bootstrap(&saved);
	fl_runtime_fork_child();
	fl_shim_leave_bootstrap(saved);
}

/* Runs in the very first malloc: registers our atfork handler before jemalloc registers its
 * own, so that in a forked child ours (which restarts the runtime) runs first. */
static void early_setup(void)
{
	static _Atomic int done;
	int expected = 0;
	if (!atomic_compare_exchange_strong(&done, &expected, 1))
		return;
	boot_base = fl_sys_mmap(NULL, BOOT_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (boot_base == MAP_FAILED)
		boot_base = NULL;
	pthread_atfork(NULL, NULL, atfork_child);
}

static void find_jemalloc_fast_paths(void)
{
	void *h = dlopen("libjemalloc.so.2", RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		return;
	void *m = dlsym(h, "malloc"), *c = dlsym(h, "calloc"), *r = dlsym(h, "realloc"), *f = dlsym(h, "free");
	if (m && c && r && f && m != (void *)malloc && f != (void *)free) {
		je_calloc = (void *(*)(size_t, size_t))c;
		je_realloc = (void *(*)(void *, size_t))r;
		je_free = (void (*)(void *))f;
		je_malloc = (void *(*)(size_t))m;
	}
	dlclose(h); /* only drops our reference: jemalloc is our dependency */
}

void fl_shim_start(void)
{
	int expected = FL_RT_UNINIT;
	early_setup();
	find_jemalloc_fast_paths();
	if (!atomic_compare_exchange_strong(&fl_rt_state, &expected, FL_RT_INITIALIZING))
		return;
	int r = fl_runtime_init();
	if (r == 0) {
		extent_hooks_t *hooks = &region_hooks;
		size_t len = sizeof(region_arena);
		dl_iterate_phdr(find_jemalloc_text, NULL);
		if (mallctl("arenas.create", &region_arena, &len, &hooks, sizeof(hooks)) != 0) {
			fl_log("jemalloc: arenas.create with region extent hooks failed; the program runs untraced");
			r = -1;
		}
	}
	atomic_store(&fl_rt_state, r == 0 ? FL_RT_READY : FL_RT_DISABLED);
	if (r == 0)
		fl_shim_signals_start();
}

/* ---- routing ---- */
static int slow_flags(void)
{
	switch (tls_mode) {
	case MODE_BOOTSTRAP:
		return BOOTSTRAP;
	case MODE_BINDING:
		return INTERNAL_FLAGS;
	case MODE_PLAIN:
		return 0;
	case MODE_INTERNAL:
		return INTERNAL_FLAGS;
	default:
		break;
	}
	early_setup();
	if (fl_internal_thread) {
		tls_mode = MODE_INTERNAL;
		return INTERNAL_FLAGS;
	}
	switch (atomic_load(&fl_rt_state)) {
	case FL_RT_READY:
		tls_mode = MODE_BINDING;
		if (mallctl("thread.arena", NULL, NULL, &region_arena, sizeof(region_arena)) != 0) {
			tls_mode = MODE_PLAIN;
			return 0;
		}
		mallctl("thread.tcache.flush", NULL, NULL, NULL, 0);
		tls_mode = MODE_REGION;
		return 0;
	case FL_RT_DISABLED:
		tls_mode = MODE_PLAIN;
		return 0;
	default:
		return INTERNAL_FLAGS; /* before start-up: outside the region, decide later */
	}
}

static inline int alloc_flags(void)
{
	if (__builtin_expect(tls_mode == MODE_REGION, 1))
		return 0;
	return slow_flags();
}

static inline int free_flags(void)
{
	return tls_mode == MODE_INTERNAL || tls_mode == MODE_UNBOUND ? MALLOCX_TCACHE_NONE : 0;
}

/* The thread can use jemalloc's fast paths: bound to the region arena, or untraced. */
static inline bool fast_path(void)
{
	return (tls_mode == MODE_REGION || tls_mode == MODE_PLAIN) && je_malloc;
}

/* Requests below this are served as this many bytes: the live-object map (live_objects.c) keeps
 * one word per 16 bytes, so no two objects may start within 16 bytes (jemalloc has an 8-byte
 * class). The allocation is logged with the size asked for. */
#define MIN_SIZE 16
static inline size_t served_size(size_t size) { return size < MIN_SIZE ? MIN_SIZE : size; }

/* CALLER, in every function below: the return address of the program's call (its allocation
 * site's key, live_objects.c). */
static void *alloc_aligned(size_t size, size_t align, int extra, const void *caller)
{
	int flags = alloc_flags();
	size_t asked = size;
	void *p;
	if (size == 0)
		size = 1;
	if (flags == BOOTSTRAP) {
		p = boot_alloc(size, align);
		if (p && (extra & MALLOCX_ZERO))
			memset(p, 0, size);
	} else {
		p = mallocx(served_size(size), flags | extra | (align ? MALLOCX_ALIGN(align) : 0));
	}
	if (!p)
		errno = ENOMEM;
	else if (tls_mode == MODE_REGION)
		fl_alloc_event(FL_ALLOC_MALLOC, p, asked ? asked : 1, caller);
	return p;
}

static bool is_power_of_two(size_t x) { return x && !(x & (x - 1)); }

/* not inlined: an inlined frame would name a function that is no symbol of the library */
static __attribute__((noinline)) void *malloc_from(size_t size, const void *caller)
{
	if (__builtin_expect(fast_path(), 1)) {
		void *p = je_malloc(served_size(size));
		if (p && tls_mode == MODE_REGION)
			fl_alloc_event(FL_ALLOC_MALLOC, p, size, caller);
		return p;
	}
	return alloc_aligned(size, 0, 0, caller);
}

FL_EXPORT void *malloc(size_t size) { return malloc_from(size, __builtin_return_address(0)); }

FL_EXPORT void free(void *p)
{
	if (!p || boot_owns(p))
		return;
	int saved = errno;
	if (tls_mode == MODE_REGION && fl_in_region(p))
		fl_alloc_event(FL_ALLOC_FREE, p, 0, NULL);
	if (fast_path())
		je_free(p);
	else
		dallocx(p, free_flags());
	errno = saved;
}

FL_EXPORT void *calloc(size_t n, size_t size)
{
	size_t total;
	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	if (fast_path()) {
		void *p = total < MIN_SIZE ? je_calloc(1, MIN_SIZE) : je_calloc(n, size);
		if (p && tls_mode == MODE_REGION)
			fl_alloc_event(FL_ALLOC_MALLOC, p, total, __builtin_return_address(0));
		return p;
	}
	return alloc_aligned(total, 0, MALLOCX_ZERO, __builtin_return_address(0));
}

static __attribute__((noinline)) void *realloc_from(void *p, size_t size, const void *caller)
{
	if (!p)
		return malloc_from(size, caller);
	if (size == 0) {
		free(p);
		return NULL;
	}
	if (fast_path() && !boot_owns(p)) {
		void *q = je_realloc(p, served_size(size));
		if (!q)
			errno = ENOMEM; /* as glibc's realloc sets it; the old block is kept */
		else if (tls_mode == MODE_REGION) {
			if (fl_in_region(p))
				fl_alloc_event(FL_ALLOC_FREE, p, 0, NULL);
			fl_alloc_event(FL_ALLOC_MALLOC, q, size, caller);
		}
		return q;
	}
	int flags = alloc_flags();
	if (boot_owns(p) || flags == BOOTSTRAP) {
		size_t old = boot_owns(p) ? boot_size_of(p) : sallocx(p, 0);
		void *q = malloc_from(size, caller);
		if (q) {
			memcpy(q, p, old < size ? old : size);
			free(p);
		}
		return q;
	}
	void *q = rallocx(p, served_size(size), flags);
	if (!q) {
		errno = ENOMEM;
	} else if (tls_mode == MODE_REGION) {
		if (fl_in_region(p))
			fl_alloc_event(FL_ALLOC_FREE, p, 0, NULL);
		fl_alloc_event(FL_ALLOC_MALLOC, q, size, caller);
	}
	return q;
}

FL_EXPORT void *realloc(void *p, size_t size) { return realloc_from(p, size, __builtin_return_address(0)); }

FL_EXPORT void *reallocarray(void *p, size_t n, size_t size)
{
	size_t total;
	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc_from(p, total, __builtin_return_address(0));
}

FL_EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
	if (!is_power_of_two(align) || align % sizeof(void *))
		return EINVAL;
	int saved = errno;
	void *p = alloc_aligned(size, align, 0, __builtin_return_address(0));
	errno = saved;
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

/* memalign and aligned_alloc, as this system's glibc (2.36) serves both: an alignment that is not
 * a power of two is rounded up to one (0 and 1 ask for none); above SIZE_MAX / 2 + 1, EINVAL; an
 * alignment no region could give, ENOMEM. */
static __attribute__((noinline)) void *memalign_from(size_t align, size_t size, const void *caller)
{
	if (align > SIZE_MAX / 2 + 1) {
		errno = EINVAL;
		return NULL;
	}
	if (align > ((size_t)1 << 40)) {
		errno = ENOMEM;
		return NULL;
	}
	while (!is_power_of_two(align))
		align = align ? (align | (align - 1)) + 1 : 1;
	return alloc_aligned(size, align, 0, caller);
}

FL_EXPORT void *aligned_alloc(size_t align, size_t size)
{
	return memalign_from(align, size, __builtin_return_address(0));
}

FL_EXPORT void *memalign(size_t align, size_t size)
{
	return memalign_from(align, size, __builtin_return_address(0));
}

FL_EXPORT void *valloc(size_t size)
{
	return alloc_aligned(size, (size_t)getpagesize(), 0, __builtin_return_address(0));
}

FL_EXPORT void *pvalloc(size_t size)
{
	size_t page = (size_t)getpagesize();
	size_t rounded = size ? (size + page - 1) & ~(page - 1) : page;
	if (rounded < size) {
		errno = ENOMEM;
		return NULL;
	}
	return alloc_aligned(rounded, page, 0, __builtin_return_address(0));
}

FL_EXPORT size_t malloc_usable_size(void *p)
{
	if (!p)
		return 0;
	if (boot_owns(p))
		return boot_size_of(p);
	return sallocx(p, 0);
}
