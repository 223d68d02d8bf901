/* fork_verify.c: fork without exec must give the child the parent's memory exactly as it was at the
 * fork (pages evicted at that moment included), and the two must not see each other's later writes.
 *
 *   parent: fill N MiB with pattern A, fork
 *   child:  verify A everywhere, tell the parent, wait until the parent has written pattern B over
 *           the second half of its copy, verify A is still everywhere in the child's copy, then write
 *           pattern C everywhere, fork a grandchild
 *   grandchild: verify C, write pattern G, verify G, exit 0
 *   child:  check the grandchild's exit status, verify C is intact, exit 0
 *   parent: check the child's exit status, verify A (first half) and B (second half)
 *
 * usage: fork_verify [N_MiB]   (default 128). Prints a checksum line, the same in every correct run. */
#include "planted.h"
#include <sys/wait.h>

#define SEED_A 0xa11aULL
#define SEED_B 0xb22bULL
#define SEED_C 0xc33cULL
#define SEED_G 0x9449ULL

static void write_byte(int fd, char c)
{
	if (write(fd, &c, 1) != 1)
		die_errno("write to pipe");
}

static void read_byte(int fd, char want)
{
	char c;
	ssize_t n;
	do
		n = read(fd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		die("reading the pipe: got %zd (%s), want '%c'", n, n < 0 ? strerror(errno) : "EOF", want);
	if (c != want)
		die("reading the pipe: got '%c', want '%c'", c, want);
}

static void wait_ok(pid_t pid, const char *who)
{
	int status;
	if (waitpid(pid, &status, 0) != pid)
		die_errno("waitpid(%s %d)", who, (int)pid);
	if (WIFSIGNALED(status))
		die("%s %d was killed by signal %d (%s)", who, (int)pid, WTERMSIG(status),
		    strsignal(WTERMSIG(status)));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		die("%s %d exited with status %d", who, (int)pid, WEXITSTATUS(status));
}

static void grandchild(uint64_t *buf, size_t nwords)
{
	verify_words(buf, nwords, SEED_C, "grandchild: child's pattern C inherited at the fork");
	fill_words(buf, nwords, SEED_G);
	verify_words(buf, nwords, SEED_G, "grandchild: own pattern G");
	exit(0);
}

static void child(uint64_t *buf, size_t nwords, int from_parent, int to_parent)
{
	verify_words(buf, nwords, SEED_A, "child: pattern A inherited at the fork");
	write_byte(to_parent, 'v');
	read_byte(from_parent, 'w');
	verify_words(buf, nwords, SEED_A, "child: pattern A after the parent wrote B over its own copy");
	fill_words(buf, nwords, SEED_C);
	verify_words(buf, nwords, SEED_C, "child: own pattern C");
	pid_t pid = fork();
	if (pid < 0)
		die_errno("child: fork");
	if (pid == 0)
		grandchild(buf, nwords);
	wait_ok(pid, "grandchild");
	verify_words(buf, nwords, SEED_C, "child: pattern C after the grandchild wrote G");
	exit(0);
}

int main(int argc, char **argv)
{
	size_t mib = arg_ulong(argc, argv, 1, 128);
	size_t nwords = mib * MiB / sizeof(uint64_t), half = nwords / 2;
	uint64_t *buf = malloc(mib * MiB);
	if (!buf)
		die_errno("malloc(%zu MiB)", mib);
	fill_words(buf, nwords, SEED_A);

	int to_child[2], to_parent[2];
	if (pipe(to_child) || pipe(to_parent))
		die_errno("pipe");
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		die_errno("fork");
	if (pid == 0) {
		close(to_child[1]);
		close(to_parent[0]);
		child(buf, nwords, to_child[0], to_parent[1]);
	}
	close(to_child[0]);
	close(to_parent[1]);
	read_byte(to_parent[0], 'v');
	fill_words(buf + half, nwords - half, SEED_B);
	write_byte(to_child[1], 'w');
	wait_ok(pid, "child");
	uint64_t sum = verify_words(buf, half, SEED_A, "parent: pattern A (first half) after the child ran");
	sum ^= verify_words(buf + half, nwords - half, SEED_B, "parent: pattern B (second half) after the child ran");
	printf("fork_verify %zu MiB checksum %016llx\n", mib, (unsigned long long)sum);
	free(buf);
	return 0;
}
