/* evictions.h: a process's eviction events (the `evictions` file, inc/faultline/trace.h), read and
 * validated on demand by the verbs that show them (report's summary, export).
 *
 * Kept apart from trace_reader.c: a recording opens without them (older recordings have no such
 * file), and only the verbs that show evictions pay for reading them. The file and its header are
 * read by the one reader of side files (side_file.h: a longer record is read by its known prefix, a
 * cut file keeps its complete records and says so in `warning`); this reader checks the records:
 * decision values and flag bits, addresses inside the region and page-aligned. */
#ifndef FAULTLINE_TOOLS_EVICTIONS_H
#define FAULTLINE_TOOLS_EVICTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "side_file.h"
#include "trace_reader.h"

/* The order fl_evictions_load leaves the records in. */
enum fl_evictions_order {
	FL_EVICTIONS_BY_TIME,      /* time order (ties keep file order: the order evicted) */
	FL_EVICTIONS_AS_WRITTEN,   /* file order (the writers' chunks interleave): for counting, no sort */
};

struct fl_evictions {
	const struct fl_evict_record *recs; /* in the order asked for; read-only */
	size_t n;
	bool present;                 /* the process has an evictions file */
	char warning[FL_SIDE_WARNING_MAX]; /* "" or one line: the file was cut */
	struct fl_side_file file;     /* what recs point into, unless sorted */
	struct fl_evict_record *sorted; /* recs when put into time order here (malloc'd), else NULL */
};

/* Reads PROC's evictions file into *out (absent: 0 with present false), its records in ORDER
 * (where they lie in the mapped file when they need no sort). Returns 0, or -1 with one line
 * "PATH: offset N: what is wrong" in err (*out is then empty). */
int fl_evictions_load(const struct fl_process *proc, enum fl_evictions_order order, struct fl_evictions *out,
		      char *err, size_t errlen);

void fl_evictions_free(struct fl_evictions *ev);

/* "clock-trial", "clock-soft", "soft-cap", "fifo", "clock-direct", or "?" outside enum fl_evict_decision. */
const char *fl_evict_decision_name(unsigned decision);

/* Whether an eviction took the page to the far store (every decision but CLOCK_TRIAL). */
static inline bool fl_evict_to_far(unsigned decision)
{
	return decision != FL_EVICT_CLOCK_TRIAL;
}

#endif
