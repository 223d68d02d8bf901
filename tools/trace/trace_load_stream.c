/* trace_load_stream.c: a process loaded for streaming (fl_recording_open_stream): everything but
 * its faults and contexts is loaded as usual; those two files are read once here, record by record,
 * to check them and to learn what the verbs need before they stream them (fault_stream.h): the
 * count and kinds of the faults, their last time, the reorder windows that put each file in
 * order, and the records of faulted objects the allocation log lacks. Nothing is kept per fault
 * but one bit per seq while checking (seqs unique, every context's fault present, one context
 * per fault).
 *
 * Only recordings of the common, clean shape are streamed: format 2 or later, a stats.json that
 * counts exactly the records present, no cut file, no reference to a missing record, fault records
 * that name their objects. Anything else returns FL_LOAD_HOLD, and the caller opens the recording
 * the holding way, which reads every shape and words every warning and error. */
#include "trace_load_allocs.h"
#include "trace_load_faults.h"
#include "trace_load_maps.h"
#include "trace_load_state.h"
#include "trace_load_stream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <faultline/record_schema.h>

#include "record_stream.h"
#include "reorder.h"
#include "report_map.h"

#define FAULT_FLAGS_KNOWN (FL_FAULT_WRITE | FL_FAULT_PREFETCH_HIT | FL_FAULT_NO_STACK | FL_FAULT_OBJECT)
#define FIRST_WINDOW 4096u
#define MAX_WINDOW (1u << 22)
#define SEQ_SLOTS(n) (2 * (uint64_t)(n) + 1024) /* the densest seqs the runtime writes, with room */

struct bits {
	uint64_t *words;
	uint64_t n;
};

static int bits_init(struct bits *b, uint64_t n)
{
	b->n = n;
	b->words = calloc(n / 64 + 1, sizeof(uint64_t));
	return b->words ? 0 : -1;
}

/* Sets bit I; false when it was set already or lies outside. */
static bool bits_set_new(struct bits *b, uint64_t i)
{
	if (i >= b->n)
		return false;
	uint64_t mask = 1ull << (i % 64);
	if (b->words[i / 64] & mask)
		return false;
	b->words[i / 64] |= mask;
	return true;
}

static bool bits_get(const struct bits *b, uint64_t i)
{
	return i < b->n && (b->words[i / 64] >> (i % 64) & 1);
}

/* A reorder window being tried on a file's keys: they must come out in order. */
struct window_check {
	struct reorder order;
	uint64_t last_a, last_b;
	bool emitted, broken;
};

static int window_start(struct window_check *w, uint32_t width)
{
	memset(w, 0, sizeof(*w));
	return reorder_init(&w->order, width, 0);
}

static void window_emit(struct window_check *w)
{
	uint64_t a, b;
	if (!reorder_pop(&w->order, &a, &b))
		return;
	if (w->emitted && (a < w->last_a || (a == w->last_a && b <= w->last_b)))
		w->broken = true;
	w->emitted = true;
	w->last_a = a;
	w->last_b = b;
}

static void window_add(struct window_check *w, uint64_t a, uint64_t b)
{
	if (!reorder_push(&w->order, a, b)) {
		w->broken = true; /* out of memory: as if no window would do */
		return;
	}
	if (!reorder_has_room(&w->order))
		window_emit(w);
}

/* Empties the buffer; true when every key came out in order. */
static bool window_finish(struct window_check *w)
{
	while (w->order.n)
		window_emit(w);
	reorder_free(&w->order);
	return !w->broken;
}

/* Finds the narrowest window of FIRST_WINDOW * 2^k that puts the file's keys in order, trying
 * each wider one on the file again (at most twice the width needed: the window's records are what
 * a stream holds). The key of a fault is (time, seq), of a context (seq, 0). */
static int measure_window(struct fl_record_stream *rs, bool faults, uint32_t tried, uint32_t *width)
{
	for (uint32_t w = tried * 2; w <= MAX_WINDOW; w *= 2) {
		struct window_check check;
		if (fl_record_stream_rewind(rs) < 0 || window_start(&check, w) < 0)
			return FL_LOAD_HOLD;
		for (;;) {
			union { struct fl_fault_record f; struct fl_fault_context c; } r;
			int rc = fl_record_stream_next(rs, &r);
			if (rc < 0) {
				window_finish(&check);
				return FL_LOAD_HOLD;
			}
			if (rc == 0)
				break;
			if (faults)
				window_add(&check, r.f.time_ns, r.f.seq);
			else
				window_add(&check, r.c.seq, 0);
		}
		if (window_finish(&check)) {
			*width = w;
			return 0;
		}
	}
	return FL_LOAD_HOLD;
}

/* The records made for faulted objects the log lacks: alloc_id → index into made[]. */
struct unlogged {
	struct report_map by_id;
	struct fl_alloc_record *made;
	uint64_t *first_seq;      /* the seq of the fault each record was made from */
	size_t n, cap;
};

