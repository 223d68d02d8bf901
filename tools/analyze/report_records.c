/* report_records.c: the fault service and eviction summary of `faultline report` (report.h,
 * struct report_records): percentiles of the selected faults' service times (message read to
 * wake-up), their latest virtual time, and the eviction events by policy decision, clean or dirty. */
#include "report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evictions.h"

static int compare_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* The value at quantile Q of N sorted values (nearest rank). */
static uint64_t quantile(const uint32_t *sorted, size_t n, double q)
{
	size_t rank = (size_t)(q * (double)n + 0.999999);
	return sorted[rank == 0 ? 0 : rank > n ? n - 1 : rank - 1];
}

static int service_times(struct report *r, char *err, size_t errlen)
{
	struct report_records *out = &r->records;
	size_t n = 0;
	uint32_t *values = malloc((r->selected ? r->selected : 1) * sizeof(*values));
	if (!values) {
		snprintf(err, errlen, "out of memory (service times of %llu faults)", (unsigned long long)r->selected);
		return -1;
	}
	for (size_t p = 0; p < r->rec->nprocs; p++) {
		const struct fl_process *proc = &r->rec->procs[p];
		for (size_t i = 0; i < proc->nfaults; i++) {
			const struct fl_fault *f = &proc->faults[i];
			uint64_t vt;
			if (r->row_of_fault[p][i] == FL_NONE)
				continue;
			if (f->rec.service_ns && n < r->selected)
				values[n++] = f->rec.service_ns;
			if (fault_clock_virtual(&r->clock, proc, f, &vt)) {
				out->virtual_n++;
				if (vt > out->virtual_max)
					out->virtual_max = vt;
			}
		}
	}
	out->service_n = n;
	if (n) {
		qsort(values, n, sizeof(*values), compare_u32);
		out->service_p50 = quantile(values, n, 0.50);
		out->service_p90 = quantile(values, n, 0.90);
		out->service_p99 = quantile(values, n, 0.99);
		out->service_max = values[n - 1];
	}
	free(values);
	return 0;
}

static int evictions(struct report *r, char *err, size_t errlen)
{
	struct report_records *out = &r->records;
	bool window = r->o->time_axis == FL_TIME_WALL; /* evictions have wall times only */
	for (size_t p = 0; p < r->rec->nprocs; p++) {
		const struct fl_process *proc = &r->rec->procs[p];
		struct fl_evictions ev;
		if (r->o->pid && proc->pid != r->o->pid)
			continue;
		if (fl_evictions_load(proc, FL_EVICTIONS_AS_WRITTEN, &ev, err, errlen) < 0) /* counted: any order */
			return -1;
		if (ev.warning[0])
			report_warn(&r->warnings, "%s", ev.warning);
		out->evictions_present |= ev.present;
		for (size_t i = 0; i < ev.n; i++) {
			const struct fl_evict_record *e = &ev.recs[i];
			uint64_t t = proc->offset_ns + e->time_ns;
			if (window && (t < r->o->from_ns || t >= r->o->to_ns))
				continue;
			out->evictions[e->decision][(e->flags & FL_EVICT_DIRTY) != 0]++;
			out->evictions_inline += (e->flags & FL_EVICT_INLINE) != 0;
		}
		fl_evictions_free(&ev);
	}
	return 0;
}

int report_records_build(struct report *r, char *err, size_t errlen)
{
	memset(&r->records, 0, sizeof(r->records));
	if (service_times(r, err, errlen) < 0)
		return -1;
	return evictions(r, err, errlen);
}
