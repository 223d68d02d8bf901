/* sweep_output.c: the sweep's table, CSV and SVG plot (see sweep_render.h). */
#include "sweep_render.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "cli.h"
#include "svg.h"

void sweep_print_csv(const struct sweep_point *points, size_t n, FILE *out)
{
	fputs(SWEEP_CSV_HEADER "\n", out);
	for (size_t i = 0; i < n; i++) {
		const struct sweep_point *p = &points[i];
		fprintf(out, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.3f\n",
			p->local_bytes, p->faults_total, p->first_touch, p->refault, p->soft, p->far_read_bytes,
			p->far_write_bytes, p->wall_s);
	}
}

void sweep_print_table(const struct sweep_point *points, size_t n, size_t knee, const char *dir, FILE *out)
{
	char c[9][32];

	fprintf(out, "# faultline sweep: %zu size%s, recordings in %s/L-<size> (and %s/unlimited with --auto)\n", n, n == 1 ? "" : "s", dir, dir);
	fprintf(out, "# virtual-s: user + system CPU time of the run (the program and its runtime threads), from wait4's rusage\n");
	fprintf(out, "# %-12s %12s %12s %12s %10s %12s %12s %9s %10s  %s\n", "local", "faults", "first-touch", "refault",
		"soft", "far-read", "far-write", "wall-s", "virtual-s", "recording");
	for (size_t i = 0; i < n; i++) {
		const struct sweep_point *p = &points[i];
		fprintf(out, "  %-12s %12s %12s %12s %10s %12s %12s %9.3f %10.3f  %s%s\n",
			p->local_bytes ? cli_format_size(p->local_bytes, c[0], sizeof(c[0])) : "unlimited",
			cli_format_count(p->faults_total, c[1], sizeof(c[1])), cli_format_count(p->first_touch, c[2], sizeof(c[2])),
			cli_format_count(p->refault, c[3], sizeof(c[3])), cli_format_count(p->soft, c[4], sizeof(c[4])),
			cli_format_size(p->far_read_bytes, c[5], sizeof(c[5])), cli_format_size(p->far_write_bytes, c[6], sizeof(c[6])),
			p->wall_s, p->cpu_s, p->name, i == knee ? "  <- knee" : "");
	}
	if (knee < n)
		fprintf(out, "# knee: -L %s, the smallest size whose refaults stay within 10%% of the curve's range above "
			"its minimum\n", cli_format_size(points[knee].local_bytes, c[0], sizeof(c[0])));
	else
		fputs("# knee: none (fewer than two limited sizes, or the same refaults at every size)\n", out);
}

/* ----------------------------------------------------------------- SVG */

#define W 800
#define H 480
#define LEFT 90.0
#define RIGHT 30.0
#define TOP 50.0
#define BOTTOM 70.0

struct axes {
	double xmin, xmax;   /* log2 of bytes */
	uint64_t ymax;
};

static double px(const struct axes *a, uint64_t bytes)
{
	double span = a->xmax > a->xmin ? a->xmax - a->xmin : 1.0;
	return LEFT + (log2((double)bytes) - a->xmin) / span * (W - LEFT - RIGHT);
}

static double py(const struct axes *a, uint64_t refaults)
{
	return H - BOTTOM - (double)refaults / (double)(a->ymax ? a->ymax : 1) * (H - TOP - BOTTOM);
}

static void text_at(FILE *out, double x, double y, const char *anchor, const char *text)
{
	char bx[32], by[32];
	fprintf(out, "<text x=\"%s\" y=\"%s\" text-anchor=\"%s\">", svg_num(bx, x, 1), svg_num(by, y, 1), anchor);
	svg_escape(out, text, (size_t)-1);
	fputs("</text>\n", out);
}

