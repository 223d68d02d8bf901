/* record_schema.h: the keys of a process directory's meta.json and stats.json (trace.h), defined
 * once: the runtime writes them (runtime/trace_writer.c, and for their own parts far_store.c,
 * probe.c, timeline.c) and the tools read them by these names; no key is spelt anywhere else. Both files are one flat JSON object; values are integers unless marked.
 *
 * A reader treats a missing key as unknown (older recordings lack newer keys) and ignores keys it
 * does not know. A key is never renamed or given another meaning: a new meaning is a new key. */
#ifndef FAULTLINE_RECORD_SCHEMA_H
#define FAULTLINE_RECORD_SCHEMA_H

/* ---------------------------------------------------------------- meta.json (written at start) */
#define FL_META_FORMAT_VERSION   "format_version"   /* FL_TRACE_VERSION of the binary files */
#define FL_META_PID              "pid"
#define FL_META_PPID             "ppid"
#define FL_META_EXE              "exe"              /* string: /proc/self/exe */
#define FL_META_CMDLINE          "cmdline"          /* array of strings */
#define FL_META_LOCAL_LIMIT      "local_limit_bytes" /* -L (0: unlimited) */
#define FL_META_MAX_BYTES        "max_bytes"        /* -M */
#define FL_META_HANDLERS         "handlers"         /* handler threads */
#define FL_META_POLICY           "policy"           /* string: "clock" or "fifo" */
#define FL_META_FAR              "far"              /* string: the far store's name */
#define FL_META_PAGE_SIZE        "page_size"
#define FL_META_REGION_START     "region_start"
#define FL_META_REGION_SIZE      "region_size"
#define FL_META_START_NS         "start_ns"         /* CLOCK_MONOTONIC at runtime start */
#define FL_META_UFFD_FEATURES    "uffd_features"
#define FL_META_WRITE_PROTECT    "write_protect"
#define FL_META_STACK_DEPTH      "stack_depth"
#define FL_META_SAMPLE           "sample"           /* a stack for 1 fault in N */
#define FL_META_ALLOC_SAMPLE     "alloc_sample"
#define FL_META_ALLOC_LOG        "alloc_log"        /* string: "sampled" or "full" */
#define FL_META_ALLOC_SAMPLE_BYTES "alloc_sample_bytes"
#define FL_META_STACK_SIGNAL     "stack_signal"
#define FL_META_PMU_EVENTS       "pmu_events"       /* array of strings, in counter order */
#define FL_META_PMU_KIND         "pmu_kind"         /* string: "none", "hardware", "software" */
#define FL_META_FAR_SPEC         "far_spec"         /* string: --far as given */
#define FL_META_FAR_DETAIL       "far_detail"       /* string */
#define FL_META_FAR_LATENCY_NS   "far_latency_ns"
#define FL_META_FAR_BANDWIDTH    "far_bandwidth_bytes_per_s"
#define FL_META_PREFETCH_PAGES   "prefetch_pages"
#define FL_META_FILL_AHEAD_PAGES "fill_ahead_pages"  /* record --fill-ahead N; 0 = off */
/* the access prober (runtime/probe.c: record --mrc, --sample-accesses); 0 when off */
#define FL_META_MRC_RATE_DENOMINATOR "mrc_rate_denominator" /* --mrc: 1 page in N sampled */
#define FL_META_MRC_THRESHOLD    "mrc_threshold"    /* --mrc: the starting sampling threshold */
#define FL_META_MRC_MAX_PAGES    "mrc_max_pages"
#define FL_META_MRC_GAP          "mrc_gap"          /* --mrc, recordings before mrc_gap_pages: sampled
                                                       accesses before a re-arm */
#define FL_META_MRC_GAP_PAGES    "mrc_gap_pages"    /* --mrc: pages touched before a re-arm (record
                                                       --mrc-gap; in sample accesses: x the rate) */
#define FL_META_MRC_BUDGET       "mrc_budget"       /* --mrc: trial unmaps allowed per second of the
                                                       program's CPU time (record --mrc-budget); 0 = no bound */
