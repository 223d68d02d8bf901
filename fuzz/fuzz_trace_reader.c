/* fuzz_trace_reader.c: libFuzzer harness for the trace reader (tools/trace_reader.c) and the
 * `dump` verb on top of it.
 *
 * The input is a whole recording in the container format of fuzz/container.h (meta.json,
 * stats.json, faults, contexts, stacks, allocs, maps of up to four process directories). Each run
 * writes it into a fresh directory on tmpfs (/dev/shm, else $TMPDIR, else /tmp), opens it with
 * fl_recording_open and, when the open succeeds, walks and joins everything the reader offers and
 * checks the promises of trace_reader.h against the arrays it returned:
 *   - faults in (time, seq) order with unique seqs, inside the region, of a known kind;
 *   - every fault's context, stack and allocation join points at a record that agrees with it
 *     (same seq and tid; a defined stack; a MALLOC/MMAP holding the address, made no later);
 *   - the fault → live allocation joins equal those of a plain list model of trace.h's rules
 *     (fl_alloc_sweep is a treap: the model catches a wrong split or merge);
 *   - the time-ordered iterator yields every fault once, per pid too;
 *   - maps snapshots in time order, their tables sorted and disjoint;
 * then opens it again for streaming (fl_recording_open_stream) and, when that takes it, walks the
 * streamed faults (fault_stream.h) against the held ones: the same faults in the same order, the
 * same contexts and allocation joins, the same counts; a stream may end with an error, never
 * differ or crash. Then it runs `faultline dump DIR` on it (stdout to /dev/null). A broken promise
 * aborts, like a crash.
 * When the open fails, the reason must be non-empty (and one printable line under FUZZ_STRICT=1,
 * fuzz/check.h). Memory errors are left to the
 * sanitizers (scripts/fuzz.sh builds with ASan and UBSan).
 *
 * Built by scripts/fuzz.sh with clang -fsanitize=fuzzer, and by tests/cases/fuzz_regressions.sh
 * with gcc and fuzz/replay_main.c, which replays the corpus in `make test`. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include <sys/stat.h>
#include <unistd.h>

#include "container.h"
#include "trace_reader.h"

int cmd_dump(int argc, char **argv);

/* Faults, contexts and allocation events beyond these are not cross-checked one by one (the model
 * is quadratic); everything is still read and walked. */
#define CHECK_MAX_FAULTS 4096
#define MODEL_MAX_EVENTS 512      /* faults against the model: O(faults x events) */
#define PROBE_MAX_EVENTS 64       /* edges of every object after every event: O(events^3) */

static char base_dir[4096];   /* ours: removed at exit */
static char rec_dir[4200];    /* base_dir/faultline-fuzz: the recording */


static void remove_base(void)
{
	if (!base_dir[0])
		return;
	container_clear(rec_dir);
	rmdir(rec_dir);
	rmdir(base_dir);
}

static void setup(void)
{
	const char *candidates[] = { getenv("FUZZ_TMPDIR"), "/dev/shm", getenv("TMPDIR"), "/tmp" };

	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]) && !base_dir[0]; i++) {
		if (!candidates[i] || !*candidates[i])
			continue;
		snprintf(base_dir, sizeof(base_dir), "%s/faultline-fuzz.XXXXXX", candidates[i]);
		if (!mkdtemp(base_dir))
			base_dir[0] = '\0';
	}
	if (!base_dir[0]) {
		perror("fuzz_trace_reader: mkdtemp");
		exit(1);
	}
	snprintf(rec_dir, sizeof(rec_dir), "%s/faultline-fuzz", base_dir);
	if (mkdir(rec_dir, 0755) < 0) {
		perror("fuzz_trace_reader: mkdir");
		exit(1);
	}
	atexit(remove_base);
	/* dump writes its lines to stdout: nobody reads them. */
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, STDOUT_FILENO);
		close(null);
	}
}

/* A string the reader returned: NUL-terminated (ASan checks the walk); one line under FUZZ_STRICT. */
static size_t check_line(const char *what, const char *text)
{
	return check_text_line(what, text);
}

/* ----------------------------------------------------------------- the allocation model */

