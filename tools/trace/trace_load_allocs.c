/* trace_load_allocs.c: loads a process's allocation log (allocs, or the full log allocs.zst, whose
 * zstd frames of encoded chunks it decodes) and its sites, checks them, puts the allocation events
 * in time order with an alloc_id index, and joins every fault to the allocation it hit: by the
 * object the fault record names (FL_FAULT_OBJECT), or, for records without object fields, by a
 * sweep over the log (alloc_index.c). The contract is in trace_reader.h. */
#include "trace_load_allocs.h"
#include "trace_load_faults.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include <faultline/record_schema.h>

#define alloc_offset(i) (ld->data_offset + (uint64_t)(i) * ld->record_size)

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Fails on two records with the same key among PAIRS (key << 32 | record index, sorted here);
 * WHAT names the key. */
static int check_unique(struct loader *ld, uint64_t *pairs, size_t n, const char *what, uint32_t record_size)
{
	qsort(pairs, n, sizeof(*pairs), compare_u64);
	for (size_t i = 1; i < n; i++) {
		if (pairs[i] >> 32 != pairs[i - 1] >> 32)
			continue;
		/* Name the later of the two records (in file order). */
		size_t a = (uint32_t)pairs[i - 1], b = (uint32_t)pairs[i];
		size_t later = a > b ? a : b, earlier = a > b ? b : a;
		return fl_load_fail_at(ld, ld->data_offset + (uint64_t)later * record_size,
				       "%s %llu appears twice (records %zu and %zu)", what,
				       (unsigned long long)(pairs[i] >> 32), earlier, later);
	}
	return 0;
}


/* Checks one allocation record (its stack reference included). */
static int check_alloc(struct loader *ld, struct fl_alloc_record *a, uint64_t at, size_t i)
{
	switch (a->kind) {
	case FL_ALLOC_MALLOC:
	case FL_ALLOC_MMAP:
		if (a->alloc_id == 0)
			return fl_load_fail_at(ld, at + offsetof(struct fl_alloc_record, alloc_id), "alloc record %zu (%s): alloc_id 0 (ids start at 1)", i,
				       fl_alloc_kind_name(a->kind));
		break;
	case FL_ALLOC_FREE:
	case FL_ALLOC_MUNMAP:
		if (a->alloc_id != 0)
			return fl_load_fail_at(ld, at + offsetof(struct fl_alloc_record, alloc_id), "alloc record %zu (%s): alloc_id %u, want 0", i,
				       fl_alloc_kind_name(a->kind), a->alloc_id);
		if (a->kind == FL_ALLOC_FREE && a->size != 0)
			return fl_load_fail_at(ld, at + offsetof(struct fl_alloc_record, size), "alloc record %zu (free): size %llu, want 0", i,
				       (unsigned long long)a->size);
		break;
	default:
		return fl_load_fail_at(ld, at + offsetof(struct fl_alloc_record, kind), "alloc record %zu: kind %u is not an allocation kind (1..4)", i, a->kind);
	}
	if (a->addr + a->size < a->addr)
		return fl_load_fail_at(ld, at + offsetof(struct fl_alloc_record, size), "alloc record %zu: [0x%llx, +%llu) wraps around the address space", i,
			       (unsigned long long)a->addr, (unsigned long long)a->size);
	return fl_load_check_stack_ref(ld, &a->stack_id, at + offsetof(struct fl_alloc_record, stack_id), "alloc record", i);
}

static int compare_alloc_order(const void *a, const void *b, void *allocs_arg)
{
	const struct fl_alloc_record *allocs = allocs_arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	if (allocs[i].time_ns != allocs[j].time_ns)
		return allocs[i].time_ns < allocs[j].time_ns ? -1 : 1;
	return i < j ? -1 : i > j;
}

static int compare_alloc_id(const void *a, const void *b, void *allocs_arg)
{
	const struct fl_alloc_record *allocs = allocs_arg;
	uint32_t x = allocs[*(const uint32_t *)a].alloc_id, y = allocs[*(const uint32_t *)b].alloc_id;
	return x < y ? -1 : x > y;
}

