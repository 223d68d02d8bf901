/* diff.c: matching two reports' rows by function, file and line, or by function and binary name
 * where there is no file (see diff.h). */
#include "diff.h"

#include <stdlib.h>
#include <string.h>

/* One report row, keyed. */
struct keyed {
	const char *function, *file, *binary;
	unsigned line;
	uint64_t count;
	int side;               /* 0: A, 1: B */
};

static int cmp_text(const char *x, const char *y)
{
	if (!x || !y)
		return !x && !y ? 0 : !x ? -1 : 1;
	return strcmp(x, y);
}

/* The last component of a binary's path ("" for none). */
static const char *base_of(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	return slash ? slash + 1 : path ? path : "";
}

/* Function, then file and line; a row without a file (no debug information) is a function of one
 * binary, compared by the binary's name: xmalloc of make and xmalloc of cc1 are two rows. */
static int cmp_key(const char *fx, const char *filex, unsigned lx, const char *bx, const char *fy, const char *filey,
		   unsigned ly, const char *by)
{
	int c = strcmp(fx, fy);
	if (c == 0)
		c = cmp_text(filex, filey);
	if (c == 0)
		c = lx < ly ? -1 : lx > ly;
	if (c == 0 && !filex)
		c = strcmp(base_of(bx), base_of(by));
	return c;
}

static int by_key(const void *x, const void *y)
{
	const struct keyed *a = x, *b = y;
	int c = cmp_key(a->function, a->file, a->line, a->binary, b->function, b->file, b->line, b->binary);
	return c ? c : a->side - b->side;
}

static uint64_t magnitude(const struct diff_row *r)
{
	return r->b > r->a ? r->b - r->a : r->a - r->b;
}

static int by_delta(const void *x, const void *y)
{
	const struct diff_row *a = x, *b = y;

	if (magnitude(a) != magnitude(b))
		return magnitude(a) > magnitude(b) ? -1 : 1;
	if (a->b != b->b)
		return a->b > b->b ? -1 : 1;
	return cmp_key(a->function, a->file, a->line, a->binary, b->function, b->file, b->line, b->binary);
}

/* Appends the rows of R (side SIDE) to K. */
static size_t collect(const struct report *r, int side, struct keyed *k)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nrows; i++) {
		const struct report_row *row = &r->rows[i];
		const struct callsite_loc *loc = callsite_loc(r->callsites, row->key_loc);
		if (!loc || row->faults == 0)
			continue;
		k[n++] = (struct keyed){ loc->function, loc->file, loc->binary, loc->line, row->faults, side };
	}
	return n;
}

int diff_build(const struct report *a, const struct report *b, struct diff *out)
{
	size_t total = a->nrows + b->nrows, n;
	struct keyed *k = malloc((total ? total : 1) * sizeof(*k));

	memset(out, 0, sizeof(*out));
	out->rows = malloc((total ? total : 1) * sizeof(*out->rows));
	if (!k || !out->rows) {
		free(k);
		diff_free(out);
		return -1;
	}
	out->total_a = a->selected;
	out->total_b = b->selected;
	n = collect(a, 0, k);
	n += collect(b, 1, k + n);
	qsort(k, n, sizeof(*k), by_key);
	for (size_t i = 0; i < n; i++) {
		struct diff_row *row = out->nrows ? &out->rows[out->nrows - 1] : NULL;
		if (!row || cmp_key(row->function, row->file, row->line, row->binary, k[i].function, k[i].file, k[i].line,
				    k[i].binary) != 0) {
			row = &out->rows[out->nrows++];
			*row = (struct diff_row){ k[i].function, k[i].file, k[i].line, k[i].binary, 0, 0 };
		}
		if (k[i].side == 0) {
			row->a += k[i].count;
		} else {
			if (row->b == 0)
				row->binary = k[i].binary; /* B names the binary when it has the row */
			row->b += k[i].count;
		}
	}
	free(k);
	qsort(out->rows, out->nrows, sizeof(*out->rows), by_delta);
	return 0;
}

void diff_free(struct diff *d)
{
	free(d->rows);
	memset(d, 0, sizeof(*d));
}