struct model_piece { uint64_t start, end; uint32_t alloc; };

struct model {
	struct model_piece *p;
	size_t n, cap;
};

static void model_push(struct model *m, uint64_t start, uint64_t end, uint32_t alloc)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 16;
		m->p = realloc(m->p, m->cap * sizeof(*m->p));
		CHECK(m->p != NULL, "out of memory");
	}
	m->p[m->n++] = (struct model_piece){ start, end, alloc };
}

/* Removes [lo, hi) from every piece: trims, splits or drops them. */
static void model_remove_range(struct model *m, uint64_t lo, uint64_t hi)
{
	size_t n = m->n;
	for (size_t i = 0; i < n; i++) {
		struct model_piece *q = &m->p[i];
		if (q->end <= lo || q->start >= hi)
			continue;
		if (q->start < lo && q->end > hi) {
			uint64_t end = q->end;
			uint32_t alloc = q->alloc;
			q->end = lo;
			model_push(m, hi, end, alloc); /* may move m->p: q is not used after */
		} else if (q->start < lo) {
			q->end = lo;
		} else if (q->end > hi) {
			q->start = hi;
		} else {
			q->start = q->end = 0; /* dropped below */
		}
	}
	size_t k = 0;
	for (size_t i = 0; i < m->n; i++) {
		if (m->p[i].start < m->p[i].end)
			m->p[k++] = m->p[i];
	}
	m->n = k;
}

static void model_apply(struct model *m, const struct fl_alloc_record *a, uint32_t index)
{
	switch (a->kind) {
	case FL_ALLOC_MALLOC:
	case FL_ALLOC_MMAP:
		if (a->size == 0)
			return;
		model_remove_range(m, a->addr, a->addr + a->size);
		model_push(m, a->addr, a->addr + a->size, index);
		return;
	case FL_ALLOC_FREE:
		for (size_t i = 0; i < m->n; i++) {
			if (m->p[i].start == a->addr) {
				m->p[i] = m->p[--m->n];
				return;
			}
		}
		return;
	case FL_ALLOC_MUNMAP:
		if (a->size)
			model_remove_range(m, a->addr, a->addr + a->size);
		return;
	default:
		CHECK(0, "alloc record of kind %u kept by the reader", a->kind);
	}
}

static uint32_t model_find(const struct model *m, uint64_t addr)
{
	for (size_t i = 0; i < m->n; i++) {
		if (m->p[i].start <= addr && addr < m->p[i].end)
			return m->p[i].alloc;
	}
	return FL_NONE;
}

/* The reader's fault → allocation joins against the model; then a sweep of our own probing the
 * edges of every object after each event. */