/* Puts proc->allocs into time order, keeping file order among equal times. */
static int sort_allocs(struct loader *ld)
{
	struct fl_process *proc = ld->proc;
	size_t n = proc->nallocs;
	bool sorted = true;

	for (size_t i = 1; i < n && sorted; i++)
		sorted = proc->allocs[i - 1].time_ns <= proc->allocs[i].time_ns;
	if (sorted)
		return 0;
	uint32_t *order = malloc(n * sizeof(*order));
	struct fl_alloc_record *out = malloc(n * sizeof(*out));
	if (!order || !out) {
		free(order);
		free(out);
		return fl_load_nomem(ld, "sorting alloc records");
	}
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, n, sizeof(*order), compare_alloc_order, proc->allocs);
	for (size_t i = 0; i < n; i++)
		out[i] = proc->allocs[order[i]];
	free(order);
	free(proc->allocs);
	proc->allocs = out;
	return 0;
}

/* Builds the alloc_id index of proc->allocs (in time order). */
static int index_allocs(struct loader *ld)
{
	struct fl_process *proc = ld->proc;
	size_t nids = 0;

	free(proc->priv->alloc_by_id);
	proc->priv->alloc_by_id = malloc((proc->nallocs ? proc->nallocs : 1) * sizeof(uint32_t));
	if (!proc->priv->alloc_by_id)
		return fl_load_nomem(ld, "the alloc_id index");
	for (size_t i = 0; i < proc->nallocs; i++) {
		if (proc->allocs[i].alloc_id)
			proc->priv->alloc_by_id[nids++] = (uint32_t)i;
	}
	proc->priv->nalloc_by_id = nids;
	qsort_r(proc->priv->alloc_by_id, nids, sizeof(uint32_t), compare_alloc_id, proc->allocs);
	return 0;
}

/* Checks the n records of proc->allocs (read from the current file; OFFSETS false when they were
 * decoded from allocs.zst, whose records have no file offset: then the record index is named),
 * their unique alloc_ids, and puts them in time order with an alloc_id index. */
static int check_allocs(struct loader *ld, size_t n, bool offsets)
{
	struct fl_process *proc = ld->proc;
	size_t nids = 0;
	uint64_t *pairs = malloc((n ? n : 1) * sizeof(*pairs));
	int rc;

	if (!pairs)
		return fl_load_nomem(ld, "alloc records");
	for (size_t i = 0; i < n; i++) {
		struct fl_alloc_record *a = &proc->allocs[i];
		if (check_alloc(ld, a, offsets ? alloc_offset(i) : i, i) < 0) {
			free(pairs);
			return -1;
		}
		if (a->alloc_id)
			pairs[nids++] = (uint64_t)a->alloc_id << 32 | i;
	}
	proc->nallocs = n;
	rc = check_unique(ld, pairs, nids, "alloc_id", offsets ? ld->record_size : 1);
	free(pairs);
	if (rc < 0 || sort_allocs(ld) < 0)
		return -1;
	fl_load_report_dangling(ld, "allocation stack ids");
	return index_allocs(ld);
}

static int read_varint(const unsigned char **p, const unsigned char *end, uint64_t *out)
{
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 64 && *p < end; shift += 7) {
		unsigned char b = *(*p)++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return -1;
}

static int64_t unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

/* Decodes one chunk of the full allocation log (trace.h) onto *out. Returns 0 or -1. */
static int decode_chunk(struct loader *ld, const unsigned char *c, size_t len, uint64_t at,
			struct fl_alloc_record **out, size_t *n, size_t *cap)
{
	uint32_t header[4];
	const unsigned char *p = c + sizeof(header), *end = c + len;
	uint64_t time = 0, addr = 0, id = 0;

