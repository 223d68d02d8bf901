/* mrc_output.c: `faultline mrc` output — the predicted refaults per local-memory size.
 *   table: a header (sampling, processes, peak) and one line per size;
 *   csv:   local_bytes,predicted_refaults,lower,upper (one row per size, integers);
 *   json:  {"recording", "sampling_rate", "peak_bytes", "processes": [...], "rows": [...]}. */
#include "mrc_output.h"

#include <inttypes.h>
#include <math.h>

#include "text_out.h"

/* The whole recording's sampling rate: its sampled pages over the pages they stand for (each
 * process's rate is what its hash drew, analyze/mrc.c). */
static double rate_of(const struct mrc_model *m)
{
	double sampled = 0, stood_for = 0;
	for (size_t i = 0; i < m->nprocs; i++)
		if (m->procs[i].rate > 0)
			sampled += (double)m->procs[i].sampled_pages, stood_for += m->procs[i].sampled_pages / m->procs[i].rate;
	return stood_for > 0 ? sampled / stood_for : 0;
}

/* A row's size: whole MiB (or GiB) without decimals, any other with two, so that the peak's
 * eighth (7.96 MiB) and the power of two next to it (8 MiB) never share a label. */
static void print_size(uint64_t bytes, FILE *out)
{
	if (bytes >= (1ull << 30) && bytes % (1ull << 20) == 0)
		fprintf(out, bytes % (1ull << 30) ? "%10.2f GiB" : "%10.0f GiB", (double)bytes / (1ull << 30));
	else
		fprintf(out, bytes % (1ull << 20) ? "%10.2f MiB" : "%10.0f MiB", (double)bytes / (1ull << 20));
}

/* Fewer sampled pages than this: say that small sizes are rough (sqlite3's 56 pages at 1/8 of its
 * peak predicted 16-31 % low; 224 pages were within 5.4 %). */
#define MRC_FEW_PAGES 200

static void print_table(const struct mrc_model *m, enum mrc_policy policy, const struct mrc_row *rows, size_t nrows,
			const char *dir, FILE *out)
{
	uint64_t reuses = 0, pages = 0;
	for (size_t i = 0; i < m->nprocs; i++)
		reuses += m->procs[i].nreuses, pages += m->procs[i].sampled_pages;
	fprintf(out, "# faultline mrc of %s\n", dir);
	fprintf(out, "# sampling:  1 page in %.0f (rate %.5f; SHARDS, by page-number hash), %" PRIu64
		" sampled pages, %" PRIu64 " sampled reuses\n", rate_of(m) > 0 ? 1 / rate_of(m) : 0, rate_of(m), pages, reuses);
	fprintf(out, "# processes: %zu with --mrc data", m->nprocs);
	if (m->skipped)
		fprintf(out, " (%zu without, left out)", m->skipped);
	fprintf(out, "; peak local memory %.1f MiB\n", (double)m->peak_bytes / (1 << 20));
	double blind = 0; /* reuses nearer than this are not seen (runtime/probe.c) */
	for (size_t i = 0; i < m->nprocs; i++)
		blind = fmax(blind, m->procs[i].blind_pages * 4096.0);
	if (blind > 0)
		fprintf(out, "# reuses nearer than %.2f MiB (record --mrc-gap, or 1 / rate pages) are not seen: below that\n"
			     "# size the prediction is too low\n", blind / (1 << 20));
	uint64_t run_limit = 0; /* a --mrc run whose -L capped the sample at 1/16 of it (probe.c: when that
				 * is below the cap without -L; it took max(64, L / 16) pages then) */
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct mrc_process *mp = &m->procs[i];
		uint64_t by_limit = mp->local_limit_bytes / 4096 / 16;
		if (mp->local_limit_bytes && mp->max_pages == (by_limit < 64 ? 64 : by_limit) &&
		    (!run_limit || mp->local_limit_bytes < run_limit))
			run_limit = mp->local_limit_bytes;
	}
	if (run_limit)
		fprintf(out, "# recorded with -L %.1f MiB: the sample was capped at 1/16 of it, so it is sparse; record\n"
			     "# --mrc without -L for a denser sample\n", (double)run_limit / (1 << 20));
	uint64_t budget = 0, cuts = 0; /* the cost budget (runtime/probe.c) lowered the rate */
	for (size_t i = 0; i < m->nprocs; i++)
		if (m->procs[i].budget_cuts)
			budget = m->procs[i].budget, cuts += m->procs[i].budget_cuts;
	if (cuts)
		fprintf(out, "# the cost budget (record --mrc-budget %" PRIu64 ": trial unmaps per second of the program's CPU\n"
			     "# time) lowered the rate %" PRIu64 " times; --mrc-budget 0 keeps the rate, at the cost of\n"
			     "# every sampled reuse\n", budget, cuts);
	if (pages < MRC_FEW_PAGES)
		fprintf(out, "# only %" PRIu64 " sampled pages: at the smallest sizes a miniature cache holds a handful of them,\n"
			     "# and the prediction there can be off by tens of per cent\n", pages);
	if (policy == MRC_POLICY_LRU)
		fprintf(out, "# predicted refaults for each -L under LRU replacement (from the reuse distances),\n");
	else
		fprintf(out, "# predicted refaults for each -L under the runtime's %s policy (a miniature simulation\n"
			     "# over the sampled pages),\n", mrc_policy_name(policy));
	fprintf(out, "# band of about 95 %% from the sampling error\n");
	fprintf(out, "#\n#      local  predicted_refaults       lower       upper\n");
	for (size_t i = 0; i < nrows; i++) {
		print_size(rows[i].local_bytes, out);
		fprintf(out, "  %18.0f  %10.0f  %10.0f\n", round(rows[i].predicted), round(rows[i].lower), round(rows[i].upper));
	}
}

