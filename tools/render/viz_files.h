/* viz_files.h: the names of the files `faultline visualize` writes, in one place: visualize writes
 * them (cmd/visualize.c) and `record --force` removes them from a reused output directory, by
 * these exact names only, so a file of the user's own there stays (record/record.c). */
#ifndef FAULTLINE_TOOLS_VIZ_FILES_H
#define FAULTLINE_TOOLS_VIZ_FILES_H

#include <stdbool.h>

/* The flame graphs: every fault (0), each kind (enum fl_fault_kind, 1 .. 5), allocation sites. */
#define VIZ_GRAPH_ALL 0
#define VIZ_GRAPH_ALLOC 6
#define VIZ_GRAPHS 7
extern const char *const viz_folded_name[VIZ_GRAPHS];     /* faults.folded, faults-KIND.folded, ... */
extern const char *const viz_flamegraph_name[VIZ_GRAPHS]; /* flamegraph.svg, flamegraph-KIND.svg, ... */

#define VIZ_FILE_RANGES "ranges.txt"
#define VIZ_FILE_HEATMAP "heatmap.svg"
#define VIZ_FILE_TIMELINE "timeline.svg"
#define VIZ_FILE_REPORT "report.html"

/* Whether NAME (a file name, no directory) is one of the files above. */
bool viz_is_output_name(const char *name);

#endif
