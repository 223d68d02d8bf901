/* trace_writer.c: the process's trace directory and files — meta.json at start, fault records
 * while running, stats.json at exit.
 *
 * Fault records collect in a per-handler buffer (owned by that handler thread, in runtime
 * memory, never in the region); a full buffer goes to the frame writer (frame_writer.c), which
 * delta-codes, compresses and writes it into the framed `faults` file. A failed write (ENOSPC,
 * EIO) is the only way a record is dropped; it is counted and its errno kept for the summary.
 * The directory and the files are created by trace_file.c. */
#include "trace_writer.h"
#include "context.h"
#include "evict_log.h"
#include "far_store.h"
#include "probe.h"
#include "stream.h"
#include "timeline.h"
#include "trace_file.h"
#include "pages.h"
#include "diag.h"
#include "frame_writer.h"

#include <faultline/record_schema.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int fl_trace_open(struct fl_runtime *rt)
{
	if (!rt->top_dir[0] || fl_trace_make_dir(rt, rt->top_dir) < 0)
		return -1;
	/* stats.json is written at the very end, when the disk may be full: reserve its space now
	 * under a hidden name; it becomes stats.json when first written */
	rt->stats_fd = fl_trace_create_file(rt, ".stats.json", O_EXCL);
	rt->stats_named = false;
	if (rt->stats_fd >= 0)
		fallocate(rt->stats_fd, FALLOC_FL_KEEP_SIZE, 0, 16384);
	rt->faults_fd = fl_trace_open_file(rt, FL_FILE_NAME_FAULTS, FL_FILE_FAULTS, sizeof(struct fl_fault_record));
	int contexts_fd = fl_trace_open_file(rt, FL_FILE_NAME_CONTEXTS, FL_FILE_CONTEXTS, sizeof(struct fl_fault_context));
	int stacks_fd = fl_trace_open_file(rt, FL_FILE_NAME_STACKS, FL_FILE_STACKS, 0);
	/* the allocation log: sampled records in allocs, or the full log in allocs.zst (alloc_log.c) */
	int allocs_fd = rt->alloc_log_full ? -1
			: fl_trace_open_file(rt, FL_FILE_NAME_ALLOCS, FL_FILE_ALLOCS, sizeof(struct fl_alloc_record));
	rt->allocs_zst_fd = !rt->alloc_log_full ? -1
			    : fl_trace_open_file(rt, FL_FILE_NAME_ALLOCS_ZSTD, FL_FILE_ALLOCS_ZSTD, sizeof(struct fl_alloc_record));
	/* rewritten whole at shutdown with pwrite: not O_APPEND */
	rt->sites_fd = fl_trace_open_binary(rt, FL_FILE_NAME_SITES, FL_FILE_SITES, sizeof(struct fl_site_record), 0);
	rt->maps_fd = fl_trace_create_file(rt, FL_FILE_NAME_MAPS, O_EXCL | O_APPEND);
	/* eviction events (evict_log.c): optional, a recording without them is still whole */
	fl_stream_init(&rt->evict_log, FL_SF_EVICTIONS);
	int evictions_fd = fl_trace_open_file(rt, FL_FILE_NAME_EVICTIONS, FL_FILE_EVICTIONS, sizeof(struct fl_evict_record));
	/* the streams own these descriptors from now on (stream.c) */
	fl_stream_file_set(FL_SF_CONTEXTS, contexts_fd);
	fl_stream_file_set(FL_SF_STACKS, stacks_fd);
	fl_stream_file_set(FL_SF_ALLOCS, allocs_fd);
	fl_stream_file_set(FL_SF_EVICTIONS, evictions_fd);
	if (rt->faults_fd < 0 || contexts_fd < 0 || stacks_fd < 0 || (rt->alloc_log_full ? rt->allocs_zst_fd : allocs_fd) < 0 ||
	    rt->sites_fd < 0 || rt->maps_fd < 0)
		return -1;
	for (unsigned i = 0; i < rt->nhandlers; i++) {
		struct fl_handler *h = &rt->handlers[i];
		if (!h->records) {
			h->records = fl_sys_reserve(FL_TRACE_CHUNK * sizeof(struct fl_fault_record), "mmap(trace buffer)");
			if (!h->records)
				return -1;
		}
		h->nrecords = 0;
		fl_stream_init(&h->evictions, FL_SF_EVICTIONS);
	}
	int framed[FL_FRAMED_COUNT] = { rt->faults_fd, contexts_fd, evictions_fd };
	if (fl_frames_start(rt, framed) < 0)
		return -1;
	fl_trace_write_meta(rt);
	return 0;
}

