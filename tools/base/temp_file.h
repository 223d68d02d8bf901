/* temp_file.h: a file written under a temporary name next to its final one and renamed to it when
 * complete (temp_file_begin, temp_file_commit, temp_file_discard), so a reader never sees it half
 * written; and, for the verbs, a file being written under a temporary name is removed when the verb
 * is stopped by SIGINT, SIGTERM or SIGHUP, so an interrupted export or visualize leaves nothing
 * behind (temp_file_guard). */
#ifndef FAULTLINE_TOOLS_TEMP_FILE_H
#define FAULTLINE_TOOLS_TEMP_FILE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

/* One file being written: the caller creates and writes TMP, then commits or discards it. */
struct temp_file {
	char path[PATH_MAX];    /* the final name */
	char tmp[PATH_MAX];     /* the temporary name: PATH and a suffix, in PATH's directory */
	bool guarded;           /* TMP is removed if a stop signal ends the process (temp_file_guard) */
};

/* How temp_file_commit treats an existing PATH. */
enum temp_file_install {
	TEMP_FILE_REPLACE,      /* rename(2) over it */
	TEMP_FILE_NO_REPLACE,   /* leave it and fail with EEXIST (also when it appeared meanwhile) */
};

/* Names T's temporary file PATH followed by SUFFIX (".tmp"; ".tmp.<pid>" when several processes may
 * write PATH), removes a leftover of that name, and guards it when GUARD (a verb: not in a process
 * whose signals are someone else's, such as record). 0, or -1 with "PATH: path too long" in err. */
int temp_file_begin(struct temp_file *t, const char *path, const char *suffix, bool guard, char *err,
		    size_t errlen);

/* 0 when PATH may be replaced by a file written under a temporary name: it does not exist, or it is
 * a regular file (not followed through a symbolic link). -1 with "PATH: not a regular file (...):
 * refused" in err for a device, a FIFO, a directory, a socket or a symbolic link, which a rename
 * over it would replace by a plain file (/dev/null with a database, a link with a copy). */
int temp_file_check_target(const char *path, char *err, size_t errlen);

/* Renames the written temporary file to its final name. 0, or -1 with the failing call and errno in
 * err and errno kept (for callers that word it their own way); the temporary file is then removed.
 * Either way it is no longer guarded. */
int temp_file_commit(struct temp_file *t, enum temp_file_install how, char *err, size_t errlen);

/* Removes the temporary file (a write failed) and stops guarding it; errno is kept. */
void temp_file_discard(struct temp_file *t);

/* PATH (copied) is removed if one of those signals ends the process before temp_file_release. One
 * path at a time; a second call replaces the first. Returns 0, or -1 when PATH is too long (then
 * nothing is guarded). */
int temp_file_guard(const char *path);

/* PATH is no longer removed on a signal (it was renamed, or removed). */
void temp_file_release(void);

/* DIR, a directory the verb has just created for its output, is removed as well if a stop signal
 * ends the process while it is still empty (one such directory; rmdir(2) leaves it when a complete
 * output is already in it). -1 when the path is too long (then it is not guarded). */
int temp_file_guard_dir(const char *dir);

#endif
