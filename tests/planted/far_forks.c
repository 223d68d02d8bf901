/* far_forks.c: many forks, each after the parent rewrote its memory — every fork freezes the far
 * data written so far, so the parent goes through more generations of far copies than a process
 * keeps (runtime/far_store.c compacts them). Each child must see exactly the parent's memory of its
 * fork, evicted pages included; the parent must never see a child's writes.
 *
 *   parent: fill N MiB with pattern 0; for round r = 1 .. R: write pattern r over everything, fork;
 *           the child verifies pattern r, writes pattern 1000 + r over the first half, verifies
 *           that, exits 0; the parent waits, then verifies pattern r is intact
 *   at the end the parent verifies the last pattern once more
 *
 * usage: far_forks [N_MiB [ROUNDS]]   (default 4 MiB, 40 rounds). Prints one checksum line. */
#include "planted.h"
#include <sys/wait.h>

int main(int argc, char **argv)
{
	size_t mib = arg_ulong(argc, argv, 1, 4), rounds = arg_ulong(argc, argv, 2, 40);
	size_t nwords = mib * MiB / sizeof(uint64_t);
	uint64_t *buf = malloc(mib * MiB), sum = 0;
	if (!buf)
		die_errno("malloc(%zu MiB)", mib);
	fill_words(buf, nwords, 0);
	for (size_t r = 1; r <= rounds; r++) {
		fill_words(buf, nwords, r);
		fflush(stdout);
		pid_t pid = fork();
		if (pid < 0)
			die_errno("fork (round %zu)", r);
		if (pid == 0) {
			verify_words(buf, nwords, r, "child: the parent's memory at the fork");
			fill_words(buf, nwords / 2, 1000 + r);
			verify_words(buf, nwords / 2, 1000 + r, "child: its own writes");
			_exit(0);
		}
		int status;
		if (waitpid(pid, &status, 0) != pid)
			die_errno("waitpid");
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			die("round %zu: the child failed (status %#x)", r, status);
		sum ^= verify_words(buf, nwords, r, "parent: after the child's writes");
	}
	sum ^= verify_words(buf, nwords, rounds, "parent: at the end");
	printf("far_forks %zu MiB %zu rounds checksum %016llx\n", mib, rounds, (unsigned long long)sum);
	free(buf);
	return 0;
}
