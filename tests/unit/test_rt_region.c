/* test_rt_region.c: unit test of the region's virtual address allocator and page states
 * (runtime/region.c, runtime/pages.h), linked with region.c alone (and the runtime's
 * diagnostics and raw system calls) over a 64 MiB region of its own.
 *
 * A seeded random sequence of fl_region_alloc (sizes 1 page to 2 MiB, alignments up to
 * 2 MiB), fl_region_alloc_at (a free address the model picks), fl_region_free and
 * fl_region_unmap is checked against a model (which pages each live block holds):
 *   - every block lies in the region, is aligned as asked, and overlaps no live block;
 *   - alloc_at succeeds exactly when the model says the pages are free;
 *   - after every operation the free extents are sorted, disjoint, coalesced (no two touch),
 *     and free + live pages = the region; heap_bytes = the live bytes, peak_heap_bytes >= it;
 *   - a freed page is FREE again (no far copy), an unmapped one is GUARD | NOACCESS;
 *   - exhaustion returns NULL and is reported; addresses are reused after frees (-M bounds
 *     the peak, not the total).
 * Page locks: lock returns the state without BUSY and sets BUSY, trylock fails on a busy page,
 * unlock publishes the new state without BUSY. */
#include "check.h"
#include "../../runtime/pages.h"
#include "../../runtime/region.h"
#include "../../runtime/far_store.h"

#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>

/* What region.c needs of the rest of the runtime. */
struct fl_runtime fl_rt;
__thread int fl_internal_thread;
_Atomic int fl_rt_state = FL_RT_READY;

uint64_t fl_now_ns(void) { return 0; }
static void no_discard(struct fl_runtime *rt, size_t first, size_t count) { (void)rt, (void)first, (void)count; }
static const struct fl_far_store test_store = { .name = "test", .mirror_is_far = true, .discard = no_discard };

#define REGION_MIB 64
#define PAGES (REGION_MIB * 256)
#define MAX_LIVE 256

struct block {
	size_t first, count;
	bool live;
};

static struct block blocks[MAX_LIVE];
static unsigned char owner[PAGES]; /* model: 1 = some live block holds the page */
static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next_random(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return rng;
}

static void check_extents(const char *after)
{
	struct fl_runtime *rt = &fl_rt;
	size_t free_pages = 0, live_pages = 0;
	bool sorted = true;
	for (size_t i = 0; i < rt->nfree; i++) {
		free_pages += rt->free_extents[i].count;
		if (i && rt->free_extents[i - 1].first + rt->free_extents[i - 1].count >= rt->free_extents[i].first)
			sorted = false; /* overlapping, or touching: should have been coalesced */
		for (size_t p = rt->free_extents[i].first; p < rt->free_extents[i].first + rt->free_extents[i].count; p++)
			if (owner[p]) {
				sorted = false;
				break;
			}
	}
	for (size_t p = 0; p < PAGES; p++)
		live_pages += owner[p];
	CHECK(sorted, "after %s: free extents sorted, disjoint, coalesced, and free in the model", after);
	CHECK(free_pages + live_pages == PAGES, "after %s: free %zu + live %zu pages = %u", after, free_pages,
	      live_pages, PAGES);
	CHECK(atomic_load(&rt->heap_bytes) == live_pages * FL_PAGE_SIZE, "after %s: heap_bytes %zu = live %zu",
	      after, (size_t)atomic_load(&rt->heap_bytes), live_pages * FL_PAGE_SIZE);
	CHECK(atomic_load(&rt->peak_heap_bytes) >= atomic_load(&rt->heap_bytes), "after %s: peak >= heap", after);
}

static void take(struct block *b, size_t first, size_t count)
{
	bool overlap = false;
	for (size_t p = first; p < first + count; p++) {
		overlap |= owner[p] != 0;
		owner[p] = 1;
	}
	CHECK(!overlap, "block [%zu, +%zu) overlaps no live block", first, count);
	*b = (struct block){ first, count, true };
}

