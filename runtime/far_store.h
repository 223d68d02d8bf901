/* far_store.h: where evicted pages live — the interface between the runtime and its far-store
 * backends (far_mem.c, far_file.c, far_memcached.c; a new backend adds a file of its own and
 * one line in far_backends.c), and the generic layer every backend shares (far_store.c: versions
 * of far copies across fork, write-back batches, the emulated latency of far_latency.c and the
 * read-ahead of far_prefetch.c).
 *
 * The runtime keeps one "mirror" of the region in its own memory: page i's local copy at
 * mirror + i * PAGE. Pages unmapped by the eviction policy (SOFT) always have their content
 * there, so a soft fault never goes far. A backend decides what happens when a page leaves
 * local memory for good (SOFT -> FAR) and how it comes back:
 *   - mem: the mirror *is* the far store. put() keeps the mirror page; the fault handler
 *     copies straight from the mirror (get == NULL); clean pages keep a valid copy there.
 *   - others (file, memcached): put() writes dirty pages out and the runtime then drops their
 *     mirror pages; get() fetches a page into a bounce buffer for the fault handler. The mirror
 *     then holds only SOFT and prefetched (FAR | STAGED) pages, so the process's resident
 *     memory stays within -L plus the bookkeeping documented in far_store.c.
 * A backend that loses a page must not return zeros: get() fails, and the runtime stops the
 * program (status FL_EXIT_RUNTIME_FAILURE) after flushing the trace. The backend logs one line
 * naming what failed (server, file, page) before it returns the error.
 *
 * Versions (non-mem backends): far copies are written into "generations" — a file, or a key
 * prefix on the memcached servers. gen_of[page] says which generation holds the page's far
 * copy (FL_FAR_NO_COPY: none, the page reads as zeros). A fork freezes the generation written
 * so far: parent and child each write into a new generation from then on and only read the
 * frozen one, so each keeps the far data as of the fork and never sees the other's writes.
 *
 * Threads: put() runs under the eviction lock on a handler thread; get() on any handler thread
 * (concurrently); get_many() on the prefetch thread; discard() on application threads, with the
 * pages locked (BUSY) and their states not yet changed. None may allocate or touch the region. */
#ifndef FL_FAR_STORE_H
#define FL_FAR_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "far_state.h"

struct fl_runtime;
struct fl_handler;
struct fl_buf;

struct fl_far_store {
	const char *name;
	/* true when the far copy of a page is its mirror page (nothing moves at SOFT -> FAR) */
	bool mirror_is_far;
	int (*open)(struct fl_runtime *rt, const char *spec);
	/* pages[i] leave local memory; dirty[i]: its mirror page holds content newer than the
	 * far copy and must be written. Called under the eviction lock, on a handler thread. */
	int (*put)(struct fl_runtime *rt, const size_t *pages, const bool *dirty, size_t n);
	/* the far copy of page into dst (FL_PAGE_SIZE bytes); 0 or an errno; NULL = read the mirror */
	int (*get)(struct fl_runtime *rt, size_t page, void *dst);
	/* several pages at once (read-ahead, compaction); NULL = get() for each */
	int (*get_many)(struct fl_runtime *rt, const size_t *pages, char *const *dst, size_t n);
	/* the program discarded [first, first + count): far copies become zero */
	void (*discard)(struct fl_runtime *rt, size_t first, size_t count);
	/* in the child of a fork: keep the parent's far data as it was, private from now on */
	int (*after_fork)(struct fl_runtime *rt);
	void (*close)(struct fl_runtime *rt);
	/* Non-mem backends only (their put/get/get_many/discard are the generic fl_far_gen_*
	 * of far_store.c, which keep gen_of and call these): */
	/* generation `gen` (index into fl_far_state.gens) is new: create its file / key prefix */
	int (*new_gen)(struct fl_runtime *rt, unsigned gen);
	/* this process reads generation `gen` no more (after compaction): release it */
	void (*drop_gen)(struct fl_runtime *rt, unsigned gen);
	/* write src[i] (FL_PAGE_SIZE bytes) as page pages[i] of generation gen; one batch */
	int (*write)(struct fl_runtime *rt, unsigned gen, const size_t *pages, char *const *src, size_t n);
	/* read page pages[i] of generation gens[i] into dst[i]; one batch */
	int (*read)(struct fl_runtime *rt, const size_t *pages, const uint8_t *gens, char *const *dst, size_t n);
	/* a line for meta.json: how pages move (e.g. "O_DIRECT, io_uring") */
	const char *(*detail)(struct fl_runtime *rt);
};

/* The generic put/get/get_many/discard/after_fork of non-mem backends (far_store.c). */
int fl_far_gen_put(struct fl_runtime *rt, const size_t *pages, const bool *dirty, size_t n);
int fl_far_gen_get(struct fl_runtime *rt, size_t page, void *dst);
int fl_far_gen_get_many(struct fl_runtime *rt, const size_t *pages, char *const *dst, size_t n);
void fl_far_gen_discard(struct fl_runtime *rt, size_t first, size_t count);

/* ---- far_store.c: what the rest of the runtime calls ---- */
int fl_far_open(struct fl_runtime *rt);          /* at start, after the region exists */
int fl_far_after_fork(struct fl_runtime *rt);    /* in the child, after its pages are settled */
/* A FAR page's content for the fault handler: the mirror page or `bounce`; NULL on failure
 * (already logged by the backend; *err = the errno). Pays the emulated latency. */
const void *fl_far_read(struct fl_handler *h, size_t page, int *err);
/* SOFT -> FAR of locked pages, one batch: dirty ones written together, then (non-mem)
 * their mirror pages dropped. Under the eviction lock. 0 or an errno. */
int fl_far_write_back(struct fl_runtime *rt, const size_t *pages, const uint8_t *old, size_t n);
/* A page came back from its mirror page, or was written since (write-protect fault), on handler
 * h; STATE is its state as resident. Its mirror page is dropped in a batch (one TLB flush for up
 * to FL_FAR_STALE_MAX pages) when it holds nothing worth keeping: always with a non-mem store;
 * with the in-memory store, once the page is dirty (the mirror page was its far copy). */
void fl_far_mirror_stale(struct fl_handler *h, size_t page, uint8_t state);
/* The source an install copies page's mirror page from (its content): handler h's bounce page,
 * or the mirror page itself. */
const void *fl_far_mirror_source(struct fl_handler *h, size_t page);
/* A resident page became dirty (write-protect fault), on handler h: with the in-memory store its
 * mirror page (its far copy) is now stale. */
void fl_far_mirror_dirtied(struct fl_handler *h, size_t page);
/* Every backend's discard() calls this first: staged pages in the range (far_prefetch.c) stop
 * counting. */
void fl_far_discard_staged(struct fl_runtime *rt, size_t first, size_t count);
/* meta.json / stats.json fields (",\n  \"key\": value" each) */
void fl_far_json_meta(struct fl_runtime *rt, struct fl_buf *b);
void fl_far_json_stats(struct fl_runtime *rt, struct fl_buf *b);
/* Called by backends before returning a fatal error: false if another thread already failed
 * (the caller then waits for that thread to stop the program). */
bool fl_far_first_failure(struct fl_runtime *rt);

#endif
