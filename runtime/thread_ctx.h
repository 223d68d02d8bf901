/* thread_ctx.h: what the runtime keeps per application thread. */
#ifndef FL_THREAD_CTX_H
#define FL_THREAD_CTX_H

#include "runtime.h"
#include "stream.h"
#include "faultline/trace.h"

struct fl_thread {
	_Atomic int in_use;
	int tid;
	uint64_t alloc_count;              /* for --alloc-sample */
	/* normal context (allocation events) */
	struct fl_stream allocs, alloc_stacks;
	/* signal context (fault contexts) */
	struct fl_stream contexts, fault_stacks;
	/* PMU counters of this thread, opened on its first fault context */
	int pmu_fds[FL_PMU_MAX];           /* [0] leads the group; -1 = none */
	unsigned pmu_n;
	bool pmu_tried;
};

#endif
