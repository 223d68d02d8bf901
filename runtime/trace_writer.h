/* trace_writer.h: the trace directory's files (trace_writer.c): the fault records, meta.json and
 * stats.json. */
#ifndef FL_TRACE_WRITER_H
#define FL_TRACE_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fl_runtime;
struct fl_handler;
struct fl_fault_record;

int fl_trace_open(struct fl_runtime *rt);
void fl_trace_append(struct fl_handler *h, const struct fl_fault_record *rec);
void fl_trace_flush(struct fl_handler *h);
/* fl_trace_flush when the oldest buffered record is AGE_NS old or more. */
void fl_trace_flush_if_old(struct fl_handler *h, uint64_t age_ns);
void fl_trace_write_meta(struct fl_runtime *rt);
/* stats.json, written at shutdown and again by handlers that serve faults after it (one writer
 * at a time; given up when a fatal signal interrupted the writer) */
void fl_trace_write_stats(struct fl_runtime *rt);

#endif
