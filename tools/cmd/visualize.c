/* visualize.c: `faultline visualize` — flame graphs (SVG and folded stacks) of where a recording's
 * faults were taken and of the allocation sites whose objects took them, and an address × time
 * heatmap. Reading is the trace reader's, naming frames visualize_frames.c's, drawing
 * flamegraph.c's and heatmap.c's; this file parses options, counts faults per stack and writes
 * the files.
 *
 * One pass over each selected process's faults counts them per (stack, kind) and per (allocation
 * site stack, kind), and feeds the heatmap; then each distinct stack is symbolized once (with the
 * maps in force at its first fault) and added to the trees with its counts. Faults without a stack
 * go under the single frame "[no stack]", so every folded file sums to the faults of its kind.
 *
 * Files (in OUTDIR, default DIR), each written to a temporary name and renamed when complete:
 *   faults.folded, flamegraph.svg                 every selected fault
 *   faults-KIND.folded, flamegraph-KIND.svg       first-touch and refault (and soft, concurrent
 *                                                 when the recording has any)
 *   faults-alloc.folded, flamegraph-alloc.svg     allocation sites weighted by their objects' faults
 *   ranges.txt                                    the hot address ranges (RAP, ranges.h) of the
 *                                                 selected faults, with each process's tree
 *   heatmap.svg                                   address × time, the hot ranges marked
 *   timeline.svg                                  the counter timelines (timeline_svg.h), one strip
 *                                                 per counter on the heatmap's time axis (when the
 *                                                 recording has timelines)
 * Memory: on the wall time axis (the default) a recording of the common clean shape is streamed:
 * its faults are walked twice (the trees, the heatmap's pages and allocations; then the heatmap's
 * cells, heatmap.h), never held, so memory grows with distinct stacks and pages, not faults.
 *
 * Their paths are printed on stdout, one per line; notes and warnings go to stderr. On a terminal,
 * reading the recording and counting its faults show a progress line on stderr (report_progress.h;
 * not with --verbose), erased before anything else is printed. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "alloc_lifetimes.h"
#include "cli.h"
#include "temp_file.h"
#include "fault_time.h"
#include "flamegraph.h"
#include "heatmap.h"
#include "html_model.h"
#include "html_report.h"
#include "ranges.h"
#include "symbolize.h"
#include "timeline.h"
#include "timeline_svg.h"
#include "trace_reader.h"
#include "recording_arg.h"
#include "report_map.h"
#include "report_progress.h"
#include "report_verb.h"
#include "fault_stream.h"
#include "visualize_frames.h"
#include "viz_files.h"

#define NKINDS (FL_FAULT_KIND_MAX + 1) /* enum fl_fault_kind values 1..5; index 0 unused */
#define KIND_MASK_ALL 0x1e /* "all": the faults (1..4), without access samples */
#define KIND_ACCESS (1u << FL_FAULT_ACCESS_SAMPLE)

#define NO_STACK "[no stack]"
#define RUNTIME_ONLY "[faultline runtime]"
#define NOT_SAMPLED "[allocation site not sampled]"
#define NO_ALLOC "[not in a recorded allocation]"
#define OTHER_STACKS "[other stacks]"

struct viz_options {
	const char *dir;        /* NULL: the newest faultline-* here */
	const char *outdir;     /* NULL: dir */
	unsigned kinds;         /* bit (1 << kind) for each selected enum fl_fault_kind */
	bool kinds_given;
	uint32_t pid;           /* 0: every process */
	uint64_t top;           /* 0: every stack */
	const char *title;
	double min_width;
	bool min_width_percent;
	unsigned width;
	uint64_t max_frames;
	bool reverse, inverted, keep_runtime, verbose;
	bool no_html;           /* --no-html: no report.html */
	enum fl_time_axis time_axis; /* --time: the heatmap's time axis */
};

/* The trees being built: index 0 all selected faults, 1..4 per kind. */
struct viz {
	const struct viz_options *o;
	const struct fl_recording *rec;
	struct callsite_skip skip;          /* the default list: callsite names only (frames keep all) */
	struct callsite_table *callsites;   /* the one stack → frames → callsite resolver */
	struct vf_namer *namer;
	struct flame *tree[NKINDS];
	struct flame *alloc_tree;
	struct heatmap *hm;
	uint64_t faults[NKINDS];  /* selected faults per kind; [0] all */
	size_t nprocs;
	uint64_t stack_sample;              /* the largest record -s N of the selected processes */
	bool image_roots;                   /* several process images selected: each stack starts with
	                                     * its image's command name, one root per image (as perf) */
	struct flame_frame *frames;
	size_t frames_cap;
	struct ranges_options ranges_opts;  /* hot ranges: ranges.txt, marks on the heatmap */
	struct ranges_result ranges;
	bool has_ranges;
	struct fault_clock clock;           /* the heatmap's time axis (--time) */
	uint64_t untimed;                   /* selected faults without a time on it: not on the heatmap */
	struct fl_timeline *timelines;      /* per process of rec (unselected ones empty) */
	size_t ntimelines;                  /* processes with timeline samples */
	uint64_t heatmap_end_ns;            /* the heatmap's time axis, for timeline.svg (wall time) */
	struct html_model html;             /* report.html's buckets (unless --no-html) */
	char *html_header;                  /* report's header lines, for report.html */
	bool has_html;
	unsigned heatmap_plot_width;
	struct report_progress *progress;   /* stopped before anything is printed */
	unsigned sym_warnings;              /* the symbolizer's (the first 20 printed) */
	char read_error[768];               /* "" or why a walk over a process's faults failed */
	uint64_t faults_counted;            /* faults of the selected processes gone through so far */
};

#define PROGRESS_EVERY 65536 /* faults between two updates of the progress line */

