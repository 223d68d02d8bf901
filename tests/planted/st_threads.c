/* st_threads.c: T threads fault at the same time, each on its own heap buffer, then all together on
 * one shared buffer (same pages, same order, so some faults find their page already brought in by
 * another thread's fault: concurrent faults). Used to check that under several handler threads every
 * fault is recorded exactly once, with its stack, and that each thread's PMU values only grow.
 *
 * usage: st_threads [T [PAGES [PASSES [SHARED_PAGES]]]]   (defaults 4, 10000, 2, 256)
 * Each thread allocates PAGES pages (page-aligned); pass 0 writes one word per page (first touch); every later pass
 * verifies the previous pass's word and writes a new one (under -L small, each page refaults once
 * per pass). So a thread takes about PAGES x PASSES faults on its own buffer. Then, after a barrier,
 * every thread adds 1 to one word of each shared page (atomically); the main thread checks the sums.
 * Prints on stdout (st_common.h) "tid worker<i> TID" per thread, "range own<i> ...", "range shared
 * ...", then "threads T x PAGES pages x PASSES passes checksum HEX" (identical in every correct run). */
#include "planted.h"
#include "st_common.h"
#include <pthread.h>

struct worker {
	pthread_t thread;
	unsigned index;
	size_t pages;
	unsigned passes;
	uint64_t checksum;
};

static pthread_barrier_t barrier;
static uint64_t *shared;
static size_t shared_pages;

static inline uint64_t page_word(unsigned thread, size_t page, unsigned pass)
{
	return pattern_word(page, 0x7417ead0ULL + thread * 0x10001ULL + pass);
}

/* Where each thread's faults on its own buffer happen. */
ST_FRAME uint64_t thread_touch(uint64_t *buf, unsigned thread, size_t pages, unsigned pass)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < pages; i++) {
		uint64_t *w = &buf[i * WORDS_PER_PAGE + (i * 7 + pass) % WORDS_PER_PAGE];
		if (pass) {
			uint64_t *prev = &buf[i * WORDS_PER_PAGE + (i * 7 + pass - 1) % WORDS_PER_PAGE];
			if (*prev != page_word(thread, i, pass - 1))
				die("thread %u: page %zu holds %#llx after pass %u", thread, i,
				    (unsigned long long)*prev, pass - 1);
		}
		*w = page_word(thread, i, pass);
		sum += *w;
	}
	return sum;
}

ST_FRAME void shared_touch(void)
{
	for (size_t i = 0; i < shared_pages; i++)
		__atomic_fetch_add(&shared[i * WORDS_PER_PAGE], 1, __ATOMIC_RELAXED);
}

static void *work(void *arg)
{
	struct worker *w = arg;
	char name[32];
	uint64_t *buf = NULL;
	int err = posix_memalign((void **)&buf, PAGE_SIZE_BYTES, w->pages * PAGE_SIZE_BYTES);
	if (err)
		die_errno_at(err, "thread %u: posix_memalign(%zu pages)", w->index, w->pages);
	snprintf(name, sizeof(name), "worker%u", w->index);
	st_tid(name);
	snprintf(name, sizeof(name), "own%u", w->index);
	st_range(name, buf, w->pages * PAGE_SIZE_BYTES);
	pthread_barrier_wait(&barrier);
	for (unsigned pass = 0; pass < w->passes; pass++) {
		uint64_t r = thread_touch(buf, w->index, w->pages, pass);
		ST_KEEP(r);
		w->checksum = w->checksum * 31 + r;
	}
	pthread_barrier_wait(&barrier);
	shared_touch();
	free(buf);
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned nthreads = (unsigned)arg_ulong(argc, argv, 1, 4);
	size_t pages = arg_ulong(argc, argv, 2, 10000);
	unsigned passes = (unsigned)arg_ulong(argc, argv, 3, 2);
	shared_pages = arg_ulong(argc, argv, 4, 256);
	if (nthreads > 64)
		die("at most 64 threads");
	struct worker *workers = calloc(nthreads, sizeof(*workers));
	if (!workers || posix_memalign((void **)&shared, PAGE_SIZE_BYTES, shared_pages * PAGE_SIZE_BYTES))
		die("out of memory");
	st_range("shared", shared, shared_pages * PAGE_SIZE_BYTES);
	int err = pthread_barrier_init(&barrier, NULL, nthreads);
	if (err)
		die_errno_at(err, "pthread_barrier_init");
	for (unsigned i = 0; i < nthreads; i++) {
		workers[i] = (struct worker){ .index = i, .pages = pages, .passes = passes };
		err = pthread_create(&workers[i].thread, NULL, work, &workers[i]);
		if (err)
			die_errno_at(err, "pthread_create %u", i);
	}
	uint64_t total = 0;
	for (unsigned i = 0; i < nthreads; i++) {
		err = pthread_join(workers[i].thread, NULL);
		if (err)
			die_errno_at(err, "pthread_join %u", i);
		total = total * 31 + workers[i].checksum;
	}
	for (size_t i = 0; i < shared_pages; i++)
		if (shared[i * WORDS_PER_PAGE] != nthreads)
			die("shared page %zu: count %llu, want %u", i, (unsigned long long)shared[i * WORDS_PER_PAGE],
			    nthreads);
	printf("threads %u x %zu pages x %u passes checksum %016llx\n", nthreads, pages, passes,
	       (unsigned long long)total);
	pthread_barrier_destroy(&barrier);
	free(shared);
	free(workers);
	return 0;
}
