/* report.h: `faultline report` — the faults of a recording ranked by callsite, function, allocation
 * site, thread or process, as a table, CSV or JSON. Shared by the verb's files:
 *   report.c         options, the verb, the run from recording to output;
 *   report_build.c   the aggregation: one pass over the faults in time order (rows), one over the
 *                    contexts (PMU deltas), and, with --locality, one more for the shown rows;
 *   report_output.c  the header, the table, CSV and JSON;
 *   report_ranges.c  the hot address ranges (RAP, ranges.h) under the table and, with --ranges, in JSON.
 *
 * Reading. report opens its recording for streaming (fl_recording_open_stream, trace_reader.h): the
 * faults and contexts are never held; pass 1 walks them in time order from the files (fault_stream.h)
 * and gathers there what the held path takes in later passes over held faults: the PMU deltas (per
 * thread, in time order, which is each thread's seq order; checked), the service times and virtual
 * times of the selected faults, and --tid's threads. The hot ranges walk the faults again as streams.
 * Recordings the streaming open does not take (format 1, a cut trace, no stats.json, ...), --locality
 * and --time virtual use the held recording (every fault in memory, and the PMU pass over the held
 * contexts); a stream whose thread order check fails redoes the run held. Both give the same output.
 *
 * Cost: per fault a hash lookup of its row and a memoized callsite of its stack, plus one
 * symbolization per distinct PC of the frames up to each distinct stack's callsite (the whole stack
 * only for the JSON rows' stacks); the streamed faults are decoded once per walk (the open's check,
 * pass 1, the callsites' first use when the process has several maps snapshots, the ranges' clip
 * and attribution, and a last walk for the exact service-time percentiles: the high 16 bits are
 * counted in pass 1, the low bits of the percentiles' buckets then). Memory, streamed: per distinct
 * (row, stack) pair a map entry, 512 KiB of service-time counters, and the readers' buffers (one
 * frame per open stream and a reorder window), nothing per fault; held: the recording
 * (trace_reader.h) and 4 bytes per fault (its row). */
#ifndef FAULTLINE_TOOLS_REPORT_H
#define FAULTLINE_TOOLS_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <regex.h>

#include "callsite.h"
#include "fault_time.h"
#include "locality.h"
#include "ranges.h"
#include "report_map.h"
#include "report_progress.h"
#include "trace_reader.h"

enum report_by { REPORT_BY_CALLSITE, REPORT_BY_FUNCTION, REPORT_BY_ALLOC, REPORT_BY_THREAD, REPORT_BY_PROCESS };
enum report_format { REPORT_FORMAT_TABLE, REPORT_FORMAT_CSV, REPORT_FORMAT_JSON };

/* Names of the rows that are not source locations. */
#define REPORT_UNALLOCATED "<unallocated>"
#define REPORT_ALLOC_NO_STACK "<allocation without stack>"

struct report_options {
	const char *dir;          /* NULL: the newest faultline-* directory here */
	enum report_by by;
	unsigned kind;            /* 0: every kind, else one enum fl_fault_kind */
	uint64_t top;             /* rows shown; 0: all */
	uint32_t pid;             /* 0: every process */
	uint64_t from_ns, to_ns;  /* window on the time axis: [from_ns, to_ns) */
	enum fl_time_axis time_axis; /* --time: the axis of from_ns/to_ns (wall: recording time) */
	enum report_format format;
	bool locality;            /* spatial and temporal scores per row */
	bool default_skip;        /* the default skip list applies (false with --no-skip) */
	char **skip;              /* --skip patterns (argv strings) */
	size_t nskip;
	bool progress;            /* a progress line when stderr is a terminal */
	const char *progress_verb; /* the verb the progress line names (NULL: "report") */
	uint64_t ranges;          /* hot address ranges shown under the table (--ranges N; 0: none) */
	bool ranges_given;        /* --ranges was given: JSON becomes {"rows": [...], "ranges": [...]} */
	uint32_t *tids;           /* --tid: only faults of these threads (ntids 0: every thread) */
	size_t ntids;
	const char *symbol;       /* --symbol REGEX as given, NULL: no symbol filter */
	regex_t symbol_re;        /* compiled when symbol is set: a fault is kept when any frame of
				   * its stack (function, else binary+0xOFFSET label) matches, the
				   * stack named under the maps snapshot in force at the fault's time */
};

