/* report.c: `faultline report` — options and the run from a recording directory to the ranked output.
 * The aggregation is report_build.c's, the formats report_output.c's (report.h describes the parts).
 *
 * Exit status: 0; 1 when the recording cannot be read (missing, empty, corrupt), no process has the
 * --pid, a --tid thread took no fault, memory runs out or the output cannot be written; 2 on a usage error. Warnings (a file cut by
 * a crash, a binary deleted or replaced since the recording) never stop the report: the table shows
 * them in its header, CSV and JSON runs print them on stderr. */
#include "report_render.h"
#include "report_verb.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "recording_arg.h"

static void report_usage(FILE *out)
{
	fputs("usage: faultline report [DIR] [options]\n"
	      "\n"
	      "Ranks the page faults of a recording by where they happened. A callsite is the first frame of\n"
	      "a fault's stack outside the allocator and runtime machinery (" CALLSITE_DEFAULT_SKIP_NAMES "),\n"
	      "shown as function, file:line and binary. Per row: faults, percent, first-touch / refault /\n"
	      "soft / concurrent faults, reads and writes, and the PMU events between faults (each fault's\n"
	      "counter deltas since the same thread's previous fault, per fault: task-clock in us).\n"
	      "\n"
	      "  DIR                  the recording (default: the newest faultline-* directory here)\n"
	      "      --by KEY         rows: callsite (default), function, alloc (the allocation site of the\n"
	      "                       object a fault hit; <unallocated> with the mapping name otherwise),\n"
	      "                       thread, process. --by alloc adds these columns (CSV/JSON names in\n"
	      "                       brackets):\n"
	      "                         allocs [allocs]: objects of the site that took a shown fault\n"
	      "                           (follows --kind, --pid, --tid, --from/--to, --symbol);\n"
	      "                         allocated [allocated]: objects the site allocated;\n"
	      "                         alloc-MiB [alloc_bytes, in bytes]: what it allocated;\n"
	      "                         obj-faulted [objects_faulted]: its objects that took at least\n"
	      "                           one fault;\n"
	      "                         site-faults [site_faults]: faults on its objects, every kind;\n"
	      "                         faults/MiB [faults_per_mib]: site-faults per MiB allocated.\n"
	      "                       The last five are exact whole-run counts the runtime keeps per site\n"
	      "                       (the recording's sites file), filtered by --pid only; - (CSV empty,\n"
	      "                       JSON null) for recordings without them. The allocation log itself is\n"
	      "                       sampled by default (record --alloc-log): the fault -> object ->\n"
	      "                       site join never depends on it\n"
	      "      --kind KIND      all (default: every fault), first-touch, refault, soft, concurrent, or\n"
	      "                       access: the access samples of record --sample-accesses or --mrc\n"
	      "                       (re-touches of resident pages unmapped on trial; never in 'all')\n"
	      "      --top N          rows shown (default 20; 0: every row)\n"
	      "      --pid PID        only this process (every exec image of it)\n"
	      "      --from SECONDS   only faults at or after this time on the --time axis\n"
	      "      --to SECONDS     only faults before this time\n"
	      "      --time AXIS      the axis of --from/--to: wall (default: since the recording started)\n"
	      "                       or virtual (the program's own time, not dilated by recording: the\n"
	      "                       CPU time, task-clock, its threads had used at the fault, per process;\n"
	      "                       faults without a virtual time fall outside any window of it)\n"
	      "      --format FMT     table (default), csv, json (JSON rows carry the full symbolized stack\n"
	      "                       of the row's most common stack; by alloc the allocation's stack,\n"
	      "                       and the most common faulting stack as fault_stack)\n"
	      "      --locality       spatial and temporal locality scores of each row's fault pages\n"
	      "      --ranges N       hot address ranges (RAP, phi 0.05) shown under the table (default 5;\n"
	      "                       0: none): start-end, size, estimated faults with their bounds, percent,\n"
	      "                       top allocation site; they follow --pid and --kind, not --from/--to.\n"
	      "                       With --format json, given explicitly: the output becomes an object\n"
	      "                       {\"rows\": [the usual array], \"ranges\": [...], \"ranges_source\": {...}}.\n"
	      "                       CSV never has them (faultline ranges --format csv does)\n"
	      "      --skip REGEX     also skip frames whose binary path or function name matches this\n"
	      "                       POSIX extended regular expression (repeatable)\n"
	      "      --no-skip        drop the default skip list: keep every frame (but --skip's)\n"
	      "      --tid TID[,TID]  only faults of these threads (thread ids as dump and --by thread show;\n"
	      "                       a thread without faults is an error)\n"
	      "      --symbol REGEX   only faults whose stack has a frame matching this POSIX extended\n"
	      "                       regular expression: its function name (demangled), or its\n"
	      "                       binary+0xOFFSET label when the function is unknown (the stack\n"
	      "                       named under the maps snapshot in force at the fault's time)\n"
	      "  -h, --help           this help\n"
	      "\n"
	      "The table's header also summarizes the selected faults' service times (from the handler\n"
	      "reading the fault's message to the faulting thread's wake-up: percentiles) and waits (from\n"
	      "the fault to a handler reading its message), the latest\n"
	      "virtual time, and the eviction events (by policy decision, clean or dirty; --pid, and\n"
	      "--from/--to on the wall axis).\n"
	      "\n"
	      "Exit status 1 when the recording is missing or corrupt; warnings (a trace cut by a crash, a\n"
	      "binary deleted or replaced since the recording: shown as binary+0xOFFSET) do not stop it.\n", out);
}

