/* test_stacks_e2e.c: end-to-end tests of fault stacks, fault contexts, PMU values and allocation
 * attribution. Each section records a planted program (tests/planted/st_*.c) by running
 * build/faultline record through fork/exec (no shell), then reads the recording with the trace
 * reader (tools/trace_reader.h) and resolves program counters with the libbfd symbolizer
 * (tools/symbolize.h) under the recording's own maps snapshots. The programs print where and when
 * to look (st_common.h: "range", "window", "tid" lines); fault times plus their file's start_ns are
 * on the programs' CLOCK_MONOTONIC.
 *
 * Sections (all by default; name some on the command line to run only those):
 *   callchain  -O2 -fomit-frame-pointer code, main -> chain_a -> chain_b -> chain_c -> chain_d, and
 *              chain_d writes a heap array (-L 4 < 16 MiB: first touches, then refaults): every
 *              fault of those passes has a context whose stack reads chain_d (the exact faulting PC,
 *              FL_STACK_EXACT_PC), chain_c, chain_b, chain_a, main; they share at most 4 stack ids
 *              and the main one is defined once; the verification pass's faults read check_all, main;
 *              PMU values per thread only grow (issue 5 on one thread).
 *   sysread    faults inside read() (pipe and regular file into evicted heap, /dev/zero into fresh
 *              and into evicted heap): each has a stack whose frame 0 is a return address into the
 *              function that called read() (no EXACT_PC flag: the runtime's wrapper frames are
 *              stripped), frame 1 main; every page of the fresh buffer faults inside the read; the
 *              program itself requires full counts from the regular file and /dev/zero.
 *   threads    4 threads x (10000 pages x 2 passes) with -c 2 under -L 16 M (about 20000 faults per
 *              thread), plus a shared buffer all threads hit at once: records == faults_total,
 *              seqs are 0..N-1 each once, records_dropped 0, every non-concurrent fault has a context with a stack (frames
 *              thread_touch, work on the threads' own buffers), concurrent ones a context or
 *              FL_FAULT_NO_STACK; meta.json names the three software PMU events; per thread, PMU
 *              values in contexts-file order never decrease (task-clock strictly increases).
 *   sample     -s 10 against -s 1 on the deterministic callchain program, without -L (first touches
 *              only) and with -L 4 (against the callchain run): identical fault counts per kind;
 *              10 % (+-30 %) of the faults have a context; unsampled faults carry no NO_STACK
 *              flag; sampled stacks are still right. (On a difference, the array pages whose
 *              fault counts differ, per phase, are listed.)
 *   allocsites two arrays malloc'ed in alloc_a and alloc_b, faulted 3:1: faults attributed to the
 *              two allocation records 3:1 (+-5 %), every fault inside an array attributed to its
 *              record, the allocation stacks read alloc_a, main and alloc_b, main.
 *   sigblock   threads that block every signal (pthread_sigmask; sigprocmask-inherited) still
 *              complete, and every one of their faults has a stack (blocked_touch, blocker_main).
 * "Every fault has a stack" always means: every one but those the runtime dropped as late and
 * counted in late_stacks_dropped, whose count is bounded (late_stacks_allowed).
 * Never-surfacing (st_surface) and fatal signals (st_crash) are checked by tests/cases/st_*.sh.
 * Lower bounds on refaults only assume what -L forces (a pass over P pages under a limit of L
 * pages refaults at least P - L of them), not a particular eviction policy.
 *
 * Paths: FAULTLINE (default: BUILD/faultline), FAULTLINE_BUILD (default: derived from this
 * program's location, build/tests/unit/..); recordings go to a temporary directory, kept when
 * FAULTLINE_TEST_KEEP=1. Prints "ok ..." per check group and "FAIL ..." with file:line, ends with
 * a summary line, exits 1 on any failure. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <faultline/trace.h>

#include "stats_json.h"
#include "symbolize.h"
#include "trace_reader.h"

#include "check.h"

/* Up to this many examples are printed for a check over many faults. */
#define EXAMPLES 5

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("test_stacks_e2e: ", stdout);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	exit(2);
}

