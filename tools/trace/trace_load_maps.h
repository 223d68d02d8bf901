/* trace_load_maps.h: loading a process's maps snapshots (trace_load_maps.c), for trace_load.c's process loader. */
#ifndef FAULTLINE_TOOLS_TRACE_LOAD_MAPS_H
#define FAULTLINE_TOOLS_TRACE_LOAD_MAPS_H

#include "trace_load_state.h"

int fl_load_maps(struct loader *ld); /* the maps snapshots */

#endif
