/* st_common.h: helpers of the planted programs of the stacks tests (tests/planted/st_*.c, checked by
 * tests/unit/test_stacks_e2e.c and tests/cases/st_*.sh).
 *
 * The programs tell the test where and when to look by printing lines on stdout:
 *     range NAME ADDRESS LENGTH            a buffer of interest: [ADDRESS, ADDRESS + LENGTH)
 *     window NAME T0 T1                    CLOCK_MONOTONIC (ns) just before and just after a phase
 *     tid NAME TID                         a thread of interest
 * (ADDRESS in hex with 0x, the rest decimal). A fault record's time plus its file's start_ns is on
 * the same clock, so the test attributes faults to phases without guessing.
 *
 * Functions whose frames the tests look for are ST_FRAME (noinline, noclone: their names survive
 * -O2 unchanged) and follow each call with ST_KEEP on its result, so gcc cannot turn the call into
 * a tail jump (which would drop the caller's frame). Include after planted.h. */
#ifndef FAULTLINE_ST_COMMON_H
#define FAULTLINE_ST_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define ST_FRAME __attribute__((noinline, noclone, used))
#define ST_KEEP(x) __asm__ volatile("" : "+r"(x) : : "memory")

static inline uint64_t st_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((unused))
static void st_range(const char *name, const void *p, size_t len)
{
	printf("range %s %#llx %zu\n", name, (unsigned long long)(uintptr_t)p, len);
	fflush(stdout);
}

__attribute__((unused))
static void st_window(const char *name, uint64_t t0, uint64_t t1)
{
	printf("window %s %llu %llu\n", name, (unsigned long long)t0, (unsigned long long)t1);
	fflush(stdout);
}

__attribute__((unused))
static void st_tid(const char *name)
{
	printf("tid %s %ld\n", name, (long)syscall(SYS_gettid));
	fflush(stdout);
}

#endif
