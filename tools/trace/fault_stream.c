/* fault_stream.c: a process's faults in time order, joined to their contexts and allocations, read
 * from the files in bounded memory (fault_stream.h); and the faults of every process merged in
 * time order over the processes' streams (trace_reader.h, fl_fault_iter). */
#include "fault_stream.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record_stream.h"
#include "reorder.h"
#include "trace_load_state.h"

/* Contexts read ahead of their faults, by seq: open addressing, linear probing, deletion by
 * shifting the following entries back (no tombstones), at most half full. */
struct waiting_contexts {
	struct fl_fault_context *slots;
	bool *used;
	size_t cap, count;
};

struct fl_fault_stream {
	const struct fl_process *proc;
	size_t next_index;                 /* held faults: the next index into proc->faults */
	/* streamed faults */
	struct fl_record_stream faults;
	bool faults_open, faults_done;
	struct reorder fault_order;        /* fl_fault_record, keyed (time_ns, seq) */
	uint64_t last_time, last_seq;
	bool emitted;
	/* streamed contexts */
	struct fl_record_stream contexts;
	bool contexts_open, contexts_done;
	struct reorder context_order;      /* fl_fault_context, keyed (seq, 0) */
	struct fl_fault_context next_context; /* the least context not yet waiting or taken */
	bool have_next_context;
	struct waiting_contexts waiting;
	/* the last two faults returned (and their contexts) */
	struct fl_fault out[2];
	struct fl_fault_context out_context[2];
	unsigned turn;
	const struct fl_fault_context *outer_contexts; /* the slots of the stream this one nests in */
	/* the allocation join: consecutive faults mostly hit one object */
	uint32_t last_alloc_id, last_alloc;
	uint64_t last_obj_addr;
	char err[768];
};

static int fail(struct fl_fault_stream *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct fl_fault_stream *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
	return -1;
}

/* ----------------------------------------------------------------- contexts waiting by seq */

static size_t seq_hash(uint64_t seq, size_t cap)
{
	uint64_t x = seq * 0x9e3779b97f4a7c15ull;
	return (size_t)(x ^ (x >> 29)) & (cap - 1);
}

static int waiting_put(struct waiting_contexts *w, const struct fl_fault_context *c)
{
	if ((w->count + 1) * 2 > w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 1024;
		struct fl_fault_context *slots = malloc(cap * sizeof(*slots));
		bool *used = calloc(cap, sizeof(*used));
		if (!slots || !used) {
			free(slots);
			free(used);
			return -1;
		}
		for (size_t i = 0; i < w->cap; i++) {
			if (!w->used[i])
				continue;
			size_t j = seq_hash(w->slots[i].seq, cap);
			while (used[j])
				j = (j + 1) & (cap - 1);
			used[j] = true;
			slots[j] = w->slots[i];
		}
		free(w->slots);
		free(w->used);
		w->slots = slots;
		w->used = used;
		w->cap = cap;
	}
	size_t j = seq_hash(c->seq, w->cap);
	while (w->used[j])
		j = (j + 1) & (w->cap - 1);
	w->used[j] = true;
	w->slots[j] = *c;
	w->count++;
	return 0;
}

/* Takes the context of SEQ out of the table into *out: true, or false when it is not there. */
static bool waiting_take(struct waiting_contexts *w, uint64_t seq, struct fl_fault_context *out)
{
	if (w->count == 0)
		return false;
	size_t j = seq_hash(seq, w->cap);
	while (w->used[j] && w->slots[j].seq != seq)
		j = (j + 1) & (w->cap - 1);
	if (!w->used[j])
		return false;
	*out = w->slots[j];
	w->used[j] = false;
	w->count--;
	/* shift back the entries of the probe run that follows */
	for (size_t k = (j + 1) & (w->cap - 1); w->used[k]; k = (k + 1) & (w->cap - 1)) {
		size_t home = seq_hash(w->slots[k].seq, w->cap);
		bool movable = j <= k ? (home <= j || home > k) : (home <= j && home > k);
		if (movable) {
			w->slots[j] = w->slots[k];
			w->used[j] = true;
			w->used[k] = false;
			j = k;
		}
	}
	return true;
}

