/* fault.c: serving one userfaultfd message — the runtime's hot path.
 *
 * Runs only on handler threads. Takes no lock shared with application threads (a page's
 * BUSY bit is owned for a few system calls at most, by code that never waits for a fault),
 * allocates nothing, and never touches region memory: content comes from a static zero page
 * or from the far mirror, and goes into the region with UFFDIO_COPY (but for an access sample's
 * dirty page, moved back from the mirror: move_page_in).
 *
 * Message kinds:
 *   MISSING on a FREE page  -> first touch: zeros (write-protected when it was a read, so the
 *                              page stays clean: its far copy, a hole, also reads as zeros);
 *                              with --fill-ahead, a write also fills the free pages after it
 *                              (fill_ahead.c), which may turn a later refault back into a first
 *                              touch
 *   MISSING on a FAR page   -> refault: copy back from the far store (or, when read ahead
 *                              (FAR | STAGED), from the mirror: flagged FL_FAULT_PREFETCH_HIT)
 *   MISSING on a SOFT page  -> soft fault: the clock policy's trial eviction was wrong
 *   MISSING on a RESIDENT   -> concurrent: another message brought the page in; wake only
 *   WP on a RESIDENT clean  -> the page becomes dirty: remove write protection (not a fault)
 * Before a page comes in while local memory is at its limit, room is made first (evict.c),
 * so resident + soft pages never exceed -L.
 *
 * A batch of messages is served in two passes. The first numbers the faults and takes each
 * wanted stack from the fault's perf sample while its thread still sleeps (fault_sample.c,
 * remote_unwind.c), before any page of the batch is installed: an install wakes every thread
 * waiting on the page, so this is also how a concurrent fault (its page brought in by another
 * thread's fault of the same batch) gets its own stack. The second pass installs the pages;
 * a fault whose stack could not come from a sample asks its thread for it by signal
 * (fault_context.c).
 *
 * Waking: an install wakes every thread waiting on the page in the same system call
 * (UFFDIO_COPY without DONTWAKE), since room was made before it (fl_evict_reserve) and the
 * stack, when wanted, was taken in the first pass. Only a fault that asks for its stack by
 * signal is installed DONTWAKE, signalled, then woken (UFFDIO_WAKE): a thread woken before its
 * signal is queued would run on. A concurrent message needs no wake: the install of its page
 * woke every thread waiting there (or, DONTWAKE, its installer wakes the page's range right
 * after).
 *
 * A page's content in the mirror (a refault with the in-memory store, a soft fault, a prefetch
 * hit) is first read into the handler's bounce page by process_vm_readv, then installed from there
 * (fl_far_mirror_source: a copy straight from a mirror page whose PTE just changed costs an exit
 * to the host in this kind of guest).
 * Refaults copy (UFFDIO_COPY), even with the in-memory far store where the page
 * could be moved back (UFFDIO_MOVE: no copy, no page allocated, no write-protect round trip).
 * Measured (scripts/bench_ab.sh, 3 rounds, 256 MiB, two read passes at -L 64): the read passes
 * cost 87 µs CPU per page by move against 44 µs by copy. A page moved in is the only copy of its
 * content, so its next eviction must move it out again instead of dropping it, and each
 * single-page move pays the TLB shootdown of the mirror's mapping. */
#include "fault.h"
#include "pages.h"
#include "far_prefetch.h"
#include "fill_ahead.h"
#include "fault_sample.h"
#include "remote_unwind.h"
#include "diag.h"
#include "uffd_compat.h"
#include "evict.h"
#include "far_store.h"
#include "fault_context.h"
#include "live_objects.h"
#include "probe.h"
#include "rap_online.h"
#include "region.h"
#include "stacks.h"
#include "stream.h"
#include "timeline.h"
#include "trace_writer.h"

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

static char zero_page[FL_PAGE_SIZE] __attribute__((aligned(FL_PAGE_SIZE)));

/* A fault's service time so far: now minus READ_NS (when its message was read, since start_ns),
 * saturated to the record's 32 bits. */
static inline uint32_t fl_fault_service_ns(const struct fl_runtime *rt, uint64_t read_ns)
{
	uint64_t d = fl_now_ns() - rt->start_ns - read_ns;
	return d > UINT32_MAX ? UINT32_MAX : d == 0 ? 1 : (uint32_t)d;
}

