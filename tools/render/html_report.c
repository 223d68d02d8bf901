/* html_report.c: writes report.html (html_report.h): the embedded style and script, and the model
 * as one JSON object in a <script type="application/json"> element, which the script reads. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "html_assets.h"
#include "html_report.h"
#include "text_out.h"
#include "timeline.h"

#define HTML_MAX_HEADER (64u << 10) /* bytes of the report's header kept */

static void put_u64(const char *sep, uint64_t v, FILE *out)
{
	fprintf(out, "%s%" PRIu64, sep, v);
}

/* A number that JSON can hold: UINT64_MAX (an unknown end) as -1. */
static void put_time(const char *sep, uint64_t v, FILE *out)
{
	if (v == UINT64_MAX)
		fprintf(out, "%s-1", sep);
	else
		put_u64(sep, v, out);
}

static void write_names(const struct html_model *m, FILE *out)
{
	fputs("\"names\":[", out);
	for (size_t i = 0; i < m->names.set.count; i++) {
		fputs(i ? "," : "", out);
		json_out_string_html(m->names.set.strings[i], out);
	}
	fputs("],\n\"stacks\":[", out);
	for (size_t i = 0; i < m->nstacks; i++) {
		fputs(i ? ",[" : "[", out);
		for (size_t j = 0; j < m->stack_len[i]; j++)
			put_u64(j ? "," : "", m->stacks[i][j], out);
		putc(']', out);
	}
	fputs("],\n\"callsites\":[", out);
	for (size_t i = 0; i < m->ncallsites; i++)
		put_u64(i ? "," : "", m->callsite_names[i], out);
	fputs("],\n\"functions\":[", out);
	for (size_t i = 0; i < m->nfunctions; i++)
		put_u64(i ? "," : "", m->function_names[i], out);
	fputs("],\n\"sites\":[", out);
	for (size_t i = 0; i < m->nsites; i++) {
		const struct html_site *s = &m->sites[i];
		fprintf(out, "%s[%u", i ? "," : "", s->name);
		if (s->has_counts)
			fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]", s->allocs, s->bytes,
				s->objects_faulted, s->faults);
		else
			fputs("]", out);
	}
	fputs("],\n\"threads\":[", out);
	for (size_t i = 0; i < m->nthreads; i++)
		fprintf(out, "%s[%u,%u]", i ? "," : "", m->threads[i].pid, m->threads[i].tid);
	fputs("],\n\"procs\":[", out);
	for (size_t i = 0; i < m->nprocs; i++)
		put_u64(i ? "," : "", m->proc_names[i], out);
	fputs("],\n\"groups\":[", out);
	for (size_t i = 0; i < m->ngroups; i++) {
		const struct html_group *g = &m->groups[i];
		fprintf(out, "%s[%u,%u,%u,%u,%u,%u]", i ? "," : "", g->stack, g->callsite, g->function, g->site, g->thread,
			g->proc);
	}
	fputs("],\n", out);
}

static void write_cells(const struct html_model *m, FILE *out)
{
	/* flat: row, col, kind, group, count per cell */
	fputs("\"cells\":[", out);
	for (size_t i = 0; i < m->ncells; i++) {
		const struct html_cell *c = &m->cells[i];
		fprintf(out, "%s%u,%u,%u,%u,%" PRIu64, i ? "," : "", c->row, c->col, c->kind, c->group, c->count);
		if (i % 16 == 15)
			putc('\n', out);
	}
	fputs("],\n", out);
}

