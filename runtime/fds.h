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
int fl_fd_floor(void);          /* the lowest number a kept fd is moved to */
int fl_fd_high(void);           /* one past the highest number ever marked (0: none) */

/* While the runtime starts: /dev/null on each of descriptors 0, 1 and 2 the program has closed
 * (HELD[i] 1 where it did), so that no descriptor a library opens meanwhile for the runtime (the
 * pipes libunwind opens when it sets itself up) takes the number of the program's standard input
 * or output; then closed again. */
void fl_fd_hold_standard(int held[3]);
void fl_fd_release_standard(const int held[3]);

#endif
