/* trace_load_state.h: what the loader's files share (private to tools/trace/): the state of
 * loading one process, its error and warning lines, and binary files mapped and header-checked in
 * place (trace_load_state.c). It calls no loader file, so each of them (trace_load.c, which opens
 * a recording and loads its processes; trace_load_faults.c; trace_load_allocs.c;
 * trace_load_maps.c) and the queries (trace_query.c) stand on it without a circle. */
#ifndef FAULTLINE_TOOLS_TRACE_LOAD_STATE_H
#define FAULTLINE_TOOLS_TRACE_LOAD_STATE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace_file.h"
#include "trace_reader.h"

/* What a process owns besides its public arrays. */
struct fl_process_private {
	/* fault seq → index into faults: dense (seq_table[seq - seq_base], FL_NONE for a hole) when the
	 * seqs are compact, as the runtime numbers them; else indexes sorted by seq (fault_by_seq) */
	uint32_t *seq_table;
	uint64_t seq_base, seq_span;
	uint32_t *fault_by_seq;
	/* stack id → index into stacks: dense (stack_table[id], FL_NONE for none) when the ids are
	 * compact; else NULL and stacks are searched (sorted by id) */
	uint32_t *stack_table;
	uint32_t stack_span;
	uint32_t *alloc_by_id;      /* indexes into allocs of MALLOC/MMAP records, sorted by alloc_id */
	size_t nalloc_by_id;
	bool contexts_in_place;     /* proc->contexts points into the contexts mapping */
	uint32_t fault_record_size; /* as the faults file declares it */
	uint32_t fault_data_offset; /* its header_size: where its records start */
	uint32_t fault_version;     /* its format version */
	struct mapped_file stacks_file;   /* fl_stack.frames point into it */
	struct mapped_file contexts_file; /* proc->contexts may point into it */
	/* Opened for streaming (fl_recording_open_stream): faults and contexts are not held but read
	 * by fault_stream.c through reorder buffers of these widths, measured at the open */
	bool streaming;
	uint32_t fault_window;      /* puts the faults file in (time, seq) order */
	uint32_t context_window;    /* puts the contexts file in seq order */
	bool has_contexts;
	const struct fl_fault_context *stream_contexts; /* the open stream's two context slots: a
	                                                 * streamed fault's context indexes them */
};

/* What loading one process needs at hand: where errors go and which file is being read. */
struct loader {
	struct fl_recording *rec;
	struct fl_process *proc;
	char *err;
	size_t errlen;
	char path[PATH_MAX];            /* the file being read */
	struct fl_file_header faults_header; /* the reference the other headers must agree with */
	unsigned known;                 /* REF_* bits: which faults_header fields are known */
	uint64_t handlers;              /* meta.json "handlers", 0 if absent */
	size_t dangling;                /* references to missing records in the current file */
	uint64_t first_dangling;        /* offset of the first one */
	uint32_t record_size;           /* of the file being read (records may be longer than we know) */
	uint32_t data_offset;           /* its header_size: where its records start */
	uint32_t version;               /* its format version (1 or FL_TRACE_VERSION) */
	uint32_t *fault_file_index;     /* while loading: file index of each fault (in time order) */
	bool stream;                    /* fl_recording_open_stream: faults and contexts are scanned, not held */
	bool stacks_missing;            /* the process has no stacks file: references to it are warnings */
};

/* ------------------------------------------------------------ errors and warnings (trace_load_state.c) */

/* Appends one warning line to rec (counted as suppressed beyond FL_MAX_WARNINGS or without memory). */
void fl_load_warning(struct fl_recording *rec, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "PATH: offset N: reason" into the error buffer; returns -1. */
int fl_load_fail_at(struct loader *ld, uint64_t offset, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* "PATH: reason" into the error buffer; returns -1. */
int fl_load_fail(struct loader *ld, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "PATH: out of memory for WHAT"; returns -1. */
int fl_load_nomem(struct loader *ld, const char *what);

/* Sets ld->path to the process directory's file NAME; -1 (with the error) when too long. */
int fl_load_set_path(struct loader *ld, const char *name);

/* A reference to a record that is not in the trace, at OFFSET of the current file: corruption in
 * a complete trace (returns -1); in a trace that may be cut, counted for one warning per file and
 * ignored (returns 0, and the caller drops the reference). */
int fl_load_dangling(struct loader *ld, uint64_t offset, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Ends the dangling-reference count of the current file with its warning. */
void fl_load_report_dangling(struct loader *ld, const char *what);

/* ------------------------------------------------------------ files (trace_load_state.c) */

/* Maps the current file (ld->path) read-only. Returns 1 with *out, 0 when it does not exist, -1
 * on error. Maps the size fstat reported: a file still growing is read as it was when opened. */
int fl_load_map(struct loader *ld, struct mapped_file *out);

/* Unmaps a file (an empty or unmapped one is fine) and clears *file. */
void fl_load_unmap(struct mapped_file *file);

/* Checks the header of the current file (ld->path), of KIND, from its first LEN bytes at DATA, as
 * fl_load_binary does (the faults header becomes the reference), without mapping the file. 0, or
 * -1 (the error in ld->err, or a header cut short). */
int fl_load_header(struct loader *ld, const unsigned char *data, size_t len, uint32_t kind);

/* The process's page size, start time, region and fault record layout, from the faults header
 * fl_load_header or fl_load_binary checked. */
void fl_load_take_fault_header(const struct loader *ld, struct fl_process *proc);

/* The records stats.json accounts for: its faults_total plus access_samples (records, not faults),
 * and records_dropped (0 if absent). False when it has no faults_total. A trace may hold more
 * records than counted (faults served after the last stats.json), never fewer unless some were lost. */
bool fl_load_stats_records(const struct fl_process *proc, uint64_t *counted, uint64_t *dropped);

/* Maps the process's binary file NAME of KIND and checks its header (setting ld->record_size,
 * data_offset and version). Returns 1 with the mapping and the number of complete fixed-size
 * records (0 for stacks and allocs.zst), 0 when the file is absent, -1 on error (unmapped). */
int fl_load_binary(struct loader *ld, const char *name, uint32_t kind, struct mapped_file *file, size_t *nrecords);

#endif
