/* fault_time.c: a fault's time on the wall or the virtual axis (fault_time.h). */
#include "fault_time.h"

#include "report_map.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <faultline/record_schema.h>

int fl_time_axis_parse(const char *text, enum fl_time_axis *axis, char *err, size_t errlen)
{
	if (strcmp(text, "wall") == 0)
		*axis = FL_TIME_WALL;
	else if (strcmp(text, "virtual") == 0)
		*axis = FL_TIME_VIRTUAL;
	else {
		snprintf(err, errlen, "expected wall or virtual, got '%.100s'", text);
		return -1;
	}
	return 0;
}

const char *fl_time_axis_name(enum fl_time_axis axis)
{
	return axis == FL_TIME_VIRTUAL ? "virtual" : "wall";
}

const char *fl_time_axis_label(enum fl_time_axis axis)
{
	return axis == FL_TIME_VIRTUAL ? "virtual time: the program's CPU time (task-clock of its threads)"
				       : "wall time since the recording started";
}

/* The process axis of PROC (index P): one pass over its faults in time order, keeping each
 * thread's latest CPU time and their sum. 0, or -1 (ENOMEM). */
static int process_axis(struct fault_clock *c, size_t p)
{
	const struct fl_process *proc = &c->rec->procs[p];
	struct report_map last = REPORT_MAP_INIT; /* tid -> the thread's latest CPU time */
	uint64_t sum = 0, *axis = malloc((proc->nfaults ? proc->nfaults : 1) * sizeof(*axis));
	bool known = false;

	if (!axis)
		return -1;
	for (size_t i = 0; i < proc->nfaults; i++) {
		const struct fl_fault *f = &proc->faults[i];
		uint64_t t, *slot;
		if (fault_clock_virtual(c, proc, f, &t)) {
			if (!(slot = report_map_add(&last, f->rec.tid, 0, NULL))) {
				free(axis);
				report_map_free(&last);
				return -1;
			}
			if (t > *slot) { /* a thread's time never decreases (contexts: at most equal) */
				sum += t - *slot;
				*slot = t;
			}
			known = true;
		}
		axis[i] = known ? sum : UINT64_MAX;
	}
	report_map_free(&last);
	c->process_ns[p] = axis;
	return 0;
}

int fault_clock_init(struct fault_clock *c, const struct fl_recording *rec, enum fl_time_axis axis)
{
	c->rec = rec;
	c->axis = axis;
	c->process_ns = NULL;
	c->task_clock = malloc((rec->nprocs ? rec->nprocs : 1) * sizeof(*c->task_clock));
	if (!c->task_clock) {
		errno = ENOMEM;
		return -1;
	}
	for (size_t p = 0; p < rec->nprocs; p++) {
		char *const *names;
		size_t n;
		c->task_clock[p] = -1;
		if (stats_json_strings(&rec->procs[p].meta, FL_META_PMU_EVENTS, &names, &n) < 0)
			continue;
		for (size_t i = 0; i < n && i < FL_PMU_MAX; i++)
			if (strcmp(names[i], "task-clock") == 0) {
				c->task_clock[p] = (int)i;
				break;
			}
	}
	if (axis == FL_TIME_WALL)
		return 0;
	c->process_ns = calloc(rec->nprocs ? rec->nprocs : 1, sizeof(*c->process_ns));
	for (size_t p = 0; c->process_ns && p < rec->nprocs; p++)
		if (process_axis(c, p) < 0) {
			fault_clock_free(c);
			errno = ENOMEM;
			return -1;
		}
	if (!c->process_ns) {
		fault_clock_free(c);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void fault_clock_free(struct fault_clock *c)
{
	for (size_t p = 0; c->process_ns && p < c->rec->nprocs; p++)
		free(c->process_ns[p]);
	free(c->process_ns);
	free(c->task_clock);
	c->process_ns = NULL;
	c->task_clock = NULL;
}

bool fault_clock_virtual(const struct fault_clock *c, const struct fl_process *proc, const struct fl_fault *f,
			 uint64_t *out)
{
	if (f->rec.thread_time_ns) {
		*out = f->rec.thread_time_ns;
		return true;
	}
	size_t p = (size_t)(proc - c->rec->procs);
	int k = p < c->rec->nprocs ? c->task_clock[p] : -1;
	const struct fl_fault_context *ctx = k >= 0 ? fl_fault_context(proc, f) : NULL;
	if (!ctx || ctx->npmu <= (uint32_t)k || ctx->pmu[k] == 0)
		return false;
	*out = ctx->pmu[k];
	return true;
}

bool fault_clock_time(const struct fault_clock *c, const struct fl_process *proc, const struct fl_fault *f,
		      uint64_t *out)
{
	if (c->axis == FL_TIME_WALL) {
		*out = fl_fault_time_ns(proc, f);
		return true;
	}
	uint64_t t = c->process_ns[proc - c->rec->procs][f - proc->faults];
	if (t == UINT64_MAX)
		return false;
	*out = t;
	return true;
}
