/* ranges.h: hot address ranges of a recording's faults — RAP trees (inc/faultline/rap.h) turned
 * into ranges people can read, with the allocations and mappings that lie inside them. Used by
 * `faultline ranges` (ranges_cmd.c) and meant for the other verbs: `report` shows the top ranges
 * under its table, `visualize` writes ranges.txt and marks hot ranges on its heatmap.
 *
 * Typical use:
 *     struct ranges_options o;
 *     struct ranges_result res;
 *     ranges_options_init(&o);              // ε 0.01, φ 0.05, every fault, ranges.rap if present
 *     o.symbolize = false;                  // optional: skip libbfd (sites named by PC)
 *     if (ranges_compute(rec, &o, &res, err, sizeof(err)) < 0) ... err says why
 *     for (size_t i = 0; i < res.nwarnings; i++) print res.warnings[i];
 *     for each res.procs[p], for each res.procs[p].ranges[r]: lo, hi, est, lower, upper, pct ...
 *     // or, over every process at once: ranges_top(&res, 10, refs)
 *     ranges_result_free(&res);
 *
 * Where the counts come from, per process image (DIR/PID or DIR/PID.N):
 *   - the online tree, DIR/PID/ranges.rap, which the runtime writes at exit (runtime/rap_online.c)
 *     from every fault it served — used when present, valid, and every fault kind is wanted;
 *     a corrupt or unreadable file is a warning, and the ranges are then built from the trace;
 *   - else (or with from_trace) a tree built here from the process's fault records (those of
 *     the selected kinds), with ε = options.eps and the runtime's geometry: 4 KiB units (the
 *     page size), b = 4, addresses below 2^max(47, bits of the region's end).
 * ranges_proc.source says which, source_text says it in words ("online tree (ranges.rap)" or
 * "built from 123,456 fault records").
 *
 * Bounds describe memory that exists: a tree node is an aligned power-of-four block of the address
 * space, which may reach below the region or over unrelated library mappings. Each range is
 * clipped to the process's region and then to the extent of the (selected) fault records inside
 * it, so its start, end, size and mappings name touched memory only (node_lo/node_hi keep the
 * node). Counts are inclusive: a range's faults hold those of the hot ranges nested in it
 * (excl is what is left); parent/level and tree_order say how they nest.
 *
 * Hot ranges are RAP's hierarchical heavy hitters at φ (rap_hot_ranges): walking the tree bottom
 * up, a node is hot when its exclusive count — its subtree's faults minus those of hot ranges
 * inside it — is at least φ·n. With `coalesce` (the default) hot nodes that contain no other hot
 * node and touch each other (no hot range between them in address order) are joined into one
 * range: an 8 MiB array is one range, not eight 1 MiB tree nodes. Every range carries the tree's
 * guarantee: est = lower <= true count <= upper (rap_query of the range), where true is the number
 * of faults the tree counted inside [lo, hi). Ranges are sorted by exclusive count, largest first
 * (the root range, when hot, holds the faults no smaller range explains).
 *
 * With `attribute` (the default) one pass over the process's fault records fills, per range, the
 * exact number of (selected) fault records inside it (`trace`; equal to the true count when the
 * tree was built from the trace), the allocation sites of those faults (the reader's per-fault
 * attribution: the live allocation's stack id, its first frame outside libc, libstdc++, jemalloc,
 * the dynamic loader and libfaultline, named with the symbolizer when `symbolize`, under the maps
 * snapshot in force when the allocations were made: one stack allocating under two snapshots is two
 * sites), and the mappings that overlap the range in the maps snapshots in force while its faults
 * happened (from its first fault's to its last's; a mapping the snapshots hold alike listed once).
 *
 * Everything in a result is owned by it (strings included) and stays valid until
 * ranges_result_free; the recording must outlive the result (proc pointers point into it). */
#ifndef FAULTLINE_TOOLS_RANGES_H
#define FAULTLINE_TOOLS_RANGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <faultline/rap.h>

#include "trace_reader.h"

struct callsite_table;

#define RANGES_DEFAULT_EPS 0.01
#define RANGES_DEFAULT_PHI 0.05
#define RANGES_BRANCH_LOG2 2        /* b = 4, as the runtime's online trees */
#define RANGES_MIN_ADDR_BITS 47     /* as the runtime's online trees */

/* Fault kinds selected by ranges_options.kinds: a mask of RANGES_KIND(FL_FAULT_*); 0 = all. */
#define RANGES_KIND(kind) (1u << (kind))
#define RANGES_KINDS_ALL 0u

struct ranges_options {
	double eps;              /* ε of trees built from the trace (0 < eps < 1) */
	double phi;              /* hot threshold φ (0 < phi <= 1; meaningful when > ε) */
	unsigned kinds;          /* RANGES_KINDS_ALL or a mask; anything else reads the trace */
	uint32_t pid;            /* 0 = every process; else every image of this pid */
	bool from_trace;         /* ignore ranges.rap: build every tree from the fault records */
	bool coalesce;           /* join touching innermost hot nodes (default true) */
	bool attribute;          /* sites, mappings, trace counts per range (default true) */
	bool symbolize;          /* name sites with libbfd (default true; else "binary+0xOFF") */
	unsigned max_sites;      /* sites kept per range, most faults first (default 3) */
	unsigned max_maps;       /* mappings kept per range, in address order (default 3) */
	struct callsite_table *resolver; /* optional, borrowed: a resolver (callsite.h) with the default
					  * skip list, used to name sites instead of making one (report
					  * shares its own: one symbolizer per run); NULL = make one */
};

enum ranges_source {
	RANGES_SOURCE_ONLINE = 1, /* ranges.rap */
	RANGES_SOURCE_TRACE = 2,  /* built from the fault records */
};