/* The handler's counts, now that every fault they count has its record handed over (flushed). */
static void publish_flushed_counts(struct fl_handler *h)
{
	struct fl_handler_stats *s = &h->stats;
	struct fl_flushed_counts *f = &h->flushed;
	atomic_store(&f->faults_total, atomic_load(&s->faults_total));
	atomic_store(&f->first_touch, atomic_load(&s->first_touch));
	atomic_store(&f->refault, atomic_load(&s->refault));
	atomic_store(&f->soft, atomic_load(&s->soft));
	atomic_store(&f->concurrent, atomic_load(&s->concurrent));
	atomic_store(&f->access_samples, atomic_load(&s->access_samples));
}

void fl_trace_flush(struct fl_handler *h)
{
	struct fl_runtime *rt = h->rt;
	/* stacks first, then the contexts that name them, then the faults they belong to: a
	 * reader of a recording in progress finds every reference defined */
	fl_stream_flush(&h->stacks);
	fl_stream_flush(&h->contexts);
	fl_stream_flush(&h->evictions);
	/* the evictor's eviction events, on the cadence of handler 0: it waits only at shutdown */
	if (h->index == 0)
		fl_evict_log_flush(rt, atomic_load_explicit(&rt->final_mode, memory_order_relaxed));
	if (h->nrecords) {
		/* handed to the frame writer; the handler waits only when the writer is behind: that is
		 * the back-pressure, and it is counted. Records lost to a failed write are counted there. */
		uint64_t start = fl_now_ns();
		fl_frames_submit(FL_FRAMED_FAULTS, h->records, h->nrecords * sizeof(struct fl_fault_record));
		atomic_fetch_add(&h->stats.write_wait_ns, fl_now_ns() - start);
		atomic_fetch_add(&h->stats.records_written, h->nrecords);
		h->nrecords = 0;
	}
	publish_flushed_counts(h);
}

void fl_trace_append(struct fl_handler *h, const struct fl_fault_record *rec)
{
	if (h->nrecords == 0)
		h->buffered_since_ns = fl_now_ns();
	h->records[h->nrecords++] = *rec;
	if (h->nrecords == FL_TRACE_CHUNK)
		fl_trace_flush(h);
}

void fl_trace_flush_if_old(struct fl_handler *h, uint64_t age_ns)
{
	if (h->nrecords && fl_now_ns() - h->buffered_since_ns >= age_ns)
		fl_trace_flush(h);
}

/* Reads a small /proc file into buf (NUL-terminated); returns its length. */
static size_t read_proc(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = fd < 0 ? 0 : fl_sys_read_all(fd, buf, cap - 1);
	if (fd >= 0)
		fl_sys_close(fd);
	buf[len] = '\0';
	return len;
}

/* Creates a JSON file once, in the process's new directory: never clobbers, never follows. */
static void write_json_file(struct fl_runtime *rt, const char *name, struct fl_buf *b)
{
	int fd = fl_trace_create_file(rt, name, O_EXCL);
	if (fd < 0)
		return;
	int err = fl_write_all(fd, b->p, b->len, NULL);
	if (err)
		fl_log_errno(name, err);
	fl_sys_close(fd);
}

