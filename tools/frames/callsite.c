/* callsite.c: recorded stacks → source frames → callsite locations (see callsite.h).
 *
 * Follow one query (callsite_of_stack) top to bottom:
 *   1. the memo of the process answers a stack seen before;
 *   2. else the stack's maps snapshot is the one in force at its first use (first_use_snapshots,
 *      computed once per process by one pass over its faults and allocations); callsite_of_stack_at
 *      takes the one in force at the event's time instead, memoized per (stack, snapshot) when it
 *      differs from the first-use one (a process with one snapshot never leaves the first memo);
 *   3. frames are symbolized innermost first (expand_pc: one symbolizer_lookup per PC, whose result
 *      the symbolizer caches) until a source frame escapes the skip list (skip decisions are cached
 *      per binary and per function name: the symbolizer interns both, so a pointer names each);
 *   4. that frame's (function, file, line, binary) is interned to a location id (by content, in an
 *      open-addressing table over the location array). */
#include "callsite.h"
#include "binary_id.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fault_stream.h"
#include "report_map.h"

/* ----------------------------------------------------------------- skip list */

static int compile(regex_t *re, const char *pattern, char *err, size_t errlen)
{
	int rc = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB);
	if (rc != 0) {
		char why[256];
		regerror(rc, re, why, sizeof(why));
		snprintf(err, errlen, "--skip '%s': %s", pattern, why);
		return -1;
	}
	return 0;
}

