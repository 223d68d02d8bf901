/* html_model.h: the bounded data behind report.html (render/html_report.c) — the selected faults
 * bucketed by (address row x time column x kind x group), where a group is one (process, fault
 * stack, allocation site, thread); the names of the groups' stacks, callsites, functions, sites,
 * threads and processes; the most-faulted objects of each allocation site with their lifetimes;
 * the counter timelines; the hot ranges; the miss-ratio curve. A model, no printing.
 *
 * An accumulator: html_model_add_fault() once per fault (any order), html_model_add_timeline() and
 * html_model_add_hot_range() as the data is at hand, then html_model_finish() once.
 *
 * Bounded by construction, whatever the number of faults:
 *   - the grid has at most HTML_ROWS address rows and HTML_COLS time columns: a row is a power of
 *     two pages wide, a column a power of two nanoseconds long, both doubled while faults arrive
 *     outside the grid (so cells merge, never split);
 *   - at most HTML_MAX_GROUPS groups: the rest (the fewest faults) become one "[other stacks]"
 *     group, whose faults keep their address, time and kind but lose stack, site and thread;
 *   - at most HTML_MAX_CELLS non-empty cells: beyond, time columns, then address rows, are merged
 *     in pairs until under the bound;
 *   - stacks keep their HTML_MAX_FRAMES outermost frames, names HTML_MAX_NAME bytes, all distinct
 *     names together HTML_MAX_NAME_BYTES (further names become "[name not kept]");
 *   - HTML_MAX_OBJECTS objects per allocation site (HTML_MAX_OBJECTS_TOTAL in all), HTML_MAX_POINTS
 *     steps per counter series, HTML_MAX_SERIES series (the first ones).
 * What the buckets lose: a fault's exact address (its row: 1/HTML_ROWS of the faulted span, at
 * least one page) and exact time (its column); faults of the same group, kind and cell are one
 * count; and the order of faults inside a cell. The tables of a brushed rectangle are therefore
 * exact only to a whole cell. */
#ifndef FAULTLINE_TOOLS_HTML_MODEL_H
#define FAULTLINE_TOOLS_HTML_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "string_set.h"

#include "callsite.h"
#include "fault_time.h"
#include "report_map.h"
#include "timeline.h"
#include "trace_reader.h"
#include "visualize_frames.h"

#define HTML_ROWS 128
#define HTML_COLS 256
#define HTML_MAX_GROUPS 2000
#define HTML_MAX_CELLS 100000
#define HTML_MAX_FRAMES 64
#define HTML_MAX_NAME 160
#define HTML_MAX_NAME_BYTES (512u << 10) /* as written: JSON-escaped, quoted, comma */
#define HTML_MAX_OBJECTS 40
#define HTML_MAX_OBJECTS_TOTAL 4000
#define HTML_MAX_POINTS 400
#define HTML_MAX_SERIES 32
#define HTML_MAX_HOT 16
#define HTML_MAX_MRC 64

#define HTML_NONE UINT32_MAX

/* One non-empty bucket. */
struct html_cell {
	uint16_t row, col;
	uint8_t kind;               /* enum fl_fault_kind */
	uint32_t group;
	uint64_t count;
};

/* One (process, fault stack, allocation site, thread), as indexes into the tables below. */
struct html_group {
	uint32_t proc, stack, callsite, function, site, thread;
	uint64_t faults;            /* while accumulating: every kind */
};

/* A row of the allocation-site table: its name and the whole-run counts of the sites files. */
struct html_site {
	uint32_t name;              /* index into names */
	bool has_counts;            /* some process's sites file names it */
	uint64_t allocs, bytes, objects_faulted, faults;
};

/* An object of an allocation site that faulted: its range and lifetime (the time axis's ns; end
 * UINT64_MAX: live at the end or unknown). */
struct html_object {
	uint32_t site;
	uint32_t pid;
	uint64_t addr, size, start_ns, end_ns, faults;
};

struct html_thread {
	uint32_t pid, tid;
};

/* One counter of one process over time (its tid 0 samples), on the time axis, as the steps of
 * timeline_steps.h: a cumulative counter's rate per second of the axis, a gauge's level. At most
 * HTML_MAX_POINTS steps: consecutive steps are merged in equal runs (a rate weighted by the steps'
 * spans, so the merged steps keep the counter's growth; a gauge's highest level). */
struct html_series {
	uint32_t pid;
	unsigned counter;           /* enum of trace.h FL_TL_* */
	bool gauge;                 /* a level; else cumulative */
	uint64_t first, last;       /* the counter at the first and the last step's ends (cumulative) */
	size_t n;
	uint64_t x0[HTML_MAX_POINTS], x1[HTML_MAX_POINTS];
	double value[HTML_MAX_POINTS];
};

struct html_hot {
	uint64_t lo, hi;            /* bytes */
	double pct;
	char label[HTML_MAX_NAME];
};

struct html_mrc_point {
	uint64_t local_bytes;
	double predicted, lower, upper;
};

/* One size of the sweep the recording belongs to (faultline sweep's DIR/L-<size>), as measured. */
struct html_sweep_point {
	uint64_t local_bytes, faults, refaults;
	bool this_recording;        /* the recording drawn on the page */
};

/* A table of distinct strings: names[i] (each at most HTML_MAX_NAME bytes). */
struct html_names {
	struct string_set set;      /* the names, by index */
	size_t bytes;               /* their JSON text, at most */
};

