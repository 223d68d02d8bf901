/* evictions.c: a process's evictions file (evictions.h): its records checked where they lie in the
 * mapped file, and put in time order for the verbs that list them, on the side files' reader
 * (side_file.c). */
#include "evictions.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "side_file.h"

#define KNOWN_FLAGS (FL_EVICT_DIRTY | FL_EVICT_INLINE)

const char *fl_evict_decision_name(unsigned decision)
{
	switch (decision) {
	case FL_EVICT_CLOCK_TRIAL: return "clock-trial";
	case FL_EVICT_CLOCK_SOFT: return "clock-soft";
	case FL_EVICT_SOFT_CAP: return "soft-cap";
	case FL_EVICT_FIFO: return "fifo";
	case FL_EVICT_CLOCK_DIRECT: return "clock-direct";
	default: return "?";
	}
}

/* Checks record I of the file (fl_side_record_check; ARG is the process). */
static int check_record(const struct fl_side_file *file, size_t i, const void *arg, char *err, size_t errlen)
{
	const struct fl_process *proc = arg;
	const struct fl_evict_record *r = (const struct fl_evict_record *)file->recs + i;
	uint64_t page = proc->page_size ? proc->page_size : 4096;
	if (r->decision < FL_EVICT_CLOCK_TRIAL || r->decision > FL_EVICT_DECISION_MAX)
		return fl_side_file_fail_at(file, i, offsetof(struct fl_evict_record, decision), err, errlen,
					    "decision %u is not one of enum fl_evict_decision", r->decision);
	if (r->flags & ~KNOWN_FLAGS)
		return fl_side_file_fail_at(file, i, offsetof(struct fl_evict_record, flags), err, errlen,
					    "unknown flag bits 0x%x", r->flags & ~KNOWN_FLAGS);
	if (r->addr < proc->region_start || r->addr - proc->region_start >= proc->region_size || r->addr % page)
		return fl_side_file_fail_at(file, i, offsetof(struct fl_evict_record, addr), err, errlen,
					    "address 0x%llx is not a page of the region", (unsigned long long)r->addr);
	return 0;
}

/* Records in time order; the writers' chunks interleave in the file (runtime/evict_log.c). */
struct ordered {
	struct fl_evict_record rec;
	size_t index;
};

static int by_time(const void *a, const void *b)
{
	const struct ordered *x = a, *y = b;
	if (x->rec.time_ns != y->rec.time_ns)
		return x->rec.time_ns < y->rec.time_ns ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int sort_by_time(struct fl_evictions *ev)
{
	size_t i = 1;
	while (i < ev->n && ev->recs[i - 1].time_ns <= ev->recs[i].time_ns)
		i++;
	if (i >= ev->n)
		return 0; /* already in order (one writer) */
	struct ordered *tmp = malloc(ev->n * sizeof(*tmp));
	ev->sorted = malloc(ev->n * sizeof(*ev->sorted));
	if (!tmp || !ev->sorted) {
		free(tmp);
		return -1;
	}
	for (i = 0; i < ev->n; i++)
		tmp[i] = (struct ordered){ ev->recs[i], i };
	qsort(tmp, ev->n, sizeof(*tmp), by_time);
	for (i = 0; i < ev->n; i++)
		ev->sorted[i] = tmp[i].rec;
	free(tmp);
	ev->recs = ev->sorted;
	fl_side_file_free(&ev->file); /* the mapping is no longer needed */
	return 0;
}

int fl_evictions_load(const struct fl_process *proc, enum fl_evictions_order order, struct fl_evictions *out,
		      char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (fl_side_file_read(proc, FL_FILE_NAME_EVICTIONS, FL_FILE_EVICTIONS, sizeof(struct fl_evict_record),
			      FL_SIDE_IN_PLACE, check_record, proc, &out->file, err, errlen) < 0)
		return -1;
	out->present = out->file.present;
	snprintf(out->warning, sizeof(out->warning), "%s", out->file.warning);
	out->recs = out->file.recs;
	out->n = out->file.n;
	if (order == FL_EVICTIONS_BY_TIME && sort_by_time(out) < 0) {
		snprintf(err, errlen, "%s: out of memory (sorting %zu records)", out->file.path, out->n);
		fl_evictions_free(out);
		return -1;
	}
	return 0;
}

void fl_evictions_free(struct fl_evictions *ev)
{
	free(ev->sorted);
	fl_side_file_free(&ev->file);
	memset(ev, 0, sizeof(*ev));
}
