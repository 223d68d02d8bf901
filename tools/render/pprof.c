/* pprof.c: a recording as a pprof profile (see pprof.h).
 *
 * Follow one fault: its stack is named under the maps snapshot in force at the fault's time
 * (callsite.h's rule, as report's rows): its location ids are memoized per (process, stack,
 * snapshot) — the stack's source frames from callsite_expand_in, from its callsite outwards, grouped
 * by PC into Locations, each PC interned once per (process, snapshot): a PC that two snapshots name
 * differently is two Locations. Its (stack's location ids, thread, kind, allocation site) key counts
 * it in a hash map (report_map: two 64-bit words hold the fields). After the pass each key becomes
 * one Sample: those location ids, its values, its labels. Strings and functions are interned (the string table is pprof's, index 0 the
 * empty string). The Profile message is then packed by protobuf-c into one buffer and gzipped. */
#include "pprof.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "pprof_profile.pb-c.h"
#include "fault_stream.h"
#include "report.h"
#include "report_map.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;
typedef Perftools__Profiles__ValueType ValueType;

enum { V_FAULTS, V_FIRST_TOUCH, V_REFAULT, V_SOFT, V_ALLOC_BYTES, NVALUES };
#define NLABELS 4

/* A growable array of pointers (the repeated message fields protobuf-c packs). */
struct ptrs {
	void **items;
	size_t n, cap;
};

static int ptrs_push(struct ptrs *p, void *item)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		void **grown = realloc(p->items, cap * sizeof(*grown));
		if (!grown)
			return -1;
		p->items = grown;
		p->cap = cap;
	}
	p->items[p->n++] = item;
	return 0;
}

/* A stack's location ids, memoized: (proc, stack slot) → index into ids + 1, its length after. */
struct builder {
	const struct fl_recording *rec;
	struct callsite_table *table;
	struct ptrs strings;            /* char *, owned (index 0: "") */
	struct report_map string_index; /* (hash, len | probe << 32) → index */
	struct ptrs functions;          /* Function *, owned */
	struct report_map function_index; /* (name, file) → id */
	struct ptrs locations;          /* Location *, owned (with their lines) */
	struct report_map scope_index;  /* (proc, maps snapshot) → scope + 1: where a PC has one name */
	size_t nscopes;
	struct report_map location_index; /* (scope << 9 | return << 8 | skip, pc) → id */
	struct report_map stack_index;  /* (proc << 32 | maps snapshot, stack slot) → offset into ids + 1 */
	uint64_t *ids;                  /* location ids of the memoized stacks, each run preceded by its length */
	size_t nids, ids_cap;
	struct ptrs samples;            /* Sample *, owned (with values, labels) */
	bool has_sites;
	uint64_t faults;
	int64_t s_kind, s_thread, s_process, s_alloc_site;  /* label keys */
	char stream_error[512];         /* "" or why a walk over a process's faults failed */
};

/* ----------------------------------------------------------------- interning */

static uint64_t fnv1a(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return h;
}

/* The string table index of TEXT (NULL: ""), or -1 on ENOMEM. */
static int64_t intern(struct builder *b, const char *text)
{
	size_t len = text ? strlen(text) : 0;
	uint64_t hash = fnv1a(text ? text : "", len);
	bool added;

	if (!text || !*text)
		return 0;
	for (uint64_t probe = 0;; probe++) { /* a hash collision goes on to the next probe word */
		uint64_t *slot = report_map_add(&b->string_index, hash, (uint64_t)len | probe << 32, &added);
		if (!slot)
			return -1;
		if (!added) {
			if (strcmp(b->strings.items[*slot], text) == 0)
				return (int64_t)*slot;
			continue;
		}
		char *copy = strdup(text);
		if (!copy || ptrs_push(&b->strings, copy) < 0) {
			free(copy);
			return -1;
		}
		*slot = b->strings.n - 1;
		return (int64_t)*slot;
	}
}

