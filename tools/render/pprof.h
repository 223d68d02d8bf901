/* pprof.h: a recording as a pprof profile (render stage, pprof.c) — the gzipped profile.proto that
 * `go tool pprof` reads (flame graph, -top, -list, -diff_base, ...).
 *
 * Sample types: faults, first_touch, refault, soft (count), and alloc_bytes (bytes) when the
 * recording has allocation-site records (sites files). One fault sample per distinct (process,
 * stack as named at the fault's time, thread, kind, allocation site) with the number of its faults in "faults" and in its kind's
 * column, labelled kind (string), thread (tid), process (pid) and alloc_site ("function file:line" of
 * the allocation site of the object hit, as `faultline report --by alloc` names it, or
 * "<unallocated>"). One allocation sample per site record, its bytes in alloc_bytes, labelled
 * kind "allocation", process and alloc_site.
 *
 * Stacks: a sample's leaf is its callsite (callsite.h, the frame `faultline report` ranks by: the
 * skipped machinery below it — libc, jemalloc, libfaultline ... — is left out, so pprof's flat
 * counts are report's), then every outer frame. A location is one recorded PC with its source lines,
 * inlined functions first and the function they were inlined into last (pprof's Location.line), so
 * pprof shows inlined frames. Functions are named as report names them (a label "bin+0xOFF" when
 * unsymbolized), with their source file. A fault's stack is named under the maps snapshot in force
 * at the fault's time, and its alloc_site label from the allocation's stack under the snapshot of
 * the allocation's time (callsite.h's rule, as report's rows), so one stack faulting before and
 * after a library was replaced makes samples of two stacks, and a PC named differently by two
 * snapshots two Locations; an allocation sample (a site aggregates the run) takes its stack's
 * first-use snapshot. Encoded with protobuf-c (from pprof_profile.proto),
 * compressed with zlib's gzip. */
#ifndef FAULTLINE_PPROF_H
#define FAULTLINE_PPROF_H

#include <stddef.h>
#include <stdint.h>

#include "callsite.h"
#include "trace_reader.h"

/* What pprof_write wrote. */
struct pprof_stats {
	size_t samples, locations, functions, strings;
	uint64_t faults;            /* faults in the samples (every fault of the recording) */
	size_t bytes;               /* gzipped size */
};

/* Writes the profile of REC, with callsites from TABLE, gzipped to PATH (created or truncated).
 * 0, or -1 with a reason in err (out of memory, or the failing call on PATH with errno). */
int pprof_write(const struct fl_recording *rec, struct callsite_table *table, const char *path,
		struct pprof_stats *stats, char *err, size_t errlen);

#endif
