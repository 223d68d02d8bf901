/* clock.c: the runtime's monotonic clock in nanoseconds (clock.h). */
#include "clock.h"

#include <time.h>

uint64_t fl_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
