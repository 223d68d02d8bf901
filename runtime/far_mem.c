/* far_mem.c: the in-memory far store — the mirror itself holds the far copies, so eviction
 * moves no data and refaults copy straight from it (see far_store.h). Discarded pages'
 * mirror pages are dropped by region.c, which keeps "a FREE page has no far copy" true. */
#include "far_store.h"
#include "context.h"

static int mem_open(struct fl_runtime *rt, const char *spec)
{
	(void)rt, (void)spec;
	return 0;
}

static int mem_put(struct fl_runtime *rt, const size_t *pages, const bool *dirty, size_t n)
{
	(void)rt, (void)pages, (void)dirty, (void)n;
	return 0;
}

static void mem_discard(struct fl_runtime *rt, size_t first, size_t count)
{
	fl_far_discard_staged(rt, first, count);
}

static int mem_after_fork(struct fl_runtime *rt)
{
	(void)rt; /* the child's mirror is a copy-on-write copy of the parent's */
	return 0;
}

static void mem_close(struct fl_runtime *rt) { (void)rt; }

const struct fl_far_store fl_far_mem = {
	.name = "mem",
	.mirror_is_far = true,
	.open = mem_open,
	.put = mem_put,
	.get = NULL,
	.discard = mem_discard,
	.after_fork = mem_after_fork,
	.close = mem_close,
};
