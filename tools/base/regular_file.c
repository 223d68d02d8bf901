/* regular_file.c: see regular_file.h. */
#include "regular_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int regular_file_open(const char *path, struct stat *st, char *err, size_t errlen)
{
	/* O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below; reads of a
	 * regular file ignore the flag) */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		snprintf(err, errlen, "%s: open: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, st) < 0) {
		int saved = errno;
		snprintf(err, errlen, "%s: fstat: %s", path, strerror(errno));
		close(fd);
		errno = saved;
		return -1;
	}
	if (!S_ISREG(st->st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

FILE *regular_file_fopen(const char *path, char *err, size_t errlen)
{
	struct stat st;
	int fd = regular_file_open(path, &st, err, errlen);
	if (fd < 0)
		return NULL;
	FILE *f = fdopen(fd, "re");
	if (!f) {
		int saved = errno;
		snprintf(err, errlen, "%s: fdopen: %s", path, strerror(errno));
		close(fd);
		errno = saved;
	}
	return f;
}
