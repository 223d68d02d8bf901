/* mmap_churn.c: the program's own anonymous mappings, changed behind the allocator's back. Under
 * faultline these live in the managed region, so every call below must keep the runtime's page states
 * true: unmapped or discarded pages read back as zeros (never a stale far copy), moved pages keep
 * their data, protections keep working, evicted pages included.
 *
 *   sizes:    mmap of 1 page .. 8 MiB: zeros, then a pattern that survives eviction
 *   munmap:   head, tail and middle of a mapping; the rest intact, touching a hole faults (SIGSEGV),
 *             MAP_FIXED over a live range and over a hole reads zeros, MAP_FIXED_NOREPLACE refused
 *             over live pages and granted in a hole
 *   mremap:   grow (may move), shrink, move to a fixed address (MREMAP_FIXED, checked last):
 *             contents preserved, new tail zeros
 *   madvise:  MADV_DONTNEED on resident and on evicted pages reads back zeros, neighbours intact
 *   mprotect: PROT_READ (reads work, a write faults with SIGSEGV), PROT_NONE, and back to writable
 *   shared:   MAP_SHARED|MAP_ANONYMOUS stays shared with a forked child
 *   errors:   calls the kernel (or glibc) refuses, printed with their errno so that the output under
 *             record must match the native run's: madvise with an unknown advice, MADV_REMOVE on
 *             private memory, MADV_DONTNEED over an unmapped hole (ENOMEM, the mapped part
 *             discarded all the same), mremap of an unaligned address, to size 0, from size 0,
 *             over a hole (EFAULT); realloc and memalign/aligned_alloc failures and odd alignments
 *
 * usage: mmap_churn [PRESSURE_MiB]   (default 16): between steps the program writes a buffer of
 * this size, so under `record -L` smaller than it the pages just written get evicted. */
#include "planted.h"
#include <malloc.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define PG PAGE_SIZE_BYTES

static uint64_t *pressure;
static size_t pressure_words;
static unsigned pressure_round;

/* Writes the whole pressure buffer, pushing older pages out of local memory. */
static void evict(void)
{
	fill_words(pressure, pressure_words, ++pressure_round);
}

static uint8_t *map(size_t len, const char *what)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die_errno("%s: mmap(%zu)", what, len);
	return p;
}

static void unmap(void *p, size_t len, const char *what)
{
	if (munmap(p, len))
		die_errno("%s: munmap(%p, %zu)", what, p, len);
}

/* Page-granular patterns: page k of a mapping holds words pattern_word(k * 512 + i, seed), so a page
 * is checked on its own, wherever the range starts. */
static void fill_pages(uint8_t *p, size_t first_page, size_t npages, uint64_t seed)
{
	for (size_t k = 0; k < npages; k++)
		for (size_t i = 0; i < WORDS_PER_PAGE; i++)
			((uint64_t *)(p + (first_page + k) * PG))[i] = pattern_word((first_page + k) * WORDS_PER_PAGE + i, seed);
}

static void verify_pages(const uint8_t *p, size_t first_page, size_t npages, uint64_t seed, const char *what)
{
	for (size_t k = 0; k < npages; k++) {
		const uint64_t *w = (const uint64_t *)(p + (first_page + k) * PG);
		for (size_t i = 0; i < WORDS_PER_PAGE; i++) {
			uint64_t want = pattern_word((first_page + k) * WORDS_PER_PAGE + i, seed);
			if (w[i] != want)
				die("%s: page %zu word %zu (%p): expected %#llx, got %#llx", what, first_page + k, i,
				    (const void *)&w[i], (unsigned long long)want, (unsigned long long)w[i]);
		}
	}
}

static void verify_zero_pages(const uint8_t *p, size_t first_page, size_t npages, const char *what)
{
	size_t n = npages * PG, nz = first_nonzero(p + first_page * PG, n);
	if (nz < n)
		die("%s: page %zu byte %zu is %#x, want zeros", what, first_page + nz / PG, nz % PG,
		    p[first_page * PG + nz]);
}