static int note_unlogged(struct unlogged *u, const struct fl_fault_record *r)
{
	bool added;
	uint64_t *index = report_map_add(&u->by_id, r->obj_alloc_id, 0, &added);
	if (!index)
		return -1;
	if (!added) {
		struct fl_alloc_record *a = &u->made[*index];
		uint64_t seq = u->first_seq[*index];
		if (r->time_ns > a->time_ns || (r->time_ns == a->time_ns && r->seq > seq))
			return 0;
	} else {
		if (u->n == u->cap) {
			size_t cap = u->cap ? u->cap * 2 : 64;
			struct fl_alloc_record *made = realloc(u->made, cap * sizeof(*made));
			if (made)
				u->made = made;
			uint64_t *first = made ? realloc(u->first_seq, cap * sizeof(*first)) : NULL;
			if (!first)
				return -1;
			u->first_seq = first;
			u->cap = cap;
		}
		*index = u->n++;
	}
	u->made[*index] = (struct fl_alloc_record){
		.time_ns = r->time_ns, .addr = r->obj_addr, .size = r->obj_size, .tid = r->tid,
		.stack_id = r->obj_stack_id, .alloc_id = r->obj_alloc_id, .kind = FL_ALLOC_MALLOC,
		.flags = FL_ALLOC_UNLOGGED,
	};
	u->first_seq[*index] = r->seq;
	return 0;
}

static int compare_alloc_id(const void *a, const void *b)
{
	uint32_t x = ((const struct fl_alloc_record *)a)->alloc_id, y = ((const struct fl_alloc_record *)b)->alloc_id;
	return x < y ? -1 : x > y;
}

/* A stack id a record names must be defined (a complete trace has no dangling reference). */
static bool stack_ok(const struct fl_process *proc, uint32_t id)
{
	return id == 0 || fl_process_stack(proc, id) != NULL;
}

/* Whether fault record R is one the holding loader takes without a word. */
static bool fault_ok(const struct loader *ld, const struct fl_fault_record *r)
{
	const struct fl_process *proc = ld->proc;
	return r->kind >= FL_FAULT_FIRST_TOUCH && r->kind <= FL_FAULT_KIND_MAX && !(r->flags & ~FAULT_FLAGS_KNOWN) &&
	       r->addr >= proc->region_start && r->addr - proc->region_start < proc->region_size &&
	       (!ld->handlers || r->handler < ld->handlers) && stack_ok(proc, r->stack_id) &&
	       (!(r->flags & FL_FAULT_OBJECT) || stack_ok(proc, r->obj_stack_id));
}

/* Reads the faults file once: checks, counts, the first window tried, the unlogged objects. */
static int scan_faults(struct loader *ld, struct fl_record_stream *rs, uint64_t n, struct bits *seqs,
		       struct unlogged *u)
{
	struct fl_process *proc = ld->proc;
	struct window_check check;
	uint64_t last_time = 0, last_seq = 0, count = 0;
	uint32_t last_missing = 0; /* consecutive faults mostly hit one object */
	int rc = FL_LOAD_HOLD;

	if (bits_init(seqs, SEQ_SLOTS(n)) < 0 || window_start(&check, FIRST_WINDOW) < 0)
		return FL_LOAD_HOLD;
	for (;;) {
		struct fl_fault_record r;
		int got = fl_record_stream_next(rs, &r);
		if (got < 0)
			goto out;
		if (got == 0)
			break;
		if (!fault_ok(ld, &r) || !bits_set_new(seqs, r.seq))
			goto out;
		count++;
		proc->kind_counts[r.kind]++;
		proc->fault_objects |= (r.flags & FL_FAULT_OBJECT) != 0;
		if (count == 1 || r.time_ns > last_time || (r.time_ns == last_time && r.seq > last_seq))
			last_time = r.time_ns, last_seq = r.seq;
		window_add(&check, r.time_ns, r.seq);
		if ((r.flags & FL_FAULT_OBJECT) && r.obj_addr && r.obj_alloc_id &&
		    (r.obj_alloc_id == last_missing || !fl_process_alloc_by_id(proc, r.obj_alloc_id))) {
			last_missing = r.obj_alloc_id;
			if (note_unlogged(u, &r) < 0)
				goto out;
		}
	}
	if (count != n || (n && !proc->fault_objects)) /* no object fields: the holding loader's sweep */
		goto out;
	proc->nfaults = n;
	proc->last_fault_ns = last_time;
	rc = 0;
out:;
	bool in_order = window_finish(&check);
	if (rc == 0) {
		proc->priv->fault_window = FIRST_WINDOW;
		if (!in_order)
			rc = measure_window(rs, true, FIRST_WINDOW, &proc->priv->fault_window);
	}
	return rc;
}

