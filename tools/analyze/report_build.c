/* report_build.c: the aggregation behind `faultline report` (see report.h).
 *
 * Follow one fault through pass 1 (attribute): the merged time-order iterator yields it; the
 * filters (--kind, --from/--to; --pid is the iterator's) keep it or not; its stack's callsite comes
 * from the callsite table (memoized per stack, so the symbolizer sees each stack once); the row key
 * is that location (callsite), its function, the allocation site of the object it hit (alloc), its
 * (pid, tid) or its process; a hash map turns the key into a row index, which is stored per fault;
 * the row counts the fault by kind and access; pair maps count (row, stack), (row, callsite) and,
 * for allocation sites, (row, allocation stack) and (row, allocation) so that each row can name its
 * most common stack and callsite and count the objects it hit.
 *
 * Pass 2 (PMU): every context in file order; a thread's previous context gives the delta of each
 * counter (the first context of a thread counts from the counter's start, which is the thread's
 * start); the delta is added to the row of the context's fault when that fault was kept.
 *
 * Pass 3 (--locality): the faults again in time order, the page numbers of each shown row fed to that
 * row's locality scorer (O(log n) each, locality.h). */
#include "report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <faultline/record_schema.h>

#define EVENT_NONE 0xff
#define PROGRESS_STEP 65536

/* ----------------------------------------------------------------- warnings */