struct html_model {
	/* inputs */
	const struct fl_recording *rec;
	struct callsite_table *callsites;
	struct vf_namer *namer;
	const struct fault_clock *clock;
	unsigned kinds;             /* bit (1 << kind) for the kinds taken */
	uint32_t pid;               /* the one process selected (all its exec images); 0: every process */
	size_t nselected;           /* process images of rec selected */
	uint64_t origin_ns;         /* the axis's 0 on the clock's axis: on the wall axis the start of
	                             * the first process selected (0 without a pid), else 0 */

	/* the grid: row r holds bytes [addr0 + r * row_bytes, + row_bytes), column c nanoseconds
	 * [c * col_ns, + col_ns) of the axis */
	uint64_t page_size;
	uint64_t first_page, page_step; /* rows in pages while accumulating */
	uint64_t min_page, max_page;
	uint64_t col_ns;
	bool any;
	uint64_t addr0, row_bytes;
	unsigned rows, cols;

	uint64_t faults[FL_FAULT_KIND_MAX + 1]; /* taken, by kind */
	uint64_t untimed;           /* taken faults without a time on the axis: not in the cells */
	uint64_t max_time_ns;

	struct report_map cell_map;  /* (row << 20 | col << 4 | kind, group) -> count */
	struct report_map group_map; /* (proc << 32 | stack index + 1, site loc << 32 | tid) -> group + 1 */
	struct report_map object_map; /* (proc, alloc index) -> faults */
	struct html_group *groups;
	size_t ngroups, groups_cap;
	uint32_t **site_loc_of_stack; /* per process, per stack index + 1: the site's callsite, lazily */

	/* results (html_model_finish) */
	struct html_cell *cells;
	size_t ncells;
	size_t merged_groups;       /* groups folded into "[other stacks]" */
	unsigned coarsened;         /* halvings of the grid to fit HTML_MAX_CELLS */
	struct html_names names;
	uint32_t **stacks;          /* frames as name indexes, root first */
	uint16_t *stack_len;
	size_t nstacks;
	uint32_t *callsite_names;   /* callsite table: name index of each */
	size_t ncallsites;
	uint32_t *function_names;
	size_t nfunctions;
	struct html_site *sites;
	size_t nsites;
	struct html_thread *threads;
	size_t nthreads;
	uint32_t *procs;            /* index into rec->procs of each process row (HTML_NONE: other) */
	uint32_t *proc_names;       /* "pid NAME COMMAND" of each, a name index */
	size_t nprocs;
	struct html_object *objects;
	size_t nobjects;
	struct html_series *series;
	size_t nseries;
	size_t series_dropped;      /* series past HTML_MAX_SERIES, not kept */
	struct html_hot hot[HTML_MAX_HOT];
	size_t nhot;
	struct html_mrc_point mrc[HTML_MAX_MRC];
	size_t nmrc;
	uint64_t mrc_peak_bytes;
	struct html_sweep_point sweep[HTML_MAX_MRC];
	size_t nsweep;
	size_t sweep_knee;          /* index into sweep of the knee (sweep.h), or SIZE_MAX */
};

/* Prepares an empty model of REC's faults of the kinds in KINDS on CLOCK's axis, naming stacks with
 * CALLSITES and NAMER (all borrowed until html_model_free). PID (0: every process) is the process
 * selected: the caller adds only its faults and timelines; the sites' whole-run counts, the
 * miss-ratio curve and the stacks' image root frames follow it, and the time axis starts at its
 * start. 0, or -1 (ENOMEM). */
int html_model_init(struct html_model *m, const struct fl_recording *rec, struct callsite_table *callsites,
		    struct vf_namer *namer, const struct fault_clock *clock, unsigned kinds, uint32_t pid);

/* Counts one fault of PROC (a process of the model's recording); faults of other kinds are
 * ignored. 0, or -1 (ENOMEM). */
int html_model_add_fault(struct html_model *m, const struct fl_process *proc, const struct fl_fault *fault);

/* The counters of PROC's timeline (its tid 0 samples) that have at least one step and are not
 * always 0, at most
 * HTML_MAX_POINTS steps each; series past HTML_MAX_SERIES are counted in series_dropped. 0, or -1
 * (ENOMEM). */
int html_model_add_timeline(struct html_model *m, const struct fl_process *proc, const struct fl_timeline *tl);

/* A hot address range [lo, hi) holding PCT % of the faults (at most HTML_MAX_HOT are kept). */
void html_model_add_hot_range(struct html_model *m, uint64_t lo, uint64_t hi, double pct, const char *label);

/* Fills the miss-ratio curve (clock policy, as faultline mrc's default) when the recording was made with
 * record --mrc (else leaves it empty): of the selected process only, at the sizes faultline mrc
 * takes for the whole recording.
 * 0, or -1 (ENOMEM). */
int html_model_add_mrc(struct html_model *m);

/* Fills the sweep curve when the recording is one size of a `faultline sweep` output (its parent
 * directory holds sweep.csv and the other sizes' L-<size> recordings; each size's counts from its
 * stats.json files, as the sweep printed them: every process, whatever the pid), else leaves it
 * empty. 0, or -1 (ENOMEM). */
int html_model_add_sweep(struct html_model *m);

/* Bounds and names everything (see the top of this file). 0, or -1 (ENOMEM). */
int html_model_finish(struct html_model *m);

void html_model_free(struct html_model *m);

/* The time axis's end: the end of the last column. */
uint64_t html_model_end_ns(const struct html_model *m);

#endif
