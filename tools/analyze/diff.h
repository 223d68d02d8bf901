/* diff.h: `faultline diff A B` — the faults of two recordings side by side per source location
 * (callsite, function or allocation site), with absolute and relative deltas.
 *
 * Each recording is aggregated by report_build (report.h) with the same options, so a row's A and B
 * are exactly what `faultline report --by ... --kind ...` counts for that location in each. Rows are
 * matched by content — function, file and line — never by address or binary path, so a diff works
 * across -L values, eviction policies, rebuilds and program versions (a function that moved keeps
 * its name but not its line: it is then two rows, one gone and one new). Report rows of one recording
 * that differ only by binary are summed. Sorted by |B - A|, largest first (ties: larger B, then by
 * function, file, line). */
#ifndef FAULTLINE_TOOLS_DIFF_H
#define FAULTLINE_TOOLS_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "report.h"

struct diff_row {
	const char *function;   /* never NULL; strings belong to the reports' callsite tables */
	const char *file;       /* NULL when unknown */
	unsigned line;          /* 0 when unknown */
	const char *binary;     /* B's when B has the row, else A's; NULL when unknown */
	uint64_t a, b;          /* faults in A and in B */
};

struct diff {
	struct diff_row *rows;  /* sorted as above */
	size_t nrows;
	uint64_t total_a, total_b;  /* faults selected in each (every row, <no stack> included) */
};

/* Matches the rows of two built reports (the same --by and --kind). 0, or -1 (ENOMEM). The diff
 * points into both reports: free it before them. */
int diff_build(const struct report *a, const struct report *b, struct diff *out);

void diff_free(struct diff *d);

/* B - A. */
static inline int64_t diff_delta(const struct diff_row *row)
{
	return (int64_t)row->b - (int64_t)row->a;
}

/* (B - A) / A in percent; false when A is 0 (a new row). */
static inline int diff_relative_percent(const struct diff_row *row, double *percent)
{
	if (row->a == 0)
		return 0;
	*percent = 100.0 * (double)diff_delta(row) / (double)row->a;
	return 1;
}

#endif
