/* trace_load_faults.c: loads a process's faults, stacks and contexts from their mapped files and
 * joins them: each fault to its context (by seq) and to its stacks (by id).
 *
 * Faults are validated where they lie in the mapping, then copied once into proc->faults in time
 * order. Handlers append their own chunks, each handler's records in (time, seq) order, so the
 * file is a few sorted runs interleaved: the records are grouped by handler (a counting pass) and
 * merged; only a file that breaks the per-handler order is sorted. Seqs, numbered 0, 1, 2, ... by
 * the runtime, index the faults through a direct table (a sorted index when they are sparse), and
 * stack ids the stacks likewise. Contexts are checked in place and then either used in place (a
 * file already in seq order, of this version's record size) or gathered once in seq order by
 * walking the seq table: no sort of copies. Version-1 records (32-bit seqs) are decoded into the
 * version-2 structs. */
#include "trace_load_faults.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STACK_FLAGS_KNOWN (FL_STACK_EXACT_PC | FL_STACK_TRUNCATED)
#define FAULT_FLAGS_KNOWN (FL_FAULT_WRITE | FL_FAULT_PREFETCH_HIT | FL_FAULT_NO_STACK | FL_FAULT_OBJECT)
#define MAX_HANDLERS 256 /* the record's handler field is a byte */

/* A direct table is used for keys spanning at most this many slots per record (plus a little). */
#define DENSE_SLOTS(n) (2 * (uint64_t)(n) + 1024)

/* Where the fields of a fault record are, by format version (for decoding and for naming the
 * offset of a bad field). */
struct fault_layout {
	size_t tid, seq, stack_id, kind, flags, handler;
};
static const struct fault_layout fault_layout_v1 = {
	FL_FAULT_RECORD_V1_TID, FL_FAULT_RECORD_V1_SEQ, FL_FAULT_RECORD_V1_STACK_ID,
	FL_FAULT_RECORD_V1_STACK_ID + 4, FL_FAULT_RECORD_V1_STACK_ID + 5, FL_FAULT_RECORD_V1_STACK_ID + 6,
};
static const struct fault_layout fault_layout_v2 = {
	offsetof(struct fl_fault_record, tid), offsetof(struct fl_fault_record, seq),
	offsetof(struct fl_fault_record, stack_id), offsetof(struct fl_fault_record, kind),
	offsetof(struct fl_fault_record, flags), offsetof(struct fl_fault_record, handler),
};

static const struct fault_layout *fault_layout(uint32_t version)
{
	return version == 1 ? &fault_layout_v1 : &fault_layout_v2;
}

/* Decodes the fault record at P (RECORD_SIZE bytes, of format VERSION) into *out: the fields this
 * reader knows; those a shorter (older) record lacks are zero. */
static void decode_fault(const unsigned char *p, uint32_t version, uint32_t record_size, struct fl_fault_record *out)
{
	if (version >= 2) {
		if (record_size < sizeof(*out))
			memset(out, 0, sizeof(*out));
		memcpy(out, p, record_size < sizeof(*out) ? record_size : sizeof(*out));
		return;
	}
	uint32_t u32;
	memset(out, 0, sizeof(*out));
	memcpy(&out->time_ns, p + offsetof(struct fl_fault_record, time_ns), sizeof(out->time_ns));
	memcpy(&out->addr, p + offsetof(struct fl_fault_record, addr), sizeof(out->addr));
	memcpy(&out->tid, p + FL_FAULT_RECORD_V1_TID, sizeof(out->tid));
	memcpy(&u32, p + FL_FAULT_RECORD_V1_SEQ, sizeof(u32));
	out->seq = u32;
	memcpy(&out->stack_id, p + FL_FAULT_RECORD_V1_STACK_ID, sizeof(out->stack_id));
	memcpy(&out->kind, p + fault_layout_v1.kind, 4); /* kind, flags, handler, reserved */
	if (record_size >= FL_FAULT_RECORD_V1_OBJ + 24)
		memcpy(&out->obj_addr, p + FL_FAULT_RECORD_V1_OBJ, 24);
	else
		out->flags &= (uint8_t)~FL_FAULT_OBJECT; /* the record has no object fields */
}