static void check_attribution(const struct fl_process *proc)
{
	struct model m = { NULL, 0, 0 };
	size_t next = 0;

	if (proc->nallocs > MODEL_MAX_EVENTS || proc->nfaults > CHECK_MAX_FAULTS)
		return;
	if (proc->fault_objects) {
		/* records that name their object are joined by it (trace_reader.h), not by the sweep */
		for (size_t i = 0; i < proc->nfaults; i++) {
			const struct fl_fault *f = &proc->faults[i];
			const struct fl_alloc_record *a = fl_fault_alloc(proc, f);
			CHECK(!a || ((f->rec.flags & FL_FAULT_OBJECT) && a->alloc_id == f->rec.obj_alloc_id &&
				     a->addr == f->rec.obj_addr),
			      "%s fault seq %llu joined to alloc_id %u, but its record names alloc_id %u", proc->name,
			      (unsigned long long)f->rec.seq, a ? a->alloc_id : 0, f->rec.obj_alloc_id);
		}
		return;
	}
	for (size_t i = 0; i < proc->nfaults; i++) {
		const struct fl_fault *f = &proc->faults[i];
		while (next < proc->nallocs && proc->allocs[next].time_ns <= f->rec.time_ns) {
			model_apply(&m, &proc->allocs[next], (uint32_t)next);
			next++;
		}
		uint32_t want = model_find(&m, f->rec.addr);
		CHECK(f->alloc == want, "%s fault seq %llu at 0x%llx: reader says alloc index %d, model %d",
		      proc->name, (unsigned long long)f->rec.seq, (unsigned long long)f->rec.addr, (int)f->alloc, (int)want);
	}
	m.n = 0;
	if (proc->nallocs > PROBE_MAX_EVENTS) {
		free(m.p);
		return;
	}

	struct fl_alloc_sweep sweep;
	fl_alloc_sweep_init(&sweep, proc);
	for (size_t i = 0; i < proc->nallocs; i++) {
		const struct fl_alloc_record *a = &proc->allocs[i];
		model_apply(&m, a, (uint32_t)i);
		/* Events of one time apply together: probe after the last of them. */
		if (i + 1 < proc->nallocs && proc->allocs[i + 1].time_ns == a->time_ns)
			continue;
		CHECK(fl_alloc_sweep_advance(&sweep, a->time_ns) == 0, "sweep out of memory");
		for (size_t j = 0; j <= i; j++) {
			const struct fl_alloc_record *b = &proc->allocs[j];
			uint64_t probes[4] = { b->addr, b->addr - 1, b->addr + b->size, b->addr + b->size - 1 };
			for (int k = 0; k < 4; k++) {
				uint32_t got = fl_alloc_sweep_find(&sweep, probes[k]);
				uint32_t want = model_find(&m, probes[k]);
				CHECK(got == want, "%s after alloc event %zu: sweep finds %d at 0x%llx, model %d",
				      proc->name, i, (int)got, (unsigned long long)probes[k], (int)want);
			}
		}
	}
	fl_alloc_sweep_free(&sweep);
	free(m.p);
}

/* ----------------------------------------------------------------- one process */

static uint64_t frames_sum;   /* keeps the frame reads from being optimized away */

static void check_stack(const struct fl_process *proc, const struct fl_stack *s)
{
	CHECK(s->id >= 1, "%s: stack id 0", proc->name);
	CHECK(s->nframes <= FL_STACK_MAX_FRAMES, "%s: stack %u has %u frames", proc->name, s->id, s->nframes);
	CHECK(fl_process_stack(proc, s->id) == s, "%s: stack %u not found by its id", proc->name, s->id);
	for (uint32_t i = 0; i < s->nframes; i++)
		frames_sum += s->frames[i];
}

static void check_maps(const struct fl_process *proc)
{
	for (size_t i = 0; i < proc->nmaps; i++) {
		const struct fl_maps_snapshot *s = &proc->maps[i];
		CHECK(i == 0 || proc->maps[i - 1].time_ns <= s->time_ns, "%s: maps snapshots out of order", proc->name);
		CHECK(s->reason != NULL && s->maps != NULL, "%s: snapshot %zu incomplete", proc->name, i);
		check_line("maps reason", s->reason);
		for (size_t k = 0; k < s->maps->count; k++) {
			const struct maps_entry *e = &s->maps->entries[k];
			CHECK(e->start < e->end, "%s: empty mapping", proc->name);
			CHECK(k == 0 || s->maps->entries[k - 1].end <= e->start, "%s: mappings overlap", proc->name);
			frames_sum += strlen(e->path);
			CHECK(maps_find(s->maps, e->start) == e && maps_find(s->maps, e->end - 1) == e,
			      "%s: maps_find misses a mapping's own ends", proc->name);
		}
	}
	CHECK((fl_process_maps_at(proc, 0) == NULL) == (proc->nmaps == 0), "%s: maps_at(0)", proc->name);
	if (proc->nmaps) {
		CHECK(fl_process_maps_at(proc, UINT64_MAX) == &proc->maps[proc->nmaps - 1], "%s: maps_at(max)",
		      proc->name);
	}
}

