/* timeline_svg.c: counter timelines as SVG strips on the heatmap's time axis (see timeline_svg.h). */
#include "timeline_svg.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "svg.h"
#include "timeline.h"
#include "timeline_steps.h"

#define TOP 64
#define BOTTOM 64
#define STRIP_H 44
#define STRIP_GAP 10

/* One value compactly: 950, 1.2k, 3.4M, 5.6G. */
static const char *compact(double v, char *buf)
{
	static const char units[] = { 0, 'k', 'M', 'G', 'T', 'P' };
	unsigned u = 0;
	while (fabs(v) >= 1000 && u + 1 < sizeof(units)) {
		v /= 1000;
		u++;
	}
	char num[32];
	svg_num(num, v, fabs(v) >= 100 || u == 0 ? 0 : 1);
	snprintf(buf, 40, "%s%c", num, units[u] ? units[u] : '\0');
	return buf;
}

static double nice_step(double span, int target)
{
	double raw = span / target, mag = pow(10, floor(log10(raw))), f = raw / mag;
	return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

static void put_time(FILE *out, double seconds)
{
	char buf[32];
	double a = fabs(seconds);
	int decimals = a == 0 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : a >= 0.1 ? 3 : a >= 0.01 ? 4 : 6;
	fputs(svg_num(buf, seconds, decimals), out);
}

static bool has(const struct fl_timeline_record *r, unsigned c)
{
	return (r->valid >> c) & 1u;
}

/* The steps of series S for counter C into OUT (room for S->n); returns how many. */
static size_t intervals(const struct timeline_series *s, unsigned c, struct timeline_step *out)
{
	return timeline_steps(s->recs, s->x_ns, s->n, c, out);
}

/* The counter's growth over a series (its last value: counts start at the process's start), or its
 * highest level (gauge). */
static uint64_t total_of(const struct timeline_series *s, unsigned c)
{
	uint64_t last = 0, top = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (!has(&s->recs[i], c))
			continue;
		last = s->recs[i].values[c]; /* cumulative since the process's start */
		if (last > top)
			top = last;
	}
	return fl_timeline_counter_is_gauge(c) ? top : last;
}

static void series_color(size_t i, char buf[8])
{
	svg_color_hsl(210 + 137.0 * (double)i, 0.65, 0.45, buf);
}

