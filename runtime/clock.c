/* clock.c: the runtime's monotonic clock and CPU clocks in nanoseconds (clock.h). */
#include "clock.h"

#include <time.h>

uint64_t fl_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A thread's CPU clock by its id, as pthread_getcpuclockid makes it: no pthread_t needed, so a
 * thread that has exited, or a parent's thread id in a forked child, reads as 0. */
uint64_t fl_cpu_ns_of(int tid)
{
	struct timespec ts;
	clockid_t clock = tid < 0 ? CLOCK_PROCESS_CPUTIME_ID : (clockid_t)((~(unsigned)tid << 3) | 6);
	if (tid == 0 || clock_gettime(clock, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