static void check_process(const struct fl_recording *rec, const struct fl_process *proc)
{
	bool small = proc->nfaults <= CHECK_MAX_FAULTS && proc->ncontexts <= CHECK_MAX_FAULTS;
	unsigned char *context_used = small ? calloc(proc->ncontexts + 1, 1) : NULL;

	check_line("process name", proc->name);
	CHECK(proc->dir && strncmp(proc->dir, rec->dir, strlen(rec->dir)) == 0, "%s: dir %s", proc->name,
	      proc->dir ? proc->dir : "(null)");
	CHECK(proc->exe != NULL, "%s: exe NULL", proc->name);
	for (size_t i = 0; i < proc->ncmdline; i++)
		frames_sum += strlen(proc->cmdline[i]);
	CHECK(fl_recording_find_pid(rec, proc->pid) != NULL, "%s: pid %u not found", proc->name, proc->pid);

	for (size_t i = 0; i < proc->nfaults; i++) {
		const struct fl_fault *f = &proc->faults[i];
		const struct fl_fault_record *r = &f->rec;
		if (i > 0) {
			const struct fl_fault_record *p = &proc->faults[i - 1].rec;
			CHECK(p->time_ns < r->time_ns || (p->time_ns == r->time_ns && p->seq < r->seq),
			      "%s: faults %zu and %zu out of (time, seq) order or seq repeated", proc->name, i - 1, i);
		}
		CHECK(r->kind >= FL_FAULT_FIRST_TOUCH && r->kind <= FL_FAULT_KIND_MAX, "%s: fault kind %u",
		      proc->name, r->kind);
		CHECK(r->addr >= proc->region_start && r->addr - proc->region_start < proc->region_size,
		      "%s: fault at 0x%llx outside the region", proc->name, (unsigned long long)r->addr);
		CHECK(fl_process_fault_by_seq(proc, r->seq) == f, "%s: seq %llu not found by seq", proc->name, (unsigned long long)r->seq);
		frames_sum += strlen(fl_fault_kind_name(r->kind));

		const struct fl_fault_context *c = fl_fault_context(proc, f);
		CHECK((c == NULL) == (f->context == FL_NONE), "%s: context join", proc->name);
		if (c) {
			CHECK(f->context < proc->ncontexts, "%s: context index %u of %zu", proc->name, f->context,
			      proc->ncontexts);
			CHECK(c->seq == r->seq && c->tid == r->tid, "%s: context of seq %llu is for seq %llu tid %u",
			      proc->name, (unsigned long long)r->seq, (unsigned long long)c->seq, c->tid);
			CHECK(c->npmu <= FL_PMU_MAX, "%s: npmu %u", proc->name, c->npmu);
			CHECK(fl_process_context(proc, r->seq) == c, "%s: fl_process_context(%llu)", proc->name, (unsigned long long)r->seq);
			if (context_used) {
				CHECK(!context_used[f->context], "%s: context %u joined twice", proc->name, f->context);
				context_used[f->context] = 1;
			}
			for (uint32_t k = 0; k < c->npmu; k++)
				frames_sum += c->pmu[k];
		}
		const struct fl_stack *s = fl_fault_stack(proc, f);
		if (s)
			check_stack(proc, s);
		const struct fl_alloc_record *a = fl_fault_alloc(proc, f);
		CHECK((a == NULL) == (f->alloc == FL_NONE), "%s: alloc join", proc->name);
		if (a) {
			CHECK(f->alloc < proc->nallocs, "%s: alloc index %u of %zu", proc->name, f->alloc, proc->nallocs);
			CHECK(a->kind == FL_ALLOC_MALLOC || a->kind == FL_ALLOC_MMAP, "%s: fault joined to a %s",
			      proc->name, fl_alloc_kind_name(a->kind));
			CHECK(a->addr <= r->addr && r->addr - a->addr < a->size && a->time_ns <= r->time_ns,
			      "%s: fault seq %llu joined to an allocation that does not hold it", proc->name,
			      (unsigned long long)r->seq);
		}
	}
	if (context_used) {
		for (size_t i = 0; i < proc->ncontexts; i++)
			CHECK(context_used[i], "%s: context %zu joined to no fault", proc->name, i);
		free(context_used);
	}
	for (size_t i = 0; i < proc->nstacks; i++) {
		CHECK(i == 0 || proc->stacks[i - 1].id < proc->stacks[i].id, "%s: stacks not sorted by unique id",
		      proc->name);
		check_stack(proc, &proc->stacks[i]);
	}
	for (size_t i = 0; i < proc->nallocs; i++) {
		const struct fl_alloc_record *a = &proc->allocs[i];
		CHECK(i == 0 || proc->allocs[i - 1].time_ns <= a->time_ns, "%s: allocs out of time order", proc->name);
		CHECK(a->kind >= FL_ALLOC_MALLOC && a->kind <= FL_ALLOC_MUNMAP, "%s: alloc kind %u", proc->name, a->kind);
		if (a->alloc_id)
			CHECK(fl_process_alloc_by_id(proc, a->alloc_id) == a, "%s: alloc_id %u not found", proc->name,
			      a->alloc_id);
		if (a->stack_id) {
			const struct fl_stack *s = fl_process_stack(proc, a->stack_id);
			CHECK(s != NULL, "%s: alloc stack %u kept but undefined", proc->name, a->stack_id);
		}
	}
	CHECK(fl_process_alloc_by_id(proc, 0) == NULL, "%s: alloc_id 0 found", proc->name);
	CHECK(fl_process_stack(proc, 0) == NULL, "%s: stack 0 found", proc->name);
	check_maps(proc);
	check_attribution(proc);
}