int callsite_skip_init(struct callsite_skip *skip, bool defaults, char *const *patterns, size_t npatterns,
		       char *err, size_t errlen)
{
	memset(skip, 0, sizeof(*skip));
	if (npatterns && !(skip->user = calloc(npatterns, sizeof(*skip->user)))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (; skip->nuser < npatterns; skip->nuser++) {
		if (compile(&skip->user[skip->nuser], patterns[skip->nuser], err, errlen) < 0) {
			callsite_skip_free(skip);
			return -1;
		}
	}
	if (defaults && compile(&skip->default_re, CALLSITE_DEFAULT_SKIP, err, errlen) < 0) {
		callsite_skip_free(skip);
		return -1;
	}
	skip->defaults = defaults;
	return 0;
}

void callsite_skip_free(struct callsite_skip *skip)
{
	for (size_t i = 0; i < skip->nuser; i++)
		regfree(&skip->user[i]);
	free(skip->user);
	if (skip->defaults)
		regfree(&skip->default_re);
	memset(skip, 0, sizeof(*skip));
}

static bool user_match(const struct callsite_skip *skip, const char *text)
{
	for (size_t i = 0; i < skip->nuser; i++) {
		if (regexec(&skip->user[i], text, 0, NULL, 0) == 0)
			return true;
	}
	return false;
}

bool callsite_skip_binary(const struct callsite_skip *skip, const char *path)
{
	if (!path)
		return false;
	if (skip->defaults && regexec(&skip->default_re, path, 0, NULL, 0) == 0)
		return true;
	return user_match(skip, path);
}

bool callsite_skip_function(const struct callsite_skip *skip, const char *function)
{
	return function && user_match(skip, function);
}

/* ----------------------------------------------------------------- stack lookups */

const struct fl_stack *callsite_stack_by_id(const struct fl_process *proc, uint32_t stack_id)
{
	if (stack_id && stack_id <= proc->nstacks && proc->stacks[stack_id - 1].id == stack_id)
		return &proc->stacks[stack_id - 1];
	return fl_process_stack(proc, stack_id);
}

const struct fl_stack *callsite_fault_stack(const struct fl_process *proc, const struct fl_fault *fault)
{
	const struct fl_fault_context *c = fl_fault_context(proc, fault);
	return callsite_stack_by_id(proc, c && c->stack_id ? c->stack_id : fault->rec.stack_id);
}

/* ----------------------------------------------------------------- the table */

struct proc_memo {
	bool ready;                 /* snapshot_of_stack computed */
	uint32_t *loc_of_stack;     /* per stack index: location id + 1 under its first-use snapshot, 0 = not computed */
	uint32_t *snapshot_of_stack;/* per stack index: index into proc->maps */
	struct report_map loc_in_snapshot; /* (stack index, other snapshot) → location id + 1 */
};

struct callsite_table {
	const struct fl_recording *rec;
	const struct callsite_skip *skip;
	struct symbolizer *sym;
	struct proc_memo *memo;     /* one per process */

	struct callsite_loc *locs;  /* interned locations, by id */
	uint64_t *loc_hash;         /* their hashes */
	size_t nlocs, locs_cap;
	uint32_t *index;            /* open addressing over locs: id + 1, 0 = empty */
	size_t index_cap;           /* power of two, at least 2 × nlocs */

	struct report_map skip_cache;     /* (0 binary | 1 function, pointer) → 1 kept, 2 skipped */
	struct report_map function_of;    /* (loc, 0) → function-level loc + 1 */
	struct callsite_frame *scratch;   /* callsite_expand's result */
	size_t scratch_cap;
};

/* What the recording says its binaries were (DIR/binaries, written by record: binary_id.h), so a
 * binary rebuilt or replaced since is never symbolized with the new file's lines; and the copies
 * record --archive kept (DIR/.build-id), read instead of the paths. A recording without the file
 * (older, or record itself killed) keeps the symbolizer's inode check alone. -1: out of memory. */
static int expect_recorded_binaries(struct callsite_table *t, const struct fl_recording *rec, sym_diag_fn diag,
				    void *diag_ctx)
{
	struct binary_id *ids;
	size_t n;
	unsigned skipped;
	char err[512], archive[4096];
	int rc = 0;

	if (binary_ids_load(rec->dir, &ids, &n, &skipped, err, sizeof(err)) < 0) {
		if (diag)
			diag(diag_ctx, err);
		return 0;
	}
	if (skipped && diag) {
		snprintf(err, sizeof(err), "%s/%s: %u damaged line%s skipped", rec->dir, BINARY_IDS_FILE, skipped,
			 skipped == 1 ? "" : "s");
		diag(diag_ctx, err);
	}
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = symbolizer_expect_binary(t->sym, ids[i].path, ids[i].build_id, ids[i].build_id_len, ids[i].size,
					      ids[i].mtime_ns);
	snprintf(archive, sizeof(archive), "%s/%s", rec->dir, BINARY_ARCHIVE_DIR);
	if (rc == 0 && access(archive, X_OK) == 0)
		rc = symbolizer_set_archive(t->sym, archive);
	binary_ids_free(ids, n);
	return rc;
}

struct callsite_table *callsite_table_new(const struct fl_recording *rec, const struct callsite_skip *skip,
					  sym_diag_fn diag, void *diag_ctx)
{
	struct callsite_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->rec = rec;
	t->skip = skip;
	t->sym = symbolizer_new();
	t->memo = calloc(rec->nprocs ? rec->nprocs : 1, sizeof(*t->memo));
	if (!t->sym || !t->memo) {
		callsite_table_free(t);
		errno = ENOMEM;
		return NULL;
	}
	symbolizer_set_diag(t->sym, diag, diag_ctx);
	if (expect_recorded_binaries(t, rec, diag, diag_ctx) < 0) {
		callsite_table_free(t);
		errno = ENOMEM;
		return NULL;
	}
	return t;
}

void callsite_table_free(struct callsite_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; t->memo && i < t->rec->nprocs; i++) {
		free(t->memo[i].loc_of_stack);
		free(t->memo[i].snapshot_of_stack);
		report_map_free(&t->memo[i].loc_in_snapshot);
	}
	free(t->memo);
	symbolizer_free(t->sym);
	free(t->locs);
	free(t->loc_hash);
	free(t->index);
	report_map_free(&t->skip_cache);
	report_map_free(&t->function_of);
	free(t->scratch);
	free(t);
}

void callsite_sym_stats(const struct callsite_table *t, struct sym_stats *out)
{
	symbolizer_get_stats(t->sym, out);
}

/* ----------------------------------------------------------------- interning */

static uint64_t hash_string(uint64_t h, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	return (h ^ (s ? 0xff : 0xfe)) * 1099511628211ull; /* NULL and "" differ */
}

