/* sqlite_export.h: a recording as one SQLite database (render stage, sqlite_export.c) — the tables of
 * `faultline export --sqlite` (faultline-export(1): processes, stacks and their frames, maps
 * snapshots, allocations, allocation events and sites, faults, PMU contexts, evictions, timelines,
 * meta). The caller opens the recording, builds its callsite table and installs the file. */
#ifndef FAULTLINE_SQLITE_EXPORT_H
#define FAULTLINE_SQLITE_EXPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "callsite.h"
#include "fault_time.h"
#include "report_progress.h"
#include "trace_reader.h"

struct report_warnings;

/* What the database says of how it was made. */
struct sqlite_export_options {
	bool default_skip;           /* meta.skip: the default skip list, */
	char **skip;                 /* then these (the callsite table's own skip list) */
	size_t nskip;
	enum fl_time_axis time_axis; /* what faults.time_ns holds */
	bool streamed;               /* the recording was opened for streaming (fault_stream.h) */
};

struct sqlite_export;

/* sqlite_export_write's result when a streamed recording's contexts came out of a thread's seq
 * order: the export is to be done again on the held recording (fl_recording_open). */
#define SQLITE_EXPORT_HOLD (-2)

/* Numbers the rows of REC (its processes' stacks, allocations and faults, and the stacks rows a
 * stack needs under another maps snapshot than its first use's). REC, CALLSITES, PROGRESS (the
 * phases and counts of the write), WARNINGS (what the export leaves out) and ERR must outlive the
 * writer. 0 and *OUT, or -1 with a reason in ERR, or ERR left empty when memory ran out. */
int sqlite_export_new(struct sqlite_export **out, struct fl_recording *rec, struct callsite_table *callsites,
		      const struct sqlite_export_options *o, struct report_progress *progress,
		      struct report_warnings *warnings, char *err, size_t errlen);

/* Writes the database to PATH (a new file: journal off, one transaction, indexes after the rows).
 * 0, -1 with a reason in ERR (the failing call and what it was doing, naming PATH), or
 * SQLITE_EXPORT_HOLD. PATH is left as it is on failure: the caller removes it. */
int sqlite_export_write(struct sqlite_export *x, const char *path);

void sqlite_export_free(struct sqlite_export *x);

#endif