static void pathf(char *out, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void pathf(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(out, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len)
		die("path too long: %s...", out);
}

/* ------------------------------------------------------------------ environment */

static char faultline_bin[PATH_MAX], planted_dir[PATH_MAX], work_dir[PATH_MAX];

static void setup_paths(void)
{
	const char *build = getenv("FAULTLINE_BUILD"), *fl = getenv("FAULTLINE");
	char self[PATH_MAX], derived[PATH_MAX];

	if (!build || !*build) {
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n < 0)
			die("readlink(/proc/self/exe): %s", strerror(errno));
		self[n] = '\0';
		/* BUILD/tests/unit/test_stacks_e2e */
		for (int up = 0; up < 3; up++) {
			char *slash = strrchr(self, '/');
			if (!slash)
				die("cannot derive the build directory from %s", self);
			*slash = '\0';
		}
		pathf(derived, sizeof(derived), "%s", self);
		build = derived;
	}
	pathf(planted_dir, sizeof(planted_dir), "%s/tests", build);
	if (fl && *fl)
		pathf(faultline_bin, sizeof(faultline_bin), "%s", fl);
	else
		pathf(faultline_bin, sizeof(faultline_bin), "%s/faultline", build);
	if (access(faultline_bin, X_OK) != 0)
		die("%s is not built (run make): %s", faultline_bin, strerror(errno));

	const char *tmp = getenv("TMPDIR");
	pathf(work_dir, sizeof(work_dir), "%s/faultline-stacks.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(work_dir))
		die("mkdtemp(%s): %s", work_dir, strerror(errno));
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	remove(path);
	return 0;
}

static void cleanup_work(void)
{
	const char *keep = getenv("FAULTLINE_TEST_KEEP");
	if (keep && strcmp(keep, "1") == 0) {
		printf("# kept %s\n", work_dir);
		return;
	}
	nftw(work_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ------------------------------------------------------------------ a recorded run */

#define MAX_MARKS 64

/* One line a planted program printed (st_common.h). */
struct mark {
	char kind;       /* 'r' range, 'w' window, 't' tid */
	char name[32];
	uint64_t a, b;   /* range: address, length; window: t0, t1; tid: tid, 0 */
};

struct run {
	char name[64];
	char dir[PATH_MAX];
	int status;             /* exit status of record, or 128 + signal */
	char *out;              /* the program's stdout */
	struct mark marks[MAX_MARKS];
	size_t nmarks;
	struct fl_recording *rec;
	const struct fl_process *proc; /* the recording's only process */
};

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return strdup("");
	char *text = NULL;
	size_t len = 0, cap = 0;
	int c;
	while ((c = fgetc(f)) != EOF) {
		if (len + 2 > cap) {
			cap = cap ? cap * 2 : 4096;
			text = realloc(text, cap);
			if (!text)
				die("out of memory");
		}
		text[len++] = (char)c;
	}
	fclose(f);
	if (!text)
		return strdup("");
	text[len] = '\0';
	return text;
}

static void show_stderr(const struct run *r)
{
	char path[PATH_MAX];
	pathf(path, sizeof(path), "%s/%s.err", work_dir, r->name);
	char *err = read_text(path);
	size_t len = strlen(err);
	printf("--- stderr of %s (last 2000 bytes):\n%s---\n", r->name, len > 2000 ? err + len - 2000 : err);
	free(err);
}

static void parse_marks(struct run *r)
{
	for (char *line = r->out; line && *line;) {
		char *end = strchr(line, '\n');
		if (end)
			*end = '\0';
		struct mark m = { 0 };
		char kind[16];
		unsigned long long a, b = 0;
		int n = sscanf(line, "%15s %31s %llx %llu", kind, m.name, &a, &b);
		if (n == 4 && strcmp(kind, "range") == 0)
			m.kind = 'r';
		else if ((n = sscanf(line, "%15s %31s %llu %llu", kind, m.name, &a, &b)) == 4 && strcmp(kind, "window") == 0)
			m.kind = 'w';
		else if (n >= 3 && strcmp(kind, "tid") == 0)
			m.kind = 't', b = 0;
		if (m.kind) {
			if (r->nmarks == MAX_MARKS)
				die("%s: more than %d marks", r->name, MAX_MARKS);
			m.a = a, m.b = b;
			r->marks[r->nmarks++] = m;
		}
		if (end)
			*end = '\n';
		line = end ? end + 1 : NULL;
	}
}

static const struct mark *find_mark(const struct run *r, char kind, const char *name)
{
	for (size_t i = 0; i < r->nmarks; i++)
		if (r->marks[i].kind == kind && strcmp(r->marks[i].name, name) == 0)
			return &r->marks[i];
	return NULL;
}

/* A mark the program must have printed; a missing one ends the test (the program misbehaved). */
static const struct mark *need_mark(const struct run *r, char kind, const char *name)
{
	const struct mark *m = find_mark(r, kind, name);
	if (!m)
		die("%s: the program printed no %s line named %s; its stdout:\n%s", r->name,
		    kind == 'r' ? "range" : kind == 'w' ? "window" : "tid", name, r->out);
	return m;
}

static bool in_range(const struct mark *m, uint64_t addr)
{
	return addr >= m->a && addr - m->a < m->b;
}

/* Pages a range spans. */
static uint64_t range_pages(const struct mark *m, uint32_t page_size)
{
	return (m->a + m->b + page_size - 1) / page_size - m->a / page_size;
}

static uint64_t fault_abs_ns(const struct fl_process *p, const struct fl_fault *f)
{
	return p->start_ns + f->rec.time_ns;
}

static bool in_window(const struct mark *w, const struct fl_process *p, const struct fl_fault *f)
{
	uint64_t t = fault_abs_ns(p, f);
	return t >= w->a && t <= w->b;
}

/* Runs `faultline record -q -o WORK/NAME --force OPTS... -- PLANTED/PROG ARGS...` (both lists
 * NULL-terminated), stdout in WORK/NAME.out, stderr in WORK/NAME.err, then opens the recording.
 * Returns false (after a failed check) when the run or the open failed. */
static bool record(struct run *r, const char *name, const char *const *opts, const char *prog, const char *const *args)
{
	const char *argv[64];
	char out_path[PATH_MAX], err_path[PATH_MAX], prog_path[PATH_MAX], err[1024];
	size_t n = 0;

	memset(r, 0, sizeof(*r));
	pathf(r->name, sizeof(r->name), "%s", name);
	pathf(r->dir, sizeof(r->dir), "%s/%s", work_dir, name);
	pathf(out_path, sizeof(out_path), "%s/%s.out", work_dir, name);
	pathf(err_path, sizeof(err_path), "%s/%s.err", work_dir, name);
	pathf(prog_path, sizeof(prog_path), "%s/%s", planted_dir, prog);
	if (access(prog_path, X_OK) != 0)
		die("%s is not built (run make): %s", prog_path, strerror(errno));
	argv[n++] = faultline_bin;
	argv[n++] = "record";
	argv[n++] = "-q";
	argv[n++] = "-o";
	argv[n++] = r->dir;
	argv[n++] = "--force";
	for (; *opts; opts++)
		argv[n++] = *opts;
	argv[n++] = "--";
	argv[n++] = prog_path;
	for (; *args; args++)
		argv[n++] = *args;
	argv[n] = NULL;

	printf("# %s:", name);
	for (size_t i = 0; i < n; i++)
		printf(" %s", argv[i]);
	putchar('\n');
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		int fd_out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		int fd_err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		int fd_in = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fd_out < 0 || fd_err < 0 || fd_in < 0 || dup2(fd_out, 1) < 0 || dup2(fd_err, 2) < 0 || dup2(fd_in, 0) < 0)
			_exit(126);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	r->out = read_text(out_path);
	parse_marks(r);
	CHECK(r->status == 0, "%s: faultline record exited %d (want 0)", name, r->status);
	if (r->status != 0) {
		printf("--- stdout of %s:\n%s---\n", name, r->out);
		show_stderr(r);
		return false;
	}
	if (fl_recording_open(r->dir, &r->rec, err, sizeof(err)) < 0) {
		CHECK(false, "%s: the recording does not open: %s", name, err);
		return false;
	}
	for (size_t i = 0; i < r->rec->nwarnings; i++)
		printf("# %s: reader warning: %s\n", name, r->rec->warnings[i]);
	CHECK(r->rec->nwarnings == 0, "%s: the recording opens without warnings (%zu)", name, r->rec->nwarnings);
	CHECK(r->rec->nprocs == 1, "%s: one process directory (%zu)", name, r->rec->nprocs);
	if (r->rec->nprocs < 1)
		return false;
	r->proc = &r->rec->procs[0];
	CHECK(r->proc->has_stats, "%s: stats.json present", name);
	return r->proc->has_stats;
}

static void run_free(struct run *r)
{
	fl_recording_close(r->rec);
	free(r->out);
	memset(r, 0, sizeof(*r));
}

static uint64_t stat_u64(const struct run *r, const char *key)
{
	uint64_t v = 0;
	if (stats_json_uint(&r->proc->stats, key, &v) < 0) {
		CHECK(false, "%s: stats.json has the integer %s", r->name, key);
		return UINT64_MAX;
	}
	return v;
}

/* The runtime promises a stack for every non-concurrent fault but one: a stack signal the thread
 * takes more than FL_LATE_STACK_MS (200 ms) after it was sent (it had been blocked where the shim
 * cannot see, or the machine is very busy) would show wherever the thread finally took it, so the
 * runtime writes the context without a stack and counts it in stats.json late_stacks_dropped. The
 * checks allow exactly that many contexts without a stack, and bound the count itself: at most
 * 2 % of the faults + 16, far above what a loaded machine produces (1-4 of 20 000 at load 17). */
static uint64_t late_stacks_allowed(const struct run *r)
{
	uint64_t late = stat_u64(r, "late_stacks_dropped");
	if (late == UINT64_MAX)
		return 0;
	uint64_t bound = r->proc->nfaults / 50 + 16;
	CHECK(late <= bound, "%s: late_stacks_dropped = %" PRIu64 " (<= 2 %% of %zu faults + 16 = %" PRIu64 ")", r->name,
	      late, r->proc->nfaults, bound);
	return late;
}

/* Is f's context one whose stack the runtime dropped as late (a context, stack id 0)? */
static bool stack_dropped_late(const struct fl_process *p, const struct fl_fault *f)
{
	const struct fl_fault_context *c = fl_fault_context(p, f);
	return c && c->stack_id == 0;
}

/* ------------------------------------------------------------------ symbols */

static struct symbolizer *sym;

/* The function (outermost of any inlined chain) holding PC in process p at its fault time t, or
 * NULL; *label gets a printable name either way. */
static const char *function_at(const struct fl_process *p, uint64_t t, uint64_t pc, bool is_return, const char **label)
{
	const struct fl_maps_snapshot *snap = fl_process_maps_at(p, t);
	*label = "(no maps)";
	if (!snap)
		return NULL;
	const struct sym_result *res = symbolizer_lookup(sym, snap->maps, pc, is_return);
	if (!res)
		die("symbolizer: out of memory");
	*label = res->label;
	if (res->nframes == 0)
		return NULL;
	const char *fn = res->frames[res->nframes - 1].function;
	if (fn)
		*label = fn;
	return fn;
}

/* "fn1 < fn2 < ..." for a failure message. */
static const char *describe_stack(const struct fl_process *p, uint64_t t, const struct fl_stack *s, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	if (!s)
		return "(no stack)";
	used += (size_t)snprintf(buf, len, "[id %u flags %#x] ", s->id, s->flags);
	for (unsigned i = 0; i < s->nframes && i < 10 && used < len; i++) {
		const char *label;
		bool ret = i > 0 || !(s->flags & FL_STACK_EXACT_PC);
		function_at(p, t, s->frames[i], ret, &label);
		used += (size_t)snprintf(buf + used, len - used, "%s%s@%#" PRIx64, i ? " < " : "", label, s->frames[i]);
	}
	return buf;
}

/* The stack of a fault's context (NULL when it has no context or the context no stack). */
static const struct fl_stack *context_stack(const struct fl_process *p, const struct fl_fault *f)
{
	const struct fl_fault_context *c = fl_fault_context(p, f);
	if (!c || c->stack_id == 0)
		return NULL;
	return fl_process_stack(p, c->stack_id);
}

/* Does the stack start with the functions want[0..n)? exact: frame 0 must be an exact PC (a fault
 * in user code); otherwise a return address (a fault inside a system call). */
static bool stack_is(const struct fl_process *p, uint64_t t, const struct fl_stack *s, const char *const *want, unsigned n,
		     bool exact)
{
	if (!s || s->nframes < n)
		return false;
	if (exact != !!(s->flags & FL_STACK_EXACT_PC))
		return false;
	for (unsigned i = 0; i < n; i++) {
		const char *label;
		const char *fn = function_at(p, t, s->frames[i], i > 0 || !exact, &label);
		if (!fn || strcmp(fn, want[i]) != 0)
			return false;
	}
	return true;
}

/* Which faults a check looks at. Concurrent faults (the page was already brought in by another
 * message: the thread had run on) may lack a stack by design; the stack checks skip them. */
struct selection {
	const struct mark *range;   /* NULL: any address */
	const struct mark *window;  /* NULL: any time */
	uint32_t tid;               /* 0: any thread */
	bool skip_concurrent;
};

static bool selected(const struct fl_process *p, const struct fl_fault *f, const struct selection *sel)
{
	if (sel->range && !in_range(sel->range, f->rec.addr))
		return false;
	if (sel->window && !in_window(sel->window, p, f))
		return false;
	if (sel->tid && f->rec.tid != sel->tid)
		return false;
	if (sel->skip_concurrent && f->rec.kind == FL_FAULT_CONCURRENT)
		return false;
	return true;
}

/* Checks the stacks of every fault selected by sel: each must have a context whose stack starts
 * with want[0..n). Returns how many faults were selected. */
static size_t check_stacks(const struct run *r, const char *what, const struct selection *sel, const char *const *want,
			   unsigned n, bool exact)
{
	const struct fl_process *p = r->proc;
	size_t count = 0, bad = 0, late = 0;
	char desc[2048], expect[512];
	size_t used = 0;

	expect[0] = '\0';
	for (unsigned i = 0; i < n && used < sizeof(expect); i++)
		used += (size_t)snprintf(expect + used, sizeof(expect) - used, "%s%s", i ? " < " : "", want[i]);
	for (size_t i = 0; i < p->nfaults; i++) {
		const struct fl_fault *f = &p->faults[i];
		if (!selected(p, f, sel))
			continue;
		count++;
		const struct fl_stack *s = context_stack(p, f);
		if (stack_is(p, f->rec.time_ns, s, want, n, exact))
			continue;
		if (stack_dropped_late(p, f)) {
			late++;
			continue;
		}
		if (bad++ < EXAMPLES)
			printf("# %s: fault seq %" PRIu64 " addr %#" PRIx64 " %s tid %u: stack %s\n", r->name, f->rec.seq, f->rec.addr,
			       fl_fault_kind_name(f->rec.kind), f->rec.tid, describe_stack(p, f->rec.time_ns, s, desc, sizeof(desc)));
	}
	CHECK(bad == 0, "%s: %s: %zu of %zu faults have a stack other than %s%s", r->name, what, bad, count, expect,
	      exact ? " (exact PC)" : " (frame 0 a return address)");
	uint64_t allowed = late_stacks_allowed(r);
	CHECK(late <= allowed, "%s: %s: %zu faults without a stack (<= late_stacks_dropped = %" PRIu64 ")", r->name, what,
	      late, allowed);
	return count;
}

/* ------------------------------------------------------------------ shared checks */

/* Per thread, in contexts-file order, every PMU value never decreases and task-clock strictly
 * increases; every context has as many values as meta.json names events. */
static void check_pmu_monotonic(const struct run *r)
{
	const struct fl_process *p = r->proc;
	char *const *events = NULL;
	size_t nevents = 0;
	int clock_index = -1;

	if (stats_json_strings(&p->meta, "pmu_events", &events, &nevents) < 0)
		nevents = 0;
	for (size_t i = 0; i < nevents; i++)
		if (strcmp(events[i], "task-clock") == 0)
			clock_index = (int)i;

	struct last { uint32_t tid; uint64_t pmu[FL_PMU_MAX]; size_t n; } *last = calloc(p->ncontexts + 1, sizeof(*last));
	size_t nthreads = 0, bad_count = 0, decreases = 0, clock_stalls = 0;
	if (!last)
		die("out of memory");
	for (size_t i = 0; i < p->ncontexts; i++) {
		const struct fl_fault_context *c = &p->contexts[i];
		if (c->npmu != nevents) {
			if (bad_count++ < EXAMPLES)
				printf("# %s: context of seq %" PRIu64 " has %u PMU values, meta.json names %zu events\n", r->name, c->seq,
				       c->npmu, nevents);
			continue;
		}
		size_t t = 0;
		while (t < nthreads && last[t].tid != c->tid)
			t++;
		if (t == nthreads) {
			last[nthreads].tid = c->tid;
			memcpy(last[nthreads].pmu, c->pmu, sizeof(c->pmu));
			last[nthreads++].n = 1;
			continue;
		}
		for (unsigned k = 0; k < c->npmu; k++) {
			bool clock = (int)k == clock_index;
			if (c->pmu[k] < last[t].pmu[k] || (clock && c->pmu[k] == last[t].pmu[k])) {
				if (c->pmu[k] < last[t].pmu[k])
					decreases++;
				else
					clock_stalls++;
				if (decreases + clock_stalls <= EXAMPLES)
					printf("# %s: tid %u context %zu (seq %" PRIu64 "): %s went from %" PRIu64 " to %" PRIu64 "\n",
					       r->name, c->tid, last[t].n, c->seq, events[k], last[t].pmu[k], c->pmu[k]);
			}
		}
		memcpy(last[t].pmu, c->pmu, sizeof(c->pmu));
		last[t].n++;
	}
	CHECK(bad_count == 0, "%s: every context carries %zu PMU values (%zu do not)", r->name, nevents, bad_count);
	CHECK(decreases == 0, "%s: PMU values never decrease within a thread, in contexts-file order (%zu contexts, %zu "
	      "threads; %zu decreases)", r->name, p->ncontexts, nthreads, decreases);
	CHECK(clock_index >= 0 && clock_stalls == 0, "%s: task-clock strictly increases within a thread (%zu repeats)",
	      r->name, clock_stalls);
	free(last);
}

/* meta.json: software PMU events, the three this machine has. */
static void check_pmu_meta(const struct run *r)
{
	const struct fl_process *p = r->proc;
	const char *kind = stats_json_string(&p->meta, "pmu_kind");
	char *const *events = NULL;
	size_t nevents = 0;
	static const char *const want[] = { "task-clock", "page-faults", "context-switches" };

	CHECK(kind && strcmp(kind, "software") == 0, "%s: meta.json pmu_kind is \"software\" (%s)", r->name, kind ? kind : "absent");
	if (stats_json_strings(&p->meta, "pmu_events", &events, &nevents) < 0)
		nevents = 0;
	size_t found = 0;
	for (size_t i = 0; i < 3; i++)
		for (size_t k = 0; k < nevents; k++)
			if (strcmp(events[k], want[i]) == 0)
				found++;
	CHECK(nevents == 3 && found == 3, "%s: meta.json pmu_events are task-clock, page-faults, context-switches (%zu "
	      "events, %zu of those)", r->name, nevents, found);
}

/* ------------------------------------------------------------------ callchain */

static const char *const chain[] = { "chain_d", "chain_c", "chain_b", "chain_a", "main" };

static bool same_frames(const struct fl_stack *a, const struct fl_stack *b)
{
	return a->nframes == b->nframes && a->flags == b->flags &&
	       memcmp(a->frames, b->frames, a->nframes * sizeof(a->frames[0])) == 0;
}

/* The callchain run's checks; also the -s 1 baseline of `sample`. */
static void check_callchain(const struct run *r, uint64_t mib)
{
	const struct fl_process *p = r->proc;
	const struct mark *array = need_mark(r, 'r', "array");
	const struct mark *pass0 = need_mark(r, 'w', "pass0"), *pass1 = need_mark(r, 'w', "pass1");
	const struct mark *check = need_mark(r, 'w', "check");
	static const char *const check_chain[] = { "check_all", "main" };

	/* every fault of the passes, first touches and refaults: chain_d < ... < main */
	struct selection sel0 = { array, pass0, 0, true }, sel1 = { array, pass1, 0, true };
	size_t n0 = check_stacks(r, "pass 0 (first touch)", &sel0, chain, 5, true);
	size_t n1 = check_stacks(r, "pass 1 (refaults)", &sel1, chain, 5, true);
	uint64_t pages = mib * 1048576 / p->page_size;
	CHECK(n0 >= pages, "%s: pass 0 faults on the array: %zu (>= its %" PRIu64 " pages)", r->name, n0, pages);
	size_t refaults1 = 0;
	for (size_t i = 0; i < p->nfaults; i++)
		if (selected(p, &p->faults[i], &sel1) && p->faults[i].rec.kind != FL_FAULT_FIRST_TOUCH)
			refaults1++;
	/* -L 4 MiB holds at most 1024 pages: at least pages - 1024 of them must come back in pass 1,
	 * whatever the eviction policy */
	CHECK(refaults1 >= pages - 1024, "%s: pass 1 refaults on the array: %zu (>= %" PRIu64 " pages - the 1024 that -L "
	      "holds)", r->name, refaults1, pages);

	/* deduplication: the passes' faults share a few stack ids, the main one defined once */
	uint32_t ids[64];
	size_t nids = 0, counts[64] = { 0 }, overflow = 0;
	for (size_t i = 0; i < p->nfaults; i++) {
		const struct fl_fault *f = &p->faults[i];
		if (!selected(p, f, &sel0) && !selected(p, f, &sel1))
			continue;
		const struct fl_fault_context *c = fl_fault_context(p, f);
		if (!c || c->stack_id == 0) /* none, or dropped late */
			continue;
		size_t k = 0;
		while (k < nids && ids[k] != c->stack_id)
			k++;
		if (k == nids) {
			if (nids == 64) {
				overflow++;
				continue;
			}
			ids[nids++] = c->stack_id;
		}
		counts[k]++;
	}
	size_t top = 0;
	for (size_t k = 1; k < nids; k++)
		if (counts[k] > counts[top])
			top = k;
	CHECK(nids >= 1 && nids <= 4 && overflow == 0, "%s: the %zu faults of the passes share %zu stack id%s (<= 4; the "
	      "most common one, id %u, covers %zu)", r->name, n0 + n1, nids + overflow, nids == 1 ? "" : "s",
	      nids ? ids[top] : 0, nids ? counts[top] : 0);
	const struct fl_stack *main_stack = nids ? fl_process_stack(p, ids[top]) : NULL;
	size_t definitions = 0;
	for (size_t i = 0; main_stack && i < p->nstacks; i++)
		if (same_frames(&p->stacks[i], main_stack))
			definitions++;
	CHECK(definitions == 1, "%s: the chain_d stack is defined once in the stacks file (%zu definitions; %zu stacks in "
	      "all for %zu faults)", r->name, definitions, p->nstacks, p->nfaults);
	CHECK(p->nstacks <= 200, "%s: the stacks file holds few stacks: %zu for %zu faults", r->name, p->nstacks, p->nfaults);

	/* the verification: check_all (verify_words inlined) < main */
	struct selection selc = { array, check, 0, true };
	size_t nc = check_stacks(r, "verification pass", &selc, check_chain, 2, true);
	CHECK(nc >= 1, "%s: the verification pass refaults the array (%zu faults)", r->name, nc);
}

/* Where the stacks came from: with FAULTLINE_STACK_SOURCE=signal every one by signal; by default,
 * where this machine lets a thread sample its page faults, all but each thread's first from
 * perf samples (runtime/fault_sample.c). */
static void check_stack_source(const struct run *r)
{
	uint64_t sampled = stat_u64(r, "stacks_from_samples"), signals = stat_u64(r, "stack_signals_sent");
	uint64_t contexts = stat_u64(r, "contexts_written");
	const char *source = getenv("FAULTLINE_STACK_SOURCE");
	CHECK(sampled + signals == contexts, "%s: contexts_written %" PRIu64 " = stacks_from_samples %" PRIu64
	      " + stack_signals_sent %" PRIu64, r->name, contexts, sampled, signals);
	if (source && strcmp(source, "signal") == 0) {
		CHECK(sampled == 0, "%s: FAULTLINE_STACK_SOURCE=signal: no stack from a sample (%" PRIu64 ")", r->name,
		      sampled);
		return;
	}
	struct perf_event_attr attr = { .size = sizeof(attr), .type = PERF_TYPE_SOFTWARE,
					.config = PERF_COUNT_SW_PAGE_FAULTS, .sample_period = 1,
					.sample_type = PERF_SAMPLE_REGS_USER, .sample_regs_user = 0x1ff,
					.exclude_kernel = 1, .exclude_hv = 1 };
	int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd < 0) {
		printf("# %s: this machine does not let a thread sample its page faults: stacks by signal\n", r->name);
		return;
	}
	close(fd);
	CHECK(sampled * 100 >= contexts * 99, "%s: stacks from perf samples: %" PRIu64 " of %" PRIu64
	      " (want >= 99 %%: all but each thread's first)", r->name, sampled, contexts);
}

