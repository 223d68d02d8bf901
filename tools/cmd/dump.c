/* dump.c: `faultline dump` — every fault of a recording as one line of text, in time order, with its
 * joins (PMU values, allocation, stack) resolved: the raw view for scripts and for checking what a
 * recording holds. Reading and validation are the trace reader's (trace_reader.h); this file only
 * parses options and formats.
 *
 * Output (stdout): comment lines starting with '#' that describe the recording and each process,
 * then one line per fault:
 *     TIME_S PID TID ADDR KIND R/W hHANDLER wait=NS svc=NS vt=NS pmu=V1,V2 alloc=ID stack=0xPC0,0xPC1,...
 * TIME_S is seconds since the recording's first process started (9 decimals); ADDR is 0x + 16 hex
 * digits; KIND is first-touch|refault|soft|concurrent|access. The fault record's own fields come
 * first: wait= how long the thread waited for a handler (the record's wait_ns: from the fault to
 * the handler reading it) and svc= its service time (the record's service_ns); then its joins:
 * vt= its thread's virtual time (the CPU time the thread had used at the fault: the record's
 * thread_time_ns, else its context's task-clock; fault_time.h's fault_clock_virtual); all three
 * in ns, '-' when unknown (0 in the record,
 * a version-2 record without the fields); pmu=-, alloc=-, stack=- when there is none.
 * With --symbolize each line ends with " sym=" and the stack's source frames, innermost first,
 * separated by " ; ": "FUNCTION FILE:LINE" (inlined frames included), or the frame's
 * "binary+0xOFFSET" label when unknown, the callsite frame (report's) marked with a leading '*'; the
 * stack is named under the maps snapshot in force at the fault's time (callsite.h), as report's
 * rows name it. sym= is last, as names may hold spaces. Warnings (truncated files) and errors go to
 * stderr. Exit 0, 1 on an unreadable recording, 2 on a usage error.
 *
 * Memory: the recording is opened for streaming when it has the common clean shape
 * (fl_recording_open_stream): the faults are merged in time order as they are read, so memory
 * does not grow with their number; other recordings are read whole. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "callsite.h"
#include <faultline/record_schema.h>

#include "cli.h"
#include "fault_time.h"
#include "trace_reader.h"
#include "recording_arg.h"

struct dump_options {
	const char *dir;      /* NULL: the newest faultline-* in the current directory */
	uint32_t pid;         /* 0: every process */
	uint64_t limit;       /* UINT64_MAX: no limit */
	bool symbolize;       /* --symbolize: append the stack's source frames */
};

static void dump_usage(FILE *out)
{
	fputs("usage: faultline dump [DIR] [--pid PID] [--limit N] [--symbolize]\n"
	      "\n"
	      "Prints every fault of a recording, one line each, in time order:\n"
	      "  TIME_S PID TID ADDR KIND R/W hHANDLER wait=NS svc=NS vt=NS pmu=V1,V2,... alloc=ID stack=0xPC0,...\n"
	      "TIME_S counts from the start of the recording's first process; KIND is first-touch,\n"
	      "refault, soft, concurrent or access (an access sample of record --mrc or\n"
	      "--sample-accesses: counted apart from the faults in report and stats.json, listed here);\n"
	      "wait= is how long the thread waited for a handler (from the\n"
	      "fault to the handler reading its message), svc= the fault's service time (the handler\n"
	      "reading its message to the faulting thread's wake-up) and vt= its thread's virtual time\n"
	      "(the CPU time, task-clock, the thread had used at the fault), all in ns, '-' when the recording\n"
	      "does not know it; pmu=, alloc= and stack= show '-' when the fault has no context, hit\n"
	      "no live allocation, or has no stack. Lines starting with '#' describe the recording\n"
	      "and its processes.\n"
	      "\n"
	      "  DIR                    the recording (default: the newest faultline-* directory here)\n"
	      "      --pid PID          only the faults of this process (all its exec images)\n"
	      "      --limit N          stop after N faults (0: no limit, the default)\n"
	      "      --symbolize        end each line with sym= and the stack's source frames,\n"
	      "                         innermost first, separated by ' ; ': 'FUNCTION FILE:LINE'\n"
	      "                         (or binary+0xOFFSET when unknown); '*' marks the callsite\n"
	      "                         frame report ranks by; named under the maps snapshot in force\n"
	      "                         at the fault's time, as report's rows\n"
	      "  -h, --help             this help\n"
	      "\n"
	      "Warnings about the recording (a file cut by a crash) go to stderr; exit status 1 when the\n"
	      "recording is missing or corrupt.\n", out);
}

