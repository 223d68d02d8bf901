/* timeline_phases.c: three phases for the counter timeline's test (tests/cases/timeline.sh):
 *   1. fill: one malloc of N MiB (default 32), every word written in address order (first touches;
 *      under a tight -L the early pages are evicted: far writes, never a far read);
 *   2. pause: sleeps S ms (default 1000), touching nothing;
 *   3. re-read: every word read back and verified (under a tight -L: refaults, far reads).
 * Nothing is allocated or printed between the phases. At the end it prints the checksum and
 * "phases FILL_END SLEEP_END" (CLOCK_MONOTONIC ns at the end of the fill and of the sleep), which
 * the test places on the timeline with meta.json's start_ns.
 *
 * usage: timeline_phases [N_MiB] [S_ms] */
#include "planted.h"

#include <time.h>

static uint64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	size_t mib = arg_ulong(argc, argv, 1, 32);
	unsigned long sleep_ms = arg_ulong(argc, argv, 2, 1000);
	size_t bytes = mib * MiB, nwords = bytes / sizeof(uint64_t);
	uint64_t *buf = malloc(bytes);
	if (!buf)
		die_errno("malloc(%zu MiB)", mib);
	fill_words(buf, nwords, 0x7111);
	uint64_t fill_end = monotonic_ns();
	struct timespec pause = { (time_t)(sleep_ms / 1000), (long)(sleep_ms % 1000) * 1000000L };
	while (nanosleep(&pause, &pause) != 0)
		;
	uint64_t sleep_end = monotonic_ns();
	uint64_t sum = verify_words(buf, nwords, 0x7111, "re-read");
	printf("timeline_phases %zu MiB checksum %016llx\n", mib, (unsigned long long)sum);
	fprintf(stderr, "phases %llu %llu\n", (unsigned long long)fill_end, (unsigned long long)sleep_end);
	free(buf);
	return 0;
}
