/* record_options.h: `faultline record`'s options (record_options.c): their values once parsed, the
 * parser, the help text. */
#ifndef FAULTLINE_TOOLS_RECORD_OPTIONS_H
#define FAULTLINE_TOOLS_RECORD_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Largest -M: a quarter of x86-64's 47-bit user address space. The runtime maps the region and
 * its far-store mirror, each -M bytes, around the program's own mappings (a PIE executable sits at
 * ~85 TiB): 40 TiB was measured to fit, 48 TiB not. */
#define RECORD_MAX_REGION_BYTES ((uint64_t)32 << 40)
/* Smallest -M: the allocator's first extent (jemalloc asks for 2 MiB before the first malloc). */
#define RECORD_MIN_REGION_BYTES ((uint64_t)2 << 20)
/* Smallest -L other than unlimited: the runtime's FL_MIN_LOCAL_PAGES. */
#define RECORD_MIN_LOCAL_BYTES ((uint64_t)1 << 20)
/* Largest -c: fault records store the handler index in 8 bits. */
#define RECORD_MAX_HANDLERS 256
#define RECORD_MAX_STACK_DEPTH 256  /* the runtime keeps at most 256 frames */
/* record's status when the program exited 0 but no process wrote a trace (the runtime did not
 * start in it): EX_SOFTWARE. A program that failed passes its own status through. */
#define RECORD_EXIT_UNTRACED 70

struct record_options {
	uint64_t local_bytes;   /* -L, rounded up to 4096; 0 = unlimited */
	uint64_t max_bytes;     /* -M, rounded up to 4096; default: the machine's RAM */
	bool max_given;         /* -M was given (else max_bytes is the RAM default) */
	unsigned handlers;      /* -c; 0 = the runtime picks */
	const char *policy;     /* "clock" or "fifo" */
	const char *output;     /* -o as given (may hold %p, %h), NULL = default name */
	bool force;             /* --force: reuse a non-empty output directory */
	unsigned sample;        /* -s: a stack for 1 fault in N */
	unsigned stack_depth;   /* --stack-depth */
	const char *pmu;        /* --pmu, NULL when not given */
	unsigned alloc_sample;  /* --alloc-sample (no effect since allocation sites) */
	const char *alloc_log;  /* --alloc-log: "sampled" (NULL) or "full" */
	uint64_t alloc_sample_bytes; /* --alloc-sample-bytes; 0 = the runtime's default */
	const char *far;        /* --far as given: "mem", "file:PATH", "memcached:HOST:PORT,..." */
	char far_spec[1024];    /* --far as the runtime gets it (far_spec_check) */
	const char *keep_far;   /* --keep-far PATH, NULL when not given */
	uint64_t far_latency_ns; /* --far-latency USEC, in ns */
	uint64_t far_bandwidth; /* --far-bandwidth MBPS, in bytes per second; 0 = unlimited */
	unsigned prefetch;      /* --prefetch N pages */
	unsigned fill_ahead;    /* --fill-ahead N pages; 0 = off */
	unsigned timeline_ms;   /* --timeline MS: counter sampling period; 0 = off */
	unsigned timeline_every; /* --timeline-every N faults; 0 = off */
	unsigned mrc;           /* --mrc: sample 1 page in N for reuse distances; 0 = off */
	unsigned mrc_gap;       /* --mrc-gap: pages touched before a touched sample page is re-armed */
	unsigned mrc_budget;    /* --mrc-budget: trial unmaps per second of the program's CPU time */
	bool mrc_stacks;        /* --mrc-stacks: the sample's re-touches take their stacks */
	unsigned sample_accesses; /* --sample-accesses: probes per second; 0 = off */
	bool quiet;             /* -q: no banner, no summary */
	bool archive;           /* --archive: keep copies of the mapped binaries with the recording */
	bool help;              /* -h: print help and do nothing else */
	char **command;         /* the command's argv, NULL-terminated, pointing into argv */
	int command_argc;
};

/* Parses `record`'s arguments (argv[0] is the verb; argv[argc] must be NULL, as for
 * main). Strings in *out point into argv. Returns 0, or -1 with a one-line reason. */
int record_parse_args(int argc, char **argv, struct record_options *out, char *err, size_t errlen);

/* Whether every --pmu name is known (and, with PROBE, countable on this machine); "none" is. Parsing
 * checks the names; record checks the machine before it starts anything. */
int check_pmu(const char *v, bool probe, char *err, size_t errlen);

/* Writes `faultline record --help` to stdout. */
void record_usage(void);

#endif