/* Faults of a range that hit allocations made at one site: one stack as named under one maps
 * snapshot (callsite.h's rule: an allocation's stack is named under the snapshot in force at the
 * allocation's time, so a stack allocating before and after its code was remapped is two sites). */
struct ranges_site {
	uint32_t stack_id;       /* the allocations' stack; 0 = none recorded (--alloc-sample) */
	uint32_t snapshot;       /* the maps snapshot (index into proc->maps) in force when they were made
	                          * (the earliest, when later ones name the stack alike) */
	uint64_t faults;         /* faults inside the range that hit these allocations */
	uint32_t allocs;         /* distinct allocations */
	uint64_t lo, hi;         /* the hull of those allocations, [lo, hi) */
	uint32_t alloc_id;       /* the allocation with most of the faults */
	uint64_t pc;             /* the site's frame (0: no stack) */
	const char *name;        /* "function file:line", "binary+0xOFFSET", "0xPC" or "(no stack)" */
};

/* A mapping overlapping a range in a maps snapshot in force during the range's faults (every
 * snapshot when none of its faults is in the trace); bounds, permissions and name say which. */
struct ranges_map {
	uint64_t start, end;
	char perms[5];           /* "rw-p" */
	const char *name;        /* path, [pseudo], "[faultline region]" or "[anon]" */
};

struct ranges_range {
	uint64_t lo, hi;         /* bytes, [lo, hi): the tree node(s) clipped to the process's region and
				  * to the pages that faulted inside them (memory that exists and was
				  * touched); the node bounds when no fault record lies inside */
	uint64_t node_lo, node_hi;   /* the tree node(s) the range comes from, unclipped */
	size_t parent;           /* index in ranges[] of the smallest hot range holding this one;
				  * RANGES_NO_PARENT for an outermost range */
	unsigned level;          /* nesting: 0 for an outermost range, parent's level + 1 */
	uint64_t est;            /* the tree's estimate = lower bound of the true count */
	uint64_t lower, upper;   /* lower <= true <= upper */
	uint64_t excl;           /* exclusive (HHH) count: est minus hot ranges nested inside */
	double pct, excl_pct;    /* est and excl as % of the tree's n */
	unsigned depth;          /* tree depth of the (shallowest) node; root = 0 */
	unsigned nodes;          /* tree nodes joined into this range (1 unless coalesced) */
	/* with options.attribute: */
	bool has_trace;
	uint64_t trace;          /* selected fault records with the page in [lo, hi) */
	uint64_t unattributed;   /* of those, faults outside every live allocation */
	struct ranges_site *sites;   /* most faults first, at most options.max_sites */
	size_t nsites, sites_total;
	struct ranges_map *maps;     /* address order, at most options.max_maps */
	size_t nmaps, maps_total;
};

#define RANGES_NO_PARENT ((size_t)-1)

struct ranges_proc {
	const struct fl_process *proc;
	enum ranges_source source;
	char source_text[128];
	rap_t *tree;             /* the tree the ranges come from (rap_dump, rap_query, rap_walk) */
	struct rap_stats stats;  /* its n, ε, nodes, memory, ... */
	uint64_t error_bound;    /* rap_error_bound: every node's est >= true - error_bound */
	uint64_t trace_faults;   /* fault records of the process (of the selected kinds) */
	struct ranges_range *ranges;  /* largest exclusive count first (rank = index + 1) */
	size_t nranges;
	size_t *tree_order;      /* indices of ranges[] as a tree: address order, each range
				  * before the ranges nested inside it */
};

struct ranges_result {
	struct ranges_proc *procs;    /* recording order; only the selected pid's images */
	size_t nprocs;
	char **warnings;              /* one line each (no newline): a rejected ranges.rap, ... */
	size_t nwarnings;
};

/* A range and its process, for lists over the whole recording. */
struct ranges_ref {
	const struct ranges_proc *proc;
	const struct ranges_range *range;
};

/* Defaults: ε 0.01, φ 0.05, all kinds, all pids, ranges.rap when present, coalesce, attribute,
 * symbolize, 3 sites, 3 mappings. */
void ranges_options_init(struct ranges_options *o);

/* Parses "all" or a comma-separated list of first-touch, refault, soft, concurrent into a
 * kinds mask. Returns 0, or -1 with a reason in err. */
int ranges_parse_kinds(const char *text, unsigned *kinds, char *err, size_t errlen);

/* "all" or the names of the kinds in the mask, comma-separated. Returns buf. */
const char *ranges_kinds_name(unsigned kinds, char *buf, size_t len);

/* Computes the hot ranges of every selected process. Returns 0 (result filled; warnings may
 * say that a ranges.rap was rejected), or -1 with a one-line reason in err (bad options, no
 * process with that pid, out of memory) and nothing to free. */
int ranges_compute(const struct fl_recording *rec, const struct ranges_options *o,
		   struct ranges_result *out, char *err, size_t errlen);

/* The max ranges with the largest exclusive counts over every process (the root range of each
 * process excluded, as it is no locality finding), largest first. Returns how many were stored. */
size_t ranges_top(const struct ranges_result *res, size_t max, struct ranges_ref *out);

void ranges_result_free(struct ranges_result *res);

/* Output (ranges_print.c). Formats: text (a table per process; with `tree` each process's tree
 * follows, indented, as rap_dump prints it), CSV (one header line, one row per range), JSON (one
 * object; with `tree` each process also lists its tree's nodes). dir names the recording in the
 * output. Returns 0, or -1 when writing failed. */
enum ranges_format { RANGES_TEXT = 0, RANGES_CSV = 1, RANGES_JSON = 2 };
int ranges_print(const struct ranges_result *res, const struct ranges_options *o, const char *dir,
		 enum ranges_format format, bool tree, FILE *out);

#endif
