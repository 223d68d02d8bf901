/* record_summary.c: the screen `faultline record` prints on stderr after the run, from every
 * DIR/<pid>/stats.json. */
#include "record_options.h"
#include "record_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <faultline/record_schema.h>

#include "cli.h"
#include "far_spec.h"
#include "faultline/env.h"
#include "faultline/pmu_events.h"
#include "faultline/trace.h"
#include "stats_json.h"

/* ---------------------------------------------------------------------------------------
 * 6. Summary from DIR/<pid>/stats.json
 * ------------------------------------------------------------------------------------- */

/* Totals over every traced process. */
struct record_totals {
	unsigned processes;      /* DIR/<pid>/ directories */
	unsigned with_stats;     /* ... of which had a readable stats.json */
	unsigned running;        /* ... of which are still running (outlived the command: no stats.json yet) */
	uint64_t faults, first_touch, refault, soft, concurrent;
	uint64_t evictions, writebacks;
	uint64_t peak_resident, peak_heap;   /* max over processes */
	uint64_t written, dropped;
	uint64_t contexts, late_stacks, sampled_stacks, side_dropped, alloc_events;
	uint64_t access_samples; /* record --mrc / --sample-accesses: records with stacks, not faults */
	char pmu[160];           /* PMU events of the first process, as its meta.json says */
	uint64_t far_reads, far_read_pages, far_writes, far_write_pages, far_delay_ns;
	uint64_t prefetched, prefetch_hits, prefetch_unused;
	uint64_t filled_ahead, filled_unused;
	char far[512];           /* the far store of the first process (meta.json) */
};

/* The stats.json counters the summary adds up, and where each goes. */
#define STATS_SUM(key, field) { key, offsetof(struct record_totals, field), 0 }
#define STATS_MAX(key, field) { key, offsetof(struct record_totals, field), 1 }
static const struct stats_counter {
	const char *key;
	size_t offset;
	int take_max;
} stats_counters[] = {
	STATS_SUM(FL_STATS_FAULTS_TOTAL, faults),
	STATS_SUM(FL_STATS_FAULTS_FIRST_TOUCH, first_touch),
	STATS_SUM(FL_STATS_FAULTS_REFAULT, refault),
	STATS_SUM(FL_STATS_FAULTS_SOFT, soft),
	STATS_SUM(FL_STATS_FAULTS_CONCURRENT, concurrent),
	STATS_SUM(FL_STATS_ACCESS_SAMPLES, access_samples),
	STATS_SUM(FL_STATS_EVICTIONS, evictions),
	STATS_SUM(FL_STATS_WRITEBACKS, writebacks),
	STATS_MAX(FL_STATS_PEAK_RESIDENT, peak_resident),
	STATS_MAX(FL_STATS_PEAK_HEAP, peak_heap),
	STATS_SUM(FL_STATS_RECORDS_WRITTEN, written),
	STATS_SUM(FL_STATS_RECORDS_DROPPED, dropped),
	STATS_SUM(FL_STATS_CONTEXTS_WRITTEN, contexts),
	STATS_SUM(FL_STATS_LATE_STACKS_DROPPED, late_stacks),
	STATS_SUM(FL_STATS_STACKS_FROM_SAMPLES, sampled_stacks),
	STATS_SUM(FL_STATS_SIDE_BYTES_DROPPED, side_dropped),
	STATS_SUM(FL_STATS_ALLOC_EVENTS, alloc_events),
	STATS_SUM(FL_STATS_FAR_READS, far_reads),
	STATS_SUM(FL_STATS_FAR_READ_PAGES, far_read_pages),
	STATS_SUM(FL_STATS_FAR_WRITES, far_writes),
	STATS_SUM(FL_STATS_FAR_WRITE_PAGES, far_write_pages),
	STATS_SUM(FL_STATS_FAR_DELAY_NS, far_delay_ns),
	STATS_SUM(FL_STATS_PREFETCHED_PAGES, prefetched),
	STATS_SUM(FL_STATS_FILLED_AHEAD_PAGES, filled_ahead),
	STATS_SUM(FL_STATS_FILLED_AHEAD_UNUSED, filled_unused),
	STATS_SUM(FL_STATS_PREFETCH_HITS, prefetch_hits),
	STATS_SUM(FL_STATS_PREFETCH_UNUSED, prefetch_unused),
};