static void write_extras(const struct html_model *m, FILE *out)
{
	fputs("\"objects\":[", out);
	for (size_t i = 0; i < m->nobjects; i++) {
		const struct html_object *o = &m->objects[i];
		fprintf(out, "%s[%u,%u", i ? "," : "", o->site, o->pid);
		put_u64(",", o->addr, out);
		put_u64(",", o->size, out);
		put_time(",", o->start_ns, out);
		put_time(",", o->end_ns, out);
		put_u64(",", o->faults, out);
		putc(']', out);
	}
	fputs("],\n\"series\":[", out);
	for (size_t i = 0; i < m->nseries; i++) {
		const struct html_series *s = &m->series[i];
		fprintf(out, "%s{\"pid\":%u,\"label\":", i ? "," : "", s->pid);
		json_out_string_html(fl_timeline_counter_label(s->counter), out);
		fprintf(out, ",\"gauge\":%s,\"first\":%" PRIu64 ",\"last\":%" PRIu64 ",\"x0\":[", s->gauge ? "true" : "false",
			s->first, s->last);
		for (size_t j = 0; j < s->n; j++)
			put_u64(j ? "," : "", s->x0[j], out);
		fputs("],\"x1\":[", out);
		for (size_t j = 0; j < s->n; j++)
			put_u64(j ? "," : "", s->x1[j], out);
		fputs("],\"v\":[", out);
		for (size_t j = 0; j < s->n; j++)
			fprintf(out, "%s%.6g", j ? "," : "", s->value[j]);
		fputs("]}", out);
	}
	fprintf(out, "],\n\"series_dropped\":%zu", m->series_dropped);
	fputs(",\n\"hot\":[", out);
	for (size_t i = 0; i < m->nhot; i++) {
		fprintf(out, "%s[%" PRIu64 ",%" PRIu64 ",%.2f,", i ? "," : "", m->hot[i].lo, m->hot[i].hi, m->hot[i].pct);
		json_out_string_html(m->hot[i].label, out);
		putc(']', out);
	}
	fprintf(out, "],\n\"mrc_peak\":%" PRIu64 ",\"mrc\":[", m->mrc_peak_bytes);
	for (size_t i = 0; i < m->nmrc; i++)
		fprintf(out, "%s[%" PRIu64 ",%.1f,%.1f,%.1f]", i ? "," : "", m->mrc[i].local_bytes, m->mrc[i].predicted,
			m->mrc[i].lower, m->mrc[i].upper);
	fputs("],\n\"sweep\":[", out);
	for (size_t i = 0; i < m->nsweep; i++)
		fprintf(out, "%s[%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%d,%d]", i ? "," : "", m->sweep[i].local_bytes,
			m->sweep[i].refaults, m->sweep[i].faults, m->sweep[i].this_recording, i == m->sweep_knee);
	fputs("]", out);
}

/* The report's header as the page shows it: without its "# rows:" line (which describes report's
 * table, not the page's) and cut to HTML_MAX_HEADER bytes (a bound: a command line may be long).
 * Malloc'd; NULL when out of memory or without a header. */
static char *page_header(const char *header)
{
	size_t len = 0;
	char *page;

	if (!header || !(page = malloc(HTML_MAX_HEADER + 1)))
		return NULL;
	for (const char *line = header; *line && len < HTML_MAX_HEADER;) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) + 1 : strlen(line);
		if (strncmp(line, "# rows:", 7) != 0) {
			if (n > HTML_MAX_HEADER - len)
				n = HTML_MAX_HEADER - len;
			memcpy(page + len, line, n);
			len += n;
		}
		line += nl ? (size_t)(nl - line) + 1 : strlen(line);
	}
	page[len] = '\0';
	return page;
}

static void write_data(const struct html_model *m, const struct html_report_options *o, FILE *out)
{
	fputs("{\"title\":", out);
	json_out_string_html(o->title, out);
	fputs(",\n\"header\":", out);
	char *header = page_header(o->header);
	json_out_string_html(header ? header : "", out);
	free(header);
	fputs(",\"time_label\":", out);
	json_out_string_html(o->time_label, out);
	fprintf(out, ",\"virtual\":%s,\"kinds\":%u,\"pid\":%u,\"origin_ns\":%" PRIu64 ",\n",
		m->clock->axis == FL_TIME_VIRTUAL ? "true" : "false", m->kinds, m->pid, m->origin_ns);
	fprintf(out, "\"grid\":{\"addr0\":%" PRIu64 ",\"row_bytes\":%" PRIu64 ",\"rows\":%u,\"col_ns\":%" PRIu64
		",\"cols\":%u,\"page\":%" PRIu64 "},\n", m->addr0, m->row_bytes, m->rows, m->col_ns, m->cols, m->page_size);
	fprintf(out, "\"bounds\":{\"rows\":%d,\"cols\":%d,\"groups\":%d,\"cells\":%d,\"frames\":%d,\"objects\":%d,"
		"\"merged_groups\":%zu,\"coarsened\":%u,\"untimed\":%" PRIu64 "},\n", HTML_ROWS, HTML_COLS, HTML_MAX_GROUPS,
		HTML_MAX_CELLS, HTML_MAX_FRAMES, HTML_MAX_OBJECTS, m->merged_groups, m->coarsened, m->untimed);
	write_names(m, out);
	write_cells(m, out);
	write_extras(m, out);
	fputs("}", out);
}

