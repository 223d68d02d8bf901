/* thread_ctx.h: what the runtime keeps per application thread. */
#ifndef FL_THREAD_CTX_H
#define FL_THREAD_CTX_H

#include "runtime.h"
#include "stream.h"
#include "faultline/trace.h"

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
	/* PMU counters of this thread, opened on its first fault context */
	int pmu_fds[FL_PMU_MAX];           /* [0] leads the group; -1 = none */
	unsigned pmu_n;
	bool pmu_tried;
};

/* This thread's slot (NULL until fl_thread_self gave it one): the allocation path's fast check. */
extern __thread struct fl_thread *fl_thread_tls;

#endif
