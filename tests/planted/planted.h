/* planted.h: helpers shared by the planted test programs (the .c files in tests/planted/).
 *
 * Each planted program is an ordinary user program: it allocates, writes position-dependent
 * patterns, reads them back and exits non-zero with a message on stderr at the first sign of
 * wrong data. Nothing here knows about faultline; the programs must pass natively too.
 *
 * Patterns: word i of a buffer filled with seed s holds pattern_word(i, s). The function is
 * position-dependent (a page copied to the wrong place, or served as zeros, never matches) and
 * differs per seed (a stale copy from an earlier pattern never matches either).
 *
 * Header-only (static functions): the Makefile builds each planted .c on its own. Edits here do not
 * trigger a rebuild by themselves (not a make prerequisite): touch the .c files or `make clean`. */
#ifndef FAULTLINE_PLANTED_H
#define FAULTLINE_PLANTED_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* include this header before any system header */
#endif

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MiB (1024UL * 1024UL)
#define PAGE_SIZE_BYTES 4096UL
#define WORDS_PER_PAGE (PAGE_SIZE_BYTES / sizeof(uint64_t))

__attribute__((format(printf, 1, 2), noreturn, unused))
static void die(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: FAIL: %s\n", program_invocation_short_name, msg);
	fflush(stderr);
	exit(1);
}

/* die() with the current errno spelled out. */
#define die_errno(...) die_errno_at(errno, __VA_ARGS__)
__attribute__((format(printf, 2, 3), noreturn, unused))
static void die_errno_at(int err, const char *fmt, ...)
{
	char msg[448];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	die("%s: %s (errno %d)", msg, strerror(err), err);
}

/* argv[i] as a positive integer, or def when absent. */
__attribute__((unused))
static unsigned long arg_ulong(int argc, char **argv, int i, unsigned long def)
{
	if (i >= argc)
		return def;
	char *end;
	errno = 0;
	unsigned long v = strtoul(argv[i], &end, 10);
	if (errno || end == argv[i] || *end || v == 0)
		die("argument %d: expected a positive integer, got '%s'", i, argv[i]);
	return v;
}

static inline uint64_t pattern_word(uint64_t index, uint64_t seed)
{
	uint64_t x = (index + 1) * 0x9E3779B97F4A7C15ULL ^ seed;
	return x ^ (x >> 29);
}

/* Writes the pattern to every word of p[0 .. nwords), in address order. */
__attribute__((unused))
static void fill_words(uint64_t *p, size_t nwords, uint64_t seed)
{
	for (size_t i = 0; i < nwords; i++)
		p[i] = pattern_word(i, seed);
}

/* fork() after flushing stdio (so no buffered line is printed twice); dies when fork fails. */
__attribute__((unused))
static pid_t fork_flushed(void)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		die_errno("fork");
	return pid;
}

/* malloc(mib MiB) filled with seed's pattern (dies when malloc fails); its words in *nwords. */
__attribute__((unused))
static uint64_t *malloc_filled(size_t mib, uint64_t seed, size_t *nwords)
{
	uint64_t *p = malloc(mib * MiB);
	if (!p)
		die_errno("malloc(%zu MiB)", mib);
	*nwords = mib * MiB / sizeof(uint64_t);
	fill_words(p, *nwords, seed);
	return p;
}

/* Checks every word; on mismatch reports the first few bad pages and the number of bad pages, then
 * dies. Returns a checksum of the contents otherwise (same for every correct run). */
__attribute__((unused))
static uint64_t verify_words(const uint64_t *p, size_t nwords, uint64_t seed, const char *what)
{
	uint64_t sum = 0;
	size_t bad_pages = 0, last_bad_page = (size_t)-1;
	for (size_t i = 0; i < nwords; i++) {
		uint64_t want = pattern_word(i, seed), got = p[i];
		sum = (sum ^ got) * 0x100000001B3ULL;
		if (got == want)
			continue;
		size_t page = i / WORDS_PER_PAGE;
		if (page == last_bad_page)
			continue;
		last_bad_page = page;
		if (bad_pages++ < 4)
			fprintf(stderr, "%s: %s: word %zu (page %zu, address %p): expected %#018llx, got %#018llx\n",
				program_invocation_short_name, what, i, page, (const void *)&p[i],
				(unsigned long long)want, (unsigned long long)got);
	}
	if (bad_pages)
		die("%s: %zu of %zu pages hold wrong data", what, bad_pages,
		    (nwords + WORDS_PER_PAGE - 1) / WORDS_PER_PAGE);
	return sum;
}

/* Byte pattern for buffers of arbitrary length (realloc prefixes, syscall buffers). */
static inline uint8_t pattern_byte(size_t i, uint32_t seed)
{
	return (uint8_t)(seed + i * 131 + (i >> 12) * 7 + (i >> 20));
}

__attribute__((unused))
static void fill_bytes(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = pattern_byte(i, seed);
}

/* Index of the first byte in p[from .. n) that differs from the pattern, or n. */
__attribute__((unused))
static size_t check_bytes(const uint8_t *p, size_t from, size_t n, uint32_t seed)
{
	for (size_t i = from; i < n; i++)
		if (p[i] != pattern_byte(i, seed))
			return i;
	return n;
}

__attribute__((unused))
static void verify_bytes(const uint8_t *p, size_t n, uint32_t seed, const char *what)
{
	size_t i = check_bytes(p, 0, n, seed);
	if (i < n)
		die("%s: byte %zu of %zu (address %p): expected %#04x, got %#04x", what, i, n,
		    (const void *)&p[i], pattern_byte(i, seed), p[i]);
}

/* Index of the first non-zero byte of p[0 .. n), or n. */
__attribute__((unused))
static size_t first_nonzero(const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return i;
	return n;
}

/* Deterministic PRNG (xorshift64*), so every run makes the same requests. */
static inline uint64_t rng_next(uint64_t *state)
{
	uint64_t x = *state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545F4914F6CDD1DULL;
}

#endif
