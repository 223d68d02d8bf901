/* alloc_log.c: allocation events — every malloc-family call and anonymous mmap the shim serves
 * from the region — kept in the live-object map (live_objects.c, which ties faults to objects
 * and sites) and, for some of them, logged.
 *
 * What is logged (trace.h, "allocs"):
 *   sampled (default)  an allocation when its thread has allocated another ~alloc_sample_bytes
 *                      bytes (uniform random interval of that mean, as tcmalloc samples its
 *                      heap profile), every allocation of at least a page and every mmap, and the
 *                      end of every logged object; plain fl_alloc_records through the thread's
 *                      stream into `allocs`. The rate is bounded by bytes allocated, not calls.
 *   full               every event, encoded (varint deltas, ~4-6 bytes an event) into a 64 KiB
 *                      per-thread chunk that is compressed with zstd when full and written as
 *                      one frame to `allocs.zst`. The compressor (one context, in memory from
 *                      raw mmap, never from the region) is shared under a lock that only
 *                      application threads take, once per chunk.
 * A logged event's stack is its site's (taken once per site). Runs on the allocating thread;
 * never re-entered (an allocation made by a signal handler that interrupted this code is not
 * seen). */
#include "alloc_log.h"
#include "live_objects.h"
#include "diag.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include "zstd_mem.h"
#include "stream.h"
#include "thread_slot.h"
#include "thread_ctx.h"

#define FULL_CHUNK_BYTES (64 * 1024)
#define FULL_EVENT_MAX 48     /* an encoded event is at most 1 + 5 varints of <= 10 bytes */
#define FULL_HEADER 16
#define ZSTD_LEVEL 1
#define ID_BLOCK 1024

__thread int fl_in_runtime_call;

struct fl_full_log {
	_Atomic int lock;
	uint32_t len, nevents;
	uint64_t prev_time, prev_addr, prev_id;
	unsigned char buf[FULL_CHUNK_BYTES];
};

static struct {
	ZSTD_CCtx *cctx;
	_Atomic int lock;
	unsigned char *dst;
	size_t dst_cap;
} z;

int fl_alloc_log_setup(struct fl_runtime *rt)
{
	if (!rt->alloc_log_full || z.cctx)
		return 0;
	z.cctx = fl_zstd_cctx(ZSTD_LEVEL);
	z.dst_cap = ZSTD_compressBound(FULL_CHUNK_BYTES);
	z.dst = fl_sys_mmap(NULL, z.dst_cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!z.cctx || z.dst == MAP_FAILED) {
		fl_log("zstd: cannot create a compression context for --alloc-log full");
		return -1;
	}
	return 0;
}

static void spin_lock(_Atomic int *l)
{
	while (atomic_exchange_explicit(l, 1, memory_order_acquire))
		sched_yield();
}

static void spin_unlock(_Atomic int *l) { atomic_store_explicit(l, 0, memory_order_release); }

/* ---------------------------------------------------------------- the full log */

