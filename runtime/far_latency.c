/* far_latency.c: emulated far-memory latency and bandwidth (record --far-latency USEC,
 * --far-bandwidth MBPS). Every far request — a refault's read, a write-back batch, a read-ahead
 * batch — waits latency + bytes / bandwidth on top of what the backend itself takes, so the
 * in-memory store can stand in for a slower technology and the others can be slowed further.
 *
 * The wait sleeps (clock_nanosleep to an absolute deadline, with this thread's timer slack set
 * to 1 ns so the kernel does not round it up by the default 50 µs) and spins the last 10 µs on
 * the vDSO clock, so short delays are accurate to about a microsecond without burning a whole
 * CPU on long ones. Waiting handlers hold no lock an application thread takes. */
#include "far_latency.h"
#include "context.h"

#include <errno.h>
#include <sys/prctl.h>
#include <time.h>

#define SPIN_NS 10000ULL

static __thread int slack_set;

uint64_t fl_far_delay(struct fl_runtime *rt, size_t bytes)
{
	struct fl_far_state *fs = &rt->farst;
	uint64_t ns = fs->latency_ns;
	if (fs->bandwidth)
		ns += (uint64_t)(((unsigned __int128)bytes * 1000000000u) / fs->bandwidth);
	if (ns == 0)
		return 0;
	uint64_t start = fl_now_ns(), end = start + ns, now;
	if (ns > 2 * SPIN_NS) {
		if (!slack_set) {
			prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
			slack_set = 1;
		}
		uint64_t wake = end - SPIN_NS;
		struct timespec ts = { .tv_sec = (time_t)(wake / 1000000000u), .tv_nsec = (long)(wake % 1000000000u) };
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
	}
	while ((now = fl_now_ns()) < end)
		__builtin_ia32_pause();
	atomic_fetch_add_explicit(&fs->stats.delay_ns, now - start, memory_order_relaxed);
	return now - start;
}
