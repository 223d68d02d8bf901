/* threads.c: T threads (default 4), each mallocs M MiB (default 64), fills it with its own pattern,
 * then verifies it twice; a barrier between phases keeps all threads faulting at the same time.
 * Prints the combined checksum, identical in every correct run.
 *
 * usage: threads [T [M_MiB]] */
#include "planted.h"
#include <pthread.h>

struct worker {
	pthread_t thread;
	unsigned index;
	size_t bytes;
	uint64_t checksum;
};

static pthread_barrier_t barrier;

static void *work(void *arg)
{
	struct worker *w = arg;
	size_t nwords = w->bytes / sizeof(uint64_t);
	uint64_t seed = 0x7e11 + w->index * 0x1000193ULL;
	char what[64];
	uint64_t *buf = malloc(w->bytes);
	if (!buf)
		die_errno("thread %u: malloc(%zu)", w->index, w->bytes);
	pthread_barrier_wait(&barrier);
	fill_words(buf, nwords, seed);
	pthread_barrier_wait(&barrier);
	snprintf(what, sizeof(what), "thread %u read pass 1", w->index);
	uint64_t sum1 = verify_words(buf, nwords, seed, what);
	pthread_barrier_wait(&barrier);
	snprintf(what, sizeof(what), "thread %u read pass 2", w->index);
	uint64_t sum2 = verify_words(buf, nwords, seed, what);
	if (sum1 != sum2)
		die("thread %u: checksums of the two read passes differ", w->index);
	w->checksum = sum1;
	free(buf);
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned nthreads = arg_ulong(argc, argv, 1, 4);
	size_t mib = arg_ulong(argc, argv, 2, 64);
	if (nthreads > 256)
		die("at most 256 threads");
	struct worker *workers = calloc(nthreads, sizeof(*workers));
	if (!workers)
		die_errno("calloc");
	int err = pthread_barrier_init(&barrier, NULL, nthreads);
	if (err)
		die_errno_at(err, "pthread_barrier_init");
	for (unsigned i = 0; i < nthreads; i++) {
		workers[i].index = i;
		workers[i].bytes = mib * MiB;
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
	printf("threads %u x %zu MiB checksum %016llx\n", nthreads, mib, (unsigned long long)total);
	pthread_barrier_destroy(&barrier);
	free(workers);
	return 0;
}