/* ----------------------------------------------------------------- the recording */

static void check_iteration(const struct fl_recording *rec, uint32_t pid, uint64_t want)
{
	struct fl_fault_iter it;
	const struct fl_process *proc;
	const struct fl_fault *f;
	uint64_t n = 0, last = 0;

	/* Open finding (findings/README.md, trace_reader-time-wrap): a time that overflows 64 bits in
	 * recording time (a later process's start plus its record's time) wraps, and the merge order
	 * with it. Checked under FUZZ_STRICT only. */
	bool wraps = false;
	for (size_t p = 0; p < rec->nprocs; p++) {
		const struct fl_process *q = &rec->procs[p];
		for (size_t i = 0; i < q->nfaults && !wraps; i++)
			wraps = q->faults[i].rec.time_ns > UINT64_MAX - q->offset_ns;
	}
	CHECK(fl_fault_iter_init(&it, rec, pid) == 0, "iterator out of memory");
	while ((f = fl_fault_iter_next(&it, &proc)) != NULL) {
		CHECK(f >= proc->faults && f < proc->faults + proc->nfaults, "iterator fault outside its process");
		CHECK(pid == 0 || proc->pid == pid, "iterator for pid %u gave pid %u", pid, proc->pid);
		uint64_t t = fl_fault_time_ns(proc, f);
		CHECK(n == 0 || t >= last || (wraps && !check_strict()), "iterator went back in time (%llu after %llu)",
		      (unsigned long long)t, (unsigned long long)last);
		last = t;
		n++;
	}
	fl_fault_iter_free(&it);
	CHECK(n == want, "iterator (pid %u) gave %llu faults, want %llu", pid, (unsigned long long)n,
	      (unsigned long long)want);
}

static void check_recording(const struct fl_recording *rec)
{
	uint64_t total = 0;

	CHECK(rec->nprocs >= 1, "an open recording without processes");
	CHECK(strcmp(rec->dir, rec_dir) == 0, "dir %s", rec->dir);
	for (size_t i = 0; i < rec->nwarnings; i++)
		check_line("warning", rec->warnings[i]);
	CHECK(rec->nwarnings <= FL_MAX_WARNINGS, "%zu warnings kept", rec->nwarnings);
	CHECK(rec->start_ns == rec->procs[0].start_ns, "recording start");
	for (size_t i = 0; i < rec->nprocs; i++) {
		const struct fl_process *p = &rec->procs[i];
		if (i > 0) {
			const struct fl_process *q = &rec->procs[i - 1];
			CHECK(q->start_ns < p->start_ns || (q->start_ns == p->start_ns && (q->pid < p->pid ||
			      (q->pid == p->pid && q->image <= p->image))), "processes out of order");
		}
		CHECK(p->offset_ns == p->start_ns - rec->start_ns, "offset_ns");
		total += p->nfaults;
		check_process(rec, p);
	}
	CHECK(total == rec->nfaults, "nfaults %llu, processes hold %llu", (unsigned long long)rec->nfaults,
	      (unsigned long long)total);
	check_iteration(rec, 0, total);
	for (size_t i = 0; i < rec->nprocs; i++) {
		uint64_t want = 0;
		if (fl_recording_find_pid(rec, rec->procs[i].pid) != &rec->procs[i])
			continue; /* a later image of a pid already checked */
		for (size_t k = 0; k < rec->nprocs; k++)
			want += rec->procs[k].pid == rec->procs[i].pid ? rec->procs[k].nfaults : 0;
		check_iteration(rec, rec->procs[i].pid, want);
	}
}

