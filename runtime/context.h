/* context.h: the runtime's one context, struct fl_runtime (fl_rt, defined in context.c), and the
 * types embedded in it. Types only: every subsystem reads the fields it owns from here, and its
 * functions are declared in its own header (evict.h, fault.h, trace_writer.h, ...). It includes
 * leaves only (the raw system calls, clock, diagnostics, the stream and far-store state types),
 * so any file of the runtime may include it without a circle; runtime.c, the lifecycle, is the
 * one file above every subsystem.
 *
 * The runtime owns one region of virtual memory (the program's heap), registered with
 * userfaultfd. Every page of the region has one state byte (pages.h). Handler threads
 * (handler.c) read fault messages and serve them (fault.c); when local memory is at its
 * limit they evict pages (evict.c) into the far store (far_store.h: the in-process mirror of
 * the region, or a backend behind it). Fault records go through per-handler buffers to the
 * trace files (trace_writer.c). The shim sees none of this: it calls runtime_api.h. */
#ifndef FL_CONTEXT_H
#define FL_CONTEXT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>

#include "faultline/evict_sizes.h"
#include "faultline/trace.h"
#include "stream.h"
#include "far_state.h"
#include "sys.h"
#include "clock.h"
#include "fatal.h"
#include "internal_thread.h"
#include "runtime_api.h"

struct fl_far_store;
struct fl_rap_online;
struct fl_timeline;
struct fl_probe;

#define FL_MAX_HANDLERS 16
#define FL_MSG_BATCH 64          /* uffd messages read per read(2) */
#define FL_MIN_LOCAL_PAGES 256   /* -L below 1 MiB is refused */
#define FL_MAX_STACK_DEPTH 256   /* --stack-depth is capped here */

enum fl_policy { FL_POLICY_CLOCK = 0, FL_POLICY_FIFO = 1 };

/* Counters owned by one handler thread (written only by it; read at exit). */
struct fl_handler_stats {
	_Atomic uint64_t faults_total, first_touch, refault, soft, concurrent;
	_Atomic uint64_t access_samples;     /* record --mrc, --sample-accesses: records, not faults */
	_Atomic uint64_t wp_faults;          /* write-protect messages (dirty tracking), not faults */
	_Atomic uint64_t records_written, records_dropped;
	_Atomic uint64_t busy_waits;         /* messages that waited for a page in transition */
	_Atomic uint64_t write_wait_ns;      /* time spent writing records out (back-pressure) */
	_Atomic uint64_t sampled_stacks;     /* stacks taken from perf samples (no signal) */
	_Atomic uint64_t wakeups;            /* reads that returned messages (a blocking read never returns none) */
	_Atomic uint64_t filled_ahead;       /* pages zero-filled ahead of a first-touch write (fill_ahead.c): no fault */
	_Atomic uint64_t filled_unused;      /* of them, faulted on later still zero: that fault is their first touch */
};

/* A handler's counts as of its last flush (trace_writer.c): every fault they count has its record in
 * the trace's hands. stats.json reports these, so it never counts a fault whose record a handler
 * had not flushed when the process ended (exit_group kills handlers wherever they are). */
struct fl_flushed_counts {
	_Atomic uint64_t faults_total, first_touch, refault, soft, concurrent, access_samples;
};

struct fl_handler {
	struct fl_runtime *rt;
	char *bounce;                        /* one page: a far page on its way in */
	pthread_t thread;
	unsigned index;
	int cpu;                             /* pinned CPU, or -1 */
	_Atomic int tid;                     /* its thread id once running (the handler signal's target); 0 = none */
	bool serving_startup;                /* handler.c: served by the thread starting it (runtime threads' faults) */
	struct fl_handler_stats stats;
	struct fl_flushed_counts flushed;
	/* trace buffer, owned by the handler thread */
	struct fl_stream contexts, stacks;   /* fault contexts and stacks taken from samples */
	struct fl_stream evictions;          /* eviction events of its inline evictions (evict_log.c) */
	struct fl_fault_record *records;
	unsigned nrecords;
	uint64_t buffered_since_ns;          /* when records[0] was appended (trace_writer.c) */
	_Atomic uint64_t flush_request, flush_done;
	int last_write_errno;
};

