/* side_file.h: the one reader of a process's side files — optional streams of fixed-size records
 * (evictions, timeline: inc/faultline/trace.h) that a recording opens without, read whole on
 * demand by the verbs that show them.
 *
 * The file is mapped and its header checked as the recording's own files are (trace_file.h:
 * magic and byte order, version, kind, header_size, record_size of at least the known record, pid,
 * page size, clock origin and region against the process); its records are copied out by their
 * known prefix (a newer writer's longer records keep their tail unread), or, for a reader that only
 * reads them, left where they lie in the mapping when they are exactly the known size. A file cut inside its
 * header or a record (SIGKILL) keeps its complete records and says so in `warning`. What a record
 * may hold is left to its reader (evictions.c, timeline.c). */
#ifndef FAULTLINE_TOOLS_SIDE_FILE_H
#define FAULTLINE_TOOLS_SIDE_FILE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace_file.h"
#include "trace_reader.h"

/* The longest warning line a side file's reader gives (a path and what was cut). */
#define FL_SIDE_WARNING_MAX (PATH_MAX + 256)

struct fl_side_file {
	bool present;                      /* the process has the file */
	const void *recs;                  /* n records of the known size each: copy, or in map; NULL when n is 0 */
	size_t n;
	void *copy;                        /* recs when copied out (malloc'd; the reader may keep and write it) */
	struct mapped_file map;            /* the read-only mapping recs point into, when in place */
	uint32_t data_offset, record_size; /* as the file declares: record i is at data_offset + i * record_size */
	char path[PATH_MAX];
	char warning[FL_SIDE_WARNING_MAX]; /* "" or one line: the file was cut */
};

/* Checks record I of FILE (what its reader knows of it, at file->recs): 0, or -1 with the line of
 * fl_side_file_fail_at in err. ARG is the reader's. */
typedef int (*fl_side_record_check)(const struct fl_side_file *file, size_t i, const void *arg, char *err,
				    size_t errlen);

/* How the records are handed over. */
enum fl_side_records {
	FL_SIDE_COPY,      /* always copied out (file->copy): the reader may write them and keep them */
	FL_SIDE_IN_PLACE,  /* read-only, in the mapping when the records are the known size (a copy otherwise) */
};

/* Reads PROC's side file NAME of KIND, whose records this reader knows the first KNOWN_SIZE bytes
 * of, and checks each complete record with CHECK (with ARG). Returns 0 (present false and nothing
 * allocated when there is no file), or -1 with one line "PATH: offset N: what is wrong" (or "PATH:
 * call: reason") in err and *out empty. fl_side_file_free releases the records. */
int fl_side_file_read(const struct fl_process *proc, const char *name, uint32_t kind, size_t known_size,
		      enum fl_side_records how, fl_side_record_check check, const void *arg, struct fl_side_file *out,
		      char *err, size_t errlen);

/* The file offset of record I (for error lines naming it). */
uint64_t fl_side_file_offset(const struct fl_side_file *file, size_t i);

/* A record that is wrong: "PATH: offset N: reason" in err, N the offset of the field at FIELD_OFFSET
 * of record I; returns -1. */
int fl_side_file_fail_at(const struct fl_side_file *file, size_t i, size_t field_offset, char *err, size_t errlen,
			 const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Frees the copy and unmaps the file (a reader that kept file->copy sets it to NULL first). */
void fl_side_file_free(struct fl_side_file *file);

#endif
