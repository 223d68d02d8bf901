/* stream.h: per-thread record streams into the trace's shared files.
 *
 * A stream is a small buffer owned by one thread (and one context: normal code or the stack
 * signal's handler, never both, so an interrupted append is never re-entered). Records are
 * appended whole; a full buffer is written to its file with one write(2) (the files are
 * O_APPEND, so buffers of different threads never interleave inside a record), or, for the
 * framed files (contexts, evictions), handed to the frame writer (frame_writer.h). The streams
 * own their files' descriptors (fl_stream_file_set). Other threads
 * may flush a stream (at exit, or when its thread is gone): a per-stream lock, held only
 * around memcpy and write(2), orders them. Nothing here allocates or touches the region. */
#ifndef FL_STREAM_H
#define FL_STREAM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FL_STREAM_BYTES 8192

enum fl_stream_file { FL_SF_CONTEXTS = 0, FL_SF_STACKS, FL_SF_ALLOCS, FL_SF_EVICTIONS, FL_SF_TIMELINE, FL_SF_COUNT };

struct fl_stream {
	_Atomic int lock;
	uint32_t len;
	uint8_t file;                /* enum fl_stream_file */
	char buf[FL_STREAM_BYTES];
};

void fl_stream_init(struct fl_stream *s, enum fl_stream_file file);
void fl_stream_append(struct fl_stream *s, const void *a, size_t alen, const void *b, size_t blen);
void fl_stream_flush(struct fl_stream *s);
bool fl_stream_try_flush(struct fl_stream *s); /* at exit: never waits long for the lock */
void fl_stream_flush_if_free(struct fl_stream *s); /* periodic, from another thread: never waits */
void fl_stream_discard(struct fl_stream *s);  /* in a forked child: the parent writes its own */
void fl_streams_after_fork(void);              /* the child's new files have not failed, nothing lost */
/* From shutdown on (runtime.c, with final_mode), every append is written at once. */
void fl_streams_write_through(bool on);

/* Side records (everything but faults: streams, the full allocation log, sites, maps) lost to
 * failed writes, counted here for stats.json: BYTES lost; ERR the errno of a failed write. */
void fl_side_dropped(uint64_t bytes);
void fl_side_write_failed(int err);
uint64_t fl_side_bytes_dropped(void);
int fl_side_write_errno(void);

/* The streams' files: a stream writes to the descriptor of its file kind, which this file owns
 * from fl_stream_file_set on (the trace writer opens the files, the timeline its own). A kind
 * without a file (-1, or never set) drops what its streams write. */
void fl_stream_file_set(enum fl_stream_file file, int fd);
int fl_stream_file_fd(enum fl_stream_file file);
void fl_stream_files_close(void);              /* in a forked child: the parent's files */

#endif
