/* recording_arg.h: what every verb that reads a recording does first — resolve its DIR
 * argument (default: the newest faultline-* directory here, said on stderr) and show the
 * reader's warnings. */
#ifndef FL_RECORDING_ARG_H
#define FL_RECORDING_ARG_H

#include <stddef.h>

#include "trace_reader.h"

/* DIR, or the newest recording in the current directory (written into buf). NULL after
 * printing "VERB: why" when there is none. */
const char *recording_arg_dir(const char *verb, const char *dir, char *buf, size_t len);

/* Prints the reader's warnings on stderr. */
void recording_arg_warnings(const struct fl_recording *rec);

#endif
