/* temp_file.h: a file being written under a temporary name is removed when the verb is stopped
 * by SIGINT, SIGTERM or SIGHUP, so an interrupted export or visualize leaves nothing behind. */
#ifndef FAULTLINE_TOOLS_TEMP_FILE_H
#define FAULTLINE_TOOLS_TEMP_FILE_H

/* PATH (copied) is removed if one of those signals ends the process before temp_file_release. One
 * path at a time; a second call replaces the first. Returns 0, or -1 when PATH is too long (then
 * nothing is guarded). */
int temp_file_guard(const char *path);

/* PATH is no longer removed on a signal (it was renamed, or removed). */
void temp_file_release(void);

#endif