/* Eviction statistics (updated under the eviction lock or atomically). */
struct fl_evict_stats {
	_Atomic uint64_t evictions;          /* pages that left local memory for the far store */
	_Atomic uint64_t writebacks;         /* of those, pages whose content was written */
	_Atomic uint64_t evictions_clean;    /* of those, dropped because the far copy was valid */
	_Atomic uint64_t soft_evictions;     /* pages unmapped on trial (kept locally) */
	_Atomic uint64_t rounds;             /* eviction rounds */
	_Atomic uint64_t skipped_noaccess;   /* victims skipped because the program made them PROT_NONE */
	_Atomic uint64_t moved;              /* pages unmapped by UFFDIO_MOVE into the mirror */
	_Atomic uint64_t copied;             /* pages unmapped by memcpy + MADV_DONTNEED (fallback) */
	_Atomic uint64_t dropped;            /* clean pages unmapped by MADV_DONTNEED (far copy valid) */
	_Atomic uint64_t evictor_rounds;     /* rounds of the evictor thread (reserve refilled) */
	_Atomic uint64_t inline_rounds;      /* faults that found no free page and evicted themselves */
	_Atomic uint64_t clock_direct;       /* pages the clock evicted to the far store without a trial */
	_Atomic uint64_t sweeps_trial;       /* clock sweeps that unmapped on trial */
	_Atomic uint64_t sweeps_direct;      /* clock sweeps that evicted directly */
	_Atomic uint64_t adapt_chose_trial;  /* adaptive clock: choices of trial unmaps after measuring */
	_Atomic uint64_t adapt_chose_direct; /* ... and of direct eviction */
};

/* How many handlers read the userfaultfd (readers.c): windows measured with all reading, one,
 * all again, then the cheaper kept for a while. */
enum fl_readers_phase {
	FL_READERS_TRY_ALL, FL_READERS_TRY_ONE, FL_READERS_TRY_ALL_AGAIN, FL_READERS_KEEP_ALL, FL_READERS_KEEP_ONE
};
struct fl_readers_cost {
	double cpu, wall;                    /* process CPU ns and wall ns per message served; 0 = too few */
};
struct fl_readers {
	_Atomic unsigned reading;            /* handlers 0 .. reading-1 read; the others sleep */
	_Atomic uint64_t chose_one, chose_all; /* decisions taken after measuring both */
	_Atomic uint64_t gave_up_one;        /* one reader left early: it cost more than all had */
	/* the rest is handler 0's */
	enum fl_readers_phase phase;
	uint64_t window_start_ns, window_cpu_ns, window_messages;
	uint64_t keep_start_ns, keep_ns;     /* when the KEEP phase began, and how long it lasts */
	enum fl_readers_phase last_choice;   /* KEEP_ALL or KEEP_ONE (TRY_ALL: none yet) */
	struct fl_readers_cost cost_all;     /* with all reading (after a choice: the mean of both windows) */
	struct fl_readers_cost cost_one;
};

/* Ring of page numbers: the FIFO order of the fifo policy, and the order of the soft pool. */
struct fl_page_ring {
	uint32_t *pages;
	uint32_t *epochs;
	size_t cap, head, tail;              /* entries in [head, tail), indices modulo cap */
};

