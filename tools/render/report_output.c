/* report_output.c: what `faultline report` prints — the header and table (for people), CSV and JSON
 * (for scripts). CSV and JSON are rendered from one list of typed fields per row (row_fields), so the
 * two always carry the same keys and values; the table shows the same numbers with thousands
 * separators, and file and binary by their base names.
 *
 * CSV: RFC 4180 (a field with a comma, quote or line break is quoted, quotes doubled), a header line,
 * numbers without separators, empty fields for unknown values. JSON: an array of one object per row,
 * unknown values null, strings escaped (control characters as \u00XX, invalid UTF-8 as U+FFFD), plus
 * "stack": the full symbolized stack that names the row, innermost first (by allocation site the
 * allocation's, with the most common faulting stack as "fault_stack"), named as its faults (its
 * allocations) are: under the maps snapshot in force at their time, a stack used under two counting
 * as two (callsite.h's rule). With
 * --ranges N, one object instead: {"rows": [that array], "ranges": [...], "ranges_source": {...}}.
 * The table ends with the hot address ranges (report_ranges.c). */
#include "report_render.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <faultline/record_schema.h>

#include "cli.h"
#include "evictions.h"
#include "text_out.h"

#define TABLE_FUNCTION_MAX 60

static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	return slash && slash[1] ? slash + 1 : path;
}

/* ----------------------------------------------------------------- fields of a row */

enum field_type { FIELD_NULL, FIELD_INT, FIELD_REAL, FIELD_TEXT };

struct field {
	const char *name;
	enum field_type type;
	uint64_t integer;
	double real;
	int decimals;
	const char *text;
};

#define MAX_FIELDS (26 + REPORT_MAX_EVENTS)

struct field_names {
	char pmu[REPORT_MAX_EVENTS][96];  /* "task_clock_us_per_fault" */
};