static void draw_strip(FILE *out, const struct timeline_series *series, size_t nseries, unsigned c, double y,
		       unsigned plot_w, double ns_per_px, uint64_t end_ns, struct timeline_step *scratch, size_t *points)
{
	char b1[40], b2[40], b3[40], color[8];
	bool gauge = fl_timeline_counter_is_gauge(c);
	double top = 0;
	uint64_t total = 0;

	for (size_t k = 0; k < nseries; k++) {
		size_t n = intervals(&series[k], c, scratch);
		for (size_t i = 0; i < n; i++)
			if (scratch[i].value > top)
				top = scratch[i].value;
		total += total_of(&series[k], c);
	}
	fprintf(out, "<g class=\"strip\" data-counter=\"%s\" data-total=\"%" PRIu64 "\" data-max=\"%s\">\n",
		fl_timeline_counter_name(c), total, svg_num(b1, top, 3));
	fprintf(out, "<rect x=\"%d\" y=\"%s\" width=\"%u\" height=\"%d\" fill=\"#fff\" stroke=\"#bbb\"/>\n", TIMELINE_LEFT,
		svg_num(b1, y, 1), plot_w, STRIP_H);
	fprintf(out, "<text x=\"%d\" y=\"%s\" text-anchor=\"end\" font-size=\"11\">", TIMELINE_LEFT - 6,
		svg_num(b1, y + 16, 1));
	svg_escape(out, fl_timeline_counter_label(c), (size_t)-1);
	fprintf(out, "</text>\n<text x=\"%d\" y=\"%s\" text-anchor=\"end\" font-size=\"9\" fill=\"#666\">max %s</text>\n",
		TIMELINE_LEFT - 6, svg_num(b1, y + 30, 1), compact(top, b2));
	if (!gauge)
		fprintf(out, "<text x=\"%d\" y=\"%s\" text-anchor=\"end\" font-size=\"9\" fill=\"#666\">per second</text>\n",
			TIMELINE_LEFT - 6, svg_num(b1, y + 41, 1));
	for (size_t k = 0; k < nseries && top > 0; k++) {
		size_t n = intervals(&series[k], c, scratch);
		if (n == 0)
			continue;
		series_color(k, color);
		fprintf(out, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.2\" d=\"", color);
		for (size_t i = 0; i < n; i++) {
			uint64_t x0 = scratch[i].x0 > end_ns ? end_ns : scratch[i].x0;
			uint64_t x1 = scratch[i].x1 > end_ns ? end_ns : scratch[i].x1;
			double px0 = TIMELINE_LEFT + x0 / ns_per_px, px1 = TIMELINE_LEFT + x1 / ns_per_px;
			double py = y + STRIP_H - (STRIP_H - 2) * scratch[i].value / top;
			fprintf(out, "%s%s %s", i == 0 ? "M" : " L", svg_num(b1, px0, 2), svg_num(b2, py, 2));
			fprintf(out, " L%s %s", svg_num(b1, px1, 2), svg_num(b3, py, 2));
		}
		fputs("\"><title>", out);
		svg_escape(out, series[k].label, (size_t)-1);
		fputs(": ", out);
		svg_escape(out, fl_timeline_counter_label(c), (size_t)-1);
		fprintf(out, ", %s %s</title></path>\n", gauge ? "highest" : "total", compact((double)total_of(&series[k], c), b1));
		*points += n;
	}
	fputs("</g>\n", out);
}

static void draw_axis(FILE *out, double y, unsigned plot_w, uint64_t end_ns, bool virtual_time)
{
	char b1[40], b2[40];
	double span = end_ns / 1e9;
	fputs("<g id=\"xaxis\" font-size=\"10\" text-anchor=\"middle\">\n", out);
	if (span > 0) {
		double step = nice_step(span, 8);
		for (int i = 0; i * step <= span * 1.0000001; i++) {
			double x = TIMELINE_LEFT + plot_w * (i * step) / span;
			fprintf(out, "<line x1=\"%s\" x2=\"%s\" y1=\"%s\" y2=\"%s\" stroke=\"#444\"/>", svg_num(b1, x, 2),
				svg_num(b2, x, 2), svg_num(b1, y, 1), svg_num(b2, y + 4, 1));
			fprintf(out, "<text x=\"%s\" y=\"%s\">", svg_num(b1, x, 2), svg_num(b2, y + 16, 1));
			put_time(out, i * step);
			fputs("</text>\n", out);
		}
	}
	fputs("</g>\n", out);
	fprintf(out, "<text x=\"%s\" y=\"%s\" text-anchor=\"middle\">%s</text>\n", svg_num(b1, TIMELINE_LEFT + plot_w / 2.0, 1),
		svg_num(b2, y + 36, 1),
		virtual_time ? "the program's own time: its threads' task-clock (s)" : "time since the recording started (s)");
}

