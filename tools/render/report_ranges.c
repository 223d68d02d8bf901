/* report_ranges.c: the hot address ranges section of `faultline report` — RAP's hierarchical heavy
 * hitters of the selected faults (ranges.h), the N with the most exclusive faults over every
 * selected process (--ranges N, default 5; 0: none).
 *
 * Table: a last section, after the ranked rows:
 *     # hot address ranges (RAP, ε 0.0100, φ 0.0500, source: online tree (ranges.rap); 1 of 1 shown)
 *     #   start               end                   size  faults            bounds       %  top allocation site
 *     #   0x00007f3bcf800000  0x00007f3bd3800000  64 MiB  49,087  [49,087, 49,179]  99.80%  main fill.c:14
 * (every line a '#' line, so the lines without '#' are still exactly the ranked rows). The shown
 * ranges are listed as a tree: in address order, a range nested in another shown one right after
 * it with its start indented; start-end are the faulted pages inside the region (ranges.h clips
 * the tree nodes), and faults and % include the nested ranges.
 * (a pid column first when the ranges come from more than one process; percent is then of that
 * process's faults). JSON, with --ranges given:
 * "ranges" (one object per shown range) and "ranges_source" (how they were computed) next to "rows".
 * CSV leaves them out: `faultline ranges --format csv` has them.
 *
 * --pid and --kind select the same faults as the rows (a kind other than all builds the trees from
 * the fault records); --from/--to do not apply: the ranges cover the whole recording (said in the
 * heading). A failure to compute them (out of memory) is a warning; the report goes on. */
#include "report_render.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "text_out.h"

#define SITE_MAX 60

void report_ranges_compute(struct report *r)
{
	struct report_ranges *rr = &r->ranges;
	const struct report_options *o = r->o;
	char err[512];

	memset(rr, 0, sizeof(*rr));
	callsite_sym_stats(r->callsites, &r->symbolized); /* the header counts the rows' symbolization */
	if (o->ranges == 0 || o->format == REPORT_FORMAT_CSV ||
	    (o->format == REPORT_FORMAT_JSON && !o->ranges_given))
		return;
	report_progress_phase(&r->progress, "hot address ranges", 0);
	ranges_options_init(&rr->o);
	rr->o.pid = o->pid;
	rr->o.kinds = o->kind ? RANGES_KIND(o->kind) : RANGES_KINDS_ALL;
	rr->o.max_sites = 1;
	rr->o.max_maps = 1;
	if (o->default_skip && o->nskip == 0)
		rr->o.resolver = r->callsites; /* the same skip list: one symbolizer per run */
	if (ranges_compute(r->rec, &rr->o, &rr->res, err, sizeof(err)) < 0) {
		report_warn(&r->warnings, "hot address ranges not shown: %s", err);
		return;
	}
	for (size_t i = 0; i < rr->res.nwarnings; i++) {
		bool seen = false; /* the report's own symbolizer may have said the same */
		for (size_t k = 0; k < r->warnings.count && !seen; k++)
			seen = strcmp(r->warnings.lines[k], rr->res.warnings[i]) == 0;
		if (!seen)
			report_warn(&r->warnings, "%s", rr->res.warnings[i]);
	}
	/* Every range but the processes' root ranges (ranges_top's), the first o->ranges shown. */
	{
		struct ranges_ref *all = NULL;
		size_t n = 0;
		for (size_t p = 0; p < rr->res.nprocs; p++)
			n += rr->res.procs[p].nranges;
		if (n && !(all = calloc(n, sizeof(*all)))) {
			report_warn(&r->warnings, "hot address ranges not shown: out of memory");
			ranges_result_free(&rr->res);
			return;
		}
		rr->total = n ? ranges_top(&rr->res, n, all) : 0;
		if (rr->total > o->ranges)
			rr->ntop = (size_t)o->ranges;
		else
			rr->ntop = rr->total;
		rr->top = all;
	}
	rr->computed = true;
}

void report_ranges_free(struct report *r)
{
	if (r->ranges.computed)
		ranges_result_free(&r->ranges.res);
	free(r->ranges.top);
	memset(&r->ranges, 0, sizeof(r->ranges));
}

/* The top allocation site of a range, or what holds its faults when no allocation does. */
static const char *top_site(const struct ranges_range *g, char *buf, size_t len)
{
	if (g->nsites)
		return g->sites[0].name;
	if (g->nmaps)
		snprintf(buf, len, "%s (no allocation)", g->maps[0].name);
	else
		snprintf(buf, len, "-");
	return buf;
}

/* "online tree (ranges.rap)", "built from N fault records", or both with process counts. */
static void source_summary(const struct ranges_result *res, char *buf, size_t len)
{
	size_t online = 0, built = 0;
	uint64_t records = 0;
	char c[32];

	for (size_t p = 0; p < res->nprocs; p++) {
		if (res->procs[p].source == RANGES_SOURCE_ONLINE) {
			online++;
		} else {
			built++;
			records += res->procs[p].trace_faults;
		}
	}
	if (res->nprocs == 1)
		snprintf(buf, len, "%s", res->procs[0].source_text);
	else if (built == 0)
		snprintf(buf, len, "online trees (ranges.rap) of %zu processes", online);
	else if (online == 0)
		snprintf(buf, len, "built from %s fault records of %zu processes", cli_format_count(records, c, sizeof(c)),
			 built);
	else
		snprintf(buf, len, "online trees of %zu process%s, built from %s fault records of %zu", online,
			 online == 1 ? "" : "es", cli_format_count(records, c, sizeof(c)), built);
}