static void test_callchain(struct run *base)
{
	static const char *const opts[] = { "-s", "1", "-L", "4", "-M", "256", NULL };
	static const char *const args[] = { "16", "2", NULL };
	printf("# --- callchain: main -> chain_a -> chain_b -> chain_c -> chain_d writes the heap\n");
	if (!record(base, "callchain", opts, "st_callchain", args))
		return;
	check_callchain(base, 16);
	CHECK(base->proc->ncontexts == base->proc->nfaults, "%s: -s 1: every fault has a context (%zu contexts, %zu "
	      "faults)", base->name, base->proc->ncontexts, base->proc->nfaults);
	check_pmu_meta(base);
	check_pmu_monotonic(base);
	check_stack_source(base);
}

/* ------------------------------------------------------------------ sample */

/* For a failure of `sample`: which pages of the array faulted a different number of times in each
 * phase of the two runs (the program's accesses are the same in both). */
static void count_phase_faults(const struct run *r, unsigned *counts, size_t pages, uint32_t *first_seq, uint8_t *first_handler)
{
	static const char *const phases[] = { "pass0", "pass1", "check" };
	const struct fl_process *p = r->proc;
	const struct mark *array = need_mark(r, 'r', "array");
	for (size_t i = 0; i < p->nfaults; i++) {
		const struct fl_fault *f = &p->faults[i];
		if (!in_range(array, f->rec.addr))
			continue;
		size_t page = f->rec.addr / p->page_size - array->a / p->page_size;
		for (size_t ph = 0; ph < 3 && page < pages; ph++) {
			if (!in_window(need_mark(r, 'w', phases[ph]), p, f))
				continue;
			if (ph == 0 && counts[page] == 0)
				first_seq[page] = f->rec.seq, first_handler[page] = f->rec.handler;
			counts[ph * pages + page]++;
		}
	}
}

