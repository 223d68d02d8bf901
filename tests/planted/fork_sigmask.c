/* fork_sigmask.c: a fork without exec under eviction pressure, for a look at the forked child's
 * runtime threads from outside (tests/cases/rt_fork_sigmask.sh).
 *
 *   parent: fill N MiB (more than -L, so pages are evicted), fork
 *   child:  verify the inherited pattern (faults and evictions in the child), write
 *           "PARENT_PID CHILD_PID\n" to READY_FILE, then wait (at most 120 s) until GO_FILE exists
 *   parent: wait for the child, verify its own copy, exit 0
 *
 * usage: fork_sigmask N_MiB READY_FILE GO_FILE. Prints a checksum line, the same in every correct run. */
#include "planted.h"
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define SEED 0x5167ULL

static void write_ready(const char *path)
{
	char line[64];
	char tmp[4096];
	int n = snprintf(line, sizeof(line), "%d %d\n", (int)getppid(), (int)getpid());
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die_errno("open(%s)", tmp);
	if (write(fd, line, (size_t)n) != n)
		die_errno("write(%s)", tmp);
	if (close(fd) != 0)
		die_errno("close(%s)", tmp);
	if (rename(tmp, path) != 0)
		die_errno("rename(%s, %s)", tmp, path);
}

static void wait_for_file(const char *path)
{
	struct stat st;
	for (int i = 0; i < 12000; i++) {
		if (stat(path, &st) == 0)
			return;
		usleep(10000);
	}
	die("child: %s did not appear within 120 s", path);
}

int main(int argc, char **argv)
{
	if (argc != 4)
		die("usage: fork_sigmask N_MiB READY_FILE GO_FILE");
	size_t mib = arg_ulong(argc, argv, 1, 32), nwords;
	uint64_t *buf = malloc_filled(mib, SEED, &nwords);
	pid_t pid = fork_flushed();
	if (pid == 0) {
		verify_words(buf, nwords, SEED, "child: inherited pattern");
		write_ready(argv[2]);
		wait_for_file(argv[3]);
		exit(0);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die_errno("waitpid(%d)", (int)pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		die("child failed (status 0x%x)", status);
	uint64_t sum = verify_words(buf, nwords, SEED, "parent: own pattern after the child ran");
	printf("fork_sigmask %zu MiB checksum %016llx\n", mib, (unsigned long long)sum);
	free(buf);
	return 0;
}