#define FL_META_MRC_STACKS       "mrc_stacks"       /* --mrc-stacks: 1 = the access samples have stacks */
#define FL_META_SAMPLE_ACCESSES_RATE "sample_accesses_rate"
#define FL_META_PROBE_PERIOD_NS  "probe_period_ns"
/* the counter timeline (runtime/timeline.c) */
#define FL_META_TIMELINE_MS      "timeline_ms"      /* sampling period; 0 when off */
#define FL_META_TIMELINE_EVERY   "timeline_every"   /* a sample every N faults; 0 when off */
#define FL_META_TIMELINE_EVENTS  "timeline_events"  /* array of strings: the counters sampled */
#define FL_META_TIMELINE_PMU_KIND "timeline_pmu_kind" /* string: "none", "hardware", "software" */

/* ---------------------------------------------------------------- stats.json (written at exit) */
#define FL_STATS_PID                  "pid"
#define FL_STATS_FAULTS_TOTAL         "faults_total"
#define FL_STATS_FAULTS_FIRST_TOUCH   "faults_first_touch"
#define FL_STATS_FAULTS_REFAULT       "faults_refault"
#define FL_STATS_FAULTS_SOFT          "faults_soft"
#define FL_STATS_FAULTS_CONCURRENT    "faults_concurrent"
#define FL_STATS_ACCESS_SAMPLES       "access_samples" /* records, not faults: re-touches of pages the prober unmapped (probe.c) */
#define FL_STATS_WRITE_PROTECT_FAULTS "write_protect_faults"
#define FL_STATS_EVICTIONS            "evictions"
#define FL_STATS_WRITEBACKS           "writebacks"
#define FL_STATS_EVICTIONS_CLEAN      "evictions_clean"
#define FL_STATS_SOFT_EVICTIONS       "soft_evictions"
#define FL_STATS_EVICTION_ROUNDS      "eviction_rounds"
#define FL_STATS_EVICT_MOVED          "evict_moved"
#define FL_STATS_EVICT_COPIED         "evict_copied"
#define FL_STATS_EVICT_DROPPED        "evict_dropped"
#define FL_STATS_EVICTOR_ROUNDS       "evictor_rounds"
#define FL_STATS_EVICT_INLINE_ROUNDS  "evict_inline_rounds"
#define FL_STATS_EVICT_CLOCK_DIRECT   "evict_clock_direct"   /* clock: to the far store without a trial */
#define FL_STATS_CLOCK_SWEEPS_TRIAL   "clock_sweeps_trial"   /* adaptive clock: sweeps that unmapped on trial */
#define FL_STATS_CLOCK_SWEEPS_DIRECT  "clock_sweeps_direct"  /* ... and sweeps that evicted directly */
#define FL_STATS_CLOCK_CHOSE_TRIAL    "clock_chose_trial"    /* ... measured both, kept trial unmaps */
#define FL_STATS_CLOCK_CHOSE_DIRECT   "clock_chose_direct"   /* ... measured both, kept direct eviction */
#define FL_STATS_BUSY_WAITS           "busy_waits"
#define FL_STATS_HANDLER_WAKEUPS      "handler_wakeups"
/* how many handlers read the userfaultfd: measured choices of one reader, of all (readers.c) */
#define FL_STATS_READERS_CHOSE_ONE    "readers_chose_one"
#define FL_STATS_READERS_CHOSE_ALL    "readers_chose_all"
#define FL_STATS_READERS_GAVE_UP_ONE  "readers_gave_up_one"  /* one reader cost more than all had: left early */
#define FL_STATS_TRACE_WRITE_WAIT_NS  "trace_write_wait_ns"
/* CPU time (ns) when stats.json was written: the whole process, and of it the fault handler
 * threads and the evictor thread (the rest: the program's threads and the runtime's others) */