	if (len < sizeof(header))
		return fl_load_fail_at(ld, at, "zstd frame holds %zu bytes, less than a chunk header", len);
	memcpy(header, c, sizeof(header));
	if (header[0] != FL_ALLOC_CHUNK_MAGIC)
		return fl_load_fail_at(ld, at, "zstd frame is not an allocation chunk (magic 0x%x)", header[0]);
	for (uint32_t e = 0; e < header[2]; e++) {
		struct fl_alloc_record r = { .tid = header[1] };
		uint64_t v, size = 0, stack = 0, did = 0, dt, da;
		if (p >= end)
			return fl_load_fail_at(ld, at, "allocation chunk ends after %u of its %u events", e, header[2]);
		r.kind = *p & 0x0f;
		r.flags = *p >> 4;
		p++;
		if (read_varint(&p, end, &dt) < 0 || read_varint(&p, end, &da) < 0 ||
		    (r.kind != FL_ALLOC_FREE && read_varint(&p, end, &size) < 0) ||
		    ((r.kind == FL_ALLOC_MALLOC || r.kind == FL_ALLOC_MMAP) &&
		     (read_varint(&p, end, &stack) < 0 || read_varint(&p, end, &did) < 0)))
			return fl_load_fail_at(ld, at, "allocation chunk: event %u is cut or malformed", e);
		time += dt;
		addr += (uint64_t)unzigzag(da);
		if (r.kind == FL_ALLOC_MALLOC || r.kind == FL_ALLOC_MMAP)
			id += (uint64_t)unzigzag(did);
		v = r.kind == FL_ALLOC_MALLOC || r.kind == FL_ALLOC_MMAP ? id : 0;
		if (stack > UINT32_MAX || v > UINT32_MAX)
			return fl_load_fail_at(ld, at, "allocation chunk: event %u: stack id or alloc_id out of range", e);
		r.time_ns = time;
		r.addr = addr;
		r.size = size;
		r.stack_id = (uint32_t)stack;
		r.alloc_id = (uint32_t)v;
		if (*n == *cap) {
			size_t ncap = *cap ? *cap * 2 : 4096;
			struct fl_alloc_record *grown = realloc(*out, ncap * sizeof(*grown));
			if (!grown)
				return fl_load_nomem(ld, "decoded alloc records");
			*out = grown, *cap = ncap;
		}
		(*out)[(*n)++] = r;
	}
	return 0;
}

/* The full allocation log: zstd frames of encoded chunks after the header (trace.h). */
static int load_allocs_zstd(struct loader *ld)
{
	struct fl_process *proc = ld->proc;
	unsigned char *chunk = NULL;
	struct mapped_file file;
	size_t unused, n = 0, cap = 0, at, frames = 0;
	struct fl_alloc_record *recs = NULL;
	ZSTD_DCtx *dctx;
	int rc = fl_load_binary(ld, FL_FILE_NAME_ALLOCS_ZSTD, FL_FILE_ALLOCS_ZSTD, &file, &unused);

	if (rc <= 0)
		return rc;
	const unsigned char *data = file.data;
	size_t len = file.len;
	at = ld->data_offset;
	if (!(dctx = ZSTD_createDCtx())) {
		fl_load_unmap(&file);
		return fl_load_nomem(ld, "a zstd context");
	}
	rc = 0;
	while (at < len && rc == 0) {
		size_t fsize = ZSTD_findFrameCompressedSize(data + at, len - at);
		unsigned long long csize = ZSTD_isError(fsize) ? ZSTD_CONTENTSIZE_ERROR
							      : ZSTD_getFrameContentSize(data + at, fsize);
		uint32_t magic = 0;
		memcpy(&magic, data + at, len - at < 4 ? len - at : 4);
		if (ZSTD_isError(fsize) && (len - at < 4 || magic == ZSTD_MAGICNUMBER)) {
			/* a frame cut short: the tail of a crash (frames are written whole, in order) */
			proc->maybe_cut = true;
			fl_load_warning(ld->rec, "%s: truncated at offset %zu (%zu complete zstd frames; %zu bytes of a "
				    "partial frame ignored)", ld->path, at, frames, len - at);
			break;
		}
		if (ZSTD_isError(fsize) || csize == ZSTD_CONTENTSIZE_ERROR || csize == ZSTD_CONTENTSIZE_UNKNOWN ||
		    csize > (1u << 24)) {
			rc = fl_load_fail_at(ld, at, "not a zstd frame of an allocation chunk (%s)",
				     ZSTD_isError(fsize) ? ZSTD_getErrorName(fsize) : "bad content size");
			break;
		}
		unsigned char *grown = realloc(chunk, csize ? csize : 1);
		if (!grown) {
			rc = fl_load_nomem(ld, "a zstd frame");
			break;
		}
		chunk = grown;
		size_t got = ZSTD_decompressDCtx(dctx, chunk, csize, data + at, fsize);
		if (ZSTD_isError(got) || got != csize)
			rc = fl_load_fail_at(ld, at, "zstd frame does not decompress: %s",
				     ZSTD_isError(got) ? ZSTD_getErrorName(got) : "short content");
		else
			rc = decode_chunk(ld, chunk, got, at, &recs, &n, &cap);
		at += fsize;
		frames++;
	}
	ZSTD_freeDCtx(dctx);
	free(chunk);
	fl_load_unmap(&file);
	if (rc < 0 || n > UINT32_MAX - 1) {
		free(recs);
		return rc < 0 ? rc : fl_load_fail(ld, "%zu records: more than this reader indexes", n);
	}
	proc->allocs = recs ? recs : calloc(1, sizeof(*proc->allocs));
	if (!proc->allocs)
		return fl_load_nomem(ld, "alloc records");
	snprintf(ld->path + strlen(ld->path), sizeof(ld->path) - strlen(ld->path), " (decoded record)");
	proc->alloc_log_complete = true;
	return check_allocs(ld, n, false);
}