/* Map one page of content at the page's address; wakes the faulting threads unless told not
 * to (then the caller wakes them). Returns 0, or EEXIST when the page is already mapped. */
static int install_page(struct fl_runtime *rt, size_t page, const void *src, bool write_protect, bool dontwake)
{
	struct uffdio_copy copy = {
		.dst = (uint64_t)(uintptr_t)fl_page_addr(rt, page),
		.src = (uint64_t)(uintptr_t)src,
		.len = FL_PAGE_SIZE,
		.mode = (write_protect ? UFFDIO_COPY_MODE_WP : 0) | (dontwake ? UFFDIO_COPY_MODE_DONTWAKE : 0),
	};
	for (;;) {
		if (ioctl(rt->uffd, UFFDIO_COPY, &copy) == 0)
			return 0;
		FL_TESTCASE(errno == EAGAIN);
		if (errno == EAGAIN) { /* the address space is changing (fork, mremap): retry */
			copy.copy = 0;
			sched_yield();
			continue;
		}
		if (errno == EEXIST) {
			fl_page_wake(rt, page);
			return EEXIST;
		}
		if (errno != ESRCH && errno != ENOENT) /* the process is exiting: nothing to serve */
			fl_log_errno("ioctl(UFFDIO_COPY)", errno);
		return errno;
	}
}

/* An access sample's page back from its mirror page by a move, where a copy would leave the
 * mirror page obsolete (a write, or a dirty page of a far store other than the mirror): the
 * prober (probe.c) soon unmaps it on trial again by a move out, which an obsolete mirror page
 * refuses (EEXIST) until dropped. So a move in and a move out (two TLB shootdowns, two system
 * calls) instead of a read of the mirror,
 * a copy, a failed move, a check, a drop and a move (two shootdowns, six calls): bench/graph_bfs
 * 14 32 3 under --mrc took the refused path at 85 % of its arms. Measured on graph_bfs 15 32 3
 * under --mrc --mrc-budget 0: 87 µs of CPU per access sample against 105, and, its re-arms no
 * longer late, 3.1x as many reuses seen: the curve at 1.1 and 2.3 MiB went from 22 and 25 % low
 * to within 1.4 % of record -L. A clean page read back is still copied (with the in-memory store
 * its mirror page stays its valid far copy, and its next arm drops it without a move; with another
 * store the copy is queued to be dropped, as for a soft fault). 0 when moved (the mirror page is
 * gone: the page must count as dirty), or errno with the mirror page still there to copy from. */
static int move_page_in(struct fl_runtime *rt, size_t page, bool dontwake)
{
	struct uffdio_move mv = {
		.dst = (uint64_t)(uintptr_t)fl_page_addr(rt, page), .src = (uint64_t)(uintptr_t)fl_mirror_addr(rt, page),
		.len = FL_PAGE_SIZE, .mode = dontwake ? UFFDIO_MOVE_MODE_DONTWAKE : 0,
	};
	for (;;) {
		if (ioctl(rt->uffd, UFFDIO_MOVE, &mv) == 0)
			return 0;
		int err = errno;
		if (err == EAGAIN) {
			mv.move = 0;
			sched_yield();
			continue;
		}
		/* a move can report an error for a page it moved (evict.c's top comment), and then it
		 * woke no one: the faulting threads would sleep on a mapped page */
		if (!fl_evict_mapped(fl_mirror_addr(rt, page)) && fl_evict_mapped(fl_page_addr(rt, page))) {
			FL_TESTCASE(err == EEXIST);
			if (!dontwake)
				fl_page_wake(rt, page);
			return 0;
		}
		static _Atomic bool reported; /* copied instead: said once (shared with a fork, EBUSY: expected) */
		if (err != EBUSY && err != ENOENT && err != ESRCH && !atomic_exchange(&reported, true))
			fl_log_errno("ioctl(UFFDIO_MOVE) of an access sample's page back from the mirror (copied instead)", err);
		return err;
	}
}

/* A far page's content, from the mirror or through the backend into the handler's bounce
 * page. A backend that cannot return the page is fatal: never zeros instead of data. */
static const void *fetch_far_page(struct fl_handler *h, size_t page)
{
	int err = 0;
	const void *src = fl_far_read(h, page, &err);
	if (!src) {
		fl_log_errno("far store: reading an evicted page", err);
		fl_fatal_stop("a page of the program's memory cannot be read back from the far store");
	}
	return src;
}