/* Prints a usage error; returns CLI_EXIT_USAGE. */
#define usage_error(...) cli_usage_error("report", __VA_ARGS__)

/* "1.5" seconds → nanoseconds. */
static int parse_seconds(const char *text, uint64_t *ns)
{
	char *end;
	double s;

	if (text[0] == '-' || text[0] == '+')
		return -1;
	errno = 0;
	s = strtod(text, &end);
	if (errno || end == text || *end || !isfinite(s) || s < 0 || s > 1e9)
		return -1;
	*ns = (uint64_t)llround(s * 1e9);
	return 0;
}

static const char *const by_names[] = { "callsite", "function", "alloc", "thread", "process" };
static const char *const kind_names[] = { "all", "first-touch", "refault", "soft", "concurrent", "access" };
_Static_assert(sizeof(kind_names) / sizeof(kind_names[0]) == FL_FAULT_KIND_MAX + 1, "--kind names every fault kind");
static const char *const format_names[] = { "table", "csv", "json" };
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

enum { OPT_BY, OPT_KIND, OPT_TOP, OPT_PID, OPT_FROM, OPT_TO, OPT_FORMAT, OPT_SKIP, OPT_RANGES, OPT_LOCALITY,
       OPT_NO_SKIP, OPT_TIME, OPT_TID, OPT_SYMBOL };