static void explain_count_difference(const struct run *a, const struct run *b)
{
	static const char *const phases[] = { "pass0", "pass1", "check" };
	size_t pages = (size_t)range_pages(need_mark(a, 'r', "array"), a->proc->page_size) + 1;
	unsigned *ca = calloc(3 * pages, sizeof(unsigned)), *cb = calloc(3 * pages, sizeof(unsigned));
	uint32_t *seq_a = calloc(pages, sizeof(uint32_t)), *seq_b = calloc(pages, sizeof(uint32_t));
	uint8_t *h_a = calloc(pages, 1), *h_b = calloc(pages, 1);
	size_t shown = 0, differing = 0;
	if (!ca || !cb || !seq_a || !seq_b || !h_a || !h_b)
		die("out of memory");
	count_phase_faults(a, ca, pages, seq_a, h_a);
	count_phase_faults(b, cb, pages, seq_b, h_b);
	for (size_t i = 0; i < 3 * pages; i++) {
		if (ca[i] == cb[i])
			continue;
		size_t page = i % pages;
		differing++;
		if (shown++ < 10)
			printf("# sample: array page %zu, %s: %u faults with %s, %u with %s (its pass-0 fault: seq %u handler %u; "
			       "seq %u handler %u)\n", page, phases[i / pages], ca[i], a->name, cb[i], b->name, seq_a[page],
			       h_a[page], seq_b[page], h_b[page]);
	}
	printf("# sample: %zu (page, phase) fault counts on the array differ between the runs%s\n", differing,
	       differing ? "" : ": the difference is outside the array");
	free(ca), free(cb), free(seq_a), free(seq_b), free(h_a), free(h_b);
}

