/* flame_tree.c: the flame graph's tree of call stacks weighted by counts (flame_tree.h): adding
 * stacks, its totals, its children in name order, and the trees derived from it (top stacks,
 * reversed). The folded and SVG outputs are render/flamegraph.c's.
 *
 * Data structures. Names ("main", "viz_chain.c:42") are interned in a string table: an array of
 * strings plus an open-addressing hash of their indexes. Nodes live in one array (node 0 is the
 * root "all"); each knows its parent, its name id, its first child and next sibling, and its
 * counts. A second open-addressing hash maps (parent, name id) to the child node, so adding a
 * stack of depth d costs d lookups. A third maps (node, file id, line) to a count, so each node
 * can name the file:line that brought it the most counts. */
#include "flame_tree.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define ROOT_NAME "all"
#define UNKNOWN_NAME "[unknown]"

/* ------------------------------------------------------------------ hashing */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

uint64_t flame_name_hash(const char *name)
{
	return mix64(string_set_hash(name, strlen(name)));
}

/* ------------------------------------------------------------------ string table */

/* The id of TEXT, added (with class CLS) if new; FLAME_NONE with errno ENOMEM. */
static uint32_t strtab_intern(struct flame_strtab *t, const char *text, enum flame_class cls)
{
	size_t len = strlen(text);
	uint32_t id = string_set_find(&t->set, text, len);

	if (id != STRING_SET_NONE)
		return id;
	if (t->set.count >= FLAME_NONE - 1)
		return FLAME_NONE;
	if (t->set.count == t->cap) { /* room for the new string's class and length first */
		size_t cap = t->cap ? t->cap * 2 : 256;
		uint8_t *cl = realloc(t->cls, cap);
		if (!cl)
			return FLAME_NONE;
		t->cls = cl;
		uint32_t *lens = realloc(t->lens, cap * sizeof(*lens));
		if (!lens)
			return FLAME_NONE;
		t->lens = lens;
		t->cap = cap;
	}
	if ((id = string_set_add(&t->set, text, len, NULL)) == STRING_SET_NONE)
		return FLAME_NONE;
	t->cls[id] = (uint8_t)cls;
	t->lens[id] = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
	return id;
}

static void strtab_free(struct flame_strtab *t)
{
	string_set_free(&t->set);
	free(t->lens);
	free(t->cls);
}

/* ------------------------------------------------------------------ the tree */

static uint64_t child_key_hash(uint32_t parent, uint32_t name)
{
	return mix64((uint64_t)parent << 32 | name);
}

static int child_grow(struct flame *f)
{
	uint32_t n = f->nchild_slots ? f->nchild_slots * 2 : 4096;
	uint32_t *slots = malloc(n * sizeof(*slots));

	if (!slots)
		return -1;
	memset(slots, 0xff, n * sizeof(*slots));
	for (uint32_t i = 1; i < f->nnodes; i++) {
		uint32_t s = (uint32_t)child_key_hash(f->nodes[i].parent, f->nodes[i].name) & (n - 1);
		while (slots[s] != FLAME_NONE)
			s = (s + 1) & (n - 1);
		slots[s] = i;
	}
	free(f->child_slots);
	f->child_slots = slots;
	f->nchild_slots = n;
	return 0;
}

/* The child of PARENT named NAME, created if absent; FLAME_NONE on ENOMEM. */
static uint32_t child_get(struct flame *f, uint32_t parent, uint32_t name)
{
	uint32_t s, idx;
	struct flame_node *p;

	if ((f->nnodes + 1) * 2 > f->nchild_slots && child_grow(f) < 0)
		return FLAME_NONE;
	s = (uint32_t)child_key_hash(parent, name) & (f->nchild_slots - 1);
	while ((idx = f->child_slots[s]) != FLAME_NONE) {
		if (f->nodes[idx].parent == parent && f->nodes[idx].name == name)
			return idx;
		s = (s + 1) & (f->nchild_slots - 1);
	}
	if (f->nnodes == f->cap) {
		uint32_t cap = f->cap * 2;
		struct flame_node *nodes = realloc(f->nodes, (size_t)cap * sizeof(*nodes));
		if (!nodes || cap >= FLAME_NONE)
			return FLAME_NONE;
		f->nodes = nodes;
		f->cap = cap;
	}
	idx = f->nnodes++;
	p = &f->nodes[parent];
	f->nodes[idx] = (struct flame_node){ parent, name, FLAME_NONE, p->first_child, FLAME_NONE, 0, p->depth + 1, 0, 0, 0, 0, 0 };
	p->first_child = idx;
	f->child_slots[s] = idx;
	if (f->nodes[idx].depth > f->max_depth)
		f->max_depth = f->nodes[idx].depth;
	return idx;
}

static uint32_t loc_hash(uint32_t node, uint32_t file, uint32_t line)
{
	return (uint32_t)mix64(((uint64_t)node << 32 | file) ^ ((uint64_t)line << 17));
}

