/* flame_tree.h: a flame graph's model (analyze stage, flame_tree.c) — a tree of call stacks weighted
 * by counts. Its outputs, folded stacks and the SVG, are render/flamegraph.h's.
 *
 * Stacks are added root first; each distinct path of frame names is one node, so a stack shares
 * its prefix with every other stack that starts the same way. A node holds its total (faults in it
 * and below) and self (faults whose stack ends in it). Names are interned; children are found
 * through one hash table keyed by (parent, name). Each node also keeps the source location
 * (file:line) that brought it the most counts, for its tooltip.
 *
 * The structures below are declared for the writers, which read the tree (never change it); the
 * tree is built only through flame_add and flame_add_base. */
#ifndef FAULTLINE_TOOLS_FLAME_TREE_H
#define FAULTLINE_TOOLS_FLAME_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "string_set.h"

/* What kind of code a frame is: chooses its colour family. */
enum flame_class {
	FLAME_CLASS_CODE = 0,   /* the traced program's own code: green-teal (flamegraph.pl's "mem") */
	FLAME_CLASS_LIBRARY,    /* a shared library (libc, libstdc++, jemalloc, ...): blue-violet */
	FLAME_CLASS_PSEUDO,     /* not a function: "[no stack]", "[unknown]", merged frames: grey */
};

/* One frame of a stack as added. */
struct flame_frame {
	const char *name;       /* function name; copied. NULL or "" is taken as "[unknown]" */
	const char *file;       /* source file, or NULL; copied */
	unsigned line;          /* 0 when unknown */
	enum flame_class cls;   /* of the first frame added with this name */
};

#define FLAME_NONE UINT32_MAX   /* no node, no string */

/* Interned strings: an array plus an open-addressing hash of their indexes. */
struct flame_strtab {
	struct string_set set;  /* the strings, by index */
	uint32_t *lens;         /* strlen of each */
	uint8_t *cls;           /* enum flame_class of each string (used for names only) */
	size_t cap;             /* room in lens and cls */
};

struct flame_node {
	uint32_t parent, name;      /* FLAME_NONE for the root */
	uint32_t first_child, next_sibling;
	uint32_t loc_file;          /* best location: file id (in locs), or FLAME_NONE */
	uint32_t loc_line;          /* and line (0: unknown) */
	uint32_t depth;             /* root = 0 */
	uint64_t total, self;
	uint64_t loc_count;         /* counts the best location brought */
	uint64_t base_total, base_self; /* a differential graph's baseline (flame_add_base) */
};

/* (node, file, line) → count, for choosing each node's best location. */
struct flame_loc {
	uint32_t node, file, line;  /* node FLAME_NONE: empty */
	uint64_t count;
};

struct flame {
	struct flame_strtab names, locs; /* locs: source file names */
	struct flame_node *nodes;   /* node 0 is the root "all" */
	uint32_t nnodes, cap;
	uint32_t *child_slots;      /* node index; FLAME_NONE = empty */
	uint32_t nchild_slots;      /* power of two */
	struct flame_loc *loc_slots;
	uint32_t nloc_slots, nlocs;
	size_t max_depth;
};

/* A new empty tree (root "all"), or NULL with errno ENOMEM. */
struct flame *flame_new(void);

/* Releases the tree (NULL is fine). */
void flame_free(struct flame *flame);

/* Adds COUNT to the stack FRAMES[0] (root) .. FRAMES[N-1] (leaf). N >= 1 (EINVAL otherwise).
 * Returns 0, or -1 with errno (ENOMEM, EINVAL; EOVERFLOW when a count would pass 2^63). */
int flame_add(struct flame *flame, const struct flame_frame *frames, size_t n, uint64_t count);

/* A differential graph (difffolded.pl's "stack A B"): adds COUNT to the baseline A of the stack,
 * which flame_add counts as B. The baseline never sizes a frame (widths are B's, as in
 * flamegraph.pl); with flame_svg_options.differential it colours them. Errors as flame_add. */
int flame_add_base(struct flame *flame, const struct flame_frame *frames, size_t n, uint64_t count);

/* Sum of every count added. */
uint64_t flame_total(const struct flame *flame);

/* Nodes in the tree, the root included; deepest stack added. */
size_t flame_node_count(const struct flame *flame);
size_t flame_depth(const struct flame *flame);

/* A new tree holding the N stacks of F with the largest counts (ties: in tree order) and, when any
 * are left, one stack of the single frame OTHER_NAME with the sum of the rest: the total stays the
 * same. NULL with errno on ENOMEM. */
struct flame *flame_top_stacks(const struct flame *flame, size_t n, const char *other_name);

/* A new tree of F's stacks read from the leaf (flamegraph.pl --reverse: "who calls the faulting
 * functions"), or NULL with errno on ENOMEM. */
struct flame *flame_reversed(const struct flame *flame);

/* Every node's children sorted by name: kids[first[i] .. first[i+1]) for node i. */
struct flame_sorted_children {
	uint32_t *first;            /* nnodes + 1 */
	uint32_t *kids;             /* nnodes - 1 */
};

/* Fills SC for F: 0, or -1 when memory runs out (then SC holds nothing). */
int flame_sort_children(const struct flame *f, struct flame_sorted_children *sc);
void flame_sorted_children_free(struct flame_sorted_children *sc);

/* A hash of a frame name (FNV-1a, then mixed): the same for the same name in every run. */
uint64_t flame_name_hash(const char *name);

#endif
