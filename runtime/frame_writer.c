/* frame_writer.c: the framed, compressed record files and their writer thread (frame_writer.h). */
#include "frame_writer.h"
#include "fds.h"
#include "internal_thread.h"
#include "runtime_api.h"
#include "clock.h"
#include "diag.h"

#include <faultline/record_codec.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "zstd_mem.h"
#include <zstd_errors.h>

#define NSLOTS 32
#define SLOT_BYTES (FL_TRACE_CHUNK * sizeof(struct fl_fault_record)) /* a handler's full buffer */
#define FRAME_TARGET (1u << 20)      /* encoded bytes after which a frame is written */
#define FRAME_RECORDS_MAX 65536
#define FRAME_AGE_NS 500000000ull    /* an open frame is written after this long */
#define IDLE_POLL_MS 100
#define DRAIN_WAIT_NS 2000000000ull
#define ZSTD_LEVEL 3

enum { SLOT_FREE = 0, SLOT_FILLING, SLOT_READY, SLOT_TAKEN };

struct slot {
	_Atomic int state;
	uint32_t file;
	uint32_t bytes;
	uint64_t ticket;           /* order of hand-over: one producer's blocks stay in order */
	unsigned char *data;
};

struct open_frame {
	unsigned char *buf;        /* encoded records, FL_FRAME_ENCODED_MAX bytes */
	size_t len;
	uint32_t n;
	uint64_t started_ns;
	struct fl_codec_state codec;
	int failed;                /* errno of a failed write or compression: the file gets no more frames */
};

static const uint32_t file_kind[FL_FRAMED_COUNT] = { FL_FILE_FAULTS, FL_FILE_CONTEXTS, FL_FILE_EVICTIONS };

static struct {
	bool set_up;
	struct slot slots[NSLOTS];
	_Atomic uint64_t next_ticket;
	_Atomic unsigned hint;
	int fds[FL_FRAMED_COUNT];
	int wake_fd;
	pthread_t thread;
	_Atomic bool running;      /* the writer thread runs: blocks go through the slots */
	_Atomic bool sleeping;     /* ... and waits for a wake-up */
	_Atomic bool at_once;      /* after the drain: the caller writes */
	_Atomic int lock;          /* the open frames and the compressor */
	struct open_frame frames[FL_FRAMED_COUNT];
	ZSTD_CCtx *cctx;
	unsigned char *out;        /* frame header + compressed frame */
	size_t out_cap;
	_Atomic uint64_t dropped[FL_FRAMED_COUNT];
	_Atomic int write_errno;
} fw;

