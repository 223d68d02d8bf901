/* thread_slot.c: the slots of application threads — their record streams, PMU group and
 * allocation-site caches (thread_ctx.h) — in a pool of chunks of 64 slots, each reserved when first
 * needed (raw mmap, never in the region).
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
#define CHUNK_SLOTS 64                    /* slots reserved at a time (64 x ~46 KiB) */
#define CHUNKS (FL_MAX_THREADS / CHUNK_SLOTS)

/* The pool grows by chunks, reserved when a thread first needs one: the whole pool at once was
 * 740 MiB of address space, which a program that lowers RLIMIT_AS pays for. */
static _Atomic(struct fl_thread *) chunks[CHUNKS];
static _Atomic size_t pool_high;          /* slots [0, pool_high) have been used (their chunks exist) */
static pthread_key_t exit_key;            /* its destructor: threads.c's end of a thread */
static bool exit_key_ok;
__thread struct fl_thread *fl_thread_tls; /* this thread's slot, once it has one */

/* The chunk holding slot I, reserved (once: a racing reserver gives its copy back) if need be;
 * NULL when no memory is left. A system call at most: usable from the stack signal's handler. */
static struct fl_thread *chunk_of(size_t i)
{
	_Atomic(struct fl_thread *) *c = &chunks[i / CHUNK_SLOTS];
	struct fl_thread *have = atomic_load_explicit(c, memory_order_acquire);
	if (have)
		return have;
	struct fl_thread *made = fl_sys_reserve(CHUNK_SLOTS * sizeof(struct fl_thread), "mmap(thread pool)");
	if (!made)
		return NULL;
	if (!atomic_compare_exchange_strong(c, &have, made)) {
		fl_sys_munmap(made, CHUNK_SLOTS * sizeof(struct fl_thread));
		return have;
	}
	return made;
}

int fl_thread_slots_setup(void (*on_exit)(void *slot))
{
	if (!chunk_of(0))
		return -1;
	/* keys below 32 live in the thread descriptor: pthread_setspecific then never allocates,
	 * which makes it usable from the stack signal's handler */
	exit_key_ok = pthread_key_create(&exit_key, on_exit) == 0 && exit_key < 32;
	return 0;
}

bool fl_thread_exit_again(void *value)
{
	return exit_key_ok && pthread_setspecific(exit_key, value) == 0;
}

size_t fl_thread_slots_used(void)
{
	return atomic_load(&pool_high);
}

struct fl_thread *fl_thread_slot(size_t i)
{
	return &atomic_load_explicit(&chunks[i / CHUNK_SLOTS], memory_order_acquire)[i % CHUNK_SLOTS];
}

struct fl_thread *fl_thread_self(void)
{
	if (fl_thread_tls)
		return fl_thread_tls;
	if (!atomic_load(&chunks[0]) || fl_internal_thread)
		return NULL;
	size_t high = atomic_load(&pool_high);
	for (size_t i = 0; i < FL_MAX_THREADS; i++) {
		int expected = 0;
		if (i >= high) {
			if (!chunk_of(i)) /* before pool_high covers the slot: readers find its chunk */
				return NULL;
			if (!atomic_compare_exchange_strong(&pool_high, &high, i + 1)) {
				high = atomic_load(&pool_high);
				if (i >= high)
					continue;
			}
		}
		struct fl_thread *t = fl_thread_slot(i);
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
		struct fl_thread *t = fl_thread_slot(i);
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
		tids[i] = atomic_load(&fl_thread_slot(i)->in_use) ? fl_thread_slot(i)->tid : 0;
	return n;
}

/* The site-counter deltas the threads have not published yet, for the periodic snapshot of the
 * sites file (live_objects.c); their owners keep changing them meanwhile. */
void fl_threads_visit_site_deltas(void (*visit)(const struct fl_site_delta *d, void *arg), void *arg)
{
	size_t high = atomic_load(&pool_high);
	for (size_t i = 0; i < high; i++) {
		struct fl_thread *t = fl_thread_slot(i);
		if (!atomic_load(&t->in_use))
			continue;
		for (unsigned k = 0; k < FL_SITE_CACHE; k++)
			visit(&t->site_delta[k], arg);
	}
}
