/* pmu.h: the --pmu events and the one perf_event_open of the runtime (pmu.c). */
#ifndef FL_PMU_H
#define FL_PMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fl_runtime;
struct perf_event_attr;

int fl_pmu_setup(struct fl_runtime *rt);
void fl_pmu_attr(const struct fl_runtime *rt, unsigned i, struct perf_event_attr *attr);
/* The timeline's counters of one thread (any thread of this process), as one group read with
 * read(2): task-clock (leader), page-faults, context-switches, and instructions, cycles when
 * `hardware`. Returns how many were opened into fds (0: none; fds[0] leads). */
unsigned fl_pmu_open_thread_counters(int tid, bool hardware, int *fds, unsigned max);
int fl_perf_event_open(int tid, struct perf_event_attr *attr, int group_fd); /* the one opener */
bool fl_pmu_hardware_present(void);      /* this machine counts instructions and cycles */

#endif
