/* probe_stress.c: pages that keep changing, checked from several threads, for the access
 * prober's races (record --sample-accesses / --mrc unmap resident pages on trial and map them
 * back while the program runs).
 *
 * The buffer's first half is filled once and then only read, by every thread (so threads fault
 * on the same pages together). Its second half is split into one slice per thread; a thread
 * rewrites random pages of its slice with a new version of their pattern, reads each page
 * before rewriting it (its first access to a page is a read of zeros, so the page starts
 * clean), checks random words of pages written before, and now and then copies a page out
 * through a file (pwrite from the page, pread into another page of its slice), so system calls
 * touch pages the prober may have taken. Any word that differs from what was last written
 * there is reported (zeros or an older version tell which way it went wrong).
 *
 * usage: probe_stress [MIB (8)] [THREADS (3)] [SECONDS (5)]
 * prints: probe_stress ok */
#include "planted.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <time.h>

struct worker {
	pthread_t thread;
	unsigned index;
	uint64_t *slice;            /* its own pages */
	size_t pages;
	uint32_t *version;          /* per page of the slice: 0 = never written (zeros) */
	uint64_t rng;
	int fd;                     /* a scratch file for the page copies */
};

static const uint64_t *shared_half;
static size_t shared_words;
static double deadline;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t next(uint64_t *rng)
{
	*rng ^= *rng << 13, *rng ^= *rng >> 7, *rng ^= *rng << 17;
	return *rng;
}

/* The pattern of a slice page at a version (0: zeros, as never written). */
static uint64_t slice_word(const struct worker *w, size_t page, size_t word, uint32_t version)
{
	if (version == 0)
		return 0;
	return pattern_word(page * WORDS_PER_PAGE + word, ((uint64_t)w->index << 40) ^ ((uint64_t)version << 8) ^ 0x5a);
}

static void check_slice_word(const struct worker *w, size_t page, size_t word, const char *when)
{
	uint32_t v = w->version[page];
	uint64_t got = w->slice[page * WORDS_PER_PAGE + word], want = slice_word(w, page, word, v);
	if (got == want)
		return;
	const char *what = got == 0 ? "zero" : v > 1 && got == slice_word(w, page, word, v - 1) ? "the previous version" : "other";
	die("thread %u, %s: slice page %zu word %zu: 0x%llx, expected 0x%llx (version %u); got %s", w->index, when,
	    page, word, (unsigned long long)got, (unsigned long long)want, v, what);
}

static void check_page(const struct worker *w, size_t page, const char *when)
{
	for (size_t i = 0; i < WORDS_PER_PAGE; i++)
		check_slice_word(w, page, i, when);
}

/* Copies page src of the slice into page dst through the scratch file (pwrite, pread). */
static void copy_through_file(struct worker *w, size_t src, size_t dst)
{
	uint64_t *from = w->slice + src * WORDS_PER_PAGE, *to = w->slice + dst * WORDS_PER_PAGE;
	ssize_t n = pwrite(w->fd, from, PAGE_SIZE_BYTES, 0);
	if (n != (ssize_t)PAGE_SIZE_BYTES)
		die_errno("thread %u: pwrite of slice page %zu returned %zd", w->index, src, n);
	n = pread(w->fd, to, PAGE_SIZE_BYTES, 0);
	if (n != (ssize_t)PAGE_SIZE_BYTES)
		die_errno("thread %u: pread into slice page %zu returned %zd", w->index, dst, n);
	/* dst now holds src's pattern: rewrite it as dst's own after checking the copy */
	for (size_t i = 0; i < WORDS_PER_PAGE; i++)
		if (to[i] != slice_word(w, src, i, w->version[src]))
			die("thread %u: slice page %zu copied through a file into page %zu: word %zu is 0x%llx, expected 0x%llx",
			    w->index, src, dst, i, (unsigned long long)to[i],
			    (unsigned long long)slice_word(w, src, i, w->version[src]));
	w->version[dst]++;
	for (size_t i = 0; i < WORDS_PER_PAGE; i++)
		to[i] = slice_word(w, dst, i, w->version[dst]);
}

static void *work(void *arg)
{
	struct worker *w = arg;
	while (now_s() < deadline) {
		for (int round = 0; round < 256; round++) {
			size_t page = (size_t)(next(&w->rng) % w->pages);
			check_page(w, page, "before rewriting");
			w->version[page]++;
			uint64_t *p = w->slice + page * WORDS_PER_PAGE;
			for (size_t i = 0; i < WORDS_PER_PAGE; i++)
				p[i] = slice_word(w, page, i, w->version[page]);
			for (int k = 0; k < 64; k++) {
				size_t other = (size_t)(next(&w->rng) % w->pages);
				check_slice_word(w, other, (size_t)(next(&w->rng) % WORDS_PER_PAGE), "checking");
				size_t s = (size_t)(next(&w->rng) % shared_words);
				if (shared_half[s] != pattern_word(s, 0x5ad))
					die("thread %u: shared word %zu: 0x%llx, expected 0x%llx", w->index, s,
					    (unsigned long long)shared_half[s], (unsigned long long)pattern_word(s, 0x5ad));
			}
			if (round % 16 == 0) {
				size_t src = (size_t)(next(&w->rng) % w->pages), dst = (size_t)(next(&w->rng) % w->pages);
				if (src != dst)
					copy_through_file(w, src, dst);
			}
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	size_t mib = arg_ulong(argc, argv, 1, 8);
	unsigned nthreads = (unsigned)arg_ulong(argc, argv, 2, 3);
	double seconds = (double)arg_ulong(argc, argv, 3, 5);
	size_t pages = mib * MiB / PAGE_SIZE_BYTES, half = pages / 2, per = (pages - half) / nthreads;
	if (per == 0 || nthreads > 64)
		die("%zu MiB is too small for %u threads (or more than 64 threads)", mib, nthreads);
	uint64_t *buf = malloc(pages * PAGE_SIZE_BYTES);
	struct worker *workers = calloc(nthreads, sizeof(*workers));
	if (!buf || !workers)
		die_errno("malloc(%zu MiB)", mib);
	shared_words = half * WORDS_PER_PAGE;
	fill_words(buf, shared_words, 0x5ad);
	shared_half = buf;
	deadline = now_s() + seconds;
	for (unsigned t = 0; t < nthreads; t++) {
		struct worker *w = &workers[t];
		char path[] = "/tmp/probe_stress.XXXXXX";
		w->index = t;
		w->slice = buf + (half + t * per) * WORDS_PER_PAGE;
		w->pages = per;
		w->version = calloc(per, sizeof(uint32_t));
		w->rng = 0x9e3779b97f4a7c15ULL * (t + 1);
		w->fd = mkstemp(path);
		if (!w->version || w->fd < 0)
			die_errno("thread %u: calloc or mkstemp", t);
		unlink(path);
		int err = pthread_create(&w->thread, NULL, work, w);
		if (err)
			die_errno_at(err, "pthread_create");
	}
	for (unsigned t = 0; t < nthreads; t++) {
		pthread_join(workers[t].thread, NULL);
		close(workers[t].fd);
	}
	for (unsigned t = 0; t < nthreads; t++)
		for (size_t p = 0; p < workers[t].pages; p++)
			check_page(&workers[t], p, "at the end");
	puts("probe_stress ok");
	return 0;
}