/* The id of function NAME in FILE, or 0 on ENOMEM. */
static uint64_t function_id(struct builder *b, const char *name, const char *file)
{
	int64_t n = intern(b, name), f = intern(b, file);
	bool added;
	uint64_t *slot;

	if (n < 0 || f < 0 || !(slot = report_map_add(&b->function_index, (uint64_t)n, (uint64_t)f, &added)))
		return 0;
	if (added) {
		Function *fn = malloc(sizeof(*fn));
		if (!fn)
			return 0;
		perftools__profiles__function__init(fn);
		fn->id = b->functions.n + 1;
		fn->name = n;
		fn->system_name = n;
		fn->filename = f;
		if (ptrs_push(&b->functions, fn) < 0) {
			free(fn);
			return 0;
		}
		*slot = fn->id;
	}
	return *slot;
}

/* A new location of PC with the source lines of FRAMES[0..n) (innermost first); its id, 0 on ENOMEM. */
static uint64_t new_location(struct builder *b, uint64_t pc, const struct callsite_frame *frames, size_t n)
{
	Location *loc = malloc(sizeof(*loc) + n * (sizeof(Line) + sizeof(Line *)));
	Line *lines = (Line *)(loc + 1);
	Line **line_ptrs = (Line **)(lines + n);

	if (!loc)
		return 0;
	perftools__profiles__location__init(loc);
	loc->id = b->locations.n + 1;
	loc->address = pc;
	loc->n_line = n;
	loc->line = line_ptrs;
	for (size_t i = 0; i < n; i++) {
		const struct callsite_frame *fr = &frames[i];
		perftools__profiles__line__init(&lines[i]);
		lines[i].function_id = function_id(b, fr->function ? fr->function : fr->label,
						   fr->file ? fr->file : fr->binary);
		lines[i].line = fr->line;
		line_ptrs[i] = &lines[i];
		if (!lines[i].function_id) {
			free(loc);
			return 0;
		}
	}
	if (ptrs_push(&b->locations, loc) < 0) {
		free(loc);
		return 0;
	}
	return loc->id;
}

/* The pseudo location of the faults without a stack: "[no stack]", as in visualize's flame graphs
 * (pprof shortens C++-looking names by dropping <...>, so report's "<no stack>" showed as
 * "<unknown>" and -ignore could not name it). */
#define PPROF_NO_STACK "[no stack]"
static uint64_t no_stack_location(struct builder *b)
{
	struct callsite_frame fr = { .function = PPROF_NO_STACK, .label = PPROF_NO_STACK };
	bool added;
	uint64_t *slot = report_map_add(&b->location_index, UINT64_MAX, 0, &added);

	if (!slot)
		return 0;
	if (added)
		*slot = new_location(b, 0, &fr, 1);
	return *slot;
}

static int push_id(struct builder *b, uint64_t id)
{
	if (b->nids == b->ids_cap) {
		size_t cap = b->ids_cap ? b->ids_cap * 2 : 1024;
		uint64_t *grown = realloc(b->ids, cap * sizeof(*grown));
		if (!grown)
			return -1;
		b->ids = grown;
		b->ids_cap = cap;
	}
	b->ids[b->nids++] = id;
	return 0;
}

/* The scope of PCs of process P named under maps snapshot SNAP: a dense id, FL_NONE on ENOMEM. */
static uint64_t scope_of(struct builder *b, size_t p, uint32_t snap)
{
	bool added;
	uint64_t *slot = report_map_add(&b->scope_index, p, snap, &added);

	if (!slot)
		return FL_NONE;
	if (added)
		*slot = ++b->nscopes;
	return *slot - 1;
}

/* The location ids of STACK (NULL: none) of process P named under maps snapshot SNAP, leaf first:
 * ids[*offset] is their number, the ids follow it. -1 on ENOMEM. */
