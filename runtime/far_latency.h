/* far_latency.h: the emulated latency and bandwidth of far requests (far_latency.c), a leaf of
 * the far store: far_store.c and far_prefetch.c pay it for every request. */
#ifndef FL_FAR_LATENCY_H
#define FL_FAR_LATENCY_H

#include <stddef.h>
#include <stdint.h>

struct fl_runtime;

/* Waits latency + bytes / bandwidth (nothing when neither is set); returns the ns waited. */
uint64_t fl_far_delay(struct fl_runtime *rt, size_t bytes);

#endif