static void axes_grid(FILE *out, const struct sweep_point *points, size_t n, const struct axes *a)
{
	char b[4][32], label[64];

	fprintf(out, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"black\"/>\n", LEFT, H - BOTTOM, W - RIGHT, H - BOTTOM);
	fprintf(out, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"black\"/>\n", LEFT, TOP, LEFT, H - BOTTOM);
	for (size_t i = 0; i < n; i++) { /* a tick per measured size */
		if (!points[i].local_bytes)
			continue;
		double x = px(a, points[i].local_bytes);
		fprintf(out, "<line x1=\"%s\" y1=\"%g\" x2=\"%s\" y2=\"%g\" stroke=\"black\"/>\n", svg_num(b[0], x, 1),
			H - BOTTOM, svg_num(b[1], x, 1), H - BOTTOM + 5);
		text_at(out, x, H - BOTTOM + 20, "middle", cli_format_size(points[i].local_bytes, label, sizeof(label)));
	}
	for (int k = 0; k <= 4; k++) { /* five y ticks */
		uint64_t v = a->ymax / 4 * (uint64_t)k;
		double y = py(a, v);
		fprintf(out, "<line x1=\"%g\" y1=\"%s\" x2=\"%g\" y2=\"%s\" stroke=\"#ddd\"/>\n", LEFT, svg_num(b[0], y, 1),
			W - RIGHT, svg_num(b[1], y, 1));
		text_at(out, LEFT - 6, y + 4, "end", cli_format_count(v, label, sizeof(label)));
	}
	text_at(out, (LEFT + W - RIGHT) / 2, H - 25, "middle", "local memory (-L, log scale)");
	fprintf(out, "<text x=\"20\" y=\"%g\" text-anchor=\"middle\" transform=\"rotate(-90 20 %g)\">refaults</text>\n",
		(TOP + H - BOTTOM) / 2, (TOP + H - BOTTOM) / 2);
}

void sweep_write_svg(const struct sweep_point *points, size_t n, size_t knee, const char *title, FILE *out)
{
	struct axes a = { .xmin = INFINITY, .xmax = -INFINITY, .ymax = 0 };
	char b[4][32], label[128];
	bool first = true;

	for (size_t i = 0; i < n; i++) {
		if (!points[i].local_bytes)
			continue;
		double x = log2((double)points[i].local_bytes);
		a.xmin = x < a.xmin ? x : a.xmin;
		a.xmax = x > a.xmax ? x : a.xmax;
		a.ymax = points[i].refault > a.ymax ? points[i].refault : a.ymax;
	}
	if (a.xmin > a.xmax)
		a.xmin = a.xmax = 0;
	a.xmin -= 0.25;
	a.xmax += 0.25;
	a.ymax = a.ymax < 4 ? 4 : a.ymax + a.ymax / 10;
	svg_begin(out, W, H);
	fputs("<style>text { font-family: Verdana, sans-serif; font-size: 12px; }</style>\n"
	      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n", out);
	fprintf(out, "<text x=\"%d\" y=\"24\" text-anchor=\"middle\" style=\"font-size: 16px\">refaults vs local memory: ", W / 2);
	svg_escape(out, title, (size_t)-1);
	fputs("</text>\n", out);
	axes_grid(out, points, n, &a);
	fputs("<polyline fill=\"none\" stroke=\"#c03\" stroke-width=\"2\" points=\"", out);
	for (size_t i = n; i-- > 0;) { /* smallest first, left to right */
		if (!points[i].local_bytes)
			continue;
		fprintf(out, "%s%s,%s", first ? "" : " ", svg_num(b[0], px(&a, points[i].local_bytes), 1),
			svg_num(b[1], py(&a, points[i].refault), 1));
		first = false;
	}
	fputs("\"/>\n", out);
	for (size_t i = 0; i < n; i++) {
		if (!points[i].local_bytes)
			continue;
		fprintf(out, "<circle class=\"point\" cx=\"%s\" cy=\"%s\" r=\"4\" fill=\"#c03\"><title>-L %s: %" PRIu64
			" refaults</title></circle>\n", svg_num(b[0], px(&a, points[i].local_bytes), 1),
			svg_num(b[1], py(&a, points[i].refault), 1), cli_format_size(points[i].local_bytes, label, sizeof(label)),
			points[i].refault);
	}
	if (knee < n && points[knee].local_bytes) {
		double x = px(&a, points[knee].local_bytes);
		fprintf(out, "<line id=\"knee\" x1=\"%s\" y1=\"%g\" x2=\"%s\" y2=\"%g\" stroke=\"#06c\" stroke-dasharray=\"6 4\"/>\n",
			svg_num(b[0], x, 1), TOP, svg_num(b[1], x, 1), H - BOTTOM);
		snprintf(label, sizeof(label), "knee: -L ");
		cli_format_size(points[knee].local_bytes, label + strlen(label), sizeof(label) - strlen(label));
		text_at(out, x + 6, TOP + 14, "start", label);
	}
	svg_end(out);
}
