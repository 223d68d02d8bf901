/* region.h: the region's start-up and its exhaustion report (region.c); the allocator the shim
 * calls is in runtime_api.h. */
#ifndef FL_REGION_H
#define FL_REGION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fl_runtime;

int fl_region_setup(struct fl_runtime *rt);
void fl_region_report_exhausted(size_t request);

#endif