static int stack_locations(struct builder *b, size_t p, const struct fl_stack *stack, uint32_t snap, size_t *offset)
{
	const struct fl_process *proc = &b->rec->procs[p];
	uint64_t slot_key = stack ? (uint64_t)(stack - proc->stacks) + 1 : 0;
	const struct callsite_frame *frames;
	size_t n, callsite, start;
	bool added;
	uint64_t *slot = report_map_add(&b->stack_index, (uint64_t)p << 32 | snap, slot_key, &added);
	uint64_t scope;

	if (!slot)
		return -1;
	if (!added) {
		*offset = *slot - 1;
		return 0;
	}
	start = b->nids;
	*slot = start + 1;
	*offset = start;
	if (push_id(b, 0) < 0 || (scope = scope_of(b, p, snap)) == FL_NONE)
		return -1;
	n = 0;
	if (stack && callsite_expand_in(b->table, p, stack, snap, &frames, &n, &callsite) < 0)
		return -1;
	if (n == 0) {
		uint64_t id = no_stack_location(b);
		if (!id || push_id(b, id) < 0)
			return -1;
		b->ids[start] = 1;
		return 0;
	}
	/* from the callsite outwards, one location per recorded PC */
	for (size_t i = callsite; i < n;) {
		size_t end = i, skip = 0;
		while (end < n && frames[end].index == frames[i].index)
			end++;
		for (size_t k = i; k > 0 && frames[k - 1].index == frames[i].index; k--)
			skip++; /* frames of this PC inner to the callsite: left out */
		uint64_t key = scope << 9 | (uint64_t)frames[i].is_return << 8 | (skip < 255 ? skip : 255);
		uint64_t *loc = report_map_add(&b->location_index, key, frames[i].pc, &added);
		if (!loc)
			return -1;
		if (added && !(*loc = new_location(b, frames[i].pc, &frames[i], end - i)))
			return -1;
		if (push_id(b, *loc) < 0)
			return -1;
		b->ids[start]++;
		i = end;
	}
	return 0;
}

/* ----------------------------------------------------------------- samples */

static Label *add_label(Label *labels, size_t *n, int64_t key, int64_t str, int64_t num)
{
	Label *l = &labels[(*n)++];
	perftools__profiles__label__init(l);
	l->key = key;
	l->str = str;
	l->num = num;
	return l;
}

/* A sample of the stack at ids[offset] with VALUES and labels. -1 on ENOMEM. */
static int add_sample(struct builder *b, size_t offset, const int64_t *values, int64_t kind, uint64_t tid, uint64_t pid,
		      int64_t site)
{
	size_t nloc = b->ids[offset], nvalues = b->has_sites ? NVALUES : NVALUES - 1, nlabels = 0;
	Sample *s = malloc(sizeof(*s) + nloc * sizeof(uint64_t) + nvalues * sizeof(int64_t) +
			   NLABELS * (sizeof(Label) + sizeof(Label *)));

	if (!s)
		return -1;
	perftools__profiles__sample__init(s);
	s->location_id = (uint64_t *)(s + 1);
	s->value = (int64_t *)(s->location_id + nloc);
	Label *labels = (Label *)(s->value + nvalues);
	s->label = (Label **)(labels + NLABELS);
	s->n_location_id = nloc;
	memcpy(s->location_id, &b->ids[offset + 1], nloc * sizeof(uint64_t));
	s->n_value = nvalues;
	memcpy(s->value, values, nvalues * sizeof(int64_t));
	add_label(labels, &nlabels, b->s_kind, kind, 0);
	if (tid)
		add_label(labels, &nlabels, b->s_thread, 0, (int64_t)tid);
	add_label(labels, &nlabels, b->s_process, 0, (int64_t)pid);
	add_label(labels, &nlabels, b->s_alloc_site, site, 0);
	for (size_t i = 0; i < nlabels; i++)
		s->label[i] = &labels[i];
	s->n_label = nlabels;
	if (ptrs_push(&b->samples, s) < 0) {
		free(s);
		return -1;
	}
	return 0;
}

/* "function file:line" of an allocation site location (as report's table names it). */
static int64_t site_string(struct builder *b, uint32_t loc_id)
{
	const struct callsite_loc *loc = callsite_loc(b->table, loc_id);
	char text[1024];

	if (!loc)
		return intern(b, "?");
	if (loc->file && loc->line)
		snprintf(text, sizeof(text), "%s %s:%u", loc->function, loc->file, loc->line);
	else
		snprintf(text, sizeof(text), "%s", loc->function);
	return intern(b, text);
}

