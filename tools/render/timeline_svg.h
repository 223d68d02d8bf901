/* timeline_svg.h: counter timelines as SVG (timeline.svg) — one strip per counter, all on one time
 * axis, laid out on the heatmap's horizontal geometry (the same left margin, plot width, legend
 * width and time scale as heatmap.svg), so the two stack into one column: x = TIMELINE_LEFT +
 * plot_width * t / end_ns in both.
 *
 * Each series is one process: its process samples (tid 0) with their positions on the axis
 * (recording wall time, or the program's own time: its threads' task-clock). A cumulative counter
 * is drawn as its rate between consecutive samples (a step per interval: per second of the axis's
 * time), a gauge (resident, soft pages) as its level. Each strip is scaled to its own maximum.
 *
 * For tools and tests: <g id="strips" data-x0 data-ns-per-px data-end-ns data-time="wall|virtual">,
 * then one <g class="strip" data-counter="NAME" data-total="T" data-max="M"> per counter any
 * series holds (NAME as in timeline.h; T: the counter's growth over the series, summed, or for a
 * gauge its highest level; M: the strip's top, per second or pages). */
#ifndef FAULTLINE_TOOLS_TIMELINE_SVG_H
#define FAULTLINE_TOOLS_TIMELINE_SVG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <faultline/trace.h>

/* The heatmap's horizontal layout (heatmap.c: LEFT, the default plot width, the gap and LEGEND). */
#define TIMELINE_LEFT 150
#define TIMELINE_PLOT_WIDTH 840
#define TIMELINE_LEGEND 360   /* 20 px gap + heatmap.c's 340 px legend */

/* A point at UINT64_MAX is not on this axis (e.g. an event-based sample has no task-clock). */
struct timeline_series {
	const char *label;                        /* "pid 1234" */
	const struct fl_timeline_record *recs;    /* in time order */
	const uint64_t *x_ns;                     /* each record's position on the axis */
	size_t n;
};

struct timeline_svg_options {
	const char *title;        /* NULL: "counters over time" */
	const char *subtitle;     /* NULL: none */
	unsigned plot_width;      /* 0: TIMELINE_PLOT_WIDTH (pass the heatmap's) */
	uint64_t end_ns;          /* right end of the axis (the heatmap's); 0: the last point */
	bool virtual_time;        /* the axis is the program's own time (task-clock) */
};

struct timeline_svg_stats {
	unsigned strips;
	size_t points;
	uint64_t end_ns;
};

/* Writes the SVG (a plot saying "no timeline samples" when there are none). Returns 0, or -1
 * (ENOMEM); check ferror(out). STATS may be NULL. */
int timeline_svg_write(const struct timeline_series *series, size_t nseries, const struct timeline_svg_options *o,
		       FILE *out, struct timeline_svg_stats *stats);

#endif