/* Says why a process dropped records, when its runtime said so. */
static void report_dropped_reason(const struct flat_json *stats, const char *pid)
{
	const char *reason = stats_json_string(stats, FL_STATS_RECORDS_DROPPED_REASON);
	uint64_t dropped;

	if (stats_json_uint(stats, FL_STATS_RECORDS_DROPPED, &dropped) == 0 && dropped > 0 && reason != NULL &&
	    *reason != '\0')
		cli_error("pid %s dropped records: %s", pid, reason);
}

/* Which PMU events the runtime used, from meta.json: said once per recording. */
static void describe_pmu(struct record_totals *t, const char *dir, const char *pid)
{
	char path[PATH_MAX], err[PATH_MAX + 256];
	struct flat_json meta;
	const char *kind;
	char *const *events = NULL;
	size_t n = 0, used = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s/%s", dir, pid, FL_FILE_NAME_META) >= sizeof(path) ||
	    stats_json_load(path, &meta, err, sizeof(err)) < 0)
		return;
	kind = stats_json_string(&meta, FL_META_PMU_KIND);
	stats_json_strings(&meta, FL_META_PMU_EVENTS, &events, &n);
	if (kind != NULL && strcmp(kind, "software") == 0)
		used = (size_t)snprintf(t->pmu, sizeof(t->pmu), "software events (no hardware counters here): ");
	else if (kind != NULL && strcmp(kind, "hardware") == 0)
		used = (size_t)snprintf(t->pmu, sizeof(t->pmu), "hardware events: ");
	else
		snprintf(t->pmu, sizeof(t->pmu), "none");
	for (size_t i = 0; i < n && used < sizeof(t->pmu); i++)
		used += (size_t)snprintf(t->pmu + used, sizeof(t->pmu) - used, "%s%s", i ? "," : "", events[i]);
	far_spec_describe(&meta, t->far, sizeof(t->far));
	stats_json_free(&meta);
}

/* Adds one process's stats.json into totals; complains about what it cannot read. */
static void totals_add_process(struct record_totals *t, const char *dir, const char *pid, bool quiet)
{
	char path[PATH_MAX], err[PATH_MAX + 256], missing[512] = "";
	struct flat_json stats;

	t->processes++;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s/%s", dir, pid, FL_FILE_NAME_STATS) >= sizeof(path)) {
		cli_error("path too long: %s/%s/%s", dir, pid, FL_FILE_NAME_STATS);
		return;
	}
	if (access(path, F_OK) < 0 && errno == ENOENT) {
		if (process_dir_running(pid)) {
			t->running++;
			if (!quiet)
				cli_error("pid %s is still running (it outlived the command): its stats.json and the rest "
					  "of its trace are written when it exits", pid);
		} else if (!quiet) {
			cli_error("no stats for pid %s (process killed?)", pid);
		}
		return;
	}
	if (stats_json_load(path, &stats, err, sizeof(err)) < 0) {
		cli_error("%s", err);
		return;
	}
	t->with_stats++;
	for (size_t i = 0; i < sizeof(stats_counters) / sizeof(stats_counters[0]); i++) {
		const struct stats_counter *c = &stats_counters[i];
		uint64_t value, *field = (uint64_t *)((char *)t + c->offset);

		if (stats_json_uint(&stats, c->key, &value) < 0) {
			size_t used = strlen(missing);
			snprintf(missing + used, sizeof(missing) - used, "%s%s", used ? ", " : "", c->key);
			continue;
		}
		if (!c->take_max)
			*field += value;
		else if (value > *field)
			*field = value;
	}
	if (missing[0] != '\0')
		cli_error("%s: no counter (non-negative integer) for %s", path, missing);
	report_dropped_reason(&stats, pid);
	stats_json_free(&stats);
	if (t->pmu[0] == '\0')
		describe_pmu(t, dir, pid);
}

static int compare_pids(const void *a, const void *b)
{
	unsigned long x = strtoul(*(char *const *)a, NULL, 10), y = strtoul(*(char *const *)b, NULL, 10);

	return x < y ? -1 : x > y;
}