static void put_varint(struct fl_full_log *f, uint64_t v)
{
	while (v >= 0x80) {
		f->buf[f->len++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	f->buf[f->len++] = (unsigned char)v;
}

static uint64_t zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }

/* Compresses the chunk and writes it as one frame; called with f->lock held. */
static void full_write(struct fl_thread *t, struct fl_full_log *f)
{
	struct fl_runtime *rt = &fl_rt;
	if (f->len == 0)
		return;
	uint32_t header[4] = { FL_ALLOC_CHUNK_MAGIC, (uint32_t)t->tid, f->nevents, 0 };
	memcpy(f->buf, header, sizeof(header));
	spin_lock(&z.lock);
	size_t n = ZSTD_compress2(z.cctx, z.dst, z.dst_cap, f->buf, f->len);
	if (ZSTD_isError(n)) {
		fl_side_dropped(f->len);
	} else {
		size_t written = 0;
		int err = fl_write_all(rt->allocs_zst_fd, z.dst, n, &written);
		if (err) {
			fl_side_dropped(f->len);
			fl_side_write_failed(err);
		}
	}
	spin_unlock(&z.lock);
	f->len = 0;
}

void fl_alloc_log_flush_thread(struct fl_thread *t, bool try_only)
{
	struct fl_full_log *f = t->full;
	if (!f || !z.cctx)
		return;
	for (int tries = 0; atomic_exchange_explicit(&f->lock, 1, memory_order_acquire); tries++) {
		if (try_only && tries == 1000)
			return; /* its thread was stopped inside an append (fatal signal) */
		sched_yield();
	}
	full_write(t, f);
	spin_unlock(&f->lock);
}

void fl_alloc_log_discard_thread(struct fl_thread *t)
{
	atomic_store(&z.lock, 0);
	if (t->full) {
		t->full->len = 0;
		atomic_store(&t->full->lock, 0);
	}
}

static void full_append(struct fl_thread *t, const struct fl_alloc_record *r)
{
	struct fl_full_log *f = t->full;
	if (!f) {
		f = fl_sys_mmap(NULL, sizeof(*f), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (f == MAP_FAILED) {
			fl_side_dropped(sizeof(*r));
			return;
		}
		t->full = f;
	}
	spin_lock(&f->lock);
	if (f->len + FULL_EVENT_MAX > FULL_CHUNK_BYTES)
		full_write(t, f);
	if (f->len == 0) {
		f->len = FULL_HEADER;
		f->nevents = 0;
		f->prev_time = f->prev_addr = f->prev_id = 0;
	}
	f->buf[f->len++] = (unsigned char)(r->kind | r->flags << 4);
	put_varint(f, r->time_ns - f->prev_time);
	put_varint(f, zigzag((int64_t)(r->addr - f->prev_addr)));
	if (r->kind != FL_ALLOC_FREE)
		put_varint(f, r->size);
	if (r->kind == FL_ALLOC_MALLOC || r->kind == FL_ALLOC_MMAP) {
		put_varint(f, r->stack_id);
		put_varint(f, zigzag((int64_t)r->alloc_id - (int64_t)f->prev_id));
		f->prev_id = r->alloc_id;
	}
	f->prev_time = r->time_ns;
	f->prev_addr = r->addr;
	f->nevents++;
	if (atomic_load_explicit(&fl_rt.final_mode, memory_order_relaxed))
		full_write(t, f);
	spin_unlock(&f->lock);
}

/* ---------------------------------------------------------------- events */

/* An event's time, nanoseconds of CLOCK_MONOTONIC. A clock read costs ~80 ns in this VM (kvm-clock),
 * the TSC ~27 ns: the clock is read every 256 events of a thread (and after a long pause), and
 * times between are interpolated with the TSC rate measured between the last two reads (the
 * machine's TSC is constant and nonstop). Per thread, times never go backwards. */
#define CLOCK_EVERY 256

static uint64_t event_time_ns(struct fl_thread *t)
{
	uint64_t tsc = __builtin_ia32_rdtsc(), v;
	if (t->clk_rate && t->clk_count < CLOCK_EVERY && tsc >= t->clk_tsc && tsc - t->clk_tsc < (1ull << 32)) {
		t->clk_count++;
		v = t->clk_ns + (((tsc - t->clk_tsc) * t->clk_rate) >> 20);
	} else {
		v = fl_now_ns();
		if (t->clk_ns && v > t->clk_ns && tsc > t->clk_tsc && tsc - t->clk_tsc < (1ull << 32))
			t->clk_rate = ((v - t->clk_ns) << 20) / (tsc - t->clk_tsc); /* ns per tick, 20 fraction bits */
		else
			t->clk_rate = 0;
		t->clk_ns = v;
		t->clk_tsc = tsc;
		t->clk_count = 0;
	}
	if (v < t->clk_last)
		v = t->clk_last;
	t->clk_last = v;
	return v;
}

static void log_event(struct fl_thread *t, uint8_t kind, uint64_t addr, uint64_t size, uint32_t stack_id,
		      uint32_t alloc_id, uint8_t flags)
{
	struct fl_runtime *rt = &fl_rt;
	uint64_t now = event_time_ns(t);
	struct fl_alloc_record rec = {
		.time_ns = now > rt->start_ns ? now - rt->start_ns : 0,
		.addr = addr,
		.size = size,
		.tid = (uint32_t)t->tid,
		.stack_id = stack_id,
		.alloc_id = alloc_id,
		.kind = kind,
		.flags = flags,
	};
	if (rt->alloc_log_full)
		full_append(t, &rec);
	else
		fl_stream_append(&t->allocs, &rec, sizeof(rec), NULL, 0);
	atomic_fetch_add_explicit(&rt->alloc_events, 1, memory_order_relaxed);
}

static uint32_t next_alloc_id(struct fl_thread *t)
{
	if (t->next_alloc_id == t->alloc_id_end || t->next_alloc_id == 0) {
		uint32_t base = atomic_fetch_add_explicit(&fl_rt.next_alloc_id, ID_BLOCK, memory_order_relaxed);
		if (base == 0)
			base = 1;
		t->next_alloc_id = base;
		t->alloc_id_end = base + ID_BLOCK - 1;
	}
	return t->next_alloc_id++;
}

/* Byte sampling: true when this allocation of SIZE bytes is the thread's next sample. */
static bool sample_due(struct fl_thread *t, uint64_t size)
{
	t->sample_left -= (int64_t)size;
	if (t->sample_left > 0)
		return false;
	if (t->rng == 0)
		t->rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)t->tid;
	t->rng ^= t->rng << 13, t->rng ^= t->rng >> 7, t->rng ^= t->rng << 17;
	uint64_t mean = fl_rt.alloc_sample_bytes ? fl_rt.alloc_sample_bytes : 1;
	t->sample_left = (int64_t)(t->rng % (2 * mean)) + 1;
	return true;
}

static void unmapped_object(const struct fl_object *obj, void *arg)
{
	(void)obj, (void)arg;
}

void fl_alloc_event(uint8_t kind, const void *addr, size_t size, const void *caller)
{
	struct fl_runtime *rt = &fl_rt;
	uint64_t a = (uint64_t)(uintptr_t)addr;
	struct fl_thread *t;
	struct fl_object obj;

	if (fl_in_runtime_call || fl_internal_thread)
		return;
	fl_in_runtime_call = 1;
	t = fl_thread_tls;
	if (__builtin_expect(!t, 0))
		t = fl_thread_self();
	if (!t) {
		fl_side_dropped(sizeof(struct fl_alloc_record));
		fl_in_runtime_call = 0;
		return;
	}
	switch (kind) {
	case FL_ALLOC_MALLOC:
	case FL_ALLOC_MMAP: {
		bool sampled = false;
		obj.size = size;
		obj.site = fl_site_of(t, caller);
		obj.alloc_id = next_alloc_id(t);
		obj.logged = rt->alloc_log_full || size >= FL_PAGE_SIZE || kind == FL_ALLOC_MMAP;
		if (!obj.logged && sample_due(t, size))
			obj.logged = sampled = true;
		fl_objects_insert(t, a, &obj, kind == FL_ALLOC_MMAP);
		if (obj.logged)
			log_event(t, kind, a, size, fl_site_stack(obj.site), obj.alloc_id, sampled ? FL_ALLOC_SAMPLED : 0);
		break;
	}
	case FL_ALLOC_FREE:
		if ((fl_objects_remove(t, a, &obj) && obj.logged) || rt->alloc_log_full)
			log_event(t, kind, a, 0, 0, 0, 0);
		break;
	default: /* FL_ALLOC_MUNMAP */
		fl_objects_unmap(t, a, size, unmapped_object, NULL);
		log_event(t, kind, a, size, 0, 0, 0);
		break;
	}
	fl_in_runtime_call = 0;
}
