/* tests/unit/trace_header.h: the one builder of trace-file headers (inc/faultline/trace.h) for the
 * C tests that write recordings by hand: the unit tests (tests/unit/test_*.c) and
 * tests/helpers/plant_recording.c. Header-only; include it after <faultline/trace.h>.
 *
 *     struct fl_file_header h = trace_header(FL_TRACE_VERSION, FL_FILE_FAULTS, size, pid);
 *     h.start_ns = ...;   (the fields a test cares about, set after)
 *
 * It fills what every valid header has: the magic, the header's own size (64: records follow it),
 * a 4 KiB page; everything else is zero. A test that wants a broken header breaks it after. */
#ifndef FAULTLINE_TESTS_TRACE_HEADER_H
#define FAULTLINE_TESTS_TRACE_HEADER_H

#include <stdint.h>

#include <faultline/trace.h>

static inline struct fl_file_header trace_header(uint32_t version, uint32_t kind, uint32_t record_size, uint32_t pid)
{
	return (struct fl_file_header){ .magic = FL_TRACE_MAGIC, .version = version, .kind = kind,
					.header_size = sizeof(struct fl_file_header), .record_size = record_size,
					.pid = pid, .page_size = 4096 };
}

#endif
