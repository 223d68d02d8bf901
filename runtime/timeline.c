/* timeline.c: counter timelines (PMCTrack's time- and event-based sampling) — the `timeline` file
 * of trace.h: every thread's perf counters and the runtime's own virtual counters, over time.
 *
 * Time-based: a sampler thread of the runtime wakes every FAULTLINE_TIMELINE_MS (default 20 ms
 * from `record`), reads each application thread's counters with one read(2) of a group it opened
 * on that thread (pmu.c: task-clock, page-faults, context-switches, and instructions, cycles where
 * the machine counts them) and writes one record per thread and one for the process: the sum of
 * its threads (ended ones included, with their last values) and the virtual counters. No signal
 * and nothing on the program's threads: the sampler reads counters the kernel keeps per task.
 *
 * Event-based: with FAULTLINE_TIMELINE_EVERY=N, the handler that serves every N-th fault appends a
 * process record of the virtual counters to its own stream (a memcpy: the fault path makes no
 * system call for it; the stream is written out like every other, when full or on the flush
 * cadence).
 *
 * Virtual counters are read lock-free from the counters the runtime keeps anyway (handler stats,
 * eviction stats, far-store stats, local/soft page counts), with relaxed loads: a sample is a
 * consistent-enough snapshot, never a lock on the fault path.
 *
 * Writing: the sampler's records and the handlers' go through fl_streams into the timeline file
 * (O_APPEND, whole records); the sampler writes them out every ~100 ms, as handler 0 does for the
 * other streams, so a SIGKILL loses at most the last ~100 ms. At shutdown the sampler takes a last
 * sample (reason FL_TL_FINAL) and ends, and every stream is written.
 *
 * The sampler opens its counters in a descriptor table of its own (fds.c, fl_fd_table_private):
 * they are made while the program runs, and in the process's table each would take, for a
 * moment, a number the program's next open(2) should get. Only the sampler can read them, so it
 * takes the final sample too. A forked child opens its own file, forgets the parent's counters
 * (their numbers were the parent's sampler's) and starts its own sampler. */
#include "timeline.h"
#include "context.h"
#include "env.h"
#include "fds.h"
#include "pmu.h"
#include "stream.h"
#include "thread_slot.h"
#include "trace_file.h"
#include "diag.h"
#include "faultline/record_schema.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "faultline/env.h"

#define TL_MAX_THREADS 4096      /* thread slots sampled (threads in later slots are not counted) */
#define TL_FLUSH_NS 100000000ull /* streams written out every 100 ms */
#define TL_FINAL_WAIT_NS 2000000000ull /* shutdown waits this long for the sampler's final sample */
#define TL_PERF_MAX 5            /* task-clock, page-faults, context-switches, instructions, cycles */

/* The counters of one thread slot (thread_slot.c), opened by the sampler. */
struct tl_thread {
	int tid;                     /* 0: not tracked */
	unsigned nfds;
	int fds[TL_PERF_MAX];        /* fds[0] leads the group */
	uint64_t last[TL_PERF_MAX];  /* the last values read */
};

struct fl_timeline {
	unsigned period_ms;          /* 0: the sampler does not run (and nothing is written) */
	unsigned every;              /* a process sample every N faults; 0 = off */
	bool hardware;               /* instructions and cycles are counted */
	pthread_t thread;
	_Atomic bool stop;           /* shutdown: the sampler takes the final sample and ends */
	_Atomic int wake;            /* futex word: 1 cuts the sampler's sleep short (shutdown) */
	_Atomic int final_taken;     /* futex word: 1 once the sampler took the final sample */
	bool sampler_running;        /* the sampler thread was started (and takes the final sample) */
	bool private_fds;            /* the counters live in the sampler's own descriptor table */
	_Atomic int final_done;
	_Atomic uint64_t faults;     /* faults seen, for --timeline-every */
	uint64_t last_flush_ns;
	uint64_t retired[TL_PERF_MAX];  /* counters of ended threads, summed */
	size_t high;                 /* slots [0, high) may be tracked */
	unsigned counted;            /* counters the threads' groups hold (0: perf refused every one) */
	int tids[TL_MAX_THREADS];    /* the sampler's scratch: tid per slot */
	struct tl_thread threads[TL_MAX_THREADS];
	struct fl_stream stream;     /* the sampler's records */
	struct fl_stream handler_streams[FL_MAX_HANDLERS];  /* event-based records, one per handler */
};

static const uint16_t perf_slot[TL_PERF_MAX] = {
	FL_TL_TASK_CLOCK, FL_TL_PAGE_FAULTS, FL_TL_CONTEXT_SWITCHES, FL_TL_INSTRUCTIONS, FL_TL_CYCLES,
};