static void viz_usage(FILE *out)
{
	fputs("usage: faultline visualize [DIR] [-o OUTDIR] [options]\n"
	      "\n"
	      "Draws where a recording's page faults were taken: flame graphs (self-contained SVG with\n"
	      "zoom and search, and folded stacks for flamegraph.pl, inferno or speedscope) of the\n"
	      "faulting stacks and of the allocation sites whose objects faulted, and an address x time\n"
	      "heatmap of the touched address ranges with allocation lifetimes and the hot address ranges\n"
	      "(RAP, phi 0.05: each holding at least 5% of the faults, as faultline ranges finds them)\n"
	      "marked, and those ranges as text. Prints the paths written.\n"
	      "\n"
	      "  DIR                    the recording (default: the newest faultline-* directory here)\n"
	      "  -o, --output OUTDIR    where to write (default: DIR); created if missing\n"
	      "      --kind KINDS       only these kinds of fault: first-touch, refault, soft,\n"
	      "                         concurrent, access (the access samples of record\n"
	      "                         --sample-accesses, drawn grey in the heatmap, and their own\n"
	      "                         flame graph) or all (the faults), comma-separated (default:\n"
	      "                         all,access)\n"
	      "      --pid PID          only this process (all its exec images)\n"
	      "      --top N            draw the N stacks with the most faults; the rest become one\n"
	      "                         frame \"" OTHER_STACKS "\" (totals unchanged; 0: every stack,\n"
	      "                         the default)\n"
	      "      --title TEXT       title of the flame graphs\n"
	      "      --minwidth W       frames narrower than W pixels (or W% of the width: \"0.5%\") are\n"
	      "                         merged into one \"[N more]\" frame per parent (default 1; never\n"
	      "                         below 1 px)\n"
	      "      --max-frames N     raise the minimum width until at most N frames are drawn\n"
	      "                         (default 12000: the SVG stays around 2 MB at most)\n"
	      "      --width PX         width of the flame graphs (default 1200)\n"
	      "      --reverse          merge stacks from the faulting function down (who calls it)\n"
	      "      --inverted         icicle graph: root at the top\n"
	      "      --keep-runtime     keep faultline's own frames (libfaultline.so), normally skipped\n"
	      "      --time AXIS        the time axis of the heatmap and timeline.svg: wall (default:\n"
	      "                         since the recording started) or virtual (the program's own time,\n"
	      "                         not dilated by recording: the CPU time, task-clock, its threads\n"
	      "                         had used; the heatmap then has no allocation outlines, and faults\n"
	      "                         without a virtual time are left out and counted in its subtitle)\n"
	      "      --no-html          do not write report.html (it costs one more pass, as report's)\n"
	      "  -v, --verbose          frames, sizes and times of each file on stderr\n"
	      "  -h, --help             this help\n"
	      "\n"
	      "Files: report.html (one self-contained page: report's header, tables of callsites,\n"
	      "functions, allocation sites, threads and processes, the flame graphs by kind, the heatmap\n"
	      "over the counter timeline and the miss-ratio curve, linked: select a row, brush a\n"
	      "rectangle; faults bucketed by address x time x stack, see the page's notes),\n"
	      "flamegraph.svg, flamegraph-first-touch.svg, flamegraph-refault.svg,\n"
	      "flamegraph-alloc.svg, heatmap.svg, timeline.svg (counters over time, one strip per\n"
	      "counter on the heatmap's time axis, when the recording has timelines: record --timeline),\n"
	      "ranges.txt (faultline ranges --tree), and faults.folded, faults-first-touch.folded,\n"
	      "faults-refault.folded, faults-alloc.folded (soft, concurrent and access ones when present).\n"
	      "With several process images selected (forks, execs), every stack\n"
	      "starts with its image's command name, one root frame per image, as perf does (with\n"
	      "--reverse the name is the last frame).\n"
	      "Folded stacks are root first (\"main;a;b COUNT\") even with --reverse. Faults without a\n"
	      "stack count under \"" NO_STACK "\", so each folded file sums to the faults of its kind.\n"
	      "Exit status 1 when the recording is missing or corrupt, 2 on a usage error.\n", out);
}

static int parse_kinds(const char *text, unsigned *mask, char *err, size_t errlen)
{
	char buf[256], *save = NULL, *tok;

	if (strlen(text) >= sizeof(buf) || !*text) {
		snprintf(err, errlen, "'%s' is not a list of kinds", text);
		return -1;
	}
	strcpy(buf, text);
	*mask = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned k;
		if (strcmp(tok, "all") == 0) {
			*mask |= KIND_MASK_ALL;
			continue;
		}
		for (k = 1; k < NKINDS; k++)
			if (strcmp(tok, fl_fault_kind_name(k)) == 0)
				break;
		if (k == NKINDS) {
			snprintf(err, errlen, "unknown kind '%s' (first-touch, refault, soft, concurrent, access or all)", tok);
			return -1;
		}
		*mask |= 1u << k;
	}
	if (!*mask) {
		snprintf(err, errlen, "'%s' names no kind", text);
		return -1;
	}
	return 0;
}

/* "1.5" (pixels) or "0.5%"; positive. */
static int parse_min_width(const char *text, double *value, bool *percent, char *err, size_t errlen)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	*percent = false;
	if (end != text && *end == '%') {
		*percent = true;
		end++;
	}
	if (errno || end == text || *end || !(v > 0) || v > 1e6 || (*percent && v > 100) ||
	    !(text[0] >= '0' && text[0] <= '9') ) {
		snprintf(err, errlen, "'%s' is not a width in pixels or a percentage (\"1\", \"0.5%%\")", text);
		return -1;
	}
	*value = v;
	return 0;
}

/* Parses argv; returns -1 to exit 0 (help shown), 0 to go on, or CLI_EXIT_USAGE. */
enum { OPT_OUTPUT, OPT_KIND, OPT_PID, OPT_TOP, OPT_TITLE, OPT_MINWIDTH, OPT_MAX_FRAMES, OPT_WIDTH, OPT_REVERSE,
       OPT_INVERTED, OPT_KEEP_RUNTIME, OPT_VERBOSE, OPT_TIME, OPT_NO_HTML };

static int viz_option(void *ctx, int id, const char *value, char *err, size_t errlen)
{
	struct viz_options *o = ctx;
	uint64_t number;

	switch (id) {
	case OPT_OUTPUT: o->outdir = value; return 0;
	case OPT_TITLE: o->title = value; return 0;
	case OPT_REVERSE: o->reverse = true; return 0;
	case OPT_INVERTED: o->inverted = true; return 0;
	case OPT_KEEP_RUNTIME: o->keep_runtime = true; return 0;
	case OPT_VERBOSE: o->verbose = true; return 0;
	case OPT_NO_HTML: o->no_html = true; return 0;
	case OPT_TIME: return fl_time_axis_parse(value, &o->time_axis, err, errlen);
	case OPT_KIND:
		o->kinds_given = true;
		return parse_kinds(value, &o->kinds, err, errlen);
	case OPT_MINWIDTH:
		return parse_min_width(value, &o->min_width, &o->min_width_percent, err, errlen);
	case OPT_PID:
		return cli_parse_pid(value, &o->pid, err, errlen);
	case OPT_TOP: /* 0: every stack (the default), as report's --top 0 */
		if (cli_parse_uint(value, 0, UINT32_MAX, &number, err, errlen) < 0)
			return -1;
		o->top = number;
		return 0;
	case OPT_MAX_FRAMES:
		if (cli_parse_uint(value, 10, 10000000, &number, err, errlen) < 0)
			return -1;
		o->max_frames = number;
		return 0;
	default: /* OPT_WIDTH */
		if (cli_parse_uint(value, 200, 32767, &number, err, errlen) < 0)
			return -1;
		o->width = (unsigned)number;
		return 0;
	}
}

