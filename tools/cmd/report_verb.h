/* report_verb.h: the report verb (cmd stage, report.c): its options and its run. */
#ifndef FAULTLINE_REPORT_VERB_H
#define FAULTLINE_REPORT_VERB_H

#include <stdio.h>

#include "report.h"

/* The verb, given parsed options; writes the report to OUT. Returns the exit status (0; 1 when the
 * recording cannot be read or the output fails). */
int report_run(const struct report_options *o, FILE *out);

/* The header `report` prints above its table (every "# ..." line) for the recording in DIR, with
 * report's defaults but PID (0: every process) and AXIS, into *text (malloc'd; free it): one more
 * run of report over the recording, streamed where it can be, with a progress line naming
 * PROGRESS_VERB (on a terminal; NULL: none). Returns 0, or 1 after printing why not. */
int report_header_text(const char *dir, uint32_t pid, enum fl_time_axis axis, const char *progress_verb, char **text);

/* Parses report's argv (argv[0] = "report"); returns 0 to run, -1 when --help was printed (exit 0), or
 * CLI_EXIT_USAGE after printing the error. */
int report_parse(int argc, char **argv, struct report_options *o);
/* Frees what report_parse allocated in o (--skip, --tid lists, the --symbol regex). */
void report_options_free(struct report_options *o);

#endif
