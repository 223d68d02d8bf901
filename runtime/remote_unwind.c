/* remote_unwind.c: the call stack of a thread that sleeps in a fault, unwound by the handler
 * that serves it, from the registers of its fault sample (fault_sample.c).
 *
 * The thread shares our address space and cannot run until its page is installed, so its
 * stack can be read in place: libunwind's DWARF unwinder (correct for -O2 code without frame
 * pointers) runs in an address space of its "remote" API whose accessors are ours:
 *   - registers come from the sample;
 *   - memory is read directly, never from the region (a handler that touches the region waits
 *     for itself forever: such a read fails and the stack ends there), and only where it is
 *     known to be mapped and readable: the loaded objects' readable segments, and the pages
 *     of the thread's stack validated once (process_vm_readv, which fails instead of
 *     faulting) and remembered per thread;
 *   - unwind tables come from the objects' .eh_frame_hdr, found in a table of loaded objects
 *     that application threads rebuild (dl_iterate_phdr) at start and after every dlopen, so
 *     a handler never takes the dynamic loader's lock (its holder may sleep in a fault).
 * The handler keeps libunwind's caches per thread: after warm-up an unwind makes no system
 * call and takes no lock (~70 ns per frame). A PC in no known object (JIT code, a library
 * loaded behind dlopen's back) ends the stack, flagged truncated. */
#include "context.h"
#include "region.h"
#include "remote_unwind.h"
#include "fault_sample.h"
#include "diag.h"
#include "fds.h"

#include <asm/perf_regs.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <libunwind.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* libunwind's own search through an .eh_frame_hdr table (exported, not in its headers). */
extern int _Ux86_64_dwarf_search_unwind_table(unw_addr_space_t as, unw_word_t ip, unw_dyn_info_t *di,
					       unw_proc_info_t *pi, int need_unwind_info, void *arg);

#define MAX_OBJECTS 1024
#define USER_ADDRESS_END (1ULL << 56)
#define MAX_SEGMENTS 4096

struct segment {
	uint64_t lo, hi;                     /* readable [lo, hi) */
};

struct object {
	uint64_t text_lo, text_hi;           /* executable segments, lowest to highest */
	uint64_t eh_frame_hdr;               /* 0 = none usable */
	uint64_t fde_count;
};

/* One snapshot of the loaded objects. Two buffers: application threads fill the inactive
 * one, then publish it; handlers count themselves in as readers. */
struct object_table {
	_Atomic int readers;
	size_t nobjects, nsegments;
	struct object objects[MAX_OBJECTS];
	struct segment segments[MAX_SEGMENTS];
};

static struct object_table *tables[2];
static _Atomic int active = -1;          /* index of the published table, -1 = none yet */
static pthread_mutex_t refresh_lock = PTHREAD_MUTEX_INITIALIZER;
static unw_addr_space_t address_space;
static int self_maps_fd = -1;    /* /proc/self/maps, open for the run (look_up_stack_mapping) */

/* What one unwind needs in its accessors. */
struct unwind_arg {
	const struct fl_fault_sample *sample;
	const struct object_table *table;
	struct fl_sampler *sampler;          /* the thread's validated stack window */
};

/* ------------------------------------------------------------------ loaded objects */

static int add_object(struct dl_phdr_info *info, size_t size, void *data)
{
	struct object_table *t = data;
	struct object o = { .text_lo = UINT64_MAX };
	(void)size;
	if (t->nobjects == MAX_OBJECTS)
		return 1;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) && t->nsegments < MAX_SEGMENTS)
			t->segments[t->nsegments++] = (struct segment){ lo, hi };
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			o.text_lo = lo < o.text_lo ? lo : o.text_lo;
			o.text_hi = hi > o.text_hi ? hi : o.text_hi;
		}
		if (ph->p_type == PT_GNU_EH_FRAME) {
			const uint8_t *hdr = (const uint8_t *)(uintptr_t)lo;
			/* version 1; eh_frame_ptr pcrel|sdata4; fde_count udata4; table datarel|sdata4 */
			if (hdr[0] == 1 && hdr[1] == 0x1b && hdr[2] == 0x03 && hdr[3] == 0x3b) {
				uint32_t count;
				memcpy(&count, hdr + 8, sizeof(count));
				o.eh_frame_hdr = lo;
				o.fde_count = count;
			}
		}
	}
	if (o.text_lo < o.text_hi && o.eh_frame_hdr)
		t->objects[t->nobjects++] = o;
	return 0;
}