/* Decodes the context record at P (of format VERSION) into *out. */
static void decode_context(const unsigned char *p, uint32_t version, struct fl_fault_context *out)
{
	if (version >= 2) {
		memcpy(out, p, sizeof(*out));
		return;
	}
	uint32_t v1[4]; /* seq, stack_id, tid, npmu */
	memcpy(v1, p, sizeof(v1));
	memset(out, 0, sizeof(*out));
	out->seq = v1[0];
	out->stack_id = v1[1];
	out->tid = v1[2];
	out->npmu = v1[3];
	memcpy(out->pmu, p + FL_CONTEXT_V1_PMU, sizeof(out->pmu));
}

/* Where the fields of a context record are, by format version. */
static size_t context_field(uint32_t version, size_t v2_offset)
{
	if (version >= 2)
		return v2_offset;
	switch (v2_offset) {
	case offsetof(struct fl_fault_context, stack_id): return 4;
	case offsetof(struct fl_fault_context, tid): return 8;
	case offsetof(struct fl_fault_context, npmu): return 12;
	default: return 0;
	}
}


static int compare_fault_seq(const void *a, const void *b, void *faults_arg)
{
	const struct fl_fault *faults = faults_arg;
	uint64_t x = faults[*(const uint32_t *)a].rec.seq, y = faults[*(const uint32_t *)b].rec.seq;
	return x < y ? -1 : x > y;
}

static int compare_stack_id(const void *a, const void *b)
{
	uint32_t x = ((const struct fl_stack *)a)->id, y = ((const struct fl_stack *)b)->id;
	return x < y ? -1 : x > y;
}

/* File offset of fault record I (file order). */
static uint64_t fault_offset(const struct fl_process *proc, size_t i)
{
	return proc->priv->fault_data_offset + (uint64_t)i * proc->priv->fault_record_size;
}

/* Checks one fault record (except its stack reference, checked once stacks are read). */
static int check_fault(struct loader *ld, const struct fl_fault_record *r, uint64_t at, size_t i)
{
	const struct fl_file_header *h = &ld->faults_header;
	const struct fault_layout *l = fault_layout(ld->version);

	if (r->kind < FL_FAULT_FIRST_TOUCH || r->kind > FL_FAULT_KIND_MAX)
		return fl_load_fail_at(ld, at + l->kind, "fault record %zu: kind %u is not a fault kind (1..%u)", i, r->kind, FL_FAULT_KIND_MAX);
	if (r->flags & ~FAULT_FLAGS_KNOWN)
		return fl_load_fail_at(ld, at + l->flags, "fault record %zu: unknown flag bits 0x%x", i, r->flags & ~FAULT_FLAGS_KNOWN);
	if (r->addr < h->region_start || r->addr - h->region_start >= h->region_size)
		return fl_load_fail_at(ld, at + offsetof(struct fl_fault_record, addr), "fault record %zu: address 0x%llx outside the region [0x%llx, 0x%llx)",
			       i, (unsigned long long)r->addr, (unsigned long long)h->region_start,
			       (unsigned long long)(h->region_start + h->region_size));
	if (ld->handlers && r->handler >= ld->handlers)
		return fl_load_fail_at(ld, at + l->handler, "fault record %zu: handler %u, but meta.json says %llu handlers", i,
			       r->handler, (unsigned long long)ld->handlers);
	return 0;
}


/* The (time, seq) sort key of fault record I of the mapped file. */
struct fault_key {
	uint64_t time, seq;
};