static void *raw_alloc(size_t size)
{
	void *p = fl_sys_mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void lock(void)
{
	while (atomic_exchange_explicit(&fw.lock, 1, memory_order_acquire))
		sched_yield();
}

static void unlock(void) { atomic_store_explicit(&fw.lock, 0, memory_order_release); }

/* Compresses and writes FILE's open frame; called with the lock held. */
static void write_frame(unsigned file)
{
	struct open_frame *fr = &fw.frames[file];
	if (fr->n == 0)
		return;
	int err = 0;
	size_t n = 0;
	if (fr->failed || fw.fds[file] < 0) {
		err = fr->failed; /* the first failure's reason, for every frame it costs */
	} else {
		n = ZSTD_compress2(fw.cctx, fw.out + sizeof(struct fl_frame_header),
				   fw.out_cap - sizeof(struct fl_frame_header), fr->buf, fr->len);
		if (ZSTD_isError(n)) {
			/* out of memory: the program lowered RLIMIT_AS or RLIMIT_DATA below what the
			 * runtime needs (faultline-record(1), LIMITATIONS) */
			err = ZSTD_getErrorCode(n) == ZSTD_error_memory_allocation ? ENOMEM : EIO;
			char what[224];
			struct fl_buf b = { what, 0, sizeof(what) };
			fl_buf_str(&b, "compressing the trace (zstd: ");
			fl_buf_str(&b, ZSTD_getErrorName(n));
			fl_buf_str(&b, err == ENOMEM ? "; has the program lowered RLIMIT_AS or RLIMIT_DATA below what the "
						       "runtime needs?)" : ")");
			fl_log_errno(what, err);
		} else {
			struct fl_frame_header h = { FL_FRAME_MAGIC, fr->n, (uint32_t)n, (uint32_t)fr->len };
			memcpy(fw.out, &h, sizeof(h));
			err = fl_write_all(fw.fds[file], fw.out, sizeof(h) + n, NULL);
		}
	}
	if (err || fw.fds[file] < 0) {
		/* a frame cut by a failed write ends the file: the reader keeps the frames before it */
		if (!fr->failed)
			fr->failed = err;
		atomic_fetch_add(&fw.dropped[file], fr->n);
		if (err)
			atomic_store(&fw.write_errno, err);
	}
	fr->n = 0;
	fr->len = 0;
}

/* Encodes the whole records of a block into FILE's open frame; called with the lock held. */
static void encode_block(unsigned file, const unsigned char *data, size_t bytes)
{
	struct open_frame *fr = &fw.frames[file];
	size_t size = fl_codec_record_size(file_kind[file]);
	for (size_t off = 0; off + size <= bytes; off += size) {
		if (fr->len + FL_CODEC_RECORD_MAX > FL_FRAME_ENCODED_MAX || fr->n == FRAME_RECORDS_MAX)
			write_frame(file);
		if (fr->n == 0) {
			memset(&fr->codec, 0, sizeof(fr->codec));
			fr->started_ns = fl_now_ns();
		}
		union {
			struct fl_fault_record fault;
			struct fl_fault_context context;
			struct fl_evict_record evict;
		} rec; /* aligned: a stream's buffer may not be */
		memcpy(&rec, data + off, size);
		fr->len += fl_codec_encode(file_kind[file], &fr->codec, &rec, fr->buf + fr->len);
		fr->n++;
	}
}

/* Writes the open frames that are large or old enough (all of them with ALL). */
static void write_due_frames(bool all)
{
	uint64_t now = fl_now_ns();
	lock();
	for (unsigned f = 0; f < FL_FRAMED_COUNT; f++) {
		struct open_frame *fr = &fw.frames[f];
		if (fr->n && (all || fr->len >= FRAME_TARGET || now - fr->started_ns >= FRAME_AGE_NS))
			write_frame(f);
	}
	unlock();
}

/* The ready slots in hand-over order. Two scans: a producer's later block seen ready in the
 * first means its earlier one is ready in the second, whatever their places in the pool. */
static unsigned take_ready(struct slot **out)
{
	unsigned n = 0;
	for (int pass = 0; pass < 2; pass++)
		for (unsigned i = 0; i < NSLOTS; i++) {
			int ready = SLOT_READY;
			if (atomic_compare_exchange_strong_explicit(&fw.slots[i].state, &ready, SLOT_TAKEN,
								    memory_order_acquire, memory_order_relaxed))
				out[n++] = &fw.slots[i];
		}
	for (unsigned i = 1; i < n; i++)
		for (unsigned j = i; j > 0 && out[j - 1]->ticket > out[j]->ticket; j--) {
			struct slot *t = out[j];
			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return n;
}

/* Takes the ready slots and encodes them; returns how many. */
static unsigned process_ready(void)
{
	struct slot *ready[NSLOTS];
	unsigned n = take_ready(ready);
	for (unsigned i = 0; i < n; i++) {
		lock();
		encode_block(ready[i]->file, ready[i]->data, ready[i]->bytes);
		if (fw.frames[ready[i]->file].len >= FRAME_TARGET)
			write_frame(ready[i]->file);
		unlock();
		atomic_store_explicit(&ready[i]->state, SLOT_FREE, memory_order_release);
	}
	return n;
}

static bool any_ready(void)
{
	for (unsigned i = 0; i < NSLOTS; i++)
		if (atomic_load(&fw.slots[i].state) == SLOT_READY)
			return true;
	return false;
}

static void *writer_main(void *arg)
{
	(void)arg;
	fl_internal_thread = 1;
	fl_sys_block_all_signals();
	for (;;) {
		if (process_ready()) {
			write_due_frames(false);
			continue;
		}
		write_due_frames(false);
		atomic_store(&fw.sleeping, true);
		if (!any_ready()) {
			struct pollfd p = { fw.wake_fd, POLLIN, 0 };
			uint64_t v;
			if (fl_sys_poll(&p, 1, IDLE_POLL_MS) > 0)
				(void)!fl_sys_read(fw.wake_fd, &v, sizeof(v));
		}
		atomic_store(&fw.sleeping, false);
	}
	return NULL;
}

static int set_up(void)
{
	if (fw.set_up)
		return 0;
	unsigned char *slots = raw_alloc(NSLOTS * SLOT_BYTES);
	fw.cctx = fl_zstd_cctx(ZSTD_LEVEL);
	fw.out_cap = sizeof(struct fl_frame_header) + ZSTD_compressBound(FL_FRAME_ENCODED_MAX);
	fw.out = raw_alloc(fw.out_cap);
	if (!slots || !fw.cctx || !fw.out) {
		fl_log("frame writer: cannot map its buffers or create a zstd context");
		return -1;
	}
	for (unsigned i = 0; i < NSLOTS; i++)
		fw.slots[i].data = slots + i * SLOT_BYTES;
	for (unsigned f = 0; f < FL_FRAMED_COUNT; f++)
		if (!(fw.frames[f].buf = raw_alloc(FL_FRAME_ENCODED_MAX))) {
			fl_log("frame writer: cannot map a frame buffer");
			return -1;
		}
	fw.set_up = true;
	return 0;
}

int fl_frames_start(struct fl_runtime *rt, const int fds[FL_FRAMED_COUNT])
{
	(void)rt;
	if (set_up() < 0)
		return -1;
	/* in a forked child: the parent's pending blocks and frames are the parent's to write */
	for (unsigned i = 0; i < NSLOTS; i++)
		atomic_store(&fw.slots[i].state, SLOT_FREE);
	for (unsigned f = 0; f < FL_FRAMED_COUNT; f++) {
		fw.fds[f] = fds[f];
		fw.frames[f].n = 0;
		fw.frames[f].len = 0;
		fw.frames[f].failed = 0;
		atomic_store(&fw.dropped[f], 0);
	}
	atomic_store(&fw.write_errno, 0);
	atomic_store(&fw.lock, 0);
	atomic_store(&fw.at_once, false);
	atomic_store(&fw.running, false);
	atomic_store(&fw.sleeping, false);
	if (fw.wake_fd > 0)
		fl_sys_close(fw.wake_fd);
	fw.wake_fd = fl_fd_keep(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
	if (fw.wake_fd < 0) {
		fl_log_errno("eventfd(frame writer)", errno);
		return 0; /* the producers write at once */
	}
	int err = fl_thread_create(&fw.thread, writer_main, NULL);
	if (err) {
		fl_log_errno("pthread_create(frame writer)", err);
		return 0;
	}
	atomic_store(&fw.running, true);
	return 0;
}

/* Without the writer (not started, or after the drain): encode, compress and write here. */
static void write_at_once(unsigned file, const void *records, size_t bytes)
{
	lock();
	encode_block(file, records, bytes);
	write_frame(file);
	unlock();
}

static struct slot *claim_slot(void)
{
	uint64_t waited_since = 0;
	for (;;) {
		unsigned start = atomic_fetch_add_explicit(&fw.hint, 1, memory_order_relaxed);
		for (unsigned k = 0; k < NSLOTS; k++) {
			struct slot *s = &fw.slots[(start + k) % NSLOTS];
			int free_state = SLOT_FREE;
			if (atomic_compare_exchange_strong_explicit(&s->state, &free_state, SLOT_FILLING,
								    memory_order_acquire, memory_order_relaxed))
				return s;
		}
		/* every slot is taken: the writer is behind; wait for it (back-pressure) */
		uint64_t one = 1;
		(void)!fl_sys_write(fw.wake_fd, &one, sizeof(one));
		if (!waited_since)
			waited_since = fl_now_ns();
		else if (fl_now_ns() - waited_since > DRAIN_WAIT_NS)
			return NULL; /* the writer is stuck: write at once */
		sched_yield();
	}
}

void fl_frames_submit(enum fl_framed_file file, const void *records, size_t bytes)
{
	const unsigned char *p = records;
	size_t size = fl_codec_record_size(file_kind[file]);
	while (bytes >= size) {
		if (!atomic_load(&fw.running) || atomic_load(&fw.at_once)) {
			write_at_once(file, p, bytes);
			return;
		}
		struct slot *s = claim_slot();
		if (!s) {
			write_at_once(file, p, bytes);
			return;
		}
		size_t n = bytes < SLOT_BYTES ? bytes : SLOT_BYTES / size * size;
		memcpy(s->data, p, n);
		s->file = (uint32_t)file;
		s->bytes = (uint32_t)n;
		s->ticket = atomic_fetch_add(&fw.next_ticket, 1);
		atomic_store_explicit(&s->state, SLOT_READY, memory_order_release);
		if (atomic_load(&fw.sleeping)) {
			uint64_t one = 1;
			(void)!fl_sys_write(fw.wake_fd, &one, sizeof(one));
		}
		p += n;
		bytes -= n;
	}
}

void fl_frames_drain(void)
{
	if (atomic_load(&fw.running) && !atomic_load(&fw.at_once)) {
		/* the writer empties the pool; a slot still filling belongs to a producer stopped in
		 * the middle (a fatal signal): not waited for beyond DRAIN_WAIT_NS */
		uint64_t start = fl_now_ns();
		struct timespec pause = { 0, 200000 };
		for (;;) {
			bool busy = false;
			for (unsigned i = 0; i < NSLOTS; i++)
				busy |= atomic_load(&fw.slots[i].state) != SLOT_FREE;
			if (!busy || fl_now_ns() - start > DRAIN_WAIT_NS)
				break;
			uint64_t one = 1;
			(void)!fl_sys_write(fw.wake_fd, &one, sizeof(one));
			nanosleep(&pause, NULL);
		}
	}
	atomic_store(&fw.at_once, true);
	process_ready(); /* a writer that did not run: what is ready, in order */
	write_due_frames(true);
}

uint64_t fl_frames_dropped(enum fl_framed_file file) { return atomic_load(&fw.dropped[file]); }

int fl_frames_write_errno(void) { return atomic_load(&fw.write_errno); }