static int viz_parse(int argc, char **argv, struct viz_options *o)
{
	static const struct cli_opt opts[] = {
		{ "-o", "--output", CLI_VALUE, OPT_OUTPUT },
		{ NULL, "--kind", CLI_VALUE, OPT_KIND },
		{ NULL, "--pid", CLI_VALUE, OPT_PID },
		{ NULL, "--top", CLI_VALUE, OPT_TOP },
		{ NULL, "--title", CLI_VALUE, OPT_TITLE },
		{ NULL, "--minwidth", CLI_VALUE, OPT_MINWIDTH },
		{ NULL, "--max-frames", CLI_VALUE, OPT_MAX_FRAMES },
		{ NULL, "--width", CLI_VALUE, OPT_WIDTH },
		{ NULL, "--reverse", CLI_FLAG, OPT_REVERSE },
		{ NULL, "--inverted", CLI_FLAG, OPT_INVERTED },
		{ NULL, "--keep-runtime", CLI_FLAG, OPT_KEEP_RUNTIME },
		{ "-v", "--verbose", CLI_FLAG, OPT_VERBOSE },
		{ NULL, "--time", CLI_VALUE, OPT_TIME },
		{ NULL, "--no-html", CLI_FLAG, OPT_NO_HTML },
	};
	struct cli_verb verb = { "visualize", viz_usage, opts, sizeof(opts) / sizeof(opts[0]), viz_option, NULL, &o->dir,
				 o };

	memset(o, 0, sizeof(*o));
	o->kinds = KIND_MASK_ALL | KIND_ACCESS; /* access samples: in the heatmap and their own graph */
	o->min_width = 1;
	o->width = 1200;
	o->max_frames = 12000;
	return cli_parse_verb(&verb, argc, argv);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------ counting */

static enum flame_class class_of(enum vf_origin origin)
{
	switch (origin) {
	case VF_ORIGIN_PROGRAM: return FLAME_CLASS_CODE;
	case VF_ORIGIN_LIBRARY: return FLAME_CLASS_LIBRARY;
	default: return FLAME_CLASS_PSEUDO;
	}
}

/* The command name of PROC's image: its executable's base name. */
static const char *image_name(const struct fl_process *proc)
{
	const char *slash = proc->exe ? strrchr(proc->exe, '/') : NULL;
	return slash ? slash + 1 : proc->exe && *proc->exe ? proc->exe : "[unknown command]";
}

/* The flame frames of STACK (root first; under maps SNAPSHOT, FL_NONE: the stack's first use) into
 * viz->frames; a single pseudo frame PSEUDO when STACK is NULL or only the runtime's; with
 * image_roots, after PROC's command name as the root frame.
 * Returns the number of frames, or -1 on ENOMEM. */
static long stack_to_frames(struct viz *v, const struct fl_process *proc, const struct fl_stack *stack,
			    uint32_t snapshot, const char *pseudo)
{
	const struct vf_frame *vf = NULL;
	size_t n = 0, root = v->image_roots ? 1 : 0;

	if (stack && (snapshot == FL_NONE ? vf_stack_frames(v->namer, proc, stack, true, &vf, &n)
					  : vf_stack_frames_in(v->namer, proc, stack, snapshot, true, &vf, &n)) < 0)
		return -1;
	if (n + 2 > v->frames_cap) {
		size_t cap = n + 64;
		struct flame_frame *f = realloc(v->frames, cap * sizeof(*f));
		if (!f)
			return -1;
		v->frames = f;
		v->frames_cap = cap;
	}
	if (root)
		v->frames[0] = (struct flame_frame){ image_name(proc), NULL, 0, FLAME_CLASS_PSEUDO };
	if (n == 0) {
		v->frames[root] = (struct flame_frame){ stack ? RUNTIME_ONLY : pseudo, NULL, 0, FLAME_CLASS_PSEUDO };
		return (long)root + 1;
	}
	for (size_t i = 0; i < n; i++)
		v->frames[root + i] = (struct flame_frame){ vf[i].function, vf[i].file, vf[i].line, class_of(vf[i].origin) };
	return (long)(root + n);
}

/* Adds COUNTS[1..4] (per kind) of one stack to the trees. */
static int add_counts(struct viz *v, const struct flame_frame *frames, size_t n, const uint64_t *counts)
{
	uint64_t sum = 0;

	for (unsigned k = 1; k < NKINDS; k++) {
		if (!counts[k])
			continue;
		if (k != FL_FAULT_ACCESS_SAMPLE) /* access samples are not faults: their own graph only */
			sum += counts[k];
		if (flame_add(v->tree[k], frames, n, counts[k]) < 0)
			return -1;
	}
	return sum ? flame_add(v->tree[0], frames, n, sum) : 0;
}

/* The innermost named frame of an allocation site, for outline tooltips. */
static void alloc_label(struct viz *v, const struct fl_process *proc, const struct fl_alloc_record *a, char *buf,
			size_t len)
{
	const struct fl_stack *s = fl_process_stack(proc, a->stack_id);
	uint32_t site = s ? callsite_of_stack_at(v->callsites, (size_t)(proc - v->rec->procs), s, a->time_ns) : FL_NONE;
	const struct callsite_loc *loc = site != FL_NONE ? callsite_loc(v->callsites, site) : NULL;

	if (loc) /* the allocation site as report --by alloc and ranges name it */
		snprintf(buf, len, "alloc #%u (pid %u) from %s", a->alloc_id, proc->pid, loc->function);
	else
		snprintf(buf, len, "alloc #%u (pid %u)", a->alloc_id, proc->pid);
}

/* Counts one event of STACK (kind KIND, at TIME_NS) into *COUNT when the maps snapshot in force at
 * TIME_NS is the stack's first use's (the usual case: one snapshot), else into OTHER under (stack
 * index + 1, snapshot × NKINDS + kind), to be named under that snapshot. -1 on ENOMEM. */
static int count_stack(struct viz *v, const struct fl_process *proc, const struct fl_stack *stack, uint64_t time_ns,
		       struct report_map *other, uint64_t *count, unsigned kind)
{
	size_t p = (size_t)(proc - v->rec->procs);
	uint32_t snap, first;
	uint64_t *c;

	if (!stack || proc->nmaps <= 1 || (snap = callsite_snapshot_at(v->callsites, p, time_ns)) ==
						 (first = callsite_stack_snapshot(v->callsites, p, stack))) {
		(*count)++;
		return 0;
	}
	if (first == FL_NONE ||
	    !(c = report_map_add(other, (uint64_t)(stack - proc->stacks) + 1, (uint64_t)snap * NKINDS + kind, NULL)))
		return -1;
	(*c)++;
	return 0;
}

/* Notes that a walk over PROC's faults failed (a streamed file could not be read again). */
static void viz_read_error(struct viz *v, const struct fl_process *proc, const char *why)
{
	snprintf(v->read_error, sizeof(v->read_error), "%s: %s", proc->dir, why);
}

/* The fault's time on the heatmap's axis, when it is one of the selected faults and has one. */
static bool heatmap_time(struct viz *v, const struct fl_process *proc, const struct fl_fault *f, uint64_t *t)
{
	unsigned kind = f->rec.kind;
	return kind < NKINDS && (v->o->kinds & (1u << kind)) && fault_clock_time(&v->clock, proc, f, t);
}

/* The heatmap's second pass: every selected fault of the selected processes counted into its
 * cell (heatmap.h). 0, or -1 with v->read_error set. */
static int count_heatmap(struct viz *v)
{
	for (size_t p = 0; p < v->rec->nprocs; p++) {
		const struct fl_process *proc = &v->rec->procs[p];
		struct fl_fault_stream *fs;
		const struct fl_fault *f;
		char why[512];
		int got;
		uint64_t t;

		if (v->o->pid && proc->pid != v->o->pid)
			continue;
		if (fl_fault_stream_open(proc, &fs, why, sizeof(why)) < 0) {
			viz_read_error(v, proc, why);
			return -1;
		}
		while ((got = fl_fault_stream_next(fs, &f)) > 0)
			if (heatmap_time(v, proc, f, &t))
				heatmap_count_fault(v->hm, t, f->rec.addr, f->rec.kind);
		if (got < 0)
			viz_read_error(v, proc, fl_fault_stream_error(fs));
		fl_fault_stream_close(fs);
		if (got < 0)
			return -1;
	}
	return 0;
}

/* Counts one process's selected faults into the trees and the heatmap. */
static int viz_process(struct viz *v, const struct fl_process *proc)
{
	size_t ns = proc->nstacks + 1;  /* index 0: no stack / site not sampled */
	uint64_t *counts = calloc(ns * NKINDS, sizeof(uint64_t));
	uint64_t *alloc_counts = calloc(ns * NKINDS, sizeof(uint64_t));
	uint64_t *alloc_faults = calloc(proc->nallocs + 1, sizeof(uint64_t)), *ends = NULL;
	uint64_t no_alloc[NKINDS] = { 0 };
	struct { size_t index; uint64_t faults; } *top = NULL;
	struct report_map other = REPORT_MAP_INIT, other_alloc = REPORT_MAP_INIT;
	const struct report_map_slot *slot;
	int rc = -1;

	struct fl_fault_stream *fs = NULL;
	const struct fl_fault *f;
	char why[512];
	int got;

	if (!counts || !alloc_counts || !alloc_faults)
		goto out;
	if (fl_fault_stream_open(proc, &fs, why, sizeof(why)) < 0) {
		viz_read_error(v, proc, why);
		goto out;
	}
	while ((got = fl_fault_stream_next(fs, &f)) > 0) {
		unsigned kind = f->rec.kind;
		const struct fl_stack *s;
		size_t si;

		if (++v->faults_counted % PROGRESS_EVERY == 0)
			report_progress_set(v->progress, v->faults_counted);
		if (v->has_html && html_model_add_fault(&v->html, proc, f) < 0)
			goto out;
		if (kind >= NKINDS || !(v->o->kinds & (1u << kind)))
			continue;
		v->faults[kind]++;
		if (kind != FL_FAULT_ACCESS_SAMPLE)
			v->faults[0]++;
		s = fl_fault_stack(proc, f);
		si = s ? (size_t)(s - proc->stacks) + 1 : 0;
		if (count_stack(v, proc, s, f->rec.time_ns, &other, &counts[si * NKINDS + kind], kind) < 0)
			goto out;
		uint64_t t;
		if (!fault_clock_time(&v->clock, proc, f, &t))
			v->untimed++;
		else if (heatmap_note_fault(v->hm, t, f->rec.addr) < 0)
			goto out;
		if (f->alloc != FL_NONE) {
			const struct fl_alloc_record *a = &proc->allocs[f->alloc];
			const struct fl_stack *as = fl_process_stack(proc, a->stack_id);
			size_t ai = as ? (size_t)(as - proc->stacks) + 1 : 0;
			if (kind != FL_FAULT_ACCESS_SAMPLE) { /* the allocation flame graph weighs faults */
				alloc_faults[f->alloc]++;
				if (count_stack(v, proc, as, a->time_ns, &other_alloc, &alloc_counts[ai * NKINDS + kind],
						kind) < 0)
					goto out;
			}
		} else if (kind != FL_FAULT_ACCESS_SAMPLE) {
			no_alloc[kind]++;
		}
	}
	if (got < 0) {
		viz_read_error(v, proc, fl_fault_stream_error(fs));
		goto out;
	}
	/* Each stack with faults, symbolized once. */
	for (size_t si = 0; si < ns; si++) {
		const struct fl_stack *s = si ? &proc->stacks[si - 1] : NULL;
		const uint64_t *c = &counts[si * NKINDS], *ac = &alloc_counts[si * NKINDS];
		bool any = false, any_alloc = false;
		long n;
		for (unsigned k = 1; k < NKINDS; k++) {
			any |= c[k] != 0;
			any_alloc |= ac[k] != 0;
		}
		if (any) {
			if ((n = stack_to_frames(v, proc, s, FL_NONE, NO_STACK)) < 0 ||
			    add_counts(v, v->frames, (size_t)n, c) < 0)
				goto out;
		}
		if (any_alloc) {
			uint64_t sum = 0;
			for (unsigned k = 1; k < NKINDS; k++)
				sum += ac[k];
			if ((n = stack_to_frames(v, proc, s, FL_NONE, NOT_SAMPLED)) < 0 ||
			    flame_add(v->alloc_tree, v->frames, (size_t)n, sum) < 0)
				goto out;
		}
	}
	/* Stacks counted under another maps snapshot than their first use's: named under that one. */
	for (size_t i = 0; (slot = report_map_next(&other, &i)) != NULL;) {
		uint64_t c[NKINDS] = { 0 };
		long n;
		c[slot->b % NKINDS] = slot->value;
		if ((n = stack_to_frames(v, proc, &proc->stacks[slot->a - 1], (uint32_t)(slot->b / NKINDS),
					 NO_STACK)) < 0 || add_counts(v, v->frames, (size_t)n, c) < 0)
			goto out;
	}
	for (size_t i = 0; (slot = report_map_next(&other_alloc, &i)) != NULL;) {
		long n;
		if ((n = stack_to_frames(v, proc, &proc->stacks[slot->a - 1], (uint32_t)(slot->b / NKINDS),
					 NOT_SAMPLED)) < 0 || flame_add(v->alloc_tree, v->frames, (size_t)n, slot->value) < 0)
			goto out;
	}
	{
		uint64_t sum = 0;
		struct flame_frame f[2] = { { image_name(proc), NULL, 0, FLAME_CLASS_PSEUDO },
					    { NO_ALLOC, NULL, 0, FLAME_CLASS_PSEUDO } };
		size_t root = v->image_roots ? 0 : 1;
		for (unsigned k = 1; k < NKINDS; k++)
			sum += no_alloc[k];
		if (sum && flame_add(v->alloc_tree, f + root, 2 - root, sum) < 0)
			goto out;
	}
	/* Allocation lifetimes for the heatmap: the objects that took the most faults (wall time only:
	 * an allocation has no virtual time of its own). */
	if (proc->nallocs && v->o->time_axis == FL_TIME_WALL) {
		size_t ntop = 0, max_top = 400;
		if (!(ends = fl_alloc_end_times(proc)) || !(top = malloc(max_top * sizeof(*top))))
			goto out;
		for (size_t i = 0; i < proc->nallocs; i++) {
			size_t j;
			if (!alloc_faults[i])
				continue;
			if (ntop == max_top && alloc_faults[i] <= top[ntop - 1].faults)
				continue;
			j = ntop < max_top ? ntop++ : ntop - 1;
			while (j > 0 && top[j - 1].faults < alloc_faults[i]) {
				top[j] = top[j - 1];
				j--;
			}
			top[j].index = i;
			top[j].faults = alloc_faults[i];
		}
		for (size_t k = 0; k < ntop; k++) {
			const struct fl_alloc_record *a = &proc->allocs[top[k].index];
			uint64_t end = ends[top[k].index];
			char label[512];
			alloc_label(v, proc, a, label, sizeof(label));
			if (heatmap_add_alloc(v->hm, proc->offset_ns + a->time_ns,
					      end == UINT64_MAX ? UINT64_MAX : proc->offset_ns + end, a->addr, a->size,
					      top[k].faults, label) < 0)
				goto out;
		}
	}
	rc = 0;
out:
	fl_fault_stream_close(fs);
	report_map_free(&other);
	report_map_free(&other_alloc);
	free(counts);
	free(alloc_counts);
	free(alloc_faults);
	free(ends);
	free(top);
	if (rc < 0 && !v->read_error[0])
		errno = ENOMEM;
	return rc;
}

/* ------------------------------------------------------------------ writing */

/* Opens OUTDIR/NAME for writing under its temporary name (temp_file.h: renamed when complete,
 * removed if visualize is stopped meanwhile). */
static FILE *open_output(const char *outdir, const char *name, struct temp_file *t)
{
	char path[PATH_MAX], err[64];
	FILE *f;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", outdir, name) >= sizeof(path) ||
	    temp_file_begin(t, path, ".tmp", true, err, sizeof(err)) < 0) {
		cli_error("visualize: %s/%s: path too long", outdir, name);
		return NULL;
	}
	f = fopen(t->tmp, "w");
	if (!f) {
		cli_error("visualize: cannot create %s: %s", t->tmp, strerror(errno));
		temp_file_discard(t);
	}
	return f;
}

