/* alloc_log.c: allocation events — every malloc-family call and anonymous mmap the shim
 * serves from the region, with its address, size and (one in --alloc-sample) call stack, so
 * a fault can be tied to the object it hit and to where that object was allocated.
 * Runs on the allocating thread, into its own stream; never re-entered (a malloc from a
 * signal handler that interrupted this code is counted as dropped, not logged). */
#include "runtime.h"
#include "thread_ctx.h"

__thread int fl_in_runtime_call;

void fl_alloc_event(uint8_t kind, const void *addr, size_t size)
{
	struct fl_runtime *rt = &fl_rt;
	struct fl_thread *t;
	struct fl_alloc_record rec = { 0 };

	if (fl_in_runtime_call || fl_internal_thread)
		return;
	fl_in_runtime_call = 1;
	t = fl_thread_self();
	if (!t) {
		atomic_fetch_add(&rt->side_bytes_dropped, sizeof(rec));
		fl_in_runtime_call = 0;
		return;
	}
	rec.time_ns = fl_now_ns() - rt->start_ns;
	rec.addr = (uint64_t)(uintptr_t)addr;
	rec.size = size;
	rec.tid = (uint32_t)t->tid;
	rec.kind = kind;
	if (kind == FL_ALLOC_MALLOC || kind == FL_ALLOC_MMAP) {
		rec.alloc_id = atomic_fetch_add_explicit(&rt->next_alloc_id, 1, memory_order_relaxed);
		if (rt->stack_depth && t->alloc_count++ % rt->alloc_sample == 0) {
			uint64_t frames[FL_MAX_STACK_DEPTH];
			unsigned n = fl_stack_capture_here(frames, rt->stack_depth);
			rec.stack_id = fl_stack_intern(&t->alloc_stacks, frames, n, 0, true);
		}
	}
	fl_stream_append(&t->allocs, &rec, sizeof(rec), NULL, 0);
	atomic_fetch_add_explicit(&rt->alloc_events, 1, memory_order_relaxed);
	fl_in_runtime_call = 0;
}