/* Fault counts per kind of two runs of the same deterministic program must be identical. Returns
 * whether they are. */
static bool same_counts(const struct run *a, const struct run *b)
{
	static const char *const keys[] = { "faults_total", "faults_first_touch", "faults_refault", "faults_soft",
					    "faults_concurrent" };
	bool same = true;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		uint64_t x = stat_u64(a, keys[i]), y = stat_u64(b, keys[i]);
		CHECK(x == y, "sample: %s identical in %s and %s (%" PRIu64 ", %" PRIu64 ")", keys[i], a->name, b->name, x, y);
		same &= x == y;
	}
	return same;
}

/* -s 10: a tenth of the faults have contexts, the others are not flagged NO_STACK. */
static void check_sampled(const struct run *r)
{
	const struct fl_process *p = r->proc;
	double share = p->nfaults ? (double)p->ncontexts / (double)p->nfaults : 0;
	CHECK(share >= 0.07 && share <= 0.13, "sample: %s: %zu contexts for %zu faults = %.3f (0.1 +- 30 %%)", r->name,
	      p->ncontexts, p->nfaults, share);
	size_t flagged = 0;
	for (size_t i = 0; i < p->nfaults; i++)
		if (!fl_fault_context(p, &p->faults[i]) && (p->faults[i].rec.flags & FL_FAULT_NO_STACK) &&
		    p->faults[i].rec.kind != FL_FAULT_CONCURRENT)
			flagged++;
	CHECK(flagged == 0, "sample: %s: unsampled faults are not flagged NO_STACK (%zu are)", r->name, flagged);
	CHECK(stat_u64(r, "contexts_written") == p->ncontexts, "sample: %s: contexts_written = contexts in the file (%zu)",
	      r->name, p->ncontexts);
}

static void test_sample(struct run *base)
{
	static const char *const opts10[] = { "-s", "10", "-L", "4", "-M", "256", NULL };
	static const char *const opts_nolimit1[] = { "-s", "1", "-M", "256", NULL };
	static const char *const opts_nolimit10[] = { "-s", "10", "-M", "256", NULL };
	static const char *const args[] = { "16", "2", NULL };
	struct run s10, n1, n10;

	printf("# --- sample: -s 10 against -s 1\n");
	/* without -L: first touches only, the same in every run whatever the runtime's timing */
	if (record(&n1, "sample-nolimit-s1", opts_nolimit1, "st_callchain", args) &&
	    record(&n10, "sample-nolimit-s10", opts_nolimit10, "st_callchain", args)) {
		same_counts(&n1, &n10);
		check_sampled(&n10);
	}
	run_free(&n1);
	run_free(&n10);

	/* with -L 4 (refaults too): against the callchain run (-s 1) */
	if (!base->proc) {
		CHECK(false, "sample: the -s 1 baseline (callchain) did not record");
		return;
	}
	if (!record(&s10, "sample-s10", opts10, "st_callchain", args)) {
		run_free(&s10);
		return;
	}
	if (!same_counts(base, &s10))
		explain_count_difference(base, &s10);
	check_sampled(&s10);

	/* the sampled faults' stacks are as right as with -s 1 */
	const struct fl_process *p = s10.proc;
	const struct mark *array = need_mark(&s10, 'r', "array");
	const struct mark *pass0 = need_mark(&s10, 'w', "pass0");
	size_t n = 0, bad = 0;
	for (size_t i = 0; i < p->nfaults; i++) {
		const struct fl_fault *f = &p->faults[i];
		if (!in_range(array, f->rec.addr) || !in_window(pass0, p, f) || !fl_fault_context(p, f))
			continue;
		n++;
		if (!stack_is(p, f->rec.time_ns, context_stack(p, f), chain, 5, true))
			bad++;
	}
	CHECK(n > 0 && bad == 0, "sample: -s 10: %zu of %zu sampled pass-0 faults have a stack other than chain_d < chain_c "
	      "< chain_b < chain_a < main", bad, n);
	run_free(&s10);
}

/* ------------------------------------------------------------------ sysread */

static void test_sysread(void)
{
	static const char *const opts[] = { "-L", "4", "-M", "256", NULL };
	const char *args[] = { "16", work_dir, NULL };
	struct steps {
		const char *name, *caller;
		bool fresh;
	} steps[] = {
		{ "pipe", "read_from_pipe", false },
		{ "file", "read_from_file", false },
		{ "zero_fresh", "read_from_zero", true },
		{ "zero_evicted", "read_from_zero", false },
	};
	struct run r;

	printf("# --- sysread: faults inside read()\n");
	if (!record(&r, "sysread", opts, "st_sysread", args)) {
		run_free(&r);
		return;
	}
	CHECK(strstr(r.out, "sysread ok") != NULL, "sysread: the program's reads were full and its data right");
	const struct fl_process *p = r.proc;
	for (size_t s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
		const struct mark *range = need_mark(&r, 'r', steps[s].name), *window = need_mark(&r, 'w', steps[s].name);
		const char *want[] = { steps[s].caller, "main" };
		char what[64];
		snprintf(what, sizeof(what), "faults inside read() into %s", steps[s].name);
		struct selection sel = { range, window, 0, true };
		size_t n = check_stacks(&r, what, &sel, want, 2, false);
		uint64_t pages = range_pages(range, p->page_size);
		/* distinct pages faulted inside the call */
		size_t distinct = 0;
		bool *seen = calloc(pages, 1);
		if (!seen)
			die("out of memory");
		for (size_t i = 0; i < p->nfaults; i++) {
			const struct fl_fault *f = &p->faults[i];
			if (!selected(p, f, &sel))
				continue;
			uint64_t page = f->rec.addr / p->page_size - range->a / p->page_size;
			if (page < pages && !seen[page]) {
				seen[page] = true;
				distinct++;
			}
		}
		free(seen);
		if (steps[s].fresh)
			CHECK(distinct == pages, "sysread: %s: every one of its %" PRIu64 " never-touched pages faults inside "
			      "read() (%zu do, %zu faults)", steps[s].name, pages, distinct, n);
		else
			CHECK(distinct >= (pages + 1) / 2, "sysread: %s: evicted pages fault inside read(): %zu of %" PRIu64
			      " pages (want at least half; %zu faults)", steps[s].name, distinct, pages, n);
	}
	run_free(&r);
}

/* ------------------------------------------------------------------ threads */