/* Take one free page of local memory: from the reserve the evictor keeps (evict.c), or, when
 * none is left, after evicting inline. */
static void reserve_local_page(struct fl_runtime *rt)
{
	fl_evict_reserve(rt, 1);
}

static void serve_write_protect(struct fl_handler *h, size_t page)
{
	struct fl_runtime *rt = h->rt;
	uint64_t waits = 0;
	uint8_t old = fl_page_lock(rt, page, &waits);
	atomic_fetch_add_explicit(&h->stats.wp_faults, 1, memory_order_relaxed);
	if ((old & PG_WHERE) == PG_RESIDENT && !(old & PG_DIRTY)) {
		struct uffdio_writeprotect wp = {
			.range = { .start = (uint64_t)(uintptr_t)fl_page_addr(rt, page), .len = FL_PAGE_SIZE },
			.mode = 0,
		};
		if (ioctl(rt->uffd, UFFDIO_WRITEPROTECT, &wp) < 0 && errno != ESRCH && errno != ENOENT)
			fl_log_errno("ioctl(UFFDIO_WRITEPROTECT, unprotect)", errno);
		fl_page_unlock(rt, page, (uint8_t)(old | PG_DIRTY | PG_REF));
		fl_far_mirror_dirtied(h, page); /* the in-memory store's far copy is obsolete */
		fl_probe_written(rt, page);
	} else {
		/* already writable, or no longer mapped: the thread retries (and may fault again) */
		fl_page_unlock(rt, page, old);
		fl_page_wake(rt, page);
	}
	FL_TESTCASE(waits > 0);
	if (waits)
		atomic_fetch_add_explicit(&h->stats.busy_waits, waits, memory_order_relaxed);
}

/* Serve a MISSING message; returns the fault kind for the record. The install wakes the
 * page's threads, unless `dontwake` (the caller asks for the stack by signal, then wakes).
 * Without dontwake, *service_ns is the service time up to the waking install (READ_NS: when
 * the message was read); with it, the caller measures up to its signal. */