/* Rewrites stats.json in place, in the space reserved at start (no new blocks needed). */
static void write_stats_file(struct fl_runtime *rt, struct fl_buf *b)
{
	size_t written = 0;
	int err = 0;
	if (rt->stats_fd < 0)
		return;
	while (written < b->len) {
		ssize_t w = fl_sys_pwrite(rt->stats_fd, b->p + written, b->len - written, (off_t)written);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			err = w < 0 ? errno : EIO;
			break;
		}
		written += (size_t)w;
	}
	if (err || ftruncate(rt->stats_fd, (off_t)b->len) < 0) {
		fl_log_errno("writing stats.json", err ? err : errno);
		return;
	}
	if (!rt->stats_named) {
		char from[PATH_MAX], to[PATH_MAX];
		struct fl_buf f = { from, 0, sizeof(from) }, t = { to, 0, sizeof(to) };
		fl_buf_str(&f, rt->dir), fl_buf_str(&f, "/.stats.json");
		fl_buf_str(&t, rt->dir), fl_buf_str(&t, "/" FL_FILE_NAME_STATS);
		if (rename(from, to) < 0)
			fl_log_errno("rename(.stats.json, stats.json)", errno);
		else
			rt->stats_named = true;
	}
}

static char meta_buf[65536];

void fl_trace_write_meta(struct fl_runtime *rt)
{
	static char cmdline[16384], exe[PATH_MAX];
	struct fl_buf b = { meta_buf, 0, sizeof(meta_buf) };
	size_t n = read_proc("/proc/self/cmdline", cmdline, sizeof(cmdline));
	ssize_t elen = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[elen > 0 ? elen : 0] = '\0';

	fl_buf_str(&b, "{\n  \"" FL_META_FORMAT_VERSION "\": ");
	fl_buf_u64(&b, FL_TRACE_VERSION);
	fl_buf_json_key_u64(&b, FL_META_PID, (uint64_t)getpid());
	fl_buf_json_key_u64(&b, FL_META_PPID, (uint64_t)getppid());
	fl_buf_json_key_str(&b, FL_META_EXE, exe);
	fl_buf_json_key(&b, FL_META_CMDLINE);
	fl_buf_str(&b, "[");
	for (size_t off = 0; off < n; off += strlen(cmdline + off) + 1) {
		if (off)
			fl_buf_str(&b, ", ");
		fl_buf_json_str(&b, cmdline + off);
	}
	fl_buf_str(&b, "]");
	fl_buf_json_key_u64(&b, FL_META_LOCAL_LIMIT, rt->local_limit_pages * FL_PAGE_SIZE);
	fl_buf_json_key_u64(&b, FL_META_MAX_BYTES, rt->max_bytes);
	fl_buf_json_key_u64(&b, FL_META_HANDLERS, rt->nhandlers);
	fl_buf_json_key_str(&b, FL_META_POLICY, rt->policy == FL_POLICY_FIFO ? "fifo" : "clock");
	fl_buf_json_key_u64(&b, FL_META_FILL_AHEAD_PAGES, rt->fill_ahead);
	fl_buf_json_key_str(&b, FL_META_FAR, rt->far->name);
	fl_buf_json_key_u64(&b, FL_META_PAGE_SIZE, FL_PAGE_SIZE);
	fl_buf_json_key_u64(&b, FL_META_REGION_START, (uint64_t)(uintptr_t)rt->region);
	fl_buf_json_key_u64(&b, FL_META_REGION_SIZE, rt->region_pages * FL_PAGE_SIZE);
	fl_buf_json_key_u64(&b, FL_META_START_NS, rt->start_ns);
	fl_buf_json_key_u64(&b, FL_META_UFFD_FEATURES, rt->features);
	fl_buf_json_key_u64(&b, FL_META_WRITE_PROTECT, rt->write_protect);
	fl_buf_json_key_u64(&b, FL_META_STACK_DEPTH, rt->stack_depth);
	fl_buf_json_key_u64(&b, FL_META_SAMPLE, rt->sample);
	fl_buf_json_key_u64(&b, FL_META_ALLOC_SAMPLE, rt->alloc_sample);
	fl_buf_json_key_str(&b, FL_META_ALLOC_LOG, rt->alloc_log_full ? "full" : "sampled");
	fl_buf_json_key_u64(&b, FL_META_ALLOC_SAMPLE_BYTES, rt->alloc_log_full ? 0 : rt->alloc_sample_bytes);
	fl_buf_json_key_u64(&b, FL_META_STACK_SIGNAL, (uint64_t)rt->stack_signal);
	fl_buf_json_key(&b, FL_META_PMU_EVENTS);
	fl_buf_str(&b, "[");
	for (const char *p = rt->pmu_names; *p;) {
		char name[64];
		size_t n = 0;
		while (*p && *p != ',' && n + 1 < sizeof(name))
			name[n++] = *p++;
		name[n] = '\0';
		if (*p == ',')
			p++;
		fl_buf_json_str(&b, name);
		if (*p)
			fl_buf_str(&b, ", ");
	}
	fl_buf_str(&b, "]");
	fl_buf_json_key_str(&b, FL_META_PMU_KIND, rt->pmu_count == 0 ? "none" : rt->pmu_hardware ? "hardware" : "software");
	fl_far_json_meta(rt, &b); /* far store settings (far_store.c) */
	fl_timeline_json_meta(rt, &b); /* counter timeline settings (timeline.c) */
	fl_probe_json_meta(rt, &b); /* access prober settings (probe.c) */
	fl_buf_str(&b, "\n}\n");
	write_json_file(rt, FL_FILE_NAME_META, &b);
}