static struct fault_key fault_key(const struct loader *ld, const unsigned char *data, size_t i)
{
	const unsigned char *p = data + ld->data_offset + (uint64_t)i * ld->record_size;
	struct fault_key k;
	memcpy(&k.time, p, sizeof(k.time));
	if (ld->version == 1) {
		uint32_t seq;
		memcpy(&seq, p + FL_FAULT_RECORD_V1_SEQ, sizeof(seq));
		k.seq = seq;
	} else {
		memcpy(&k.seq, p + offsetof(struct fl_fault_record, seq), sizeof(k.seq));
	}
	return k;
}

static bool key_less(struct fault_key a, struct fault_key b)
{
	return a.time != b.time ? a.time < b.time : a.seq < b.seq;
}

/* What the validation pass learned about the file's order. */
struct fault_scan {
	size_t per_handler[MAX_HANDLERS];
	bool handler_sorted;            /* each handler's records are in (time, seq) order */
	unsigned nhandlers;             /* handlers with records */
	uint64_t min_seq, max_seq;
	uint8_t *handler_of;            /* per record (file order): its handler, for the merge */
};

/* Validates every record where it lies and learns the file's order. */
static int scan_faults(struct loader *ld, const unsigned char *data, size_t n, struct fault_scan *scan)
{
	struct fl_process *proc = ld->proc;
	struct fault_key last[MAX_HANDLERS];

	memset(scan, 0, sizeof(*scan));
	scan->handler_sorted = true;
	scan->min_seq = UINT64_MAX;
	if (!(scan->handler_of = malloc(n ? n : 1)))
		return fl_load_nomem(ld, "the fault order");
	for (size_t i = 0; i < n; i++) {
		uint64_t at = ld->data_offset + (uint64_t)i * ld->record_size;
		struct fl_fault_record r;
		decode_fault(data + at, ld->version, ld->record_size, &r);
		if (check_fault(ld, &r, at, i) < 0)
			return -1;
		proc->fault_objects |= (r.flags & FL_FAULT_OBJECT) != 0;
		struct fault_key k = { r.time_ns, r.seq };
		scan->handler_of[i] = r.handler;
		if (scan->per_handler[r.handler]++ == 0)
			scan->nhandlers++;
		else if (key_less(k, last[r.handler]))
			scan->handler_sorted = false;
		last[r.handler] = k;
		if (r.seq < scan->min_seq)
			scan->min_seq = r.seq;
		if (r.seq > scan->max_seq)
			scan->max_seq = r.seq;
	}
	return 0;
}

static int compare_file_order(const void *a, const void *b, void *ld_data)
{
	const struct { const struct loader *ld; const unsigned char *data; } *c = ld_data;
	struct fault_key x = fault_key(c->ld, c->data, *(const uint32_t *)a);
	struct fault_key y = fault_key(c->ld, c->data, *(const uint32_t *)b);
	if (key_less(x, y))
		return -1;
	if (key_less(y, x))
		return 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : *(const uint32_t *)a > *(const uint32_t *)b;
}

/* Fault K in time order is record I of the file: noted in ld->fault_file_index and decoded. */
static void place_fault(struct loader *ld, const unsigned char *data, size_t k, uint32_t i)
{
	struct fl_fault *f = &ld->proc->faults[k];
	ld->fault_file_index[k] = i;
	decode_fault(data + ld->data_offset + (uint64_t)i * ld->record_size, ld->version, ld->record_size, &f->rec);
	f->context = FL_NONE;
	f->alloc = FL_NONE;
}

/* Puts the N records into (time, seq) order: proc->faults, and their file indexes in
 * ld->fault_file_index. */
