/* bench_uffd.h: opening a userfaultfd for the benchmark programs that serve their own faults
 * (uffd_floor, thrash_floor, evict_prims). Header-only, like bench.h. */
#ifndef FAULTLINE_BENCH_UFFD_H
#define FAULTLINE_BENCH_UFFD_H

#include "bench.h"

#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef USERFAULTFD_IOC_NEW
#define USERFAULTFD_IOC_NEW _IO(0xAA, 0x00)
#endif

/* A userfaultfd (O_CLOEXEC and FLAGS, e.g. O_NONBLOCK) from /dev/userfaultfd, else the system
 * call, with the API handshake for FEATURES done. Dies when no userfaultfd can be had; returns -1
 * with errno (EINVAL: a feature this kernel lacks) when the handshake fails. */
__attribute__((unused))
static int bench_uffd_open(int flags, uint64_t features)
{
	int dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC), fd = -1;
	if (dev >= 0) {
		fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | flags);
		close(dev);
	}
	if (fd < 0)
		fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | flags);
	if (fd < 0)
		bench_die_errno("userfaultfd (/dev/userfaultfd and the system call)");
	struct uffdio_api api = { .api = UFFD_API, .features = features };
	if (ioctl(fd, UFFDIO_API, &api) < 0) {
		int err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

#endif
