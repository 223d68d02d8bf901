/* record_binaries.h: what `record` writes about the binaries after the run (record_binaries.c). */
#ifndef FAULTLINE_TOOLS_RECORD_BINARIES_H
#define FAULTLINE_TOOLS_RECORD_BINARIES_H

#include <stdbool.h>
#include <time.h>

/* DIR/binaries, the identity of every mapped file, and with archive their copies in
 * DIR/.build-id. started: when the run began (CLOCK_REALTIME). Returns 0, or -1 after printing
 * why. */
int record_binaries(const char *dir, bool archive, const struct timespec *started, bool quiet);

#endif
