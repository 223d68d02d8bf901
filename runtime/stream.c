/* stream.c: per-thread record streams (see stream.h). */
#include "stream.h"
#include "diag.h"
#include "frame_writer.h"
#include "sys.h"

#include <errno.h>
#include <sys/syscall.h>
#include <sched.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void lock(struct fl_stream *s)
{
	while (atomic_exchange_explicit(&s->lock, 1, memory_order_acquire))
		sched_yield();
}

static void unlock(struct fl_stream *s) { atomic_store_explicit(&s->lock, 0, memory_order_release); }

void fl_stream_init(struct fl_stream *s, enum fl_stream_file file)
{
	atomic_store(&s->lock, 0);
	s->len = 0;
	s->file = (uint8_t)file;
}

/* Writes the buffer out; called with the lock held. */
/* After a failed write (a full disk) a file may end inside a record: nothing more is written
 * to it, so it stays a cut tail the reader accepts, and the rest is counted as dropped. */
static _Atomic int file_failed[FL_SF_COUNT]; /* errno of the file's first failed write (0: none) */
static _Atomic bool write_through;          /* after shutdown: every append written at once */
static _Atomic uint64_t side_bytes_dropped; /* side records lost to failed writes (stats.json) */
static _Atomic int side_write_errno;        /* the last failed write's errno; 0 = none */

void fl_streams_write_through(bool on) { atomic_store(&write_through, on); }
void fl_side_dropped(uint64_t bytes) { atomic_fetch_add(&side_bytes_dropped, bytes); }
void fl_side_write_failed(int err) { atomic_store(&side_write_errno, err); }
uint64_t fl_side_bytes_dropped(void) { return atomic_load(&side_bytes_dropped); }
int fl_side_write_errno(void) { return atomic_load(&side_write_errno); }
static int file_fd_plus_one[FL_SF_COUNT]; /* 0: no file */

void fl_stream_file_set(enum fl_stream_file file, int fd) { file_fd_plus_one[file] = fd < 0 ? 0 : fd + 1; }

int fl_stream_file_fd(enum fl_stream_file file) { return file_fd_plus_one[file] - 1; }

void fl_stream_files_close(void)
{
	for (int i = 0; i < FL_SF_COUNT; i++) {
		if (file_fd_plus_one[i])
			fl_sys_close(file_fd_plus_one[i] - 1);
		file_fd_plus_one[i] = 0;
	}
}

static void write_out(struct fl_stream *s)
{
	/* contexts and evictions go to the frame writer, which encodes and compresses them */
	if (s->file == FL_SF_CONTEXTS || s->file == FL_SF_EVICTIONS) {
		fl_frames_submit(s->file == FL_SF_CONTEXTS ? FL_FRAMED_CONTEXTS : FL_FRAMED_EVICTIONS, s->buf, s->len);
		s->len = 0;
		return;
	}
	size_t written = 0;
	int fd = fl_stream_file_fd(s->file);
	if (fd < 0) {
		s->len = 0;
		return;
	}
	int failed = atomic_load(&file_failed[s->file]); /* its reason stands for every later block */
	int err = failed ? failed : fl_write_all(fd, s->buf, s->len, &written);
	if (err) {
		atomic_store(&file_failed[s->file], err);
		fl_side_dropped(s->len - written);
		fl_side_write_failed(err);
	}
	s->len = 0;
}

void fl_streams_after_fork(void)
{
	for (int i = 0; i < FL_SF_COUNT; i++)
		atomic_store(&file_failed[i], 0);
	atomic_store(&side_bytes_dropped, 0);
	atomic_store(&side_write_errno, 0);
}

__thread int fl_fatal_defer;
__thread volatile int fl_fatal_pending;

/* A fatal signal that arrived during the append (runtime_api.h): raised again now, on this
 * thread, where the shim's handler takes it as if it had just arrived. */
static void raise_deferred_signal(void)
{
	int sig = fl_fatal_pending;
	fl_fatal_pending = 0;
	syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
}

void fl_stream_append(struct fl_stream *s, const void *a, size_t alen, const void *b, size_t blen)
{
	int saved = errno;
	fl_fatal_defer++;
	lock(s);
	if (s->len + alen + blen > FL_STREAM_BYTES)
		write_out(s);
	if (alen + blen <= FL_STREAM_BYTES) {
		memcpy(s->buf + s->len, a, alen);
		if (blen)
			memcpy(s->buf + s->len + alen, b, blen);
		s->len += (uint32_t)(alen + blen);
	}
	if (atomic_load_explicit(&write_through, memory_order_relaxed))
		write_out(s);
	unlock(s);
	if (--fl_fatal_defer == 0 && fl_fatal_pending)
		raise_deferred_signal();
	errno = saved;
}

/* For flushes at exit, possibly from a fatal signal's handler that interrupted the stream's
 * own thread inside fl_stream_append: give up after a while instead of waiting forever. The
 * while is ~100 ms, not a number of yields: a thread in the middle of an append on a loaded
 * machine may be off the CPU longer than 1000 yields take, and the records already in the buffer
 * (stack definitions that faults written elsewhere name) were lost with it (st_fatal saw a fault
 * whose stack was never written, once in ~30 runs at load 10). */
bool fl_stream_try_flush(struct fl_stream *s)
{
	int saved = errno;
	struct timespec ms = { 0, 1000000 };
	for (int tries = 0; atomic_exchange_explicit(&s->lock, 1, memory_order_acquire); tries++) {
		if (tries == 1100) {
			fl_side_dropped(s->len);
			errno = saved;
			return false;
		}
		if (tries < 1000)
			sched_yield();
		else
			nanosleep(&ms, NULL);
	}
	if (s->len)
		write_out(s);
	unlock(s);
	errno = saved;
	return true;
}

/* For the periodic flush by another thread: only if the stream is free right now (its owner
 * appends in a moment and the next period takes it). */
void fl_stream_flush_if_free(struct fl_stream *s)
{
	int saved = errno;
	if (atomic_exchange_explicit(&s->lock, 1, memory_order_acquire))
		return;
	if (s->len)
		write_out(s);
	unlock(s);
	errno = saved;
}

void fl_stream_flush(struct fl_stream *s)
{
	int saved = errno;
	lock(s);
	if (s->len)
		write_out(s);
	unlock(s);
	errno = saved;
}

void fl_stream_discard(struct fl_stream *s)
{
	atomic_store(&s->lock, 0);
	s->len = 0;
}
