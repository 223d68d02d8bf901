/* report_records.c: the fault service and eviction summary of `faultline report` (report.h,
 * struct report_records): percentiles of the selected faults' service times (message read to
 * wake-up) and waits (fault to message read), their latest virtual time, and the eviction events
 * by policy decision, clean or dirty. */
#include "report.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evictions.h"
#include "record_stream.h"

/* The rank (0-based) of quantile Q among N sorted values (nearest rank). */
static size_t quantile_rank(size_t n, double q)
{
	size_t rank = (size_t)(q * (double)n + 0.999999);
	return rank == 0 ? 0 : rank > n ? n - 1 : rank - 1;
}

#define NQUANTILES 3
static const double quantiles[NQUANTILES] = { 0.50, 0.90, 0.99 }; /* p50, p90, p99 */
#define BUCKETS 65536

/* The values of ranks K[0..NQUANTILES) (0-based, of N) among the N VALUES as if they were sorted,
 * without sorting them: a radix select. The high 16 bits are counted in one pass; the low 16 bits
 * of the values in the high buckets holding the wanted ranks in a second. -1 on ENOMEM. */
static int select_ranks(const uint32_t *values, size_t n, const size_t *k, uint64_t *out)
{
	size_t *high = calloc((NQUANTILES + 1) * BUCKETS, sizeof(*high)), *low;
	uint32_t bucket[NQUANTILES];
	size_t rest[NQUANTILES];

	if (!high)
		return -1;
	low = high + BUCKETS; /* NQUANTILES tables of the low bits */
	for (size_t i = 0; i < n; i++)
		high[values[i] >> 16]++;
	for (size_t q = 0; q < NQUANTILES; q++) {
		bucket[q] = 0;
		rest[q] = k[q];
		while (rest[q] >= high[bucket[q]])
			rest[q] -= high[bucket[q]++];
	}
	for (size_t i = 0; i < n; i++)
		for (size_t q = 0; q < NQUANTILES; q++)
			if (values[i] >> 16 == bucket[q])
				low[q * BUCKETS + (values[i] & 0xffff)]++;
	for (size_t q = 0; q < NQUANTILES; q++) {
		uint32_t v = 0;
		while (rest[q] >= low[q * BUCKETS + v])
			rest[q] -= low[q * BUCKETS + v++];
		out[q] = (uint64_t)bucket[q] << 16 | v;
	}
	free(high);
	return 0;
}

/* The percentiles and maximum of the N times at VALUES into out. -1 on ENOMEM. */
static int latency_summary(struct latency_summary *out, const uint32_t *values, size_t n)
{
	out->n = n;
	if (n == 0)
		return 0;
	size_t ranks[NQUANTILES];
	for (size_t q = 0; q < NQUANTILES; q++)
		ranks[q] = quantile_rank(n, quantiles[q]);
	uint64_t at[NQUANTILES];
	if (select_ranks(values, n, ranks, at) < 0)
		return -1;
	out->p50 = at[0];
	out->p90 = at[1];
	out->p99 = at[2];
	for (size_t i = 0; i < n; i++)
		if (values[i] > out->max)
			out->max = values[i];
	return 0;
}

/* Streamed: the percentiles from pass 1's counts of the high 16 bits (r->latency_high) and one
 * more walk over the faults counting the low 16 bits of the selected ones in the percentiles'
 * buckets — select_ranks' two passes, the first done while aggregating. 0, or -1 (err). */
static int streamed_latencies(struct report *r, char *err, size_t errlen)
{
	uint32_t bucket[REPORT_LATENCIES][NQUANTILES];
	uint64_t rest[REPORT_LATENCIES][NQUANTILES];
	struct fl_fault_iter it;
	const struct fl_process *proc;
	const struct fl_fault *f;
	bool any = false;

	for (int l = 0; l < REPORT_LATENCIES; l++) {
		struct latency_summary *out = &r->records.latency[l];
		uint64_t n = r->latency_count[l];
		out->n = n;
		out->max = r->latency_max[l];
		any |= n > 0;
		for (size_t q = 0; q < NQUANTILES; q++) {
			bucket[l][q] = 0;
			rest[l][q] = n ? quantile_rank(n, quantiles[q]) : 0;
			while (n && rest[l][q] >= r->latency_high[l][bucket[l][q]])
				rest[l][q] -= r->latency_high[l][bucket[l][q]++];
		}
	}
	if (!any)
		return 0;
	uint64_t *low = calloc((size_t)REPORT_LATENCIES * NQUANTILES * BUCKETS, sizeof(*low));
	if (!low) {
		snprintf(err, errlen, "out of memory (service and wait time percentiles)");
		return -1;
	}
	if (fl_fault_iter_init(&it, r->rec, r->o->pid) < 0) {
		snprintf(r->stream_error, sizeof(r->stream_error), "%s", it.error);
		snprintf(err, errlen, "%s", it.error);
		free(low);
		return -1;
	}
	report_progress_phase(&r->progress, "service and wait time percentiles", r->rec->nfaults);
	uint64_t seen = 0;
	while ((f = fl_fault_iter_next(&it, &proc)) != NULL) {
		if (++seen % 65536 == 0)
			report_progress_set(&r->progress, seen);
		bool kept = false, tested = false;
		for (int l = 0; l < REPORT_LATENCIES; l++) {
			uint32_t v = report_latency_of(f, l);
			const uint32_t *b = bucket[l];
			if (!v || (v >> 16 != b[0] && v >> 16 != b[1] && v >> 16 != b[2]))
				continue;
			if (!tested)
				kept = report_kept(r, proc, f), tested = true;
			if (!kept)
				break;
			for (size_t q = 0; q < NQUANTILES; q++)
				if (v >> 16 == b[q])
					low[((size_t)l * NQUANTILES + q) * BUCKETS + (v & 0xffff)]++;
		}
	}
	int rc = 0;
	if (it.error[0]) {
		snprintf(r->stream_error, sizeof(r->stream_error), "%s", it.error);
		snprintf(err, errlen, "%s", it.error);
		rc = -1;
	}
	fl_fault_iter_free(&it);
	for (int l = 0; l < REPORT_LATENCIES; l++) {
		uint64_t at[NQUANTILES];
		for (size_t q = 0; q < NQUANTILES; q++) {
			const uint64_t *counts = low + ((size_t)l * NQUANTILES + q) * BUCKETS;
			uint32_t v = 0;
			while (v < BUCKETS && rest[l][q] >= counts[v])
				rest[l][q] -= counts[v++];
			at[q] = (uint64_t)bucket[l][q] << 16 | v;
		}
		if (r->latency_count[l]) {
			r->records.latency[l].p50 = at[0];
			r->records.latency[l].p90 = at[1];
			r->records.latency[l].p99 = at[2];
		}
	}
	free(low);
	return rc;
}

