/* timeline_steps.h: a counter of one process's timeline as steps on a time axis — between two
 * consecutive samples that hold the counter, its rate per second of the axis (cumulative counters)
 * or its level at the later sample (gauges). The one place that says which samples count:
 * timeline.svg (render/timeline_svg.c) and report.html (analyze/html_model.c) draw these steps.
 *
 * A sample counts for counter C only when its valid bit (1 << C) is set and it has a position on
 * the axis (not UINT64_MAX: e.g. a sample without task-clock on the virtual axis). A step is made
 * only forward (x of the later sample >= the earlier's: a sample placed back in time is skipped),
 * a cumulative counter's only over a positive span, and its rate is counted only when the counter
 * grew (b > a; a counter that went back, as two writers' samples may, gives a rate of 0). */
#ifndef FAULTLINE_TOOLS_TIMELINE_STEPS_H
#define FAULTLINE_TOOLS_TIMELINE_STEPS_H

#include <stddef.h>
#include <stdint.h>

#include <faultline/trace.h>

struct timeline_step {
	uint64_t x0, x1;            /* ns on the axis, x0 <= x1 (x0 < x1 for a cumulative counter) */
	uint64_t a, b;              /* the counter at x0 and at x1 */
	double value;               /* per second (cumulative), or the level (gauge) */
};

/* The steps of counter C over the N samples RECS placed at X_NS (in time order) into OUT, which
 * has room for N; returns how many. */
size_t timeline_steps(const struct fl_timeline_record *recs, const uint64_t *x_ns, size_t n, unsigned c,
		      struct timeline_step *out);

#endif