static const struct object_table *table_enter(void)
{
	for (;;) {
		int i = atomic_load_explicit(&active, memory_order_acquire);
		if (i < 0)
			return NULL;
		atomic_fetch_add_explicit(&tables[i]->readers, 1, memory_order_acq_rel);
		if (atomic_load_explicit(&active, memory_order_acquire) == i)
			return tables[i];
		atomic_fetch_sub_explicit(&tables[i]->readers, 1, memory_order_release);
	}
}

static void table_leave(const struct object_table *t)
{
	atomic_fetch_sub_explicit(&((struct object_table *)t)->readers, 1, memory_order_release);
}

/* Sorts the readable segments by address (insertion sort: a few hundred, no allocation), for
 * readable_segment's binary search. */
static void sort_segments(struct object_table *t)
{
	for (size_t i = 1; i < t->nsegments; i++) {
		struct segment s = t->segments[i];
		size_t j = i;
		for (; j > 0 && t->segments[j - 1].lo > s.lo; j--)
			t->segments[j] = t->segments[j - 1];
		t->segments[j] = s;
	}
}

/* Rebuilds the table of loaded objects; application threads only (start, dlopen). */
void fl_unwind_refresh_objects(void)
{
	if (!tables[0])
		return;
	pthread_mutex_lock(&refresh_lock);
	int next = atomic_load(&active) == 0 ? 1 : 0;
	struct object_table *t = tables[next];
	while (atomic_load_explicit(&t->readers, memory_order_acquire))
		sched_yield(); /* a handler still reads the snapshot before last: it is quick */
	t->nobjects = t->nsegments = 0;
	dl_iterate_phdr(add_object, t);
	sort_segments(t);
	atomic_store_explicit(&active, next, memory_order_release);
	pthread_mutex_unlock(&refresh_lock);
}

static void open_self_maps(void)
{
	self_maps_fd = fl_fd_keep((int)syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC));
}

/* In a forked child only the forking thread exists: no handler reads a table any more, and
 * the lock may have been held by a thread that is gone. The inherited /proc/self/maps shows the
 * parent's mappings (proc binds it to the process that opened it). */
void fl_unwind_after_fork(void)
{
	if (self_maps_fd >= 0)
		fl_sys_close(self_maps_fd);
	open_self_maps();
	for (int i = 0; i < 2; i++)
		if (tables[i])
			atomic_store(&tables[i]->readers, 0);
	pthread_mutex_init(&refresh_lock, NULL);
}

/* ------------------------------------------------------------------ accessors */

/* Is [addr, addr + 8) in a loaded object's readable segment? (Segments are sorted by address
 * and do not overlap: the last one starting at or below addr is the only candidate.) */
