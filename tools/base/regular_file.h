/* regular_file.h: opening a file of a recording to read it — never blocking on a FIFO planted in
 * its place, and refusing anything that is not a regular file (a FIFO, a device, a directory). */
#ifndef FAULTLINE_TOOLS_REGULAR_FILE_H
#define FAULTLINE_TOOLS_REGULAR_FILE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>

/* Opens PATH read-only (O_CLOEXEC) and fills ST. Returns the descriptor, or -1 with errno set and
 * err saying why ("PATH: open: ...", "PATH: fstat: ...", "PATH: not a regular file"); errno is
 * ENOENT when PATH does not exist, for callers to whom a missing file is no error. */
int regular_file_open(const char *path, struct stat *st, char *err, size_t errlen);

/* The same as a stdio stream ("re"): NULL with errno and err set as above. */
FILE *regular_file_fopen(const char *path, char *err, size_t errlen);

#endif
