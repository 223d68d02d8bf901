/* pmu_events.h: the perf events --pmu may name, shared by `record` (which refuses a name it
 * does not know, or an event this machine cannot count) and the runtime (which opens them). */
#ifndef FAULTLINE_PMU_EVENTS_H
#define FAULTLINE_PMU_EVENTS_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct fl_pmu_event {
	const char *name;                    /* as perf names it */
	uint32_t type;                       /* PERF_TYPE_* */
	uint64_t config;
};

static const struct fl_pmu_event fl_pmu_events[] = {
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
};

#define FL_PMU_EVENT_COUNT (sizeof(fl_pmu_events) / sizeof(fl_pmu_events[0]))

/* The event named by name[0, len), or NULL. */
static inline const struct fl_pmu_event *fl_pmu_event_find(const char *name, size_t len)
{
	for (size_t i = 0; i < FL_PMU_EVENT_COUNT; i++)
		if (strlen(fl_pmu_events[i].name) == len && memcmp(fl_pmu_events[i].name, name, len) == 0)
			return &fl_pmu_events[i];
	return NULL;
}

#endif