static void test_threads(void)
{
	static const char *const opts[] = { "-c", "2", "-L", "16", "-M", "512", NULL };
	static const char *const args[] = { "4", "10000", "2", "256", NULL };
	const unsigned nthreads = 4, pages = 10000, passes = 2;
	const unsigned limit_pages = 16 * 1048576 / 4096; /* at most this many pages survive a pass */
	struct run r;

	printf("# --- threads: 4 threads x 20000 faults, -c 2\n");
	if (!record(&r, "threads", opts, "st_threads", args)) {
		run_free(&r);
		return;
	}
	const struct fl_process *p = r.proc;
	uint64_t total = stat_u64(&r, "faults_total");
	CHECK(p->nfaults == total, "threads: fault records = faults_total (%zu, %" PRIu64 ")", p->nfaults, total);
	CHECK(total >= (uint64_t)nthreads * (pages * passes - limit_pages), "threads: faults_total %" PRIu64 " >= %u x "
	      "(%u x %u - %u pages -L holds)", total, nthreads, pages, passes, limit_pages);
	CHECK(stat_u64(&r, "records_dropped") == 0, "threads: records_dropped = 0");
	CHECK(stat_u64(&r, "side_bytes_dropped") == 0, "threads: side_bytes_dropped = 0");

	/* seqs: 0 .. N-1, each exactly once */
	unsigned char *seen = calloc(p->nfaults + 1, 1);
	size_t out_of_range = 0, dup = 0;
	if (!seen)
		die("out of memory");
	for (size_t i = 0; i < p->nfaults; i++) {
		uint32_t seq = p->faults[i].rec.seq;
		if (seq >= p->nfaults)
			out_of_range++;
		else if (seen[seq]++)
			dup++;
	}
	size_t gaps = 0;
	for (size_t s = 0; s < p->nfaults; s++)
		gaps += !seen[s];
	free(seen);
	CHECK(out_of_range == 0 && dup == 0 && gaps == 0, "threads: seqs are 0..%zu each exactly once (%zu beyond, %zu "
	      "duplicates, %zu missing)", p->nfaults ? p->nfaults - 1 : 0, out_of_range, dup, gaps);

	/* contexts and stacks */
	size_t no_context = 0, no_stack = 0, wrong_tid = 0, flagged = 0, concurrent = 0, concurrent_bare = 0;
	for (size_t i = 0; i < p->nfaults; i++) {
		const struct fl_fault *f = &p->faults[i];
		const struct fl_fault_context *c = fl_fault_context(p, f);
		const struct fl_stack *s = context_stack(p, f);
		if (c && c->tid != f->rec.tid)
			wrong_tid++;
		if (f->rec.kind == FL_FAULT_CONCURRENT) {
			concurrent++;
			if (!s && !(f->rec.flags & FL_FAULT_NO_STACK))
				concurrent_bare++;
			continue;
		}
		if (f->rec.flags & FL_FAULT_NO_STACK)
			flagged++;
		if (!c) {
			if (no_context++ < EXAMPLES)
				printf("# threads: %s fault seq %" PRIu64 " tid %u flags %#x has no context\n",
				       fl_fault_kind_name(f->rec.kind), f->rec.seq, f->rec.tid, f->rec.flags);
		} else if (!s || s->nframes == 0) {
			no_stack++;
		}
	}
	uint64_t late = late_stacks_allowed(&r);
	CHECK(no_context == 0 && no_stack <= late, "threads: every non-concurrent fault has a context with a stack (%zu "
	      "without a context, %zu without a stack, of %zu; late_stacks_dropped = %" PRIu64 ")", no_context, no_stack,
	      p->nfaults - concurrent, late);
	CHECK(flagged == 0, "threads: no non-concurrent fault is flagged NO_STACK (%zu are)", flagged);
	CHECK(concurrent_bare == 0, "threads: every concurrent fault has a stack or the NO_STACK flag (%zu of %zu have "
	      "neither)", concurrent_bare, concurrent);
	CHECK(wrong_tid == 0, "threads: every context names its fault's thread (%zu do not)", wrong_tid);
	CHECK(stat_u64(&r, "stack_signals_failed") == 0, "threads: stack_signals_failed = 0");
	CHECK(stat_u64(&r, "contexts_written") == p->ncontexts, "threads: contexts_written = contexts in the file (%zu)",
	      p->ncontexts);

	/* per thread: its own buffer's faults, all from thread_touch < work */
	static const char *const touch[] = { "thread_touch", "work" };
	for (unsigned t = 0; t < nthreads; t++) {
		char name[32], what[64];
		snprintf(name, sizeof(name), "worker%u", t);
		const struct mark *tid = need_mark(&r, 't', name);
		snprintf(name, sizeof(name), "own%u", t);
		const struct mark *own = need_mark(&r, 'r', name);
		struct selection sel = { own, NULL, (uint32_t)tid->a, true }; /* concurrent ones may lack a stack */
		snprintf(what, sizeof(what), "thread %u's own buffer (non-concurrent)", t);
		size_t n = check_stacks(&r, what, &sel, touch, 2, true);
		size_t first = 0, others = 0, foreign = 0;
		for (size_t i = 0; i < p->nfaults; i++) {
			const struct fl_fault *f = &p->faults[i];
			if (!in_range(own, f->rec.addr))
				continue;
			if (f->rec.tid != tid->a)
				foreign++;
			else if (f->rec.kind == FL_FAULT_FIRST_TOUCH)
				first++;
			else
				others++;
		}
		CHECK(first == pages && others >= pages - limit_pages && foreign == 0, "threads: thread %u: %zu non-concurrent "
		      "faults on its buffer: %zu first touches (want %u), %zu other faults (want >= %u), %zu by other "
		      "threads (want 0)", t, n, first, pages, others, pages - limit_pages, foreign);
	}

	/* PMU (issue 5) */
	check_pmu_meta(&r);
	check_pmu_monotonic(&r);
	run_free(&r);
}

/* ------------------------------------------------------------------ concurrent */

/* Faults whose page another thread's fault brought in (kind concurrent) have stacks too: the
 * handler takes every stack of a batch of messages from the faults' samples before it installs
 * any page of the batch (an install wakes every thread waiting on the page). With one handler
 * every concurrent message is read in the same batch as the fault that installs its page. */
static void test_concurrent(void)
{
	static const char *const opts[] = { "-c", "1", "-M", "512", NULL };
	static const char *const args[] = { "4", "64", "1", "4096", NULL };
	static const char *const want[] = { "shared_touch", "work" };
	struct run r;

	printf("# --- concurrent: 4 threads on 4096 shared pages, -c 1\n");
	if (!record(&r, "concurrent", opts, "st_threads", args)) {
		run_free(&r);
		return;
	}
	const struct fl_process *p = r.proc;
	const struct mark *shared = need_mark(&r, 'r', "shared");
	size_t concurrent = 0, with_stack = 0, wrong = 0;
	char desc[2048];
	for (size_t i = 0; i < p->nfaults; i++) {
		const struct fl_fault *f = &p->faults[i];
		if (f->rec.kind != FL_FAULT_CONCURRENT || !in_range(shared, f->rec.addr))
			continue;
		concurrent++;
		const struct fl_stack *s = context_stack(p, f);
		if (!s || s->nframes == 0)
			continue;
		with_stack++;
		if (stack_is(p, f->rec.time_ns, s, want, 2, true))
			continue;
		if (wrong++ < EXAMPLES)
			printf("# concurrent: fault seq %" PRIu64 " tid %u: stack %s\n", f->rec.seq, f->rec.tid,
			       describe_stack(p, f->rec.time_ns, s, desc, sizeof(desc)));
	}
	CHECK(concurrent >= 10, "concurrent: the threads' faults on the shared pages include concurrent ones (%zu, want "
	      ">= 10)", concurrent);
	CHECK(with_stack * 10 >= concurrent * 9, "concurrent: %zu of %zu concurrent faults have a stack (want >= 90 %%)",
	      with_stack, concurrent);
	CHECK(wrong == 0, "concurrent: %zu of %zu stacks of concurrent faults are not shared_touch < work (exact PC)",
	      wrong, with_stack);
	run_free(&r);
}

