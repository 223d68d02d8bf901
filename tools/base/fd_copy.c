/* fd_copy.c: copies what one descriptor reads into another (fd_copy.h): record's copy of a
 * binary into the recording's archive, sweep's copy of a piped stdin. */
#include "fd_copy.h"

#include <errno.h>
#include <unistd.h>

int fd_copy(int in, int out, uint64_t *copied, const volatile sig_atomic_t *stop)
{
	char buf[1 << 16];
	uint64_t total = 0;
	int rc = 0;

	for (;;) {
		ssize_t r = read(in, buf, sizeof(buf));
		if (r < 0 && errno == EINTR && !(stop && *stop))
			continue;
		if (r <= 0) {
			rc = r < 0 ? -1 : 0;
			break;
		}
		for (ssize_t done = 0; done < r && rc == 0;) {
			ssize_t w = write(out, buf + done, (size_t)(r - done));
			if (w < 0 && errno == EINTR && !(stop && *stop))
				continue;
			if (w == 0)
				errno = ENOSPC;
			if (w <= 0)
				rc = -1;
			else
				done += w;
		}
		if (rc < 0)
			break;
		total += (uint64_t)r;
	}
	if (copied)
		*copied = total;
	return rc;
}
