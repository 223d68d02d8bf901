/* runtime_api.h: what the shim (shim/) may use of the runtime — the one narrow door between
 * them. The shim never includes context.h nor reads the runtime's context struct: it asks
 * through these functions, and the few hot-path facts (the region's bounds, the runtime's state,
 * the per-thread flags) are here as plain variables the runtime sets. */
#ifndef FL_RUNTIME_API_H
#define FL_RUNTIME_API_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "faultline/trace.h" /* FL_ALLOC_* event kinds */
#include "diag.h"
#include "sys.h"
#include "fds.h" /* fl_fd_is_runtime: the descriptors a program must not close */

#define FL_PAGE_SIZE 4096UL
#define FL_PAGE_SHIFT 12

/* ---- state of the runtime ---- */
enum fl_rt_state { FL_RT_UNINIT = 0, FL_RT_INITIALIZING, FL_RT_READY, FL_RT_DISABLED };
extern _Atomic int fl_rt_state;

/* Set on the runtime's own threads: the shim routes their allocations outside the region. */
extern __thread int fl_internal_thread;
/* Set while the runtime works on an application thread (logging an allocation, taking a
 * stack): the shim then serves that thread's mmap calls outside the region, unlogged. */
extern __thread int fl_in_runtime_call;
/* Set while the thread appends a record to a stream (stream.c, holding its lock): an
 * asynchronous fatal signal that arrives then is kept in fl_fatal_pending and raised again
 * when the append ends, so the shutdown it starts never waits for that lock. */
extern __thread int fl_fatal_defer;
extern __thread volatile int fl_fatal_pending;
/* Set by the shim's system call wrappers while the stack signals they deferred are taken. */
extern __thread int fl_stack_deferred;

/* The region's bounds, set once by region.c before the runtime is READY. */
struct fl_region_span {
	char *start;
	size_t bytes;
};
extern struct fl_region_span fl_region_span;

static inline bool fl_in_region(const void *p)
{
	return (uintptr_t)p - (uintptr_t)fl_region_span.start < fl_region_span.bytes;
}

/* runtime.c */
int fl_runtime_init(void);                 /* reads FAULTLINE_*; 0 = ready, 1 = disabled, -1 = failed */
void fl_runtime_shutdown(const char *why); /* flush records, write stats.json */
void fl_runtime_fork_child(void);          /* atfork child: new uffd, handlers, trace directory */
void fl_runtime_stderr_moved(void);        /* the program closed or replaced fd 2: the runtime's copy follows */
bool fl_runtime_in_vfork_child(void);      /* the calling process shares the traced one's memory (vfork) */

/* region.c: virtual memory of the region, in bytes (multiples of the page size) */
void *fl_region_alloc(size_t size, size_t align);
bool fl_region_alloc_at(void *addr, size_t size);  /* all the addresses, if all are free */
void fl_region_claim(void *addr, size_t size);     /* MAP_FIXED: every free page of the range taken */
void fl_region_free(void *addr, size_t size);     /* discard + give the addresses back */
void fl_region_unmap(void *addr, size_t size);    /* the same for munmap: PROT_NONE until reused */
void fl_region_discard(void *addr, size_t size);  /* contents become zero; far copies dropped */
bool fl_region_any_free(void *addr, size_t size); /* some page of the range is not allocated (unmapped), or past the region */
void fl_region_set_noaccess(void *addr, size_t size, bool noaccess);

/* alloc_log.c: CALLER is the return address of the allocation call in the program */
void fl_alloc_event(uint8_t kind, const void *addr, size_t size, const void *caller);

/* maps_log.c: a snapshot of the process's mappings (after a dlopen) */
void fl_maps_snapshot(const char *reason);

/* fault_context.c: the stack signal, which the program's masks must leave deliverable */
int fl_fault_context_signal(void);                   /* 0 = none (no stacks by signal) */
void fl_fault_context_keep_unblocked(void *sigset);  /* remove the stack signal from a sigset_t */
void fl_fault_context_give_up_signal(void);          /* the program takes the signal for itself */

/* handler.c: the signal that wakes the fault handlers (flushes, shutdown); 0 = not picked yet */
int fl_handler_signal(void);

#endif