static int order_faults(struct loader *ld, const unsigned char *data, size_t n, const struct fault_scan *scan)
{
	uint32_t *order = malloc((n ? n : 1) * sizeof(*order));
	if (!order)
		return fl_load_nomem(ld, "the fault order");
	ld->fault_file_index = order;
	if (scan->nhandlers <= 1 || !scan->handler_sorted) {
		for (size_t i = 0; i < n; i++)
			order[i] = (uint32_t)i;
		if (scan->nhandlers > 1 || !scan->handler_sorted) {
			struct { const struct loader *ld; const unsigned char *data; } c = { ld, data };
			qsort_r(order, n, sizeof(*order), compare_file_order, &c);
		}
		for (size_t k = 0; k < n; k++)
			place_fault(ld, data, k, order[k]);
		return 0;
	}
	/* group the records by handler (file order within each), then merge the runs */
	uint32_t *grouped = malloc(n * sizeof(*grouped));
	size_t start[MAX_HANDLERS + 1], head[MAX_HANDLERS], end[MAX_HANDLERS];
	unsigned live[MAX_HANDLERS], nlive = 0;
	struct fault_key head_key[MAX_HANDLERS]; /* by position in live: the key of its run's head */
	if (!grouped)
		return fl_load_nomem(ld, "the fault order");
	start[0] = 0;
	for (unsigned h = 0; h < MAX_HANDLERS; h++) {
		start[h + 1] = start[h] + scan->per_handler[h];
		head[h] = start[h];
		end[h] = start[h + 1];
		if (scan->per_handler[h])
			live[nlive++] = h;
	}
	for (size_t i = 0; i < n; i++)
		grouped[head[scan->handler_of[i]]++] = (uint32_t)i;
	for (unsigned h = 0; h < MAX_HANDLERS; h++)
		head[h] = start[h];
	for (unsigned j = 0; j < nlive; j++)
		head_key[j] = fault_key(ld, data, grouped[head[live[j]]]);
	/* few handlers: the next record is the least of the live runs' heads */
	for (size_t k = 0; k < n; k++) {
		unsigned best = 0;
		for (unsigned j = 1; j < nlive; j++) {
			if (key_less(head_key[j], head_key[best]))
				best = j;
		}
		unsigned h = live[best];
		place_fault(ld, data, k, grouped[head[h]++]);
		if (head[h] == end[h]) {
			live[best] = live[--nlive];
			head_key[best] = head_key[nlive];
		} else {
			head_key[best] = fault_key(ld, data, grouped[head[h]]);
		}
	}
	free(grouped);
	return 0;
}

/* Indexes the faults (in time order) by seq, and fails on a seq that appears twice. */
static int index_seqs(struct loader *ld, const struct fault_scan *scan)
{
	struct fl_process *proc = ld->proc;
	struct fl_process_private *priv = proc->priv;
	size_t n = proc->nfaults;
	const uint32_t *file_index = ld->fault_file_index;
	size_t a = 0, b = 0;
	uint64_t dup = 0;

	if (n == 0)
		return 0;
	if (scan->max_seq - scan->min_seq < DENSE_SLOTS(n)) {
		priv->seq_base = scan->min_seq;
		priv->seq_span = scan->max_seq - scan->min_seq + 1;
		priv->seq_table = malloc(priv->seq_span * sizeof(*priv->seq_table));
		if (!priv->seq_table)
			return fl_load_nomem(ld, "the seq index");
		memset(priv->seq_table, 0xff, priv->seq_span * sizeof(*priv->seq_table));
		for (size_t k = 0; k < n; k++) {
			uint32_t *slot = &priv->seq_table[proc->faults[k].rec.seq - priv->seq_base];
			if (*slot != FL_NONE) {
				a = file_index[*slot], b = file_index[k], dup = proc->faults[k].rec.seq;
				goto duplicate;
			}
			*slot = (uint32_t)k;
		}
		return 0;
	}
	/* sparse seqs: indexes sorted by seq */
	priv->fault_by_seq = malloc(n * sizeof(uint32_t));
	if (!priv->fault_by_seq)
		return fl_load_nomem(ld, "the seq index");
	for (size_t k = 0; k < n; k++)
		priv->fault_by_seq[k] = (uint32_t)k;
	qsort_r(priv->fault_by_seq, n, sizeof(uint32_t), compare_fault_seq, proc->faults);
	for (size_t k = 1; k < n; k++) {
		const struct fl_fault *x = &proc->faults[priv->fault_by_seq[k - 1]], *y = &proc->faults[priv->fault_by_seq[k]];
		if (x->rec.seq == y->rec.seq) {
			a = file_index[priv->fault_by_seq[k - 1]], b = file_index[priv->fault_by_seq[k]], dup = x->rec.seq;
			goto duplicate;
		}
	}
	return 0;
duplicate:
	if (a > b) {
		size_t t = a;
		a = b, b = t;
	}
	if (fl_load_set_path(ld, FL_FILE_NAME_FAULTS) < 0)
		return -1;
	return fl_load_fail_at(ld, fault_offset(proc, b), "seq %llu appears twice (records %zu and %zu)",
			       (unsigned long long)dup, a, b);
}

