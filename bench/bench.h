/* bench.h: helpers shared by the benchmark programs in bench/ (built by scripts/bench.sh).
 *
 * Each program prints its results on stdout as "key=value" words on lines that start with a
 * tag ("uffd", "touch", "pass", ...), one line per measured repetition, so that the script can
 * pick values with awk. Errors go to stderr with the failing call, and exit status 1. Nothing
 * here knows about faultline: every program also runs natively. Header-only. */
#ifndef FAULTLINE_BENCH_H
#define FAULTLINE_BENCH_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

#define BENCH_PAGE 4096UL
#define BENCH_MiB (1024UL * 1024UL)

__attribute__((format(printf, 1, 2), noreturn, unused))
static void bench_die(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s\n", program_invocation_short_name, msg);
	exit(1);
}

/* bench_die with strerror(errno) appended. */
#define bench_die_errno(fmt, ...) \
	bench_die(fmt ": %s", ##__VA_ARGS__, strerror(errno))

/* CPU time of the whole process (every thread: under faultline, its handler threads too). */
__attribute__((unused))
static uint64_t bench_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((unused))
static uint64_t bench_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* argv[i] as an unsigned number (any base strtoull accepts), def when absent; dies on junk. */
__attribute__((unused))
static unsigned long long bench_arg(int argc, char **argv, int i, unsigned long long def)
{
	if (i >= argc)
		return def;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(argv[i], &end, 0);
	if (errno || end == argv[i] || *end)
		bench_die("argument %d: '%s' is not a number", i, argv[i]);
	return v;
}

/* Page faults of this process so far (minor + major, from getrusage). */
struct bench_faults {
	long minor, major;
};

__attribute__((unused))
static struct bench_faults bench_faults_now(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (struct bench_faults){ ru.ru_minflt, ru.ru_majflt };
}

/* A 64-bit mixing function (MurmurHash3's finalizer): pseudo-random numbers from an index, the
 * same in every run. */
static inline uint64_t bench_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

#endif