/* Hot address ranges of the selected faults (report_ranges.c): RAP's (ranges.h), shown under the
 * table, and in JSON when --ranges is given. */
struct report_ranges {
	bool computed;
	struct ranges_options o;
	struct ranges_result res;
	struct ranges_ref *top;   /* the shown ranges, most exclusive faults first */
	size_t ntop, total;       /* shown; all hot ranges but the processes' root ranges */
};

/* At most this many distinct PMU event names over the processes of a recording. */
#define REPORT_MAX_EVENTS 8

struct report_event {
	char name[64];            /* as meta.json names it ("task-clock") */
	bool nanoseconds;         /* a clock event (task-clock, cpu-clock): shown in µs */
};

/* One row of the report. */
struct report_row {
	uint32_t key_loc;         /* callsite, function or allocation site (FL_NONE for thread/process) */
	uint32_t loc;             /* the location shown: key_loc, else the row's most common callsite */
	uint64_t loc_count;       /* faults of the row at loc (thread/process/function rows) */
	uint32_t pid, tid;        /* thread rows: both; process rows: pid */
	uint32_t proc;            /* process rows: index into rec->procs */
	uint32_t order;           /* creation order: the rank among rows of equal faults */
	uint64_t faults;
	uint64_t kinds[FL_FAULT_KIND_MAX + 1]; /* by enum fl_fault_kind (index 0: other values) */
	uint64_t reads, writes;
	uint64_t allocs;          /* alloc rows: distinct allocations hit */
	bool has_sites;           /* alloc rows: the sites files name this row's site(s): */
	uint64_t site_allocs;     /*   objects allocated there over the run (exact) */
	uint64_t site_bytes;      /*   bytes allocated there */
	uint64_t site_objects_faulted; /* objects of the site that took at least one fault (runtime count) */
	uint64_t site_faults;     /*   faults on objects of the site (runtime count, every kind) */
	uint64_t pmu_sum[REPORT_MAX_EVENTS];    /* Σ delta of each event over the row's faults */
	uint64_t pmu_faults[REPORT_MAX_EVENTS]; /* faults the deltas cover (each context's: record -s N) */
	uint32_t stack_proc, stack;             /* most common fault stack (index), FL_NONE: none, */
	uint32_t stack_snapshot;                /*   with the maps snapshot its faults name it under */
	uint64_t stack_count;                   /*   (faults of one stack at times of two snapshots
						 *   count apart: each pair is a stack as named) */
	uint32_t alloc_stack_proc, alloc_stack; /* alloc rows: most common allocation stack, */
	uint32_t alloc_stack_snapshot;          /*   and the snapshot of its allocations' time */
	uint64_t alloc_stack_count;
	bool has_locality;
	struct locality_scores locality;
};

/* The two times of a fault the header summarizes (report_records.c): its service time (the
 * record's service_ns: message read to wake-up) and its wait (wait_ns: fault to message read). */
enum report_latency { REPORT_SERVICE, REPORT_WAIT, REPORT_LATENCIES };

struct latency_summary {
	uint64_t n;               /* selected faults that have this time */
	uint64_t p50, p90, p99, max; /* ns */
};

/* The fault service and eviction summary of the header (report_records.c). */
struct report_records {
	struct latency_summary latency[REPORT_LATENCIES];
	uint64_t virtual_n;       /* selected faults with a virtual time */
	uint64_t virtual_max;     /* the latest of those virtual times (ns): the longest thread CPU time */
	bool evictions_present;   /* some selected process has an evictions file */
	uint64_t evictions[FL_EVICT_DECISION_MAX + 1][2]; /* by enum fl_evict_decision, [clean, dirty] */
	uint64_t evictions_inline;  /* of all, taken by a fault handler (no free page) */
};

struct report_warnings {
	char **lines;
	size_t count, cap, suppressed;
};

/* Everything a run computes. */
struct report {
	const struct report_options *o;
	struct fl_recording *rec;
	struct callsite_table *callsites;
	struct callsite_skip skip;
	struct sym_stats symbolized;  /* the symbolizer's counters for the rows, taken before the ranges
				       * section shares the symbolizer (report_ranges_compute) */
	struct report_progress progress;
	struct report_warnings warnings;

