/* trace_file.h: one binary file of a recording, the part every reader of one shares: the file
 * mapped read-only, its fl_file_header checked (magic and byte order, version, kind, header_size,
 * record_size, pid, and the fields every header of a process must agree on), and its complete
 * fixed-size records counted, with the one wording for a file cut inside its header or a record.
 *
 * Used by the recording's loader (trace_load.c: faults, stacks, allocs, contexts, sites) and by the
 * reader of the optional side files (side_file.c: evictions, timeline). The format is
 * inc/faultline/trace.h. */
#ifndef FAULTLINE_TOOLS_TRACE_FILE_H
#define FAULTLINE_TOOLS_TRACE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <faultline/trace.h>

#define FL_HEADER_SIZE ((uint32_t)sizeof(struct fl_file_header))

/* A file of the recording mapped read-only (or an empty one: data NULL, len 0). The mapping is
 * private: once made writable, pages written are copies (the file is never written). */
struct mapped_file {
	const unsigned char *data;
	size_t len;
	bool writable;             /* fl_trace_file_make_writable was called */
	char note[1024];           /* a framed file (format 3) whose frames stopped early: why, naming the
	                            * file, frame and offset (else ""); the reader warns with it */
};

/* Header fields a file must agree on with its reference (meta.json or the faults header). */
enum {
	REF_PAGE_SIZE = 1,
	REF_START_NS = 2,
	REF_REGION_START = 4,
	REF_REGION_SIZE = 8,
};

/* What the header of one file must say. */
struct fl_header_want {
	const char *path;                  /* named in error lines */
	uint32_t kind;                     /* enum fl_file_kind */
	uint32_t pid;                      /* the process directory's pid, and its name */
	const char *proc_name;
	const struct fl_file_header *ref;  /* the reference for page_size, start_ns and the region */
	unsigned known;                    /* REF_* bits: which of ref's fields are known */
	const char *ref_name;              /* "meta.json", "the faults header" */
};

/* What the header said, as far as the file holds it. */
struct fl_header_found {
	struct fl_file_header hdr; /* zero past the end of a file shorter than a header */
	uint32_t version;          /* its format version (FL_TRACE_VERSION when the file is too short to say) */
	uint32_t data_offset;      /* its header_size: where the records start */
	uint32_t record_size;      /* as declared: at least the known record, maybe longer (trace.h) */
	bool complete;             /* the file holds its whole header */
};

/* Maps PATH read-only; a framed file (faults, contexts, evictions of format 3) is decoded into
 * memory instead, as a header and fixed-size records (frame_decode.c), with out->note saying why
 * when its frames stopped early. Returns 1 with *out (data NULL for an empty file), 0 when it does not exist,
 * -1 with "PATH: call: reason" in err. Maps the size fstat reported: a file still growing is read
 * as it was when opened. */
int fl_trace_file_map(const char *path, struct mapped_file *out, char *err, size_t errlen);

/* Lets the caller write into the mapping of PATH (copy on write, page by page: only the pages written
 * are copied). Returns 0, or -1 with "PATH: mprotect ...: reason" in err. */
int fl_trace_file_make_writable(const char *path, struct mapped_file *file, char *err, size_t errlen);

/* Unmaps a file (an empty or unmapped one is fine) and clears *file. */
void fl_trace_file_unmap(struct mapped_file *file);

/* Checks the header in the LEN bytes at DATA against WANT. A file shorter than its header is
 * accepted when what it holds is a valid beginning of one (found->complete false: a crash between
 * creating and writing it). A header or record longer than this reader knows (fields of a later
 * version) is accepted; its tail is skipped. Returns 0, or -1 with "PATH: offset N: what is wrong". */
int fl_trace_file_check_header(const struct fl_header_want *want, const unsigned char *data, size_t len,
			       struct fl_header_found *found, char *err, size_t errlen);

/* The number of complete records in a file of LEN bytes with fixed-size records. When the file is
 * cut (inside its header, or inside a record), one line saying so goes to WARNING (else ""). */
size_t fl_trace_file_count_records(const char *path, const struct fl_header_found *found, size_t len,
				   char *warning, size_t warnlen);

/* The file's name for a kind ("faults", "timeline", ...; "unknown" outside enum fl_file_kind). */
const char *fl_trace_file_kind_name(uint32_t kind);

#endif