/* Reads the contexts file once: every context names a fault present, once, with a stack defined. */
static int scan_contexts(struct loader *ld, const struct bits *seqs)
{
	struct fl_process *proc = ld->proc;
	struct fl_record_stream rs;
	struct window_check check;
	struct bits seen = { NULL, 0 };
	char path[PATH_MAX + 64], err[256];
	int rc = FL_LOAD_HOLD;
	size_t count = 0;

	snprintf(path, sizeof(path), "%s/%s", proc->dir, FL_FILE_NAME_CONTEXTS);
	int opened = fl_record_stream_open(&rs, path, FL_FILE_CONTEXTS, err, sizeof(err));
	if (opened == 0)
		return 0;
	if (opened < 0)
		return FL_LOAD_HOLD;
	if (fl_load_set_path(ld, FL_FILE_NAME_CONTEXTS) < 0 || bits_init(&seen, seqs->n) < 0 ||
	    window_start(&check, FIRST_WINDOW) < 0) {
		free(seen.words);
		fl_record_stream_close(&rs);
		return FL_LOAD_HOLD;
	}
	{
		unsigned char head[4096];
		ssize_t got = pread(rs.fd, head, sizeof(head), 0);
		if (got <= 0 || fl_load_header(ld, head, (size_t)got, FL_FILE_CONTEXTS) < 0)
			goto out;
	}
	for (;;) {
		struct fl_fault_context c;
		int got = fl_record_stream_next(&rs, &c);
		if (got < 0)
			goto out;
		if (got == 0)
			break;
		if (c.npmu > FL_PMU_MAX || !stack_ok(proc, c.stack_id) || !bits_get(seqs, c.seq) ||
		    !bits_set_new(&seen, c.seq))
			goto out;
		window_add(&check, c.seq, 0);
		count++;
	}
	proc->ncontexts = count;
	rc = 0;
out:;
	bool in_order = window_finish(&check);
	if (rc == 0) {
		proc->priv->has_contexts = true;
		proc->priv->context_window = FIRST_WINDOW;
		if (!in_order)
			rc = measure_window(&rs, false, FIRST_WINDOW, &proc->priv->context_window);
	}
	free(seen.words);
	fl_record_stream_close(&rs);
	return rc;
}

/* The stats.json count must equal the records (no record lost, none dropped). */
static bool count_agrees(const struct fl_process *proc)
{
	uint64_t total, dropped;
	return fl_load_stats_records(proc, &total, &dropped) && dropped == 0 && total <= proc->nfaults;
}

int fl_load_stream_process(struct loader *ld)
{
	struct fl_process *proc = ld->proc;
	struct fl_record_stream rs;
	struct bits seqs = { NULL, 0 };
	struct unlogged u;
	char err[256];
	unsigned char head[4096];
	int rc;

	memset(&u, 0, sizeof(u));
	if (!proc->has_stats || proc->maybe_cut || fl_load_set_path(ld, FL_FILE_NAME_FAULTS) < 0)
		return FL_LOAD_HOLD;
	if (fl_record_stream_open(&rs, ld->path, FL_FILE_FAULTS, err, sizeof(err)) <= 0)
		return FL_LOAD_HOLD;
	ssize_t got = pread(rs.fd, head, sizeof(head), 0);
	int64_t n = fl_record_stream_count(&rs);
	if (got <= 0 || n < 0 || n > UINT32_MAX - 1 || fl_load_header(ld, head, (size_t)got, FL_FILE_FAULTS) < 0) {
		fl_record_stream_close(&rs);
		return FL_LOAD_HOLD;
	}
	fl_load_take_fault_header(ld, proc);
	/* what the faults need first; an error here is the holding loader's to word */
	if (fl_load_stacks(ld) != 0 || fl_load_allocs(ld) != 0 || fl_load_sites(ld) != 0 || proc->maybe_cut) {
		fl_record_stream_close(&rs);
		return FL_LOAD_HOLD;
	}
	rc = scan_faults(ld, &rs, (uint64_t)n, &seqs, &u);
	fl_record_stream_close(&rs);
	if (rc == 0 && !count_agrees(proc))
		rc = FL_LOAD_HOLD;
	if (rc == 0)
		rc = scan_contexts(ld, &seqs);
	free(seqs.words);
	if (rc == 0) {
		if (u.n)
			qsort(u.made, u.n, sizeof(*u.made), compare_alloc_id);
		if (fl_load_add_unlogged(ld, u.made, u.n) < 0 || fl_load_maps(ld) != 0 || proc->maybe_cut)
			rc = FL_LOAD_HOLD;
	}
	report_map_free(&u.by_id);
	free(u.made);
	free(u.first_seq);
	if (rc == 0) {
		proc->faults_lost = 0;
		proc->faults_lost_exact = true;
		proc->priv->streaming = true;
	}
	return rc;
}