static bool readable_segment(const struct object_table *t, uint64_t addr)
{
	size_t lo = 0, hi = t->nsegments;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->segments[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && addr + sizeof(unw_word_t) <= t->segments[lo - 1].hi;
}

/* Parses "lo-hi perms ..." at the start of a /proc/self/maps line; false if malformed. */
static bool parse_maps_line(const char *line, uint64_t *lo, uint64_t *hi, bool *rw, const char **name)
{
	const char *p = line;
	uint64_t *v[2] = { lo, hi };
	for (int i = 0; i < 2; i++) {
		*v[i] = 0;
		int digits = 0;
		for (;; p++, digits++) {
			int d = (*p >= '0' && *p <= '9') ? *p - '0' : (*p >= 'a' && *p <= 'f') ? *p - 'a' + 10 : -1;
			if (d < 0)
				break;
			*v[i] = *v[i] * 16 + (uint64_t)d;
		}
		if (digits == 0 || *p != (i == 0 ? '-' : ' '))
			return false;
		p++;
	}
	*rw = p[0] == 'r' && p[1] == 'w';
	for (int fields = 0; *p && fields < 5; fields++) { /* perms offset dev inode, then the name */
		while (*p && *p != ' ')
			p++;
		while (*p == ' ')
			p++;
	}
	*name = p;
	return true;
}

/* The thread's own stack mapping, from /proc/self/maps (once per thread, on its first unwind
 * that leaves the known window): the readable mapping holding its thread pointer, or [stack]
 * for the main thread. Raw system calls and a stack buffer: handlers never allocate. A line
 * that does not fit the buffer is skipped. */
static void look_up_stack_mapping(struct fl_sampler *s)
{
	char buf[4096];
	size_t len = 0;
	off_t at = 0;
	bool skipping = false;
	s->mapping_looked_up = true;
	if (self_maps_fd < 0)
		return;
	for (;;) {
		ssize_t r = fl_sys_pread(self_maps_fd, buf + len, sizeof(buf) - 1 - len, at);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		at += r;
		len += (size_t)r;
		buf[len] = 0;
		char *line = buf, *nl;
		while ((nl = strchr(line, '\n'))) {
			*nl = 0;
			uint64_t lo, hi;
			bool rw;
			const char *name;
			if (!skipping && parse_maps_line(line, &lo, &hi, &rw, &name) && rw &&
			    (s->main_thread ? strcmp(name, "[stack]") == 0 : s->thread_pointer >= lo && s->thread_pointer < hi)) {
				s->mapping_lo = lo, s->mapping_hi = hi;
				return;
			}
			skipping = false;
			line = nl + 1;
		}
		len = strlen(line);
		if (len == sizeof(buf) - 1) { /* a line longer than the buffer: skip the rest of it */
			len = 0;
			skipping = true;
		}
		memmove(buf, line, len);
	}
}

/* Is [addr, addr + 8) inside the stack windows already known to be readable? Range checks only:
 * most reads of an unwind are there, so they are tried before the objects' segments (a linear
 * scan: 2 % of a python3 recording's CPU when it came first). */
static bool stack_known_readable(const struct fl_sampler *s, uint64_t addr)
{
	uint64_t page = addr & ~(FL_PAGE_SIZE - 1), last = (addr + sizeof(unw_word_t) - 1) & ~(FL_PAGE_SIZE - 1);
	return (page >= s->mapping_lo && last + FL_PAGE_SIZE <= s->mapping_hi) ||
	       (page >= s->stack_lo && last + FL_PAGE_SIZE <= s->stack_hi);
}

/* Is [addr, addr + 8) in a page of the thread's stack that is known to be readable? The
 * thread's stack mapping is, without a system call; elsewhere (the main thread's stack grown
 * since, an alternate signal stack, a coroutine's), pages next to the window are validated
 * with process_vm_readv (it fails where a load would fault). */
static bool stack_readable(struct fl_sampler *s, uint64_t addr)
{
	uint64_t page = addr & ~(FL_PAGE_SIZE - 1), last = (addr + sizeof(unw_word_t) - 1) & ~(FL_PAGE_SIZE - 1);
	if (stack_known_readable(s, addr))
		return true;
	if (!s->mapping_looked_up) {
		look_up_stack_mapping(s);
		if (page >= s->mapping_lo && last + FL_PAGE_SIZE <= s->mapping_hi)
			return true;
	}
	for (uint64_t p = page; p <= last; p += FL_PAGE_SIZE) {
		if (p >= s->stack_lo && p < s->stack_hi)
			continue;
		char probe;
		struct iovec local = { &probe, 1 }, remote = { (void *)(uintptr_t)p, 1 };
		if (process_vm_readv(fl_rt.pid, &local, 1, &remote, 1, 0) != 1)
			return false;
		if (s->stack_lo == s->stack_hi) {
			s->stack_lo = p, s->stack_hi = p + FL_PAGE_SIZE;
		} else if (p == s->stack_hi) {
			s->stack_hi += FL_PAGE_SIZE;
		} else if (p + FL_PAGE_SIZE == s->stack_lo) {
			s->stack_lo = p;
		} else {
			continue; /* readable, but not next to the window: not remembered */
		}
	}
	return true;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write, void *argp)
{
	struct unwind_arg *arg = argp;
	(void)as;
	/* no user address is at or above 2^56 (x86-64, 5-level paging): the checks below cannot
	 * overflow, and garbage a broken frame yields (a negative offset, say) ends the stack */
	if (write || addr < FL_PAGE_SIZE || addr >= USER_ADDRESS_END || fl_in_region((const void *)(uintptr_t)addr) ||
	    fl_in_region((const void *)(uintptr_t)(addr + sizeof(unw_word_t) - 1)))
		return -UNW_EINVAL;
	if (!stack_known_readable(arg->sampler, addr) && !readable_segment(arg->table, addr) &&
	    !stack_readable(arg->sampler, addr))
		return -UNW_EINVAL;
	memcpy(val, (const void *)(uintptr_t)addr, sizeof(*val));
	return 0;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val, int write, void *argp)
{
	static const int perf_of_unw[] = {
		[UNW_X86_64_RAX] = PERF_REG_X86_AX, [UNW_X86_64_RDX] = PERF_REG_X86_DX,
		[UNW_X86_64_RCX] = PERF_REG_X86_CX, [UNW_X86_64_RBX] = PERF_REG_X86_BX,
		[UNW_X86_64_RSI] = PERF_REG_X86_SI, [UNW_X86_64_RDI] = PERF_REG_X86_DI,
		[UNW_X86_64_RBP] = PERF_REG_X86_BP, [UNW_X86_64_RSP] = PERF_REG_X86_SP,
		[UNW_X86_64_R8] = PERF_REG_X86_R8,  [UNW_X86_64_R9] = PERF_REG_X86_R9,
		[UNW_X86_64_R10] = PERF_REG_X86_R10, [UNW_X86_64_R11] = PERF_REG_X86_R11,
		[UNW_X86_64_R12] = PERF_REG_X86_R12, [UNW_X86_64_R13] = PERF_REG_X86_R13,
		[UNW_X86_64_R14] = PERF_REG_X86_R14, [UNW_X86_64_R15] = PERF_REG_X86_R15,
		[UNW_X86_64_RIP] = PERF_REG_X86_IP,
	};
	struct unwind_arg *arg = argp;
	(void)as;
	if (write || reg < 0 || reg > UNW_X86_64_RIP)
		return -UNW_EBADREG;
	*val = fl_sample_reg(arg->sample, perf_of_unw[reg]);
	return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write, void *arg)
{
	(void)as, (void)reg, (void)val, (void)write, (void)arg;
	return -UNW_EBADREG;
}

static int resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
	(void)as, (void)c, (void)arg;
	return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t ip, char *buf, size_t len, unw_word_t *off, void *arg)
{
	(void)as, (void)ip, (void)buf, (void)len, (void)off, (void)arg;
	return -UNW_ENOINFO;
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *addr, void *arg)
{
	(void)as, (void)arg;
	*addr = 0;
	return -UNW_ENOINFO;
}

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi, int need_unwind_info, void *argp)
{
	struct unwind_arg *arg = argp;
	for (size_t i = 0; i < arg->table->nobjects; i++) {
		const struct object *o = &arg->table->objects[i];
		if (ip < o->text_lo || ip >= o->text_hi)
			continue;
		unw_dyn_info_t di;
		memset(&di, 0, sizeof(di));
		di.start_ip = o->text_lo;
		di.end_ip = o->text_hi;
		di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
		di.u.rti.segbase = o->eh_frame_hdr;
		di.u.rti.table_data = o->eh_frame_hdr + 12;
		di.u.rti.table_len = o->fde_count * 8 / sizeof(unw_word_t);
		return _Ux86_64_dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, arg);
	}
	return -UNW_ENOINFO;
}