static int loc_grow(struct flame *f)
{
	uint32_t n = f->nloc_slots ? f->nloc_slots * 2 : 4096;
	struct flame_loc *slots = malloc(n * sizeof(*slots));

	if (!slots)
		return -1;
	for (uint32_t i = 0; i < n; i++)
		slots[i].node = FLAME_NONE;
	for (uint32_t i = 0; i < f->nloc_slots; i++) {
		struct flame_loc *e = &f->loc_slots[i];
		uint32_t s;
		if (e->node == FLAME_NONE)
			continue;
		s = loc_hash(e->node, e->file, e->line) & (n - 1);
		while (slots[s].node != FLAME_NONE)
			s = (s + 1) & (n - 1);
		slots[s] = *e;
	}
	free(f->loc_slots);
	f->loc_slots = slots;
	f->nloc_slots = n;
	return 0;
}

/* Adds COUNT to (node, file, line) and makes it the node's best location when it now leads. */
static int loc_add(struct flame *f, uint32_t node, uint32_t file, uint32_t line, uint64_t count)
{
	struct flame_node *n = &f->nodes[node];
	struct flame_loc *e;
	uint32_t s;

	if ((f->nlocs + 1) * 2 > f->nloc_slots && loc_grow(f) < 0)
		return -1;
	s = loc_hash(node, file, line) & (f->nloc_slots - 1);
	while ((e = &f->loc_slots[s])->node != FLAME_NONE && !(e->node == node && e->file == file && e->line == line))
		s = (s + 1) & (f->nloc_slots - 1);
	if (e->node == FLAME_NONE) {
		*e = (struct flame_loc){ node, file, line, 0 };
		f->nlocs++;
	}
	e->count += count;
	if (e->count > n->loc_count) {
		n->loc_count = e->count;
		n->loc_file = file;
		n->loc_line = line;
	}
	return 0;
}

struct flame *flame_new(void)
{
	struct flame *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->cap = 1024;
	f->nodes = malloc(f->cap * sizeof(*f->nodes));
	if (!f->nodes || strtab_intern(&f->names, ROOT_NAME, FLAME_CLASS_PSEUDO) == FLAME_NONE) {
		flame_free(f);
		errno = ENOMEM;
		return NULL;
	}
	f->nodes[0] = (struct flame_node){ FLAME_NONE, 0, FLAME_NONE, FLAME_NONE, FLAME_NONE, 0, 0, 0, 0, 0, 0, 0 };
	f->nnodes = 1;
	return f;
}

void flame_free(struct flame *f)
{
	if (!f)
		return;
	strtab_free(&f->names);
	strtab_free(&f->locs);
	free(f->nodes);
	free(f->child_slots);
	free(f->loc_slots);
	free(f);
}

/* Adds COUNT to the stack as flame_add does, to the baseline counts when BASE. */
static int add_stack(struct flame *f, const struct flame_frame *frames, size_t n, uint64_t count, bool base)
{
	uint32_t node = 0;

	if (n == 0) {
		errno = EINVAL;
		return -1;
	}
	if (count > (UINT64_MAX >> 1) - (base ? f->nodes[0].base_total : f->nodes[0].total)) {
		errno = EOVERFLOW;
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		const char *name = frames[i].name && *frames[i].name ? frames[i].name : UNKNOWN_NAME;
		uint32_t id = strtab_intern(&f->names, name, frames[i].cls), file;
		if (id == FLAME_NONE || (node = child_get(f, node, id)) == FLAME_NONE)
			goto nomem;
		if (!frames[i].file || !*frames[i].file)
			continue;
		file = strtab_intern(&f->locs, frames[i].file, FLAME_CLASS_PSEUDO);
		if (file == FLAME_NONE || loc_add(f, node, file, frames[i].line, count) < 0)
			goto nomem;
	}
	if (base) {
		f->nodes[node].base_self += count;
		for (uint32_t up = node; up != FLAME_NONE; up = f->nodes[up].parent)
			f->nodes[up].base_total += count;
		return 0;
	}
	f->nodes[node].self += count;
	for (uint32_t up = node; up != FLAME_NONE; up = f->nodes[up].parent)
		f->nodes[up].total += count;
	return 0;
nomem:
	errno = ENOMEM;
	return -1;
}

int flame_add(struct flame *f, const struct flame_frame *frames, size_t n, uint64_t count)
{
	return add_stack(f, frames, n, count, false);
}

int flame_add_base(struct flame *f, const struct flame_frame *frames, size_t n, uint64_t count)
{
	return add_stack(f, frames, n, count, true);
}

uint64_t flame_total(const struct flame *f)
{
	return f->nodes[0].total;
}

size_t flame_node_count(const struct flame *f)
{
	return f->nnodes;
}

size_t flame_depth(const struct flame *f)
{
	return f->max_depth;
}

/* ------------------------------------------------------------------ children in name order */