int fl_timeline_setup(struct fl_runtime *rt)
{
	fl_stream_file_set(FL_SF_TIMELINE, -1);
	rt->timeline = NULL;
	uint64_t period = fl_env_u64(FL_ENV_TIMELINE_MS, 0);
	if (period == 0)
		return 0; /* off: the timeline is optional, never a reason not to run */
	struct fl_timeline *tl = fl_sys_reserve(sizeof(*tl), "mmap(timeline)");
	if (!tl)
		return 0;
	tl->period_ms = period > 60000 ? 60000 : (unsigned)period;
	tl->every = (unsigned)fl_env_u64(FL_ENV_TIMELINE_EVERY, 0);
	tl->hardware = fl_pmu_hardware_present();
	fl_stream_init(&tl->stream, FL_SF_TIMELINE);
	for (unsigned i = 0; i < FL_MAX_HANDLERS; i++)
		fl_stream_init(&tl->handler_streams[i], FL_SF_TIMELINE);
	rt->timeline = tl;
	return 0;
}

void fl_timeline_json_meta(struct fl_runtime *rt, struct fl_buf *b)
{
	struct fl_timeline *tl = rt->timeline;
	fl_buf_json_key_u64(b, FL_META_TIMELINE_MS, tl ? tl->period_ms : 0);
	fl_buf_json_key_u64(b, FL_META_TIMELINE_EVERY, tl ? tl->every : 0);
	fl_buf_json_key(b, FL_META_TIMELINE_EVENTS);
	fl_buf_str(b, !tl ? "[]" : tl->hardware ? "[\"task-clock\", \"page-faults\", \"context-switches\", \"instructions\", \"cycles\"]"
					       : "[\"task-clock\", \"page-faults\", \"context-switches\"]");
	fl_buf_json_key_str(b, FL_META_TIMELINE_PMU_KIND, !tl ? "none" : tl->hardware ? "hardware" : "software");
}

/* The runtime's own counters, read lock-free. */
static void virtual_counters(struct fl_runtime *rt, struct fl_timeline_record *r)
{
	size_t local = atomic_load_explicit(&rt->local_pages, memory_order_relaxed);
	size_t soft = atomic_load_explicit(&rt->soft_pages, memory_order_relaxed);
	uint64_t first = 0, refault = 0, soft_faults = 0, concurrent = 0;
	for (unsigned i = 0; i < rt->nhandlers; i++) {
		struct fl_handler_stats *s = &rt->handlers[i].stats;
		first += atomic_load_explicit(&s->first_touch, memory_order_relaxed);
		refault += atomic_load_explicit(&s->refault, memory_order_relaxed);
		soft_faults += atomic_load_explicit(&s->soft, memory_order_relaxed);
		concurrent += atomic_load_explicit(&s->concurrent, memory_order_relaxed);
	}
	r->values[FL_TL_RESIDENT_PAGES] = local > soft ? local - soft : 0;
	r->values[FL_TL_SOFT_PAGES] = soft;
	r->values[FL_TL_FAR_READ_BYTES] = atomic_load_explicit(&rt->farst.stats.read_pages, memory_order_relaxed) * FL_PAGE_SIZE;
	r->values[FL_TL_FAR_WRITE_BYTES] = atomic_load_explicit(&rt->farst.stats.write_pages, memory_order_relaxed) * FL_PAGE_SIZE;
	r->values[FL_TL_EVICTIONS] = atomic_load_explicit(&rt->evict.evictions, memory_order_relaxed);
	r->values[FL_TL_WRITEBACKS] = atomic_load_explicit(&rt->evict.writebacks, memory_order_relaxed);
	r->values[FL_TL_FIRST_TOUCH] = first;
	r->values[FL_TL_REFAULTS] = refault;
	r->values[FL_TL_SOFT_FAULTS] = soft_faults;
	r->values[FL_TL_CONCURRENT] = concurrent;
	for (unsigned c = FL_TL_RESIDENT_PAGES; c <= FL_TL_CONCURRENT; c++)
		r->valid |= (uint16_t)(1u << c);
}

static void record_init(struct fl_runtime *rt, struct fl_timeline_record *r, uint32_t tid, uint8_t reason)
{
	memset(r, 0, sizeof(*r));
	r->time_ns = fl_now_ns() - rt->start_ns;
	r->tid = tid;
	r->reason = reason;
}

