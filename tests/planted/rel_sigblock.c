/* rel_sigblock.c: threads that block every signal in every way a program can, then fault on their
 * own heap (first touch, and refaults under a small -L). The runtime takes a fault's stack on a
 * signal sent to the faulting thread; whatever the thread's mask, the program must run to completion
 * and each fault must have its stack or be marked as having none.
 *
 * Threads (each prints "tid NAME TID" on stderr, so a test can find its faults in `faultline dump`):
 *   pthread_sigmask  pthread_sigmask(SIG_BLOCK, every signal)
 *   sigprocmask      sigprocmask(SIG_SETMASK, every signal) (same thing in a threaded program)
 *   inherited        created while main blocks every signal: starts blocked, never changes its mask
 *   attr             created with pthread_attr_setsigmask_np(every signal)
 *   raw_syscall      the rt_sigprocmask system call itself (as Go programs and some runtimes do):
 *                    no libc wrapper the shim could interpose
 * and main blocks everything too while they run. Each writes one word per page of its own
 * page-aligned buffer of PAGES pages, PASSES times, checking the previous pass, and checks at the end
 * that SIGUSR1 and SIGTERM are still blocked (the program's request holds for every signal other
 * than what the runtime may keep for itself).
 *
 * usage: rel_sigblock [PAGES [PASSES [ONLY]]]   (defaults 2048, 3; ONLY = run just the thread of
 * that name). stdout (identical in every correct run): one checksum line per thread, then "ok". */
#include "planted.h"
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/syscall.h>

enum how { BY_PTHREAD, BY_SIGPROCMASK, BY_INHERIT, BY_ATTR, BY_RAW, NHOW };
static const char *how_name[NHOW] = { "pthread_sigmask", "sigprocmask", "inherited", "attr", "raw_syscall" };

struct blocker {
	enum how how;
	pthread_t thread;
	size_t pages;
	unsigned passes;
	uint64_t checksum;
};

__attribute__((noinline)) static uint64_t blocked_touch(uint64_t *p, size_t pages, unsigned pass)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < pages; i++) {
		uint64_t *w = p + i * WORDS_PER_PAGE;
		if (pass && *w != pattern_word(i, pass - 1))
			die("page %zu holds %#llx after pass %u", i, (unsigned long long)*w, pass - 1);
		*w = pattern_word(i, pass);
		sum = (sum ^ *w) * 0x100000001B3ULL;
	}
	return sum;
}

static void check_blocked(const char *who)
{
	sigset_t cur;
	int err = pthread_sigmask(SIG_BLOCK, NULL, &cur);
	if (err)
		die_errno_at(err, "%s: pthread_sigmask(query)", who);
	if (sigismember(&cur, SIGUSR1) != 1 || sigismember(&cur, SIGTERM) != 1 || sigismember(&cur, SIGINT) != 1)
		die("%s: SIGUSR1, SIGTERM or SIGINT is not blocked although every signal was", who);
}

static void block_all(enum how how)
{
	sigset_t all;
	sigfillset(&all);
	int err = 0;
	switch (how) {
	case BY_PTHREAD:
		err = pthread_sigmask(SIG_BLOCK, &all, NULL);
		break;
	case BY_SIGPROCMASK:
		if (sigprocmask(SIG_SETMASK, &all, NULL))
			err = errno;
		break;
	case BY_RAW: {
		uint64_t mask = ~0ULL; /* every signal the kernel knows, real-time ones included */
		if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, &mask, NULL, sizeof(mask)))
			err = errno;
		break;
	}
	default:
		break; /* already blocked at creation */
	}
	if (err)
		die_errno_at(err, "%s: blocking every signal", how_name[how]);
}

static void *blocker_main(void *arg)
{
	struct blocker *b = arg;
	block_all(b->how);
	check_blocked(how_name[b->how]);
	fprintf(stderr, "tid %s %d\n", how_name[b->how], (int)gettid());
	uint64_t *buf = aligned_alloc(PAGE_SIZE_BYTES, b->pages * PAGE_SIZE_BYTES);
	if (!buf)
		die_errno("%s: aligned_alloc(%zu pages)", how_name[b->how], b->pages);
	for (unsigned pass = 0; pass < b->passes; pass++)
		b->checksum ^= blocked_touch(buf, b->pages, pass);
	blocked_touch(buf, b->pages, b->passes); /* checks the last pass */
	free(buf);
	check_blocked(how_name[b->how]);
	return NULL;
}

int main(int argc, char **argv)
{
	size_t pages = arg_ulong(argc, argv, 1, 2048);
	unsigned passes = (unsigned)arg_ulong(argc, argv, 2, 3);
	const char *only = argc > 3 ? argv[3] : NULL;
	struct blocker b[NHOW];
	sigset_t all, old;
	sigfillset(&all);

	for (int h = 0; h < NHOW; h++) {
		b[h] = (struct blocker){ .how = (enum how)h, .pages = pages, .passes = passes };
		if (only && strcmp(only, how_name[h]))
			continue;
		pthread_attr_t attr;
		pthread_attr_init(&attr);
		int err = 0;
		if (h == BY_ATTR)
			err = pthread_attr_setsigmask_np(&attr, &all);
		if (h == BY_INHERIT)
			err = pthread_sigmask(SIG_SETMASK, &all, &old);
		if (err)
			die_errno_at(err, "%s: setting the mask", how_name[h]);
		err = pthread_create(&b[h].thread, &attr, blocker_main, &b[h]);
		if (err)
			die_errno_at(err, "pthread_create(%s)", how_name[h]);
		if (h == BY_INHERIT && (err = pthread_sigmask(SIG_SETMASK, &old, NULL)))
			die_errno_at(err, "restoring main's mask");
		pthread_attr_destroy(&attr);
	}
	/* main blocks everything too while the others run, and faults itself */
	block_all(BY_PTHREAD);
	fprintf(stderr, "tid main %d\n", (int)gettid());
	uint64_t *mine = aligned_alloc(PAGE_SIZE_BYTES, pages * PAGE_SIZE_BYTES);
	if (!mine)
		die_errno("main: aligned_alloc");
	uint64_t main_sum = 0;
	for (unsigned pass = 0; pass < passes; pass++)
		main_sum ^= blocked_touch(mine, pages, pass);
	free(mine);
	for (int h = 0; h < NHOW; h++) {
		if (only && strcmp(only, how_name[h]))
			continue;
		int err = pthread_join(b[h].thread, NULL);
		if (err)
			die_errno_at(err, "pthread_join(%s)", how_name[h]);
		printf("%s %zu pages x %u: checksum %016llx\n", how_name[h], pages, passes,
		       (unsigned long long)b[h].checksum);
	}
	printf("main %zu pages x %u: checksum %016llx\nok\n", pages, passes, (unsigned long long)main_sum);
	return 0;
}