static void (*put_unwind_info_of_libunwind)(unw_addr_space_t, unw_proc_info_t *, void *);

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	if (put_unwind_info_of_libunwind)
		put_unwind_info_of_libunwind(as, pi, arg);
}

int fl_unwind_setup(struct fl_runtime *rt)
{
	unw_accessors_t acc = {
		.find_proc_info = find_proc_info,
		.put_unwind_info = put_unwind_info,
		.get_dyn_info_list_addr = get_dyn_info_list_addr,
		.access_mem = access_mem,
		.access_reg = access_reg,
		.access_fpreg = access_fpreg,
		.resume = resume,
		.get_proc_name = get_proc_name,
	};
	(void)rt;
	open_self_maps();
	for (int i = 0; i < 2; i++) {
		tables[i] = fl_sys_reserve(sizeof(struct object_table), "mmap(unwinder object table)");
		if (!tables[i]) {
			tables[0] = tables[1] = NULL;
			return 0; /* stacks come through the signal path */
		}
	}
	address_space = unw_create_addr_space(&acc, 0);
	if (!address_space) {
		fl_log("libunwind: cannot create an address space; stacks come through the signal path");
		return 0;
	}
	/* libunwind frees what its table search allocated with the local space's accessor */
	put_unwind_info_of_libunwind = unw_get_accessors(unw_local_addr_space)->put_unwind_info;
	unw_set_caching_policy(address_space, UNW_CACHE_PER_THREAD);
	fl_unwind_refresh_objects();
	return 0;
}