static void release(struct block *b, bool unmap)
{
	void *addr = fl_page_addr(&fl_rt, b->first);
	if (unmap)
		fl_region_unmap(addr, b->count * FL_PAGE_SIZE);
	else
		fl_region_free(addr, b->count * FL_PAGE_SIZE);
	uint8_t want = unmap ? (PG_GUARD | PG_NOACCESS) : PG_FREE;
	bool states_ok = true;
	for (size_t p = b->first; p < b->first + b->count; p++) {
		states_ok &= atomic_load(&fl_rt.state[p]) == want;
		owner[p] = 0;
	}
	CHECK(states_ok, "%s pages are %s", unmap ? "unmapped" : "freed", unmap ? "GUARD|NOACCESS" : "FREE");
	b->live = false;
}

static void test_page_locks(void)
{
	struct fl_runtime *rt = &fl_rt;
	uint8_t old = 0;
	atomic_store(&rt->state[7], PG_RESIDENT | PG_DIRTY);
	CHECK(fl_page_lock(rt, 7, NULL) == (PG_RESIDENT | PG_DIRTY), "lock returns the state without BUSY");
	CHECK(atomic_load(&rt->state[7]) & PG_BUSY, "a locked page is BUSY");
	CHECK(!fl_page_trylock(rt, 7, &old), "trylock fails on a busy page");
	fl_page_unlock(rt, 7, PG_FAR | PG_BUSY);
	CHECK(atomic_load(&rt->state[7]) == PG_FAR, "unlock publishes the new state, never BUSY");
	CHECK(fl_page_trylock(rt, 7, &old) && old == PG_FAR, "trylock takes a free page");
	fl_page_unlock(rt, 7, PG_FREE);
}

