/* fault_time.c: a fault's time on the wall or the virtual axis (fault_time.h). */
#include "fault_time.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	return axis == FL_TIME_VIRTUAL ? "virtual time: the faulting thread's CPU time (task-clock)"
				       : "wall time since the recording started";
}

int fault_clock_init(struct fault_clock *c, const struct fl_recording *rec, enum fl_time_axis axis)
{
	c->rec = rec;
	c->axis = axis;
	c->task_clock = malloc((rec->nprocs ? rec->nprocs : 1) * sizeof(*c->task_clock));
	if (!c->task_clock) {
		errno = ENOMEM;
		return -1;
	}
	for (size_t p = 0; p < rec->nprocs; p++) {
		char *const *names;
		size_t n;
		c->task_clock[p] = -1;
		if (stats_json_strings(&rec->procs[p].meta, "pmu_events", &names, &n) < 0)
			continue;
		for (size_t i = 0; i < n && i < FL_PMU_MAX; i++)
			if (strcmp(names[i], "task-clock") == 0) {
				c->task_clock[p] = (int)i;
				break;
			}
	}
	return 0;
}

void fault_clock_free(struct fault_clock *c)
{
	free(c->task_clock);
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
	return fault_clock_virtual(c, proc, f, out);
}