/* A fault inside a system call that the shim wraps (shim/syscalls.c) has the wrapper's frames
 * (and libc's below them) innermost: the stack starts at the wrapper's caller instead, as the
 * signal path does. */
static unsigned skip_own_frames(uint64_t *frames, unsigned n)
{
	int last_own = -1;
	for (unsigned i = 0; i < n && i < 8; i++)
		if (frames[i] >= fl_rt.own_text_start && frames[i] < fl_rt.own_text_end)
			last_own = (int)i;
	if (last_own < 0)
		return n;
	unsigned from = (unsigned)last_own + 1;
	memmove(frames, frames + from, (n - from) * sizeof(*frames));
	return n - from;
}

/* The stack of the sample's thread, innermost first (frame 0: the faulting PC, or for a fault
 * inside a system call the instruction after the call); 0 frames when it cannot be had. */
unsigned fl_unwind_sample(const struct fl_fault_sample *s, uint64_t *frames, unsigned max, uint16_t *flags)
{
	struct unwind_arg arg = { .sample = s, .sampler = &s->thread->sampler };
	unw_cursor_t cursor;
	unsigned n = 0;
	int step = 1;

	*flags = s->in_kernel ? 0 : FL_STACK_EXACT_PC;
	if (!address_space || max == 0 || !(arg.table = table_enter()))
		return 0;
	if (unw_init_remote(&cursor, address_space, &arg) == 0) {
		do {
			unw_word_t ip;
			if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0)
				break;
			frames[n++] = ip;
		} while (n < max && (step = unw_step(&cursor)) > 0);
	}
	table_leave(arg.table);
	if (s->in_kernel)
		n = skip_own_frames(frames, n);
	if (n == max && step > 0)
		*flags |= FL_STACK_TRUNCATED;
	else if (step < 0)
		*flags |= FL_STACK_TRUNCATED; /* the unwinder stopped early (no unwind info) */
	return n;
}