/* The allocation site location of fault F: the allocation's stack named under the maps snapshot of
 * the allocation's time, as report --by alloc names it. FL_NONE on ENOMEM. */
static uint32_t fault_site(struct builder *b, size_t p, const struct fl_process *proc, const struct fl_fault *f)
{
	const struct fl_alloc_record *a = fl_fault_alloc(proc, f);
	const struct fl_stack *s;

	if (!a)
		return callsite_intern(b->table, REPORT_UNALLOCATED, NULL, 0, NULL, false);
	s = a->stack_id ? callsite_stack_by_id(proc, a->stack_id) : NULL;
	if (!s)
		return callsite_intern(b->table, REPORT_ALLOC_NO_STACK, NULL, 0, NULL, false);
	return callsite_of_stack_at(b->table, p, s, a->time_ns);
}

/* Every fault of process P, counted by key, then one sample per key. */
static int fault_samples(struct builder *b, size_t p)
{
	const struct fl_process *proc = &b->rec->procs[p];
	struct report_map counts = REPORT_MAP_INIT;
	const struct report_map_slot *slot;
	const struct fl_stack *last = NULL;
	uint32_t last_snap = FL_NONE;
	size_t offset = 0;
	int rc = 0, got;
	struct fl_fault_stream *fs;
	const struct fl_fault *f;

	if (fl_fault_stream_open(proc, &fs, b->stream_error, sizeof(b->stream_error)) < 0)
		return -1;
	while (rc == 0 && (got = fl_fault_stream_next(fs, &f)) > 0) {
		if (f->rec.kind == FL_FAULT_ACCESS_SAMPLE)
			continue; /* not a fault: an access sample (record --sample-accesses, --mrc) */
		const struct fl_stack *s = callsite_fault_stack(proc, f);
		uint32_t site = fault_site(b, p, proc, f);
		unsigned kind = f->rec.kind <= FL_FAULT_CONCURRENT ? f->rec.kind : 0;
		uint32_t snap = callsite_snapshot_at(b->table, p, f->rec.time_ns);
		uint64_t *count = NULL;
		/* the stack as named at the fault's time: its location ids' offset (below 2^32: a profile
		 * of more ids is far beyond memory); consecutive faults mostly repeat it */
		if (s != last || snap != last_snap) {
			if (stack_locations(b, p, s, snap, &offset) < 0) {
				rc = -1;
				break;
			}
			last = s;
			last_snap = snap;
		}
		if (site != FL_NONE && offset <= UINT32_MAX)
			count = report_map_add(&counts, (uint64_t)kind << 32 | offset, (uint64_t)f->rec.tid << 32 | site, NULL);
		if (!count)
			rc = -1;
		else
			++*count;
	}
	if (rc == 0 && got < 0) {
		snprintf(b->stream_error, sizeof(b->stream_error), "%s", fl_fault_stream_error(fs));
		rc = -1;
	}
	fl_fault_stream_close(fs);
	for (size_t i = 0; rc == 0 && (slot = report_map_next(&counts, &i)) != NULL;) {
		unsigned kind = (unsigned)(slot->a >> 32);
		size_t offset = (uint32_t)slot->a;
		int64_t values[NVALUES] = { 0 }, site = site_string(b, (uint32_t)slot->b);
		values[V_FAULTS] = (int64_t)slot->value;
		if (kind == FL_FAULT_FIRST_TOUCH)
			values[V_FIRST_TOUCH] = (int64_t)slot->value;
		else if (kind == FL_FAULT_REFAULT)
			values[V_REFAULT] = (int64_t)slot->value;
		else if (kind == FL_FAULT_SOFT)
			values[V_SOFT] = (int64_t)slot->value;
		int64_t kind_name = intern(b, fl_fault_kind_name(kind));
		if (site < 0 || kind_name < 0 || add_sample(b, offset, values, kind_name, slot->b >> 32, proc->pid, site) < 0)
			rc = -1;
		b->faults += slot->value;
	}
	report_map_free(&counts);
	return rc;
}

