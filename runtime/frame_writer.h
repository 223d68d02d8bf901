/* frame_writer.h: the framed, compressed record files of a format-3 trace — faults, contexts,
 * evictions (inc/faultline/trace.h, "Framed files") — and the writer thread that encodes,
 * compresses and writes them, so that no fault handler and no application thread ever
 * compresses or waits for the disk.
 *
 * Producers (a handler's full fault buffer, a thread's full context stream, an eviction stream)
 * hand a block of raw records over with fl_frames_submit: one memcpy into a free slot of a fixed
 * pool, and an eventfd write when the writer sleeps. The writer takes the slots in the order they
 * were handed over (so one producer's records keep their order), delta-codes them into the
 * file's open frame, and compresses and writes the frame once it is large (or has waited
 * ~0.5 s: a crash loses at most the frame being built). With no free slot the producer waits (the
 * back-pressure, counted as the handlers' write wait). At shutdown fl_frames_drain writes
 * everything and switches to writing at once, on the caller's thread. Nothing here allocates
 * after setup or touches the region; the slots, the buffers and zstd's context are raw mmaps. */
#ifndef FL_FRAME_WRITER_H
#define FL_FRAME_WRITER_H

#include <stddef.h>
#include <stdint.h>

struct fl_runtime;

#define FL_TRACE_CHUNK 2048      /* fault records per handler buffer (64 KiB): the largest block */

enum fl_framed_file { FL_FRAMED_FAULTS = 0, FL_FRAMED_CONTEXTS, FL_FRAMED_EVICTIONS, FL_FRAMED_COUNT };

/* Sets up (once) and starts the writer for the files just opened: descriptors FDS[file], -1 for
 * a file not written. Also in a forked child, where the parent's pending blocks are dropped.
 * Returns 0, or -1 after saying why. */
int fl_frames_start(struct fl_runtime *rt, const int fds[FL_FRAMED_COUNT]);

/* Hands BYTES of whole records of FILE over (a multiple of its record size). */
void fl_frames_submit(enum fl_framed_file file, const void *records, size_t bytes);

/* Writes every block handed over and every open frame, then makes later submissions write at
 * once. Waits at most ~2 s for a producer stopped in the middle of a submission. */
void fl_frames_drain(void);

/* Records of FILE lost to failed writes (a full disk), and the last errno of one (0: none). */
uint64_t fl_frames_dropped(enum fl_framed_file file);
int fl_frames_write_errno(void);

#endif
