/* fault_time.h: the two time axes of a recording's faults, for `--time wall|virtual`.
 *
 *   wall     nanoseconds since the recording started (its earliest process): the axis of
 *            fl_fault_time_ns. Under `record` it is dilated 5-50x by fault service.
 *   virtual  the program's own time: the CPU time (task-clock, ns) its threads had used at the
 *            fault, which does not advance while they sleep or wait for faults to be served. Each
 *            fault knows its own thread's CPU time (the thread's virtual time: the fault record's
 *            thread_time_ns, taken from the fault's perf sample, or, when the record has none, the
 *            fault's context when the process counted task-clock among its --pmu events). The
 *            process's axis at a fault is the sum over its threads of their CPU time as last seen
 *            at their faults up to that one (one pass in time order): monotonic, and equal to the
 *            thread's own time in a single-threaded program. Each process starts at 0.
 * A fault before any fault of its process with a thread time (a stack-less sample `-s N`, a
 * recording older than the field, no perf) has no virtual time: fault_clock_time then says false
 * and the verbs leave it out, and say how many. */
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
	uint64_t **process_ns;  /* virtual axis: per process, per fault, the process's CPU time at the
	                         * fault (UINT64_MAX: unknown); NULL on the wall axis */
};

/* Prepares the clock of REC on AXIS. Returns 0, or -1 (errno ENOMEM). */
int fault_clock_init(struct fault_clock *c, const struct fl_recording *rec, enum fl_time_axis axis);
void fault_clock_free(struct fault_clock *c);

/* The time of fault F of PROC (a process of the clock's recording) on the clock's axis: true with
 * *out set, or false when the fault has no time on it (virtual time unknown). */
bool fault_clock_time(const struct fault_clock *c, const struct fl_process *proc, const struct fl_fault *f,
		      uint64_t *out);

/* The faulting thread's own CPU time at the fault (the thread's virtual time), on either axis. */
bool fault_clock_virtual(const struct fault_clock *c, const struct fl_process *proc, const struct fl_fault *f,
			 uint64_t *out);

#endif