/* The streamed recording of the same directory walks the same faults as the held one REC. */
static void check_streamed(const struct fl_recording *rec)
{
	struct fl_recording *streamed;
	struct fl_fault_iter held_it, it;
	const struct fl_process *hp, *sp;
	const struct fl_fault *hf, *sf;

	if (fl_recording_open_stream(rec_dir, &streamed) != 0)
		return; /* a shape the streaming open leaves to the held one */
	CHECK(streamed->nprocs == rec->nprocs && streamed->nfaults == rec->nfaults, "streamed: %zu processes, %llu faults; held %zu, %llu",
	      streamed->nprocs, (unsigned long long)streamed->nfaults, rec->nprocs, (unsigned long long)rec->nfaults);
	if (streamed->nprocs != rec->nprocs) {
		fl_recording_close(streamed);
		return;
	}
	for (size_t i = 0; i < rec->nprocs; i++) {
		CHECK(streamed->procs[i].nfaults == rec->procs[i].nfaults && streamed->procs[i].nallocs == rec->procs[i].nallocs &&
		      streamed->procs[i].last_fault_ns == rec->procs[i].last_fault_ns &&
		      memcmp(streamed->procs[i].kind_counts, rec->procs[i].kind_counts, sizeof(rec->procs[i].kind_counts)) == 0,
		      "streamed process %zu: counts differ from the held one", i);
	}
	CHECK(fl_fault_iter_init(&held_it, rec, 0) == 0, "held iterator: %s", held_it.error);
	if (fl_fault_iter_init(&it, streamed, 0) == 0) {
		uint64_t n = 0;
		while ((sf = fl_fault_iter_next(&it, &sp)) != NULL) {
			hf = fl_fault_iter_next(&held_it, &hp);
			CHECK(hf != NULL, "streamed fault %llu beyond the held ones", (unsigned long long)n);
			if (!hf)
				break;
			const struct fl_fault_context *hc = fl_fault_context(hp, hf), *sc = fl_fault_context(sp, sf);
			CHECK(memcmp(&hf->rec, &sf->rec, sizeof(hf->rec)) == 0 && hf->alloc == sf->alloc &&
			      (hc == NULL) == (sc == NULL) && (!hc || memcmp(hc, sc, sizeof(*hc)) == 0) &&
			      hp - rec->procs == sp - streamed->procs,
			      "streamed fault %llu differs from the held one (seq %llu)", (unsigned long long)n,
			      (unsigned long long)hf->rec.seq);
			n++;
		}
		CHECK(it.error[0] || n == rec->nfaults, "streamed %llu faults of %llu without an error",
		      (unsigned long long)n, (unsigned long long)rec->nfaults);
		fl_fault_iter_free(&it);
	}
	fl_fault_iter_free(&held_it);
	fl_recording_close(streamed);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fl_recording *rec = NULL;
	char err[1024];

	if (!base_dir[0])
		setup();
	container_clear(rec_dir);
	if (container_unpack(data, size, rec_dir) < 0)
		return 0; /* tmpfs full or similar: not the reader's business */
	memset(err, 'x', sizeof(err));
	if (fl_recording_open(rec_dir, &rec, err, sizeof(err)) < 0) {
		CHECK(rec == NULL, "failed open left *out set");
		CHECK(memchr(err, '\0', sizeof(err)) != NULL, "error not NUL-terminated");
		CHECK(check_line("error", err) > 0, "empty error");
		return 0;
	}
	CHECK(rec != NULL, "open returned 0 without a recording");
	check_recording(rec);
	check_streamed(rec);
	fl_recording_close(rec);

	char *argv[] = { "dump", rec_dir, NULL };
	cmd_dump(2, argv);
	return 0;
}