/* ----------------------------------------------------------------- reading in order */

/* The next context in seq order into s->next_context (have_next_context false at the end). */
static int pull_context(struct fl_fault_stream *s)
{
	uint64_t a, b;
	while (!s->contexts_done && reorder_has_room(&s->context_order)) {
		struct fl_fault_context c;
		int rc = fl_record_stream_next(&s->contexts, &c);
		if (rc < 0)
			return fail(s, "%s", s->contexts.note);
		if (rc == 0) {
			s->contexts_done = true;
			break;
		}
		void *slot = reorder_push(&s->context_order, c.seq, 0);
		if (!slot)
			return fail(s, "%s: out of memory for the contexts' reorder window", s->proc->dir);
		memcpy(slot, &c, sizeof(c));
	}
	const void *c = reorder_pop(&s->context_order, &a, &b);
	s->have_next_context = c != NULL;
	if (c)
		memcpy(&s->next_context, c, sizeof(s->next_context));
	return 0;
}

/* The context of fault F into *out: true when it has one. -1 on error. */
static int join_context(struct fl_fault_stream *s, const struct fl_fault_record *f, struct fl_fault_context *out)
{
	if (!s->contexts_open)
		return 0;
	while (s->have_next_context && s->next_context.seq <= f->seq) {
		if (s->next_context.seq == f->seq) {
			*out = s->next_context;
			if (pull_context(s) < 0)
				return -1;
			goto found;
		}
		if (waiting_put(&s->waiting, &s->next_context) < 0)
			return fail(s, "%s: out of memory for contexts read ahead", s->proc->dir);
		if (pull_context(s) < 0)
			return -1;
	}
	if (!waiting_take(&s->waiting, f->seq, out))
		return 0;
found:
	if (out->tid != f->tid)
		return fail(s, "%s/%s: the context of seq %llu names tid %u, its fault tid %u", s->proc->dir,
			    FL_FILE_NAME_CONTEXTS, (unsigned long long)f->seq, out->tid, f->tid);
	return 1;
}

/* The allocation fault record R hit (as the loader joins a fault that names its object). */
static uint32_t join_alloc(struct fl_fault_stream *s, const struct fl_fault_record *r)
{
	if (!r->obj_addr || !(r->flags & FL_FAULT_OBJECT))
		return FL_NONE;
	if (r->obj_alloc_id != s->last_alloc_id || r->obj_addr != s->last_obj_addr || s->last_alloc_id == 0) {
		const struct fl_alloc_record *a = fl_process_alloc_by_id(s->proc, r->obj_alloc_id);
		s->last_alloc_id = r->obj_alloc_id;
		s->last_obj_addr = r->obj_addr;
		s->last_alloc = a && a->addr == r->obj_addr ? (uint32_t)(a - s->proc->allocs) : FL_NONE;
	}
	return s->last_alloc;
}