/* ------------------------------------------------------------------ allocsites */

static void test_allocsites(void)
{
	static const char *const opts[] = { "-L", "4", "-M", "256", NULL };
	static const char *const args[] = { "8", NULL };
	struct run r;

	printf("# --- allocsites: two call sites, faults 3:1\n");
	if (!record(&r, "allocsites", opts, "st_allocsites", args)) {
		run_free(&r);
		return;
	}
	const struct fl_process *p = r.proc;
	const struct mark *ma = need_mark(&r, 'r', "A"), *mb = need_mark(&r, 'r', "B");
	const struct fl_alloc_record *ra = NULL, *rb = NULL;
	size_t na = 0, nb = 0;
	for (size_t i = 0; i < p->nallocs; i++) {
		const struct fl_alloc_record *a = &p->allocs[i];
		if (a->kind != FL_ALLOC_MALLOC && a->kind != FL_ALLOC_MMAP)
			continue;
		if (a->addr == ma->a && a->size == ma->b)
			ra = a, na++;
		if (a->addr == mb->a && a->size == mb->b)
			rb = a, nb++;
	}
	CHECK(na == 1 && nb == 1, "allocsites: one allocation record each for A and B (%zu, %zu)", na, nb);
	if (!ra || !rb) {
		run_free(&r);
		return;
	}

	/* the allocation stacks: alloc_a < main and alloc_b < main */
	const struct fl_stack *sa = fl_process_stack(p, ra->stack_id), *sb = fl_process_stack(p, rb->stack_id);
	static const char *const want_a[] = { "alloc_a", "main" }, *const want_b[] = { "alloc_b", "main" };
	char desc[2048];
	bool ok_a = stack_is(p, ra->time_ns, sa, want_a, 2, false), ok_b = stack_is(p, rb->time_ns, sb, want_b, 2, false);
	CHECK(ok_a, "allocsites: A's allocation stack is alloc_a < main: %s", describe_stack(p, ra->time_ns, sa, desc, sizeof(desc)));
	CHECK(ok_b, "allocsites: B's allocation stack is alloc_b < main: %s", describe_stack(p, rb->time_ns, sb, desc, sizeof(desc)));
	CHECK(ra->stack_id != rb->stack_id, "allocsites: the two allocations have different stacks (%u, %u)", ra->stack_id,
	      rb->stack_id);

	/* the faults: attributed 3:1, every fault inside an array to its record */
	size_t fa = 0, fb = 0, misattributed = 0, inside_a = 0, inside_b = 0;
	for (size_t i = 0; i < p->nfaults; i++) {
		const struct fl_fault *f = &p->faults[i];
		const struct fl_alloc_record *a = fl_fault_alloc(p, f);
		fa += a == ra;
		fb += a == rb;
		if (in_range(ma, f->rec.addr)) {
			inside_a++;
			misattributed += a != ra;
		} else if (in_range(mb, f->rec.addr)) {
			inside_b++;
			misattributed += a != rb;
		}
	}
	CHECK(misattributed == 0, "allocsites: every fault inside A or B is attributed to its allocation (%zu of %zu are not)",
	      misattributed, inside_a + inside_b);
	uint64_t pages = 8 * 1048576 / p->page_size;
	CHECK(fb >= pages, "allocsites: B takes a fault per page (%zu faults, %" PRIu64 " pages)", fb, pages);
	double ratio = fb ? (double)fa / (double)fb : 0;
	CHECK(ratio >= 2.85 && ratio <= 3.15, "allocsites: faults split %zu:%zu = %.3f between A and B (3 +- 5 %%)", fa, fb,
	      ratio);
	run_free(&r);
}

/* ------------------------------------------------------------------ allocation aggregates */

#define AH_N 200000ull   /* alloc_heavy's N: a multiple of 16 and of 1000 */

/* The site record whose stack's first frames are FN < main, or NULL. */
static const struct fl_site_record *site_named(const struct fl_process *p, const char *fn)
{
	const char *const want[] = { fn, "main" };
	const struct fl_site_record *found = NULL;
	for (size_t i = 0; i < p->nsites; i++)
		if (stack_is(p, 0, fl_process_stack(p, p->sites[i].stack_id), want, 2, false))
			found = found ? (const struct fl_site_record *)-1 : &p->sites[i];
	return found == (const struct fl_site_record *)-1 ? NULL : found;
}

static void check_site(const char *what, const struct fl_site_record *s, uint64_t allocs, uint64_t bytes, uint64_t peak)
{
	CHECK(s != NULL, "%s: exactly one site record names it", what);
	if (!s)
		return;
	CHECK(s->allocs == allocs && s->frees == allocs && s->bytes == bytes && s->live_peak_bytes == peak &&
		      s->live_bytes == 0,
	      "%s: allocs %llu frees %llu bytes %llu peak %llu live %llu (want %llu, %llu, %llu, %llu)", what,
	      (unsigned long long)s->allocs, (unsigned long long)s->frees, (unsigned long long)s->bytes,
	      (unsigned long long)s->live_peak_bytes, (unsigned long long)s->live_bytes, (unsigned long long)allocs,
	      (unsigned long long)bytes, (unsigned long long)peak, 0ull);
}

/* The faults inside the array: each joined to the array's object and site. Returns the count. */
static size_t check_array_faults(const struct fl_process *p, const struct mark *array, const struct fl_site_record *site)
{
	size_t n = 0, wrong = 0;
	for (size_t i = 0; i < p->nfaults; i++) {
		const struct fl_fault *f = &p->faults[i];
		if (!in_range(array, f->rec.addr))
			continue;
		const struct fl_alloc_record *a = fl_fault_alloc(p, f);
		n++;
		wrong += !a || a->addr != array->a || a->size != array->b || (site && a->stack_id != site->stack_id) ||
			 f->rec.obj_addr != array->a;
	}
	CHECK(wrong == 0, "alloc: every fault in the array is joined to its object and site (%zu of %zu are not)", wrong, n);
	return n;
}

/* Default (sampled) log: exact per-site aggregates, a bounded sampled event stream. */
static void test_allocagg(void)
{
	static const char *const opts[] = { "-M", "256", NULL };
	static const char *const args[] = { "200000", NULL };
	struct run r;

	printf("# --- allocagg: per-site aggregates of alloc_heavy, known by construction\n");
	if (!record(&r, "allocagg", opts, "alloc_heavy", args)) {
		run_free(&r);
		return;
	}
	const struct fl_process *p = r.proc;
	const struct mark *array = need_mark(&r, 'r', "array");
	const struct fl_site_record *churn = site_named(p, "churn_one"), *batch = site_named(p, "batch_fill");
	const struct fl_site_record *arr = site_named(p, "make_array");
	CHECK(p->nsites >= 3 && !p->alloc_log_complete && p->fault_objects, "allocagg: %zu sites, sampled log, object faults",
	      p->nsites);
	check_site("allocagg: churn_one", churn, AH_N, AH_N * 76, 136);
	check_site("allocagg: batch_fill", batch, AH_N / 10, AH_N / 10 * 64, 6400);
	check_site("allocagg: make_array", arr, 1, 8 << 20, 8 << 20);
	size_t in_array = check_array_faults(p, array, arr);
	if (arr)
		CHECK(arr->objects_faulted == 1 && arr->faults == in_array && in_array == 2048,
		      "allocagg: array site: %llu objects faulted, %llu faults (%zu fault records in it, want 2048)",
		      (unsigned long long)arr->objects_faulted, (unsigned long long)arr->faults, in_array);

	/* the sampled stream: about one MALLOC per 512 KiB allocated, plus the array (>= 1 page) */
	size_t sampled = 0, logged_array = 0, mallocs = 0;
	for (size_t i = 0; i < p->nallocs; i++) {
		const struct fl_alloc_record *a = &p->allocs[i];
		mallocs += a->kind == FL_ALLOC_MALLOC && !(a->flags & FL_ALLOC_UNLOGGED);
		sampled += (a->flags & FL_ALLOC_SAMPLED) != 0;
		logged_array += a->kind == FL_ALLOC_MALLOC && a->addr == array->a && !(a->flags & FL_ALLOC_UNLOGGED);
	}
	uint64_t bytes = AH_N * 76 + AH_N / 10 * 64;
	CHECK(logged_array == 1, "allocagg: the array's allocation is logged (%zu records)", logged_array);
	CHECK(sampled >= bytes / (512 << 10) / 3 && sampled <= bytes / (512 << 10) * 3 + 8 && mallocs < 200,
	      "allocagg: %zu sampled allocations for %llu bytes (~1 per 512 KiB), %zu logged in all", sampled,
	      (unsigned long long)bytes, mallocs);
	run_free(&r);
}

