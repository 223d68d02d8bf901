/* evict_log.c: eviction events — one fl_evict_record per page the eviction policy takes out of
 * memory (inc/faultline/trace.h), in the `evictions` file.
 *
 * Evictions run by the evictor thread or, when a fault finds no free page, by the fault handler
 * serving it. Each writes its own stream (stream.c): a handler's is flushed by that handler with
 * its fault records (so on the fault path no lock is ever contended), the evictor's every 100 ms
 * by handler 0, which never waits for it (as for the application threads' streams). A batch
 * costs one clock read and one memcpy per 64 records; nothing allocates; a full buffer (8 KiB,
 * 341 records) is written with one write(2) by the evicting thread. Streams of different
 * writers interleave in the file in chunks: readers order the records by time. */
#include "evict_log.h"
#include "context.h"
#include "stream.h"
#include "pages.h"

#include <pthread.h>
#include <string.h>

#define LOG_CHUNK 64 /* records built on the stack, then appended at once */

/* The calling thread's stream: a fault handler's own, or the evictor's. */
static struct fl_stream *stream_of_caller(struct fl_runtime *rt, bool *is_handler)
{
	pthread_t self = pthread_self();
	for (unsigned i = 0; i < rt->nhandlers; i++)
		if (atomic_load(&rt->handlers[i].tid) != 0 && pthread_equal(self, rt->handlers[i].thread)) {
			*is_handler = true;
			return &rt->handlers[i].evictions;
		}
	*is_handler = false;
	return &rt->evict_log;
}

void fl_evict_log(struct fl_runtime *rt, const size_t *pages, size_t first, const uint8_t *old, size_t n,
		  uint8_t decision)
{
	struct fl_evict_record chunk[LOG_CHUNK];
	if (n == 0 || fl_stream_file_fd(FL_SF_EVICTIONS) < 0)
		return;
	uint64_t now = fl_now_ns() - rt->start_ns;
	bool is_handler;
	struct fl_stream *stream = stream_of_caller(rt, &is_handler);
	uint8_t how = is_handler ? FL_EVICT_INLINE : 0;
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
			fl_stream_append(stream, chunk, sizeof(chunk), NULL, 0);
			used = 0;
		}
	}
	if (used)
		fl_stream_append(stream, chunk, used * sizeof(chunk[0]), NULL, 0);
}

void fl_evict_log_flush(struct fl_runtime *rt, bool wait)
{
	if (fl_stream_file_fd(FL_SF_EVICTIONS) < 0)
		return;
	if (wait)
		fl_stream_flush(&rt->evict_log);
	else
		fl_stream_flush_if_free(&rt->evict_log);
}