/* Abandons a file being written (its writer failed and said why): closed and removed. */
static void abort_output(FILE *f, struct temp_file *t)
{
	fclose(f);
	temp_file_discard(t);
}

/* Closes F and renames its temporary file to its name; prints the name on stdout. */
static int close_output(FILE *f, struct temp_file *t)
{
	char err[2 * PATH_MAX + 64];
	int failed = ferror(f);

	if (fclose(f) != 0 || failed) {
		cli_error("visualize: writing %s: %s", t->tmp, strerror(errno ? errno : EIO));
		temp_file_discard(t);
		return -1;
	}
	if (temp_file_commit(t, TEMP_FILE_REPLACE, err, sizeof(err)) < 0) {
		cli_error("visualize: %s", err);
		return -1;
	}
	printf("%s\n", t->path);
	return 0;
}

static long file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static int write_folded(const struct viz *v, const struct flame *tree, const char *name)
{
	struct temp_file out;
	FILE *f = open_output(v->o->outdir, name, &out);
	size_t lines;

	if (!f)
		return -1;
	lines = flame_write_folded(tree, f);
	if (close_output(f, &out) < 0)
		return -1;
	if (v->o->verbose)
		cli_error("visualize: %s: %zu stacks, %ld bytes", out.path, lines, file_size(out.path));
	return 0;
}

