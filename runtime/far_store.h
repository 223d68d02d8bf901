/* far_store.h: where evicted pages live — the interface between the runtime and its far-store
 * backends (far_mem.c; more backends add a file of their own and one line in far_store.c).
 *
 * The runtime keeps one "mirror" of the region in its own memory: page i's local copy at
 * mirror + i * PAGE. Pages unmapped by the eviction policy (SOFT) always have their content
 * there, so a soft fault never goes far. A backend decides what happens when a page leaves
 * local memory for good (SOFT -> FAR) and how it comes back:
 *   - mem: the mirror *is* the far store. put() keeps the mirror page; the fault handler
 *     copies straight from the mirror (get == NULL); clean pages keep a valid copy there.
 *   - others (file, remote): put() writes dirty pages out and the runtime then drops their
 *     mirror pages; get() fetches a page into a bounce buffer for the fault handler.
 * A backend that loses a page must not return zeros: get() fails, and the runtime stops the
 * program (status FL_EXIT_RUNTIME_FAILURE) after flushing the trace. */
#ifndef FL_FAR_STORE_H
#define FL_FAR_STORE_H

#include <stdbool.h>
#include <stddef.h>

struct fl_runtime;

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
	/* the program discarded [first, first + count): far copies become zero */
	void (*discard)(struct fl_runtime *rt, size_t first, size_t count);
	/* in the child of a fork: keep the parent's far data as it was, private from now on */
	int (*after_fork)(struct fl_runtime *rt);
	void (*close)(struct fl_runtime *rt);
};

/* The backend named by a FAULTLINE_FAR spec ("mem", "file:PATH", ...), or NULL. */
const struct fl_far_store *fl_far_store_find(const char *spec);

extern const struct fl_far_store fl_far_mem;

#endif
