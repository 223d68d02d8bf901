/* recording_arg.h: what every verb that reads a recording does first — resolve its DIR
 * argument (default: the newest faultline-* directory here, said on stderr), open it and show the
 * reader's warnings. */
#ifndef FL_RECORDING_ARG_H
#define FL_RECORDING_ARG_H

#include <stddef.h>

#include "report_progress.h"
#include "trace_reader.h"

/* DIR, or the newest recording in the current directory (written into buf). NULL after
 * printing "VERB: why" when there is none. */
const char *recording_arg_dir(const char *verb, const char *dir, char *buf, size_t len);

/* Prints the reader's warnings on stderr. */
void recording_arg_warnings(const struct fl_recording *rec);

/* Opens DIR for VERB, for a walk of its faults through fault streams: streamed when the recording
 * allows, else held. Starts PROGRESS (a line on a terminal, "reading the recording"), stops it
 * before printing the reader's warnings, which it prints. NULL after "VERB: why" (PROGRESS
 * stopped). */
struct fl_recording *recording_arg_open(const char *verb, const char *dir, struct report_progress *progress);

#endif
