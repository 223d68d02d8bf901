/* test_mrc.c: unit tests of the miss-ratio curve's models (tools/analyze/mrc.c) on hand-made
 * streams of sampled accesses whose refaults are known by construction:
 *   1. a cyclic scan of P pages, L passes: with fewer pages kept than P every reuse refaults under
 *      lru, fifo and clock alike ((L - 1) x P), with more none does; the same scan sampled 1 page in
 *      2 (rate 0.5) predicts the same whole-program counts;
 *   2. H hot pages used between first touches of an endless stream of cold pages: lru keeps the
 *      hot pages (their reuse distance is 2H - 1), the runtime's clock keeps them too (each hot page
 *      the hand unmaps on trial comes back by a soft fault long before the soft pool lets it go;
 *      at most once each, at the first sweep),
 *      fifo does not (a hot page leaves after -L insertions, however often it is used). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mrc.h"

#include "check.h"

#define PAGE 4096ull

struct stream {
	struct mrc_process proc;
	size_t cap;
	uint32_t *last; /* per page: index of its latest access, or UINT32_MAX */
};

static void stream_init(struct stream *s, size_t max_accesses, size_t pages, double rate)
{
	memset(s, 0, sizeof(*s));
	s->proc.rate = rate;
	s->cap = max_accesses;
	s->proc.access_page = calloc(max_accesses, sizeof(uint32_t));
	s->proc.access_first = calloc(max_accesses, 1);
	s->proc.reuse_page = calloc(max_accesses, sizeof(uint32_t));
	s->proc.reuse_distance = calloc(max_accesses, sizeof(uint32_t));
	s->last = malloc(pages * sizeof(uint32_t));
	REQUIRE(s->proc.access_page && s->proc.access_first && s->proc.reuse_page && s->proc.reuse_distance && s->last,
		"out of memory");
	memset(s->last, 0xff, pages * sizeof(uint32_t));
	s->proc.sampled_pages = pages;
}

/* Appends an access to PAGE; a reuse's distance is counted the slow way (distinct pages since). */
static void stream_touch(struct stream *s, uint32_t page)
{
	struct mrc_process *p = &s->proc;
	if (p->accesses >= s->cap)
		REQUIRE(false, "stream full");
	uint32_t prev = s->last[page];
	p->access_page[p->accesses] = page;
	p->access_first[p->accesses] = prev == UINT32_MAX;
	if (prev != UINT32_MAX) {
		uint32_t distinct = 0;
		for (size_t q = 0; q < p->sampled_pages; q++)
			distinct += q != page && s->last[q] != UINT32_MAX && s->last[q] > prev;
		p->reuse_page[p->nreuses] = page;
		p->reuse_distance[p->nreuses++] = distinct;
	}
	s->last[page] = (uint32_t)p->accesses++;
}

static void stream_free(struct stream *s)
{
	free(s->proc.access_page), free(s->proc.access_first), free(s->proc.reuse_page), free(s->proc.reuse_distance);
	free(s->last);
}

static double predict(struct stream *s, uint64_t local_pages, enum mrc_policy policy)
{
	struct mrc_model m = { .procs = &s->proc, .nprocs = 1 };
	return mrc_predict(&m, local_pages * PAGE, policy).predicted;
}

static void cyclic_scan(void)
{
	enum { P = 600, L = 4 };
	for (int sampled = 0; sampled < 2; sampled++) {
		double rate = sampled ? 0.5 : 1.0;
		size_t pages = sampled ? P / 2 : P;
		struct stream s;
		stream_init(&s, pages * L, pages, rate);
		for (int l = 0; l < L; l++)
			for (uint32_t p = 0; p < pages; p++)
				stream_touch(&s, p);
		for (enum mrc_policy pol = MRC_POLICY_CLOCK; pol <= MRC_POLICY_LRU; pol++) {
			double small = predict(&s, P / 2, pol), large = predict(&s, 2 * P, pol);
			/* every re-touch misses; but the clock, once it evicts directly (no locality: the
			 * adaptive clock), passes the scan in address order and keeps a few of its pages */
			double low = pol == MRC_POLICY_CLOCK ? 0.95 : 0.98;
			CHECK(small > (L - 1) * P * low && small < (L - 1) * P * 1.02,
			      "cyclic scan of %d pages (rate %.1f), %s, %d pages kept: %.0f refaults, want %d", P, rate,
			      mrc_policy_name(pol), P / 2, small, (L - 1) * P);
			CHECK(large == 0, "cyclic scan of %d pages (rate %.1f), %s, %d pages kept: %.0f refaults, want 0", P,
			      rate, mrc_policy_name(pol), 2 * P, large);
		}
		stream_free(&s);
	}
}

static void hot_and_cold(void)
{
	enum { H = 16, N = 6000, KEPT = 400 };
	struct stream s;
	stream_init(&s, 2 * N, N + H, 1.0);
	for (uint32_t i = 0; i < N; i++) {
		stream_touch(&s, H + i);     /* a cold page, never used again */
		stream_touch(&s, i % H);     /* a hot one */
	}
	double lru = predict(&s, KEPT, MRC_POLICY_LRU), clock = predict(&s, KEPT, MRC_POLICY_CLOCK);
	double fifo = predict(&s, KEPT, MRC_POLICY_FIFO);
	CHECK(lru == 0, "hot and cold, lru: %.0f refaults, want 0 (hot reuse distance %d < %d pages)", lru, 2 * H - 1, KEPT);
	/* the hand's first sweep finds every page unreferenced (resident uses set no bit), the hot pages
	 * first in address order, so each may leave once, before its soft faults keep it */
	CHECK(clock <= H, "hot and cold, clock: %.0f refaults, want at most %d (soft faults keep the hot pages)", clock, H);
	/* fifo: every hot page leaves after about KEPT insertions (one cold page per step) */
	CHECK(fifo > 0.5 * N * H / KEPT && fifo < 2.0 * N * H / KEPT,
	      "hot and cold, fifo: %.0f refaults, want about %d (each hot page once per %d steps)", fifo, N * H / KEPT, KEPT);
	stream_free(&s);
}

static void policy_names(void)
{
	enum mrc_policy p;
	CHECK(mrc_policy_parse("fifo", &p) == 0 && p == MRC_POLICY_FIFO && strcmp(mrc_policy_name(p), "fifo") == 0, "fifo");
	CHECK(mrc_policy_parse("clock", &p) == 0 && p == MRC_POLICY_CLOCK, "clock");
	CHECK(mrc_policy_parse("lru", &p) == 0 && p == MRC_POLICY_LRU, "lru");
	CHECK(mrc_policy_parse("arc", &p) < 0, "an unknown policy is refused");
}

int main(void)
{
	cyclic_scan();
	hot_and_cold();
	policy_names();
	return check_summary("test_mrc");
}