/* Reads a thread's group; false when the read failed (its last values stay). */
static bool read_thread(struct tl_thread *t)
{
	uint64_t buf[1 + TL_PERF_MAX];
	ssize_t got = fl_sys_read(t->fds[0], buf, sizeof(buf));
	if (got < (ssize_t)(2 * sizeof(uint64_t)) || buf[0] != t->nfds)
		return false;
	memcpy(t->last, buf + 1, t->nfds * sizeof(uint64_t));
	return true;
}

static void close_thread(struct tl_thread *t)
{
	for (unsigned i = 0; i < t->nfds; i++)
		fl_sys_close(t->fds[i]);
	memset(t, 0, sizeof(*t));
}

static void thread_record(struct fl_runtime *rt, struct fl_timeline *tl, struct tl_thread *t, uint8_t reason)
{
	struct fl_timeline_record r;
	record_init(rt, &r, (uint32_t)t->tid, reason);
	for (unsigned i = 0; i < t->nfds; i++) {
		r.values[perf_slot[i]] = t->last[i];
		r.valid |= (uint16_t)(1u << perf_slot[i]);
	}
	fl_stream_append(&tl->stream, &r, sizeof(r), NULL, 0);
}

/* A thread slot whose thread ended: its last values join the retired sums. */
static void retire_thread(struct fl_runtime *rt, struct fl_timeline *tl, struct tl_thread *t)
{
	if (read_thread(t) || t->nfds)
		thread_record(rt, tl, t, FL_TL_FINAL);
	for (unsigned i = 0; i < t->nfds; i++)
		tl->retired[i] += t->last[i];
	close_thread(t);
}

/* One sample of every thread and of the process: by the sampler, or, when it could not be started,
 * once by fl_timeline_shutdown (never both, so no lock). */
static void sample_all(struct fl_runtime *rt, struct fl_timeline *tl, uint8_t reason)
{
	uint64_t sums[TL_PERF_MAX];
	size_t n = fl_threads_tids(tl->tids, TL_MAX_THREADS);
	if (n > tl->high)
		tl->high = n;
	for (size_t i = 0; i < tl->high; i++) {
		struct tl_thread *t = &tl->threads[i];
		int tid = i < n ? tl->tids[i] : 0;
		if (t->tid && t->tid != tid)
			retire_thread(rt, tl, t);
		if (tid && !t->tid) {
			t->nfds = fl_pmu_open_thread_counters(tid, tl->hardware, t->fds, TL_PERF_MAX);
			t->tid = tid; /* tracked even without counters: tried once */
			if (t->nfds > tl->counted)
				tl->counted = t->nfds;
		}
		if (t->tid && t->nfds && read_thread(t))
			thread_record(rt, tl, t, reason);
	}
	/* summed once every slot is settled: a thread that ended in this round is in the retired sums
	 * now (summing before that left its counts out of this one sample: the process's task-clock
	 * fell by a thread's CPU time where a thread ended, and rose again in the next sample) */
	memcpy(sums, tl->retired, sizeof(sums));
	for (size_t i = 0; i < tl->high; i++)
		for (unsigned k = 0; k < tl->threads[i].nfds; k++)
			sums[k] += tl->threads[i].last[k];
	struct fl_timeline_record r;
	record_init(rt, &r, 0, reason);
	for (unsigned k = 0; k < tl->counted; k++) { /* the sums of the counters some thread has */
		r.values[perf_slot[k]] = sums[k];
		r.valid |= (uint16_t)(1u << perf_slot[k]);
	}
	virtual_counters(rt, &r);
	fl_stream_append(&tl->stream, &r, sizeof(r), NULL, 0);
}

static void flush_streams(struct fl_runtime *rt, struct fl_timeline *tl)
{
	for (unsigned i = 0; i < rt->nhandlers && i < FL_MAX_HANDLERS; i++)
		fl_stream_flush_if_free(&tl->handler_streams[i]);
	fl_stream_flush(&tl->stream);
}

static void *sampler_main(void *arg)
{
	struct fl_runtime *rt = arg;
	struct fl_timeline *tl = rt->timeline;
	uint64_t period_ns = (uint64_t)tl->period_ms * 1000000ull;
	uint64_t next = fl_now_ns();

	fl_internal_thread_enter("fl-timeline");
	/* the counters are opened while the program runs: in the process's table, each would hold a
	 * low number for a moment, and the program's open(2) would get the next one (fds.c) */
	tl->private_fds = fl_fd_table_private(fl_stream_file_fd(FL_SF_TIMELINE)) == 0;
	while (!atomic_load(&tl->stop)) {
		uint64_t now = fl_now_ns();
		next += period_ns;
		if (next < now) /* fell behind (a loaded machine): no burst of catch-up samples */
			next = now + period_ns;
		while (!atomic_load(&tl->stop) && fl_now_ns() < next)
			fl_sys_futex_wait_until(&tl->wake, 0, next);
		if (atomic_load(&tl->stop))
			break;
		sample_all(rt, tl, FL_TL_PERIODIC);
		now = fl_now_ns();
		if (now - tl->last_flush_ns >= TL_FLUSH_NS) {
			flush_streams(rt, tl);
			tl->last_flush_ns = now;
		}
	}
	/* the final sample is this thread's: only it can read the counters it opened */
	sample_all(rt, tl, FL_TL_FINAL);
	fl_stream_flush(&tl->stream);
	atomic_store(&tl->final_taken, 1);
	fl_sys_futex_wake_all(&tl->final_taken);
	return NULL; /* the thread's table, and the counters in it, go with the thread */
}