/* The ε of the trees: one value, or the span when processes differ. */
static void eps_summary(const struct ranges_result *res, char *buf, size_t len)
{
	double lo = 1, hi = 0;

	for (size_t p = 0; p < res->nprocs; p++) {
		double e = res->procs[p].stats.eps;
		lo = e < lo ? e : lo;
		hi = e > hi ? e : hi;
	}
	if (res->nprocs == 0)
		snprintf(buf, len, "-");
	else if (hi - lo < 1e-9)
		snprintf(buf, len, "%.4f", lo);
	else
		snprintf(buf, len, "%.4f-%.4f", lo, hi);
}

static void put_printable(const char *text, FILE *out)
{
	for (const unsigned char *p = (const unsigned char *)text; *p; p++)
		putc(*p < 0x20 || *p == 0x7f ? '?' : *p, out);
}

/* Tree order of the shown ranges: process, then node start, outer before inner. */
static int by_tree(const void *pa, const void *pb)
{
	const struct ranges_ref *a = pa, *b = pb;
	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	if (a->range->node_lo != b->range->node_lo)
		return a->range->node_lo < b->range->node_lo ? -1 : 1;
	return a->range->node_hi > b->range->node_hi ? -1 : a->range->node_hi < b->range->node_hi;
}

/* How many of the shown ranges hold g (its ancestors among them). */
static unsigned shown_level(const struct ranges_ref *shown, size_t n, const struct ranges_ref *g)
{
	unsigned level = 0;
	for (size_t i = 0; i < n; i++) {
		const struct ranges_range *a = shown[i].range;
		if (shown[i].proc == g->proc && a != g->range && a->node_lo <= g->range->node_lo &&
		    a->node_hi >= g->range->node_hi)
			level++;
	}
	return level;
}

enum { COL_PID, COL_START, COL_END, COL_SIZE, COL_FAULTS, COL_BOUNDS, COL_PCT, COL_SITE, NCOLS };

void report_ranges_print_table(const struct report *r, FILE *out)
{
	const struct report_ranges *rr = &r->ranges;
	static const char *const heads[NCOLS] = { "pid", "start", "end", "size", "faults", "bounds", "%",
						  "top allocation site" };
	static const bool left[NCOLS] = { false, true, true, false, false, false, false, true };
	char source[256], eps[64], (*cells)[NCOLS][96];
	struct ranges_ref *shown;
	size_t width[NCOLS] = { 0 };
	bool pid_col;

	if (!rr->computed)
		return;
	source_summary(&rr->res, source, sizeof(source));
	eps_summary(&rr->res, eps, sizeof(eps));
	fputs("#\n# hot address ranges (RAP, ε ", out);
	fprintf(out, "%s, φ %.4f, source: ", eps, rr->o.phi);
	put_printable(source, out);
	if (r->o->kind)
		fprintf(out, "; faults of kind %s", fl_fault_kind_name(r->o->kind));
	if (r->o->pid)
		fprintf(out, "; pid %u", r->o->pid);
	if (r->o->from_ns || r->o->to_ns != UINT64_MAX)
		fputs("; whole recording: --from/--to do not apply", out);
	fprintf(out, "; %zu of %zu shown", rr->ntop, rr->total);
	if (rr->ntop < rr->total) /* which ones, since neither the faults nor the % column orders them */
		fputs(": those with the most faults outside the other hot ranges nested in them", out);
	fputs(rr->res.nprocs > 1 ? "; by process, then address)\n" : "; by address)\n", out);
	if (rr->ntop == 0) {
		fputs("#   no range outside the root holds φ of the faults\n", out);
		return;
	}
	cells = calloc(rr->ntop + 1, sizeof(*cells));
	shown = malloc(rr->ntop * sizeof(*shown));
	if (!cells || !shown) {
		free(cells);
		free(shown);
		fputs("#   (out of memory)\n", out);
		return;
	}
	memcpy(shown, rr->top, rr->ntop * sizeof(*shown));
	qsort(shown, rr->ntop, sizeof(*shown), by_tree);
	pid_col = rr->res.nprocs > 1;
	for (size_t c = 0; c < NCOLS; c++)
		snprintf(cells[0][c], sizeof(cells[0][c]), "%s", c == COL_PCT && pid_col ? "% of pid" : heads[c]);
	for (size_t i = 0; i < rr->ntop; i++) {
		const struct ranges_range *g = shown[i].range;
		char (*row)[96] = cells[i + 1], a[32], b[32], site[96];
		unsigned level = shown_level(shown, rr->ntop, &shown[i]);
		snprintf(row[COL_PID], sizeof(row[0]), "%u", shown[i].proc->proc->pid);
		snprintf(row[COL_START], sizeof(row[0]), "%*s0x%016" PRIx64, (int)(2 * (level < 8 ? level : 8)), "",
			 g->lo);
		snprintf(row[COL_END], sizeof(row[0]), "0x%016" PRIx64, g->hi);
		snprintf(row[COL_SIZE], sizeof(row[0]), "%s", cli_format_size(g->hi - g->lo, a, sizeof(a)));
		snprintf(row[COL_FAULTS], sizeof(row[0]), "%s", cli_format_count(g->est, a, sizeof(a)));
		snprintf(row[COL_BOUNDS], sizeof(row[0]), "[%s, %s]", cli_format_count(g->lower, a, sizeof(a)),
			 cli_format_count(g->upper, b, sizeof(b)));
		snprintf(row[COL_PCT], sizeof(row[0]), "%.2f%%", g->pct);
		snprintf(row[COL_SITE], sizeof(row[0]), "%s", top_site(g, site, sizeof(site)));
		if (strlen(row[COL_SITE]) > SITE_MAX)
			strcpy(row[COL_SITE] + SITE_MAX - 2, "..");
	}
	for (size_t i = 0; i <= rr->ntop; i++)
		for (size_t c = 0; c < NCOLS; c++)
			if (strlen(cells[i][c]) > width[c])
				width[c] = strlen(cells[i][c]);
	for (size_t i = 0; i <= rr->ntop; i++) {
		fputs("#   ", out); /* '#' lines: every other line of the table stays a ranked row */
		for (size_t c = pid_col ? 0 : 1; c < NCOLS; c++) {
			if (c + 1 == NCOLS)
				put_printable(cells[i][c], out);
			else
				fprintf(out, left[c] ? "%-*s  " : "%*s  ", (int)width[c], cells[i][c]);
		}
		putc('\n', out);
	}
	free(cells);
	free(shown);
}

