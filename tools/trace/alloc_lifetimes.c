/* alloc_lifetimes.c: when each logged object ended (alloc_lifetimes.h), for the verbs that draw
 * allocation lifetimes (visualize's heatmap and report.html). */
#include <stdlib.h>

#include "alloc_lifetimes.h"

/* One MALLOC/MMAP/FREE/MUNMAP record, for sorting by address then time. */
struct alloc_event {
	uint64_t addr, time;
	size_t index;
};

static int by_addr_time(const void *a, const void *b)
{
	const struct alloc_event *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

uint64_t *fl_alloc_end_times(const struct fl_process *proc)
{
	uint64_t *end = malloc((proc->nallocs + 1) * sizeof(*end));
	struct alloc_event *ev = malloc((proc->nallocs + 1) * sizeof(*ev));
	size_t open = SIZE_MAX;

	if (!end || !ev) {
		free(end);
		free(ev);
		return NULL;
	}
	for (size_t i = 0; i < proc->nallocs; i++) {
		end[i] = UINT64_MAX;
		ev[i] = (struct alloc_event){ proc->allocs[i].addr, proc->allocs[i].time_ns, i };
	}
	qsort(ev, proc->nallocs, sizeof(*ev), by_addr_time);
	for (size_t i = 0; i < proc->nallocs; i++) {
		const struct fl_alloc_record *a = &proc->allocs[ev[i].index];
		if (i == 0 || ev[i].addr != ev[i - 1].addr)
			open = SIZE_MAX;
		switch (a->kind) {
		case FL_ALLOC_MALLOC:
		case FL_ALLOC_MMAP:
			if (open != SIZE_MAX)
				end[open] = a->time_ns;
			open = ev[i].index;
			break;
		case FL_ALLOC_FREE:
			if (open != SIZE_MAX)
				end[open] = a->time_ns;
			open = SIZE_MAX;
			break;
		case FL_ALLOC_MUNMAP:
			if (open != SIZE_MAX && a->size >= proc->allocs[open].size) {
				end[open] = a->time_ns;
				open = SIZE_MAX;
			}
			break;
		default:
			break;
		}
	}
	free(ev);
	return end;
}

