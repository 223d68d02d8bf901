/* clock.h: the runtime's one clock (clock.c), a leaf every subsystem may call. */
#ifndef FL_CLOCK_H
#define FL_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds: timestamps of records, timeouts, periods. */
uint64_t fl_now_ns(void);

#endif