int fl_load_faults(struct loader *ld)
{
	struct fl_process *proc = ld->proc;
	struct mapped_file file;
	struct fault_scan scan;
	size_t n;
	int rc = fl_load_binary(ld, FL_FILE_NAME_FAULTS, FL_FILE_FAULTS, &file, &n);

	if (rc == 0)
		return fl_load_fail(ld, "missing: every process directory must have one");
	if (rc < 0)
		return -1;
	/* From the header, or from meta.json for what a header cut short lacks. */
	fl_load_take_fault_header(ld, proc);
	if (n > UINT32_MAX - 1) {
		fl_load_unmap(&file);
		return fl_load_fail(ld, "%zu records: more than this reader indexes", n);
	}
	proc->faults = malloc((n ? n : 1) * sizeof(*proc->faults));
	if (!proc->faults) {
		fl_load_unmap(&file);
		return fl_load_nomem(ld, "fault records");
	}
	rc = scan_faults(ld, file.data, n, &scan) < 0 || order_faults(ld, file.data, n, &scan) < 0 ? -1 : 0;
	free(scan.handler_of);
	fl_load_unmap(&file);
	if (rc < 0)
		return -1;
	proc->nfaults = n;
	for (size_t k = 0; k < n; k++)
		proc->kind_counts[proc->faults[k].rec.kind]++; /* checked: a kind in range */
	proc->last_fault_ns = n ? proc->faults[n - 1].rec.time_ns : 0;
	return index_seqs(ld, &scan);
}

/* ======================================================================= stacks */

/* Walks the stack records of DATA[header_size, len): with stacks NULL only counts them (and
 * validates them: errors are reported on this pass); otherwise fills stacks. Returns the number
 * of complete records, or -1. A record cut short ends the walk with a truncation warning. */
static long walk_stacks(struct loader *ld, const unsigned char *data, size_t len, struct fl_stack *stacks)
{
	size_t at = ld->data_offset, n = 0;

	while (at < len) {
		struct fl_stack_record r;
		size_t rest = len - at;
		if (rest < sizeof(r))
			goto truncated;
		memcpy(&r, data + at, sizeof(r));
		if (!stacks) {
			if (r.stack_id == 0)
				return fl_load_fail_at(ld, at, "stack record %zu: stack id 0 (ids start at 1)", n);
			if (r.nframes > FL_STACK_MAX_FRAMES)
				return fl_load_fail_at(ld, at + offsetof(struct fl_stack_record, nframes), "stack record %zu (id %u): %u frames, at most %d", n,
					       r.stack_id, r.nframes, FL_STACK_MAX_FRAMES);
			if (r.flags & ~STACK_FLAGS_KNOWN)
				return fl_load_fail_at(ld, at + offsetof(struct fl_stack_record, flags), "stack record %zu (id %u): unknown flag bits 0x%x", n,
					       r.stack_id, r.flags & ~STACK_FLAGS_KNOWN);
		}
		size_t size = sizeof(r) + (size_t)r.nframes * sizeof(uint64_t);
		if (rest < size)
			goto truncated;
		if (stacks) {
			stacks[n].id = r.stack_id;
			stacks[n].nframes = r.nframes;
			stacks[n].flags = r.flags;
			stacks[n].hash = r.hash;
			/* Every record starts 8-aligned (64 + 16 + 8k) in an 8-aligned buffer. */
			stacks[n].frames = (const uint64_t *)(const void *)(data + at + sizeof(r));
		}
		at += size;
		n++;
	}
	return (long)n;
truncated:
	if (!stacks) {
		ld->proc->maybe_cut = true;
		fl_load_warning(ld->rec, "%s: truncated at offset %zu (%zu complete records; %zu bytes of a partial "
			    "record ignored)", ld->path, at, n, len - at);
	}
	return (long)n;
}