static void print_csv(const struct mrc_row *rows, size_t nrows, FILE *out)
{
	fprintf(out, "local_bytes,predicted_refaults,lower,upper\n");
	for (size_t i = 0; i < nrows; i++)
		fprintf(out, "%" PRIu64 ",%.0f,%.0f,%.0f\n", rows[i].local_bytes, round(rows[i].predicted),
			round(rows[i].lower), round(rows[i].upper));
}

static void print_json(const struct mrc_model *m, enum mrc_policy policy, const struct mrc_row *rows, size_t nrows,
		       const char *dir, FILE *out)
{
	fprintf(out, "{\"recording\": ");
	json_out_string(dir, out);
	fprintf(out, ", \"policy\": \"%s\"", mrc_policy_name(policy));
	fprintf(out, ", \"sampling_rate\": %.8f, \"peak_bytes\": %" PRIu64 ", \"processes\": [", rate_of(m), m->peak_bytes);
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct mrc_process *p = &m->procs[i];
		fprintf(out, "%s{\"pid\": %u, \"sampling_rate\": %.8f, \"peak_bytes\": %" PRIu64 ", \"sampled_pages\": %" PRIu64
			", \"sampled_accesses\": %" PRIu64 ", \"sampled_reuses\": %zu, \"budget\": %" PRIu64
			", \"budget_cuts\": %" PRIu64 "}", i ? ", " : "", p->pid, p->rate, p->peak_bytes, p->sampled_pages,
			p->accesses, p->nreuses, p->budget, p->budget_cuts);
	}
	fprintf(out, "], \"rows\": [");
	for (size_t i = 0; i < nrows; i++)
		fprintf(out, "%s\n  {\"local_bytes\": %" PRIu64 ", \"predicted_refaults\": %.0f, \"lower\": %.0f, \"upper\": %.0f}",
			i ? "," : "", rows[i].local_bytes, round(rows[i].predicted), round(rows[i].lower), round(rows[i].upper));
	fprintf(out, "\n]}\n");
}

int mrc_print(const struct mrc_model *m, enum mrc_policy policy, const struct mrc_row *rows, size_t nrows,
	      const char *dir, enum mrc_format format, FILE *out)
{
	switch (format) {
	case MRC_TABLE: print_table(m, policy, rows, nrows, dir, out); break;
	case MRC_CSV: print_csv(rows, nrows, out); break;
	case MRC_JSON: print_json(m, policy, rows, nrows, dir, out); break;
	}
	return fflush(out) == 0 && !ferror(out) ? 0 : -1;
}
