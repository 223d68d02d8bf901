/* rap_dump.c: the text form of a RAP tree (rap_dump in inc/faultline/rap.h). Built only on
 * the public API (rap_walk, rap_hot_ranges, rap_get_stats), so it shows what any tool sees.
 *
 *   # rap eps=0.0100 eps_now=0.0100 b=4 n=200000 nodes=689 depth=13 gran=4096 thr=125.0 phi=0.0500
 *   [0x0000000000000000,0x0001000000000000) own=12 sub=200000 100.00%
 *     [0x0000000040000000,0x0000000050000000) own=3 sub=180211 90.11% HOT
 *
 * and in flat mode, after the header, "# lo hi est lower upper pct" and one line per hot
 * range. */
#include "faultline/rap.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>

struct dump {
	FILE *out;
	uint64_t n;
	const struct rap_range *hot; /* sorted by rap_hot_ranges' order */
	size_t nhot;
};

static double percent(uint64_t part, uint64_t n)
{
	return n ? 100.0 * (double)part / (double)n : 0.0;
}

static bool is_hot(const struct dump *d, uint64_t lo, uint64_t hi)
{
	size_t a = 0, b = d->nhot; /* binary search in (lo ascending, hi descending) order */
	while (a < b) {
		size_t m = a + (b - a) / 2;
		const struct rap_range *h = &d->hot[m];
		if (h->lo == lo && h->hi == hi)
			return true;
		if (h->lo < lo || (h->lo == lo && h->hi > hi))
			a = m + 1;
		else
			b = m;
	}
	return false;
}

static int dump_node(const struct rap_node_info *v, void *ctx)
{
	const struct dump *d = ctx;
	int rc = fprintf(d->out, "%*s[0x%016" PRIx64 ",0x%016" PRIx64 ") own=%" PRIu64 " sub=%" PRIu64
			 " %.2f%%%s\n", 2 * (int)v->depth, "", v->lo, v->hi, v->own, v->sub,
			 percent(v->sub, d->n), is_hot(d, v->lo, v->hi) ? " HOT" : "");
	return rc < 0 ? -1 : 0;
}

static int dump_flat(const struct dump *d)
{
	if (fprintf(d->out, "# lo hi est lower upper pct\n") < 0)
		return -1;
	for (size_t i = 0; i < d->nhot; i++) {
		const struct rap_range *h = &d->hot[i];
		if (fprintf(d->out, "0x%016" PRIx64 " 0x%016" PRIx64 " %" PRIu64 " %" PRIu64 " %" PRIu64
			    " %.2f\n", h->lo, h->hi, h->est, h->lower, h->upper,
			    percent(h->est, d->n)) < 0)
			return -1;
	}
	return 0;
}

int rap_dump(const rap_t *rap, FILE *out, double phi, unsigned mode)
{
	struct rap_stats st;
	rap_get_stats(rap, &st);
	struct dump d = { .out = out, .n = st.n };
	d.nhot = rap_hot_ranges(rap, phi, NULL, 0);
	struct rap_range *hot = NULL;
	if (d.nhot) {
		hot = malloc(d.nhot * sizeof(*hot));
		if (!hot)
			return -1;
		rap_hot_ranges(rap, phi, hot, d.nhot);
	}
	d.hot = hot;
	int rc = fprintf(out, "# rap eps=%.4f eps_now=%.4f b=%u n=%" PRIu64 " nodes=%zu depth=%u "
			 "gran=%" PRIu64 " thr=%.1f phi=%.4f\n", st.eps, st.eps_now, st.branch, st.n,
			 st.nodes, st.depth, UINT64_C(1) << st.gran_log2, st.threshold, phi) < 0 ? -1 : 0;
	if (!rc && (mode & RAP_DUMP_TREE))
		rc = rap_walk(rap, dump_node, &d);
	if (!rc && (mode & RAP_DUMP_FLAT))
		rc = dump_flat(&d);
	free(hot);
	if (!rc && fflush(out))
		rc = -1;
	return rc;
}
