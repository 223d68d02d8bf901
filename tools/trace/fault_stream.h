/* fault_stream.h: the faults of one process in time order, one at a time, each joined to its
 * context and to the allocation it hit — without holding the process's faults.
 *
 * A recording opened for streaming (fl_recording_open_stream, trace_reader.h) holds no fault and
 * no context: its faults are read here from the files, every time a verb walks them. The faults
 * file is a few runs in (time, seq) order, one per handler, interleaved in chunks; it is put in
 * order by a bounded reorder buffer (reorder.h) whose width the open measured. The contexts file
 * is put in seq order the same way, and each fault's context is taken from it as the fault comes:
 * contexts read ahead of their faults wait in a small table by seq. Memory is that of the two
 * buffers and the table (the files' disorder), never the number of faults.
 *
 * On a recording that holds its faults (fl_recording_open), a stream walks proc->faults: one loop
 * serves both.
 *
 * The fault returned, and its context (fl_fault_context), stay valid until the second call of
 * fl_fault_stream_next after it (a merge of several processes' streams holds each one's next fault
 * while the previous one is used). Streams of one process may nest: one opened, read and closed
 * while another is open, which then goes on as before. */
#ifndef FAULTLINE_TOOLS_FAULT_STREAM_H
#define FAULTLINE_TOOLS_FAULT_STREAM_H

#include <stddef.h>

#include "trace_reader.h"

struct fl_fault_stream;

/* Opens a stream of PROC's faults. 0, or -1 with a reason in err. */
int fl_fault_stream_open(const struct fl_process *proc, struct fl_fault_stream **out, char *err, size_t errlen);

/* The next fault: 1 with *f set, 0 at the end, -1 when the files cannot be read or disagree with
 * what the open found (fl_fault_stream_error says why). */
int fl_fault_stream_next(struct fl_fault_stream *s, const struct fl_fault **f);

/* Why the last fl_fault_stream_next returned -1. */
const char *fl_fault_stream_error(const struct fl_fault_stream *s);

void fl_fault_stream_close(struct fl_fault_stream *s);

#endif