/* One sample per site record of process P: the bytes allocated there. */
static int site_samples(struct builder *b, size_t p)
{
	const struct fl_process *proc = &b->rec->procs[p];
	int64_t kind_name = intern(b, "allocation");

	for (size_t i = 0; i < proc->nsites; i++) {
		const struct fl_site_record *s = &proc->sites[i];
		const struct fl_stack *stack = s->stack_id ? callsite_stack_by_id(proc, s->stack_id) : NULL;
		uint32_t loc = stack ? callsite_of_stack(b->table, p, stack)
				     : callsite_intern(b->table, REPORT_ALLOC_NO_STACK, NULL, 0, NULL, false);
		/* a site aggregates the run: its stack under its first-use snapshot, as its name */
		uint32_t snap = stack ? callsite_stack_snapshot(b->table, p, stack) : 0;
		int64_t values[NVALUES] = { 0 }, site = loc == FL_NONE ? -1 : site_string(b, loc);
		size_t offset;
		values[V_ALLOC_BYTES] = (int64_t)s->bytes;
		if (kind_name < 0 || site < 0 || snap == FL_NONE || stack_locations(b, p, stack, snap, &offset) < 0 ||
		    add_sample(b, offset, values, kind_name, 0, proc->pid, site) < 0)
			return -1;
	}
	return 0;
}

/* ----------------------------------------------------------------- the profile */

static void builder_free(struct builder *b)
{
	for (size_t i = 0; i < b->strings.n; i++)
		free(b->strings.items[i]);
	for (size_t i = 0; i < b->functions.n; i++)
		free(b->functions.items[i]);
	for (size_t i = 0; i < b->locations.n; i++)
		free(b->locations.items[i]);
	for (size_t i = 0; i < b->samples.n; i++)
		free(b->samples.items[i]);
	free(b->strings.items);
	free(b->functions.items);
	free(b->locations.items);
	free(b->samples.items);
	free(b->ids);
	report_map_free(&b->string_index);
	report_map_free(&b->function_index);
	report_map_free(&b->scope_index);
	report_map_free(&b->location_index);
	report_map_free(&b->stack_index);
}

/* Packs the profile into a new buffer (*len bytes). NULL on ENOMEM. */
static uint8_t *pack_profile(struct builder *b, size_t *len)
{
	static const char *const names[NVALUES][2] = { { "faults", "count" }, { "first_touch", "count" },
		{ "refault", "count" }, { "soft", "count" }, { "alloc_bytes", "bytes" } };
	ValueType types[NVALUES], *type_ptrs[NVALUES], period_type;
	Profile profile;
	int64_t comment, faults_name = intern(b, "faults");
	size_t ntypes = b->has_sites ? NVALUES : NVALUES - 1;
	char text[4200];
	uint8_t *buf;

	perftools__profiles__profile__init(&profile);
	for (size_t i = 0; i < ntypes; i++) {
		perftools__profiles__value_type__init(&types[i]);
		types[i].type = intern(b, names[i][0]);
		types[i].unit = intern(b, names[i][1]);
		if (types[i].type < 0 || types[i].unit < 0)
			return NULL;
		type_ptrs[i] = &types[i];
	}
	perftools__profiles__value_type__init(&period_type);
	period_type.type = faults_name;
	period_type.unit = intern(b, "count");
	uint64_t sample = fl_recording_stack_sample(b->rec, 0); /* -s N: PPROF_NO_STACK holds most faults */
	int n = snprintf(text, sizeof(text), "faultline recording %s", b->rec->dir);
	if (sample > 1 && n > 0 && (size_t)n < sizeof(text))
		snprintf(text + n, sizeof(text) - (size_t)n, "; stacks for 1 fault in %" PRIu64 " (record -s): the others are "
			 "at " PPROF_NO_STACK " (pprof -ignore '\\[no stack\\]' -relative_percentages gives each "
			 "function its share of those with a stack)", sample);
	comment = intern(b, text);
	if (faults_name < 0 || comment < 0)
		return NULL;
	profile.n_sample_type = ntypes;
	profile.sample_type = type_ptrs;
	profile.n_sample = b->samples.n;
	profile.sample = (Sample **)b->samples.items;
	profile.n_location = b->locations.n;
	profile.location = (Location **)b->locations.items;
	profile.n_function = b->functions.n;
	profile.function = (Function **)b->functions.items;
	profile.n_string_table = b->strings.n;
	profile.string_table = (char **)b->strings.items;
	profile.period_type = &period_type;
	profile.period = 1;
	profile.n_comment = 1;
	profile.comment = &comment;
	profile.default_sample_type = faults_name;
	*len = perftools__profiles__profile__get_packed_size(&profile);
	if (!(buf = malloc(*len ? *len : 1)))
		return NULL;
	perftools__profiles__profile__pack(&profile, buf);
	return buf;
}