static bool same_string(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static bool same_loc(const struct callsite_loc *l, const char *function, const char *file, unsigned line,
		     const char *binary)
{
	return l->line == line && same_string(l->function, function) && same_string(l->file, file) &&
	       same_string(l->binary, binary);
}

static int index_grow(struct callsite_table *t)
{
	size_t cap = t->index_cap ? t->index_cap * 2 : 1024;
	uint32_t *index = calloc(cap, sizeof(*index));

	if (!index)
		return -1;
	for (size_t id = 0; id < t->nlocs; id++) {
		size_t j = t->loc_hash[id] & (cap - 1);
		while (index[j])
			j = (j + 1) & (cap - 1);
		index[j] = (uint32_t)id + 1;
	}
	free(t->index);
	t->index = index;
	t->index_cap = cap;
	return 0;
}

static int locs_grow(struct callsite_table *t)
{
	size_t cap = t->locs_cap ? t->locs_cap * 2 : 256;
	struct callsite_loc *locs = realloc(t->locs, cap * sizeof(*locs));
	if (!locs)
		return -1;
	t->locs = locs;
	uint64_t *hashes = realloc(t->loc_hash, cap * sizeof(*hashes));
	if (!hashes)
		return -1;
	t->loc_hash = hashes;
	t->locs_cap = cap;
	return 0;
}

uint32_t callsite_intern(struct callsite_table *t, const char *function, const char *file, unsigned line,
			 const char *binary, bool symbolized)
{
	uint64_t h = hash_string(hash_string(hash_string(1469598103934665603ull, function), file), binary);
	h = (h ^ line) * 1099511628211ull;

	if ((t->nlocs + 1) * 2 > t->index_cap && index_grow(t) < 0)
		return FL_NONE;
	size_t mask = t->index_cap - 1, j = h & mask;
	for (; t->index[j]; j = (j + 1) & mask) {
		uint32_t id = t->index[j] - 1;
		if (t->loc_hash[id] == h && same_loc(&t->locs[id], function, file, line, binary))
			return id;
	}
	if (t->nlocs == t->locs_cap && locs_grow(t) < 0)
		return FL_NONE;
	if (t->nlocs >= FL_NONE - 1)
		return FL_NONE;
	t->locs[t->nlocs] = (struct callsite_loc){ function, file, line, binary, symbolized };
	t->loc_hash[t->nlocs] = h;
	t->index[j] = (uint32_t)t->nlocs + 1;
	return (uint32_t)t->nlocs++;
}

uint32_t callsite_intern_frame(struct callsite_table *t, const struct callsite_frame *f)
{
	if (f->function)
		return callsite_intern(t, f->function, f->file, f->line, f->binary, true);
	return callsite_intern(t, f->label, f->file, f->line, f->binary, false);
}

const struct callsite_loc *callsite_loc(const struct callsite_table *t, uint32_t loc)
{
	return loc < t->nlocs ? &t->locs[loc] : NULL;
}

uint32_t callsite_function_of(struct callsite_table *t, uint32_t loc)
{
	uint64_t *memo;
	bool added;

	if (loc >= t->nlocs || !(memo = report_map_add(&t->function_of, loc, 0, &added)))
		return FL_NONE;
	if (added) {
		struct callsite_loc l = t->locs[loc];
		uint32_t id = callsite_intern(t, l.function, NULL, 0, l.binary, l.symbolized);
		if (id == FL_NONE)
			return FL_NONE;
		/* callsite_intern may not grow function_of: the pointer is still good */
		*memo = (uint64_t)id + 1;
	}
	return (uint32_t)(*memo - 1);
}

/* ----------------------------------------------------------------- maps snapshots */

static void first_use(uint64_t *first, const struct fl_process *proc, const struct fl_stack *s, uint64_t time_ns)
{
	if (s) {
		size_t i = (size_t)(s - proc->stacks);
		if (time_ns < first[i])
			first[i] = time_ns;
	}
}

/* Picks each stack's maps snapshot: the one in force at the stack's first use. */
static int first_use_snapshots(struct callsite_table *t, size_t p)
{
	const struct fl_process *proc = &t->rec->procs[p];
	struct proc_memo *m = &t->memo[p];
	size_t n = proc->nstacks ? proc->nstacks : 1;
	uint64_t *first = malloc(n * sizeof(*first));

	m->loc_of_stack = calloc(n, sizeof(*m->loc_of_stack));
	m->snapshot_of_stack = calloc(n, sizeof(*m->snapshot_of_stack));
	if (!first || !m->loc_of_stack || !m->snapshot_of_stack) {
		free(first);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		first[i] = UINT64_MAX;
	struct fl_fault_stream *fs;
	const struct fl_fault *f;
	char why[256];
	int got = fl_fault_stream_open(proc, &fs, why, sizeof(why));
	if (got < 0) {
		free(first);
		return -1;
	}
	while ((got = fl_fault_stream_next(fs, &f)) > 0)
		first_use(first, proc, callsite_fault_stack(proc, f), f->rec.time_ns);
	fl_fault_stream_close(fs);
	if (got < 0) {
		free(first);
		return -1;
	}
	for (size_t i = 0; i < proc->nallocs; i++) {
		const struct fl_alloc_record *a = &proc->allocs[i];
		if (a->stack_id)
			first_use(first, proc, callsite_stack_by_id(proc, a->stack_id), a->time_ns);
	}
	for (size_t i = 0; i < proc->nstacks && proc->nmaps; i++)
		m->snapshot_of_stack[i] = (uint32_t)(fl_process_maps_at(proc, first[i]) - proc->maps);
	free(first);
	m->ready = true;
	return 0;
}

/* The maps to look ADDR up in: snapshot SNAP when it maps ADDR, else the nearest later one that
 * does, else the nearest earlier one; SNAP itself when none does; NULL without maps. */
static const struct maps *maps_for(const struct fl_process *proc, uint32_t snap, uint64_t addr)
{
	if (proc->nmaps == 0)
		return NULL;
	if (maps_find(proc->maps[snap].maps, addr))
		return proc->maps[snap].maps;
	for (size_t i = snap + 1; i < proc->nmaps; i++) {
		if (maps_find(proc->maps[i].maps, addr))
			return proc->maps[i].maps;
	}
	for (size_t i = snap; i-- > 0;) {
		if (maps_find(proc->maps[i].maps, addr))
			return proc->maps[i].maps;
	}
	return proc->maps[snap].maps;
}

/* ----------------------------------------------------------------- frames */

/* Cached skip decision for a binary path (kind 0) or function name (kind 1), both interned by the
 * symbolizer. -1 on ENOMEM. */
static int skipped(struct callsite_table *t, int kind, const char *text)
{
	uint64_t *decision;

	if (!text || (kind == 1 && t->skip->nuser == 0))
		return 0;
	if (!(decision = report_map_add(&t->skip_cache, (uint64_t)kind, (uint64_t)(uintptr_t)text, NULL)))
		return -1;
	if (*decision == 0) {
		bool skip = kind == 0 ? callsite_skip_binary(t->skip, text) : callsite_skip_function(t->skip, text);
		*decision = skip ? 2 : 1;
	}
	return *decision == 2;
}

static int scratch_reserve(struct callsite_table *t, size_t n)
{
	if (n <= t->scratch_cap)
		return 0;
	size_t cap = t->scratch_cap ? t->scratch_cap : 64;
	while (cap < n)
		cap *= 2;
	struct callsite_frame *frames = realloc(t->scratch, cap * sizeof(*frames));
	if (!frames)
		return -1;
	t->scratch = frames;
	t->scratch_cap = cap;
	return 0;
}

/* Appends the source frames of PC number I of STACK to t->scratch at *n. -1 on ENOMEM. */
static int expand_pc(struct callsite_table *t, const struct fl_process *proc, uint32_t snap,
		     const struct fl_stack *stack, uint32_t i, size_t *n)
{
	uint64_t pc = stack->frames[i];
	bool is_return = (i > 0 || !(stack->flags & FL_STACK_EXACT_PC)) && pc > 0;
	const struct sym_result *r = symbolizer_lookup(t->sym, maps_for(proc, snap, is_return ? pc - 1 : pc),
						       pc, is_return);
	unsigned count = r && r->nframes ? r->nframes : 1;
	int binary_skipped;

	if (!r || scratch_reserve(t, *n + count) < 0 || (binary_skipped = skipped(t, 0, r->binary)) < 0)
		return -1;
	for (unsigned k = 0; k < count; k++) {
		struct callsite_frame *f = &t->scratch[(*n)++];
		const struct sym_frame *s = r->nframes ? &r->frames[k] : NULL;
		*f = (struct callsite_frame){
			.pc = pc, .index = i, .is_return = is_return, .inlined = k + 1 < count,
			.function = s ? s->function : NULL, .file = s ? s->file : NULL, .line = s ? s->line : 0,
			.binary = r->binary, .offset = r->offset, .label = r->label,
			.unknown = r->nframes == 0, .symtab_only = r->source == SYM_SOURCE_SYMTAB,
		};
		int function_skipped = skipped(t, 1, f->function);
		if (function_skipped < 0)
			return -1;
		f->skipped = binary_skipped || function_skipped;
	}
	return 0;
}

/* Expands STACK under maps snapshot SNAP into t->scratch; with ALL false, stops at the callsite. */
static int expand(struct callsite_table *t, size_t p, const struct fl_stack *stack, uint32_t snap, bool all,
		  size_t *nframes, size_t *callsite)
{
	const struct fl_process *proc = &t->rec->procs[p];
	size_t n = 0, found = SIZE_MAX;

	for (uint32_t i = 0; i < stack->nframes && (all || found == SIZE_MAX); i++) {
		size_t before = n;
		if (expand_pc(t, proc, snap, stack, i, &n) < 0)
			return -1;
		for (size_t k = before; k < n && found == SIZE_MAX; k++) {
			if (!t->scratch[k].skipped)
				found = k;
		}
	}
	*nframes = n;
	*callsite = found == SIZE_MAX ? 0 : found;
	return 0;
}

uint32_t callsite_snapshot_at(const struct callsite_table *t, size_t p, uint64_t time_ns)
{
	return fl_process_maps_index_at(&t->rec->procs[p], time_ns);
}

uint32_t callsite_stack_snapshot(struct callsite_table *t, size_t p, const struct fl_stack *stack)
{
	const struct fl_process *proc = &t->rec->procs[p];

	if (!stack || proc->nmaps <= 1)
		return 0;
	if (!t->memo[p].ready && first_use_snapshots(t, p) < 0)
		return FL_NONE;
	return t->memo[p].snapshot_of_stack[stack - proc->stacks];
}

/* callsite_expand and callsite_expand_at: under snapshot SNAP, or FL_NONE for the first-use one. */
static int expand_frames(struct callsite_table *t, size_t p, const struct fl_stack *stack, uint32_t snap,
			 const struct callsite_frame **frames, size_t *nframes, size_t *callsite)
{
	*frames = NULL;
	*nframes = *callsite = 0;
	if (!stack || stack->nframes == 0)
		return 0;
	if (snap == FL_NONE)
		snap = callsite_stack_snapshot(t, p, stack);
	if (snap == FL_NONE || expand(t, p, stack, snap, true, nframes, callsite) < 0) {
		errno = ENOMEM;
		return -1;
	}
	*frames = t->scratch;
	return 0;
}

int callsite_expand(struct callsite_table *t, size_t p, const struct fl_stack *stack,
		    const struct callsite_frame **frames, size_t *nframes, size_t *callsite)
{
	return expand_frames(t, p, stack, FL_NONE, frames, nframes, callsite);
}

int callsite_expand_at(struct callsite_table *t, size_t p, const struct fl_stack *stack, uint64_t time_ns,
		       const struct callsite_frame **frames, size_t *nframes, size_t *callsite)
{
	return expand_frames(t, p, stack, callsite_snapshot_at(t, p, time_ns), frames, nframes, callsite);
}

int callsite_expand_in(struct callsite_table *t, size_t p, const struct fl_stack *stack, uint32_t snapshot,
		       const struct callsite_frame **frames, size_t *nframes, size_t *callsite)
{
	const struct fl_process *proc = &t->rec->procs[p];
	return expand_frames(t, p, stack, snapshot < proc->nmaps ? snapshot : 0, frames, nframes, callsite);
}

/* callsite_frame_of_stack and callsite_frame_of_stack_in: under snapshot SNAP, or FL_NONE for the
 * first-use one. */
static int frame_of_stack(struct callsite_table *t, size_t p, const struct fl_stack *stack, uint32_t snap,
			  const struct callsite_frame **frame)
{
	size_t n, callsite;

	*frame = NULL;
	if (!stack || stack->nframes == 0)
		return 0;
	if (snap == FL_NONE)
		snap = callsite_stack_snapshot(t, p, stack);
	if (snap == FL_NONE || expand(t, p, stack, snap, false, &n, &callsite) < 0) {
		errno = ENOMEM;
		return -1;
	}
	*frame = &t->scratch[callsite];
	return 0;
}

int callsite_frame_of_stack(struct callsite_table *t, size_t p, const struct fl_stack *stack,
			    const struct callsite_frame **frame)
{
	return frame_of_stack(t, p, stack, FL_NONE, frame);
}

int callsite_frame_of_stack_in(struct callsite_table *t, size_t p, const struct fl_stack *stack, uint32_t snapshot,
			       const struct callsite_frame **frame)
{
	const struct fl_process *proc = &t->rec->procs[p];
	return frame_of_stack(t, p, stack, snapshot < proc->nmaps ? snapshot : 0, frame);
}

uint32_t callsite_of_stack(struct callsite_table *t, size_t p, const struct fl_stack *stack)
{
	const struct fl_process *proc = &t->rec->procs[p];
	size_t n, callsite;
	uint32_t loc, snap;

	if (!stack || stack->nframes == 0)
		return callsite_intern(t, CALLSITE_NO_STACK, NULL, 0, NULL, false);
	if (t->memo[p].ready && t->memo[p].loc_of_stack[stack - proc->stacks])
		return t->memo[p].loc_of_stack[stack - proc->stacks] - 1;
	if (!t->memo[p].ready && first_use_snapshots(t, p) < 0)
		return FL_NONE;
	snap = proc->nmaps > 1 ? t->memo[p].snapshot_of_stack[stack - proc->stacks] : 0;
	if (expand(t, p, stack, snap, false, &n, &callsite) < 0)
		return FL_NONE;
	loc = callsite_intern_frame(t, &t->scratch[callsite]);
	if (loc != FL_NONE)
		t->memo[p].loc_of_stack[stack - proc->stacks] = loc + 1;
	return loc;
}

uint32_t callsite_of_stack_at(struct callsite_table *t, size_t p, const struct fl_stack *stack, uint64_t time_ns)
{
	const struct fl_process *proc = &t->rec->procs[p];
	size_t n, callsite;
	uint64_t *memo;
	bool added;

	if (!stack || stack->nframes == 0 || proc->nmaps <= 1)
		return callsite_of_stack(t, p, stack);
	uint32_t snap = callsite_snapshot_at(t, p, time_ns), first = callsite_stack_snapshot(t, p, stack);
	if (first == FL_NONE)
		return FL_NONE;
	if (snap == first)
		return callsite_of_stack(t, p, stack);
	memo = report_map_add(&t->memo[p].loc_in_snapshot, (uint64_t)(stack - proc->stacks), snap, &added);
	if (!memo)
		return FL_NONE;
	if (*memo) /* 0: new, or a lookup that ran out of memory */
		return (uint32_t)(*memo - 1);
	if (expand(t, p, stack, snap, false, &n, &callsite) < 0)
		return FL_NONE;
	uint32_t loc = callsite_intern_frame(t, &t->scratch[callsite]);
	if (loc == FL_NONE)
		return FL_NONE;
	/* neither expand nor interning touches loc_in_snapshot: the pointer is still good */
	*memo = (uint64_t)loc + 1;
	return loc;
}