#define FL_STATS_CPU_NS               "cpu_ns"
#define FL_STATS_HANDLER_CPU_NS       "handler_cpu_ns"
#define FL_STATS_EVICTOR_CPU_NS       "evictor_cpu_ns"
#define FL_STATS_RESIDENT_AT_EXIT     "resident_bytes_at_exit"
#define FL_STATS_PEAK_RESIDENT        "peak_resident_bytes"
#define FL_STATS_LOCAL_LIMIT          "local_limit_bytes"
#define FL_STATS_MAX_BYTES            "max_bytes"
#define FL_STATS_HEAP_AT_EXIT         "heap_bytes_at_exit"
#define FL_STATS_PEAK_HEAP            "peak_heap_bytes"
#define FL_STATS_RECORDS_WRITTEN      "records_written"
#define FL_STATS_RECORDS_DROPPED      "records_dropped"
#define FL_STATS_RECORDS_DROPPED_REASON "records_dropped_reason" /* string; "" when none */
#define FL_STATS_SIDE_BYTES_DROPPED   "side_bytes_dropped"
#define FL_STATS_CONTEXTS_WRITTEN     "contexts_written"
#define FL_STATS_STACKS_FROM_SAMPLES  "stacks_from_samples"
#define FL_STATS_STACK_SIGNALS_SENT   "stack_signals_sent"
#define FL_STATS_STACK_SIGNALS_FAILED "stack_signals_failed"
#define FL_STATS_LATE_STACKS_DROPPED  "late_stacks_dropped"
#define FL_STATS_ALLOC_EVENTS         "alloc_events"
#define FL_STATS_PAGE_STATE_MISMATCHES "page_state_mismatches" /* only with the state checker */
#define FL_STATS_FAR_READS            "far_reads"
#define FL_STATS_FAR_READ_PAGES       "far_read_pages"
#define FL_STATS_FAR_WRITES           "far_writes"
#define FL_STATS_FAR_WRITE_PAGES      "far_write_pages"
#define FL_STATS_FAR_DELAY_NS         "far_delay_ns"
#define FL_STATS_PREFETCHED_PAGES     "prefetched_pages"
#define FL_STATS_FILLED_AHEAD_PAGES   "filled_ahead_pages" /* --fill-ahead: pages installed without a fault */
#define FL_STATS_FILLED_AHEAD_UNUSED  "filled_ahead_unused" /* of them, evicted still zero: their next fault
                                                            is counted as their first touch */
#define FL_STATS_PREFETCH_HITS        "prefetch_hits"
#define FL_STATS_PREFETCH_UNUSED      "prefetch_unused"
#define FL_STATS_FAR_READ_NS          "far_read_ns"
#define FL_STATS_FAR_WRITE_NS         "far_write_ns"
#define FL_STATS_PREFETCH_REQUESTS    "prefetch_requests"
#define FL_STATS_FAR_MIRROR_DROPS     "far_mirror_drops"
#define FL_STATS_FAR_GENERATIONS      "far_generations"
#define FL_STATS_FAR_COMPACTIONS      "far_compactions"
/* the access prober (runtime/probe.c); the probe_* keys only when it ran */
#define FL_STATS_MRC_THRESHOLD        "mrc_threshold"  /* --mrc: the threshold at exit */
#define FL_STATS_MRC_PAGES            "mrc_pages"
#define FL_STATS_MRC_BUDGET_CUTS      "mrc_budget_cuts" /* --mrc: times the cost budget lowered the rate */
#define FL_STATS_MRC_PROGRAM_CPU_NS   "mrc_program_cpu_ns" /* --mrc: the program's CPU time at the prober's
                                                          last budget check (the process's less the
                                                          handlers', the evictor's and the prober's) */
#define FL_STATS_PROBE_ARMED          "probe_armed"
#define FL_STATS_PROBE_REARMED        "probe_rearmed"
#define FL_STATS_PROBE_ARM_SKIPPED    "probe_arm_skipped"
#define FL_STATS_PROBE_RESTORED       "probe_restored"
#define FL_STATS_PROBE_DROPPED        "probe_dropped"
#define FL_STATS_PROBE_ROUNDS         "probe_rounds"
#define FL_STATS_PROBE_CPU_NS         "probe_cpu_ns"   /* the prober thread's CPU time */
#define FL_STATS_PROBE_SAMPLE_PAGES   "probe_sample_pages" /* --sample-accesses: most pages in the set at once */
#define FL_STATS_WALL_NS              "wall_ns"
#define FL_STATS_EXIT                 "exit"         /* string: how the process ended */

#endif
