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

/* The calling thread takes a descriptor table of its own (unshare CLONE_FILES) holding only KEEP
 * (-1: nothing) of the process's: what it opens from then on never takes a number the program
 * could have had, and only it sees (the table goes with the thread). fl_fd_keep and fl_fd_forget
 * do nothing on it. 0, or -1 with errno when the unshare failed (the thread shares the process's
 * table still). */
int fl_fd_table_private(int keep);

#endif
