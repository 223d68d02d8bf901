/* fd_closer.c: a program that closes and reuses descriptors it never opened, with its heap larger
 * than local memory.
 *
 * Daemons close every descriptor from 3 up (closefrom, or a loop up to the fd limit), and
 * inetd-style servers dup2 onto fixed numbers. The runtime lives in the program, so it must keep
 * its userfaultfd and trace files through all of that: before the fix, the program's closefrom(3)
 * closed the userfaultfd, every later fault went unserved, and evicted pages read back as zeros.
 *
 *   fill N MiB with pattern A (evicted under a small -L)
 *   closefrom(3); close every descriptor from 3 to the fd limit; close_range(3, ~0U, 0)
 *   dup2 a log file onto 3..7, write a line through each
 *   fill N MiB more with pattern B, verify A and B (faults after the closes are served)
 *
 * usage: fd_closer [N_MiB]   (default 32). Prints a checksum line, the same in every correct run. */
#include "planted.h"
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#define SEED_A 0xfdc105eULL
#define SEED_B 0xfdc105fULL

int main(int argc, char **argv)
{
	size_t mib = arg_ulong(argc, argv, 1, 32), na, nb;
	uint64_t *a = malloc_filled(mib, SEED_A, &na);
	closefrom(3);
	struct rlimit lim;
	long top = getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < 1u << 20 ? (long)lim.rlim_cur : 1 << 20;
	for (long fd = 3; fd < top; fd++)
		close((int)fd);
	if (close_range(3, ~0u, 0) < 0)
		die_errno_at(errno, "close_range(3, ~0U, 0)");
	int log = open("/dev/null", O_WRONLY);
	if (log < 0)
		die_errno_at(errno, "open(/dev/null)");
	for (int fd = 3; fd <= 7; fd++) {
		if (fd != log && dup2(log, fd) != fd)
			die_errno_at(errno, "dup2(%d, %d)", log, fd);
		if (write(fd, "line\n", 5) != 5)
			die_errno_at(errno, "write(%d)", fd);
	}
	uint64_t *b = malloc_filled(mib, SEED_B, &nb);
	uint64_t sum = verify_words(a, na, SEED_A, "A, filled before the closes") ^
		       verify_words(b, nb, SEED_B, "B, filled after the closes");
	printf("fd_closer %zu MiB: checksum %016llx\n", mib, (unsigned long long)sum);
	return 0;
}
