/* timeline.h: counters sampled over time (timeline.c, trace.h "Timeline"). */
#ifndef FL_TIMELINE_H
#define FL_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fl_runtime;
struct fl_handler;
struct fl_buf;

int fl_timeline_setup(struct fl_runtime *rt);            /* before fl_trace_open: settings (meta.json) */
int fl_timeline_start(struct fl_runtime *rt);            /* after the handlers: file and sampler thread */
void fl_timeline_after_fork(struct fl_runtime *rt);      /* child: its own file, thread and counters */
void fl_timeline_fault(struct fl_handler *h);            /* fault path: every N-th fault, no syscall */
void fl_timeline_shutdown(struct fl_runtime *rt);        /* a final sample, everything written */
void fl_timeline_json_meta(struct fl_runtime *rt, struct fl_buf *b);

#endif
