/* st_sigblock.c: threads that block every signal, then fault. The runtime takes each fault's stack
 * on a signal sent to the faulting thread; the shim keeps that one signal out of the masks the
 * program sets, so these threads must still complete and their faults still get stacks.
 *
 * usage: st_sigblock [PAGES [PASSES]]   (defaults 4096, 2)
 *   blocker_self:      calls pthread_sigmask(SIG_BLOCK, all signals), then faults;
 *   blocker_inherited: created while main has blocked every signal with sigprocmask (so it starts
 *                      with everything blocked), never changes its mask, faults.
 * Each writes one word per page of its own page-aligned buffer of PAGES pages, PASSES times
 * (under -L small, each pass refaults every page), verifying the previous pass, in blocked_touch().
 * Each checks that its mask really blocks SIGUSR1 and SIGTERM (the program's request is honoured
 * for every other signal). Prints on stdout (st_common.h) "tid blocker_self TID", "tid
 * blocker_inherited TID", a range per buffer, then "sigblock ok checksum HEX". */
#include "planted.h"
#include "st_common.h"
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>

struct blocker {
	const char *name;
	size_t pages;
	unsigned passes;
	bool block_self;
	uint64_t checksum;
};

ST_FRAME uint64_t blocked_touch(uint64_t *p, size_t pages, unsigned pass)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < pages; i++) {
		if (pass && p[i * WORDS_PER_PAGE] != pattern_word(i, pass - 1))
			die("page %zu holds %#llx after pass %u", i, (unsigned long long)p[i * WORDS_PER_PAGE], pass - 1);
		p[i * WORDS_PER_PAGE] = pattern_word(i, pass);
		sum += p[i * WORDS_PER_PAGE];
	}
	return sum;
}

static void check_mask(const char *who)
{
	sigset_t cur;
	int err = pthread_sigmask(SIG_BLOCK, NULL, &cur);
	if (err)
		die_errno_at(err, "%s: pthread_sigmask(query)", who);
	if (sigismember(&cur, SIGUSR1) != 1 || sigismember(&cur, SIGTERM) != 1)
		die("%s: SIGUSR1 or SIGTERM is not blocked although every signal was", who);
}

static void *blocker_main(void *arg)
{
	struct blocker *b = arg;
	if (b->block_self) {
		sigset_t all;
		sigfillset(&all);
		int err = pthread_sigmask(SIG_BLOCK, &all, NULL);
		if (err)
			die_errno_at(err, "%s: pthread_sigmask(SIG_BLOCK, all)", b->name);
	}
	check_mask(b->name);
	st_tid(b->name);
	uint64_t *p = NULL;
	int err = posix_memalign((void **)&p, PAGE_SIZE_BYTES, b->pages * PAGE_SIZE_BYTES);
	if (err)
		die_errno_at(err, "%s: posix_memalign", b->name);
	st_range(b->name, p, b->pages * PAGE_SIZE_BYTES);
	for (unsigned pass = 0; pass < b->passes; pass++) {
		uint64_t r = blocked_touch(p, b->pages, pass);
		ST_KEEP(r);
		b->checksum = b->checksum * 31 + r;
	}
	check_mask(b->name);
	free(p);
	return NULL;
}

int main(int argc, char **argv)
{
	size_t pages = arg_ulong(argc, argv, 1, 4096);
	unsigned passes = (unsigned)arg_ulong(argc, argv, 2, 2);
	struct blocker self = { "blocker_self", pages, passes, true, 0 };
	struct blocker inherited = { "blocker_inherited", pages, passes, false, 0 };
	pthread_t t1, t2;
	sigset_t all, old;
	int err;

	if ((err = pthread_create(&t1, NULL, blocker_main, &self)))
		die_errno_at(err, "pthread_create(blocker_self)");
	if ((err = pthread_join(t1, NULL)))
		die_errno_at(err, "pthread_join(blocker_self)");

	sigfillset(&all);
	if (sigprocmask(SIG_BLOCK, &all, &old) < 0)
		die_errno("sigprocmask(SIG_BLOCK, all)");
	if ((err = pthread_create(&t2, NULL, blocker_main, &inherited)))
		die_errno_at(err, "pthread_create(blocker_inherited)");
	if (sigprocmask(SIG_SETMASK, &old, NULL) < 0)
		die_errno("sigprocmask(SIG_SETMASK)");
	if ((err = pthread_join(t2, NULL)))
		die_errno_at(err, "pthread_join(blocker_inherited)");
	printf("sigblock ok checksum %016llx\n", (unsigned long long)(self.checksum * 31 + inherited.checksum));
	return 0;
}