static uint8_t serve_missing(struct fl_handler *h, size_t page, bool write, bool dontwake, bool *prefetch_hit,
			     uint64_t read_ns, uint32_t *service_ns, size_t object_end)
{
	struct fl_runtime *rt = h->rt;
	uint64_t waits = 0;
	uint8_t old = fl_page_lock(rt, page, &waits);
	uint8_t keep = old & PG_NOACCESS;
	uint8_t kind;
	bool dirty, from_mirror = true, move_in = false;
	const void *src = NULL;

	FL_TESTCASE(waits > 0);
	if (waits)
		atomic_fetch_add_explicit(&h->stats.busy_waits, waits, memory_order_relaxed);
	switch (old & PG_WHERE) {
	case PG_RESIDENT: /* its threads were woken by the install (see the top comment) */
		fl_page_unlock(rt, page, old);
		*service_ns = fl_fault_service_ns(rt, read_ns);
		return FL_FAULT_CONCURRENT;
	case PG_FREE:
		reserve_local_page(rt);
		if (write && rt->fill_ahead)
			fl_fill_ahead(h, page, object_end); /* before this page's install wakes the thread, which goes on there */
		kind = FL_FAULT_FIRST_TOUCH;
		src = zero_page;
		from_mirror = false;
		dirty = write;
		break;
	case PG_SOFT: /* unmapped on trial by the clock policy, or by the access prober (probe.c) */
		kind = fl_probe_claim(rt, page) ? FL_FAULT_ACCESS_SAMPLE : FL_FAULT_SOFT; /* already local */
		if (kind == FL_FAULT_SOFT)
			fl_evict_note_soft(rt, page); /* the adaptive clock's evidence (evict.c) */
		atomic_fetch_sub_explicit(&rt->soft_pages, 1, memory_order_relaxed);
		/* an access sample's read: its mirror page holds its content exactly (nothing wrote it
		 * since it was unmapped), and where the mirror is the far store itself that is a valid far
		 * copy, so the page may come back clean (probe.c, fl_probe_back_clean). A clock trial's
		 * soft fault keeps its dirty bit: a page read there is often written next, and the write
		 * would cost a write-protect round trip to save a drop over a move. */
		dirty = write || (old & PG_DIRTY);
		if (dirty && !write && kind == FL_FAULT_ACCESS_SAMPLE && rt->far->mirror_is_far && rt->write_protect)
			dirty = !fl_probe_back_clean(rt, page);
		/* the prober registered the mirror as a move destination (under evict_lock) before its
		 * first arm; movable implies write protection (evict.c, mirror_movable) */
		move_in = kind == FL_FAULT_ACCESS_SAMPLE && dirty &&
			  __atomic_load_n(&rt->move_uffd, __ATOMIC_RELAXED) == rt->uffd;
		if (!move_in)
			src = fl_far_mirror_source(h, page);
		break;
	default: /* PG_FAR */
		kind = FL_FAULT_REFAULT;
		dirty = write;
		if (old & PG_STAGED) { /* read ahead into the mirror: already counted as local */
			*prefetch_hit = true;
			fl_prefetch_hit(rt, page);
			src = fl_far_mirror_source(h, page);
			break;
		}
		reserve_local_page(rt);
		src = fetch_far_page(h, page);
		from_mirror = rt->far->mirror_is_far;
		break;
	}
	if (rt->filled) /* a page filled ahead and evicted unused: this is its first touch */
		kind = fl_fill_ahead_kind(h, page, kind, src);
	rt->epoch[page]++;
	if (!dontwake)
		*service_ns = fl_fault_service_ns(rt, read_ns); /* the install below wakes the thread */
	int err = -1;
	if (move_in && (err = move_page_in(rt, page, dontwake)) == 0)
		dirty = true, from_mirror = false; /* the only copy is the region's now */
	else if (move_in)
		src = fl_far_mirror_source(h, page);
	if (err != 0)
		err = install_page(rt, page, src, !dirty, dontwake);
	FL_TESTCASE(err == EEXIST);
	if (err == EEXIST)
		dirty = true; /* mapped behind our back: assume it was written */
	FL_ASSERT(err == 0 || err == EEXIST || err == ESRCH || err == ENOENT); /* the page is mapped (or the process is gone) */
	uint8_t now = (uint8_t)(PG_RESIDENT | PG_REF | (dirty ? PG_DIRTY : 0) | keep);
	fl_evict_note_arrival(rt, page, kind); /* before the unlock: a sweep sees the page with its stamp */
	fl_page_unlock(rt, page, now);
	if (from_mirror)
		fl_far_mirror_stale(h, page, now); /* dropped in batches, when nothing worth keeping */
	if (kind == FL_FAULT_REFAULT)
		fl_prefetch_after_refault(rt, page);
	fl_evict_note_installed(rt, page);
	return kind;
}

/* What the first pass over a batch learned about one fault message. */
struct fault_plan {
	bool want_stack;
	bool stack_taken;                    /* from the fault's sample, while its thread slept */
	uint64_t seq;
	uint64_t time_ns;
	uint64_t thread_time_ns;             /* the thread's task-clock, from its sample; 0 = unknown */
	uint32_t wait_ns;                    /* from the fault (its sample's time) to time_ns; 0 = unknown */
	struct fl_fault_context context;     /* written with the fault record, never before it */
};

/* The fault's virtual time (the thread's task-clock, fault_sample.c) and its wait (from the
 * sample's time, on the runtime's clock, to the handler reading the message), from its sample. */
static void note_sample_times(const struct fl_runtime *rt, const struct fl_fault_sample *sample, struct fault_plan *plan)
{
	plan->thread_time_ns = sample->task_clock_ns;
	uint64_t read_ns = plan->time_ns + rt->start_ns;
	if (sample->time_ns && sample->time_ns <= read_ns)
		plan->wait_ns = read_ns - sample->time_ns > UINT32_MAX ? UINT32_MAX : (uint32_t)(read_ns - sample->time_ns);
}

/* Takes the stack and counters of a fault from its perf sample (fault_sample.c), while the
 * faulting thread still sleeps in the fault. The page must not be installed before the stack
 * is taken or while it is: an install wakes every thread waiting on the page, and a thread
 * that ran on has another stack. The page's epoch (incremented at every install) tells. */