/* Indexes the stacks by id (a direct table when the ids are compact) and puts them in id order;
 * fails on an id defined twice. STACKS came in file order. */
static int index_stacks(struct loader *ld, struct fl_stack *stacks, size_t n)
{
	struct fl_process *proc = ld->proc;
	struct fl_process_private *priv = proc->priv;
	uint32_t max_id = 0;
	const struct fl_stack *dup = NULL;

	for (size_t i = 0; i < n; i++)
		if (stacks[i].id > max_id)
			max_id = stacks[i].id;
	if (n && max_id < DENSE_SLOTS(n)) {
		uint32_t *table = malloc(((size_t)max_id + 1) * sizeof(*table));
		struct fl_stack *sorted = malloc(n * sizeof(*sorted));
		if (!table || !sorted) {
			free(table), free(sorted);
			return fl_load_nomem(ld, "the stack index");
		}
		memset(table, 0xff, ((size_t)max_id + 1) * sizeof(*table));
		for (size_t i = 0; i < n && !dup; i++) {
			if (table[stacks[i].id] != FL_NONE)
				dup = &stacks[i]; /* the later definition (file order) */
			table[stacks[i].id] = (uint32_t)i;
		}
		size_t k = 0;
		for (uint32_t id = 0; id <= max_id && !dup; id++)
			if (table[id] != FL_NONE) {
				sorted[k] = stacks[table[id]];
				table[id] = (uint32_t)k++;
			}
		if (dup) {
			free(table), free(sorted);
		} else {
			memcpy(stacks, sorted, n * sizeof(*stacks));
			free(sorted);
			priv->stack_table = table;
			priv->stack_span = max_id + 1;
		}
	} else {
		qsort(stacks, n, sizeof(*stacks), compare_stack_id);
		for (size_t i = 1; i < n && !dup; i++) {
			if (stacks[i].id == stacks[i - 1].id)
				dup = stacks[i].frames > stacks[i - 1].frames ? &stacks[i] : &stacks[i - 1];
		}
	}
	if (dup) {
		size_t later = (size_t)((const unsigned char *)dup->frames - priv->stacks_file.data) - sizeof(struct fl_stack_record);
		return fl_load_fail_at(ld, later, "stack id %u defined twice", dup->id);
	}
	return 0;
}

int fl_load_stacks(struct loader *ld)
{
	struct fl_process *proc = ld->proc;
	struct mapped_file *file = &proc->priv->stacks_file;
	size_t unused;
	int rc = fl_load_binary(ld, FL_FILE_NAME_STACKS, FL_FILE_STACKS, file, &unused);

	if (rc == 0) { /* the runtime always writes one: lost, so references to it are warnings, as when cut */
		ld->stacks_missing = true;
		return 0;
	}
	if (rc < 0)
		return rc;
	long n = walk_stacks(ld, file->data, file->len, NULL);
	if (n < 0)
		return -1;
	proc->stacks = calloc(n ? (size_t)n : 1, sizeof(*proc->stacks));
	if (!proc->stacks)
		return fl_load_nomem(ld, "stack records");
	proc->nstacks = (size_t)walk_stacks(ld, file->data, file->len, proc->stacks);
	return index_stacks(ld, proc->stacks, proc->nstacks);
}