enum { OPT_PID, OPT_LIMIT, OPT_SYMBOLIZE };

static int dump_option(void *ctx, int id, const char *value, char *err, size_t errlen)
{
	struct dump_options *o = ctx;
	uint64_t number;

	if (id == OPT_SYMBOLIZE) {
		o->symbolize = true;
	} else if (id == OPT_PID) {
		return cli_parse_pid(value, &o->pid, err, errlen);
	} else {
		if (cli_parse_uint(value, 0, UINT64_MAX, &number, err, errlen) < 0)
			return -1;
		o->limit = number ? number : UINT64_MAX; /* 0: no limit, as report's --top 0 */
	}
	return 0;
}

/* Parses argv; returns -1 to exit 0 (help shown), 0 to go on, or CLI_EXIT_USAGE. */
static int dump_parse(int argc, char **argv, struct dump_options *o)
{
	static const struct cli_opt opts[] = {
		{ NULL, "--pid", CLI_VALUE, OPT_PID },
		{ NULL, "--limit", CLI_VALUE, OPT_LIMIT },
		{ NULL, "--symbolize", CLI_FLAG, OPT_SYMBOLIZE },
	};
	struct cli_verb verb = { "dump", dump_usage, opts, sizeof(opts) / sizeof(opts[0]), dump_option, NULL, &o->dir, o };

	*o = (struct dump_options){ NULL, 0, UINT64_MAX, false };
	return cli_parse_verb(&verb, argc, argv);
}

/* Prints TEXT with control characters as '?', so a comment line stays one line. */
static void put_printable(const char *text, FILE *out)
{
	for (const unsigned char *p = (const unsigned char *)text; *p; p++)
		putc(*p < 0x20 || *p == 0x7f ? '?' : *p, out);
}

/* One comment line per process: who it was and what its trace holds. */
static void dump_process_header(const struct fl_process *proc, bool rec_in_progress, FILE *out)
{
	char quoted[4096];
	char *const *events;
	size_t nevents;

	fprintf(out, "# pid %u dir %s start +%" PRIu64 ".%09" PRIu64 " faults %zu contexts %zu stacks %zu "
		"allocs %zu maps %zu", proc->pid, proc->name, proc->offset_ns / 1000000000,
		proc->offset_ns % 1000000000, proc->nfaults, proc->ncontexts, proc->nstacks, proc->nallocs,
		proc->nmaps);
	fprintf(out, " lost %s%" PRIu64, proc->faults_lost_exact ? "" : ">=", proc->faults_lost);
	if (stats_json_strings(&proc->meta, FL_META_PMU_EVENTS, &events, &nevents) == 0 && nevents > 0) {
		fputs(" pmu_events ", out);
		for (size_t i = 0; i < nevents; i++) {
			put_printable(events[i], out);
			if (i + 1 < nevents)
				putc(',', out);
		}
	}
	if (proc->has_stats) {
		const char *exit_reason = stats_json_string(&proc->stats, FL_STATS_EXIT);
		fputs(" ended_by ", out); /* how the process's trace ended: exit, _exit, exec, a signal */
		put_printable(exit_reason && *exit_reason ? exit_reason : "?", out);
	} else if (proc->outlived && rec_in_progress) {
		fputs(" ended_by unknown (no stats.json yet: still being recorded)", out);
	} else if (proc->outlived) {
		fputs(" ended_by unknown (no stats.json: still running when record ended)", out);
	} else {
		fputs(" ended_by unknown (no stats.json: killed, trace may be cut)", out);
	}
	fputs(" cmdline", out);
	if (proc->ncmdline == 0) {
		fputs(" ", out);
		put_printable(*proc->exe ? proc->exe : "?", out);
	}
	for (size_t i = 0; i < proc->ncmdline; i++) {
		putc(' ', out);
		put_printable(cli_shell_quote(proc->cmdline[i], quoted, sizeof(quoted)), out);
	}
	putc('\n', out);
}