static int latencies(struct report *r, char *err, size_t errlen)
{
	struct report_records *out = &r->records;
	if (r->streamed) { /* the first pass gathered the virtual times and the times' high bits */
		out->virtual_n = r->virtual_n;
		out->virtual_max = r->virtual_max;
		return streamed_latencies(r, err, errlen);
	}
	size_t cap = r->selected ? r->selected : 1, n[REPORT_LATENCIES] = { 0 };
	uint32_t *values = malloc(cap * REPORT_LATENCIES * sizeof(*values));
	if (!values) {
		snprintf(err, errlen, "out of memory (service and wait times of %llu faults)", (unsigned long long)r->selected);
		return -1;
	}
	for (size_t p = 0; p < r->rec->nprocs; p++) {
		const struct fl_process *proc = &r->rec->procs[p];
		for (size_t i = 0; i < proc->nfaults; i++) {
			const struct fl_fault *f = &proc->faults[i];
			uint64_t vt;
			if (r->row_of_fault[p][i] == FL_NONE)
				continue;
			for (int l = 0; l < REPORT_LATENCIES; l++) {
				uint32_t v = report_latency_of(f, l);
				if (v && n[l] < cap)
					values[(size_t)l * cap + n[l]++] = v;
			}
			if (fault_clock_virtual(&r->clock, proc, f, &vt)) {
				out->virtual_n++;
				if (vt > out->virtual_max)
					out->virtual_max = vt;
			}
		}
	}
	int rc = 0;
	for (int l = 0; l < REPORT_LATENCIES && rc == 0; l++)
		rc = latency_summary(&out->latency[l], values + (size_t)l * cap, n[l]);
	free(values);
	if (rc < 0)
		snprintf(err, errlen, "out of memory (service and wait time percentiles)");
	return rc;
}

/* Counts PROC's eviction events into out as they are read, without holding them (a streamed
 * recording). 1 when counted; 0 when the file has anything the holding reader words (a bad
 * record, a cut): then nothing was counted. */
static int count_evictions_streamed(struct report *r, const struct fl_process *proc, bool window)
{
	struct fl_record_stream rs;
	struct fl_evict_record e;
	char path[PATH_MAX + 64], err[256];
	uint64_t counts[FL_EVICT_DECISION_MAX + 1][2], inlined = 0, page = proc->page_size ? proc->page_size : 4096;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", proc->dir, FL_FILE_NAME_EVICTIONS);
	rc = fl_record_stream_open(&rs, path, FL_FILE_EVICTIONS, err, sizeof(err));
	if (rc <= 0)
		return rc == 0 ? 1 : 0; /* absent: nothing to count */
	memset(counts, 0, sizeof(counts));
	while ((rc = fl_record_stream_next(&rs, &e)) > 0) {
		uint64_t t = proc->offset_ns + e.time_ns;
		if (e.decision < FL_EVICT_CLOCK_TRIAL || e.decision > FL_EVICT_DECISION_MAX ||
		    (e.flags & ~(FL_EVICT_DIRTY | FL_EVICT_INLINE)) || e.addr < proc->region_start ||
		    e.addr - proc->region_start >= proc->region_size || e.addr % page) {
			rc = -1;
			break;
		}
		if (window && (t < r->o->from_ns || t >= r->o->to_ns))
			continue;
		counts[e.decision][(e.flags & FL_EVICT_DIRTY) != 0]++;
		inlined += (e.flags & FL_EVICT_INLINE) != 0;
	}
	fl_record_stream_close(&rs);
	if (rc < 0)
		return 0;
	for (size_t d = 0; d <= FL_EVICT_DECISION_MAX; d++)
		for (size_t k = 0; k < 2; k++)
			r->records.evictions[d][k] += counts[d][k];
	r->records.evictions_inline += inlined;
	r->records.evictions_present = true;
	return 1;
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
		if (r->streamed && count_evictions_streamed(r, proc, window))
			continue;
		if (fl_evictions_load(proc, FL_EVICTIONS_AS_WRITTEN, &ev, err, errlen) < 0) { /* counted: any order */
			/* an optional file: the report goes on without it, as the other verbs do */
			report_warn(&r->warnings, "%s; the evictions line leaves this process out", err);
			continue;
		}
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
	if (latencies(r, err, errlen) < 0)
		return -1;
	return evictions(r, err, errlen);
}