/* Reads every DIR/<pid>/stats.json, in pid order. */
static void totals_collect(struct record_totals *t, const char *dir, bool quiet)
{
	DIR *d = opendir(dir);
	struct dirent *entry;
	char **pids = NULL;
	size_t count = 0, cap = 0;

	memset(t, 0, sizeof(*t));
	if (d == NULL) {
		cli_error("cannot read %s: %s", dir, strerror(errno));
		return;
	}
	while ((entry = readdir(d)) != NULL) {
		struct stat st;

		if (!is_process_dir_name(entry->d_name) ||
		    fstatat(dirfd(d), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
			continue;
		if (count == cap) {
			char **grown = realloc(pids, (cap = cap ? cap * 2 : 16) * sizeof(*pids));
			if (grown == NULL)
				break;
			pids = grown;
		}
		pids[count] = strdup(entry->d_name);
		if (pids[count] != NULL)
			count++;
	}
	closedir(d);
	if (count > 1)
		qsort(pids, count, sizeof(*pids), compare_pids);
	for (size_t i = 0; i < count; i++) {
		totals_add_process(t, dir, pids[i], quiet);
		free(pids[i]);
	}
	free(pids);
}

static void describe_exit(const struct record_options *o, const struct record_run *run)
{
	int status = run->status;

	if (WIFSIGNALED(status))
		cli_error("'%s' was killed by signal %d (%s) after %.2f s", o->command[0], WTERMSIG(status),
			  strsignal(WTERMSIG(status)), run->seconds);
	else if (WEXITSTATUS(status) == FL_EXIT_RUNTIME_FAILURE)
		cli_error("'%s' exited with status %d after %.2f s (the status the faultline runtime uses "
			  "when it must stop a program: see its message above)", o->command[0],
			  FL_EXIT_RUNTIME_FAILURE, run->seconds);
	else
		cli_error("'%s' exited with status %d after %.2f s", o->command[0], WEXITSTATUS(status),
			  run->seconds);
}

static void print_totals(const struct record_totals *t, const struct record_options *o)
{
	char a[32], b[32], c[32], d[32], e[32];

	fprintf(stderr, "  processes traced  %u\n", t->processes);
	fprintf(stderr, "  faults            %s (first-touch %s, refault %s, soft %s, concurrent %s)\n",
		cli_format_count(t->faults, a, sizeof(a)), cli_format_count(t->first_touch, b, sizeof(b)),
		cli_format_count(t->refault, c, sizeof(c)), cli_format_count(t->soft, d, sizeof(d)),
		cli_format_count(t->concurrent, e, sizeof(e)));
	fprintf(stderr, "  evictions         %s (writebacks %s)\n",
		cli_format_count(t->evictions, a, sizeof(a)), cli_format_count(t->writebacks, b, sizeof(b)));
	if (o->local_bytes == 0)
		fprintf(stderr, "  peak resident     %s (local memory unlimited)\n",
			cli_format_size(t->peak_resident, a, sizeof(a)));
	else
		fprintf(stderr, "  peak resident     %s of %s local (-L)\n",
			cli_format_size(t->peak_resident, a, sizeof(a)),
			cli_format_size(o->local_bytes, b, sizeof(b)));
	fprintf(stderr, "  peak heap         %s of %s region (-M)\n",
		cli_format_size(t->peak_heap, a, sizeof(a)), cli_format_size(o->max_bytes, b, sizeof(b)));
	fprintf(stderr, "  records           %s written, %s dropped\n",
		cli_format_count(t->written, a, sizeof(a)), cli_format_count(t->dropped, b, sizeof(b)));
	/* a context whose stack was dropped (taken too late) holds no stack */
	uint64_t stacks = t->contexts >= t->late_stacks ? t->contexts - t->late_stacks : 0;
	char whose[160]; /* access samples (--mrc-stacks, --sample-accesses) have stacks too, and are not faults */
	if (t->access_samples && o->mrc && !o->mrc_stacks && !o->sample_accesses)
		snprintf(whose, sizeof(whose), "for %s faults (the %s access samples of --mrc go without: --mrc-stacks)",
			 cli_format_count(t->faults, b, sizeof(b)), cli_format_count(t->access_samples, e, sizeof(e)));
	else if (t->access_samples)
		snprintf(whose, sizeof(whose), "for %s faults and %s access samples", cli_format_count(t->faults, b, sizeof(b)),
			 cli_format_count(t->access_samples, e, sizeof(e)));
	else
		snprintf(whose, sizeof(whose), "of %s faults", cli_format_count(t->faults, b, sizeof(b)));
	fprintf(stderr, "  stacks            %s %s (%s from perf samples); %s allocation events\n",
		cli_format_count(stacks, a, sizeof(a)), whose, cli_format_count(t->sampled_stacks, d, sizeof(d)),
		cli_format_count(t->alloc_events, c, sizeof(c)));
	if (t->pmu[0])
		fprintf(stderr, "  PMU context       %s\n", t->pmu);
	if (t->far[0])
		fprintf(stderr, "  far store         %s\n"
			"                    read %s pages in %s requests, wrote %s pages in %s batches; "
			"emulated delay %.1f ms\n",
			t->far, cli_format_count(t->far_read_pages, a, sizeof(a)), cli_format_count(t->far_reads, b, sizeof(b)),
			cli_format_count(t->far_write_pages, c, sizeof(c)), cli_format_count(t->far_writes, d, sizeof(d)),
			t->far_delay_ns / 1e6);
	if (t->prefetched || o->prefetch)
		fprintf(stderr, "  read-ahead        %s pages staged: %s hits, %s never used\n",
			cli_format_count(t->prefetched, a, sizeof(a)), cli_format_count(t->prefetch_hits, b, sizeof(b)),
			cli_format_count(t->prefetch_unused, c, sizeof(c)));
	if (t->filled_ahead || o->fill_ahead)
		fprintf(stderr, "  fill-ahead        %s fresh pages zero-filled without a fault (no record, no stack); "
			"%s of them evicted before the program reached them (their first touch then faulted)\n",
			cli_format_count(t->filled_ahead, a, sizeof(a)), cli_format_count(t->filled_unused, b, sizeof(b)));
	if (t->side_dropped)
		cli_error("%s bytes of stacks, contexts or allocation records were lost (see records_dropped_reason "
			  "in stats.json)", cli_format_count(t->side_dropped, a, sizeof(a)));
}

/* The totals, after saying whether the trace is complete. */
static void print_totals_checked(const struct record_totals *t, const struct record_options *o,
				 const char *dir_shown)
{
	if (t->processes == 0) {
		cli_error("no process wrote a trace into %s: the trace is incomplete (did the runtime "
			  "start? see messages above)", dir_shown);
		return;
	}
	if (t->with_stats == 0) {
		if (t->running)
			cli_error("%u of the %u traced processes still running, the others without a readable "
				  "stats.json: no totals yet", t->running, t->processes);
		else
			cli_error("none of the %u traced processes left a readable stats.json: the trace is "
				  "incomplete", t->processes);
		return;
	}
	if (t->with_stats + t->running < t->processes)
		cli_error("%u of %u processes left no readable stats.json: the trace is incomplete",
			  t->processes - t->with_stats - t->running, t->processes);
	if (t->running)
		cli_error("%u of %u processes still running: the totals below are those of the others", t->running,
			  t->processes);
	print_totals(t, o);
}

/* Says how the run went; returns how many processes wrote a trace. */
unsigned print_summary(const struct record_options *o, const struct record_run *run,
			      const char *dir_shown, const char *dir)
{
	struct record_totals t;
	char count[32], quoted[PATH_MAX + 64];

	if (!o->quiet)
		describe_exit(o, run);
	totals_collect(&t, dir, o->quiet);
	if (!o->quiet)
		print_totals_checked(&t, o, dir_shown);
	if (t.dropped > 0)   /* even with -q: the trace is not what it claims to be */
		cli_error("WARNING: %s trace records were DROPPED: the trace is incomplete and fault "
			  "counts in reports are too low", cli_format_count(t.dropped, count, sizeof(count)));
	if (!o->quiet && t.processes > 0)
		fprintf(stderr, "next: faultline report %s\n",
			cli_shell_quote(dir_shown, quoted, sizeof(quoted)));
	return t.processes;
}

