/* record_stream.h: the records of one fault, context or eviction file read one at a time, in file
 * order, in bounded memory: a framed file (format 3, inc/faultline/trace.h "Framed files") one
 * frame at a time (its compressed bytes read, decompressed into one reused buffer and decoded
 * record by record), a file of fixed-size records (format 2) through one reused read buffer. The
 * memory is that of one frame, whatever the file's size; nothing is mapped, so reading a large
 * file does not grow the reader's resident set.
 *
 * For the verbs that aggregate while reading (fault_stream.h); the loader that holds a whole
 * recording (trace_reader.h) maps and decodes files whole instead. Version-1 files (32-bit seqs)
 * are not read here: fl_record_stream_open says so and the caller loads them the other way. */
#ifndef FAULTLINE_TOOLS_RECORD_STREAM_H
#define FAULTLINE_TOOLS_RECORD_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <faultline/record_codec.h>
#include <faultline/trace.h>

struct fl_record_stream {
	int fd;
	uint32_t kind;              /* FL_FILE_FAULTS, FL_FILE_CONTEXTS or FL_FILE_EVICTIONS */
	bool framed;
	uint32_t version;           /* the file's format version (the codec reads wait_ns from 4 on) */
	uint32_t disk_size;         /* flat files: the record size the header declares */
	size_t struct_size;         /* the decoded struct of the kind */
	uint64_t offset, len;       /* the next byte to read, and the file's size when opened */
	unsigned char *buf;         /* flat: records read; framed: one frame's compressed bytes */
	size_t buf_cap, buf_len, buf_pos;
	unsigned char *plain;       /* framed: the frame decompressed */
	const unsigned char *pos, *end;
	uint32_t left;              /* records of the current frame not decoded yet */
	uint32_t frame;             /* frames read */
	void *dctx;                 /* ZSTD_DCtx */
	struct fl_codec_state codec;   /* the frame's previous record */
	char path[4096];
	char note[640];             /* why the last fl_record_stream_next returned -1 */
};

/* Opens PATH, a file of KIND. Returns 1 (ready), 0 when the file does not exist, -1 with a reason
 * in err: it cannot be read, its header is not one this stream reads (another kind, version 1, a
 * record shorter than the version's), or memory ran out. Headers are checked in full by the
 * loader (trace_file.h); this checks only what it needs to read. */
int fl_record_stream_open(struct fl_record_stream *s, const char *path, uint32_t kind, char *err, size_t errlen);

/* The next record, decoded into REC (the kind's struct; fields a shorter record lacks are zero).
 * Returns 1, 0 at the end of the file, -1 with s->note set when the file is cut inside a record
 * or a frame, a frame is bad, or a read fails. */
int fl_record_stream_next(struct fl_record_stream *s, void *rec);

/* Goes back to the first record. 0, or -1 with s->note set. */
int fl_record_stream_rewind(struct fl_record_stream *s);

/* The number of complete records of the file: counted from the frame headers alone (framed) or
 * from its size. -1 with s->note set when the file is cut or a frame header is bad. */
int64_t fl_record_stream_count(struct fl_record_stream *s);

void fl_record_stream_close(struct fl_record_stream *s);

#endif
