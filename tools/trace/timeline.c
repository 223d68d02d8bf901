/* timeline.c: a process's counter timeline (see timeline.h): its records checked and sorted, on
 * the side files' reader (side_file.c); its counters' names. */
#include "timeline.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "side_file.h"

static const struct {
	const char *name, *label;
} counters[FL_TL_COUNTERS] = {
	[FL_TL_TASK_CLOCK] = { "task_clock_ns", "task-clock (ns)" },
	[FL_TL_PAGE_FAULTS] = { "page_faults", "page-faults" },
	[FL_TL_CONTEXT_SWITCHES] = { "context_switches", "context-switches" },
	[FL_TL_INSTRUCTIONS] = { "instructions", "instructions" },
	[FL_TL_CYCLES] = { "cycles", "cycles" },
	[FL_TL_RESIDENT_PAGES] = { "resident_pages", "resident pages" },
	[FL_TL_SOFT_PAGES] = { "soft_pages", "soft pages" },
	[FL_TL_FAR_READ_BYTES] = { "far_read_bytes", "far reads (bytes)" },
	[FL_TL_FAR_WRITE_BYTES] = { "far_write_bytes", "far writes (bytes)" },
	[FL_TL_EVICTIONS] = { "evictions", "evictions" },
	[FL_TL_WRITEBACKS] = { "writebacks", "write-backs" },
	[FL_TL_FIRST_TOUCH] = { "first_touch", "first-touch faults" },
	[FL_TL_REFAULTS] = { "refaults", "refaults" },
	[FL_TL_SOFT_FAULTS] = { "soft_faults", "soft faults" },
	[FL_TL_CONCURRENT] = { "concurrent", "concurrent faults" },
};

const char *fl_timeline_counter_name(unsigned counter)
{
	return counter < FL_TL_COUNTERS ? counters[counter].name : "?";
}

const char *fl_timeline_counter_label(unsigned counter)
{
	return counter < FL_TL_COUNTERS ? counters[counter].label : "?";
}

bool fl_timeline_counter_is_gauge(unsigned counter)
{
	return counter == FL_TL_RESIDENT_PAGES || counter == FL_TL_SOFT_PAGES;
}

const char *fl_timeline_reason_name(unsigned reason)
{
	switch (reason) {
	case FL_TL_PERIODIC: return "periodic";
	case FL_TL_EVERY_N: return "every-n";
	case FL_TL_FINAL: return "final";
	default: return "?";
	}
}

static int by_time(const void *a, const void *b)
{
	const struct fl_timeline_record *x = a, *y = b;
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (int)x->reason - (int)y->reason;
}

/* Checks record I of the file (fl_side_record_check): its reason is one this reader knows. */
static int check_record(const struct fl_side_file *file, size_t i, const void *arg, char *err, size_t errlen)
{
	const struct fl_timeline_record *r = (const struct fl_timeline_record *)file->recs + i;
	(void)arg;
	if (r->reason < FL_TL_PERIODIC || r->reason > FL_TL_FINAL)
		return fl_side_file_fail_at(file, i, offsetof(struct fl_timeline_record, reason), err, errlen,
					    "timeline record with reason %u", r->reason);
	return 0;
}

int fl_timeline_read(const struct fl_process *proc, struct fl_timeline *out, char *err, size_t errlen)
{
	struct fl_side_file file;

	memset(out, 0, sizeof(*out));
	if (fl_side_file_read(proc, FL_FILE_NAME_TIMELINE, FL_FILE_TIMELINE, sizeof(struct fl_timeline_record),
			      FL_SIDE_COPY, check_record, NULL, &file, err, errlen) < 0)
		return -1;
	out->present = file.present;
	snprintf(out->warning, sizeof(out->warning), "%s", file.warning);
	struct fl_timeline_record *recs = file.copy; /* kept: ours to write and free */
	for (size_t i = 0; i < file.n; i++)
		recs[i].valid &= (uint16_t)((1u << FL_TL_COUNTERS) - 1); /* slots this reader does not know */
	out->recs = recs;
	out->nrecs = file.n;
	if (out->nrecs)
		qsort(out->recs, out->nrecs, sizeof(*out->recs), by_time);
	return 0;
}

void fl_timeline_free(struct fl_timeline *tl)
{
	free(tl->recs);
	tl->recs = NULL;
	tl->nrecs = 0;
}
