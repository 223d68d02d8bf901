/* pmu.c: the PMU context of faults — per-thread perf counters, read by the faulting thread.
 *
 * Events come from FAULTLINE_PMU (comma-separated perf names) or, by default, hardware
 * instructions and cycles where the machine has them, else the software events task-clock,
 * page-faults and context-switches (this VM has no hardware PMU). Each event is probed once
 * at start; an event the user asked for that is not available is dropped with one message on
 * stderr; meta.json records the events actually used and whether they are hardware or software
 * events (`record` says so once in its summary). Each thread's counters are members of its perf
 * group (fault_sample.c), whose samples carry their values at every fault without a read(2). */
#include "pmu.h"
#include "fds.h"
#include "context.h"
#include "diag.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "faultline/env.h"
#include "faultline/pmu_events.h"

static void counter_attr(struct perf_event_attr *attr, uint32_t type, uint64_t config)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = type;
	attr->config = config;
	attr->read_format = PERF_FORMAT_GROUP;
	attr->exclude_hv = 1;
}

/* The runtime's one perf_event_open: event ATTR on thread tid (0: the calling thread), any CPU,
 * in GROUP_FD's group (-1: a new group), close-on-exec. Counters here, samples in fault_sample.c. */
int fl_perf_event_open(int tid, struct perf_event_attr *attr, int group_fd)
{
	return fl_fd_keep((int)syscall(SYS_perf_event_open, attr, tid, -1, group_fd, PERF_FLAG_FD_CLOEXEC));
}

static int open_counter(uint32_t type, uint64_t config, int group_fd)
{
	struct perf_event_attr attr;
	counter_attr(&attr, type, config);
	return fl_perf_event_open(0, &attr, group_fd);
}

/* Adds the event if this machine can count it; returns false (and says why) if not. */
static bool add_event(struct fl_runtime *rt, const char *name, size_t len, bool quiet)
{
	const struct fl_pmu_event *e = fl_pmu_event_find(name, len);
	char msg[200];
	struct fl_buf b = { msg, 0, sizeof(msg) };
	if (e && rt->pmu_count < FL_PMU_MAX) {
		int fd = open_counter(e->type, e->config, -1);
		if (fd >= 0) {
			fl_sys_close(fd);
			rt->pmu_type[rt->pmu_count] = e->type;
			rt->pmu_config[rt->pmu_count] = e->config;
			rt->pmu_count++;
			struct fl_buf names = { rt->pmu_names, strlen(rt->pmu_names), sizeof(rt->pmu_names) };
			if (names.len)
				fl_buf_str(&names, ",");
			fl_buf_str(&names, e->name);
			rt->pmu_hardware |= e->type == PERF_TYPE_HARDWARE;
			return true;
		}
	}
	if (!quiet) {
		fl_buf_str(&b, "PMU event '");
		for (size_t i = 0; i < len && b.len + 2 < b.cap; i++)
			b.p[b.len++] = name[i], b.p[b.len] = '\0';
		fl_buf_str(&b, e ? "' is not available on this machine: left out" : "' is unknown: left out");
		if (!e || rt->pmu_count < FL_PMU_MAX)
			fl_log(msg);
	}
	return false;
}

int fl_pmu_setup(struct fl_runtime *rt)
{
	const char *spec = getenv(FL_ENV_PMU);
	rt->pmu_count = 0;
	rt->pmu_names[0] = '\0';
	rt->pmu_hardware = false;
	if (spec && *spec) {
		if (strcmp(spec, "none") == 0)
			return 0;
		for (const char *p = spec; *p;) {
			const char *end = strchr(p, ',');
			size_t len = end ? (size_t)(end - p) : strlen(p);
			if (len)
				add_event(rt, p, len, false);
			p += len + (end ? 1 : 0);
		}
		return 0;
	}
	if (add_event(rt, "instructions", 12, true) && add_event(rt, "cycles", 6, true))
		return 0;
	rt->pmu_count = 0, rt->pmu_names[0] = '\0', rt->pmu_hardware = false;
	add_event(rt, "task-clock", 10, true);
	add_event(rt, "page-faults", 11, true);
	add_event(rt, "context-switches", 16, true);
	return 0;
}

/* The perf attributes of --pmu event i, as a member (or leader) of a thread's group. */
void fl_pmu_attr(const struct fl_runtime *rt, unsigned i, struct perf_event_attr *attr)
{
	counter_attr(attr, rt->pmu_type[i], rt->pmu_config[i]);
}

/* ---- the timeline's per-thread counters (timeline.c) ----
 * Opened by the sampler thread on another thread of this process (pid = its tid), read with one
 * read(2) of the group leader. Software events always; hardware instructions and cycles where this
 * machine counts them (probed as for --pmu). Where perf_event_paranoid refuses kernel counting to
 * this user, the events count user space only. */
static int open_thread_counter(int tid, uint32_t type, uint64_t config, int group_fd)
{
	struct perf_event_attr attr;
	counter_attr(&attr, type, config);
	int fd = fl_perf_event_open(tid, &attr, group_fd);
	if (fd < 0 && errno == EACCES) {
		attr.exclude_kernel = 1;
		fd = fl_perf_event_open(tid, &attr, group_fd);
	}
	return fd;
}

bool fl_pmu_hardware_present(void)
{
	int fd = open_counter(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, -1);
	if (fd < 0)
		return false;
	fl_sys_close(fd);
	fd = open_counter(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, -1);
	if (fd < 0)
		return false;
	fl_sys_close(fd);
	return true;
}

unsigned fl_pmu_open_thread_counters(int tid, bool hardware, int *fds, unsigned max)
{
	static const struct { uint32_t type; uint64_t config; } events[] = {
		{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
		{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
		{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
		{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
		{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	};
	unsigned n = 0, want = hardware ? 5 : 3;
	for (unsigned i = 0; i < want && n < max; i++) {
		int fd = open_thread_counter(tid, events[i].type, events[i].config, n ? fds[0] : -1);
		if (fd < 0)
			break; /* the group's members are in a fixed order: stop at the first missing */
		fds[n++] = fd;
	}
	return n;
}
