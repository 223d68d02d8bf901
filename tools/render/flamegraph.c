/* flamegraph.c: the call-stack tree, folded output and the interactive SVG (flamegraph.h).
 *
 * Data structures. Names ("main", "viz_chain.c:42") are interned in a string table: an array of
 * strings plus an open-addressing hash of their indexes. Nodes live in one array (node 0 is the
 * root "all"); each knows its parent, its name id, its first child and next sibling, and its
 * counts. A second open-addressing hash maps (parent, name id) to the child node, so adding a
 * stack of depth d costs d lookups. A third maps (node, file id, line) to a count, so each node
 * can name the file:line that brought it the most counts.
 *
 * Drawing. With scale = drawable width / total, a node is drawn when its width total * scale is at
 * least the minimum width and its depth fits the canvas; since a child is never wider than its
 * parent, the drawn nodes form a subtree. Children of a drawn node that are too narrow are summed,
 * and drawn as one merged frame when the sum is wide enough. If the frames counted that way exceed
 * max_frames, the minimum width grows by 1/8 until they do not. */
#include "flamegraph.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "flamegraph_js.h"
#include "svg.h"

#define NONE UINT32_MAX
#define ROOT_NAME "all"
#define UNKNOWN_NAME "[unknown]"

/* ------------------------------------------------------------------ hashing */

static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/* ------------------------------------------------------------------ string table */

struct strtab {
	char **strs;
	uint32_t *lens;         /* strlen of each */
	uint8_t *cls;           /* enum flame_class of each string (used for names only) */
	uint32_t n, cap;
	uint32_t *slots;        /* string index + 1; 0 = empty */
	uint32_t nslots;        /* power of two */
};

static int strtab_grow_slots(struct strtab *t)
{
	uint32_t nslots = t->nslots ? t->nslots * 2 : 1024;
	uint32_t *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return -1;
	for (uint32_t i = 0; i < t->n; i++) {
		uint32_t s = (uint32_t)hash_bytes(t->strs[i], strlen(t->strs[i])) & (nslots - 1);
		while (slots[s])
			s = (s + 1) & (nslots - 1);
		slots[s] = i + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	return 0;
}

/* The id of TEXT, added (with class CLS) if new; NONE with errno ENOMEM. */
static uint32_t strtab_intern(struct strtab *t, const char *text, enum flame_class cls)
{
	size_t len = strlen(text);
	uint32_t s;

	if ((t->n + 1) * 2 > t->nslots && strtab_grow_slots(t) < 0)
		return NONE;
	s = (uint32_t)hash_bytes(text, len) & (t->nslots - 1);
	while (t->slots[s]) {
		if (strcmp(t->strs[t->slots[s] - 1], text) == 0)
			return t->slots[s] - 1;
		s = (s + 1) & (t->nslots - 1);
	}
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 256;
		char **strs = realloc(t->strs, cap * sizeof(*strs));
		uint8_t *cl;
		if (!strs)
			return NONE;
		t->strs = strs;
		cl = realloc(t->cls, cap);
		if (!cl)
			return NONE;
		t->cls = cl;
		{
			uint32_t *lens = realloc(t->lens, cap * sizeof(*lens));
			if (!lens)
				return NONE;
			t->lens = lens;
		}
		t->cap = cap;
	}
	t->strs[t->n] = strdup(text);
	if (!t->strs[t->n])
		return NONE;
	t->cls[t->n] = (uint8_t)cls;
	t->lens[t->n] = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
	t->slots[s] = t->n + 1;
	return t->n++;
}

static void strtab_free(struct strtab *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		free(t->strs[i]);
	free(t->strs);
	free(t->lens);
	free(t->cls);
	free(t->slots);
}

/* ------------------------------------------------------------------ the tree */

struct node {
	uint32_t parent, name;      /* NONE for the root */
	uint32_t first_child, next_sibling;
	uint32_t loc_file;          /* best location: file id (in locs), or NONE */
	uint32_t loc_line;          /* and line (0: unknown) */
	uint32_t depth;             /* root = 0 */
	uint64_t total, self;
	uint64_t loc_count;         /* counts the best location brought */
	uint64_t base_total, base_self; /* a differential graph's baseline (flame_add_base) */
};