/* --alloc-log full: every event comes back from allocs.zst, >= 10x smaller than 40-byte records. */
static void test_allocfull(void)
{
	static const char *const opts[] = { "-M", "256", "--alloc-log", "full", NULL };
	static const char *const args[] = { "200000", NULL };
	struct run r;
	struct stat st;
	char path[PATH_MAX];

	printf("# --- allocfull: --alloc-log full round trip\n");
	if (!record(&r, "allocfull", opts, "alloc_heavy", args)) {
		run_free(&r);
		return;
	}
	const struct fl_process *p = r.proc;
	const struct mark *array = need_mark(&r, 'r', "array");
	const struct fl_site_record *churn = site_named(p, "churn_one"), *batch = site_named(p, "batch_fill");
	const struct fl_site_record *arr = site_named(p, "make_array");
	CHECK(p->alloc_log_complete && p->unlogged_objects == 0, "allocfull: complete log (%zu objects not in it)",
	      p->unlogged_objects);
	uint64_t by_site[3] = { 0 }, frees = 0, mallocs = 0, zero_id = 0;
	for (size_t i = 0; i < p->nallocs; i++) {
		const struct fl_alloc_record *a = &p->allocs[i];
		if (a->kind == FL_ALLOC_FREE)
			frees++;
		if (a->kind != FL_ALLOC_MALLOC)
			continue;
		mallocs++;
		zero_id += a->alloc_id == 0;
		by_site[0] += churn && a->stack_id == churn->stack_id;
		by_site[1] += batch && a->stack_id == batch->stack_id;
		by_site[2] += arr && a->stack_id == arr->stack_id && a->addr == array->a && a->size == array->b;
	}
	CHECK(by_site[0] == AH_N && by_site[1] == AH_N / 10 && by_site[2] == 1,
	      "allocfull: MALLOC events per site %llu, %llu, %llu (want %llu, %llu, 1)", (unsigned long long)by_site[0],
	      (unsigned long long)by_site[1], (unsigned long long)by_site[2], AH_N, AH_N / 10);
	CHECK(frees + 8 >= mallocs && frees <= mallocs && zero_id == 0, "allocfull: %llu mallocs, %llu frees",
	      (unsigned long long)mallocs, (unsigned long long)frees);
	check_site("allocfull: churn_one", churn, AH_N, AH_N * 76, 136);
	check_array_faults(p, array, arr);
	pathf(path, sizeof(path), "%s/%s", p->dir, FL_FILE_NAME_ALLOCS_ZSTD);
	if (stat(path, &st) != 0)
		st.st_size = -1;
	CHECK(st.st_size > 0 && (uint64_t)st.st_size * 10 <= p->nallocs * sizeof(struct fl_alloc_record),
	      "allocfull: allocs.zst holds %zu events in %lld bytes (want <= 1/10 of %zu)", p->nallocs,
	      (long long)st.st_size, p->nallocs * sizeof(struct fl_alloc_record));
	run_free(&r);
}

/* ------------------------------------------------------------------ sigblock */

static void test_sigblock(void)
{
	static const char *const opts[] = { "-L", "4", "-M", "256", NULL };
	static const char *const args[] = { "4096", "2", NULL };
	static const char *const names[] = { "blocker_self", "blocker_inherited" };
	static const char *const touch[] = { "blocked_touch", "blocker_main" };
	const uint64_t pages = 4096, passes = 2, limit_pages = 1024;
	struct run r;

	printf("# --- sigblock: threads that block every signal\n");
	if (!record(&r, "sigblock", opts, "st_sigblock", args)) {
		run_free(&r);
		return;
	}
	CHECK(strstr(r.out, "sigblock ok") != NULL, "sigblock: both threads completed with their masks honoured");
	const struct fl_process *p = r.proc;
	for (size_t t = 0; t < 2; t++) {
		const struct mark *tid = need_mark(&r, 't', names[t]), *range = need_mark(&r, 'r', names[t]);
		size_t n = 0, bare = 0, late = 0;
		for (size_t i = 0; i < p->nfaults; i++) {
			const struct fl_fault *f = &p->faults[i];
			if (f->rec.tid != tid->a)
				continue;
			n++;
			if (f->rec.kind != FL_FAULT_CONCURRENT && !context_stack(p, f)) {
				if (stack_dropped_late(p, f))
					late++;
				else
					bare++;
			}
		}
		uint64_t allowed = late_stacks_allowed(&r);
		CHECK(n >= pages * passes - limit_pages && bare == 0 && late <= allowed, "sigblock: %s (tid %" PRIu64 "): %zu "
		      "faults (want >= %" PRIu64 "), %zu without a context (want 0), %zu with a context but no stack (want <= "
		      "late_stacks_dropped = %" PRIu64 ")", names[t], tid->a, n, pages * passes - limit_pages, bare, late,
		      allowed);
		struct selection sel = { range, NULL, (uint32_t)tid->a, true };
		char what[64];
		snprintf(what, sizeof(what), "%s's buffer", names[t]);
		check_stacks(&r, what, &sel, touch, 2, true);
	}
	CHECK(stat_u64(&r, "stack_signals_failed") == 0, "sigblock: stack_signals_failed = 0");
	run_free(&r);
}

/* ------------------------------------------------------------------ main */

static bool wanted(int argc, char **argv, const char *section)
{
	if (argc < 2)
		return true;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], section) == 0)
			return true;
	return false;
}

int main(int argc, char **argv)
{
	static const char *const sections[] = { "callchain", "sysread", "threads", "concurrent", "sample", "allocsites",
						"sigblock", "allocagg", "allocfull" };
	struct run base = { 0 };

	for (int i = 1; i < argc; i++) {
		bool known = false;
		for (size_t k = 0; k < sizeof(sections) / sizeof(sections[0]); k++)
			known |= strcmp(argv[i], sections[k]) == 0;
		if (!known) {
			fprintf(stderr, "usage: test_stacks_e2e [SECTION...]   sections: callchain sysread threads "
					"concurrent sample allocsites sigblock allocagg allocfull\n");
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	check_print_ok = true;
	setup_paths();
	sym = symbolizer_new();
	if (!sym)
		die("symbolizer_new: out of memory");
	if (wanted(argc, argv, "callchain") || wanted(argc, argv, "sample"))
		test_callchain(&base);
	if (wanted(argc, argv, "sample"))
		test_sample(&base);
	run_free(&base);
	if (wanted(argc, argv, "sysread"))
		test_sysread();
	if (wanted(argc, argv, "threads"))
		test_threads();
	if (wanted(argc, argv, "concurrent"))
		test_concurrent();
	if (wanted(argc, argv, "allocsites"))
		test_allocsites();
	if (wanted(argc, argv, "sigblock"))
		test_sigblock();
	if (wanted(argc, argv, "allocagg"))
		test_allocagg();
	if (wanted(argc, argv, "allocfull"))
		test_allocfull();
	symbolizer_free(sym);
	cleanup_work();
	return check_summary("test_stacks_e2e");
}