int fl_timeline_start(struct fl_runtime *rt)
{
	struct fl_timeline *tl = rt->timeline;
	if (!tl)
		return 0;
	int fd = fl_trace_open_file(rt, FL_FILE_NAME_TIMELINE, FL_FILE_TIMELINE, sizeof(struct fl_timeline_record));
	fl_stream_file_set(FL_SF_TIMELINE, fd);
	if (fd < 0) {
		rt->timeline = NULL; /* already said why; the program runs on without a timeline */
		return 0;
	}
	tl->last_flush_ns = fl_now_ns();
	atomic_store(&tl->wake, 0);
	atomic_store(&tl->final_taken, 0);
	tl->private_fds = false;
	int err = fl_thread_create(&tl->thread, sampler_main, rt);
	tl->sampler_running = err == 0;
	if (err) {
		fl_log_errno("pthread_create(timeline sampler)", err);
		atomic_store(&tl->stop, true); /* samples at the end only */
	}
	return 0;
}

void fl_timeline_fault(struct fl_handler *h)
{
	struct fl_timeline *tl = h->rt->timeline;
	if (!tl || !tl->every)
		return;
	uint64_t n = atomic_fetch_add_explicit(&tl->faults, 1, memory_order_relaxed) + 1;
	if (n % tl->every)
		return;
	struct fl_timeline_record r;
	record_init(h->rt, &r, 0, FL_TL_EVERY_N);
	virtual_counters(h->rt, &r);
	fl_stream_append(&tl->handler_streams[h->index], &r, sizeof(r), NULL, 0);
}

void fl_timeline_shutdown(struct fl_runtime *rt)
{
	struct fl_timeline *tl = rt->timeline;
	if (!tl || atomic_exchange(&tl->final_done, 1))
		return;
	atomic_store(&tl->stop, true);
	if (tl->sampler_running) {
		/* the sampler takes the final sample; bounded, as a fatal signal may have stopped it */
		atomic_store(&tl->wake, 1);
		fl_sys_futex_wake_all(&tl->wake);
		uint64_t deadline = fl_now_ns() + TL_FINAL_WAIT_NS;
		while (!atomic_load(&tl->final_taken) && fl_now_ns() < deadline)
			fl_sys_futex_wait_until(&tl->final_taken, 0, deadline);
	} else { /* no sampler thread: the final sample is the only one */
		sample_all(rt, tl, FL_TL_FINAL);
	}
	for (unsigned i = 0; i < rt->nhandlers && i < FL_MAX_HANDLERS; i++)
		fl_stream_try_flush(&tl->handler_streams[i]);
	fl_stream_try_flush(&tl->stream);
}

/* In the child of a fork: the counters were opened on the parent's threads and the sampler
 * thread is the parent's; what the streams hold is the parent's to write. */
void fl_timeline_after_fork(struct fl_runtime *rt)
{
	struct fl_timeline *tl = rt->timeline;
	if (!tl)
		return;
	fl_stream_file_set(FL_SF_TIMELINE, -1);
	for (size_t i = 0; i < tl->high; i++) {
		if (!tl->threads[i].tid)
			continue;
		if (tl->private_fds) /* numbers in the parent's sampler's table: here they may be the program's */
			memset(&tl->threads[i], 0, sizeof(tl->threads[i]));
		else
			close_thread(&tl->threads[i]);
	}
	memset(tl->retired, 0, sizeof(tl->retired));
	tl->high = 0;
	tl->counted = 0;
	atomic_store(&tl->faults, 0);
	atomic_store(&tl->stop, false);
	atomic_store(&tl->final_done, 0);
	fl_stream_discard(&tl->stream);
	for (unsigned i = 0; i < FL_MAX_HANDLERS; i++)
		fl_stream_discard(&tl->handler_streams[i]);
	fl_timeline_start(rt);
}
