/* thread_slot.c: the slots of application threads — their record streams, PMU group and
 * allocation-site caches (thread_ctx.h) — in a pool allocated once (raw mmap, never in the region).
 *
 * A thread gets its slot on first use, from normal code or from the stack signal's handler
 * (lock-free: a compare-and-swap on in_use), and keeps it in an initial-exec TLS pointer.
 * When the thread exits, a pthread key destructor (threads.c, given at setup) flushes what the
 * slot holds and frees it for reuse, so programs that create and end many threads need only as
 * many slots as they have threads alive at once. */
#include "thread_slot.h"
#include "fault_sample.h"
#include "sys.h"
#include "diag.h"
#include "internal_thread.h"

#include <errno.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define FL_MAX_THREADS 16384

static struct fl_thread *pool;
static _Atomic size_t pool_high;          /* slots [0, pool_high) have been used */
static pthread_key_t exit_key;            /* its destructor: threads.c's end of a thread */
static bool exit_key_ok;
__thread struct fl_thread *fl_thread_tls; /* this thread's slot, once it has one */

int fl_thread_slots_setup(void (*on_exit)(void *slot))
{
	pool = fl_sys_reserve(FL_MAX_THREADS * sizeof(struct fl_thread), "mmap(thread pool)");
	if (!pool)
		return -1;
	/* keys below 32 live in the thread descriptor: pthread_setspecific then never allocates,
	 * which makes it usable from the stack signal's handler */
	exit_key_ok = pthread_key_create(&exit_key, on_exit) == 0 && exit_key < 32;
	return 0;
}

size_t fl_thread_slots_used(void)
{
	return atomic_load(&pool_high);
}

struct fl_thread *fl_thread_slot(size_t i)
{
	return &pool[i];
}

struct fl_thread *fl_thread_self(void)
{
	if (fl_thread_tls)
		return fl_thread_tls;
	if (!pool || fl_internal_thread)
		return NULL;
	size_t high = atomic_load(&pool_high);
	for (size_t i = 0; i < FL_MAX_THREADS; i++) {
		struct fl_thread *t = &pool[i];
		int expected = 0;
		if (i >= high && !atomic_compare_exchange_strong(&pool_high, &high, i + 1)) {
			high = atomic_load(&pool_high);
			if (i >= high)
				continue;
		}
		if (!atomic_compare_exchange_strong(&t->in_use, &expected, 1))
			continue;
		int tid = (int)syscall(SYS_gettid);
		if (t->sampler.tried && t->tid != tid) /* the previous owner's group */
			fl_sample_thread_stop(t);
		if (!t->sampler.tried) {
			memset(&t->sampler, 0, sizeof(t->sampler));
			t->sampler.leader_fd = -1;
		}
		t->tid = tid;
		fl_sample_thread_begins(t);
		t->alloc_count = 0;
		t->sample_left = 0;
		t->rng = 0;
		t->clk_tsc = t->clk_ns = t->clk_rate = t->clk_last = 0;
		t->clk_count = 0;
		fl_site_cache_clear(t); /* sites are per process: a fork child's table starts empty */
		memset(t->site_delta, 0, sizeof(t->site_delta));
		fl_stream_init(&t->allocs, FL_SF_ALLOCS);
		fl_stream_init(&t->alloc_stacks, FL_SF_STACKS);
		fl_stream_init(&t->contexts, FL_SF_CONTEXTS);
		fl_stream_init(&t->fault_stacks, FL_SF_STACKS);
		fl_thread_tls = t;
		if (exit_key_ok)
			pthread_setspecific(exit_key, t);
		return t;
	}
	return NULL; /* more live threads than slots: their records are counted as dropped */
}

/* Every thread's buffered records, written out by handler 0 every ~100 ms (handler.c): stream
 * by stream, only where the owner is not appending at that moment. */
void fl_threads_flush_periodic(void)
{
	size_t high = atomic_load(&pool_high);
	for (size_t i = 0; i < high; i++) {
		struct fl_thread *t = &pool[i];
		if (!atomic_load(&t->in_use))
			continue;
		fl_stream_flush_if_free(&t->alloc_stacks);
		fl_stream_flush_if_free(&t->allocs);
		fl_stream_flush_if_free(&t->fault_stacks);
		fl_stream_flush_if_free(&t->contexts);
	}
}

/* The tids of the thread slots [0, n), for the timeline's sampler: tids[i] is the thread that holds
 * slot i now, 0 for a free slot. A slot keeps its thread until that thread ends, so a sampler
 * that sees another tid in a slot knows the previous one ended. Returns n (at most max). */
size_t fl_threads_tids(int *tids, size_t max)
{
	size_t high = atomic_load(&pool_high), n = high < max ? high : max;
	for (size_t i = 0; i < n; i++)
		tids[i] = atomic_load(&pool[i].in_use) ? pool[i].tid : 0;
	return n;
}

/* The site-counter deltas the threads have not published yet, for the periodic snapshot of the
 * sites file (live_objects.c); their owners keep changing them meanwhile. */
void fl_threads_visit_site_deltas(void (*visit)(const struct fl_site_delta *d, void *arg), void *arg)
{
	size_t high = atomic_load(&pool_high);
	for (size_t i = 0; i < high; i++) {
		struct fl_thread *t = &pool[i];
		if (!atomic_load(&t->in_use))
			continue;
		for (unsigned k = 0; k < FL_SITE_CACHE; k++)
			visit(&t->site_delta[k], arg);
	}
}