/* "TID[,TID...]" appended to o->tids. */
static int parse_tids(const char *value, struct report_options *o, char *err, size_t errlen)
{
	for (const char *p = value;;) {
		char one[32];
		uint64_t tid;
		size_t n = strcspn(p, ",");
		snprintf(one, sizeof(one), "%.*s", (int)(n < sizeof(one) - 1 ? n : sizeof(one) - 1), p);
		if (n == 0 || n >= sizeof(one) || cli_parse_uint(one, 1, INT32_MAX, &tid, err, errlen) < 0) {
			if (n == 0 || n >= sizeof(one))
				snprintf(err, errlen, "'%s' is not a comma-separated list of thread ids", value);
			return -1;
		}
		uint32_t *grown = realloc(o->tids, (o->ntids + 1) * sizeof(*grown));
		if (!grown) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		o->tids = grown;
		o->tids[o->ntids++] = (uint32_t)tid;
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

static int report_option(void *ctx, int id, const char *value, char *err, size_t errlen)
{
	struct report_options *o = ctx;
	uint64_t number;
	int choice;

	switch (id) {
	case OPT_BY:
	case OPT_KIND:
	case OPT_FORMAT:
		if (id == OPT_BY && (choice = cli_pick(value, by_names, COUNT(by_names), err, errlen)) >= 0)
			o->by = (enum report_by)choice;
		else if (id == OPT_KIND && (choice = cli_pick(value, kind_names, COUNT(kind_names), err, errlen)) >= 0)
			o->kind = (unsigned)choice;
		else if (id == OPT_FORMAT && (choice = cli_pick(value, format_names, COUNT(format_names), err, errlen)) >= 0)
			o->format = (enum report_format)choice;
		else
			return -1;
		return 0;
	case OPT_RANGES:
		if (cli_parse_uint(value, 0, 1000, &number, err, errlen) < 0)
			return -1;
		o->ranges = number;
		o->ranges_given = true;
		return 0;
	case OPT_TOP:
		if (cli_parse_uint(value, 0, UINT32_MAX, &number, err, errlen) < 0)
			return -1;
		o->top = number;
		return 0;
	case OPT_PID:
		return cli_parse_pid(value, &o->pid, err, errlen);
	case OPT_FROM:
	case OPT_TO:
		if (parse_seconds(value, id == OPT_FROM ? &o->from_ns : &o->to_ns) < 0) {
			snprintf(err, errlen, "'%s' is not a number of seconds >= 0", value);
			return -1;
		}
		return 0;
	case OPT_LOCALITY: o->locality = true; return 0;
	case OPT_TID: return parse_tids(value, o, err, errlen);
	case OPT_SYMBOL: o->symbol = value; return 0;
	case OPT_TIME: return fl_time_axis_parse(value, &o->time_axis, err, errlen);
	case OPT_NO_SKIP: o->default_skip = false; return 0;
	default: /* OPT_SKIP */
		return cli_append_value(&o->skip, &o->nskip, value, err, errlen);
	}
}

/* Parses argv into o: 0, -1 after --help, or CLI_EXIT_USAGE (after the message). */
static int parse_args(int argc, char **argv, struct report_options *o)
{
	static const struct cli_opt opts[] = {
		{ NULL, "--by", CLI_VALUE, OPT_BY },
		{ NULL, "--kind", CLI_VALUE, OPT_KIND },
		{ NULL, "--top", CLI_VALUE, OPT_TOP },
		{ NULL, "--pid", CLI_VALUE, OPT_PID },
		{ NULL, "--from", CLI_VALUE, OPT_FROM },
		{ NULL, "--to", CLI_VALUE, OPT_TO },
		{ NULL, "--format", CLI_VALUE, OPT_FORMAT },
		{ NULL, "--skip", CLI_VALUE, OPT_SKIP },
		{ NULL, "--ranges", CLI_VALUE, OPT_RANGES },
		{ NULL, "--locality", CLI_FLAG, OPT_LOCALITY },
		{ NULL, "--no-skip", CLI_FLAG, OPT_NO_SKIP },
		{ NULL, "--tid", CLI_VALUE, OPT_TID },
		{ NULL, "--symbol", CLI_VALUE, OPT_SYMBOL },
		{ NULL, "--time", CLI_VALUE, OPT_TIME },
	};
	struct cli_verb verb = { "report", report_usage, opts, COUNT(opts), report_option, NULL, &o->dir, o };

	return cli_parse_verb(&verb, argc, argv);
}

int report_parse(int argc, char **argv, struct report_options *o)
{
	struct callsite_skip check;
	char err[512];
	int rc;

	*o = (struct report_options){ .by = REPORT_BY_CALLSITE, .top = 20, .to_ns = UINT64_MAX,
				      .default_skip = true, .progress = true, .ranges = 5 };
	rc = parse_args(argc, argv, o);
	if (rc == 0 && o->to_ns <= o->from_ns)
		rc = usage_error("--to must be later than --from");
	if (rc == 0 && callsite_skip_init(&check, o->default_skip, o->skip, o->nskip, err, sizeof(err)) < 0)
		rc = usage_error("%s", err);
	else if (rc == 0)
		callsite_skip_free(&check);
	const char *symbol = o->symbol;
	o->symbol = NULL; /* set again once compiled: report_options_free frees what was */
	if (rc == 0 && symbol) {
		int bad = regcomp(&o->symbol_re, symbol, REG_EXTENDED | REG_NOSUB);
		if (bad) {
			regerror(bad, &o->symbol_re, err, sizeof(err));
			rc = usage_error("--symbol '%s': %s", symbol, err);
		} else {
			o->symbol = symbol;
		}
	}
	if (rc != 0)
		report_options_free(o);
	return rc;
}

void report_options_free(struct report_options *o)
{
	free(o->skip);
	free(o->tids);
	if (o->symbol)
		regfree(&o->symbol_re);
	o->skip = NULL;
	o->tids = NULL;
	o->ntids = 0;
	o->symbol = NULL;
}

static void collect_warning(void *ctx, const char *message)
{
	report_warn(ctx, "%s", message);
}

/* --tid: whether every given thread took a fault (in the --pid process, if given); else the first
 * that did not, in *missing (as --pid, a thread that is not there is an error, not an empty
 * report). */
static bool tids_present(const struct report *r, uint32_t *missing)
{
	for (size_t t = 0; t < r->o->ntids; t++) {
		bool found = false;
		for (size_t p = 0; p < r->rec->nprocs && !found; p++) {
			const struct fl_process *proc = &r->rec->procs[p];
			if (r->o->pid && proc->pid != r->o->pid)
				continue;
			for (size_t i = 0; i < proc->nfaults && !found; i++)
				found = proc->faults[i].rec.tid == r->o->tids[t];
		}
		if (!found) {
			*missing = r->o->tids[t];
			return false;
		}
	}
	return true;
}

/* --tid with a streamed recording: checked by the pass over the faults (tids_present's answer). */
static bool tids_seen(const struct report *r, uint32_t *missing)
{
	for (size_t t = 0; t < r->o->ntids; t++)
		if (!r->tid_seen || !r->tid_seen[t]) {
			*missing = r->o->tids[t];
			return false;
		}
	return true;
}

/* Whether the run can stream its recording: every option but those that walk the faults by
 * index after the first pass (--locality, the virtual --time axis). */
static bool can_stream(const struct report_options *o)
{
	return !o->locality && o->time_axis == FL_TIME_WALL;
}

/* Opens the recording and builds the report into r (STREAM: try streaming it). 0, the exit
 * status, or REPORT_HOLD when a streamed run must be redone on the held recording. */
#define REPORT_HOLD (-2)
static int report_prepare(struct report *r, const char *dir, bool stream)
{
	char err[1024];

	report_progress_phase(&r->progress, "reading the recording", 0);
	r->streamed = stream && can_stream(r->o) && fl_recording_open_stream(dir, &r->rec) == 0;
	if (!r->streamed && fl_recording_open(dir, &r->rec, err, sizeof(err)) < 0) {
		report_progress_stop(&r->progress);
		cli_error("report: %s", err);
		return 1;
	}
	r->read_seconds = report_progress_elapsed(&r->progress);
	for (size_t i = 0; i < r->rec->nwarnings; i++)
		report_warn(&r->warnings, "%s", r->rec->warnings[i]);
	if (r->rec->warnings_suppressed)
		report_warn(&r->warnings, "%zu more warnings about the recording not shown", r->rec->warnings_suppressed);
	if (r->o->pid && !fl_recording_find_pid(r->rec, r->o->pid)) {
		report_progress_stop(&r->progress);
		cli_error("report: %s: no process with pid %u in the recording", r->rec->dir, r->o->pid);
		return 1;
	}
	uint32_t missing_tid;
	if (!r->streamed && !tids_present(r, &missing_tid)) {
		report_progress_stop(&r->progress);
		cli_error("report: %s: no fault of thread %u in the recording%s", r->rec->dir, missing_tid,
			  r->o->pid ? " (in the --pid process)" : "");
		return 1;
	}
	if (fault_clock_init(&r->clock, r->rec, r->o->time_axis) < 0) {
		report_progress_stop(&r->progress);
		cli_error("report: out of memory");
		return 1;
	}
	if (callsite_skip_init(&r->skip, r->o->default_skip, r->o->skip, r->o->nskip, err, sizeof(err)) < 0 ||
	    !(r->callsites = callsite_table_new(r->rec, &r->skip, collect_warning, &r->warnings)) ||
	    report_build(r, err, sizeof(err)) < 0 || report_records_build(r, err, sizeof(err)) < 0) {
		if (r->streamed && (r->hold || r->stream_error[0]))
			return REPORT_HOLD;
		report_progress_stop(&r->progress);
		cli_error("report: %s", r->callsites ? err : "out of memory");
		return 1;
	}
	if (r->streamed && !tids_seen(r, &missing_tid)) {
		report_progress_stop(&r->progress);
		cli_error("report: %s: no fault of thread %u in the recording%s", r->rec->dir, missing_tid,
			  r->o->pid ? " (in the --pid process)" : "");
		return 1;
	}
	report_ranges_compute(r);
	r->total_seconds = report_progress_elapsed(&r->progress);
	return 0;
}

/* One run on DIR, streamed when STREAM and the recording allows: the exit status, or REPORT_HOLD.
 * HEADER_ONLY: only the header lines are printed (report_header_text). */
static int report_run_once(const struct report_options *o, const char *dir, bool stream, bool header_only,
			   FILE *out)
{
	struct report r;
	int rc;

	memset(&r, 0, sizeof(r));
	r.o = o;
	report_progress_start(&r.progress, o->progress_verb ? o->progress_verb : "report", o->progress);
	rc = report_prepare(&r, dir, stream);
	if (rc == 0) {
		report_progress_stop(&r.progress);
		if (header_only)
			report_print_header(&r, out);
		else
			rc = report_print(&r, out);
		if (o->format != REPORT_FORMAT_TABLE) {
			for (size_t i = 0; i < r.warnings.count; i++)
				cli_error("report: warning: %s", r.warnings.lines[i]);
			if (r.warnings.suppressed)
				cli_error("report: warning: %zu more warnings not shown", r.warnings.suppressed);
		}
	}
	report_build_free(&r);
	report_ranges_free(&r);
	callsite_table_free(r.callsites);
	callsite_skip_free(&r.skip);
	fault_clock_free(&r.clock);
	fl_recording_close(r.rec);
	report_warnings_free(&r.warnings);
	if (rc == REPORT_HOLD)
		report_progress_stop(&r.progress);
	return rc;
}

int report_run(const struct report_options *o, FILE *out)
{
	char newest[4096];
	const char *dir = recording_arg_dir("report", o->dir, newest, sizeof(newest));
	if (!dir)
		return 1;
	int rc = report_run_once(o, dir, true, false, out);
	if (rc == REPORT_HOLD) /* the stream broke an assumption: the whole run again, on the held recording */
		rc = report_run_once(o, dir, false, false, out);
	return rc;
}

int report_header_text(const char *dir, uint32_t pid, enum fl_time_axis axis, const char *progress_verb, char **text)
{
	static char *argv[] = { "report", NULL };
	struct report_options o;
	size_t len = 0;
	FILE *out;
	int rc;

	*text = NULL;
	if (report_parse(1, argv, &o) != 0)
		return 1;
	o.pid = pid;
	o.time_axis = axis;
	o.progress = progress_verb != NULL;
	o.progress_verb = progress_verb;
	if (!(out = open_memstream(text, &len))) {
		cli_error("report: open_memstream: %s", strerror(errno));
		report_options_free(&o);
		return 1;
	}
	rc = report_run_once(&o, dir, true, true, out);
	if (rc == REPORT_HOLD) {
		rewind(out);
		rc = report_run_once(&o, dir, false, true, out);
	}
	if (fclose(out) != 0 && rc == 0) {
		cli_error("report: writing the header: %s", strerror(errno));
		rc = 1;
	}
	if (rc != 0) {
		free(*text);
		*text = NULL;
	}
	report_options_free(&o);
	return rc;
}

int cmd_report(int argc, char **argv)
{
	struct report_options o;
	int rc = report_parse(argc, argv, &o);

	if (rc != 0)
		return rc < 0 ? 0 : rc;
	rc = report_run(&o, stdout);
	report_options_free(&o);
	return rc;
}