static int next_streamed(struct fl_fault_stream *s, const struct fl_fault **f)
{
	uint64_t time, seq;
	while (!s->faults_done && reorder_has_room(&s->fault_order)) {
		struct fl_fault_record r;
		int rc = fl_record_stream_next(&s->faults, &r);
		if (rc < 0)
			return fail(s, "%s", s->faults.note);
		if (rc == 0) {
			s->faults_done = true;
			break;
		}
		void *slot = reorder_push(&s->fault_order, r.time_ns, r.seq);
		if (!slot)
			return fail(s, "%s: out of memory for the faults' reorder window", s->proc->dir);
		memcpy(slot, &r, sizeof(r));
	}
	const void *r = reorder_pop(&s->fault_order, &time, &seq);
	if (!r)
		return 0;
	if (s->emitted && (time < s->last_time || (time == s->last_time && seq <= s->last_seq)))
		return fail(s, "%s/%s: seq %llu out of time order beyond the window measured at the open",
			    s->proc->dir, FL_FILE_NAME_FAULTS, (unsigned long long)seq);
	s->emitted = true;
	s->last_time = time;
	s->last_seq = seq;
	unsigned t = s->turn++ & 1;
	struct fl_fault *out = &s->out[t];
	memcpy(&out->rec, r, sizeof(out->rec));
	int rc = join_context(s, &out->rec, &s->out_context[t]);
	if (rc < 0)
		return -1;
	out->context = rc ? t : FL_NONE;
	out->alloc = join_alloc(s, &out->rec);
	s->proc->priv->stream_contexts = s->out_context;
	*f = out;
	return 1;
}

int fl_fault_stream_next(struct fl_fault_stream *s, const struct fl_fault **f)
{
	if (!s->proc->priv || !s->proc->priv->streaming) {
		if (s->next_index >= s->proc->nfaults)
			return 0;
		*f = &s->proc->faults[s->next_index++];
		return 1;
	}
	return next_streamed(s, f);
}

const char *fl_fault_stream_error(const struct fl_fault_stream *s)
{
	return s->err;
}

int fl_fault_stream_open(const struct fl_process *proc, struct fl_fault_stream **out, char *err, size_t errlen)
{
	struct fl_fault_stream *s = calloc(1, sizeof(*s));
	char path[PATH_MAX + 64];

	*out = NULL;
	if (!s) {
		snprintf(err, errlen, "%s: out of memory", proc->dir);
		return -1;
	}
	s->proc = proc;
	if (!proc->priv || !proc->priv->streaming) {
		*out = s;
		return 0;
	}
	snprintf(path, sizeof(path), "%s/%s", proc->dir, FL_FILE_NAME_FAULTS);
	int rc = fl_record_stream_open(&s->faults, path, FL_FILE_FAULTS, err, errlen);
	s->faults_open = rc > 0;
	if (rc <= 0) {
		if (rc == 0)
			snprintf(err, errlen, "%s: gone since the recording was opened", path);
		fl_fault_stream_close(s);
		return -1;
	}
	if (reorder_init(&s->fault_order, proc->priv->fault_window, sizeof(struct fl_fault_record)) < 0) {
		snprintf(err, errlen, "%s: out of memory for a reorder window of %u records", path, proc->priv->fault_window);
		fl_fault_stream_close(s);
		return -1;
	}
	if (proc->priv->has_contexts) {
		snprintf(path, sizeof(path), "%s/%s", proc->dir, FL_FILE_NAME_CONTEXTS);
		rc = fl_record_stream_open(&s->contexts, path, FL_FILE_CONTEXTS, err, errlen);
		s->contexts_open = rc > 0;
		if (rc <= 0 || reorder_init(&s->context_order, proc->priv->context_window, sizeof(struct fl_fault_context)) < 0 ||
		    pull_context(s) < 0) {
			if (rc == 0)
				snprintf(err, errlen, "%s: gone since the recording was opened", path);
			else if (rc > 0)
				snprintf(err, errlen, "%s", s->err[0] ? s->err : "out of memory for the contexts' reorder window");
			fl_fault_stream_close(s);
			return -1;
		}
	}
	s->outer_contexts = proc->priv->stream_contexts;
	proc->priv->stream_contexts = s->out_context;
	*out = s;
	return 0;
}

void fl_fault_stream_close(struct fl_fault_stream *s)
{
	if (!s)
		return;
	if (s->faults_open)
		fl_record_stream_close(&s->faults);
	if (s->contexts_open)
		fl_record_stream_close(&s->contexts);
	reorder_free(&s->fault_order);
	reorder_free(&s->context_order);
	free(s->waiting.slots);
	free(s->waiting.used);
	if (s->proc->priv && s->proc->priv->streaming && s->faults_open)
		s->proc->priv->stream_contexts = s->outer_contexts;
	free(s);
}

