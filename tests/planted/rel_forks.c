/* rel_forks.c: many forks (without exec) of a process whose heap is mostly evicted, children verifying
 * the memory they inherited while the parent keeps changing its own.
 *
 * The parent fills N MiB; page p holds words pattern_word(i, seed(p, gen[p])). Before fork k it
 * rewrites a few pages with a new generation (gen[] lives on the heap too). Child k checks:
 *   - every page the parent rewrote just before fork k (the newest data) and SAMPLE pages at random,
 *     against the generations it inherited (pages evicted at the fork included);
 *   - its own writes: it rewrites some pages and a new malloc'd block, and reads them back;
 * then ends with exit(0) (even k) or _exit(0) (odd k). Up to CONCURRENT children run at once; the
 * parent does not wait for one before rewriting pages for the next, so it writes pages a running
 * child still reads (the child must keep seeing the fork-time data). At the end the parent checks
 * every child's status and every page of its own buffer (no child's write may show).
 *
 * With a fifth argument "setenv", the parent first adds variables to its environment (setenv
 * moves the environ array, and the new strings, to the heap, as programs that rewrite their
 * process title do: redis, nginx, postgres), so the environment is on the heap and evicted when it
 * forks; every child then checks getenv() of those variables.
 *
 * usage: rel_forks FORKS [MiB [SAMPLE [CONCURRENT [setenv]]]]   (defaults 200, 16, 64, 4)
 * stdout (identical in every correct run): "rel_forks FORKS forks MiB MiB: checksum HEX". */
#include "planted.h"
#include <sys/wait.h>

#define REWRITE_PER_FORK 8

static uint64_t *buf;
static uint32_t *gen;
static size_t npages;

static uint64_t page_seed(size_t page, uint32_t g)
{
	return 0xf0f0ULL + ((uint64_t)page << 24) + g;
}

static void write_page(size_t page, uint32_t g)
{
	fill_words(buf + page * WORDS_PER_PAGE, WORDS_PER_PAGE, page_seed(page, g));
}

static uint64_t check_page(size_t page, uint32_t g, const char *who, unsigned k)
{
	char what[96];
	snprintf(what, sizeof(what), "%s of fork %u: page %zu (generation %u)", who, k, page, g);
	return verify_words(buf + page * WORDS_PER_PAGE, WORDS_PER_PAGE, page_seed(page, g), what);
}

#define ENV_VARS 64
static int use_setenv;

static void set_environment(void)
{
	for (unsigned i = 0; i < ENV_VARS; i++) {
		char name[32], value[64];
		snprintf(name, sizeof(name), "REL_FORKS_VAR_%u", i);
		snprintf(value, sizeof(value), "value-%u-%0*u", i, 40, i * 7919);
		if (setenv(name, value, 1))
			die_errno("setenv(%s)", name);
	}
}

static void check_environment(unsigned k)
{
	for (unsigned i = 0; i < ENV_VARS; i++) {
		char name[32], value[64];
		snprintf(name, sizeof(name), "REL_FORKS_VAR_%u", i);
		snprintf(value, sizeof(value), "value-%u-%0*u", i, 40, i * 7919);
		const char *got = getenv(name);
		if (!got || strcmp(got, value))
			die("child %u: getenv(%s) = %s, want %s", k, name, got ? got : "NULL", value);
	}
}

static void child(unsigned k, const size_t *rewritten, unsigned sample)
{
	uint64_t rng = 0xc41dULL + k;
	if (use_setenv)
		check_environment(k);
	for (unsigned i = 0; i < REWRITE_PER_FORK; i++)
		check_page(rewritten[i], gen[rewritten[i]], "child", k);
	for (unsigned i = 0; i < sample; i++) {
		size_t page = rng_next(&rng) % npages;
		check_page(page, gen[page], "child", k);
	}
	/* the child's own writes, to inherited pages and to a new block */
	for (unsigned i = 0; i < 16; i++) {
		size_t page = rng_next(&rng) % npages;
		gen[page] = 0x80000000u + k;
		write_page(page, gen[page]);
		check_page(page, gen[page], "child's own write", k);
	}
	size_t words = 256 * 1024 / 8;
	uint64_t *own = malloc(words * 8);
	if (!own)
		die_errno("child %u: malloc", k);
	fill_words(own, words, 0xabcULL + k);
	verify_words(own, words, 0xabcULL + k, "child's own block");
	free(own);
	if (k % 2)
		_exit(0);
	exit(0);
}

static void reap(pid_t pid, unsigned k)
{
	int status;
	if (waitpid(pid, &status, 0) != pid)
		die_errno("waitpid(child %u, pid %d)", k, (int)pid);
	if (WIFSIGNALED(status))
		die("child %u (pid %d) was killed by signal %d (%s)", k, (int)pid, WTERMSIG(status),
		    strsignal(WTERMSIG(status)));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		die("child %u (pid %d) exited with status %d", k, (int)pid, WEXITSTATUS(status));
}

int main(int argc, char **argv)
{
	unsigned forks = (unsigned)arg_ulong(argc, argv, 1, 200);
	size_t mib = arg_ulong(argc, argv, 2, 16);
	unsigned sample = (unsigned)arg_ulong(argc, argv, 3, 64);
	unsigned concurrent = (unsigned)arg_ulong(argc, argv, 4, 4);
	if (argc > 5 && strcmp(argv[5], "setenv"))
		die("fifth argument: expected \"setenv\", got '%s'", argv[5]);
	use_setenv = argc > 5;
	if (use_setenv)
		set_environment(); /* before the buffer is filled: under a small -L it is evicted by then */
	npages = mib * MiB / PAGE_SIZE_BYTES;
	buf = malloc(mib * MiB);
	gen = calloc(npages, sizeof(*gen));
	pid_t *running = calloc(concurrent, sizeof(*running));
	unsigned *running_k = calloc(concurrent, sizeof(*running_k));
	if (!buf || !gen || !running || !running_k)
		die_errno("malloc(%zu MiB)", mib);
	for (size_t p = 0; p < npages; p++)
		write_page(p, 0);

	uint64_t rng = 0x9a7e;
	size_t rewritten[REWRITE_PER_FORK];
	for (unsigned k = 0; k < forks; k++) {
		for (unsigned i = 0; i < REWRITE_PER_FORK; i++) {
			size_t page = rng_next(&rng) % npages;
			rewritten[i] = page;
			write_page(page, ++gen[page]);
		}
		unsigned slot = k % concurrent;
		if (running[slot])
			reap(running[slot], running_k[slot]);
		fflush(NULL);
		pid_t pid = fork();
		if (pid < 0)
			die_errno("fork %u", k);
		if (pid == 0)
			child(k, rewritten, sample);
		running[slot] = pid;
		running_k[slot] = k;
	}
	for (unsigned slot = 0; slot < concurrent; slot++)
		if (running[slot])
			reap(running[slot], running_k[slot]);
	uint64_t sum = 0;
	for (size_t p = 0; p < npages; p++)
		sum ^= check_page(p, gen[p], "parent after every child", forks);
	printf("rel_forks %u forks %zu MiB%s: checksum %016llx\n", forks, mib, use_setenv ? " setenv" : "",
	       (unsigned long long)sum);
	free(running_k);
	free(running);
	free(gen);
	free(buf);
	return 0;
}