static int by_name(const void *a, const void *b, void *ctx)
{
	const struct flame *f = ctx;
	const struct flame_node *x = &f->nodes[*(const uint32_t *)a];
	const struct flame_node *y = &f->nodes[*(const uint32_t *)b];
	return strcmp(f->names.set.strings[x->name], f->names.set.strings[y->name]);
}

int flame_sort_children(const struct flame *f, struct flame_sorted_children *sc)
{
	sc->first = calloc((size_t)f->nnodes + 1, sizeof(uint32_t));
	sc->kids = malloc(((size_t)f->nnodes + 1) * sizeof(uint32_t));
	if (!sc->first || !sc->kids) {
		free(sc->first);
		free(sc->kids);
		return -1;
	}
	/* Counting sort by parent, then each run by name. */
	for (uint32_t i = 1; i < f->nnodes; i++)
		sc->first[f->nodes[i].parent + 1]++;
	for (uint32_t i = 0; i < f->nnodes; i++)
		sc->first[i + 1] += sc->first[i];
	{
		uint32_t *fill = malloc((size_t)f->nnodes * sizeof(uint32_t));
		if (!fill) {
			free(sc->first);
			free(sc->kids);
			return -1;
		}
		memcpy(fill, sc->first, (size_t)f->nnodes * sizeof(uint32_t));
		for (uint32_t i = 1; i < f->nnodes; i++)
			sc->kids[fill[f->nodes[i].parent]++] = i;
		free(fill);
	}
	for (uint32_t i = 0; i < f->nnodes; i++) {
		uint32_t n = sc->first[i + 1] - sc->first[i];
		if (n > 1)
			qsort_r(sc->kids + sc->first[i], n, sizeof(uint32_t), by_name, (void *)f);
	}
	return 0;
}

void flame_sorted_children_free(struct flame_sorted_children *sc)
{
	free(sc->first);
	free(sc->kids);
}

/* ------------------------------------------------------------------ derived trees */

/* Adds the stack ending at NODE of F to DST with COUNT, reversed when REVERSE. */
static int copy_stack(struct flame *dst, const struct flame *f, uint32_t node, uint64_t count, bool reverse,
		      struct flame_frame *frames)
{
	size_t depth = f->nodes[node].depth;

	for (uint32_t up = node; up != 0; up = f->nodes[up].parent) {
		const struct flame_node *n = &f->nodes[up];
		size_t at = reverse ? depth - n->depth : n->depth - 1;
		frames[at] = (struct flame_frame){ f->names.set.strings[n->name], n->loc_file != FLAME_NONE ? f->locs.set.strings[n->loc_file] : NULL,
						   n->loc_line, (enum flame_class)f->names.cls[n->name] };
	}
	return flame_add(dst, frames, depth, count);
}

static int by_self_desc(const void *a, const void *b, void *ctx)
{
	const struct flame *f = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t sx = f->nodes[x].self, sy = f->nodes[y].self;
	if (sx != sy)
		return sx > sy ? -1 : 1;
	return x < y ? -1 : x > y;
}

struct flame *flame_top_stacks(const struct flame *f, size_t n, const char *other_name)
{
	struct flame *dst = flame_new();
	struct flame_frame *frames = malloc((f->max_depth + 1) * sizeof(*frames));
	uint32_t *ends = malloc((size_t)f->nnodes * sizeof(*ends));
	uint32_t nends = 0;
	uint64_t rest = 0;

	if (!dst || !frames || !ends)
		goto fail;
	for (uint32_t i = 1; i < f->nnodes; i++)
		if (f->nodes[i].self)
			ends[nends++] = i;
	qsort_r(ends, nends, sizeof(*ends), by_self_desc, (void *)f);
	for (uint32_t k = 0; k < nends; k++) {
		if (k < n) {
			if (copy_stack(dst, f, ends[k], f->nodes[ends[k]].self, false, frames) < 0)
				goto fail;
		} else {
			rest += f->nodes[ends[k]].self;
		}
	}
	if (rest) {
		struct flame_frame other = { other_name, NULL, 0, FLAME_CLASS_PSEUDO };
		if (flame_add(dst, &other, 1, rest) < 0)
			goto fail;
	}
	free(frames);
	free(ends);
	return dst;
fail:
	flame_free(dst);
	free(frames);
	free(ends);
	errno = ENOMEM;
	return NULL;
}

struct flame *flame_reversed(const struct flame *f)
{
	struct flame *dst = flame_new();
	struct flame_frame *frames = malloc((f->max_depth + 1) * sizeof(*frames));

	if (!dst || !frames)
		goto fail;
	for (uint32_t i = 1; i < f->nnodes; i++) {
		if (f->nodes[i].self && copy_stack(dst, f, i, f->nodes[i].self, true, frames) < 0)
			goto fail;
	}
	free(frames);
	return dst;
fail:
	flame_free(dst);
	free(frames);
	errno = ENOMEM;
	return NULL;
}