static sigjmp_buf probe_env;

static void on_segv(int sig)
{
	(void)sig;
	siglongjmp(probe_env, 1);
}

/* 1 if reading (write = 0) or writing (write = 1) the byte at p faults with SIGSEGV. */
static int access_faults(volatile uint8_t *p, int write)
{
	struct sigaction sa = { .sa_handler = on_segv }, old;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, &old))
		die_errno("sigaction(SIGSEGV)");
	int faulted = 1;
	if (!sigsetjmp(probe_env, 1)) {
		if (write)
			*p = 0x77;
		else
			(void)*p;
		faulted = 0;
	}
	sigaction(SIGSEGV, &old, NULL);
	return faulted;
}

/* The program unmapped [p, p + len): touching any page of it must fault, as natively. */
static void expect_unmapped(const uint8_t *p, size_t len, const char *what)
{
	for (size_t off = 0; off < len; off += PG)
		if (!access_faults((volatile uint8_t *)p + off, 0))
			die("%s: reading %p (+%zu) did not fault: still mapped", what, (const void *)p, off);
}

static void test_sizes(void)
{
	static const size_t pages[] = { 1, 3, 100, 257, 2048 };
	for (size_t s = 0; s < sizeof(pages) / sizeof(pages[0]); s++) {
		size_t n = pages[s];
		uint8_t *p = map(n * PG, "sizes");
		verify_zero_pages(p, 0, n, "sizes: fresh mapping");
		fill_pages(p, 0, n, 100 + s);
		evict();
		verify_pages(p, 0, n, 100 + s, "sizes: after eviction");
		unmap(p, n * PG, "sizes");
	}
}