int timeline_svg_write(const struct timeline_series *series, size_t nseries, const struct timeline_svg_options *o,
		       FILE *out, struct timeline_svg_stats *stats)
{
	char b1[40], b2[40], color[8];
	unsigned plot_w = o->plot_width ? o->plot_width : TIMELINE_PLOT_WIDTH;
	unsigned counters[FL_TL_COUNTERS], nstrips = 0;
	size_t most = 0, points = 0;
	uint64_t end_ns = o->end_ns;

	for (unsigned c = 0; c < FL_TL_COUNTERS; c++) {
		bool any = false;
		for (size_t k = 0; k < nseries && !any; k++)
			for (size_t i = 0; i < series[k].n && !any; i++)
				any = has(&series[k].recs[i], c) && series[k].x_ns[i] != UINT64_MAX;
		if (any)
			counters[nstrips++] = c;
	}
	for (size_t k = 0; k < nseries; k++) {
		if (series[k].n > most)
			most = series[k].n;
		if (!o->end_ns)
			for (size_t i = 0; i < series[k].n; i++)
				if (series[k].x_ns[i] != UINT64_MAX && series[k].x_ns[i] > end_ns)
					end_ns = series[k].x_ns[i];
	}
	if (end_ns == 0)
		end_ns = 1;
	struct timeline_step *scratch = malloc((most ? most : 1) * sizeof(*scratch));
	if (!scratch) {
		errno = ENOMEM;
		return -1;
	}
	double ns_per_px = (double)end_ns / plot_w;
	unsigned plot_h = nstrips ? nstrips * (STRIP_H + STRIP_GAP) : 80;
	unsigned width = TIMELINE_LEFT + plot_w + TIMELINE_LEGEND, height = TOP + plot_h + BOTTOM;

	svg_begin(out, width, height);
	fputs("<style type=\"text/css\">text { font-family: Verdana, 'DejaVu Sans', sans-serif; font-size: 12px; }"
	      " path:hover { stroke-width: 2.5; }</style>\n", out);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"#fcfcfc\"/>\n", width, height);
	fprintf(out, "<text x=\"%s\" y=\"24\" text-anchor=\"middle\" font-size=\"17\">", svg_num(b1, width / 2.0, 1));
	svg_escape(out, o->title ? o->title : "counters over time", (size_t)-1);
	fputs("</text>\n", out);
	if (o->subtitle) {
		fprintf(out, "<text x=\"%s\" y=\"44\" text-anchor=\"middle\" fill=\"#555\">", svg_num(b1, width / 2.0, 1));
		svg_escape(out, o->subtitle, (size_t)-1);
		fputs("</text>\n", out);
	}
	fprintf(out, "<g id=\"strips\" data-x0=\"%d\" data-ns-per-px=\"%s\" data-end-ns=\"%" PRIu64 "\" data-time=\"%s\">\n",
		TIMELINE_LEFT, svg_num(b1, ns_per_px, 3), end_ns, o->virtual_time ? "virtual" : "wall");
	if (nstrips == 0)
		fprintf(out, "<text x=\"%s\" y=\"%u\" text-anchor=\"middle\">no timeline samples</text>\n",
			svg_num(b1, TIMELINE_LEFT + plot_w / 2.0, 1), TOP + plot_h / 2);
	for (unsigned s = 0; s < nstrips; s++)
		draw_strip(out, series, nseries, counters[s], TOP + s * (STRIP_H + STRIP_GAP), plot_w, ns_per_px, end_ns,
			   scratch, &points);
	fputs("</g>\n", out);
	draw_axis(out, TOP + plot_h - STRIP_GAP, plot_w, end_ns, o->virtual_time);
	/* legend: one line per process */
	fputs("<g id=\"legend\" font-size=\"11\">\n", out);
	for (size_t k = 0; k < nseries && k < 40; k++) {
		double ly = TOP + 12 + 16.0 * (double)k;
		series_color(k, color);
		fprintf(out, "<line x1=\"%u\" x2=\"%u\" y1=\"%s\" y2=\"%s\" stroke=\"%s\" stroke-width=\"2\"/>",
			TIMELINE_LEFT + plot_w + 20, TIMELINE_LEFT + plot_w + 40, svg_num(b1, ly - 4, 1), svg_num(b2, ly - 4, 1),
			color);
		fprintf(out, "<text x=\"%u\" y=\"%s\">", TIMELINE_LEFT + plot_w + 46, svg_num(b1, ly, 1));
		svg_escape(out, series[k].label, (size_t)-1);
		fputs("</text>\n", out);
	}
	fputs("</g>\n", out);
	svg_end(out);
	free(scratch);
	if (stats)
		*stats = (struct timeline_svg_stats){ nstrips, points, end_ns };
	return 0;
}