struct fl_runtime {
	/* configuration */
	int pid;                             /* process the runtime belongs to */
	uint32_t uid;                        /* its real user id (for the signals it sends itself) */
	char top_dir[PATH_MAX];              /* FAULTLINE_DIR, read once at start (a forked child must
	                                        not read the program's environment: it may be evicted) */
	bool check_states;                   /* FAULTLINE_CHECK_STATES */
	int stats_fd;                        /* stats.json, its space reserved at start */
	bool stats_named;                    /* renamed from .stats.json to stats.json */
	char dir[PATH_MAX];                  /* this process's trace directory */
	size_t local_limit_pages;            /* 0 = unlimited */
	size_t max_bytes;
	unsigned nhandlers;
	enum fl_policy policy;
	size_t soft_target_pages;            /* size of the trial-eviction pool (clock) */

	/* the region and its far copy */
	char *region;
	size_t region_pages;
	char *mirror;                        /* local copies of unmapped pages: page i at mirror + i * PAGE */
	const struct fl_far_store *far;      /* where evicted pages go (far_store.h) */
	struct fl_far_state farst;           /* its generic state: versions, latency, prefetch */
	_Atomic uint8_t *state;              /* one byte per page, see pages.h */
	uint32_t *epoch;                     /* per page: incremented at every install */

	/* userfaultfd */
	int uffd;
	uint64_t features;

	/* local memory accounting */
	_Atomic size_t local_pages;          /* resident + soft pages */
	_Atomic size_t peak_local_pages;
	_Atomic size_t soft_pages;           /* of local_pages, those unmapped on trial */
	bool write_protect;                  /* the kernel supports uffd write-protect (dirty tracking) */

	/* eviction */
	pthread_mutex_t evict_lock;          /* held by one handler at a time; app threads never take it */
	size_t clock_hand;                   /* page index, under evict_lock */
	bool clock_trial;                    /* the clock unmaps on trial now (else evicts directly) */
	uint8_t *rescue;                     /* evict.c, adaptive clock: per page, rescued since its last
	                                        trial / its trial follows a rescue (under the page's lock) */
	uint32_t *arrived;                   /* evict.c, adaptive clock: per page, `installs` at its first
	                                        touch; came back (refault, soft fault): as if long before */
	_Atomic uint32_t installs;           /* pages installed so far (wraps) */
	uint32_t young_installs;             /* evict.c: arrivals the direct sweep passes over */
	_Atomic uint32_t first_installs;     /* of `installs`, first touches (wraps) */
	struct fl_fresh_phase {              /* evict.c: are first touches most installs? under evict_lock */
		uint32_t installs, first;            /* the counters when the phase was last judged */
		bool fresh;                          /* yes: the direct sweep spares young pages */
	} phase;
	struct fl_clock_adapt {              /* evict.c: the adaptive clock's counts, of pages taking trials */
		uint64_t trials, trials_repeat;       /* under evict_lock */
		_Atomic uint64_t rescues, rescues_repeat; /* soft faults (handlers) */
	} adapt;
	struct fl_page_ring fifo;            /* pages in fault-in order (fifo policy), under evict_lock */
	struct fl_page_ring soft;            /* soft (trial-evicted) pages, oldest first, under evict_lock */
	int move_uffd;                       /* the uffd the mirror is registered with (a MOVE target); -1 =
	                                        not yet, -2 = MOVE unusable (memcpy), under evict_lock */
	size_t reserve_low, reserve_high;    /* free local pages: the evictor is woken below low, refills to high */
	struct fl_evictor {                  /* evict.c: the thread that keeps the reserve */
		pthread_t thread;
		int wake_fd;                 /* eventfd written by faults that see the reserve low; -1 = off */
		_Atomic bool sleeping;
		bool off;                    /* FAULTLINE_EVICT_INLINE=1 */
		int pidfd;                   /* this process, for batched drops (process_madvise); -1 = none */
		_Atomic int tid;             /* its thread id once running (for its CPU time); 0 = none */
	} evictor;
	struct fl_evict_stats evict;
	struct fl_stream evict_log;          /* evict_log.c: the evictor thread's eviction events */

