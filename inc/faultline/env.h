/* env.h: the contract between `faultline record` and the preloaded shim.
 *
 * `record` passes every setting to the traced process through these environment
 * variables (all values are plain decimal integers or short words). The shim reads
 * them once, at its lazy initialisation. A process started with the shim but without
 * FAULTLINE_DIR runs untraced on plain jemalloc (no region, no userfaultfd). */
#ifndef FAULTLINE_ENV_H
#define FAULTLINE_ENV_H

#define FL_ENV_DIR          "FAULTLINE_DIR"          /* output directory; the shim writes DIR/<pid>/ */
#define FL_ENV_LOCAL_BYTES  "FAULTLINE_LOCAL_BYTES"  /* -L in bytes; 0 = unlimited (no eviction) */
#define FL_ENV_MAX_BYTES    "FAULTLINE_MAX_BYTES"    /* -M in bytes: size of the region */
#define FL_ENV_HANDLERS     "FAULTLINE_HANDLERS"     /* number of fault handler threads; 0 = default */
#define FL_ENV_POLICY       "FAULTLINE_POLICY"       /* "clock" (default) or "fifo" */
#define FL_ENV_STACK_DEPTH  "FAULTLINE_STACK_DEPTH"  /* max frames per stack (issue: stacks) */
#define FL_ENV_SAMPLE       "FAULTLINE_SAMPLE"       /* record a stack for 1 fault in N */
#define FL_ENV_PMU          "FAULTLINE_PMU"          /* comma-separated perf event names */
#define FL_ENV_STACK_SOURCE "FAULTLINE_STACK_SOURCE" /* "sample" (default: perf samples, signal as
                                                        fallback) or "signal" (every stack by signal;
                                                        for comparison and for the fallback's tests) */
#define FL_ENV_ALLOC_SAMPLE "FAULTLINE_ALLOC_SAMPLE" /* kept for compatibility, ignored: every allocation
                                                        names its site, whose stack is taken once */
#define FL_ENV_ALLOC_LOG    "FAULTLINE_ALLOC_LOG"    /* "sampled" (default) or "full" (trace.h: allocs) */
#define FL_ENV_ALLOC_SAMPLE_BYTES "FAULTLINE_ALLOC_SAMPLE_BYTES" /* mean bytes between sampled allocation
                                                        events; default 524288 */
#define FL_ENV_FAR          "FAULTLINE_FAR"          /* far store spec: "mem" (default), "file:PATH",
                                                        "memcached:ADDR:PORT[,ADDR:PORT...]" (numeric
                                                        addresses: record resolves host names) */
#define FL_ENV_FAR_KEEP     "FAULTLINE_FAR_KEEP"     /* file store: keep each store file as KEEP.<pid>.<n> */
#define FL_ENV_FAR_IO       "FAULTLINE_FAR_IO"       /* file store I/O, for comparison: "uring" (default),
                                                        "psync" (pread/pwrite), either + "-buffered"
                                                        (no O_DIRECT) */
#define FL_ENV_FAR_LATENCY_NS "FAULTLINE_FAR_LATENCY_NS" /* emulated latency added to each far request */
#define FL_ENV_FAR_BANDWIDTH "FAULTLINE_FAR_BANDWIDTH" /* emulated bandwidth, bytes per second; 0 = none */
#define FL_ENV_PREFETCH     "FAULTLINE_PREFETCH"     /* read-ahead on refaults, in pages; 0 = off */
#define FL_ENV_FILL_AHEAD   "FAULTLINE_FILL_AHEAD"   /* fresh pages zero-filled after a first-touch write; 0 = off */
#define FL_ENV_TIMELINE_MS  "FAULTLINE_TIMELINE_MS"  /* counter timeline period in ms; 0 = off (trace.h) */
#define FL_ENV_TIMELINE_EVERY "FAULTLINE_TIMELINE_EVERY" /* also a sample every N faults; 0 = off */
#define FL_ENV_VERBOSE      "FAULTLINE_VERBOSE"      /* 1 = diagnostics on stderr */
#define FL_ENV_PROBE_MRC    "FAULTLINE_PROBE_MRC"    /* record --mrc N: sample 1 page in N (SHARDS) for
                                                        reuse distances; 0 or unset = off */
#define FL_ENV_PROBE_MRC_MAX "FAULTLINE_PROBE_MRC_MAX" /* most pages sampled at once (fixed-size
                                                        SHARDS: the rate drops beyond) */
#define FL_PROBE_MRC_RATE_DEFAULT 2                   /* record --mrc: 1 page in 2 to start with ... */
#define FL_PROBE_MRC_MAX_DEFAULT 2048                 /* ... and at most this many sampled pages */
#define FL_ENV_PROBE_MRC_GAP "FAULTLINE_PROBE_MRC_GAP" /* record --mrc-gap N: a touched sample page is
                                                        armed again once the program has touched
                                                        about N other pages (N x rate accesses to
                                                        other sample pages) */
#define FL_PROBE_MRC_GAP_DEFAULT 32
#define FL_ENV_PROBE_MRC_BUDGET "FAULTLINE_PROBE_MRC_BUDGET" /* record --mrc-budget N: at most about N
                                                        trial unmaps of sample pages per second of
                                                        the program's own CPU time (the rate drops
                                                        beyond, down to 32 pages); 0 = no bound */
#define FL_PROBE_MRC_BUDGET_DEFAULT 4000
#define FL_ENV_PROBE_MRC_STACKS "FAULTLINE_PROBE_MRC_STACKS" /* record --mrc-stacks: 1 = the --mrc
                                                        sample's re-touches take their stacks too;
                                                        0 or unset = they go without */
#define FL_ENV_PROBE_ACCESS "FAULTLINE_PROBE_ACCESS" /* record --sample-accesses RATE: probes per
                                                        second; 0 or unset = off */
#define FL_ENV_PROBE_PERIOD_US "FAULTLINE_PROBE_PERIOD_US" /* the prober's tick (re-arm delay); default 1000 */

/* Exit status the runtime uses when it must stop the traced program (far store lost,
 * region registration failed after start). `record` passes it through. */
#define FL_EXIT_RUNTIME_FAILURE 70

#endif
