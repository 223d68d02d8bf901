/* timeline_steps.c: a counter's steps between consecutive valid samples (timeline_steps.h). */
#include "timeline_steps.h"

#include <stdbool.h>

#include "timeline.h"

size_t timeline_steps(const struct fl_timeline_record *recs, const uint64_t *x_ns, size_t n, unsigned c,
		      struct timeline_step *out)
{
	bool gauge = fl_timeline_counter_is_gauge(c);
	size_t steps = 0, prev = SIZE_MAX;

	for (size_t i = 0; i < n; i++) {
		if (!((recs[i].valid >> c) & 1u) || x_ns[i] == UINT64_MAX)
			continue;
		if (prev != SIZE_MAX && x_ns[i] < x_ns[prev])
			continue; /* back in time: the step would run backwards */
		if (prev != SIZE_MAX) {
			uint64_t dx = x_ns[i] - x_ns[prev], a = recs[prev].values[c], b = recs[i].values[c];
			double v;
			if (gauge)
				v = (double)b;
			else
				v = b > a && dx ? (double)(b - a) * 1e9 / (double)dx : 0;
			if (dx || gauge)
				out[steps++] = (struct timeline_step){ x_ns[prev], x_ns[i], a, b, v };
		}
		prev = i;
	}
	return steps;
}