static void make_field_names(const struct report *r, struct field_names *names)
{
	for (size_t e = 0; e < r->nevents; e++) {
		char *out = names->pmu[e];
		size_t n = 0;
		for (const char *p = r->events[e].name; *p && n < 60; p++) {
			char c = *p;
			out[n++] = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ? c : (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : '_';
		}
		snprintf(out + n, sizeof(names->pmu[e]) - n, "%s", r->events[e].nanoseconds ? "_us_per_fault" : "_per_fault");
	}
}

static void add_int(struct field *f, size_t *n, const char *name, uint64_t value)
{
	f[(*n)++] = (struct field){ .name = name, .type = FIELD_INT, .integer = value };
}

static void add_real(struct field *f, size_t *n, const char *name, double value, int decimals)
{
	f[(*n)++] = (struct field){ .name = name, .type = FIELD_REAL, .real = value, .decimals = decimals };
}

static void add_text(struct field *f, size_t *n, const char *name, const char *text)
{
	f[(*n)++] = (struct field){ .name = name, .type = text ? FIELD_TEXT : FIELD_NULL, .text = text };
}

static void add_null(struct field *f, size_t *n, const char *name)
{
	f[(*n)++] = (struct field){ .name = name, .type = FIELD_NULL };
}

/* Alloc rows: the site's faults per MiB it allocated, both whole-run runtime counts. False when the
 * recording has no sites file or the site allocated no bytes. */
static bool site_faults_per_mib(const struct report_row *row, double *value)
{
	if (!row->has_sites || row->site_bytes == 0)
		return false;
	*value = (double)row->site_faults / ((double)row->site_bytes / 1048576.0);
	return true;
}

/* The row's share of the selected faults; with sampled stacks (struct report: unsampled_row) its
 * share of those with a stack. False for the row without stacks there: it has no share. */
static bool percent(const struct report *r, const struct report_row *row, double *value)
{
	if (r->unsampled_row != FL_NONE && row == &r->rows[r->unsampled_row])
		return false;
	uint64_t of = r->selected - r->unsampled;
	*value = of ? 100.0 * (double)row->faults / (double)of : 0.0;
	return true;
}

/* The fields of the RANK-th shown row (rank from 1). */
static size_t row_fields(const struct report *r, const struct field_names *names, size_t rank,
			 const struct report_row *row, struct field *f)
{
	const struct callsite_loc *loc = callsite_loc(r->callsites, row->loc);
	size_t n = 0;
	double value;

	add_int(f, &n, "rank", rank);
	add_int(f, &n, "faults", row->faults);
	if (percent(r, row, &value))
		add_real(f, &n, "percent", value, 2);
	else
		add_null(f, &n, "percent");
	add_int(f, &n, "first_touch", row->kinds[FL_FAULT_FIRST_TOUCH]);
	add_int(f, &n, "refault", row->kinds[FL_FAULT_REFAULT]);
	add_int(f, &n, "soft", row->kinds[FL_FAULT_SOFT]);
	add_int(f, &n, "concurrent", row->kinds[FL_FAULT_CONCURRENT]);
	add_int(f, &n, "reads", row->reads);
	add_int(f, &n, "writes", row->writes);
	add_text(f, &n, "function", loc ? loc->function : NULL);
	add_text(f, &n, "file", loc ? loc->file : NULL);
	if (loc && loc->line)
		add_int(f, &n, "line", loc->line);
	else
		add_null(f, &n, "line");
	add_text(f, &n, "binary", loc ? loc->binary : NULL);
	if (r->o->by == REPORT_BY_THREAD || r->o->by == REPORT_BY_PROCESS)
		add_int(f, &n, "pid", row->pid);
	if (r->o->by == REPORT_BY_THREAD)
		add_int(f, &n, "tid", row->tid);
	if (r->o->by == REPORT_BY_PROCESS) {
		add_text(f, &n, "process", r->rec->procs[row->proc].name); /* "pid" or "pid.N" (exec image) */
		add_text(f, &n, "command", r->rec->procs[row->proc].exe);
	}
	if (r->o->by == REPORT_BY_ALLOC) {
		add_int(f, &n, "allocs", row->allocs);
		if (row->has_sites) {
			add_int(f, &n, "allocated", row->site_allocs);
			add_int(f, &n, "alloc_bytes", row->site_bytes);
			add_int(f, &n, "objects_faulted", row->site_objects_faulted);
			add_int(f, &n, "site_faults", row->site_faults);
		} else {
			add_null(f, &n, "allocated");
			add_null(f, &n, "alloc_bytes");
			add_null(f, &n, "objects_faulted");
			add_null(f, &n, "site_faults");
		}
		if (site_faults_per_mib(row, &value))
			add_real(f, &n, "faults_per_mib", value, 3);
		else
			add_null(f, &n, "faults_per_mib");
	}
	for (size_t e = 0; e < r->nevents; e++) {
		if (report_row_pmu(r, row, e, &value))
			add_real(f, &n, names->pmu[e], value, 3);
		else
			add_null(f, &n, names->pmu[e]);
	}
	if (r->o->locality) {
		add_real(f, &n, "spatial", row->locality.spatial, 4);
		add_real(f, &n, "temporal", row->locality.temporal, 4);
	}
	return n;
}

/* ----------------------------------------------------------------- CSV */

static void csv_fields(const struct field *f, size_t n, FILE *out)
{
	for (size_t k = 0; k < n; k++) {
		if (k)
			putc(',', out);
		if (f[k].type == FIELD_INT)
			fprintf(out, "%" PRIu64, f[k].integer);
		else if (f[k].type == FIELD_REAL)
			fprintf(out, "%.*f", f[k].decimals, f[k].real);
		else if (f[k].type == FIELD_TEXT)
			csv_out_field(f[k].text, out);
	}
	putc('\n', out);
}

static void print_csv(const struct report *r, FILE *out)
{
	struct field_names names;
	struct field f[MAX_FIELDS];
	struct report_row empty;
	size_t n;

	make_field_names(r, &names);
	memset(&empty, 0, sizeof(empty));
	empty.loc = FL_NONE;
	n = row_fields(r, &names, 0, &empty, f); /* the header: the same fields of any row */
	for (size_t k = 0; k < n; k++)
		fprintf(out, k ? ",%s" : "%s", f[k].name);
	putc('\n', out);
	for (size_t i = 0; i < r->nshown; i++) {
		n = row_fields(r, &names, i + 1, &r->rows[r->ranked[i]], f);
		csv_fields(f, n, out);
	}
}

/* ----------------------------------------------------------------- JSON */

static void json_fields(const struct field *f, size_t n, FILE *out)
{
	for (size_t k = 0; k < n; k++) {
		fprintf(out, "%s\"%s\": ", k ? ", " : "", f[k].name);
		if (f[k].type == FIELD_INT)
			fprintf(out, "%" PRIu64, f[k].integer);
		else if (f[k].type == FIELD_REAL)
			fprintf(out, "%.*f", f[k].decimals, f[k].real);
		else if (f[k].type == FIELD_TEXT)
			json_out_string(f[k].text, out);
		else
			fputs("null", out);
	}
}

/* "name": [frames of the stack], innermost first, named under maps snapshot SNAPSHOT (the one in
 * force at the time of the faults or allocations that made it the row's stack). -1 on ENOMEM. */
static int json_stack(struct report *r, const char *name, uint32_t proc, uint32_t stack_index, uint32_t snapshot,
		      FILE *out)
{
	const struct fl_stack *stack = proc == FL_NONE ? NULL : &r->rec->procs[proc].stacks[stack_index];
	const struct callsite_frame *frames;
	size_t n, callsite;

	if (callsite_expand_in(r->callsites, proc == FL_NONE ? 0 : proc, stack, snapshot, &frames, &n, &callsite) < 0)
		return -1;
	fprintf(out, ", \"%s\": [", name);
	for (size_t i = 0; i < n; i++) {
		const struct callsite_frame *fr = &frames[i];
		fprintf(out, "%s{\"pc\": \"0x%" PRIx64 "\", \"function\": ", i ? ", " : "", fr->pc);
		json_out_string(fr->function, out);
		fputs(", \"file\": ", out);
		json_out_string(fr->file, out);
		if (fr->line)
			fprintf(out, ", \"line\": %u", fr->line);
		else
			fputs(", \"line\": null", out);
		fputs(", \"binary\": ", out);
		json_out_string(fr->binary, out);
		/* the label names the frame as the table does: function file:line where known, else
		 * binary+0xOFFSET (it was always the latter) */
		fprintf(out, ", \"offset\": \"0x%" PRIx64 "\", \"label\": ", fr->offset);
		if (fr->function && fr->file && fr->line) {
			char label[1024];
			snprintf(label, sizeof(label), "%s %s:%u", fr->function, fr->file, fr->line);
			json_out_string(label, out);
		} else {
			json_out_string(fr->function ? fr->function : fr->label, out);
		}
		fprintf(out, ", \"inlined\": %s, \"skipped\": %s, \"callsite\": %s}", fr->inlined ? "true" : "false",
			fr->skipped ? "true" : "false", i == callsite ? "true" : "false");
	}
	putc(']', out);
	return 0;
}

static int print_json(struct report *r, FILE *out)
{
	struct field_names names;
	struct field f[MAX_FIELDS];

	make_field_names(r, &names);
	if (r->o->ranges_given && r->o->ranges)
		fputs("{\"rows\": ", out); /* --ranges: an object, the rows array intact in "rows" */
	fputs("[", out);
	for (size_t i = 0; i < r->nshown; i++) {
		const struct report_row *row = &r->rows[r->ranked[i]];
		size_t n = row_fields(r, &names, i + 1, row, f);
		fputs(i ? ",\n  {" : "\n  {", out);
		json_fields(f, n, out);
		/* a row's "stack" is the stack that names the row: by allocation site, the allocation's
		 * (it was the most common faulting stack); that one is then "fault_stack" */
		if (r->o->by == REPORT_BY_ALLOC) {
			if (json_stack(r, "stack", row->alloc_stack_proc, row->alloc_stack, row->alloc_stack_snapshot,
				       out) < 0 ||
			    json_stack(r, "fault_stack", row->stack_proc, row->stack, row->stack_snapshot, out) < 0)
				return -1;
		} else if (json_stack(r, "stack", row->stack_proc, row->stack, row->stack_snapshot, out) < 0) {
			return -1;
		}
		putc('}', out);
	}
	fputs(r->nshown ? "\n]" : "]", out);
	if (r->o->ranges_given && r->o->ranges) {
		report_ranges_print_json(r, out);
		putc('}', out);
	}
	putc('\n', out);
	return 0;
}

/* ----------------------------------------------------------------- header */

/* Prints TEXT with control characters as '?'. */
static void put_printable(const char *text, FILE *out)
{
	for (const unsigned char *p = (const unsigned char *)text; *p; p++)
		putc(*p < 0x20 || *p == 0x7f ? '?' : *p, out);
}

static void header_command(const struct report *r, FILE *out)
{
	const struct fl_process *first = &r->rec->procs[0];
	char quoted[4096];

	fputs("# command:         ", out);
	if (first->ncmdline == 0)
		put_printable(*first->exe ? first->exe : "?", out);
	for (size_t i = 0; i < first->ncmdline; i++) {
		if (i)
			putc(' ', out);
		put_printable(cli_shell_quote(first->cmdline[i], quoted, sizeof(quoted)), out);
	}
	fprintf(out, "\n# processes:       %zu (", r->rec->nprocs);
	for (size_t i = 0; i < r->rec->nprocs && i < 8; i++)
		fprintf(out, "%spid %s", i ? ", " : "", r->rec->procs[i].name);
	fputs(r->rec->nprocs > 8 ? ", ...)\n" : ")\n", out);
	fputs("# command ended:   ", out);
	if (r->rec->ending == FL_ENDING_EXIT)
		fprintf(out, "exit status %d\n", r->rec->ending_value);
	else if (r->rec->ending == FL_ENDING_SIGNAL)
		fprintf(out, "killed by SIG%s (signal %d)\n", sigabbrev_np(r->rec->ending_value) ? sigabbrev_np(r->rec->ending_value) : "?",
			r->rec->ending_value);
	else if (r->rec->in_progress)
		fputs("not yet: the recording is in progress (record still runs), its numbers are partial\n", out);
	else
		fputs("not recorded (record did not see it end)\n", out);
}

static void header_limits(const struct report *r, FILE *out)
{
	const struct flat_json *meta = &r->rec->procs[0].meta;
	uint64_t local, max;
	char a[32], b[32];
	const char *kind = stats_json_string(meta, FL_META_PMU_KIND);

	/* local_limit_bytes 0 is how meta.json says -L was not given */
	fprintf(out, "# limits:          -L %s, -M %s\n",
		stats_json_uint(meta, FL_META_LOCAL_LIMIT, &local) != 0 ? "?"
		: local == 0					 ? "unlimited"
								 : cli_format_size(local, a, sizeof(a)),
		stats_json_uint(meta, FL_META_MAX_BYTES, &max) == 0 ? cli_format_size(max, b, sizeof(b)) : "?");
	fputs("# PMU events:      ", out);
	for (size_t e = 0; e < r->nevents; e++) {
		fputs(e ? ", " : "", out);
		put_printable(r->events[e].name, out);
	}
	if (r->nevents == 0)
		fputs("none recorded", out);
	else if (kind && *kind) {
		fputs(" (", out);
		put_printable(kind, out);
		putc(')', out);
	}
	putc('\n', out);
}

/* record --fill-ahead: pages that came in without a fault, so in no row (stats.json). */
static void header_fill_ahead(const struct report *r, FILE *out)
{
	uint64_t filled = 0, unused = 0, value;
	char a[32], b[32];
	for (size_t i = 0; i < r->rec->nprocs; i++) {
		const struct fl_process *proc = &r->rec->procs[i];
		if (proc->has_stats && stats_json_uint(&proc->stats, FL_STATS_FILLED_AHEAD_PAGES, &value) == 0)
			filled += value;
		if (proc->has_stats && stats_json_uint(&proc->stats, FL_STATS_FILLED_AHEAD_UNUSED, &value) == 0)
			unused += value;
	}
	if (filled)
		fprintf(out, "# fill-ahead:      %s pages zero-filled without a fault (record --fill-ahead): in no row and "
			"no first-touch count; %s of them evicted unused, their first touch counted when it came\n",
			cli_format_count(filled, a, sizeof(a)), cli_format_count(unused, b, sizeof(b)));
}

static void header_totals(const struct report *r, FILE *out)
{
	uint64_t dropped = 0, by_runtime = 0, end_ns = 0, value, kinds[FL_FAULT_KIND_MAX + 1] = { 0 };
	size_t unknown = 0, outlived = 0;
	char c[6][32];

	for (size_t i = 0; i < r->rec->nprocs; i++) {
		const struct fl_process *proc = &r->rec->procs[i];
		uint64_t end = proc->offset_ns + proc->last_fault_ns;
		dropped += proc->faults_lost; /* stats.json's dropped, and any other record it counts the trace lacks */
		if (!proc->faults_lost_exact)
			unknown++;
		if (!proc->faults_lost_exact && proc->outlived)
			outlived++;
		if (proc->has_stats && stats_json_uint(&proc->stats, FL_STATS_RECORDS_DROPPED, &value) == 0)
			by_runtime += value;
		if (proc->has_stats && stats_json_uint(&proc->stats, FL_STATS_WALL_NS, &value) == 0 && proc->offset_ns + value > end)
			end = proc->offset_ns + value;
		if (end > end_ns)
			end_ns = end;
		for (size_t k = 0; k <= FL_FAULT_KIND_MAX; k++)
			kinds[k] += proc->kind_counts[k];
	}
	/* lost: records of faults the runtime served that the trace lacks, whether the runtime dropped
	 * them (stats.json) or the files lost them (cut by a kill, damaged) */
	if (unknown && dropped == 0)
		fputs("# records lost:    none known", out);
	else
		fprintf(out, "# records lost:    %s%" PRIu64, unknown ? "at least " : "", dropped);
	if (dropped > by_runtime && !unknown)
		fprintf(out, " (dropped by the runtime %" PRIu64 "; the others are missing from the trace files: "
			"cut by a kill, or damaged)", by_runtime);
	if (unknown > outlived)
		fprintf(out, " (%zu process%s without stats.json, killed: the missing seq numbers; the faults after "
			"the last record written are not known)", unknown - outlived, unknown - outlived == 1 ? "" : "es");
	if (outlived && r->rec->in_progress)
		fprintf(out, " (%zu process%s still being recorded)", outlived, outlived == 1 ? "" : "es");
	else if (outlived)
		fprintf(out, " (%zu process%s still running when record ended: %s trace%s complete once %s exited)",
			outlived, outlived == 1 ? "" : "es", outlived == 1 ? "its" : "their", outlived == 1 ? " is" : "s are",
			outlived == 1 ? "it has" : "they have");
	fprintf(out, "\n# duration:        %.3f s\n", (double)end_ns / 1e9);
	const struct report_options *o = r->o;
	bool narrowed = o->pid || o->kind || o->ntids || o->from_ns || o->to_ns != UINT64_MAX;
	fprintf(out, "# faults:          %s%s (first-touch %s, refault %s, soft %s, concurrent %s)\n",
		cli_format_count(r->rec->nfaults - kinds[FL_FAULT_ACCESS_SAMPLE], c[0], sizeof(c[0])),
		narrowed ? " in the whole recording" : "",
		cli_format_count(kinds[FL_FAULT_FIRST_TOUCH], c[1], sizeof(c[1])),
		cli_format_count(kinds[FL_FAULT_REFAULT], c[2], sizeof(c[2])),
		cli_format_count(kinds[FL_FAULT_SOFT], c[3], sizeof(c[3])),
		cli_format_count(kinds[FL_FAULT_CONCURRENT], c[4], sizeof(c[4])));
	if (kinds[FL_FAULT_ACCESS_SAMPLE]) /* not faults: record --sample-accesses / --mrc */
		fprintf(out, "# access samples:  %s (not counted as faults; --kind access shows them)\n",
			cli_format_count(kinds[FL_FAULT_ACCESS_SAMPLE], c[5], sizeof(c[5])));
	header_fill_ahead(r, out);
	size_t sampled = 0, made = 0;
	for (size_t i = 0; i < r->rec->nprocs; i++) {
		sampled += !r->rec->procs[i].alloc_log_complete && r->rec->procs[i].nallocs;
		made += r->rec->procs[i].unlogged_objects;
	}
	if (sampled) /* per-object data (allocation times, lifetimes) is a sample; the joins are not */
		fprintf(out, "# allocation log:  sampled (record --alloc-log); every fault names its object and site; "
			"%zu faulted object%s not in the sample (allocation time unknown)\n", made, made == 1 ? "" : "s");
	if (narrowed) /* --pid, --kind, --tid, --from/--to: what follows is of the selection */
		fprintf(out, "# selected:        %s faults (the rows line says which); the lines below are of them\n",
			cli_format_count(r->selected, c[5], sizeof(c[5])));
}

/* A duration in ns as "12.3 us" / "4.56 ms" / "1.23 s". */
static const char *format_ns(uint64_t ns, char *buf, size_t len)
{
	if (ns < 1000000)
		snprintf(buf, len, "%.1f us", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.2f ms", (double)ns / 1e6);
	else
		snprintf(buf, len, "%.3f s", (double)ns / 1e9);
	return buf;
}

/* Service and wait times, virtual time and eviction events (report_records.c). */
static void header_records(const struct report *r, FILE *out)
{
	const struct report_records *rr = &r->records;
	char a[32], b[32], c[32], d[32], e[32];

	static const char *const title[REPORT_LATENCIES] = { "service time:   ", "wait time:      " };
	static const char *const span[REPORT_LATENCIES] = { "message read to wake-up", "fault to message read" };
	for (int l = 0; l < REPORT_LATENCIES; l++) {
		const struct latency_summary *s = &rr->latency[l];
		if (s->n)
			fprintf(out, "# %s p50 %s, p90 %s, p99 %s, max %s (%s faults; %s)\n", title[l],
				format_ns(s->p50, a, sizeof(a)), format_ns(s->p90, b, sizeof(b)), format_ns(s->p99, c, sizeof(c)),
				format_ns(s->max, d, sizeof(d)), cli_format_count(s->n, e, sizeof(e)), span[l]);
		else if (l == REPORT_WAIT && rr->latency[REPORT_SERVICE].n)
			fprintf(out, "# %s unknown: no fault has one (it comes from the fault's perf sample: none with "
				"record -s 0, or where this machine gave no perf samples or samples without a time)\n", title[l]);
	}
	if (rr->virtual_n)
		fprintf(out, "# virtual time:    one thread's own CPU time (task-clock) at its faults, up to %.3f s; "
			"%s of %s faults have one (--time virtual's axis is the process's: its threads' summed)\n",
			(double)rr->virtual_max / 1e9, cli_format_count(rr->virtual_n, a, sizeof(a)),
			cli_format_count(r->selected, b, sizeof(b)));
	if (!rr->evictions_present)
		return;
	uint64_t far[2] = { 0, 0 }, all = 0;
	for (unsigned d = FL_EVICT_CLOCK_SOFT; d <= FL_EVICT_DECISION_MAX; d++)
		for (unsigned k = 0; k < 2; k++)
			far[k] += rr->evictions[d][k];
	fprintf(out, "# evictions:       %s to the far store (clean %s, dirty %s)", cli_format_count(far[0] + far[1], a, sizeof(a)),
		cli_format_count(far[0], b, sizeof(b)), cli_format_count(far[1], c, sizeof(c)));
	for (unsigned d = FL_EVICT_CLOCK_SOFT; d <= FL_EVICT_DECISION_MAX; d++) {
		uint64_t n = rr->evictions[d][0] + rr->evictions[d][1];
		if (n)
			fprintf(out, "; %s %s", fl_evict_decision_name(d), cli_format_count(n, a, sizeof(a)));
	}
	uint64_t trial = rr->evictions[FL_EVICT_CLOCK_TRIAL][0] + rr->evictions[FL_EVICT_CLOCK_TRIAL][1];
	if (trial)
		fprintf(out, "; %s unmapped on trial (clock-trial: clean %s, dirty %s)", cli_format_count(trial, a, sizeof(a)),
			cli_format_count(rr->evictions[FL_EVICT_CLOCK_TRIAL][0], b, sizeof(b)),
			cli_format_count(rr->evictions[FL_EVICT_CLOCK_TRIAL][1], c, sizeof(c)));
	all = far[0] + far[1] + trial;
	if (all)
		fprintf(out, "; %.0f%% by fault handlers (inline)", 100.0 * (double)rr->evictions_inline / (double)all);
	if (r->o->time_axis == FL_TIME_VIRTUAL && (r->o->from_ns || r->o->to_ns != UINT64_MAX))
		fputs(" (whole run: evictions have no virtual time)", out);
	putc('\n', out);
}

static const char *by_name(enum report_by by)
{
	static const char *const names[] = { "callsite", "function", "allocation site", "thread", "process" };
	return names[by];
}

static void header_selection(const struct report *r, FILE *out)
{
	const struct report_options *o = r->o;
	const struct sym_stats st = r->symbolized;
	char a[32];

	fprintf(out, "# rows:            by %s; %zu of %zu shown; %s faults", by_name(o->by), r->nshown, r->nrows,
		cli_format_count(r->selected, a, sizeof(a)));
	if (o->kind)
		fprintf(out, " of kind %s", fl_fault_kind_name(o->kind));
	if (o->pid)
		fprintf(out, " of pid %u", o->pid);
	if (o->from_ns || o->to_ns != UINT64_MAX) {
		fprintf(out, " from %.3f s", (double)o->from_ns / 1e9);
		if (o->to_ns != UINT64_MAX)
			fprintf(out, " to %.3f s", (double)o->to_ns / 1e9);
		fprintf(out, " of %s time", fl_time_axis_name(o->time_axis));
	}
	if (fl_recording_no_fault_stacks(r->rec, o->pid))
		fputs("\n# fault stacks:    none (recorded with -s 0 or --stack-depth 0): faults have no stack "
		      "and no PMU values", out);
	if (r->unsampled_row != FL_NONE) {
		char b[32];
		fprintf(out, "\n# stacks sampled:  1 fault in %" PRIu64 " (record -s); %% is each row's share of the %s "
			"faults with a stack; the %s without one are the last row",
			r->stack_sample, cli_format_count(r->selected - r->unsampled, a, sizeof(a)),
			cli_format_count(r->unsampled, b, sizeof(b)));
	}
	fputs("\n# skipped frames:  ", out);
	if (o->default_skip)
		fputs(CALLSITE_DEFAULT_SKIP_NAMES, out);
	for (size_t i = 0; i < o->nskip; i++) {
		fputs(i || o->default_skip ? ", /" : "/", out);
		put_printable(o->skip[i], out);
		putc('/', out);
	}
	if (!o->default_skip && o->nskip == 0)
		fputs("none (--no-skip)", out);
	fprintf(out, "\n# symbolized:      %" PRIu64 " distinct PCs in %u binaries (%u with debug info, %u unusable); "
		"report built in %.2f s (reading the recording %.2f s, aggregating and symbolizing %.2f s)\n",
		st.distinct, st.binaries, st.with_debug, st.failed, r->total_seconds, r->read_seconds, r->build_seconds);
	if (o->locality)
		fputs("# locality:        scores of each row's fault pages in time order, in [0,1] (locality.h: "
		      "window 32, 128 stride bins, reuse up to 2^17 pages)\n", out);
	uint32_t sample = 1;
	for (size_t p = 0; p < r->rec->nprocs && r->faults_per_context; p++)
		if (r->faults_per_context[p] > sample)
			sample = r->faults_per_context[p];
	if (r->nevents && sample > 1)
		fprintf(out, "# PMU per fault:   counter deltas between a thread's sampled faults (record -s %u: 1 in "
			"%u), divided by the %u faults each covers, averaged (clock events in us)\n", sample, sample, sample);
	else if (r->nevents)
		fputs("# PMU per fault:   each fault's counter deltas since its thread's previous fault, averaged "
		      "(clock events in us)\n", out);
}

void report_print_header(const struct report *r, FILE *out)
{
	fputs("# faultline report of ", out);
	put_printable(r->rec->dir, out);
	putc('\n', out);
	header_command(r, out);
	header_limits(r, out);
	header_totals(r, out);
	header_records(r, out);
	header_selection(r, out);
	for (size_t i = 0; i < r->warnings.count; i++) {
		fputs("# warning: ", out);
		put_printable(r->warnings.lines[i], out);
		putc('\n', out);
	}
	if (r->warnings.suppressed)
		fprintf(out, "# warning: %zu more warnings not shown\n", r->warnings.suppressed);
	fputs("#\n", out);
}

/* ----------------------------------------------------------------- table */

struct table {
	size_t ncols, nrows;          /* nrows includes the heading */
	const char *heads[MAX_FIELDS];
	bool left[MAX_FIELDS];        /* left-aligned (text) columns */
	size_t width[MAX_FIELDS];
	char **cells;                 /* nrows × ncols, owned */
};

static void table_col(struct table *t, const char *head, bool left)
{
	t->heads[t->ncols] = head;
	t->left[t->ncols++] = left;
}

static const char *pmu_head(const struct report_event *ev, char *buf, size_t len)
{
	if (strcmp(ev->name, "task-clock") == 0 || strcmp(ev->name, "cpu-clock") == 0)
		snprintf(buf, len, "%s", ev->name[0] == 't' ? "clock-us/f" : "cpu-us/f");
	else if (strcmp(ev->name, "page-faults") == 0)
		snprintf(buf, len, "pgflt/f");
	else if (strcmp(ev->name, "context-switches") == 0)
		snprintf(buf, len, "ctxsw/f");
	else
		snprintf(buf, len, "%.40s/f", ev->name);
	return buf;
}

static void table_columns(const struct report *r, struct table *t, char heads[][64])
{
	enum report_by by = r->o->by;

	if (by == REPORT_BY_THREAD || by == REPORT_BY_PROCESS)
		table_col(t, "pid", false);
	if (by == REPORT_BY_THREAD)
		table_col(t, "tid", false);
	if (by == REPORT_BY_PROCESS)
		table_col(t, "command", true);
	table_col(t, "faults", false);
	table_col(t, "%", false);
	table_col(t, "first-touch", false);
	table_col(t, "refault", false);
	table_col(t, "soft", false);
	table_col(t, "concurrent", false);
	table_col(t, "reads", false);
	table_col(t, "writes", false);
	if (by == REPORT_BY_ALLOC) {
		table_col(t, "allocs", false);
		table_col(t, "allocated", false);
		table_col(t, "alloc-MiB", false);
		table_col(t, "obj-faulted", false);
		table_col(t, "site-faults", false);
		table_col(t, "faults/MiB", false);
	}
	for (size_t e = 0; e < r->nevents; e++)
		table_col(t, pmu_head(&r->events[e], heads[e], 64), false);
	if (r->o->locality) {
		table_col(t, "spatial", false);
		table_col(t, "temporal", false);
	}
	table_col(t, by == REPORT_BY_ALLOC ? "allocation site" : by == REPORT_BY_CALLSITE || by == REPORT_BY_FUNCTION
		  ? "function" : "top callsite", true);
	table_col(t, "file:line", true);
	table_col(t, "binary", true);
}

/* Formats one cell (owned by the table). -1 on ENOMEM. */
static int cellf(struct table *t, size_t row, size_t col, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int cellf(struct table *t, size_t row, size_t col, const char *fmt, ...)
{
	va_list ap;
	char *text;

	va_start(ap, fmt);
	int n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	for (char *p = text; *p; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	}
	if (t->left[col] && col + 1 < t->ncols && strlen(text) > TABLE_FUNCTION_MAX)
		strcpy(text + TABLE_FUNCTION_MAX - 2, "..");
	t->cells[row * t->ncols + col] = text;
	if (strlen(text) > t->width[col])
		t->width[col] = strlen(text);
	return 0;
}

static int table_row(const struct report *r, struct table *t, size_t i, const struct report_row *row)
{
	const struct callsite_loc *loc = callsite_loc(r->callsites, row->loc);
	enum report_by by = r->o->by;
	size_t c = 0, ti = i + 1;
	char a[32];
	double value;
	int rc = 0;

	if (by == REPORT_BY_PROCESS) /* its directory's name: the pid, "pid.N" for the Nth later exec image */
		rc |= cellf(t, ti, c++, "%s", r->rec->procs[row->proc].name);
	else if (by == REPORT_BY_THREAD)
		rc |= cellf(t, ti, c++, "%u", row->pid);
	if (by == REPORT_BY_THREAD)
		rc |= cellf(t, ti, c++, "%u", row->tid);
	if (by == REPORT_BY_PROCESS)
		rc |= cellf(t, ti, c++, "%s", base_name(r->rec->procs[row->proc].exe));
	rc |= cellf(t, ti, c++, "%s", cli_format_count(row->faults, a, sizeof(a)));
	if (percent(r, row, &value))
		rc |= cellf(t, ti, c++, "%.2f%%", value);
	else
		rc |= cellf(t, ti, c++, "-");
	for (unsigned k = FL_FAULT_FIRST_TOUCH; k <= FL_FAULT_CONCURRENT; k++)
		rc |= cellf(t, ti, c++, "%s", cli_format_count(row->kinds[k], a, sizeof(a)));
	rc |= cellf(t, ti, c++, "%s", cli_format_count(row->reads, a, sizeof(a)));
	rc |= cellf(t, ti, c++, "%s", cli_format_count(row->writes, a, sizeof(a)));
	if (by == REPORT_BY_ALLOC) {
		rc |= cellf(t, ti, c++, "%s", cli_format_count(row->allocs, a, sizeof(a)));
		if (row->has_sites) {
			rc |= cellf(t, ti, c++, "%s", cli_format_count(row->site_allocs, a, sizeof(a)));
			rc |= cellf(t, ti, c++, "%.1f", (double)row->site_bytes / 1048576.0);
			rc |= cellf(t, ti, c++, "%s", cli_format_count(row->site_objects_faulted, a, sizeof(a)));
			rc |= cellf(t, ti, c++, "%s", cli_format_count(row->site_faults, a, sizeof(a)));
		} else {
			for (int k = 0; k < 4; k++)
				rc |= cellf(t, ti, c++, "-");
		}
		if (site_faults_per_mib(row, &value))
			rc |= cellf(t, ti, c++, "%.1f", value);
		else
			rc |= cellf(t, ti, c++, "-");
	}
	for (size_t e = 0; e < r->nevents; e++) {
		if (report_row_pmu(r, row, e, &value))
			rc |= cellf(t, ti, c++, "%.2f", value);
		else
			rc |= cellf(t, ti, c++, "-");
	}
	if (r->o->locality) {
		rc |= cellf(t, ti, c++, "%.3f", row->locality.spatial);
		rc |= cellf(t, ti, c++, "%.3f", row->locality.temporal);
	}
	rc |= cellf(t, ti, c++, "%s", loc ? loc->function : "?");
	if (loc && loc->file)
		rc |= cellf(t, ti, c++, "%s:%u", base_name(loc->file), loc->line);
	else
		rc |= cellf(t, ti, c++, "-");
	rc |= cellf(t, ti, c++, "%s", loc && loc->binary ? base_name(loc->binary) : "-");
	return rc;
}

static void table_print(const struct table *t, FILE *out)
{
	for (size_t i = 0; i < t->nrows; i++) {
		fputs(i == 0 ? "# " : "  ", out);
		for (size_t c = 0; c < t->ncols; c++) {
			const char *cell = t->cells[i * t->ncols + c];
			int pad = (int)t->width[c];
			if (c + 1 == t->ncols)
				fputs(cell, out);
			else if (t->left[c])
				fprintf(out, "%-*s  ", pad, cell);
			else
				fprintf(out, "%*s  ", pad, cell);
		}
		putc('\n', out);
	}
}

static int print_table(const struct report *r, FILE *out)
{
	struct table t;
	char heads[REPORT_MAX_EVENTS][64];
	int rc = 0;

	memset(&t, 0, sizeof(t));
	table_columns(r, &t, heads);
	t.nrows = r->nshown + 1;
	if (!(t.cells = calloc(t.nrows * t.ncols, sizeof(*t.cells))))
		return -1;
	for (size_t c = 0; c < t.ncols; c++)
		rc |= cellf(&t, 0, c, "%s", t.heads[c]);
	for (size_t i = 0; i < r->nshown && rc == 0; i++)
		rc |= table_row(r, &t, i, &r->rows[r->ranked[i]]);
	if (rc == 0) {
		report_print_header(r, out);
		if (r->nshown)
			table_print(&t, out);
		else
			fputs("# no fault matches the selection\n", out);
		report_ranges_print_table(r, out);
	}
	for (size_t i = 0; i < t.nrows * t.ncols; i++)
		free(t.cells[i]);
	free(t.cells);
	return rc ? -1 : 0;
}

/* ----------------------------------------------------------------- entry */

int report_print(struct report *r, FILE *out)
{
	int rc;

	if (r->o->format == REPORT_FORMAT_CSV) {
		print_csv(r, out);
		rc = 0;
	} else if (r->o->format == REPORT_FORMAT_JSON) {
		rc = print_json(r, out);
	} else {
		rc = print_table(r, out);
	}
	if (rc < 0) {
		cli_error("report: out of memory while printing");
		return 1;
	}
	return cli_finish_output("report", out);
}
