/* fault_sample.h: the perf sample of every fault (fault_sample.c): each application thread's
 * perf group, registered by tid for the handlers, and what a fault's sample says. */
#ifndef FL_FAULT_SAMPLE_H
#define FL_FAULT_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>

#include "thread_ctx.h"

struct fl_runtime;

int fl_sample_setup(struct fl_runtime *rt);
void fl_sample_thread_start(struct fl_thread *t);
void fl_sample_thread_stop(struct fl_thread *t);
void fl_sample_thread_ended(struct fl_thread *t);
void fl_sample_thread_begins(struct fl_thread *t);
void fl_sample_after_fork(struct fl_thread *t);
void fl_sample_registry_after_fork(void);
unsigned fl_sample_read_counters(struct fl_thread *t, uint64_t *values);
bool fl_sample_take(uint32_t tid, uint64_t page_addr, struct fl_fault_sample *out);
void fl_sample_release(struct fl_fault_sample *s);
uint64_t fl_sample_reg(const struct fl_fault_sample *s, int perf_reg);

#endif