void report_ranges_print_json(const struct report *r, FILE *out)
{
	const struct report_ranges *rr = &r->ranges;
	char kinds[96];

	fputs(",\n \"ranges\": [", out);
	for (size_t i = 0; rr->computed && i < rr->ntop; i++) {
		const struct ranges_proc *rp = rr->top[i].proc;
		const struct ranges_range *g = rr->top[i].range;
		fprintf(out, "%s\n  {\"rank\": %zu, \"pid\": %u, \"process\": ", i ? "," : "", i + 1, rp->proc->pid);
		json_out_string(rp->proc->name, out);
		fprintf(out, ", \"start\": \"0x%016" PRIx64 "\", \"end\": \"0x%016" PRIx64 "\", \"start_addr\": %" PRIu64
			", \"end_addr\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"faults\": %" PRIu64 ", \"lower\": %" PRIu64
			", \"upper\": %" PRIu64 ", \"percent\": %.4f, \"excl\": %" PRIu64 ", \"excl_percent\": %.4f"
			", \"trace\": ", g->lo, g->hi, g->lo, g->hi, g->hi - g->lo, g->est, g->lower, g->upper, g->pct,
			g->excl, g->excl_pct);
		if (g->has_trace)
			fprintf(out, "%" PRIu64, g->trace);
		else
			fputs("null", out);
		fputs(", \"top_site\": ", out);
		json_out_string(g->nsites ? g->sites[0].name : NULL, out);
		fprintf(out, ", \"top_site_faults\": %" PRIu64 ", \"mapping\": ", g->nsites ? g->sites[0].faults : 0);
		json_out_string(g->nmaps ? g->maps[0].name : NULL, out);
		putc('}', out);
	}
	fputs(rr->computed && rr->ntop ? "\n ],\n" : "],\n", out);
	fputs(" \"ranges_source\": {\"method\": \"RAP\"", out);
	if (rr->computed) {
		fprintf(out, ", \"phi\": %.6f, \"kinds\": \"%s\", \"shown\": %zu, \"total\": %zu, \"whole_recording\": %s"
			", \"processes\": [", rr->o.phi, ranges_kinds_name(rr->o.kinds, kinds, sizeof(kinds)), rr->ntop,
			rr->total, r->o->from_ns || r->o->to_ns != UINT64_MAX ? "true" : "false");
		for (size_t p = 0; p < rr->res.nprocs; p++) {
			const struct ranges_proc *rp = &rr->res.procs[p];
			fprintf(out, "%s{\"pid\": %u, \"process\": ", p ? ", " : "", rp->proc->pid);
			json_out_string(rp->proc->name, out);
			fprintf(out, ", \"source\": \"%s\", \"source_text\": ",
				rp->source == RANGES_SOURCE_ONLINE ? "online" : "trace");
			json_out_string(rp->source_text, out);
			fprintf(out, ", \"eps\": %.6f, \"faults\": %" PRIu64 ", \"trace_faults\": %" PRIu64
				", \"error_bound\": %" PRIu64 "}", rp->stats.eps, rp->stats.n, rp->trace_faults,
				rp->error_bound);
		}
		fputs("]", out);
	} else {
		fputs(", \"error\": \"not computed (see the warnings on stderr)\"", out);
	}
	fputs("}", out);
}
