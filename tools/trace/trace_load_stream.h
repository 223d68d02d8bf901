/* trace_load_stream.h: a process loaded for streaming (trace_load_stream.c), for trace_load.c. */
#ifndef FAULTLINE_TOOLS_TRACE_LOAD_STREAM_H
#define FAULTLINE_TOOLS_TRACE_LOAD_STREAM_H

#include "trace_load_state.h"

/* The process's shape is not one streamed: open the recording the holding way. */
#define FL_LOAD_HOLD 1

/* Loads ld->proc for streaming, after its meta.json and stats.json: 0, or FL_LOAD_HOLD. */
int fl_load_stream_process(struct loader *ld);

#endif
