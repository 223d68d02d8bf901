/* fd_copy.h: copying what one descriptor reads, to its end, into another (fd_copy.c). */
#ifndef FAULTLINE_TOOLS_FD_COPY_H
#define FAULTLINE_TOOLS_FD_COPY_H

#include <signal.h>
#include <stdint.h>

/* Reads IN to its end and writes everything into OUT; *COPIED (when not NULL) gets the bytes
 * written. An interrupted read or write is retried, unless STOP (when not NULL) is set by then:
 * a caller's signal handler can end a copy that waits on a pipe. 0, or -1 with errno (ENOSPC for a
 * write that wrote nothing). */
int fd_copy(int in, int out, uint64_t *copied, const volatile sig_atomic_t *stop);

#endif