int fl_load_check_stack_ref(struct loader *ld, uint32_t *id, uint64_t offset, const char *what, size_t i)
{
	if (*id == 0 || fl_process_stack(ld->proc, *id))
		return 0;
	if (ld->stacks_missing && !ld->proc->maybe_cut) { /* said once, at the first reference */
		fl_load_warning(ld->rec, "%s/%s: missing: the process's trace is read as cut (its faults keep no stacks)",
				ld->proc->dir, FL_FILE_NAME_STACKS);
		ld->proc->maybe_cut = true;
	}
	if (fl_load_dangling(ld, offset, "%s %zu: stack id %u is not defined in %s/%s", what, i, *id,
			     ld->proc->dir, FL_FILE_NAME_STACKS) < 0)
		return -1;
	*id = 0;
	return 0;
}

int fl_load_fault_joins(struct loader *ld)
{
	struct fl_process *proc = ld->proc;
	uint32_t version = proc->priv->fault_version;
	size_t obj_stack = version == 1 ? FL_FAULT_RECORD_V1_OBJ + 20 : offsetof(struct fl_fault_record, obj_stack_id);

	/* the last stack ids found defined (0 after one was dropped): runs of faults share their stacks */
	uint32_t known_stack = 0, known_obj_stack = 0;

	if (fl_load_set_path(ld, FL_FILE_NAME_FAULTS) < 0)
		return -1;
	for (size_t k = 0; k < proc->nfaults; k++) {
		struct fl_fault_record *r = &proc->faults[k].rec;
		size_t i = ld->fault_file_index[k];
		uint64_t at = fault_offset(proc, i);
		if (r->stack_id != known_stack) {
			if (fl_load_check_stack_ref(ld, &r->stack_id, at + fault_layout(version)->stack_id, "fault record", i) < 0)
				return -1;
			known_stack = r->stack_id; /* defined (0 when it was not: dropped) */
		}
		if ((r->flags & FL_FAULT_OBJECT) && r->obj_stack_id != known_obj_stack) {
			if (fl_load_check_stack_ref(ld, &r->obj_stack_id, at + obj_stack, "fault record", i) < 0)
				return -1;
			known_obj_stack = r->obj_stack_id;
		}
	}
	fl_load_report_dangling(ld, "stack ids of fault records (a fault's own and its object's allocation stack)");
	return 0;
}

/* ======================================================================= contexts */

/* Calls VISIT on every fault in seq order. */
static void for_each_in_seq_order(struct fl_process *proc, void (*visit)(struct fl_fault *, void *), void *arg)
{
	const struct fl_process_private *priv = proc->priv;
	if (priv->seq_table) {
		for (uint64_t s = 0; s < priv->seq_span; s++)
			if (priv->seq_table[s] != FL_NONE)
				visit(&proc->faults[priv->seq_table[s]], arg);
	} else if (priv->fault_by_seq) {
		for (size_t k = 0; k < proc->nfaults; k++)
			visit(&proc->faults[priv->fault_by_seq[k]], arg);
	}
}

/* Gathering the contexts in seq order: each fault's context (a file index until now) is copied. */
struct gather {
	const struct loader *ld;
	const unsigned char *data;
	struct fl_fault_context *out;
	size_t n;
};

static void gather_context(struct fl_fault *f, void *arg)
{
	struct gather *g = arg;
	if (f->context == FL_NONE)
		return;
	decode_context(g->data + g->ld->data_offset + (uint64_t)f->context * g->ld->record_size, g->ld->version,
		       &g->out[g->n]);
	f->context = (uint32_t)g->n++;
}

/* Checks context record I (at AT) and joins it to its fault (f->context = I). Returns 1 when it
 * was joined, 0 when it names a fault missing from a cut trace, -1 on error. */