/* " sym=" and the source frames of stack s of a fault at TIME_NS (--symbolize). */
static void dump_frames(struct callsite_table *t, size_t p, const struct fl_stack *s, uint64_t time_ns, FILE *out)
{
	const struct callsite_frame *frames;
	size_t n = 0, pick = 0;

	fputs(" sym=", out);
	if (!s || s->nframes == 0 || callsite_expand_at(t, p, s, time_ns, &frames, &n, &pick) < 0 || n == 0) {
		putc('-', out);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const struct callsite_frame *f = &frames[i];
		fputs(i ? " ; " : "", out);
		if (i == pick)
			putc('*', out);
		put_printable(f->function ? f->function : f->label, out);
		if (f->function && f->file) {
			putc(' ', out);
			put_printable(f->file, out);
			fprintf(out, ":%u", f->line);
		}
	}
}

/* One fault line. */
static void dump_fault(const struct fl_process *proc, const struct fl_fault *f, const struct fault_clock *clock,
		       struct callsite_table *sym, size_t p, FILE *out)
{
	const struct fl_fault_record *r = &f->rec;
	const struct fl_fault_context *c = fl_fault_context(proc, f);
	const struct fl_alloc_record *a = fl_fault_alloc(proc, f);
	const struct fl_stack *s = fl_fault_stack(proc, f);
	uint64_t t = fl_fault_time_ns(proc, f), vt;

	fprintf(out, "%" PRIu64 ".%09" PRIu64 " %u %u 0x%016" PRIx64 " %s %c h%u wait=", t / 1000000000,
		t % 1000000000, proc->pid, r->tid, r->addr, fl_fault_kind_name(r->kind),
		(r->flags & FL_FAULT_WRITE) ? 'w' : 'r', r->handler);
	if (r->wait_ns)
		fprintf(out, "%" PRIu32, r->wait_ns);
	else
		putc('-', out);
	fputs(" svc=", out);
	if (r->service_ns)
		fprintf(out, "%" PRIu32, r->service_ns);
	else
		putc('-', out);
	if (fault_clock_virtual(clock, proc, f, &vt))
		fprintf(out, " vt=%" PRIu64 " pmu=", vt);
	else
		fputs(" vt=- pmu=", out);
	if (!c || c->npmu == 0)
		putc('-', out);
	for (uint32_t i = 0; c && i < c->npmu; i++)
		fprintf(out, i ? ",%" PRIu64 : "%" PRIu64, c->pmu[i]);
	if (a)
		fprintf(out, " alloc=%u stack=", a->alloc_id);
	else
		fputs(" alloc=- stack=", out);
	if (!s || s->nframes == 0)
		putc('-', out);
	for (uint32_t i = 0; s && i < s->nframes; i++)
		fprintf(out, i ? ",0x%" PRIx64 : "0x%" PRIx64, s->frames[i]);
	if (sym)
		dump_frames(sym, p, s, r->time_ns, out);
	putc('\n', out);
}

/* Prints the recording's faults (of o->pid if set). Returns the exit status. */
static void dump_diag(void *ctx, const char *message)
{
	(void)ctx;
	cli_error("dump: warning: %s", message);
}

