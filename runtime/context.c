/* context.c: the one instance of the runtime's context (context.h). Runtime.c fills it at start
 * and in a forked child; each subsystem keeps its part. Also what the instance says as a whole: the
 * CPU time of the threads that serve faults. */
#include "context.h"
#include "sys.h"

struct fl_runtime fl_rt;

void fl_runtime_worker_cpu_ns(struct fl_runtime *rt, uint64_t *handlers, uint64_t *evictor)
{
	*handlers = 0;
	for (unsigned i = 0; i < rt->nhandlers; i++)
		*handlers += fl_sys_cpu_ns_of(atomic_load(&rt->handlers[i].tid));
	*evictor = fl_sys_cpu_ns_of(atomic_load(&rt->evictor.tid));
}