	/* virtual address allocator (region.c), taken by app threads only */
	pthread_mutex_t va_lock;
	struct fl_extent *free_extents;
	size_t nfree, free_cap;
	size_t va_high_pages;                /* highest page ever handed out + 1 */
	_Atomic size_t heap_bytes, peak_heap_bytes;
	_Atomic bool exhausted_reported;

	/* stacks, PMU context, allocations (thread_slot.c, stacks.c, pmu.c, fault_context.c, alloc_log.c) */
	unsigned stack_depth;                /* frames per stack */
	unsigned sample;                     /* a stack for one fault in `sample` */
	unsigned fill_ahead;                 /* record --fill-ahead: fresh pages zero-filled after a first-touch write */
	uint8_t *filled;                     /* fill_ahead.c: per page, how a fill left it (0 = not filled, or faulted on since) */
	_Atomic size_t fill_last_write;      /* fill_ahead.c: the page of the last first-touch write served */
	unsigned alloc_sample;               /* a stack for one allocation in `alloc_sample` */
	int stack_signal;                    /* real-time signal that asks a thread for its stack; 0 = off */
	int maps_fd;
	_Atomic uint32_t next_alloc_id;
	_Atomic uint64_t stack_signals_sent, stack_signals_failed, contexts_written, late_stacks;
	_Atomic uint64_t alloc_events;       /* allocation events logged (sampled or full) */
	bool alloc_log_full;                 /* --alloc-log full: every event, to allocs.zst */
	uint64_t alloc_sample_bytes;         /* mean bytes between sampled allocation events */
	int sites_fd;                        /* sites: per-site aggregates, rewritten every ~100 ms and at shutdown */
	int allocs_zst_fd;                   /* allocs.zst (full log), or -1 */
	uintptr_t own_text_start, own_text_end;  /* libfaultline's code: skipped in stacks */
	unsigned pmu_count;                  /* events read with each fault context */
	uint32_t pmu_type[FL_PMU_MAX];
	uint64_t pmu_config[FL_PMU_MAX];
	char pmu_names[256];                 /* comma-separated, as recorded in meta.json */
	bool pmu_hardware;

	/* handlers and trace */
	struct fl_handler handlers[FL_MAX_HANDLERS];
	struct fl_readers readers;
	_Atomic bool first_handler_reads;    /* handler.c: handler 0 may read (serve_until_first_handler) */
	uint64_t sample_counter[FL_MAX_HANDLERS];
	_Atomic uint64_t next_seq;
	int faults_fd;
	_Atomic bool faults_failed;          /* a write failed: the file gets no more records */
	struct fl_file_header file_header;
	uint64_t start_ns;
	uint64_t thrash_warn_after_s;        /* thrash_warn.c: not before this many seconds (0: never) */
	uint64_t thrash_warn_rate;           /* thrash_warn.c: refaults a second, at least */
	bool thrash_warned;                  /* thrash_warn.c: said so (reset in a forked child) */
	_Atomic bool final_mode;             /* after shutdown: records written at once */
	_Atomic bool stopping;               /* the process is dying: handlers serve no more faults */
	char exit_reason[40];
	uint64_t state_mismatches;           /* FAULTLINE_CHECK_STATES=1: pages whose state is wrong */

	struct fl_rap_online *rap_online;    /* rap_online.c: per-handler RAP trees; NULL = off */
	struct fl_timeline *timeline;        /* timeline.c: the counter sampler; NULL = off */
	struct fl_probe *probe;              /* probe.c: the access prober (--mrc, --sample-accesses); NULL = off */
};

/* Free range of the region, in pages. */
struct fl_extent {
	size_t first, count;
};

extern struct fl_runtime fl_rt; /* context.c */

/* CPU time used so far by the threads that serve faults: the handlers' (summed) into *handlers, the
 * evictor's into *evictor (0 for a thread not started). */
void fl_runtime_worker_cpu_ns(struct fl_runtime *rt, uint64_t *handlers, uint64_t *evictor);

#define FL_LATE_STACK_MS 200 /* a stack signal taken later than this had been blocked: no stack */

#endif