/* ----------------------------------------------------------------- every process, merged */

/* The recording time of process index P's next fault (the heap key). */
static uint64_t iter_key(const struct fl_fault_iter *it, size_t p)
{
	return fl_fault_time_ns(&it->rec->procs[p], it->head[p]);
}

static bool iter_less(const struct fl_fault_iter *it, size_t a, size_t b)
{
	uint64_t x = iter_key(it, a), y = iter_key(it, b);
	return x != y ? x < y : a < b; /* ties: process order (seq order within a process) */
}

static void iter_sift_down(struct fl_fault_iter *it, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < it->nheap && iter_less(it, it->heap[l], it->heap[m]))
			m = l;
		if (r < it->nheap && iter_less(it, it->heap[r], it->heap[m]))
			m = r;
		if (m == i)
			return;
		size_t t = it->heap[i];
		it->heap[i] = it->heap[m];
		it->heap[m] = t;
		i = m;
	}
}

/* Reads process P's next fault into it->head[p]: 1, 0 at its end, -1 (it->error). */
static int iter_advance(struct fl_fault_iter *it, size_t p)
{
	int rc = fl_fault_stream_next(it->streams[p], &it->head[p]);
	if (rc < 0)
		snprintf(it->error, sizeof(it->error), "%s", fl_fault_stream_error(it->streams[p]));
	return rc;
}

int fl_fault_iter_init(struct fl_fault_iter *it, const struct fl_recording *rec, uint32_t pid)
{
	size_t n = rec->nprocs ? rec->nprocs : 1;

	memset(it, 0, sizeof(*it));
	it->rec = rec;
	it->heap = malloc(n * sizeof(*it->heap));
	it->streams = calloc(n, sizeof(*it->streams));
	it->head = calloc(n, sizeof(*it->head));
	if (!it->heap || !it->streams || !it->head) {
		fl_fault_iter_free(it);
		snprintf(it->error, sizeof(it->error), "out of memory");
		errno = ENOMEM;
		return -1;
	}
	for (size_t p = 0; p < rec->nprocs; p++) {
		if ((pid != 0 && rec->procs[p].pid != pid) || rec->procs[p].nfaults == 0)
			continue;
		int rc = fl_fault_stream_open(&rec->procs[p], &it->streams[p], it->error, sizeof(it->error));
		if (rc == 0)
			rc = iter_advance(it, p);
		if (rc < 0) {
			fl_fault_iter_free(it);
			errno = EIO;
			return -1;
		}
		if (rc > 0)
			it->heap[it->nheap++] = p;
	}
	for (size_t i = it->nheap; i-- > 0;)
		iter_sift_down(it, i);
	return 0;
}

const struct fl_fault *fl_fault_iter_next(struct fl_fault_iter *it, const struct fl_process **proc_out)
{
	if (it->nheap == 0)
		return NULL;
	size_t p = it->heap[0];
	const struct fl_fault *f = it->head[p];
	int rc = iter_advance(it, p);
	if (rc < 0) {
		it->nheap = 0;
		return NULL;
	}
	if (rc == 0)
		it->heap[0] = it->heap[--it->nheap];
	iter_sift_down(it, 0);
	if (proc_out)
		*proc_out = &it->rec->procs[p];
	return f;
}

void fl_fault_iter_free(struct fl_fault_iter *it)
{
	for (size_t p = 0; it->streams && p < it->rec->nprocs; p++)
		fl_fault_stream_close(it->streams[p]);
	free(it->streams);
	free(it->head);
	free(it->heap);
	it->streams = NULL;
	it->head = NULL;
	it->heap = NULL;
	it->nheap = 0;
}