static void test_munmap(void)
{
	const size_t n = 512;
	uint8_t *p = map(n * PG, "munmap");
	fill_pages(p, 0, n, 200);
	evict();
	unmap(p, 16 * PG, "munmap head");
	unmap(p + (n - 16) * PG, 16 * PG, "munmap tail");
	unmap(p + 200 * PG, 40 * PG, "munmap middle");
	expect_unmapped(p, 16 * PG, "munmap head");
	expect_unmapped(p + (n - 16) * PG, 16 * PG, "munmap tail");
	expect_unmapped(p + 200 * PG, 40 * PG, "munmap middle");
	verify_pages(p, 16, 200 - 16, 200, "munmap: pages before the middle hole");
	verify_pages(p, 240, n - 16 - 240, 200, "munmap: pages after the middle hole");

	/* MAP_FIXED_NOREPLACE: refused over live pages (EEXIST), granted in a hole the program made */
	errno = 0;
	void *q = mmap(p + 100 * PG, 4 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (q != MAP_FAILED || errno != EEXIST)
		die("MAP_FIXED_NOREPLACE over live pages: got %p (errno %d), want MAP_FAILED with EEXIST", q, errno);
	verify_pages(p, 100, 4, 200, "live pages a MAP_FIXED_NOREPLACE was refused over");
	q = mmap(p + (n - 16) * PG, 16 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (q != p + (n - 16) * PG)
		die_errno("MAP_FIXED_NOREPLACE into the tail hole: got %p, want %p", q, (void *)(p + (n - 16) * PG));
	verify_zero_pages(p, n - 16, 16, "MAP_FIXED_NOREPLACE into a hole");
	unmap(p + (n - 16) * PG, 16 * PG, "munmap the tail again");
	expect_unmapped(p + (n - 16) * PG, 16 * PG, "munmap the tail again");

	/* MAP_FIXED over a hole the program made: fresh zeros, not the old data */
	q = mmap(p + 200 * PG, 40 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (q != p + 200 * PG)
		die_errno("MAP_FIXED into the middle hole: got %p, want %p", q, (void *)(p + 200 * PG));
	verify_zero_pages(p, 200, 40, "MAP_FIXED into a hole");
	fill_pages(p, 200, 40, 201);
	/* MAP_FIXED over live, partly evicted pages: they are replaced by zeros */
	evict();
	q = mmap(p + 100 * PG, 50 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (q != p + 100 * PG)
		die_errno("MAP_FIXED over live pages: got %p, want %p", q, (void *)(p + 100 * PG));
	verify_zero_pages(p, 100, 50, "MAP_FIXED over live pages");
	verify_pages(p, 16, 100 - 16, 200, "pages before the MAP_FIXED range");
	verify_pages(p, 150, 50, 200, "pages after the MAP_FIXED range");
	verify_pages(p, 200, 40, 201, "pages mapped into the hole");
	unmap(p + 16 * PG, (n - 32) * PG, "munmap the rest");
	expect_unmapped(p, n * PG, "munmap the rest");

	/* the same addresses again, if the kernel (or the region) hands them out: zeros */
	uint8_t *r = map(n * PG, "munmap remap");
	verify_zero_pages(r, 0, n, "a new mapping after munmap");
	unmap(r, n * PG, "munmap remap");
}

static void test_mremap(void)
{
	/* grow, maybe moving */
	uint8_t *p = map(16 * PG, "mremap");
	fill_pages(p, 0, 16, 300);
	evict();
	uint8_t *q = mremap(p, 16 * PG, 64 * PG, MREMAP_MAYMOVE);
	if (q == MAP_FAILED)
		die_errno("mremap grow 16 -> 64 pages");
	verify_pages(q, 0, 16, 300, "mremap grow: old pages");
	verify_zero_pages(q, 16, 48, "mremap grow: new pages");
	fill_pages(q, 16, 48, 300);

	/* shrink in place */
	evict();
	uint8_t *s = mremap(q, 64 * PG, 40 * PG, 0);
	if (s != q)
		die_errno("mremap shrink 64 -> 40 pages: got %p, want %p", (void *)s, (void *)q);
	verify_pages(s, 0, 40, 300, "mremap shrink");
	expect_unmapped(s + 40 * PG, 24 * PG, "mremap shrink: cut tail");

	/* a big grow of evicted memory */
	evict();
	uint8_t *g = mremap(s, 40 * PG, 2048 * PG, MREMAP_MAYMOVE);
	if (g == MAP_FAILED)
		die_errno("mremap grow 40 -> 2048 pages");
	verify_pages(g, 0, 40, 300, "mremap big grow: old pages");
	verify_zero_pages(g, 40, 2048 - 40, "mremap big grow: new pages");
	unmap(g, 2048 * PG, "mremap");
}

/* mremap to a fixed address (a placeholder mapping reserves it). Last, so that a runtime without
 * MREMAP_FIXED support still runs every other check first. */
static void test_mremap_fixed(void)
{
	uint8_t *s = map(40 * PG, "mremap fixed source");
	fill_pages(s, 0, 40, 300);
	uint8_t *dst = map(40 * PG, "mremap placeholder");
	fill_pages(dst, 0, 40, 399); /* old contents at the destination must vanish */
	evict();
	uint8_t *m = mremap(s, 40 * PG, 40 * PG, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	if (m != dst)
		die_errno("mremap move to %p: got %p", (void *)dst, (void *)m);
	expect_unmapped(s, 40 * PG, "mremap move: old address");
	verify_pages(m, 0, 40, 300, "mremap move: moved pages");
	evict();
	verify_pages(m, 0, 40, 300, "mremap move: moved pages after eviction");
	unmap(m, 40 * PG, "mremap fixed");
}

static void test_dontneed(void)
{
	const size_t n = 1024;
	uint8_t *p = map(n * PG, "madvise");
	fill_pages(p, 0, n, 500);
	/* resident pages */
	if (madvise(p + 100 * PG, 100 * PG, MADV_DONTNEED))
		die_errno("madvise(MADV_DONTNEED) on resident pages");
	verify_zero_pages(p, 100, 100, "MADV_DONTNEED on resident pages");
	/* evicted pages */
	evict();
	if (madvise(p + 600 * PG, 200 * PG, MADV_DONTNEED))
		die_errno("madvise(MADV_DONTNEED) on evicted pages");
	verify_zero_pages(p, 600, 200, "MADV_DONTNEED on evicted pages");
	verify_pages(p, 0, 100, 500, "MADV_DONTNEED: pages before the first range");
	verify_pages(p, 200, 400, 500, "MADV_DONTNEED: pages between the ranges");
	verify_pages(p, 800, n - 800, 500, "MADV_DONTNEED: pages after the second range");
	/* discarded pages are ordinary pages again */
	fill_pages(p, 600, 200, 501);
	evict();
	verify_pages(p, 600, 200, 501, "written again after MADV_DONTNEED, then evicted");
	verify_zero_pages(p, 100, 100, "MADV_DONTNEED range untouched since, after eviction");
	unmap(p, n * PG, "madvise");
}

static void test_mprotect(void)
{
	const size_t n = 256;
	uint8_t *p = map(n * PG, "mprotect");
	fill_pages(p, 0, n, 600);
	if (mprotect(p, n * PG, PROT_READ))
		die_errno("mprotect(PROT_READ)");
	evict();
	verify_pages(p, 0, n, 600, "PROT_READ pages after eviction");
	if (!access_faults(p + 10 * PG + 5, 1))
		die("a write to a PROT_READ page did not fault");
	verify_pages(p, 10, 1, 600, "PROT_READ page after the refused write");

	if (mprotect(p, n * PG, PROT_NONE))
		die_errno("mprotect(PROT_NONE)");
	evict();
	if (mprotect(p, n * PG, PROT_READ | PROT_WRITE))
		die_errno("mprotect(PROT_READ|PROT_WRITE)");
	verify_pages(p, 0, n, 600, "pages after PROT_NONE and back");
	fill_pages(p, 0, n, 601);
	evict();
	verify_pages(p, 0, n, 601, "written again after mprotect, then evicted");

	/* part of a mapping read-only, the rest writable */
	if (mprotect(p + 64 * PG, 64 * PG, PROT_READ))
		die_errno("mprotect(PROT_READ) on the middle");
	if (!access_faults(p + 100 * PG, 1))
		die("a write to the read-only middle did not fault");
	if (access_faults(p + 10 * PG, 1) || access_faults(p + 200 * PG, 1))
		die("a write to a still writable page faulted");
	unmap(p, n * PG, "mprotect");
}

static void test_shared(void)
{
	const size_t n = 64;
	uint8_t *p = mmap(NULL, n * PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die_errno("mmap(MAP_SHARED|MAP_ANONYMOUS)");
	fill_pages(p, 0, n, 700);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		die_errno("fork");
	if (pid == 0) {
		verify_pages(p, 0, n, 700, "shared mapping in the child");
		fill_pages(p, 0, n, 701);
		_exit(0);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid)
		die_errno("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		die("child checking the shared mapping failed (status %#x)", status);
	verify_pages(p, 0, n, 701, "shared mapping: the child's writes, seen by the parent");
	unmap(p, n * PG, "shared");
}

/* One refused (or accepted) call, as the program sees it. */
static void report_call(const char *what, long result, int err)
{
	printf("errors: %s = %ld errno %d\n", what, result, result == -1 ? err : 0);
}

static void test_errors(void)
{
	const size_t n = 16;
	uint8_t *p = map(n * PG, "errors");
	fill_pages(p, 0, n, 800);
	fflush(stdout); /* stdio's buffer exists before the holes below are made */
	errno = 0;
	long r = madvise(p, PG, 12345);
	int err = errno;
	report_call("madvise(unknown advice 12345)", r, err);
	errno = 0;
	r = madvise(p, PG, MADV_REMOVE);
	err = errno;
	report_call("madvise(MADV_REMOVE) on private memory", r, err);
	verify_pages(p, 0, 1, 800, "after a refused MADV_REMOVE");
	/* a hole: unmapped, then advised at once (no allocation in between could take it) */
	if (munmap(p + 8 * PG, 4 * PG))
		die_errno("munmap(hole)");
	errno = 0;
	r = madvise(p + 6 * PG, 4 * PG, MADV_DONTNEED);
	err = errno;
	report_call("madvise(MADV_DONTNEED) over a hole", r, err);
	verify_zero_pages(p, 6, 2, "the mapped part of a MADV_DONTNEED range with a hole");
	verify_pages(p, 12, 4, 800, "pages after the hole");
	errno = 0;
	void *m = mremap(p + 1, PG, 2 * PG, MREMAP_MAYMOVE);
	err = errno;
	report_call("mremap(unaligned address)", m == MAP_FAILED ? -1 : 0, err);
	errno = 0;
	m = mremap(p, PG, 0, MREMAP_MAYMOVE);
	err = errno;
	report_call("mremap(to size 0)", m == MAP_FAILED ? -1 : 0, err);
	errno = 0;
	m = mremap(p + 2 * PG, 0, PG, MREMAP_MAYMOVE);
	err = errno;
	report_call("mremap(from size 0, private)", m == MAP_FAILED ? -1 : 0, err);
	errno = 0;
	m = mremap(p + 6 * PG, 4 * PG, 8 * PG, MREMAP_MAYMOVE);
	err = errno;
	report_call("mremap(over a hole)", m == MAP_FAILED ? -1 : 0, err);
	verify_pages(p, 0, 1, 800, "after the refused calls");
	munmap(p, 8 * PG);
	munmap(p + 12 * PG, 4 * PG);

	char *keep = malloc(100);
	if (!keep)
		die("malloc(100)");
	strcpy(keep, "kept");
	errno = 0;
	char *grown = realloc(keep, (size_t)1 << 45);
	err = errno;
	report_call("realloc(32 TiB)", grown ? 0 : -1, err);
	printf("errors: the old block after a failed realloc: %s\n", grown ? "-" : keep);
	free(grown ? grown : keep);
	const size_t aligns[] = { 0, 1, 3, 24, 48, 4096, 12288 };
	for (size_t i = 0; i < sizeof(aligns) / sizeof(aligns[0]); i++) {
		errno = 0;
		void *a = aligned_alloc(aligns[i], 64);
		err = errno;
		size_t pow2 = 1; /* glibc 2.36 rounds the alignment up to a power of two; later ones refuse */
		while (pow2 < aligns[i])
			pow2 *= 2;
		printf("errors: aligned_alloc(%zu, 64) %s errno %d\n", aligns[i],
		       !a ? "NULL" : ((uintptr_t)a % pow2 ? "misaligned" : "aligned"), a ? 0 : err);
		free(a);
		errno = 0;
		a = memalign(aligns[i], 64);
		err = errno;
		printf("errors: memalign(%zu, 64) %s errno %d\n", aligns[i], a ? "ok" : "NULL", a ? 0 : err);
		free(a);
	}
}

int main(int argc, char **argv)
{
	size_t mib = arg_ulong(argc, argv, 1, 16);
	pressure_words = mib * MiB / sizeof(uint64_t);
	pressure = malloc(mib * MiB);
	if (!pressure)
		die_errno("malloc(%zu MiB)", mib);
	test_sizes();
	test_munmap();
	test_mremap();
	test_dontneed();
	test_mprotect();
	test_shared();
	test_mremap_fixed();
	test_errors();
	verify_words(pressure, pressure_words, pressure_round, "pressure buffer");
	printf("mmap_churn: all checks passed\n");
	free(pressure);
	return 0;
}