int fl_load_allocs(struct loader *ld)
{
	struct fl_process *proc = ld->proc;
	struct mapped_file file;
	size_t n;
	int rc = fl_load_binary(ld, FL_FILE_NAME_ALLOCS, FL_FILE_ALLOCS, &file, &n);

	if (rc == 0)
		return load_allocs_zstd(ld);
	if (rc < 0)
		return rc;
	if (n > UINT32_MAX - 1) {
		fl_load_unmap(&file);
		return fl_load_fail(ld, "%zu records: more than this reader indexes", n);
	}
	proc->allocs = calloc(n ? n : 1, sizeof(*proc->allocs));
	if (!proc->allocs) {
		fl_load_unmap(&file);
		return fl_load_nomem(ld, "alloc records");
	}
	for (size_t i = 0; i < n; i++)
		memcpy(&proc->allocs[i], file.data + alloc_offset(i), sizeof(proc->allocs[i]));
	fl_load_unmap(&file);
	/* a recording before sampling (no FL_META_ALLOC_LOG in meta.json) logged every allocation */
	const char *mode = stats_json_string(&proc->meta, FL_META_ALLOC_LOG);
	proc->alloc_log_complete = !mode || strcmp(mode, "sampled") != 0;
	return check_allocs(ld, n, true);
}

/* ======================================================================= sites */

int fl_load_sites(struct loader *ld)
{
	struct fl_process *proc = ld->proc;
	struct mapped_file file;
	size_t n;
	int rc = fl_load_binary(ld, FL_FILE_NAME_SITES, FL_FILE_SITES, &file, &n);

	if (rc <= 0)
		return rc;
	proc->sites = calloc(n ? n : 1, sizeof(*proc->sites));
	if (!proc->sites) {
		fl_load_unmap(&file);
		return fl_load_nomem(ld, "site records");
	}
	for (size_t i = 0; i < n; i++) {
		struct fl_site_record *s = &proc->sites[i];
		uint64_t at = ld->data_offset + (uint64_t)i * ld->record_size;
		memcpy(s, file.data + at, sizeof(*s));
		if (s->frees > s->allocs || s->objects_faulted > s->allocs || s->live_bytes > s->bytes ||
		    s->live_peak_bytes > s->bytes) {
			fl_load_unmap(&file);
			return fl_load_fail_at(ld, at, "site record %zu: inconsistent counts (allocs %llu, frees %llu, bytes %llu, "
				       "live %llu, peak %llu, objects faulted %llu)", i, (unsigned long long)s->allocs,
				       (unsigned long long)s->frees, (unsigned long long)s->bytes,
				       (unsigned long long)s->live_bytes, (unsigned long long)s->live_peak_bytes,
				       (unsigned long long)s->objects_faulted);
		}
		if (fl_load_check_stack_ref(ld, &s->stack_id, at, "site record", i) < 0) {
			fl_load_unmap(&file);
			return -1;
		}
	}
	fl_load_unmap(&file);
	proc->nsites = n;
	fl_load_report_dangling(ld, "site stack ids");
	return 0;
}

int fl_load_add_unlogged(struct loader *ld, const struct fl_alloc_record *made, size_t n)
{
	struct fl_process *proc = ld->proc;
	if (n == 0)
		return 0;
	struct fl_alloc_record *grown = realloc(proc->allocs, (proc->nallocs + n) * sizeof(*grown));
	if (!grown)
		return fl_load_nomem(ld, "records of unlogged objects");
	proc->allocs = grown;
	memcpy(proc->allocs + proc->nallocs, made, n * sizeof(*made));
	proc->nallocs += n;
	proc->unlogged_objects = n;
	return sort_allocs(ld) < 0 || index_allocs(ld) < 0 ? -1 : 0;
}