static int write_flamegraph(const struct viz *v, const struct flame *tree, const char *name, const char *what)
{
	struct flame_svg_options so;
	struct flame_svg_stats st;
	struct flame *reversed = NULL;
	struct temp_file out;
	char title[1024], subtitle[1024], count[32];
	double t0 = now_s();
	FILE *f;
	int rc;

	flame_svg_options_init(&so);
	if (v->o->title)
		snprintf(title, sizeof(title), "%s%s%s%s", v->o->title, *what ? " (" : "", what, *what ? ")" : "");
	else
		snprintf(title, sizeof(title), "%s%s", *what ? what : "page faults",
			 v->o->reverse ? ", stacks merged from the faulting frame" : "");
	int n = snprintf(subtitle, sizeof(subtitle), "%s faults in %zu process%s of %s",
			 cli_format_count(flame_total(tree), count, sizeof(count)), v->nprocs, v->nprocs == 1 ? "" : "es",
			 v->rec->dir);
	if (v->stack_sample > 1 && n > 0 && (size_t)n < sizeof(subtitle)) /* record -s N */
		snprintf(subtitle + n, sizeof(subtitle) - (size_t)n, "; stacks for 1 fault in %" PRIu64 ": the others are "
			 "under " NO_STACK " (click a frame to zoom past it)", v->stack_sample);
	so.title = title;
	so.subtitle = subtitle;
	so.width = v->o->width;
	so.min_width = v->o->min_width;
	so.min_width_percent = v->o->min_width_percent;
	so.max_frames = v->o->max_frames;
	so.inverted = v->o->inverted;
	if (v->o->reverse) {
		reversed = flame_reversed(tree);
		if (!reversed) {
			cli_error("visualize: out of memory");
			return -1;
		}
		tree = reversed;
	}
	f = open_output(v->o->outdir, name, &out);
	if (!f) {
		flame_free(reversed);
		return -1;
	}
	rc = flame_write_svg(tree, &so, f, &st);
	flame_free(reversed);
	if (rc < 0) {
		cli_error("visualize: %s: out of memory", out.path);
		abort_output(f, &out);
		return -1;
	}
	if (close_output(f, &out) < 0)
		return -1;
	if (v->o->verbose)
		cli_error("visualize: %s: %zu frames (%zu merged) of %zu nodes, min width %.2f px, %ux%u px, %ld bytes, %.3f s",
			  out.path, st.frames, st.merged, flame_node_count(tree), st.min_width_px, st.width, st.height,
			  file_size(out.path), now_s() - t0);
	return 0;
}

/* The hot ranges of the selected faults (v->ranges), as `faultline ranges --tree` prints them. */
static int compute_ranges(struct viz *v)
{
	char err[512];

	ranges_options_init(&v->ranges_opts);
	v->ranges_opts.pid = v->o->pid;
	v->ranges_opts.kinds = (v->o->kinds & KIND_MASK_ALL) == KIND_MASK_ALL ? RANGES_KINDS_ALL : v->o->kinds & KIND_MASK_ALL;
	if (ranges_compute(v->rec, &v->ranges_opts, &v->ranges, err, sizeof(err)) < 0) {
		cli_error("visualize: hot address ranges: %s", err);
		return -1;
	}
	v->has_ranges = true;
	for (size_t i = 0; i < v->ranges.nwarnings; i++)
		cli_error("visualize: warning: %s", v->ranges.warnings[i]);
	return 0;
}

