/* viz_files.c: the names of visualize's files (viz_files.h). */
#include "viz_files.h"

#include <string.h>

#include <faultline/trace.h>

_Static_assert(FL_FAULT_KIND_MAX == 5 && VIZ_GRAPH_ALLOC == FL_FAULT_KIND_MAX + 1,
	       "one flame graph per fault kind, then the allocation sites'");

const char *const viz_folded_name[VIZ_GRAPHS] = {
	"faults.folded", "faults-first-touch.folded", "faults-refault.folded", "faults-soft.folded",
	"faults-concurrent.folded", "faults-access.folded", "faults-alloc.folded",
};

const char *const viz_flamegraph_name[VIZ_GRAPHS] = {
	"flamegraph.svg", "flamegraph-first-touch.svg", "flamegraph-refault.svg", "flamegraph-soft.svg",
	"flamegraph-concurrent.svg", "flamegraph-access.svg", "flamegraph-alloc.svg",
};

bool viz_is_output_name(const char *name)
{
	static const char *const others[] = { VIZ_FILE_RANGES, VIZ_FILE_HEATMAP, VIZ_FILE_TIMELINE, VIZ_FILE_REPORT };

	for (unsigned i = 0; i < VIZ_GRAPHS; i++)
		if (strcmp(name, viz_folded_name[i]) == 0 || strcmp(name, viz_flamegraph_name[i]) == 0)
			return true;
	for (unsigned i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		if (strcmp(name, others[i]) == 0)
			return true;
	return false;
}
