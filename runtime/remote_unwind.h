/* remote_unwind.h: a faulting thread's stack unwound by the handler from its perf sample
 * (remote_unwind.c). */
#ifndef FL_REMOTE_UNWIND_H
#define FL_REMOTE_UNWIND_H

#include <stdint.h>

struct fl_runtime;
struct fl_fault_sample;

int fl_unwind_setup(struct fl_runtime *rt);
void fl_unwind_refresh_objects(void);
void fl_unwind_after_fork(void);
unsigned fl_unwind_sample(const struct fl_fault_sample *s, uint64_t *frames, unsigned max, uint16_t *flags);

#endif