static bool stack_from_sample(struct fl_handler *h, const struct uffd_msg *msg, struct fault_plan *plan)
{
	struct fl_runtime *rt = h->rt;
	uint64_t addr = msg->arg.pagefault.address, page_addr = addr & ~(FL_PAGE_SIZE - 1);
	size_t page = fl_page_index(rt, addr);
	uint8_t state = atomic_load_explicit(&rt->state[page], memory_order_acquire);
	uint32_t epoch = __atomic_load_n(&rt->epoch[page], __ATOMIC_ACQUIRE);
	struct fl_fault_sample sample;
	uint64_t frames[FL_MAX_STACK_DEPTH];
	uint16_t flags;

	if ((state & PG_BUSY) || (state & PG_WHERE) == PG_RESIDENT)
		return false;
	if (!fl_sample_take(msg->arg.pagefault.feat.ptid, page_addr, &sample))
		return false;
	unsigned n = fl_unwind_sample(&sample, frames, rt->stack_depth, &flags);
	fl_sample_release(&sample);
	state = atomic_load_explicit(&rt->state[page], memory_order_acquire);
	if (n == 0 || __atomic_load_n(&rt->epoch[page], __ATOMIC_ACQUIRE) != epoch || (state & PG_WHERE) == PG_RESIDENT)
		return false;
	struct fl_fault_context *ctx = &plan->context;
	ctx->seq = plan->seq;
	ctx->stack_id = fl_stack_intern(&h->stacks, frames, n, flags, false);
	ctx->tid = sample.tid;
	ctx->npmu = sample.npmu;
	memcpy(ctx->pmu, sample.pmu, sizeof(ctx->pmu));
	note_sample_times(rt, &sample, plan);
	return true;
}

/* A fault that goes without its stack (an --mrc access sample, probe.c): its sample is read all
 * the same, for its virtual time, and so that the thread's ring does not fill with samples nobody
 * reads (a full ring loses the samples of the faults that want their stacks). No unwinding. */
static void drain_sample(const struct fl_runtime *rt, const struct uffd_msg *msg, struct fault_plan *plan)
{
	struct fl_fault_sample sample;
	if (!fl_sample_take(msg->arg.pagefault.feat.ptid, msg->arg.pagefault.address & ~(FL_PAGE_SIZE - 1), &sample))
		return;
	note_sample_times(rt, &sample, plan);
	fl_sample_release(&sample);
}

/* First pass: numbers the faults in the order they were read and takes the stacks that can be
 * had from samples, before any page of the batch is installed (which would wake threads). */
static void plan_fault(struct fl_handler *h, const struct uffd_msg *msg, struct fault_plan *plan)
{
	struct fl_runtime *rt = h->rt;
	memset(plan, 0, sizeof(*plan));
	if (msg->event != UFFD_EVENT_PAGEFAULT || (msg->arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WP) ||
	    !fl_in_region((const void *)(uintptr_t)msg->arg.pagefault.address))
		return;
	/* the runtime's own threads' start-up faults (handler.c, serve_until_first_handler) ask no
	 * stack: a stack signal would make such a thread a program thread in its handler */
	bool probe_wants = fl_probe_wants_stack(rt, fl_page_index(rt, msg->arg.pagefault.address));
	plan->want_stack = rt->stack_signal && rt->sample != 0 && !h->serving_startup && probe_wants &&
			   (rt->sample == 1 || rt->sample_counter[h->index]++ % rt->sample == 0);
	plan->time_ns = fl_now_ns() - rt->start_ns;
	plan->seq = atomic_fetch_add_explicit(&rt->next_seq, 1, memory_order_relaxed);
	if (plan->want_stack)
		plan->stack_taken = stack_from_sample(h, msg, plan);
	else if (!probe_wants)
		drain_sample(rt, msg, plan);
}

