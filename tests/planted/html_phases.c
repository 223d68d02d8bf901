/* html_phases.c: two phases on two buffers, for report.html's linked views (tests/cases/
 * visualize_html.sh). Both buffers are allocated first, so no allocation runs inside a phase:
 *   1. phase_one_fill writes every word of buffer A (N MiB, default 8);
 *   2. a pause of S ms (default 300), touching nothing;
 *   3. phase_two_fill writes every word of buffer B (N MiB).
 * Nothing is read back: a check would fault on B from a third callsite.
 * The phases are separate non-inlined functions, so each phase's faults have one callsite of
 * their own. At the end it prints, on stderr,
 *   "phases A_ADDR B_ADDR BYTES PAUSE_START PAUSE_END"
 * (addresses in hex, times CLOCK_MONOTONIC ns), with which the test finds phase 2's rectangle.
 *
 * usage: html_phases [N_MiB] [S_ms] */
#include "planted.h"

#include <time.h>

static uint64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void phase_one_fill(uint64_t *a, size_t nwords)
{
	for (size_t i = 0; i < nwords; i++)
		a[i] = i * 0x9e3779b97f4a7c15ull + 1;
}

__attribute__((noinline)) static void phase_two_fill(uint64_t *b, size_t nwords)
{
	for (size_t i = 0; i < nwords; i++)
		b[i] = i * 0xc2b2ae3d27d4eb4full + 2;
}

int main(int argc, char **argv)
{
	size_t mib = arg_ulong(argc, argv, 1, 8);
	unsigned long pause_ms = arg_ulong(argc, argv, 2, 300);
	size_t bytes = mib * MiB, nwords = bytes / sizeof(uint64_t);
	uint64_t *a = malloc(bytes), *b = malloc(bytes);

	if (!a || !b)
		die_errno("malloc(%zu MiB)", mib);
	phase_one_fill(a, nwords);
	uint64_t pause_start = monotonic_ns();
	struct timespec pause = { (time_t)(pause_ms / 1000), (long)(pause_ms % 1000) * 1000000L };
	while (nanosleep(&pause, &pause) != 0)
		;
	uint64_t pause_end = monotonic_ns();
	phase_two_fill(b, nwords);
	fprintf(stderr, "phases %#lx %#lx %zu %llu %llu\n", (unsigned long)(uintptr_t)a, (unsigned long)(uintptr_t)b,
		bytes, (unsigned long long)pause_start, (unsigned long long)pause_end);
	free(a);
	free(b);
	return 0;
}