/* The page of an empty selection says so in its text (the script moves it under the header and
 * hides the empty views):
 * which kinds were selected, and why none is drawn. */
static void write_empty(const struct html_model *m, FILE *out)
{
	uint64_t taken = 0;
	bool first = true;

	for (unsigned k = 1; k <= FL_FAULT_KIND_MAX; k++)
		taken += m->faults[k];
	fputs("<p id=\"empty\" class=\"empty\">", out);
	if (taken == 0)
		fputs("No fault of the selected kinds", out);
	else
		fprintf(out, "No fault of the selected kinds has a time on this axis (%" PRIu64 " left out)", m->untimed);
	fputs(" (", out);
	for (unsigned k = 1; k <= FL_FAULT_KIND_MAX; k++)
		if (m->kinds & (1u << k)) {
			fprintf(out, "%s%s", first ? "" : ", ", fl_fault_kind_name(k));
			first = false;
		}
	fputs("): no heatmap, table or flame graph to draw.</p>\n", out);
}

int html_report_write(const struct html_model *m, const struct html_report_options *o, FILE *out)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>", out);
	for (const char *p = o->title; *p; p++) /* the title as text */
		if (*p == '<')
			fputs("&lt;", out);
		else if (*p == '&')
			fputs("&amp;", out);
		else
			putc(*p, out);
	fputs("</title>\n<style>\n", out);
	fwrite(html_asset_report_css, 1, sizeof(html_asset_report_css), out);
	fputs("</style>\n</head>\n<body>\n", out);
	fwrite(html_asset_report_body_html, 1, sizeof(html_asset_report_body_html), out);
	if (m->ncells == 0)
		write_empty(m, out);
	fputs("<script type=\"application/json\" id=\"fl-data\">", out);
	write_data(m, o, out);
	fputs("</script>\n<script>\n", out);
	fwrite(html_asset_report_js, 1, sizeof(html_asset_report_js), out);
	fputs("</script>\n</body></html>\n", out);
	if (ferror(out)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}

size_t html_report_max_bytes(void)
{
	/* the widest each record can be written: a cell "127,255,5,1999,<20 digits>," (37 bytes
	 * and a newline per 16); a group six indexes of up to 7 digits; a stack frame 8 bytes; the
	 * names as html_model.c counts them; an object seven numbers of up to 20 digits; a series
	 * step two of 20 digits and a %.6g value (at most 13 bytes); the header escaped (6 bytes per byte at most) */
	size_t cells = (size_t)HTML_MAX_CELLS * 38;
	size_t groups = (size_t)HTML_MAX_GROUPS * (6 * 8 + 3);
	size_t stacks = (size_t)HTML_MAX_GROUPS * ((HTML_MAX_FRAMES + 2) * 8 + 3);
	size_t tables = (size_t)HTML_MAX_GROUPS * 6 * (5 * 21 + 3); /* index arrays, sites' counts, threads */
	size_t objects = (size_t)HTML_MAX_OBJECTS_TOTAL * (7 * 21 + 3);
	size_t series = (size_t)HTML_MAX_SERIES * (HTML_MAX_POINTS * (21 * 2 + 14) + 250);
	size_t rest = (size_t)HTML_MAX_HOT * (HTML_MAX_NAME * 6 + 100) + HTML_MAX_MRC * 200 + HTML_MAX_HEADER * 6 + 8192;
	return sizeof(html_asset_report_css) + sizeof(html_asset_report_body_html) + sizeof(html_asset_report_js) + cells +
	       groups + stacks + HTML_MAX_NAME_BYTES + tables + objects + series + rest;
}