/* Joins every fault to the allocation live at its address and time (one sweep in time order). */
static int attribute_faults_by_sweep(struct loader *ld)
{
	struct fl_process *proc = ld->proc;
	struct fl_alloc_sweep sweep;

	if (proc->nallocs == 0)
		return 0;
	fl_alloc_sweep_init(&sweep, proc);
	for (size_t i = 0; i < proc->nfaults; i++) {
		struct fl_fault *f = &proc->faults[i];
		if (fl_alloc_sweep_advance(&sweep, f->rec.time_ns) < 0) {
			fl_alloc_sweep_free(&sweep);
			snprintf(ld->err, ld->errlen, "%s: out of memory attributing faults to allocations", proc->dir);
			return -1;
		}
		f->alloc = fl_alloc_sweep_find(&sweep, f->rec.addr);
	}
	fl_alloc_sweep_free(&sweep);
	return 0;
}

/* The index into proc->allocs of the MALLOC/MMAP record of this fault's object, or FL_NONE. */
static uint32_t alloc_of_object(const struct fl_process *proc, const struct fl_fault_record *r)
{
	const struct fl_alloc_record *a = fl_process_alloc_by_id(proc, r->obj_alloc_id);
	return a && a->addr == r->obj_addr ? (uint32_t)(a - proc->allocs) : FL_NONE;
}

/* Fault records that name their object (the runtime resolved it when serving the fault): the
 * join is the record's own. An object the sampled log does not hold gets a record made from
 * its faults (FL_ALLOC_UNLOGGED: its time is its first fault's, its end unknown). */
int fl_load_attribute(struct loader *ld)
{
	struct fl_process *proc = ld->proc;
	size_t extra = 0;
	uint64_t *pairs;

	if (!proc->fault_objects)
		return attribute_faults_by_sweep(ld);
	/* (alloc_id, fault index) of the faults on objects the log lacks; sorted, the first fault of
	 * each object (faults are in time order) makes its record */
	pairs = malloc((proc->nfaults ? proc->nfaults : 1) * sizeof(*pairs));
	if (!pairs)
		return fl_load_nomem(ld, "records of unlogged objects");
	uint32_t last_id = 0; /* consecutive faults mostly hit one object: its lookup is reused */
	bool last_logged = false;
	for (size_t i = 0; i < proc->nfaults; i++) {
		const struct fl_fault_record *r = &proc->faults[i].rec;
		if (!(r->flags & FL_FAULT_OBJECT) || !r->obj_addr || !r->obj_alloc_id)
			continue;
		if (r->obj_alloc_id != last_id) {
			last_id = r->obj_alloc_id;
			last_logged = fl_process_alloc_by_id(proc, last_id) != NULL;
		}
		if (!last_logged)
			pairs[extra++] = (uint64_t)r->obj_alloc_id << 32 | i;
	}
	qsort(pairs, extra, sizeof(*pairs), compare_u64);
	size_t objects = 0;
	for (size_t k = 0; k < extra; k++)
		if (k == 0 || pairs[k] >> 32 != pairs[k - 1] >> 32)
			pairs[objects++] = pairs[k];
	if (objects) {
		struct fl_alloc_record *grown = realloc(proc->allocs, (proc->nallocs + objects) * sizeof(*grown));
		if (!grown) {
			free(pairs);
			return fl_load_nomem(ld, "records of unlogged objects");
		}
		proc->allocs = grown;
		for (size_t k = 0; k < objects; k++) {
			const struct fl_fault_record *r = &proc->faults[(uint32_t)pairs[k]].rec;
			proc->allocs[proc->nallocs++] = (struct fl_alloc_record){
				.time_ns = r->time_ns, .addr = r->obj_addr, .size = r->obj_size, .tid = r->tid,
				.stack_id = r->obj_stack_id, .alloc_id = r->obj_alloc_id, .kind = FL_ALLOC_MALLOC,
				.flags = FL_ALLOC_UNLOGGED,
			};
		}
		proc->unlogged_objects = objects;
	}
	free(pairs);
	if (objects && (sort_allocs(ld) < 0 || index_allocs(ld) < 0))
		return -1;
	uint32_t last_alloc = FL_NONE; /* the previous object's join, reused for the same (id, addr) */
	uint64_t last_addr = 0;
	last_id = 0;
	for (size_t i = 0; i < proc->nfaults; i++) {
		struct fl_fault *f = &proc->faults[i];
		if (!f->rec.obj_addr || !(f->rec.flags & FL_FAULT_OBJECT)) {
			f->alloc = FL_NONE;
			continue;
		}
		if (f->rec.obj_alloc_id != last_id || f->rec.obj_addr != last_addr || last_id == 0) {
			last_id = f->rec.obj_alloc_id;
			last_addr = f->rec.obj_addr;
			last_alloc = alloc_of_object(proc, &f->rec);
		}
		f->alloc = last_alloc;
	}
	return 0;
}