static int write_ranges(const struct viz *v)
{
	struct temp_file out;
	FILE *f = open_output(v->o->outdir, VIZ_FILE_RANGES, &out);

	if (!f)
		return -1;
	if (ranges_print(&v->ranges, &v->ranges_opts, v->rec->dir, RANGES_TEXT, true, f) < 0 && !ferror(f)) {
		abort_output(f, &out);
		cli_error("visualize: %s: out of memory", out.path);
		return -1;
	}
	if (close_output(f, &out) < 0)
		return -1;
	if (v->o->verbose)
		cli_error("visualize: %s: %ld bytes", out.path, file_size(out.path));
	return 0;
}

/* The hot ranges with the most exclusive faults (roots aside) as marks on the heatmap. */
static int add_hot_ranges(const struct viz *v)
{
	struct ranges_ref top[HEATMAP_MAX_HOT];
	size_t n = ranges_top(&v->ranges, HEATMAP_MAX_HOT, top);

	for (size_t i = 0; i < n; i++) {
		const struct ranges_range *g = top[i].range;
		char label[512];
		int len = snprintf(label, sizeof(label), "%s", g->nsites ? g->sites[0].name : g->nmaps ? g->maps[0].name : "");
		if (v->ranges.nprocs > 1 && len >= 0 && (size_t)len < sizeof(label))
			snprintf(label + len, sizeof(label) - (size_t)len, "%spid %u", len ? ", " : "", top[i].proc->proc->pid);
		if (heatmap_add_hot_range(v->hm, g->lo, g->hi, g->pct, *label ? label : NULL) < 0) {
			cli_error("visualize: out of memory");
			return -1;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ timelines */

/* Reads the timelines of the selected processes. 0, or -1 (said why). */
static int load_timelines(struct viz *v)
{
	char err[1024];
	v->timelines = calloc(v->rec->nprocs ? v->rec->nprocs : 1, sizeof(*v->timelines));
	if (!v->timelines) {
		cli_error("visualize: out of memory");
		return -1;
	}
	for (size_t i = 0; i < v->rec->nprocs; i++) {
		if (v->o->pid && v->rec->procs[i].pid != v->o->pid)
			continue;
		if (fl_timeline_read(&v->rec->procs[i], &v->timelines[i], err, sizeof(err)) < 0) {
			/* an optional file: the other pictures are still made */
			cli_error("visualize: warning: %s; timeline.svg leaves this process out", err);
			continue;
		}
		if (v->timelines[i].warning[0])
			cli_error("visualize: warning: %s", v->timelines[i].warning);
		v->ntimelines += v->timelines[i].nrecs > 0;
	}
	return 0;
}

/* The last faults and timeline samples in recording time: the heatmap's axis is stretched to the
 * last sample when the program ran on after its last fault (0: no need). */
static uint64_t timeline_wall_end(const struct viz *v)
{
	uint64_t last_fault = 0, last_sample = 0;
	for (size_t i = 0; i < v->rec->nprocs; i++) {
		const struct fl_process *p = &v->rec->procs[i];
		if (v->o->pid && p->pid != v->o->pid)
			continue;
		if (p->nfaults && p->offset_ns + p->last_fault_ns > last_fault)
			last_fault = p->offset_ns + p->last_fault_ns;
		if (v->timelines && v->timelines[i].nrecs) {
			uint64_t t = p->offset_ns + v->timelines[i].recs[v->timelines[i].nrecs - 1].time_ns;
			if (t > last_sample)
				last_sample = t;
		}
	}
	return last_sample > last_fault && last_fault ? last_sample : 0;
}

/* Series of one process: its process samples (tid 0) placed on the axis. */
static int timeline_series_of(const struct viz *v, size_t p, struct timeline_series *s, char *label, size_t cap)
{
	const struct fl_process *proc = &v->rec->procs[p];
	const struct fl_timeline *tl = &v->timelines[p];
	struct fl_timeline_record *recs = malloc((tl->nrecs ? tl->nrecs : 1) * sizeof(*recs));
	uint64_t *x = malloc((tl->nrecs ? tl->nrecs : 1) * sizeof(*x));
	size_t n = 0;
	if (!recs || !x) {
		free(recs);
		free(x);
		return -1;
	}
	for (size_t i = 0; i < tl->nrecs; i++) {
		const struct fl_timeline_record *r = &tl->recs[i];
		if (r->tid != 0)
			continue;
		recs[n] = *r;
		if (v->o->time_axis != FL_TIME_VIRTUAL)
			x[n] = proc->offset_ns + r->time_ns;
		else
			x[n] = (r->valid & (1u << FL_TL_TASK_CLOCK)) ? r->values[FL_TL_TASK_CLOCK] : UINT64_MAX;
		n++;
	}
	snprintf(label, cap, "pid %s", proc->name);
	*s = (struct timeline_series){ label, recs, x, n };
	return 0;
}

static int write_timeline(const struct viz *v)
{
	struct timeline_series *series = calloc(v->rec->nprocs ? v->rec->nprocs : 1, sizeof(*series));
	char (*labels)[48] = calloc(v->rec->nprocs ? v->rec->nprocs : 1, sizeof(*labels));
	struct temp_file out;
	char subtitle[1024];
	struct timeline_svg_options to = { 0 };
	struct timeline_svg_stats st;
	size_t n = 0;
	int rc = -1;
	FILE *f = NULL;

	if (!series || !labels)
		goto nomem;
	for (size_t i = 0; i < v->rec->nprocs; i++)
		if (v->timelines[i].nrecs && timeline_series_of(v, i, &series[n], labels[n], sizeof(labels[n])) == 0)
			n++;
		else if (v->timelines[i].nrecs)
			goto nomem;
	f = open_output(v->o->outdir, VIZ_FILE_TIMELINE, &out);
	if (!f)
		goto out;
	snprintf(subtitle, sizeof(subtitle), "%zu process%s of %s; %s time", n, n == 1 ? "" : "es", v->rec->dir,
		 (v->o->time_axis == FL_TIME_VIRTUAL) ? "the program's own (task-clock)" : "wall");
	to.title = "counters over time";
	to.subtitle = subtitle;
	to.plot_width = v->heatmap_plot_width;
	to.end_ns = (v->o->time_axis == FL_TIME_VIRTUAL) ? 0 : v->heatmap_end_ns; /* the heatmap's axis (wall time) */
	to.virtual_time = (v->o->time_axis == FL_TIME_VIRTUAL);
	if (timeline_svg_write(series, n, &to, f, &st) < 0) {
		abort_output(f, &out);
		goto nomem;
	}
	if (close_output(f, &out) < 0)
		goto out;
	if (v->o->verbose)
		cli_error("visualize: %s: %u strips, %zu steps, axis %.3f s", out.path, st.strips, st.points, st.end_ns / 1e9);
	rc = 0;
	goto out;
nomem:
	cli_error("visualize: out of memory");
out:
	for (size_t i = 0; series && i < n; i++) {
		free((void *)series[i].recs);
		free((void *)series[i].x_ns);
	}
	free(series);
	free(labels);
	return rc;
}

static int write_heatmap(struct viz *v)
{
	struct heatmap_options ho;
	struct heatmap_stats st;
	struct temp_file out;
	char subtitle[1024], count[32];
	double t0 = now_s();
	FILE *f = open_output(v->o->outdir, VIZ_FILE_HEATMAP, &out);

	if (!f)
		return -1;
	heatmap_options_init(&ho);
	ho.title = v->o->title ? v->o->title : "page faults by address and time";
	int len = snprintf(subtitle, sizeof(subtitle), "%s faults in %zu process%s of %s",
			   cli_format_count(v->faults[0], count, sizeof(count)), v->nprocs, v->nprocs == 1 ? "" : "es",
			   v->rec->dir);
	if (v->untimed && len > 0 && (size_t)len < sizeof(subtitle))
		snprintf(subtitle + len, sizeof(subtitle) - (size_t)len, "; %s without a virtual time left out",
			 cli_format_count(v->untimed, count, sizeof(count)));
	ho.subtitle = subtitle;
	if (v->o->time_axis == FL_TIME_VIRTUAL)
		ho.time_label = fl_time_axis_label(FL_TIME_VIRTUAL);
	ho.hot_phi = v->ranges_opts.phi;
	ho.end_ns = timeline_wall_end(v); /* 0 unless the timeline goes on after the last fault */
	if (heatmap_layout(v->hm, &ho) < 0 || count_heatmap(v) < 0 || heatmap_write_svg(v->hm, &ho, f, &st) < 0) {
		if (v->read_error[0])
			cli_error("visualize: %s", v->read_error);
		else
			cli_error("visualize: %s: out of memory", out.path);
		abort_output(f, &out);
		return -1;
	}
	v->heatmap_end_ns = st.ns_per_column * st.columns;
	v->heatmap_plot_width = ho.plot_width;
	if (close_output(f, &out) < 0)
		return -1;
	if (v->o->verbose)
		cli_error("visualize: %s: %zu ranges, %u rows x %u columns, %zu cells in %zu rects, %zu allocations, "
			  "%zu hot-range marks, %ld bytes, %.3f s", out.path, st.ranges, st.rows, st.columns, st.cells, st.rects,
			  st.allocs_drawn, st.hot_marks, file_size(out.path), now_s() - t0);
	return 0;
}

/* report.html: the model finished with the hot ranges, timelines and miss-ratio curve, under the
 * report's header. */
static int write_html(struct viz *v)
{
	struct ranges_ref top[HTML_MAX_HOT];
	struct html_report_options ho = { 0 };
	struct temp_file out;
	char title[512];
	size_t n = v->has_ranges ? ranges_top(&v->ranges, HTML_MAX_HOT, top) : 0;
	double t0 = now_s();
	FILE *f;

	for (size_t i = 0; i < n; i++) {
		const struct ranges_range *g = top[i].range;
		html_model_add_hot_range(&v->html, g->lo, g->hi, g->pct,
					 g->nsites ? g->sites[0].name : g->nmaps ? g->maps[0].name : "");
	}
	for (size_t i = 0; v->timelines && i < v->rec->nprocs; i++)
		if (v->timelines[i].nrecs && html_model_add_timeline(&v->html, &v->rec->procs[i], &v->timelines[i]) < 0)
			goto nomem;
	if (html_model_add_mrc(&v->html) < 0 || html_model_add_sweep(&v->html) < 0 || html_model_finish(&v->html) < 0)
		goto nomem;
	char of_pid[32] = "";
	if (v->o->pid)
		snprintf(of_pid, sizeof(of_pid), ", pid %ld", (long)v->o->pid);
	snprintf(title, sizeof(title), "%s: faultline report of %s%s", v->o->title ? v->o->title : "page faults",
		 v->rec->dir, of_pid);
	ho.title = title;
	ho.header = v->html_header;
	ho.time_label = fl_time_axis_label(v->o->time_axis);
	f = open_output(v->o->outdir, VIZ_FILE_REPORT, &out);
	if (!f)
		return -1;
	if (html_report_write(&v->html, &ho, f) < 0) {
		cli_error("visualize: %s: %s", out.tmp, strerror(errno));
		abort_output(f, &out);
		return -1;
	}
	if (close_output(f, &out) < 0)
		return -1;
	if (v->o->verbose)
		cli_error("visualize: %s: %zu cells (%u x %u grid, %u halvings), %zu groups (%zu folded), %zu names, "
			  "%zu objects, %zu series, %ld bytes (bound %zu), %.3f s", out.path, v->html.ncells, v->html.rows,
			  v->html.cols, v->html.coarsened, v->html.ngroups, v->html.merged_groups, v->html.names.set.count,
			  v->html.nobjects, v->html.nseries, file_size(out.path), html_report_max_bytes(), now_s() - t0);
	return 0;
nomem:
	cli_error("visualize: out of memory");
	return -1;
}

/* Writes every file. */
static int viz_write(struct viz *v)
{
	struct flame *trees[NKINDS] = { NULL }, *alloc = NULL;
	int rc = -1;

	/* --top: the heaviest stacks of each tree (folded files included, so they agree). */
	for (unsigned k = 0; k < NKINDS; k++) {
		trees[k] = v->tree[k];
		if (v->o->top && !(trees[k] = flame_top_stacks(v->tree[k], v->o->top, OTHER_STACKS)))
			goto nomem;
	}
	alloc = v->alloc_tree;
	if (v->o->top && !(alloc = flame_top_stacks(v->alloc_tree, v->o->top, OTHER_STACKS)))
		goto nomem;

	if (write_folded(v, trees[0], viz_folded_name[VIZ_GRAPH_ALL]) < 0 ||
	    write_flamegraph(v, trees[0], viz_flamegraph_name[VIZ_GRAPH_ALL], "") < 0)
		goto out;
	for (unsigned k = 1; k < NKINDS; k++) {
		/* first-touch and refault always (when selected); soft and concurrent when present. */
		if (!(v->o->kinds & (1u << k)) || (k > FL_FAULT_REFAULT && v->faults[k] == 0))
			continue;
		if (write_folded(v, trees[k], viz_folded_name[k]) < 0 ||
		    write_flamegraph(v, trees[k], viz_flamegraph_name[k], fl_fault_kind_name(k)) < 0)
			goto out;
	}
	if (write_folded(v, alloc, viz_folded_name[VIZ_GRAPH_ALLOC]) < 0 ||
	    write_flamegraph(v, alloc, viz_flamegraph_name[VIZ_GRAPH_ALLOC], "faults by allocation site") < 0)
		goto out;
	if (compute_ranges(v) < 0 || write_ranges(v) < 0 || add_hot_ranges(v) < 0 || load_timelines(v) < 0 ||
	    write_heatmap(v) < 0)
		goto out;
	if (v->ntimelines && write_timeline(v) < 0)
		goto out;
	if (v->has_html && write_html(v) < 0)
		goto out;
	rc = 0;
	goto out;
nomem:
	cli_error("visualize: out of memory");
out:
	for (unsigned k = 0; k < NKINDS; k++)
		if (trees[k] != v->tree[k])
			flame_free(trees[k]);
	if (alloc != v->alloc_tree)
		flame_free(alloc);
	return rc;
}

static void sym_diag(void *ctx, const char *message)
{
	struct viz *v = ctx;
	if (v->sym_warnings++ < 20) {
		report_progress_stop(v->progress);
		cli_error("visualize: warning: %s", message);
	}
}

static int viz_run(const struct fl_recording *rec, const struct viz_options *o, struct report_progress *progress)
{
	struct viz v;
	struct vf_options vo = { o->keep_runtime };
	char err[256];
	uint32_t page_size = rec->nprocs ? rec->procs[0].page_size : 4096;
	double t0 = now_s();
	int rc = 1;

	memset(&v, 0, sizeof(v));
	v.o = o;
	v.rec = rec;
	v.progress = progress;
	uint64_t selected_faults = 0;
	for (size_t i = 0; i < rec->nprocs; i++)
		if (o->pid == 0 || rec->procs[i].pid == o->pid) {
			v.nprocs++;
			selected_faults += rec->procs[i].nfaults;
		}
	v.stack_sample = fl_recording_stack_sample(rec, o->pid);
	v.image_roots = v.nprocs > 1;
	if (v.nprocs == 0) {
		report_progress_stop(progress);
		cli_error("visualize: %s: no process with pid %u in the recording", rec->dir, o->pid);
		return 1;
	}
	if (callsite_skip_init(&v.skip, true, NULL, 0, err, sizeof(err)) < 0) {
		report_progress_stop(progress);
		cli_error("visualize: %s", err);
		return 1;
	}
	v.callsites = callsite_table_new(rec, &v.skip, sym_diag, &v);
	v.namer = v.callsites ? vf_namer_new(v.callsites, rec, &vo) : NULL;
	v.hm = heatmap_new(page_size);
	v.alloc_tree = flame_new();
	if (fault_clock_init(&v.clock, rec, o->time_axis) < 0)
		goto nomem;
	for (unsigned k = 0; k < NKINDS; k++)
		v.tree[k] = flame_new();
	if (!o->no_html && v.callsites && v.namer) {
		if (html_model_init(&v.html, rec, v.callsites, v.namer, &v.clock, o->kinds, o->pid) < 0) {
			cli_error("visualize: out of memory");
			goto out;
		}
		v.has_html = true;
		/* report's own pass, first: its memory is freed before visualize's passes build theirs;
		 * its progress line is visualize's meanwhile (one line on the terminal, not two) */
		report_progress_stop(progress);
		int hrc = report_header_text(rec->dir, o->pid, o->time_axis, o->verbose ? NULL : "visualize", &v.html_header);
		report_progress_start(progress, "visualize", !o->verbose);
		if (hrc != 0)
			goto out;
	}
	if (!v.callsites || !v.namer || !v.hm || !v.alloc_tree || !v.tree[0] || !v.tree[1] || !v.tree[2] || !v.tree[3] ||
	    !v.tree[4])
		goto nomem;
	report_progress_phase(progress, "counting faults", selected_faults);
	for (size_t i = 0; i < rec->nprocs; i++) {
		if (o->pid && rec->procs[i].pid != o->pid)
			continue;
		if (viz_process(&v, &rec->procs[i]) < 0) {
			if (!v.read_error[0])
				goto nomem;
			report_progress_stop(progress);
			cli_error("visualize: %s", v.read_error);
			goto out;
		}
	}
	report_progress_stop(progress); /* writing prints each file's path */
	if (v.sym_warnings > 20)
		cli_error("visualize: %u more symbolizer warnings not shown", v.sym_warnings - 20);
	if (o->verbose) {
		struct sym_stats ss;
		callsite_sym_stats(v.callsites, &ss);
		cli_error("visualize: %" PRIu64 " faults, %zu stack nodes; symbolized %" PRIu64 " distinct PCs in %u binaries; %.3f s",
			  v.faults[0], flame_node_count(v.tree[0]), ss.distinct, ss.binaries, now_s() - t0);
	}
	if (v.faults[0] == 0)
		cli_error("visualize: %s: no fault of the selected kind%s: the graphs are empty", rec->dir,
			  o->kinds_given ? "s" : "");
	rc = viz_write(&v) < 0 ? 1 : 0;
	if (o->verbose)
		cli_error("visualize: done in %.3f s", now_s() - t0);
	goto out;
nomem:
	report_progress_stop(progress);
	cli_error("visualize: out of memory");
out:
	for (unsigned k = 0; k < NKINDS; k++)
		flame_free(v.tree[k]);
	flame_free(v.alloc_tree);
	heatmap_free(v.hm);
	if (v.has_html)
		html_model_free(&v.html);
	free(v.html_header);
	fault_clock_free(&v.clock);
	for (size_t i = 0; v.timelines && i < rec->nprocs; i++)
		fl_timeline_free(&v.timelines[i]);
	free(v.timelines);
	if (v.has_ranges)
		ranges_result_free(&v.ranges);
	free(v.frames);
	vf_namer_free(v.namer);
	callsite_table_free(v.callsites);
	callsite_skip_free(&v.skip);
	return rc;
}

int cmd_visualize(int argc, char **argv)
{
	struct viz_options o;
	struct fl_recording *rec;
	char newest[4096], err[1024];
	int rc = viz_parse(argc, argv, &o);

	if (rc != 0)
		return rc < 0 ? 0 : rc;
	o.dir = recording_arg_dir("visualize", o.dir, newest, sizeof(newest));
	if (!o.dir)
		return 1;
	if (!o.outdir)
		o.outdir = o.dir;
	struct report_progress progress;
	report_progress_start(&progress, "visualize", !o.verbose);
	report_progress_phase(&progress, "reading the recording", 0);
	/* streamed (faults read as they are walked, twice) on the wall axis; the virtual axis's
	 * clock needs every fault held (fault_time.h) */
	bool streamed = o.time_axis == FL_TIME_WALL && fl_recording_open_stream(o.dir, &rec) == 0;
	if (!streamed && fl_recording_open(o.dir, &rec, err, sizeof(err)) < 0) {
		report_progress_stop(&progress);
		cli_error("visualize: %s", err);
		return 1;
	}
	if (rec->nwarnings || rec->warnings_suppressed)
		report_progress_stop(&progress);
	recording_arg_warnings(rec);
	/* the output directory only once the recording is known to be one */
	if (mkdir(o.outdir, 0777) == 0)
		temp_file_guard_dir(o.outdir); /* interrupted before any output: removed */
	else if (errno != EEXIST) {
		report_progress_stop(&progress);
		cli_error("visualize: cannot create %s: %s", o.outdir, strerror(errno));
		fl_recording_close(rec);
		return 1;
	}
	rc = viz_run(rec, &o, &progress);
	report_progress_stop(&progress);
	fl_recording_close(rec);
	return rc;
}