/* Where the process's CPU went: the handlers', the evictor's, and (read last, so it is never
 * less than their sum) the whole process's. */
static void json_cpu_split(struct fl_runtime *rt, struct fl_buf *b)
{
	uint64_t handlers, evictor;
	fl_runtime_worker_cpu_ns(rt, &handlers, &evictor);
	fl_buf_json_key_u64(b, FL_STATS_CPU_NS, fl_sys_cpu_ns_of(-1));
	fl_buf_json_key_u64(b, FL_STATS_HANDLER_CPU_NS, handlers);
	fl_buf_json_key_u64(b, FL_STATS_EVICTOR_CPU_NS, evictor);
}

static void write_stats(struct fl_runtime *rt, const char *exit_reason)
{
	static char buf[8192];
	struct fl_buf b = { buf, 0, sizeof(buf) };
	uint64_t total = 0, first = 0, refault = 0, soft = 0, conc = 0, wp = 0, written = 0, dropped = 0, waits = 0;
	uint64_t write_wait = 0, sampled = 0, wakeups = 0, access_samples = 0, filled = 0, unused = 0;
	int write_errno = 0;

	for (unsigned i = 0; i < rt->nhandlers; i++) {
		struct fl_handler_stats *s = &rt->handlers[i].stats;
		struct fl_flushed_counts *f = &rt->handlers[i].flushed; /* the faults and their records */
		total += atomic_load(&f->faults_total);
		first += atomic_load(&f->first_touch);
		refault += atomic_load(&f->refault);
		soft += atomic_load(&f->soft);
		conc += atomic_load(&f->concurrent);
		access_samples += atomic_load(&f->access_samples);
		wp += atomic_load(&s->wp_faults);
		written += atomic_load(&s->records_written); /* changes only at a flush */
		dropped += atomic_load(&s->records_dropped);
		waits += atomic_load(&s->busy_waits);
		write_wait += atomic_load(&s->write_wait_ns);
		sampled += atomic_load(&s->sampled_stacks);
		wakeups += atomic_load(&s->wakeups);
		filled += atomic_load(&s->filled_ahead);
		unused += atomic_load(&s->filled_unused);
		if (rt->handlers[i].last_write_errno)
			write_errno = rt->handlers[i].last_write_errno;
	}
	fl_buf_str(&b, "{\n  \"" FL_STATS_PID "\": ");
	fl_buf_u64(&b, (uint64_t)getpid());
	fl_buf_json_key_u64(&b, FL_STATS_FAULTS_TOTAL, total);
	fl_buf_json_key_u64(&b, FL_STATS_FAULTS_FIRST_TOUCH, first);
	fl_buf_json_key_u64(&b, FL_STATS_FAULTS_REFAULT, refault);
	fl_buf_json_key_u64(&b, FL_STATS_FAULTS_SOFT, soft);
	fl_buf_json_key_u64(&b, FL_STATS_FAULTS_CONCURRENT, conc);
	fl_buf_json_key_u64(&b, FL_STATS_WRITE_PROTECT_FAULTS, wp);
	fl_buf_json_key_u64(&b, FL_STATS_FILLED_AHEAD_PAGES, filled);
	fl_buf_json_key_u64(&b, FL_STATS_FILLED_AHEAD_UNUSED, unused);
	fl_buf_json_key_u64(&b, FL_STATS_EVICTIONS, atomic_load(&rt->evict.evictions));
	fl_buf_json_key_u64(&b, FL_STATS_WRITEBACKS, atomic_load(&rt->evict.writebacks));
	fl_buf_json_key_u64(&b, FL_STATS_EVICTIONS_CLEAN, atomic_load(&rt->evict.evictions_clean));
	fl_buf_json_key_u64(&b, FL_STATS_SOFT_EVICTIONS, atomic_load(&rt->evict.soft_evictions));
	fl_buf_json_key_u64(&b, FL_STATS_EVICTION_ROUNDS, atomic_load(&rt->evict.rounds));
	fl_buf_json_key_u64(&b, FL_STATS_EVICT_MOVED, atomic_load(&rt->evict.moved));
	fl_buf_json_key_u64(&b, FL_STATS_EVICT_COPIED, atomic_load(&rt->evict.copied));
	fl_buf_json_key_u64(&b, FL_STATS_EVICT_DROPPED, atomic_load(&rt->evict.dropped));
	fl_buf_json_key_u64(&b, FL_STATS_EVICTOR_ROUNDS, atomic_load(&rt->evict.evictor_rounds));
	fl_buf_json_key_u64(&b, FL_STATS_EVICT_INLINE_ROUNDS, atomic_load(&rt->evict.inline_rounds));
	fl_buf_json_key_u64(&b, FL_STATS_EVICT_CLOCK_DIRECT, atomic_load(&rt->evict.clock_direct));
	fl_buf_json_key_u64(&b, FL_STATS_CLOCK_SWEEPS_TRIAL, atomic_load(&rt->evict.sweeps_trial));
	fl_buf_json_key_u64(&b, FL_STATS_CLOCK_SWEEPS_DIRECT, atomic_load(&rt->evict.sweeps_direct));
	fl_buf_json_key_u64(&b, FL_STATS_CLOCK_CHOSE_TRIAL, atomic_load(&rt->evict.adapt_chose_trial));
	fl_buf_json_key_u64(&b, FL_STATS_CLOCK_CHOSE_DIRECT, atomic_load(&rt->evict.adapt_chose_direct));
	fl_buf_json_key_u64(&b, FL_STATS_BUSY_WAITS, waits);
	fl_buf_json_key_u64(&b, FL_STATS_HANDLER_WAKEUPS, wakeups);
	fl_buf_json_key_u64(&b, FL_STATS_READERS_CHOSE_ONE, atomic_load(&rt->readers.chose_one));
	fl_buf_json_key_u64(&b, FL_STATS_READERS_CHOSE_ALL, atomic_load(&rt->readers.chose_all));
	fl_buf_json_key_u64(&b, FL_STATS_READERS_GAVE_UP_ONE, atomic_load(&rt->readers.gave_up_one));
	fl_buf_json_key_u64(&b, FL_STATS_TRACE_WRITE_WAIT_NS, write_wait);
	json_cpu_split(rt, &b);
	fl_buf_json_key_u64(&b, FL_STATS_RESIDENT_AT_EXIT, atomic_load(&rt->local_pages) * FL_PAGE_SIZE);
	fl_buf_json_key_u64(&b, FL_STATS_PEAK_RESIDENT, atomic_load(&rt->peak_local_pages) * FL_PAGE_SIZE);
	fl_buf_json_key_u64(&b, FL_STATS_LOCAL_LIMIT, rt->local_limit_pages * FL_PAGE_SIZE);
	fl_buf_json_key_u64(&b, FL_STATS_MAX_BYTES, rt->max_bytes);
	fl_buf_json_key_u64(&b, FL_STATS_HEAP_AT_EXIT, atomic_load(&rt->heap_bytes));
	fl_buf_json_key_u64(&b, FL_STATS_PEAK_HEAP, atomic_load(&rt->peak_heap_bytes));
	uint64_t frames_lost = fl_frames_dropped(FL_FRAMED_FAULTS);
	written -= frames_lost < written ? frames_lost : written;
	dropped += frames_lost;
	if (!write_errno)
		write_errno = fl_frames_write_errno();
	fl_buf_json_key_u64(&b, FL_STATS_RECORDS_WRITTEN, written);
	fl_buf_json_key_u64(&b, FL_STATS_RECORDS_DROPPED, dropped);
	int side_errno = fl_side_write_errno();
	if (!write_errno)
		write_errno = side_errno;
	fl_buf_json_key_str(&b, FL_STATS_RECORDS_DROPPED_REASON, write_errno ? strerrordesc_np(write_errno) : "");
	fl_buf_json_key_u64(&b, FL_STATS_SIDE_BYTES_DROPPED,
			    fl_side_bytes_dropped() +
				    fl_frames_dropped(FL_FRAMED_CONTEXTS) * sizeof(struct fl_fault_context) +
				    fl_frames_dropped(FL_FRAMED_EVICTIONS) * sizeof(struct fl_evict_record));
	fl_buf_json_key_u64(&b, FL_STATS_CONTEXTS_WRITTEN, atomic_load(&rt->contexts_written));
	fl_buf_json_key_u64(&b, FL_STATS_STACKS_FROM_SAMPLES, sampled);
	fl_buf_json_key_u64(&b, FL_STATS_STACK_SIGNALS_SENT, atomic_load(&rt->stack_signals_sent));
	fl_buf_json_key_u64(&b, FL_STATS_STACK_SIGNALS_FAILED, atomic_load(&rt->stack_signals_failed));
	fl_buf_json_key_u64(&b, FL_STATS_LATE_STACKS_DROPPED, atomic_load(&rt->late_stacks));
	fl_buf_json_key_u64(&b, FL_STATS_ALLOC_EVENTS, atomic_load(&rt->alloc_events));
	if (rt->check_states)
		fl_buf_json_key_u64(&b, FL_STATS_PAGE_STATE_MISMATCHES, rt->state_mismatches);
	fl_far_json_stats(rt, &b); /* far traffic, read-ahead (far_store.c) */
	fl_probe_json_stats(rt, &b, access_samples); /* access samples, the --mrc sampling rate (probe.c) */
	fl_buf_json_key_u64(&b, FL_STATS_WALL_NS, fl_now_ns() - rt->start_ns);
	fl_buf_json_key_str(&b, FL_STATS_EXIT, exit_reason);
	fl_buf_str(&b, "\n}\n");
	write_stats_file(rt, &b);
}

/* stats.json, written at shutdown and again by handlers that serve faults after it */
static _Atomic int stats_busy;

void fl_trace_write_stats(struct fl_runtime *rt)
{
	for (int tries = 0; atomic_exchange(&stats_busy, 1); tries++) {
		if (tries == 1000)
			return; /* a fatal signal interrupted the writer: it will not finish */
		sched_yield();
	}
	write_stats(rt, rt->exit_reason);
	atomic_store(&stats_busy, 0);
}
