/* locality.h: spatial and temporal locality scores of a page-level access (fault) stream.
 *
 * One scorer per group of accesses (a callsite, an allocation site, a thread, the whole process):
 * feed it the page numbers the group touched, in order, and read two scores in [0, 1]:
 *   spatial  — how close each page is to the pages just before it (1: unit stride, 0: random);
 *   temporal — how soon pages are reused, in distinct pages in between (1: reused at once,
 *              0: never reused within N distinct pages).
 * Definitions, parameters and the exact conventions are written at the top of locality.c
 * (Weinberg et al. SC'05 scores adapted to pages; docs/design.md, "Ranges and locality").
 *
 * Cost: O(log N) per access (reuse distance by a Fenwick tree over access times, a hash map from
 * page to its last access); memory grows with the distinct pages of the group, up to a bound of
 * about 57 bytes × 2^log2_n (the only pages whose reuse can still score), and starts at ~1 KiB, so
 * thousands of scorers are cheap. Not thread-safe: one scorer per thread at a time. */
#ifndef FAULTLINE_LOCALITY_H
#define FAULTLINE_LOCALITY_H

#include <stddef.h>
#include <stdint.h>

/* A page seen again within the spatial window (stride 0). */
enum locality_stride0 {
	LOCALITY_STRIDE0_EXCLUDE = 0, /* not a spatial sample at all (default) */
	LOCALITY_STRIDE0_ZERO = 1,    /* a sample of weight 0 */
};

struct locality_params {
	unsigned window;      /* W: accesses looked back for the stride (default 32; 1..1024) */
	unsigned stride_bins; /* strides 1..stride_bins score 1/stride, longer ones 0 (default 128) */
	unsigned log2_n;      /* L: reuse is scored up to N = 2^L distinct pages (default 17; 1..28) */
	enum locality_stride0 stride0;
};

#define LOCALITY_MAX_LOG2_N 28

/* The scores and the additive sums behind them. Sums of several scorers (or of one scorer at two
 * times, subtracted) give the scores of the union (or of the interval): spatial = spatial_sum /
 * spatial_samples, temporal = temporal_sum / accesses. */
struct locality_scores {
	double spatial;          /* in [0, 1]; 0 when there is no sample */
	double temporal;         /* in [0, 1]; 0 when there is no access */
	uint64_t accesses;       /* pages fed */
	uint64_t spatial_samples;/* accesses with a stride (not the first; not stride 0 when excluded) */
	double spatial_sum;      /* Σ 1/stride over the samples (0 beyond stride_bins) */
	double temporal_sum;     /* Σ weight of each access's reuse distance */
	uint64_t cold;           /* first accesses to a page, and reuses after more than N distinct
				    pages (the scorer forgets a page N distinct pages later: both
				    weigh 0, so they need not be told apart) */
	uint64_t reuse_bins[LOCALITY_MAX_LOG2_N]; /* reuses by bin i: Mattson depth s = d + 1 in
						     (2^i, 2^(i+1)], bin 0 also s = 1 */
	uint64_t stride_one;     /* samples with stride 1 */
	uint64_t stride_zero;    /* accesses with stride 0 (excluded or zero-weighted) */
};

/* Fills P with the defaults (W 32, 128 stride bins, L 17, stride 0 excluded). */
void locality_params_default(struct locality_params *p);

/* A new scorer; PARAMS NULL means the defaults. NULL with errno EINVAL (parameter out of range) or
 * ENOMEM. */
struct locality *locality_new(const struct locality_params *params);

/* Feeds one access to PAGE (an address >> page shift). Returns 0, or -1 with errno ENOMEM (the
 * access is then not counted and the scorer stays consistent). */
int locality_access(struct locality *loc, uint64_t page);

void locality_get_scores(const struct locality *loc, struct locality_scores *out);

/* Weight the temporal score gives to Mattson depth S (= reuse distance + 1; 0 = cold) under PARAMS. */
double locality_reuse_weight(const struct locality_params *params, uint64_t depth);

/* Bytes the scorer holds now. */
size_t locality_memory(const struct locality *loc);

void locality_free(struct locality *loc);

#endif