	struct report_event events[REPORT_MAX_EVENTS];
	size_t nevents;
	uint8_t (*event_of)[FL_PMU_MAX];  /* per process: its counter index → events index (0xff: none) */
	uint32_t *faults_per_context;     /* per process: record -s N: a context's delta covers about N faults */

	struct report_row *rows;
	size_t nrows, rows_cap;
	uint32_t **row_of_fault;  /* per process, per fault index: row, or FL_NONE (filtered out) */
	uint32_t *ranked;         /* row indexes, most faults first */
	size_t nshown;            /* the first nshown of ranked are shown */

	uint64_t selected;        /* faults in rows */
	/* Stacks sampled (record -s N, N > 1, in any process) and rows keyed by stack (--by callsite or
	 * function): the row of the faults without a stack ranks last, and each other row's percentage
	 * is its share of the faults with a stack, an estimate of its share of all faults. */
	uint64_t stack_sample;    /* the largest -s N of the processes (1: every fault has a stack) */
	uint32_t unsampled_row;   /* that row, FL_NONE when not in this case or no such row */
	uint64_t unsampled;       /* its faults (0 when unsampled_row is FL_NONE) */
	uint64_t selected_kinds[FL_FAULT_KIND_MAX + 1];
	double build_seconds;     /* aggregation, symbolization included */
	double read_seconds;      /* reading (and validating) the recording, before the build */
	double total_seconds;     /* from the start of the verb until the report was ready */
	struct report_ranges ranges;
	struct report_map symbol_match;   /* --symbol: (process << 32 | maps snapshot, stack) → 1 matches, 2 does not */
	struct fault_clock clock; /* the --time axis */
	struct report_records records;

	/* A streamed recording (fl_recording_open_stream): no per-fault row; what the later passes
	 * would read per fault is gathered in the one pass over the faults instead. */
	bool streamed;
	bool hold;                /* the stream broke an assumption (a thread's contexts out of seq
				   * order): the run is to be redone on the held recording */
	uint64_t *latency_high[REPORT_LATENCIES]; /* streamed: the selected faults' service times and
				   * waits counted by their high 16 bits (65536 counters each;
				   * report_records.c takes the low bits of the percentiles' buckets in a
				   * second walk) */
	uint64_t latency_count[REPORT_LATENCIES], latency_max[REPORT_LATENCIES];
	uint64_t virtual_n, virtual_max; /* selected faults with a virtual time, the latest */
	bool *tid_seen;           /* --tid: per given thread, whether it took a fault (streamed) */
	uint32_t last_row;        /* pass 1: the row of the fault just attributed (FL_NONE: not kept) */
	char stream_error[768];   /* why a walk over the faults failed ("" when it did not) */
};

/* Adds one warning line (kept up to FL_MAX_WARNINGS, the rest counted). */
void report_warn(struct report_warnings *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void report_warnings_free(struct report_warnings *w);

/* report_build.c: whether fault F of PROC is selected (--kind, --tid, --symbol, --from/--to). */
bool report_kept(struct report *r, const struct fl_process *proc, const struct fl_fault *f);

/* report_build.c: fills r->events, rows, ranked, nshown (and locality). 0, or -1 with a reason in
 * err (out of memory). */
int report_build(struct report *r, char *err, size_t errlen);
void report_build_free(struct report *r);

/* report_records.c: fills r->records from the selected faults (after report_build) and the
 * processes' eviction files (--pid, and --from/--to on the wall axis). 0, or -1 with a reason in err
 * (out of memory, a corrupt evictions file). */
int report_records_build(struct report *r, char *err, size_t errlen);

/* A fault's time of kind L (ns; 0 = unknown). */
static inline uint32_t report_latency_of(const struct fl_fault *f, enum report_latency l)
{
	return l == REPORT_WAIT ? f->rec.wait_ns : f->rec.service_ns;
}

/* Per-fault value of event E in ROW in its display unit (µs for clock events); false when no fault of
 * the row has it. */
bool report_row_pmu(const struct report *r, const struct report_row *row, size_t e, double *value);

#endif
