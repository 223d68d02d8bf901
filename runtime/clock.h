/* clock.h: the runtime's clocks (clock.c), a leaf every subsystem may call. */
#ifndef FL_CLOCK_H
#define FL_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds: timestamps of records, timeouts, periods. */
uint64_t fl_now_ns(void);

/* CPU time in nanoseconds of thread TID of this process (0 when it is gone or TID is 0), or of
 * the whole process for TID -1. */
uint64_t fl_cpu_ns_of(int tid);

#endif
