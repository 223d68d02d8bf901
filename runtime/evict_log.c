/* evict_log.c: eviction events — one fl_evict_record per page the eviction policy takes out of
 * memory (inc/faultline/trace.h), in the `evictions` file.
 *
 * Every eviction runs under evict_lock (evict.c), by the evictor thread or by a fault handler
 * that found no free page, so one stream serves them all: its appender is always the holder of
 * evict_lock, and the stream's own lock (stream.c) is only ever contended by the periodic
 * flush, which never waits for it (handler 0, every 100 ms, as for fault records). A batch
 * costs one clock read and one memcpy per 64 records; nothing allocates; a full buffer
 * (8 KiB, 341 records) is written with one write(2) by the evicting thread. */
#include "runtime.h"
#include "pages.h"

#include <pthread.h>
#include <string.h>

#define LOG_CHUNK 64 /* records built on the stack, then appended at once */

/* Whether the calling thread is a fault handler evicting inline (not the evictor thread). */
static bool evicting_inline(const struct fl_runtime *rt)
{
	return rt->evictor.wake_fd < 0 || !pthread_equal(pthread_self(), rt->evictor.thread);
}

void fl_evict_log(struct fl_runtime *rt, const size_t *pages, size_t first, const uint8_t *old, size_t n,
		  uint8_t decision)
{
	struct fl_evict_record chunk[LOG_CHUNK];
	if (n == 0 || rt->side_fd[FL_SF_EVICTIONS] < 0)
		return;
	uint64_t now = fl_now_ns() - rt->start_ns;
	uint8_t how = evicting_inline(rt) ? FL_EVICT_INLINE : 0;
	size_t used = 0;
	memset(chunk, 0, sizeof(chunk));
	for (size_t i = 0; i < n; i++) {
		size_t page = pages ? pages[i] : first + i;
		struct fl_evict_record *r = &chunk[used++];
		r->time_ns = now;
		r->addr = (uint64_t)(uintptr_t)fl_page_addr(rt, page);
		r->decision = decision;
		/* without write-protect a write is never noticed: every page counts as dirty (evict.c) */
		bool dirty = !rt->write_protect || (old[i] & PG_DIRTY);
		r->flags = (uint8_t)(how | (dirty ? FL_EVICT_DIRTY : 0));
		if (used == LOG_CHUNK) {
			fl_stream_append(&rt->evict_log, chunk, sizeof(chunk), NULL, 0);
			used = 0;
		}
	}
	if (used)
		fl_stream_append(&rt->evict_log, chunk, used * sizeof(chunk[0]), NULL, 0);
}

void fl_evict_log_flush(struct fl_runtime *rt, bool wait)
{
	if (rt->side_fd[FL_SF_EVICTIONS] < 0)
		return;
	if (wait)
		fl_stream_flush(&rt->evict_log);
	else
		fl_stream_flush_if_free(&rt->evict_log);
}