/* (node, file, line) → count, for choosing each node's best location. */
struct loc_entry {
	uint32_t node, file, line;  /* node NONE: empty */
	uint64_t count;
};

struct flame {
	struct strtab names, locs;  /* locs: source file names */
	struct node *nodes;
	uint32_t nnodes, cap;
	uint32_t *child_slots;      /* node index; NONE = empty */
	uint32_t nchild_slots;      /* power of two */
	struct loc_entry *loc_slots;
	uint32_t nloc_slots, nlocs;
	size_t max_depth;
};

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
		while (slots[s] != NONE)
			s = (s + 1) & (n - 1);
		slots[s] = i;
	}
	free(f->child_slots);
	f->child_slots = slots;
	f->nchild_slots = n;
	return 0;
}

/* The child of PARENT named NAME, created if absent; NONE on ENOMEM. */
static uint32_t child_get(struct flame *f, uint32_t parent, uint32_t name)
{
	uint32_t s, idx;
	struct node *p;

	if ((f->nnodes + 1) * 2 > f->nchild_slots && child_grow(f) < 0)
		return NONE;
	s = (uint32_t)child_key_hash(parent, name) & (f->nchild_slots - 1);
	while ((idx = f->child_slots[s]) != NONE) {
		if (f->nodes[idx].parent == parent && f->nodes[idx].name == name)
			return idx;
		s = (s + 1) & (f->nchild_slots - 1);
	}
	if (f->nnodes == f->cap) {
		uint32_t cap = f->cap * 2;
		struct node *nodes = realloc(f->nodes, (size_t)cap * sizeof(*nodes));
		if (!nodes || cap >= NONE)
			return NONE;
		f->nodes = nodes;
		f->cap = cap;
	}
	idx = f->nnodes++;
	p = &f->nodes[parent];
	f->nodes[idx] = (struct node){ parent, name, NONE, p->first_child, NONE, 0, p->depth + 1, 0, 0, 0, 0, 0 };
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
	struct loc_entry *slots = malloc(n * sizeof(*slots));

	if (!slots)
		return -1;
	for (uint32_t i = 0; i < n; i++)
		slots[i].node = NONE;
	for (uint32_t i = 0; i < f->nloc_slots; i++) {
		struct loc_entry *e = &f->loc_slots[i];
		uint32_t s;
		if (e->node == NONE)
			continue;
		s = loc_hash(e->node, e->file, e->line) & (n - 1);
		while (slots[s].node != NONE)
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
	struct node *n = &f->nodes[node];
	struct loc_entry *e;
	uint32_t s;

	if ((f->nlocs + 1) * 2 > f->nloc_slots && loc_grow(f) < 0)
		return -1;
	s = loc_hash(node, file, line) & (f->nloc_slots - 1);
	while ((e = &f->loc_slots[s])->node != NONE && !(e->node == node && e->file == file && e->line == line))
		s = (s + 1) & (f->nloc_slots - 1);
	if (e->node == NONE) {
		*e = (struct loc_entry){ node, file, line, 0 };
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
	if (!f->nodes || strtab_intern(&f->names, ROOT_NAME, FLAME_CLASS_PSEUDO) == NONE) {
		flame_free(f);
		errno = ENOMEM;
		return NULL;
	}
	f->nodes[0] = (struct node){ NONE, 0, NONE, NONE, NONE, 0, 0, 0, 0, 0, 0, 0 };
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

/* Formats a node's best location, "file:line" or "file", into buf; NULL when it has none. */
static const char *node_loc(const struct flame *f, const struct node *n, char *buf, size_t len)
{
	if (n->loc_file == NONE)
		return NULL;
	if (n->loc_line)
		snprintf(buf, len, "%s:%u", f->locs.strs[n->loc_file], n->loc_line);
	else
		snprintf(buf, len, "%s", f->locs.strs[n->loc_file]);
	return buf;
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
		if (id == NONE || (node = child_get(f, node, id)) == NONE)
			goto nomem;
		if (!frames[i].file || !*frames[i].file)
			continue;
		file = strtab_intern(&f->locs, frames[i].file, FLAME_CLASS_PSEUDO);
		if (file == NONE || loc_add(f, node, file, frames[i].line, count) < 0)
			goto nomem;
	}
	if (base) {
		f->nodes[node].base_self += count;
		for (uint32_t up = node; up != NONE; up = f->nodes[up].parent)
			f->nodes[up].base_total += count;
		return 0;
	}
	f->nodes[node].self += count;
	for (uint32_t up = node; up != NONE; up = f->nodes[up].parent)
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

/* Every node's children sorted by name: kids[first[i] .. first[i+1]) for node i. */
struct sorted_children {
	uint32_t *first;            /* nnodes + 1 */
	uint32_t *kids;             /* nnodes - 1 */
};

static int by_name(const void *a, const void *b, void *ctx)
{
	const struct flame *f = ctx;
	const struct node *x = &f->nodes[*(const uint32_t *)a];
	const struct node *y = &f->nodes[*(const uint32_t *)b];
	return strcmp(f->names.strs[x->name], f->names.strs[y->name]);
}

static int sort_children(const struct flame *f, struct sorted_children *sc)
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

static void sorted_children_free(struct sorted_children *sc)
{
	free(sc->first);
	free(sc->kids);
}

/* ------------------------------------------------------------------ folded output */

/* Writes NAME as a folded frame: ';' → ':', control characters → '?'. */
static void put_folded_name(const char *name, FILE *out)
{
	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		if (*p == ';')
			putc(':', out);
		else if (*p < 0x20 || *p == 0x7f)
			putc('?', out);
		else
			putc(*p, out);
	}
}

static size_t write_folded(const struct flame *f, bool diff, FILE *out);

size_t flame_write_folded(const struct flame *f, FILE *out)
{
	return write_folded(f, false, out);
}

size_t flame_write_folded_diff(const struct flame *f, FILE *out)
{
	return write_folded(f, true, out);
}

static size_t write_folded(const struct flame *f, bool diff, FILE *out)
{
	struct sorted_children sc;
	uint32_t *path, *pos;
	size_t depth = 0, lines = 0;

	if (f->nnodes <= 1)
		return 0;
	if (sort_children(f, &sc) < 0)
		return 0;
	path = malloc((f->max_depth + 2) * sizeof(*path));
	pos = malloc((f->max_depth + 2) * sizeof(*pos));
	if (!path || !pos) {
		free(path);
		free(pos);
		sorted_children_free(&sc);
		return 0;
	}
	/* Depth-first, children in name order: path[1..depth] is the current stack. */
	path[0] = 0;
	pos[0] = sc.first[0];
	for (;;) {
		uint32_t node = path[depth];
		if (pos[depth] < sc.first[node + 1]) {
			uint32_t child = sc.kids[pos[depth]++];
			path[++depth] = child;
			pos[depth] = sc.first[child];
			if (f->nodes[child].self || (diff && f->nodes[child].base_self)) {
				for (size_t i = 1; i <= depth; i++) {
					if (i > 1)
						putc(';', out);
					put_folded_name(f->names.strs[f->nodes[path[i]].name], out);
				}
				if (diff)
					fprintf(out, " %" PRIu64, f->nodes[child].base_self);
				fprintf(out, " %" PRIu64 "\n", f->nodes[child].self);
				lines++;
			}
			continue;
		}
		if (depth == 0)
			break;
		depth--;
	}
	free(path);
	free(pos);
	sorted_children_free(&sc);
	return lines;
}

/* ------------------------------------------------------------------ derived trees */

/* Adds the stack ending at NODE of F to DST with COUNT, reversed when REVERSE. */
static int copy_stack(struct flame *dst, const struct flame *f, uint32_t node, uint64_t count, bool reverse,
		      struct flame_frame *frames)
{
	size_t depth = f->nodes[node].depth;

	for (uint32_t up = node; up != 0; up = f->nodes[up].parent) {
		const struct node *n = &f->nodes[up];
		size_t at = reverse ? depth - n->depth : n->depth - 1;
		frames[at] = (struct flame_frame){ f->names.strs[n->name], n->loc_file != NONE ? f->locs.strs[n->loc_file] : NULL,
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

/* ------------------------------------------------------------------ colours */

void flame_color(const char *name, enum flame_class cls, char buf[8])
{
	uint64_t h = mix64(hash_bytes(name, strlen(name)));
	double v1 = (double)(h & 0xffff) / 65535.0, v2 = (double)((h >> 16) & 0xffff) / 65535.0;
	double v3 = (double)((h >> 32) & 0xffff) / 65535.0;

	switch (cls) {
	case FLAME_CLASS_CODE:      /* green → teal → cyan */
		svg_color_hsl(110 + 80 * v1, 0.45 + 0.25 * v2, 0.52 + 0.12 * v3, buf);
		break;
	case FLAME_CLASS_LIBRARY:   /* blue → violet, softer */
		svg_color_hsl(210 + 50 * v1, 0.35 + 0.25 * v2, 0.66 + 0.10 * v3, buf);
		break;
	default:                    /* grey */
		svg_color_hsl(0, 0, 0.72 + 0.06 * v3, buf);
		break;
	}
}

/* ------------------------------------------------------------------ SVG */

void flame_svg_options_init(struct flame_svg_options *o)
{
	memset(o, 0, sizeof(*o));
	o->countname = "faults";
	o->width = 1200;
	o->frame_height = 16;
	o->font_size = 12;
	o->min_width = 1;
	o->max_frames = 12000;
	o->max_bytes = 1900000;
}

#define XPAD 10
#define MATCH_COLOR "rgb(230,0,230)"

/* Everything the drawing pass needs. */
struct draw {
	const struct flame *f;
	struct sorted_children sc;
	FILE *out;
	double scale;               /* pixels per count */
	double drawable;            /* width available to frames */
	double min_px;
	unsigned max_depth;         /* deepest level that fits the canvas */
	unsigned fh, height, ypad1, ypad2;
	double fs;
	bool inverted;
	bool differential;          /* colour by growth over the baseline */
	uint32_t node;              /* the node draw_frame draws (NONE: a merged frame) */
	uint64_t max_delta;         /* differential: the largest |total - base_total| of a node */
	const char *countname;
	struct flame_svg_stats *st;
	char loc[4096];             /* a node's file:line, formatted (not on the recursion's stack) */
};

/* Bytes a frame costs in the SVG, about: markup and numbers, its name twice (tooltip and label),
 * its location; a merged frame names up to three others. */
#define FRAME_BYTES 150
#define MERGED_FRAME_BYTES 400

/* Frames drawn at threshold MIN_PX (nodes and merged frames), given each node's narrow-children sum
 * in the scratch array NARROW; *BYTES gets their estimated size. */
static size_t count_frames(const struct flame *f, double scale, double min_px, unsigned max_depth,
			   uint64_t *narrow, size_t *bytes)
{
	size_t frames = 1;

	*bytes = FRAME_BYTES;
	memset(narrow, 0, (size_t)f->nnodes * sizeof(*narrow));
	for (uint32_t i = 1; i < f->nnodes; i++) {
		const struct node *n = &f->nodes[i];
		const struct node *p = &f->nodes[n->parent];
		bool parent_drawn = n->parent == 0 || (p->total * scale >= min_px && p->depth <= max_depth);
		if (!parent_drawn || n->depth > max_depth)
			continue;
		if (n->total * scale >= min_px) {
			frames++;
			*bytes += FRAME_BYTES + 2 * (size_t)f->names.lens[n->name] +
				  (n->loc_file != NONE ? f->locs.lens[n->loc_file] + 8 : 0);
		} else {
			narrow[n->parent] += n->total;
		}
	}
	for (uint32_t i = 0; i < f->nnodes; i++) {
		if (narrow[i] && narrow[i] * scale >= min_px) {
			frames++;
			*bytes += MERGED_FRAME_BYTES;
		}
	}
	return frames;
}

static unsigned frame_y(const struct draw *d, unsigned depth)
{
	if (d->inverted)
		return d->ypad1 + depth * d->fh;
	return d->height - d->ypad2 - (depth + 1) * d->fh;
}

static void put_count(FILE *out, uint64_t n)
{
	char buf[32];
	fputs(cli_format_count(n, buf, sizeof(buf)), out);
}

static void put_percent(FILE *out, uint64_t n, uint64_t total)
{
	if (n == total)
		fputs("100%", out);
	else
		fprintf(out, "%.2f%%", total ? 100.0 * (double)n / (double)total : 0.0);
}

/* One frame: <g><title>..</title><rect/><text/></g>. TITLE_EXTRA (may be NULL) is written after the
 * first title line, already escaped. */
/* A differential frame's colour, as flamegraph.pl colours difffolded.pl's output: red for growth
 * over the baseline, blue for shrinkage, the deeper the larger the change against the largest; white
 * for none. */
static void diff_color(const struct draw *d, const struct node *n, char buf[8])
{
	uint64_t delta = n->total > n->base_total ? n->total - n->base_total : n->base_total - n->total;
	int pale = d->max_delta ? (int)(210.0 * (double)(d->max_delta - delta) / (double)d->max_delta + 0.5) : 210;

	if (n->total == n->base_total)
		snprintf(buf, 8, "#ffffff");
	else if (n->total > n->base_total)
		snprintf(buf, 8, "#ff%02x%02x", pale, pale);
	else
		snprintf(buf, 8, "#%02x%02xff", pale, pale);
}

/* The tooltip line of a differential frame: "&#10;A 1,234, B 2,345 (+1,111, +90.03%)". */
static void diff_extra(const struct node *n, char *buf, size_t len)
{
	char a[32], b[32], dl[32];
	uint64_t delta = n->total > n->base_total ? n->total - n->base_total : n->base_total - n->total;
	int used = snprintf(buf, len, "&#10;A %s, B %s (%s%s", cli_format_count(n->base_total, a, sizeof(a)),
			    cli_format_count(n->total, b, sizeof(b)), n->total >= n->base_total ? "+" : "-",
			    cli_format_count(delta, dl, sizeof(dl)));
	if (used > 0 && (size_t)used < len) {
		if (n->base_total)
			snprintf(buf + used, len - (size_t)used, ", %s%.2f%%)", n->total >= n->base_total ? "+" : "-",
				 100.0 * (double)delta / (double)n->base_total);
		else
			snprintf(buf + used, len - (size_t)used, ", new)");
	}
}

static void draw_frame(struct draw *d, const char *name, enum flame_class cls, uint64_t count, uint64_t self,
		       bool has_kids, const char *loc, const char *extra, double x, double w, unsigned depth)
{
	FILE *out = d->out;
	char nx[32], nw[32], nt[32], color[8];
	uint64_t total = d->f->nodes[0].total;
	int ellipsis;
	size_t keep;

	fputs("<g><title>", out);
	svg_escape(out, name, (size_t)-1);
	fputs(" (", out);
	put_count(out, count);
	fprintf(out, " %s, ", d->countname);
	put_percent(out, count, total);
	fputs(")", out);
	if (has_kids && self) {
		fputs("&#10;self ", out);
		put_count(out, self);
		fprintf(out, " %s", d->countname);
	}
	if (loc) {
		fputs("&#10;", out);
		svg_escape(out, loc, (size_t)-1);
	}
	if (extra)
		fputs(extra, out);
	if (d->differential && d->node != NONE)
		diff_color(d, &d->f->nodes[d->node], color);
	else
		flame_color(name, cls, color);
	fprintf(out, "</title><rect x=\"%s\" y=\"%u\" width=\"%s\" height=\"%u\" fill=\"%s\"/>", svg_num(nx, x, 2),
		frame_y(d, depth), svg_num(nw, w, 2), d->fh - 1, color);
	keep = svg_fit_text(name, w - 3, d->fs, &ellipsis);
	if (keep) {
		fprintf(out, "<text x=\"%s\" y=\"%u\">", svg_num(nt, x + 3, 2), frame_y(d, depth) + d->fh - 5);
		svg_escape(out, name, keep);
		if (ellipsis)
			fputs("..", out);
		fputs("</text>", out);
	}
	fputs("</g>\n", out);
	d->st->frames++;
	if (depth > d->st->depth)
		d->st->depth = depth;
}

/* The merged frame for the narrow children of NODE: "[N more < W px]", listing the largest few. */
static void draw_merged(struct draw *d, uint32_t node, uint64_t sum, size_t nnarrow, double x)
{
	const struct flame *f = d->f;
	char name[96], wbuf[32], extra[1024];
	uint32_t top[3] = { NONE, NONE, NONE };
	size_t len = 0;

	for (uint32_t k = d->sc.first[node]; k < d->sc.first[node + 1]; k++) {
		uint32_t c = d->sc.kids[k];
		if (f->nodes[c].total * d->scale >= d->min_px)
			continue;
		for (int j = 0; j < 3; j++) {
			if (top[j] == NONE || f->nodes[c].total > f->nodes[top[j]].total) {
				memmove(&top[j + 1], &top[j], (size_t)(2 - j) * sizeof(top[0]));
				top[j] = c;
				break;
			}
		}
	}
	snprintf(name, sizeof(name), "[%zu more < %s px]", nnarrow, svg_num(wbuf, d->min_px, 1));
	/* The extra tooltip lines name the largest merged frames; escaped into a memory stream. */
	{
		FILE *mem = fmemopen(extra, sizeof(extra), "w");
		if (mem) {
			fputs("&#10;largest:", mem);
			for (int j = 0; j < 3 && top[j] != NONE; j++) {
				const char *name = f->names.strs[f->nodes[top[j]].name];
				fputs(j ? ", " : " ", mem);
				svg_escape(mem, name, strnlen(name, 200)); /* at most 200 bytes, never past its end */
				fputs(" (", mem);
				put_count(mem, f->nodes[top[j]].total);
				fputs(")", mem);
			}
			fflush(mem);
			len = (size_t)ftell(mem);
			fclose(mem);
		}
		extra[len < sizeof(extra) ? len : sizeof(extra) - 1] = '\0';
		/* A cut in the middle of an entity would break the XML: drop a trailing partial one. */
		{
			char *amp = strrchr(extra, '&');
			if (amp && !strchr(amp, ';'))
				*amp = '\0';
		}
	}
	draw_frame(d, name, FLAME_CLASS_PSEUDO, sum, 0, false, NULL, extra, x, sum * d->scale,
		   f->nodes[node].depth + 1);
	d->st->merged++;
}

/* Draws NODE at X (its subtree below it), children in name order from its left edge, then the
 * merged frame of its narrow children. */
static void draw_subtree(struct draw *d, uint32_t node, double x)
{
	const struct flame *f = d->f;
	const struct node *n = &f->nodes[node];
	uint64_t narrow = 0;
	size_t nnarrow = 0;
	bool has_kids = d->sc.first[node + 1] > d->sc.first[node];
	double cx = x;

	char extra[160];

	if (d->differential)
		diff_extra(n, extra, sizeof(extra));
	/* The root spans the graph even when nothing was counted (an empty graph, not a 0 px frame). */
	d->node = node;
	draw_frame(d, f->names.strs[n->name], node ? (enum flame_class)f->names.cls[n->name] : FLAME_CLASS_PSEUDO,
		   n->total, n->self, has_kids, node_loc(f, n, d->loc, sizeof(d->loc)), d->differential ? extra : NULL, x,
		   node == 0 && n->total == 0 ? d->drawable : n->total * d->scale, n->depth);
	d->node = NONE;
	if (n->depth >= d->max_depth) {
		if (has_kids)
			d->st->depth_cut = true;
		return;
	}
	for (uint32_t k = d->sc.first[node]; k < d->sc.first[node + 1]; k++) {
		uint32_t c = d->sc.kids[k];
		if (f->nodes[c].total * d->scale < d->min_px) {
			narrow += f->nodes[c].total;
			nnarrow++;
			continue;
		}
		draw_subtree(d, c, cx);
		cx += f->nodes[c].total * d->scale;
	}
	if (narrow && narrow * d->scale >= d->min_px)
		draw_merged(d, node, narrow, nnarrow, cx);
}

static void write_style_and_script(const struct draw *d, unsigned width)
{
	FILE *out = d->out;
	char fs[32], fs_title[32];

	fprintf(out,
		"<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
		"<stop stop-color=\"#f6f7f9\" offset=\"5%%\"/><stop stop-color=\"#e4ece8\" offset=\"95%%\"/>"
		"</linearGradient></defs>\n"
		"<style type=\"text/css\">\n"
		"text { font-family: Verdana, 'DejaVu Sans', sans-serif; font-size: %spx; fill: #000; }\n"
		"#title { text-anchor: middle; font-size: %spx; }\n"
		"#subtitle { text-anchor: middle; fill: #555; }\n"
		"#frames > g > text { pointer-events: none; }\n"
		"#frames > g:hover > rect { stroke: #000; stroke-width: 0.5; }\n"
		"#frames > g { cursor: pointer; }\n"
		".hide { display: none; }\n"
		".parent { opacity: 0.5; }\n"
		"#unzoom, #search, #ignorecase { cursor: pointer; }\n"
		"#search, #ignorecase { opacity: 0.3; }\n"
		"#search.show, #ignorecase.show { opacity: 1; }\n"
		"#search:hover, #ignorecase:hover, #unzoom:hover { fill: #a00; opacity: 1; }\n"
		"</style>\n",
		svg_num(fs, d->fs, 1), svg_num(fs_title, d->fs + 5, 1));
	fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n"
		"var cfg = { countname: '%s', fontsize: %s, fontwidth: %.2f, xpad: %d, width: %u, frameheight: %u, "
		"total: %" PRIu64 ", inverted: %s, matchcolor: '%s' };\n",
		d->countname, svg_num(fs, d->fs, 1), SVG_CHAR_WIDTH, XPAD, width, d->fh, d->f->nodes[0].total,
		d->inverted ? "true" : "false", MATCH_COLOR);
	fputs(flamegraph_js, out);
	fputs("]]></script>\n", out);
}

/* A countname goes into a JavaScript string and XML: keep it to letters, digits, '-', '_', ' '. */
static const char *safe_countname(const char *name)
{
	if (!name || !*name)
		return "faults";
	for (const char *p = name; *p; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      *p == '-' || *p == '_' || *p == ' '))
			return "faults";
	}
	return name;
}

int flame_write_svg(const struct flame *f, const struct flame_svg_options *opts, FILE *out,
		    struct flame_svg_stats *stats)
{
	struct flame_svg_options o;
	struct flame_svg_stats local_stats;
	struct draw d;
	uint64_t *narrow;
	char subtitle[1024], buf[32], buf2[32];
	const char *title;
	unsigned width, levels, text_y;
	size_t max_frames, max_bytes;
	double drawable;

	flame_svg_options_init(&o);
	if (opts)
		o = *opts;
	width = o.width ? o.width : 1200;
	if (width > SVG_MAX_EDGE)
		width = SVG_MAX_EDGE;
	if (width < 200)
		width = 200;
	memset(&d, 0, sizeof(d));
	d.f = f;
	d.out = out;
	d.st = stats ? stats : &local_stats;
	memset(d.st, 0, sizeof(*d.st));
	d.fh = o.frame_height ? o.frame_height : 16;
	if (d.fh < 4)
		d.fh = 4;
	if (d.fh > 64)
		d.fh = 64;
	d.fs = o.font_size > 0 ? o.font_size : 12;
	d.inverted = o.inverted;
	d.node = NONE;
	d.differential = o.differential;
	for (uint32_t i = 1; d.differential && i < f->nnodes; i++) {
		const struct node *n = &f->nodes[i];
		uint64_t delta = n->total > n->base_total ? n->total - n->base_total : n->base_total - n->total;
		if (delta > d.max_delta)
			d.max_delta = delta;
	}
	d.countname = safe_countname(o.countname);
	title = o.title ? o.title : o.inverted ? "Icicle Graph" : "Flame Graph";
	drawable = width - 2 * XPAD;
	d.scale = f->nodes[0].total ? drawable / (double)f->nodes[0].total : 0;
	d.drawable = drawable;
	d.min_px = o.min_width > 0 ? (o.min_width_percent ? drawable * o.min_width / 100 : o.min_width) : 1;
	if (d.min_px < 1)
		d.min_px = 1;
	max_frames = o.max_frames ? o.max_frames : 12000;
	max_bytes = o.max_bytes ? o.max_bytes : 1900000;

	/* Vertical layout: title (and subtitle) above, details line below. */
	d.ypad1 = (unsigned)(d.fs * 3) + (unsigned)(d.fs * 2); /* title + subtitle line */
	d.ypad2 = (unsigned)(d.fs * 2 + 10);
	levels = (SVG_MAX_EDGE - d.ypad1 - d.ypad2) / d.fh;
	d.max_depth = levels - 1;

	narrow = malloc((size_t)f->nnodes * sizeof(*narrow));
	if (!narrow || sort_children(f, &d.sc) < 0) {
		free(narrow);
		errno = ENOMEM;
		return -1;
	}
	for (;;) {
		size_t bytes, frames = count_frames(f, d.scale, d.min_px, d.max_depth, narrow, &bytes);
		if ((frames <= max_frames && bytes <= max_bytes) || d.min_px > drawable)
			break;
		d.min_px *= 1.125;
	}
	free(narrow);
	d.st->min_width_px = d.min_px;

	/* The depth actually drawn decides the height. */
	{
		unsigned deepest = 0;
		for (uint32_t i = 1; i < f->nnodes; i++) {
			unsigned depth = f->nodes[i].depth;
			if (depth <= d.max_depth + 1 && depth > deepest && f->nodes[f->nodes[i].parent].total * d.scale >= d.min_px)
				deepest = depth; /* a node or its parent's merged frame is drawn at this depth */
		}
		if (deepest > d.max_depth)
			deepest = d.max_depth;
		d.height = (deepest + 1) * d.fh + d.ypad1 + d.ypad2;
	}
	d.st->width = width;
	d.st->height = d.height;

	subtitle[0] = '\0';
	if (o.subtitle)
		snprintf(subtitle, sizeof(subtitle), "%s", o.subtitle);
	if (d.min_px > (o.min_width_percent ? drawable * o.min_width / 100 : o.min_width) * 1.0001 && d.min_px > 1.0001) {
		size_t len = strlen(subtitle);
		snprintf(subtitle + len, sizeof(subtitle) - len, "%sframes narrower than %s px merged (budget: %zu frames, %zu KB)",
			 len ? "; " : "", svg_num(buf, d.min_px, 2), max_frames, max_bytes / 1000);
	}
	if (f->max_depth > d.max_depth) {
		size_t len = strlen(subtitle);
		snprintf(subtitle + len, sizeof(subtitle) - len, "%sstacks deeper than %u frames cut", len ? "; " : "",
			 d.max_depth);
	}

	svg_begin(out, width, d.height);
	write_style_and_script(&d, width);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"url(#background)\"/>\n", width, d.height);
	fprintf(out, "<text id=\"title\" x=\"%s\" y=\"%s\">", svg_num(buf, width / 2.0, 1), svg_num(buf2, d.fs * 2, 1));
	svg_escape(out, title, (size_t)-1);
	fputs("</text>\n", out);
	fprintf(out, "<text id=\"subtitle\" x=\"%s\" y=\"%s\">", svg_num(buf, width / 2.0, 1), svg_num(buf2, d.fs * 3.6, 1));
	svg_escape(out, *subtitle ? subtitle : " ", (size_t)-1);
	fputs("</text>\n", out);
	text_y = d.height - d.ypad2 / 2;
	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n", XPAD, text_y);
	fprintf(out, "<text id=\"unzoom\" class=\"hide\" x=\"%d\" y=\"%s\">Reset Zoom</text>\n", XPAD,
		svg_num(buf, d.fs * 2, 1));
	fprintf(out, "<text id=\"search\" x=\"%u\" y=\"%s\">Search</text>\n", width - XPAD - 100,
		svg_num(buf, d.fs * 2, 1));
	fprintf(out, "<text id=\"ignorecase\" x=\"%u\" y=\"%s\">ic</text>\n", width - XPAD - 16,
		svg_num(buf, d.fs * 2, 1));
	fprintf(out, "<text id=\"matched\" class=\"hide\" x=\"%u\" y=\"%u\" text-anchor=\"end\"> </text>\n",
		width - XPAD, text_y);
	fputs("<g id=\"frames\">\n", out);
	draw_subtree(&d, 0, XPAD);
	fputs("</g>\n", out);
	svg_end(out);
	d.st->hidden_nodes = f->nnodes - (d.st->frames - d.st->merged);
	sorted_children_free(&d.sc);
	return 0;
}