static int dump_recording(const struct fl_recording *rec, const struct dump_options *o, FILE *out)
{
	struct callsite_skip skip;
	struct callsite_table *sym = NULL;
	struct fault_clock clock;
	char err[512];
	struct fl_fault_iter it;
	const struct fl_process *proc;
	const struct fl_fault *f;
	uint64_t selected = 0, printed = 0;
	size_t nselected = 0;

	for (size_t i = 0; i < rec->nprocs; i++) {
		if (o->pid == 0 || rec->procs[i].pid == o->pid) {
			selected += rec->procs[i].nfaults;
			nselected++;
		}
	}
	if (nselected == 0) {
		cli_error("dump: %s: no process with pid %u in the recording", rec->dir, o->pid);
		return 1;
	}
	if (o->symbolize) {
		if (callsite_skip_init(&skip, true, NULL, 0, err, sizeof(err)) < 0) {
			cli_error("dump: %s", err);
			return 1;
		}
		if (!(sym = callsite_table_new(rec, &skip, dump_diag, NULL))) {
			callsite_skip_free(&skip);
			cli_error("dump: out of memory");
			return 1;
		}
	}
	if (fault_clock_init(&clock, rec, FL_TIME_WALL) < 0) { /* the wall axis: vt= only, no pass */
		cli_error("dump: out of memory");
		if (sym) {
			callsite_table_free(sym);
			callsite_skip_free(&skip);
		}
		return 1;
	}
	if (fl_fault_iter_init(&it, rec, o->pid) < 0) {
		cli_error("dump: out of memory");
		fault_clock_free(&clock);
		if (sym) {
			callsite_table_free(sym);
			callsite_skip_free(&skip);
		}
		return 1;
	}
	fputs("# faultline dump of ", out);
	put_printable(rec->dir, out);
	/* fault records: access samples (record --mrc, --sample-accesses) are lines too, as they are
	 * records of the faults file, though report and stats.json count them apart */
	fprintf(out, ": %zu process%s, %" PRIu64 " fault records\n", nselected, nselected == 1 ? "" : "es", selected);
	for (size_t i = 0; i < rec->nprocs; i++) {
		if (o->pid == 0 || rec->procs[i].pid == o->pid)
			dump_process_header(&rec->procs[i], rec->in_progress, out);
	}
	fputs(o->symbolize ? "# time_s pid tid addr kind r/w handler wait svc vt pmu alloc stack sym\n"
			   : "# time_s pid tid addr kind r/w handler wait svc vt pmu alloc stack\n", out);
	while (printed < o->limit && (f = fl_fault_iter_next(&it, &proc)) != NULL) {
		dump_fault(proc, f, &clock, sym, (size_t)(proc - rec->procs), out);
		printed++;
	}
	int rc = 0;
	if (it.error[0]) { /* a streamed file could not be read again */
		fflush(out);
		cli_error("dump: %s: the faults end early: %s", rec->dir, it.error);
		rc = 1;
	}
	fl_fault_iter_free(&it);
	fault_clock_free(&clock);
	if (sym) {
		callsite_table_free(sym);
		callsite_skip_free(&skip);
	}
	if (cli_finish_output("dump", out) != 0)
		return 1;
	return rc;
}

int cmd_dump(int argc, char **argv)
{
	struct dump_options o;
	struct fl_recording *rec;
	char newest[4096], err[1024];
	int rc = dump_parse(argc, argv, &o);

	if (rc != 0)
		return rc < 0 ? 0 : rc;
	o.dir = recording_arg_dir("dump", o.dir, newest, sizeof(newest));
	if (!o.dir)
		return 1;
	if (fl_recording_open_stream(o.dir, &rec) != 0 && fl_recording_open(o.dir, &rec, err, sizeof(err)) < 0) {
		cli_error("dump: %s", err);
		return 1;
	}
	recording_arg_warnings(rec);
	rc = dump_recording(rec, &o, stdout);
	fl_recording_close(rec);
	return rc;
}