static void serve_one(struct fl_handler *h, const struct uffd_msg *msg, const struct fault_plan *plan)
{
	struct fl_runtime *rt = h->rt;
	uint64_t addr = msg->arg.pagefault.address;
	uint64_t flags = msg->arg.pagefault.flags;
	struct fl_fault_record rec;
	size_t page;

	if (msg->event != UFFD_EVENT_PAGEFAULT) {
		fl_log_u64("unexpected userfaultfd event ", msg->event, " ignored");
		return;
	}
	if (!fl_in_region((const void *)(uintptr_t)addr)) {
		fl_log_u64("fault outside the region at ", addr, "");
		return;
	}
	page = fl_page_index(rt, addr);
	if (flags & UFFD_PAGEFAULT_FLAG_WP) {
		serve_write_protect(h, page);
		return;
	}
	rec.time_ns = plan->time_ns;
	rec.addr = addr;
	rec.tid = msg->arg.pagefault.feat.ptid;
	rec.stack_id = plan->stack_taken ? plan->context.stack_id : 0;
	rec.flags = (flags & UFFD_PAGEFAULT_FLAG_WRITE) ? FL_FAULT_WRITE : 0;
	rec.handler = (uint8_t)h->index;
	rec.reserved = 0;
	rec.reserved2 = 0;
	rec.seq = plan->seq;
	rec.thread_time_ns = plan->thread_time_ns;
	rec.wait_ns = plan->wait_ns;
	fl_objects_resolve(rt, addr, &rec); /* the live object hit and its site (live_objects.c) */
	bool prefetch_hit = false;
	/* without a stack to ask for by signal, the install wakes the thread; with one, the page
	 * is installed asleep, the signal queued, then the thread woken */
	bool ask_signal = plan->want_stack && !plan->stack_taken;
	/* --fill-ahead stays inside the object the fault hit (fill_ahead.c) */
	size_t object_end = rt->fill_ahead && rec.obj_size ? fl_page_index(rt, rec.obj_addr + rec.obj_size - 1) + 1 : 0;
	rec.kind = serve_missing(h, page, flags & UFFD_PAGEFAULT_FLAG_WRITE, ask_signal, &prefetch_hit, plan->time_ns,
				 &rec.service_ns, object_end);
	FL_ASSERT(rec.kind >= FL_FAULT_FIRST_TOUCH && rec.kind <= FL_FAULT_KIND_MAX);
	if (prefetch_hit)
		rec.flags |= FL_FAULT_PREFETCH_HIT;
	if (ask_signal) {
		/* served: the stack signal and the wake below let the thread run on */
		rec.service_ns = fl_fault_service_ns(rt, plan->time_ns);
		/* no sample: the thread takes its own stack in the stack signal's handler
		 * (fault_context.c). A concurrent message's thread was already woken by the fault
		 * that brought the page in: it has run on, so a stack taken now would be wrong */
		if (rec.kind == FL_FAULT_CONCURRENT || !fl_fault_context_request(rt, rec.tid, (uint32_t)rec.seq))
			rec.flags |= FL_FAULT_NO_STACK;
		if (rec.kind != FL_FAULT_CONCURRENT)
			fl_page_wake(rt, page); /* never leave the thread asleep, even if the signal is blocked */
	}
	fl_probe_note(h, page, rec.tid, rec.kind); /* the access prober re-arms its pages (probe.c) */
	if (rec.kind != FL_FAULT_ACCESS_SAMPLE) /* counted by probe.c, apart from the faults */
		fl_rap_online_add(h, addr); /* online hot ranges (rap_online.c) */

	if (rec.kind != FL_FAULT_ACCESS_SAMPLE)
		atomic_fetch_add_explicit(&h->stats.faults_total, 1, memory_order_relaxed);
	switch (rec.kind) {
	case FL_FAULT_ACCESS_SAMPLE: atomic_fetch_add_explicit(&h->stats.access_samples, 1, memory_order_relaxed); break;
	case FL_FAULT_FIRST_TOUCH: atomic_fetch_add_explicit(&h->stats.first_touch, 1, memory_order_relaxed); break;
	case FL_FAULT_REFAULT: atomic_fetch_add_explicit(&h->stats.refault, 1, memory_order_relaxed); break;
	case FL_FAULT_SOFT: atomic_fetch_add_explicit(&h->stats.soft, 1, memory_order_relaxed); break;
	default: atomic_fetch_add_explicit(&h->stats.concurrent, 1, memory_order_relaxed); break;
	}
	fl_timeline_fault(h); /* event-based timeline samples (timeline.c) */
	fl_trace_append(h, &rec);
	if (plan->stack_taken) {
		/* with its fault record, not when the stack was taken: a process that stops in the
		 * middle of a batch (a far store that fails) leaves no context without its fault */
		fl_stream_append(&h->contexts, &plan->context, sizeof(plan->context), NULL, 0);
		atomic_fetch_add_explicit(&rt->contexts_written, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&h->stats.sampled_stacks, 1, memory_order_relaxed);
	}
}

void fl_fault_serve_batch(struct fl_handler *h, const void *msgs, int n)
{
	const struct uffd_msg *m = msgs;
	struct fault_plan plans[FL_MSG_BATCH];
	for (int i = 0; i < n; i++)
		plan_fault(h, &m[i], &plans[i]);
	for (int i = 0; i < n; i++)
		serve_one(h, &m[i], &plans[i]);
}
