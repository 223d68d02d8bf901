/* fault_time.h: the two time axes of a recording's faults, for `--time wall|virtual`.
 *
 *   wall     nanoseconds since the recording started (its earliest process): the axis of
 *            fl_fault_time_ns. Under `record` it is dilated 5-50x by fault service.
 *   virtual  the faulting thread's own CPU time (its task-clock, ns) at the fault: the program's
 *            time axis, which does not advance while the thread sleeps or waits for a fault to be
 *            served. From the fault record (thread_time_ns, taken from the fault's perf sample), or,
 *            when the record has none, from the fault's context when the process counted task-clock
 *            among its --pmu events. Each thread's axis starts at 0 when it started; threads run
 *            side by side, so on this axis the faults of different threads overlap.
 * A fault may have no virtual time (a stack-less sample `-s N`, a recording older than the field,
 * no perf): fault_clock_time then says false and the verbs leave it out, and say how many. */
#ifndef FAULTLINE_TOOLS_FAULT_TIME_H
#define FAULTLINE_TOOLS_FAULT_TIME_H

#include <stdbool.h>
#include <stdint.h>

#include "trace_reader.h"

enum fl_time_axis { FL_TIME_WALL = 0, FL_TIME_VIRTUAL = 1 };

/* "wall" or "virtual" into *axis: 0, or -1 with "expected wall or virtual, got 'X'" in err. */
int fl_time_axis_parse(const char *text, enum fl_time_axis *axis, char *err, size_t errlen);

/* "wall" or "virtual". */
const char *fl_time_axis_name(enum fl_time_axis axis);

/* A one-line description of the axis for axis labels and report headers. */
const char *fl_time_axis_label(enum fl_time_axis axis);

struct fault_clock {
	const struct fl_recording *rec;
	enum fl_time_axis axis;
	int *task_clock;        /* per process: index of task-clock among its pmu events, -1: none */
};

/* Prepares the clock of REC on AXIS. Returns 0, or -1 (errno ENOMEM). */
int fault_clock_init(struct fault_clock *c, const struct fl_recording *rec, enum fl_time_axis axis);
void fault_clock_free(struct fault_clock *c);

/* The time of fault F of PROC (a process of the clock's recording) on the clock's axis: true with
 * *out set, or false when the fault has no time on it (virtual time unknown). */
bool fault_clock_time(const struct fault_clock *c, const struct fl_process *proc, const struct fl_fault *f,
		      uint64_t *out);

/* The fault's virtual time alone (as fault_clock_time on the virtual axis). */
bool fault_clock_virtual(const struct fault_clock *c, const struct fl_process *proc, const struct fl_fault *f,
			 uint64_t *out);

#endif
