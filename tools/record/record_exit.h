/* record_exit.h: how the traced command ended, kept in the recording (record_exit.c). */
#ifndef FAULTLINE_TOOLS_RECORD_EXIT_H
#define FAULTLINE_TOOLS_RECORD_EXIT_H

/* Writes DIR/exit for the command's wait STATUS: "exit N" or "signal N" (FL_FILE_NAME_EXIT), then
 * "running PID" for each traced process that still runs.
 * Returns 0, or -1 after printing why (the recording is complete without it). */
int record_exit_write(const char *dir, int status);

#endif