int main(void)
{
	struct fl_runtime *rt = &fl_rt;
	rt->max_bytes = (size_t)REGION_MIB << 20;
	rt->far = &test_store;
	REQUIRE(fl_region_setup(rt) == 0, "fl_region_setup(%d MiB)", REGION_MIB);
	REQUIRE(rt->region_pages == PAGES, "region of %u pages", PAGES);
	test_page_locks();

	unsigned allocs = 0, at_ok = 0, at_refused = 0, frees = 0, nulls = 0;
	for (int step = 0; step < 20000; step++) {
		struct block *b = &blocks[next_random() % MAX_LIVE];
		if (b->live) {
			release(b, next_random() % 4 == 0);
			frees++;
		} else if (next_random() % 3 == 0) {
			size_t first = next_random() % PAGES, count = 1 + next_random() % 64;
			if (first + count > PAGES)
				count = PAGES - first;
			bool free_in_model = true;
			for (size_t p = first; p < first + count; p++)
				free_in_model &= owner[p] == 0;
			bool ok = fl_region_alloc_at(fl_page_addr(rt, first), count * FL_PAGE_SIZE);
			CHECK(ok == free_in_model, "alloc_at [%zu, +%zu): %s, the model says %s", first, count,
			      ok ? "granted" : "refused", free_in_model ? "free" : "in use");
			if (ok) {
				take(b, first, count);
				at_ok++;
			} else {
				at_refused++;
			}
		} else {
			size_t count = 1 + next_random() % 512, align = (size_t)FL_PAGE_SIZE << (next_random() % 10);
			char *p = fl_region_alloc(count * FL_PAGE_SIZE, align);
			if (!p) {
				nulls++;
				continue;
			}
			CHECK(fl_in_region(p) && fl_in_region(p + count * FL_PAGE_SIZE - 1), "block inside the region");
			CHECK(((uintptr_t)p & (align - 1)) == 0, "block aligned to %zu", align);
			take(b, fl_page_index(rt, (uint64_t)(uintptr_t)p), count);
			allocs++;
		}
		if (step % 97 == 0)
			check_extents("a random step");
	}
	for (int i = 0; i < MAX_LIVE; i++)
		if (blocks[i].live)
			release(&blocks[i], false);
	check_extents("freeing everything");
	CHECK(rt->nfree == 1 && rt->free_extents[0].first == 0 && rt->free_extents[0].count == PAGES,
	      "everything free again: one extent of the whole region (%zu extents)", rt->nfree);
	/* a range unmapped twice, or with a hole unmapped first (the kernel accepts both): its pages
	 * go back once, or two later mappings would get the same addresses */
	char *blk = fl_region_alloc(64 * FL_PAGE_SIZE, FL_PAGE_SIZE);
	CHECK(blk != NULL && atomic_load(&rt->heap_bytes) == 64 * FL_PAGE_SIZE, "a block of 64 pages");
	fl_region_unmap(blk + 5 * FL_PAGE_SIZE, FL_PAGE_SIZE);
	fl_region_unmap(blk, 64 * FL_PAGE_SIZE);
	fl_region_unmap(blk, 64 * FL_PAGE_SIZE);
	fl_region_free(blk + 10 * FL_PAGE_SIZE, 4 * FL_PAGE_SIZE);
	CHECK(rt->nfree == 1 && rt->free_extents[0].first == 0 && rt->free_extents[0].count == PAGES,
	      "unmapped with a hole, then twice, then a part freed: one free extent of the whole region (%zu extents)",
	      rt->nfree);
	CHECK(atomic_load(&rt->heap_bytes) == 0, "heap_bytes 0 after the repeated unmaps (%zu)",
	      (size_t)atomic_load(&rt->heap_bytes));
	/* a MAP_FIXED over a range part in use, part free (unmapped): every page taken, so no later
	 * allocation is given them again */
	blk = fl_region_alloc(64 * FL_PAGE_SIZE, FL_PAGE_SIZE);
	fl_region_unmap(blk + 8 * FL_PAGE_SIZE, 8 * FL_PAGE_SIZE);
	fl_region_unmap(blk + 60 * FL_PAGE_SIZE, 4 * FL_PAGE_SIZE);
	fl_region_claim(blk, 64 * FL_PAGE_SIZE);
	size_t bfirst = fl_page_index(rt, (uint64_t)(uintptr_t)blk);
	bool overlap = false;
	for (size_t i = 0; i < rt->nfree; i++)
		overlap |= rt->free_extents[i].first < bfirst + 64 && bfirst < rt->free_extents[i].first + rt->free_extents[i].count;
	CHECK(!overlap && atomic_load(&rt->heap_bytes) == 64 * FL_PAGE_SIZE,
	      "MAP_FIXED over a range with holes: no free extent left in it, heap_bytes 64 pages (%zu)",
	      (size_t)atomic_load(&rt->heap_bytes));
	fl_region_free(blk, 64 * FL_PAGE_SIZE);
	CHECK(rt->nfree == 1 && atomic_load(&rt->heap_bytes) == 0, "freed again: one extent, heap_bytes 0");
	/* exhaustion, then reuse: -M bounds the peak, not the total */
	void *all = fl_region_alloc((size_t)REGION_MIB << 20, FL_PAGE_SIZE);
	CHECK(all != NULL, "the whole region in one block");
	atomic_store(&rt->exhausted_reported, false);
	CHECK(fl_region_alloc(FL_PAGE_SIZE, FL_PAGE_SIZE) == NULL && atomic_load(&rt->exhausted_reported),
	      "a full region: NULL, and reported (one line on stderr)");
	fl_region_free(all, (size_t)REGION_MIB << 20);
	CHECK(fl_region_alloc((size_t)REGION_MIB << 20, FL_PAGE_SIZE) == all, "the same addresses again after the free");
	printf("# %u allocs, %u alloc_at granted, %u refused, %u frees/unmaps, %u allocs found no room\n", allocs, at_ok,
	       at_refused, frees, nulls);
	CHECK(allocs > 1000 && at_ok > 100 && at_refused > 100 && frees > 1000, "the sequence exercised every operation");
	return check_summary("test_rt_region");
}