/* Writes LEN bytes gzipped to PATH. 0, or -1 with the reason in err. */
static int write_gzip(const char *path, const uint8_t *data, size_t len, size_t *written, char *err, size_t errlen)
{
	FILE *f = fopen(path, "wb");
	z_stream z;
	uint8_t out[65536];
	int zrc = Z_OK;

	if (!f) {
		snprintf(err, errlen, "fopen %s: %s", path, strerror(errno));
		return -1;
	}
	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) { /* + 16: gzip */
		fclose(f);
		snprintf(err, errlen, "deflateInit2: out of memory");
		return -1;
	}
	*written = 0;
	z.next_in = (Bytef *)data;
	z.avail_in = (uInt)len; /* a profile under 4 GiB: checked by the caller */
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		zrc = deflate(&z, Z_FINISH);
		size_t have = sizeof(out) - z.avail_out;
		if (have && fwrite(out, 1, have, f) != have)
			break;
		*written += have;
	} while (zrc == Z_OK);
	deflateEnd(&z);
	if (zrc != Z_STREAM_END || ferror(f)) {
		snprintf(err, errlen, "writing %s: %s", path, zrc != Z_STREAM_END && !ferror(f) ? "zlib deflate failed" : strerror(errno));
		fclose(f);
		return -1;
	}
	if (fclose(f) != 0) {
		snprintf(err, errlen, "closing %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int pprof_write(const struct fl_recording *rec, struct callsite_table *table, const char *path,
		struct pprof_stats *stats, char *err, size_t errlen)
{
	struct builder b;
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc = 0;

	memset(&b, 0, sizeof(b));
	memset(stats, 0, sizeof(*stats));
	b.rec = rec;
	b.table = table;
	for (size_t p = 0; p < rec->nprocs; p++)
		b.has_sites |= rec->procs[p].nsites > 0;
	if (ptrs_push(&b.strings, strdup("")) < 0 || !b.strings.items[0] || (b.s_kind = intern(&b, "kind")) < 0 ||
	    (b.s_thread = intern(&b, "thread")) < 0 || (b.s_process = intern(&b, "process")) < 0 ||
	    (b.s_alloc_site = intern(&b, "alloc_site")) < 0)
		rc = -1;
	for (size_t p = 0; rc == 0 && p < rec->nprocs; p++)
		rc = fault_samples(&b, p) < 0 || site_samples(&b, p) < 0 ? -1 : 0;
	if (rc == 0 && !(buf = pack_profile(&b, &len)))
		rc = -1;
	if (rc < 0)
		snprintf(err, errlen, "%s", b.stream_error[0] ? b.stream_error : "out of memory while building the profile");
	else if (len > UINT32_MAX) {
		snprintf(err, errlen, "the profile is %zu bytes, more than zlib takes at once (4 GiB)", len);
		rc = -1;
	}
	if (rc == 0)
		rc = write_gzip(path, buf, len, &stats->bytes, err, errlen);
	stats->samples = b.samples.n;
	stats->locations = b.locations.n;
	stats->functions = b.functions.n;
	stats->strings = b.strings.n;
	stats->faults = b.faults;
	free(buf);
	builder_free(&b);
	return rc;
}
