/* rel_thread_storm.c: creation and exit of many short-lived threads (fltrace crashed beyond 10,000
 * threads over a run). Each thread mallocs a few blocks (small, one page, several pages), fills and
 * verifies them, reads and rewrites one page of a shared buffer (its own page, so pages written by
 * threads long gone are checked by later ones), frees, and returns a checksum. The shared buffer is
 * larger than a test's -L, so threads fault on evicted pages too.
 *
 * Threads run in waves of WAVE at a time; in each wave every fourth thread is detached instead of
 * joined (it signals completion through a counter), so both ways a thread's end is handled.
 *
 * usage: rel_thread_storm THREADS [SHARED_MiB [WAVE]]   (defaults 20000, 16, 16)
 * stdout (identical in every correct run): "rel_thread_storm THREADS threads checksum HEX". */
#include "planted.h"
#include <pthread.h>
#include <stdatomic.h>

struct job {
	unsigned index;
	uint64_t checksum;
};

static uint64_t *shared;
static size_t shared_pages;
static uint64_t *page_gen;          /* last index that wrote each shared page, +1 (0 = never) */
static atomic_uint detached_done;
static atomic_uint_fast64_t detached_sum;

static uint64_t page_seed(size_t page, uint64_t gen)
{
	return 0x57011ULL ^ (page << 20) ^ gen;
}

static uint64_t thread_body(unsigned index)
{
	static const size_t sizes[] = { 24, 200, 4096, 3 * 4096 + 100, 64 * 1024 };
	uint64_t sum = 0;
	uint64_t *blk[sizeof(sizes) / sizeof(sizes[0])];
	for (unsigned k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t words = sizes[k] / 8;
		blk[k] = malloc(sizes[k]);
		if (!blk[k])
			die_errno("thread %u: malloc(%zu)", index, sizes[k]);
		fill_words(blk[k], words, index * 16 + k);
	}
	for (unsigned k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		char what[64];
		snprintf(what, sizeof(what), "thread %u block %u", index, k);
		sum ^= verify_words(blk[k], sizes[k] / 8, index * 16 + k, what);
		free(blk[k]);
	}
	/* the shared page of this index: written by thread index - shared_pages before, if any */
	size_t page = index % shared_pages;
	uint64_t *p = shared + page * WORDS_PER_PAGE;
	uint64_t gen = page_gen[page];
	if (gen) {
		char what[64];
		snprintf(what, sizeof(what), "thread %u: shared page %zu of thread %llu", index, page,
			 (unsigned long long)(gen - 1));
		sum ^= verify_words(p, WORDS_PER_PAGE, page_seed(page, gen), what);
	}
	fill_words(p, WORDS_PER_PAGE, page_seed(page, index + 1));
	page_gen[page] = index + 1;
	return sum;
}

static void *joined_main(void *arg)
{
	struct job *j = arg;
	j->checksum = thread_body(j->index);
	return NULL;
}

static void *detached_main(void *arg)
{
	struct job *j = arg;
	uint64_t sum = thread_body(j->index);
	free(j);
	atomic_fetch_xor(&detached_sum, sum);
	atomic_fetch_add(&detached_done, 1);
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned nthreads = (unsigned)arg_ulong(argc, argv, 1, 20000);
	size_t shared_mib = arg_ulong(argc, argv, 2, 16);
	unsigned wave = (unsigned)arg_ulong(argc, argv, 3, 16);
	shared_pages = shared_mib * MiB / PAGE_SIZE_BYTES;
	if (shared_pages > nthreads)
		shared_pages = nthreads; /* every page is written, and most read back later */
	if (wave > shared_pages)
		die("a wave of %u threads needs at least %u shared pages, have %zu", wave, wave, shared_pages);
	shared = malloc(shared_pages * PAGE_SIZE_BYTES);
	page_gen = calloc(shared_pages, sizeof(*page_gen));
	if (!shared || !page_gen)
		die_errno("malloc(shared %zu pages)", shared_pages);

	pthread_t *tid = calloc(wave, sizeof(*tid));
	struct job *jobs = calloc(wave, sizeof(*jobs));
	if (!tid || !jobs)
		die_errno("calloc(wave %u)", wave);
	uint64_t sum = 0;
	unsigned detached = 0;
	for (unsigned base = 0; base < nthreads; base += wave) {
		unsigned n = nthreads - base < wave ? nthreads - base : wave;
		/* consecutive indices, wave <= shared_pages: no two threads of a wave share a page */
		for (unsigned i = 0; i < n; i++) {
			unsigned index = base + i;
			int err;
			if (i % 4 == 3) {
				struct job *j = malloc(sizeof(*j));
				if (!j)
					die_errno("malloc(job)");
				j->index = index;
				pthread_attr_t attr;
				pthread_attr_init(&attr);
				pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
				err = pthread_create(&tid[i], &attr, detached_main, j);
				pthread_attr_destroy(&attr);
				detached++;
			} else {
				jobs[i].index = index;
				err = pthread_create(&tid[i], NULL, joined_main, &jobs[i]);
			}
			if (err)
				die_errno_at(err, "pthread_create(thread %u)", index);
		}
		for (unsigned i = 0; i < n; i++) {
			if (i % 4 == 3)
				continue;
			int err = pthread_join(tid[i], NULL);
			if (err)
				die_errno_at(err, "pthread_join(thread %u)", base + i);
			sum ^= jobs[i].checksum;
		}
		/* the detached threads of this wave must be done before their pages are reused */
		while (atomic_load(&detached_done) < detached)
			sched_yield();
	}
	sum ^= atomic_load(&detached_sum);
	/* every page of the shared buffer, as the last thread that touched it left it */
	for (size_t page = 0; page < shared_pages; page++) {
		char what[64];
		snprintf(what, sizeof(what), "main: shared page %zu at the end", page);
		sum ^= verify_words(shared + page * WORDS_PER_PAGE, WORDS_PER_PAGE, page_seed(page, page_gen[page]), what);
	}
	printf("rel_thread_storm %u threads checksum %016llx\n", nthreads, (unsigned long long)sum);
	free(tid);
	free(jobs);
	free(page_gen);
	free(shared);
	return 0;
}
