/* fds.h: the runtime's file descriptors, out of the program's way (fds.c). */
#ifndef FL_FDS_H
#define FL_FDS_H

#include <stdbool.h>

/* FD moved to a number in the upper half of the program's fd limit (from 4096 at most),
 * close-on-exec, and marked as the runtime's; the new number, or FD itself when it cannot move
 * (still marked). A negative FD is returned as it is, errno kept. */
int fl_fd_keep(int fd);
void fl_fd_forget(int fd);      /* FD is about to be closed by the runtime */
bool fl_fd_is_runtime(int fd);  /* the shim: a close, dup2 or close_range of the program must spare it */
int fl_fd_high(void);           /* one past the highest number ever marked (0: none) */

#endif