static int join_context(struct loader *ld, unsigned char *data, size_t i, uint64_t at)
{
	struct fl_process *proc = ld->proc;
	struct fl_fault_context c;

	decode_context(data + at, ld->version, &c);
	if (c.npmu > FL_PMU_MAX)
		return fl_load_fail_at(ld, at + context_field(ld->version, offsetof(struct fl_fault_context, npmu)),
				       "context record %zu: npmu %u, at most %d", i, c.npmu, FL_PMU_MAX);
	size_t stack_at = context_field(ld->version, offsetof(struct fl_fault_context, stack_id));
	uint32_t recorded_stack = c.stack_id;
	if (fl_load_check_stack_ref(ld, &c.stack_id, at + stack_at, "context record", i) < 0)
		return -1;
	if (c.stack_id != recorded_stack) { /* cleared: dangling in a trace that may be cut */
		if (fl_trace_file_make_writable(ld->path, &proc->priv->contexts_file, ld->err, ld->errlen) < 0)
			return -1;
		memcpy(data + at + stack_at, &c.stack_id, sizeof(c.stack_id));
	}
	const struct fl_fault *found = fl_process_fault_by_seq(proc, c.seq);
	if (!found)
		return fl_load_dangling(ld, at, "context record %zu: seq %llu is not in %s/%s", i,
					(unsigned long long)c.seq, proc->dir, FL_FILE_NAME_FAULTS);
	struct fl_fault *f = &proc->faults[found - proc->faults];
	if (f->context != FL_NONE)
		return fl_load_fail_at(ld, at, "context record %zu: a second context for seq %llu", i,
				       (unsigned long long)c.seq);
	if (c.tid != f->rec.tid)
		return fl_load_fail_at(ld, at + context_field(ld->version, offsetof(struct fl_fault_context, tid)),
				       "context record %zu: tid %u, but fault seq %llu was taken by tid %u", i, c.tid,
				       (unsigned long long)c.seq, f->rec.tid);
	f->context = (uint32_t)i;
	return 1;
}

int fl_load_contexts(struct loader *ld)
{
	struct fl_process *proc = ld->proc;
	struct mapped_file *file = &proc->priv->contexts_file;
	size_t n, joined = 0;
	uint64_t last_seq = 0;
	bool in_seq_order = true;
	int rc = fl_load_binary(ld, FL_FILE_NAME_CONTEXTS, FL_FILE_CONTEXTS, file, &n);

	if (rc <= 0)
		return rc;
	unsigned char *data = (unsigned char *)file->data; /* private: written only when made writable */
	for (size_t i = 0; i < n; i++) {
		uint64_t at = ld->data_offset + (uint64_t)i * ld->record_size;
		rc = join_context(ld, data, i, at);
		if (rc < 0)
			return -1;
		if (rc == 0) {
			in_seq_order = false; /* a record to leave out */
			continue;
		}
		joined++;
		struct fl_fault_context c;
		decode_context(data + at, ld->version, &c);
		if (i > 0 && c.seq <= last_seq)
			in_seq_order = false;
		last_seq = c.seq;
	}
	fl_load_report_dangling(ld, "context seqs or stack ids");
	if (in_seq_order && ld->version >= 2 && ld->record_size == sizeof(struct fl_fault_context)) {
		/* already what the API promises: used where it lies (f->context is the file index) */
		proc->contexts = (struct fl_fault_context *)(void *)(data + ld->data_offset);
		proc->ncontexts = n;
		proc->priv->contexts_in_place = true;
		return 0;
	}
	struct gather g = { ld, data, malloc((joined ? joined : 1) * sizeof(struct fl_fault_context)), 0 };
	if (!g.out)
		return fl_load_nomem(ld, "context records");
	for_each_in_seq_order(proc, gather_context, &g);
	proc->contexts = g.out;
	proc->ncontexts = g.n;
	fl_load_unmap(file);
	return 0;
}

void fl_load_private_free(struct fl_process *proc)
{
	struct fl_process_private *priv = proc->priv;
	if (!priv)
		return;
	if (!priv->contexts_in_place)
		free(proc->contexts);
	fl_load_unmap(&priv->contexts_file);
	fl_load_unmap(&priv->stacks_file);
	free(priv->seq_table);
	free(priv->fault_by_seq);
	free(priv->stack_table);
	free(priv->alloc_by_id);
	free(priv);
	proc->priv = NULL;
	proc->contexts = NULL;
}