void report_warn(struct report_warnings *w, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (w->count >= FL_MAX_WARNINGS) {
		w->suppressed++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (w->count == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 8;
		char **lines = realloc(w->lines, cap * sizeof(*lines));
		if (!lines) {
			w->suppressed++;
			return;
		}
		w->lines = lines;
		w->cap = cap;
	}
	if (!(w->lines[w->count] = strdup(line))) {
		w->suppressed++;
		return;
	}
	w->count++;
}

void report_warnings_free(struct report_warnings *w)
{
	for (size_t i = 0; i < w->count; i++)
		free(w->lines[i]);
	free(w->lines);
	memset(w, 0, sizeof(*w));
}

/* ----------------------------------------------------------------- PMU events */

static bool is_clock_event(const char *name)
{
	return strcmp(name, "task-clock") == 0 || strcmp(name, "cpu-clock") == 0;
}

static uint8_t event_index(struct report *r, const char *name)
{
	for (size_t e = 0; e < r->nevents; e++) {
		if (strcmp(r->events[e].name, name) == 0)
			return (uint8_t)e;
	}
	if (r->nevents == REPORT_MAX_EVENTS) {
		report_warn(&r->warnings, "more than %d distinct PMU events: '%s' not shown", REPORT_MAX_EVENTS, name);
		return EVENT_NONE;
	}
	struct report_event *ev = &r->events[r->nevents];
	snprintf(ev->name, sizeof(ev->name), "%s", name);
	ev->nanoseconds = is_clock_event(name);
	return (uint8_t)r->nevents++;
}

/* Maps each process's counters (meta.json "pmu_events", in counter order) to report events. */
static int setup_events(struct report *r)
{
	const struct fl_recording *rec = r->rec;

	r->event_of = calloc(rec->nprocs ? rec->nprocs : 1, sizeof(*r->event_of));
	r->faults_per_context = calloc(rec->nprocs ? rec->nprocs : 1, sizeof(*r->faults_per_context));
	if (!r->event_of || !r->faults_per_context)
		return -1;
	for (size_t p = 0; p < rec->nprocs; p++) {
		char *const *names = NULL;
		size_t n = 0;
		uint64_t sample = 1;
		/* with a stack (and so a context) for 1 fault in N, a thread's delta since its previous
		 * context covers about N faults: the per-fault values divide by them */
		if (stats_json_uint(&rec->procs[p].meta, FL_META_SAMPLE, &sample) < 0 || sample == 0 || sample > UINT32_MAX)
			sample = 1;
		r->faults_per_context[p] = (uint32_t)sample;
		if (stats_json_strings(&rec->procs[p].meta, FL_META_PMU_EVENTS, &names, &n) < 0)
			n = 0;
		for (size_t j = 0; j < FL_PMU_MAX; j++)
			r->event_of[p][j] = j < n && names[j][0] ? event_index(r, names[j]) : EVENT_NONE;
	}
	return 0;
}

/* ----------------------------------------------------------------- rows */

/* Counts per (row, key) pair. Consecutive faults mostly repeat the pair (a loop faulting through one
 * stack), so increments are held in a pending run and added to the map when the pair changes. */
struct pair_counter {
	struct report_map map;           /* (row, key) → faults; row may carry more in its high half */
	uint64_t row;                    /* the pending run */
	uint64_t key, pending;
};

static int pair_flush(struct pair_counter *c)
{
	uint64_t *count;

	if (c->pending == 0)
		return 0;
	if (!(count = report_map_add(&c->map, c->row, c->key, NULL)))
		return -1;
	*count += c->pending;
	c->pending = 0;
	return 0;
}

static int pair_count(struct pair_counter *c, uint64_t row, uint64_t key)
{
	if (c->pending && c->row == row && c->key == key) {
		c->pending++;
		return 0;
	}
	if (pair_flush(c) < 0)
		return -1;
	c->row = row;
	c->key = key;
	c->pending = 1;
	return 0;
}

struct pass_maps {
	struct report_map rows;          /* thread and process rows: key → row index */
	uint32_t *row_of_loc;            /* other rows: key location id → row index + 1 (0: none yet) */
	size_t row_of_loc_cap;
	struct pair_counter stacks;      /* (snapshot << 32 | row, proc << 32 | stack index) → faults: the
					  * fault's stack, named under the maps snapshot of its time */
	struct pair_counter locs;        /* (row, callsite) → faults */
	struct pair_counter alloc_stacks;/* (snapshot << 32 | row, proc << 32 | stack index) → faults: the
					  * allocation's stack, under the snapshot of the allocation's time */
	struct report_map allocs;        /* (row, proc << 32 | alloc index): allocations hit */
	uint32_t last_alloc_row;         /* the last pair added to allocs */
	uint64_t last_alloc;
};

static void pass_maps_free(struct pass_maps *m)
{
	report_map_free(&m->rows);
	free(m->row_of_loc);
	report_map_free(&m->stacks.map);
	report_map_free(&m->locs.map);
	report_map_free(&m->alloc_stacks.map);
	report_map_free(&m->allocs);
}

static int pass_maps_flush(struct pass_maps *m)
{
	return pair_flush(&m->stacks) | pair_flush(&m->locs) | pair_flush(&m->alloc_stacks);
}

/* A new empty row; its index, or FL_NONE on ENOMEM. */
static uint32_t new_row(struct report *r)
{
	if (r->nrows == r->rows_cap) {
		size_t cap = r->rows_cap ? r->rows_cap * 2 : 256;
		struct report_row *grown = realloc(r->rows, cap * sizeof(*grown));
		if (!grown)
			return FL_NONE;
		r->rows = grown;
		r->rows_cap = cap;
	}
	struct report_row *row = &r->rows[r->nrows];
	memset(row, 0, sizeof(*row));
	row->key_loc = row->loc = FL_NONE;
	row->stack_proc = row->stack = row->alloc_stack_proc = row->alloc_stack = FL_NONE;
	row->order = (uint32_t)r->nrows;
	return (uint32_t)r->nrows++;
}

/* The row of key (a, b) (thread and process rows), created empty when new. FL_NONE on ENOMEM. */
static uint32_t row_for(struct report *r, struct report_map *rows, uint64_t a, uint64_t b)
{
	bool added;
	uint64_t *index = report_map_add(rows, a, b, &added);

	if (!index)
		return FL_NONE;
	if (added && (*index = new_row(r)) == FL_NONE)
		return FL_NONE;
	return (uint32_t)*index;
}

/* The row of location LOC (callsite, function and allocation-site rows). FL_NONE on ENOMEM. */
static uint32_t row_for_loc(struct report *r, struct pass_maps *m, uint32_t loc)
{
	if (loc >= m->row_of_loc_cap) {
		size_t cap = m->row_of_loc_cap ? m->row_of_loc_cap : 1024;
		while (cap <= loc)
			cap *= 2;
		uint32_t *grown = realloc(m->row_of_loc, cap * sizeof(*grown));
		if (!grown)
			return FL_NONE;
		memset(grown + m->row_of_loc_cap, 0, (cap - m->row_of_loc_cap) * sizeof(*grown));
		m->row_of_loc = grown;
		m->row_of_loc_cap = cap;
	}
	if (m->row_of_loc[loc] == 0) {
		uint32_t row = new_row(r);
		if (row == FL_NONE)
			return FL_NONE;
		m->row_of_loc[loc] = row + 1;
	}
	return m->row_of_loc[loc] - 1;
}

/* --symbol: does any frame of the stack of a fault at TIME_NS match, the stack named under the maps
 * snapshot in force then (as the fault's row names it)? Cached per (process, snapshot, stack). */
static bool stack_matches(struct report *r, size_t p, const struct fl_stack *stack, uint64_t time_ns)
{
	const struct callsite_frame *frames;
	size_t n = 0, pick;
	bool added;

	if (!stack)
		return false;
	uint32_t snap = callsite_snapshot_at(r->callsites, p, time_ns);
	uint64_t *known = report_map_add(&r->symbol_match, (uint64_t)p << 32 | snap, (uint64_t)(uintptr_t)stack, &added);
	if (known && !added)
		return *known == 1;
	bool match = false;
	if (callsite_expand_in(r->callsites, p, stack, snap, &frames, &n, &pick) == 0)
		for (size_t i = 0; i < n && !match; i++)
			match = regexec(&r->o->symbol_re, frames[i].function ? frames[i].function : frames[i].label,
					0, NULL, 0) == 0;
	if (known)
		*known = match ? 1 : 2;
	return match;
}

bool report_kept(struct report *r, const struct fl_process *proc, const struct fl_fault *f)
{
	uint64_t t;
	/* "all" is every fault of the program's memory traffic: access samples (record
	 * --sample-accesses, --mrc) are only shown when asked for (--kind access) */
	bool kind_ok = r->o->kind == 0 ? f->rec.kind != FL_FAULT_ACCESS_SAMPLE : f->rec.kind == r->o->kind;
	if (!kind_ok)
		return false;
	if (r->o->ntids) {
		size_t i = 0;
		while (i < r->o->ntids && r->o->tids[i] != f->rec.tid)
			i++;
		if (i == r->o->ntids)
			return false;
	}
	if (r->o->symbol &&
	    !stack_matches(r, (size_t)(proc - r->rec->procs), callsite_fault_stack(proc, f), f->rec.time_ns))
		return false;
	if (r->o->from_ns == 0 && r->o->to_ns == UINT64_MAX)
		return true;
	/* --from/--to on the --time axis; a fault without a virtual time is outside any window of it */
	return fault_clock_time(&r->clock, proc, f, &t) && t >= r->o->from_ns && t < r->o->to_ns;
}

/* "<unallocated>" with the name of the mapping that holds the fault's address. */
static uint32_t unallocated_loc(struct report *r, const struct fl_process *proc, const struct fl_fault *f)
{
	const struct fl_maps_snapshot *snap = fl_process_maps_at(proc, f->rec.time_ns);
	const struct maps_entry *e = snap ? maps_find(snap->maps, f->rec.addr) : NULL;

	if (!e && proc->nmaps)
		e = maps_find(proc->maps[proc->nmaps - 1].maps, f->rec.addr);
	const char *name = !e ? "[unmapped]" : e->path[0] ? e->path : "[anon]";
	return callsite_intern(r->callsites, REPORT_UNALLOCATED, NULL, 0, name, false);
}

static uint64_t pack(size_t proc, size_t index)
{
	return (uint64_t)proc << 32 | (uint32_t)index;
}

/* ROW with, in the high half, the maps snapshot of process P in force at TIME_NS: the key of a
 * (row, stack) pair whose stack is then named as at that time. */
static uint64_t with_snapshot(const struct report *r, size_t p, uint64_t time_ns, uint32_t row)
{
	return (uint64_t)callsite_snapshot_at(r->callsites, p, time_ns) << 32 | row;
}

/* The allocation-site location of a fault that hit A (NULL: no live allocation), and A's stack. */
static uint32_t alloc_site(struct report *r, size_t p, const struct fl_process *proc, const struct fl_fault *f,
			   const struct fl_alloc_record *a, const struct fl_stack **stack)
{
	*stack = NULL;
	if (!a)
		return unallocated_loc(r, proc, f);
	*stack = a->stack_id ? callsite_stack_by_id(proc, a->stack_id) : NULL;
	if (*stack)
		return callsite_of_stack_at(r->callsites, p, *stack, a->time_ns);
	return callsite_intern(r->callsites, REPORT_ALLOC_NO_STACK, NULL, 0, NULL, false);
}

static void account(struct report *r, struct report_row *row, const struct fl_fault *f)
{
	unsigned kind = f->rec.kind <= FL_FAULT_KIND_MAX ? f->rec.kind : 0;

	row->faults++;
	row->kinds[kind]++;
	if (f->rec.flags & FL_FAULT_WRITE)
		row->writes++;
	else
		row->reads++;
	r->selected++;
	r->selected_kinds[kind]++;
}

/* Attributes one kept fault: finds (or makes) its row, counts it. -1 on ENOMEM. */
static int attribute(struct report *r, struct pass_maps *m, size_t p, const struct fl_process *proc,
		     const struct fl_fault *f)
{
	const struct fl_stack *stack = callsite_fault_stack(proc, f), *alloc_stack = NULL;
	uint32_t loc = callsite_of_stack_at(r->callsites, p, stack, f->rec.time_ns), key_loc = FL_NONE, row_index;
	const struct fl_alloc_record *a = NULL;

	if (loc == FL_NONE)
		return -1;
	switch (r->o->by) {
	case REPORT_BY_CALLSITE:
		key_loc = loc;
		break;
	case REPORT_BY_FUNCTION:
		key_loc = callsite_function_of(r->callsites, loc);
		break;
	case REPORT_BY_ALLOC:
		a = fl_fault_alloc(proc, f);
		key_loc = alloc_site(r, p, proc, f, a, &alloc_stack);
		break;
	default:
		break;
	}
	if (r->o->by == REPORT_BY_THREAD)
		row_index = row_for(r, &m->rows, 1, (uint64_t)proc->pid << 32 | f->rec.tid);
	else if (r->o->by == REPORT_BY_PROCESS)
		row_index = row_for(r, &m->rows, 2, p);
	else if (key_loc != FL_NONE)
		row_index = row_for_loc(r, m, key_loc);
	else
		return -1;
	if (row_index == FL_NONE)
		return -1;
	struct report_row *row = &r->rows[row_index];
	if (row->faults == 0) {
		row->key_loc = key_loc;
		row->pid = proc->pid;
		row->tid = r->o->by == REPORT_BY_THREAD ? f->rec.tid : 0;
		row->proc = (uint32_t)p;
	}
	account(r, row, f);
	if (r->row_of_fault)
		r->row_of_fault[p][f - proc->faults] = row_index;
	r->last_row = row_index;
	if (stack && pair_count(&m->stacks, with_snapshot(r, p, f->rec.time_ns, row_index),
				pack(p, (size_t)(stack - proc->stacks))) < 0)
		return -1;
	if (key_loc != loc && r->o->by != REPORT_BY_ALLOC && pair_count(&m->locs, row_index, loc) < 0)
		return -1;
	if (alloc_stack && pair_count(&m->alloc_stacks, with_snapshot(r, p, a->time_ns, row_index),
				      pack(p, (size_t)(alloc_stack - proc->stacks))) < 0)
		return -1;
	if (a && (row_index != m->last_alloc_row || pack(p, (size_t)(a - proc->allocs)) != m->last_alloc)) {
		bool added;
		m->last_alloc_row = row_index;
		m->last_alloc = pack(p, (size_t)(a - proc->allocs));
		if (!report_map_add(&m->allocs, row_index, m->last_alloc, &added))
			return -1;
		row->allocs += added;
	}
	return 0;
}

static int alloc_row_of_fault(struct report *r)
{
	const struct fl_recording *rec = r->rec;

	r->row_of_fault = calloc(rec->nprocs ? rec->nprocs : 1, sizeof(*r->row_of_fault));
	if (!r->row_of_fault)
		return -1;
	for (size_t p = 0; p < rec->nprocs; p++) {
		size_t n = rec->procs[p].nfaults ? rec->procs[p].nfaults : 1;
		if (!(r->row_of_fault[p] = malloc(n * sizeof(uint32_t))))
			return -1;
		memset(r->row_of_fault[p], 0xff, n * sizeof(uint32_t)); /* FL_NONE */
	}
	return 0;
}

/* --by alloc: each row's exact allocation counts over the run, from the sites files (recordings
 * that have them): every site whose stack resolves to the row's allocation site. Sites whose
 * objects took no kept fault have no row. */
static int add_site_totals(struct report *r, struct pass_maps *m)
{
	for (size_t p = 0; p < r->rec->nprocs; p++) {
		const struct fl_process *proc = &r->rec->procs[p];
		if (r->o->pid && proc->pid != r->o->pid)
			continue;
		for (size_t i = 0; i < proc->nsites; i++) {
			const struct fl_site_record *s = &proc->sites[i];
			const struct fl_stack *stack = s->stack_id ? callsite_stack_by_id(proc, s->stack_id) : NULL;
			uint32_t loc = stack ? callsite_of_stack(r->callsites, p, stack)
					     : callsite_intern(r->callsites, REPORT_ALLOC_NO_STACK, NULL, 0, NULL, false);
			if (loc == FL_NONE)
				return -1;
			if (loc >= m->row_of_loc_cap || m->row_of_loc[loc] == 0)
				continue;
			struct report_row *row = &r->rows[m->row_of_loc[loc] - 1];
			row->has_sites = true;
			row->site_allocs += s->allocs;
			row->site_bytes += s->bytes;
			row->site_objects_faulted += s->objects_faulted;
			row->site_faults += s->faults;
		}
	}
	return 0;
}

/* ----------------------------------------------------------------- streamed: PMU, service, threads */

struct thread_last {
	uint64_t value[FL_PMU_MAX];
	uint32_t n;
};

/* Per-thread PMU state of a streamed pass: (process, tid) → index into last[]. The deltas are
 * taken in the faults' time order, which is each thread's seq order (a thread waits for each
 * fault to be served before it can take the next); the seq order is checked. */
struct stream_pmu {
	struct report_map by_thread;
	struct thread_last *last;
	uint64_t *last_seq;
	size_t n, cap;
};

static void add_deltas(struct report *r, size_t p, const struct fl_fault_context *c, uint32_t row,
		       struct thread_last *last);

static int stream_pmu_add(struct report *r, struct stream_pmu *s, size_t p, const struct fl_fault *f, uint32_t row)
{
	const struct fl_fault_context *c = fl_fault_context(&r->rec->procs[p], f);
	bool added;
	if (!c || c->npmu == 0)
		return 0;
	uint64_t *slot = report_map_add(&s->by_thread, p, c->tid, &added);
	if (!slot)
		return -1;
	if (added) {
		if (s->n == s->cap) {
			size_t cap = s->cap ? s->cap * 2 : 16;
			struct thread_last *grown = realloc(s->last, cap * sizeof(*grown));
			if (grown)
				s->last = grown;
			uint64_t *seqs = grown ? realloc(s->last_seq, cap * sizeof(*seqs)) : NULL;
			if (!seqs)
				return -1;
			s->last_seq = seqs;
			s->cap = cap;
		}
		memset(&s->last[s->n], 0, sizeof(s->last[s->n]));
		*slot = s->n++;
	} else if (c->seq <= s->last_seq[*slot]) {
		r->hold = true; /* not the thread's seq order: the held recording's pass over the contexts */
		return -1;
	}
	s->last_seq[*slot] = c->seq;
	add_deltas(r, p, c, row, &s->last[*slot]);
	return 0;
}

/* What report_records.c and the --tid check read per selected fault, gathered as it passes. */
static int stream_selected(struct report *r, const struct fl_process *proc, const struct fl_fault *f)
{
	uint64_t vt;
	for (int l = 0; l < REPORT_LATENCIES; l++) {
		uint32_t v = report_latency_of(f, l);
		if (!v)
			continue;
		if (!r->latency_high[l] && !(r->latency_high[l] = calloc(65536, sizeof(*r->latency_high[l]))))
			return -1;
		r->latency_high[l][v >> 16]++;
		r->latency_count[l]++;
		if (v > r->latency_max[l])
			r->latency_max[l] = v;
	}
	if (fault_clock_virtual(&r->clock, proc, f, &vt)) {
		r->virtual_n++;
		if (vt > r->virtual_max)
			r->virtual_max = vt;
	}
	return 0;
}

static void stream_tid_seen(struct report *r, uint32_t tid)
{
	for (size_t t = 0; t < r->o->ntids; t++)
		if (r->o->tids[t] == tid)
			r->tid_seen[t] = true;
}

/* Pass 1. */
static int attribute_faults(struct report *r, struct pass_maps *m)
{
	struct fl_fault_iter it;
	struct stream_pmu pmu;
	const struct fl_process *proc;
	const struct fl_fault *f;
	uint64_t n = 0;
	int rc = 0;

	memset(&pmu, 0, sizeof(pmu));
	if (r->streamed) {
		if (r->o->ntids && !(r->tid_seen = calloc(r->o->ntids, sizeof(*r->tid_seen))))
			return -1;
	} else if (alloc_row_of_fault(r) < 0) {
		return -1;
	}
	if (fl_fault_iter_init(&it, r->rec, r->o->pid) < 0) {
		snprintf(r->stream_error, sizeof(r->stream_error), "%s", it.error);
		return -1;
	}
	report_progress_phase(&r->progress, "attributing faults", r->rec->nfaults);
	while (rc == 0 && (f = fl_fault_iter_next(&it, &proc)) != NULL) {
		size_t p = (size_t)(proc - r->rec->procs);
		if (++n % PROGRESS_STEP == 0)
			report_progress_set(&r->progress, n);
		r->last_row = FL_NONE;
		if (report_kept(r, proc, f)) {
			rc = attribute(r, m, p, proc, f);
			if (rc == 0 && r->streamed)
				rc = stream_selected(r, proc, f);
		}
		if (rc == 0 && r->streamed) {
			rc = stream_pmu_add(r, &pmu, p, f, r->last_row);
			if (r->o->ntids)
				stream_tid_seen(r, f->rec.tid);
		}
	}
	if (rc == 0 && it.error[0]) {
		snprintf(r->stream_error, sizeof(r->stream_error), "%s", it.error);
		rc = -1;
	}
	fl_fault_iter_free(&it);
	report_map_free(&pmu.by_thread);
	free(pmu.last);
	free(pmu.last_seq);
	if (rc == 0 && r->o->by == REPORT_BY_ALLOC)
		rc = add_site_totals(r, m);
	return rc == 0 ? pass_maps_flush(m) : rc;
}

/* ----------------------------------------------------------------- most common stack / callsite */

static void pick_stacks(struct report *r, const struct report_map *pairs, bool alloc)
{
	const struct report_map_slot *s;

	for (size_t i = 0; (s = report_map_next(pairs, &i)) != NULL;) {
		struct report_row *row = &r->rows[(uint32_t)s->a];
		uint32_t *best_proc = alloc ? &row->alloc_stack_proc : &row->stack_proc;
		uint32_t *best = alloc ? &row->alloc_stack : &row->stack;
		uint32_t *best_snapshot = alloc ? &row->alloc_stack_snapshot : &row->stack_snapshot;
		uint64_t *count = alloc ? &row->alloc_stack_count : &row->stack_count;
		uint64_t key = pack(*best_proc, *best);
		uint32_t snapshot = (uint32_t)(s->a >> 32);
		if (s->value > *count ||
		    (s->value == *count && (s->b < key || (s->b == key && snapshot < *best_snapshot)))) {
			*count = s->value;
			*best_proc = (uint32_t)(s->b >> 32);
			*best = (uint32_t)s->b;
			*best_snapshot = snapshot;
		}
	}
}

static void pick_locs(struct report *r, const struct report_map *pairs)
{
	const struct report_map_slot *s;

	for (size_t i = 0; i < r->nrows; i++) {
		if (r->o->by == REPORT_BY_CALLSITE || r->o->by == REPORT_BY_ALLOC)
			r->rows[i].loc = r->rows[i].key_loc;
	}
	for (size_t i = 0; (s = report_map_next(pairs, &i)) != NULL;) {
		struct report_row *row = &r->rows[s->a];
		if (s->value > row->loc_count || (s->value == row->loc_count && s->b < row->loc)) {
			row->loc_count = s->value;
			row->loc = (uint32_t)s->b;
		}
	}
	for (size_t i = 0; i < r->nrows; i++) {
		if (r->rows[i].loc == FL_NONE) /* function rows whose faults all had the same callsite */
			r->rows[i].loc = r->rows[i].key_loc;
	}
}

/* ----------------------------------------------------------------- PMU deltas */

/* Adds context C's deltas (since LAST, then updated) to ROW (FL_NONE: its fault was not kept). */
static void add_deltas(struct report *r, size_t p, const struct fl_fault_context *c, uint32_t row,
		       struct thread_last *last)
{
	uint32_t n = c->npmu < FL_PMU_MAX ? c->npmu : FL_PMU_MAX;

	for (uint32_t j = 0; j < n; j++) {
		uint64_t prev = j < last->n ? last->value[j] : 0;
		uint64_t delta = c->pmu[j] >= prev ? c->pmu[j] - prev : 0;
		uint8_t e = r->event_of[p][j];
		if (row != FL_NONE && e != EVENT_NONE) {
			r->rows[row].pmu_sum[e] += delta;
			r->rows[row].pmu_faults[e] += r->faults_per_context[p];
		}
		last->value[j] = c->pmu[j];
	}
	if (n > last->n)
		last->n = n;
}

/* row_of_context[i] = the row of the fault context i belongs to (FL_NONE: not kept). */
static uint32_t *rows_of_contexts(const struct report *r, size_t p)
{
	const struct fl_process *proc = &r->rec->procs[p];
	uint32_t *rows = malloc((proc->ncontexts ? proc->ncontexts : 1) * sizeof(*rows));

	if (!rows)
		return NULL;
	memset(rows, 0xff, (proc->ncontexts ? proc->ncontexts : 1) * sizeof(*rows));
	for (size_t i = 0; i < proc->nfaults; i++) {
		uint32_t c = proc->faults[i].context;
		if (c < proc->ncontexts)
			rows[c] = r->row_of_fault[p][i];
	}
	return rows;
}

static int pmu_process(struct report *r, size_t p)
{
	const struct fl_process *proc = &r->rec->procs[p];
	struct report_map by_tid = REPORT_MAP_INIT;
	struct thread_last *last = NULL;
	size_t nlast = 0, cap = 0;
	uint32_t *rows = rows_of_contexts(r, p);
	int rc = rows ? 0 : -1;
	uint32_t prev_tid = 0;
	uint64_t prev_slot = UINT64_MAX; /* the previous context's thread: runs of one thread are common */

	for (size_t i = 0; i < proc->ncontexts && rc == 0; i++) {
		const struct fl_fault_context *c = &proc->contexts[i];
		bool added;
		uint64_t *slot;
		if (c->npmu == 0)
			continue;
		if (prev_slot != UINT64_MAX && c->tid == prev_tid) {
			add_deltas(r, p, c, rows[i], &last[prev_slot]);
			continue;
		}
		if (!(slot = report_map_add(&by_tid, c->tid, 0, &added))) {
			rc = -1;
			break;
		}
		if (added) {
			if (nlast == cap) {
				cap = cap ? cap * 2 : 16;
				struct thread_last *grown = realloc(last, cap * sizeof(*grown));
				if (!grown) {
					rc = -1;
					break;
				}
				last = grown;
			}
			memset(&last[nlast], 0, sizeof(*last));
			*slot = nlast++;
		}
		prev_tid = c->tid;
		prev_slot = *slot;
		add_deltas(r, p, c, rows[i], &last[*slot]);
	}
	free(rows);
	free(last);
	report_map_free(&by_tid);
	return rc;
}

bool report_row_pmu(const struct report *r, const struct report_row *row, size_t e, double *value)
{
	if (e >= r->nevents || row->pmu_faults[e] == 0)
		return false;
	*value = (double)row->pmu_sum[e] / (double)row->pmu_faults[e];
	if (r->events[e].nanoseconds)
		*value /= 1000.0;
	return true;
}

/* ----------------------------------------------------------------- ranking and locality */

/* record -s N with N > 1 and rows by stack: which row holds the faults without a stack (see
 * struct report). */
static void find_unsampled_row(struct report *r)
{
	r->stack_sample = fl_recording_stack_sample(r->rec, 0);
	r->unsampled_row = FL_NONE;
	r->unsampled = 0;
	if (r->stack_sample <= 1 || (r->o->by != REPORT_BY_CALLSITE && r->o->by != REPORT_BY_FUNCTION))
		return;
	for (size_t i = 0; i < r->nrows; i++) {
		const struct report_row *row = &r->rows[i];
		if (row->faults && row->key_loc != FL_NONE &&
		    strcmp(callsite_loc(r->callsites, row->key_loc)->function, CALLSITE_NO_STACK) == 0) {
			r->unsampled_row = (uint32_t)i;
			r->unsampled = row->faults;
			return;
		}
	}
}

struct rank_ctx {
	const struct report_row *rows;
	uint32_t last;            /* this row ranks last (FL_NONE: none) */
};

static int by_faults(const void *a, const void *b, void *ctx)
{
	const struct rank_ctx *c = ctx;
	uint32_t ia = *(const uint32_t *)a, ib = *(const uint32_t *)b;
	const struct report_row *x = &c->rows[ia], *y = &c->rows[ib];

	if ((ia == c->last) != (ib == c->last))
		return ia == c->last ? 1 : -1;
	if (x->faults != y->faults)
		return x->faults > y->faults ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int rank_rows(struct report *r)
{
	r->ranked = malloc((r->nrows ? r->nrows : 1) * sizeof(*r->ranked));
	if (!r->ranked)
		return -1;
	for (size_t i = 0; i < r->nrows; i++)
		r->ranked[i] = (uint32_t)i;
	find_unsampled_row(r);
	struct rank_ctx c = { r->rows, r->unsampled_row };
	qsort_r(r->ranked, r->nrows, sizeof(*r->ranked), by_faults, &c);
	r->nshown = r->o->top == 0 || r->o->top > r->nrows ? r->nrows : (size_t)r->o->top;
	if (r->unsampled_row != FL_NONE && r->nshown < r->nrows) { /* shown below the --top rows */
		memmove(&r->ranked[r->nshown + 1], &r->ranked[r->nshown], (r->nrows - 1 - r->nshown) * sizeof(*r->ranked));
		r->ranked[r->nshown++] = r->unsampled_row;
	}
	return 0;
}

static int score_locality(struct report *r)
{
	struct locality **scorers = calloc(r->nrows ? r->nrows : 1, sizeof(*scorers));
	struct fl_fault_iter it;
	const struct fl_process *proc;
	const struct fl_fault *f;
	uint64_t n = 0;
	int rc = 0;

	if (!scorers)
		return -1;
	for (size_t i = 0; i < r->nshown && rc == 0; i++) {
		if (!(scorers[r->ranked[i]] = locality_new(NULL)))
			rc = -1;
	}
	if (rc == 0 && fl_fault_iter_init(&it, r->rec, r->o->pid) < 0)
		rc = -1;
	if (rc == 0) {
		report_progress_phase(&r->progress, "scoring locality", r->rec->nfaults);
		while (rc == 0 && (f = fl_fault_iter_next(&it, &proc)) != NULL) {
			uint32_t row = r->row_of_fault[proc - r->rec->procs][f - proc->faults];
			uint32_t page_size = proc->page_size ? proc->page_size : 4096;
			if (++n % PROGRESS_STEP == 0)
				report_progress_set(&r->progress, n);
			if (row != FL_NONE && scorers[row])
				rc = locality_access(scorers[row], f->rec.addr / page_size);
		}
		fl_fault_iter_free(&it);
	}
	for (size_t i = 0; i < r->nrows; i++) {
		if (scorers[i] && rc == 0) {
			locality_get_scores(scorers[i], &r->rows[i].locality);
			r->rows[i].has_locality = true;
		}
		locality_free(scorers[i]);
	}
	free(scorers);
	return rc;
}

/* ----------------------------------------------------------------- the build */

int report_build(struct report *r, char *err, size_t errlen)
{
	struct pass_maps m;
	double start = report_progress_elapsed(&r->progress);
	int rc;

	memset(&m, 0, sizeof(m));
	m.last_alloc_row = FL_NONE;
	rc = setup_events(r);

	if (rc == 0)
		rc = attribute_faults(r, &m);
	for (size_t p = 0; rc == 0 && !r->streamed && p < r->rec->nprocs; p++)
		rc = pmu_process(r, p); /* streamed: taken in pass 1 */
	if (rc == 0) {
		pick_stacks(r, &m.stacks.map, false);
		pick_stacks(r, &m.alloc_stacks.map, true);
		pick_locs(r, &m.locs.map);
		rc = rank_rows(r);
	}
	if (rc == 0 && r->o->locality)
		rc = score_locality(r);
	pass_maps_free(&m);
	r->build_seconds = report_progress_elapsed(&r->progress) - start;
	if (rc < 0 && r->stream_error[0])
		snprintf(err, errlen, "%s", r->stream_error);
	else if (rc < 0)
		snprintf(err, errlen, "out of memory while aggregating %" PRIu64 " faults", r->rec->nfaults);
	return rc;
}

void report_build_free(struct report *r)
{
	for (size_t p = 0; r->row_of_fault && p < r->rec->nprocs; p++)
		free(r->row_of_fault[p]);
	free(r->row_of_fault);
	free(r->event_of);
	free(r->faults_per_context);
	for (int l = 0; l < REPORT_LATENCIES; l++) {
		free(r->latency_high[l]);
		r->latency_high[l] = NULL;
	}
	free(r->tid_seen);
	r->tid_seen = NULL;
	report_map_free(&r->symbol_match);
	free(r->rows);
	free(r->ranked);
	r->row_of_fault = NULL;
	r->event_of = NULL;
	r->faults_per_context = NULL;
	r->rows = NULL;
	r->ranked = NULL;
}
