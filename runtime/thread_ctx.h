/* thread_ctx.h: what the runtime keeps per application thread (struct fl_thread), types only.
 * A thread's slot holds the state of several subsystems (the sampler's perf group, the
 * allocation sites' cache, the record streams), so its type is a leaf they all include; the
 * slots themselves are thread_slot.c's, a thread's end and the fork child's threads threads.c's. */
#ifndef FL_THREAD_CTX_H
#define FL_THREAD_CTX_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "stream.h"
#include "faultline/trace.h"

struct perf_event_mmap_page;
struct fl_full_log;

/* A thread's perf group (fault_sample.c): the sampled page-fault leader and the --pmu events. */
struct fl_sampler {
	int leader_fd;                     /* -1 = none */
	int member_fds[FL_PMU_MAX + 1];    /* the --pmu events, then task-clock when they lack it */
	unsigned nmembers;
	int task_clock_slot;               /* task-clock's index in the group's values (the sampler's
	                                    * own count first); -1 = not in the group */
	bool extra_task_clock;             /* the last member is task-clock, not a --pmu event */
	bool tried;                        /* opened (or failed to) on the first fault context */
	bool sampled;                      /* the leader is the page-fault sampler with a ring */
	struct perf_event_mmap_page *ring; /* registered by tid for the handlers; NULL = none */
	_Atomic int busy;                  /* a handler reads the ring and the thread's stack */
	uint64_t stack_lo, stack_hi;       /* pages of the thread's stack known to be readable */
	/* the thread's own stack mapping (remote_unwind.c), looked up once in /proc/self/maps: the
	 * one holding its thread pointer (glibc keeps the thread's descriptor at the top of its
	 * stack), or [stack] for the main thread; it lives as long as the thread */
	uint64_t thread_pointer;           /* pthread_self() of the thread, set when it starts */
	bool main_thread;
	bool mapping_looked_up;
	uint64_t mapping_lo, mapping_hi;   /* [lo, hi) readable; empty when unknown */
};

#define FL_SAMPLE_NREGS 17               /* ax bx cx dx si di bp sp ip r8-r15 */

/* What a fault's sample says, for the handler that serves the fault. */
struct fl_fault_sample {
	struct fl_thread *thread;          /* owned (sampler.busy) until fl_sample_release */
	uint32_t tid;
	uint64_t addr;
	uint64_t regs[FL_SAMPLE_NREGS];    /* user registers, perf's order */
	unsigned npmu;
	uint64_t pmu[FL_PMU_MAX];          /* --pmu values at the fault */
	uint64_t task_clock_ns;            /* the thread's task-clock at the fault; 0 = unknown */
	uint64_t time_ns;                  /* when it faulted, CLOCK_MONOTONIC (clock.c's clock); 0 = unknown */
	bool in_kernel;                    /* the fault happened inside a system call */
};

#define FL_SITE_CACHE 256

struct fl_thread {
	_Atomic int in_use;
	int tid;
	uint64_t alloc_count;              /* unused (was --alloc-sample) */
	/* allocation sites (live_objects.c): return-address key -> site index, direct-mapped */
	struct { uint64_t key; uint32_t site; uint32_t pad; } site_cache[FL_SITE_CACHE];
	/* this thread's not yet published changes to site counters, direct-mapped by site index */
	struct fl_site_delta { uint32_t site, used; int64_t live; uint64_t allocs, frees, bytes; } site_delta[FL_SITE_CACHE];
	uint32_t next_alloc_id, alloc_id_end;  /* this thread's block of alloc ids */
	int64_t sample_left;               /* bytes until the next sampled allocation event */
	uint64_t rng;                      /* for the sampling interval */
	struct fl_full_log *full;          /* --alloc-log full: this slot's chunk buffer (alloc_log.c) */
	/* allocation event times: the TSC, interpolated between clock reads (alloc_log.c) */
	uint64_t clk_tsc, clk_ns, clk_rate, clk_last;
	uint32_t clk_count;
	/* normal context (allocation events) */
	struct fl_stream allocs, alloc_stacks;
	/* signal context (fault contexts) */
	struct fl_stream contexts, fault_stacks;
	struct fl_sampler sampler;         /* perf group, opened on its first fault context */
};

/* Forgets the thread's cache of allocation sites (live_objects.c): sites are per process, so a
 * new owner of the slot, or a fork child, starts with an empty one. */
static inline void fl_site_cache_clear(struct fl_thread *t)
{
	memset(t->site_cache, 0, sizeof(t->site_cache));
}

#endif
