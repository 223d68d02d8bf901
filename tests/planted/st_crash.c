/* st_crash.c: a program that faults for a while, then dies of a signal. The runtime must flush the
 * trace and write stats.json from its fatal-signal handler, so the recording holds every fault up
 * to the crash, and `record` must exit with the program's status (128 + signal).
 *
 * usage: st_crash MODE [MIB]   (default 16)
 *   MODE segv          fill MIB MiB and read it back, then store through a NULL pointer (SIGSEGV)
 *   MODE abort         the same, then abort() (SIGABRT)
 *   MODE segv-thread   a second thread faults on its own buffer of 8 MiB (one word per page, in
 *                      passes: every page refaults under -L < 8 MiB) without pause; once it has
 *                      made 4 passes, the main thread stores through NULL while it goes on
 * Prints "touched PAGES pages" (flushed) just before the crash: at least that many faults must be
 * in the recording. Exits 99 if it survives the crash. */
#include "planted.h"
#include "st_common.h"
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>

static atomic_ulong helper_passes;

static void *helper(void *arg)
{
	size_t pages = *(size_t *)arg;
	uint64_t *p = NULL;
	int err = posix_memalign((void **)&p, PAGE_SIZE_BYTES, pages * PAGE_SIZE_BYTES);
	if (err)
		die_errno_at(err, "posix_memalign(helper)");
	for (uint64_t pass = 0;; pass++) {
		for (size_t i = 0; i < pages; i++)
			p[i * WORDS_PER_PAGE] = pass ^ i;
		atomic_store(&helper_passes, pass + 1);
	}
	return NULL;
}

ST_FRAME void crash_segv(void)
{
	volatile int *volatile nowhere = NULL;
	*nowhere = 1;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		die("usage: st_crash segv|abort|segv-thread [MIB]");
	const char *mode = argv[1];
	size_t mib = arg_ulong(argc, argv, 2, 16);
	size_t bytes = mib * MiB, nwords = bytes / sizeof(uint64_t);
	bool threaded = strcmp(mode, "segv-thread") == 0;
	if (!threaded && strcmp(mode, "segv") != 0 && strcmp(mode, "abort") != 0)
		die("unknown mode '%s'", mode);

	size_t helper_pages = 2048;
	pthread_t t;
	if (threaded) {
		int err = pthread_create(&t, NULL, helper, &helper_pages);
		if (err)
			die_errno_at(err, "pthread_create");
	}
	size_t touched;
	if (threaded) {
		unsigned long passes;
		while ((passes = atomic_load(&helper_passes)) < 4)
			sched_yield();
		touched = passes * helper_pages;
	} else {
		uint64_t *buf = malloc(bytes);
		if (!buf)
			die_errno("malloc(%zu MiB)", mib);
		fill_words(buf, nwords, 0xc4a5);
		verify_words(buf, nwords, 0xc4a5, "read back");
		touched = bytes / PAGE_SIZE_BYTES;
	}
	printf("touched %zu pages\n", touched);
	fflush(stdout);
	if (strcmp(mode, "abort") == 0)
		abort();
	crash_segv();
	fprintf(stderr, "st_crash: still alive after the crash\n");
	return 99;
}
