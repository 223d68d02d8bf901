/* timeline.h: reads a process's counter timeline (the `timeline` file, inc/faultline/trace.h
 * "Timeline") and names its counters. Its own file beside trace_reader.c: the timeline is an
 * optional stream, read only by the verbs that show it (visualize, export).
 *
 * The file and its header are read by the one reader of side files (side_file.h: a longer record
 * is read by its known prefix, a cut file keeps its complete records and says so in `warning`);
 * this reader checks the reason values. Records are returned sorted by time (several writers
 * append them: the sampler and the fault handlers). */
#ifndef FAULTLINE_TOOLS_TIMELINE_H
#define FAULTLINE_TOOLS_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <faultline/trace.h>

#include "side_file.h"
#include "trace_reader.h"

struct fl_timeline {
	bool present;                     /* the process has a timeline file */
	struct fl_timeline_record *recs;  /* sorted by (time_ns, tid, reason); zero-extended to 16 values */
	size_t nrecs;
	char warning[FL_SIDE_WARNING_MAX]; /* "" or one line: the file was cut */
};

/* Reads PROC's timeline. Returns 0 (present false and nothing allocated when there is no file), or
 * -1 with one line "PATH: offset N: what is wrong" in err. */
int fl_timeline_read(const struct fl_process *proc, struct fl_timeline *out, char *err, size_t errlen);

void fl_timeline_free(struct fl_timeline *tl);

/* The counter's column name (SQLite, SVG data attributes): "task_clock_ns", "far_read_bytes", ... */
const char *fl_timeline_counter_name(unsigned counter);

/* What it counts, for labels: "task-clock (ns)", "far reads (bytes)", ... */
const char *fl_timeline_counter_label(unsigned counter);

/* True for the gauges (resident and soft pages): a level, not a cumulative count. */
bool fl_timeline_counter_is_gauge(unsigned counter);

/* "periodic", "every-n", "final", or "?". */
const char *fl_timeline_reason_name(unsigned reason);

#endif
