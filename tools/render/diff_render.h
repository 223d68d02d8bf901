/* diff_render.h: what `faultline diff` prints and writes (render stage): the rows as a table, CSV or
 * JSON (diff_output.c), and the differential flame graph (diff_flame.c). Below: analyze/diff.h. */
#ifndef FAULTLINE_DIFF_RENDER_H
#define FAULTLINE_DIFF_RENDER_H

#include <stdbool.h>
#include <stdio.h>

#include "diff.h"
#include "flame_tree.h"

/* What the header names. */
struct diff_labels {
	const char *dir_a, *dir_b;
	const char *by;          /* "callsite", "function", "alloc" */
	const char *kind;        /* "all", "refault", ... */
	size_t top;              /* rows shown; 0: all */
};

enum diff_format { DIFF_FORMAT_TABLE, DIFF_FORMAT_CSV, DIFF_FORMAT_JSON };

/* The CSV's columns. */
#define DIFF_CSV_HEADER "function,file,line,a,b,delta,relative_percent,binary"

/* Prints the diff; 0, or -1 on ENOMEM. Check ferror(out). */
int diff_print(const struct diff *d, const struct diff_labels *l, enum diff_format format, FILE *out);

/* Adds the faults of REC (of KIND; 0: every kind) by their full stacks to FLAME — as the baseline A
 * when BASE, else as B — named by the frames namer of the report's callsite table (as visualize
 * names them; matched by function name, as flame graphs merge frames). 0, or -1 on ENOMEM. */
int diff_flame_add(struct flame *flame, const struct report *r, unsigned kind, bool base);

#endif
