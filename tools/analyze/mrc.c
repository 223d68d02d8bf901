/* mrc.c: the miss-ratio curve of a `record --mrc` recording (mrc.h).
 *
 * Under --mrc the runtime (runtime/probe.c) follows a spatial sample of the pages, chosen by
 * fl_probe_page_hash(page) < threshold (trace.h; the rate R = threshold / 2^32), and every access
 * it sees to a sampled page is a fault record: the first touch, then a re-touch (kind access)
 * each time the page had been unmapped on trial again. The sampled accesses of a process, in
 * time order, give each re-touch its reuse (stack) distance among the sampled pages: the number
 * of distinct other sampled pages touched since the page's previous access (a Fenwick tree over
 * the access positions, one marker at each page's latest access: O(n log n)). SHARDS (Waldspurger
 * et al., FAST'15): a distance d among the sampled pages stands for d / R pages of the whole, and
 * each sampled reuse for 1 / R reuses.
 *
 * Prediction for -L = C pages. The pages the runtime can keep are C minus the free reserve its
 * evictor keeps (runtime/evict.c: between 1/32 and 1/16 of -L, at most 4096 pages; the middle is
 * taken). A first touch of a page freed and allocated again is a first touch under any -L, not a
 * reuse. Three models:
 *   lru: a reuse misses (refaults) when its scaled distance is at least the pages kept.
 *   clock, fifo: a miniature simulation (Waldspurger et al., "Cache Modeling and Optimization
 *     using Miniature Simulations", ATC'17) of the runtime's own policy over the sampled accesses,
 *     with the pages kept scaled by the rate; each simulated miss stands for 1 / R. The runtime's
 *     clock is not LRU: it sees only faults (a resident page's use sets no bit), it unmaps on
 *     trial into a soft pool of -L/8 pages, oldest soft pages leave for real, and it adapts: where
 *     pages rescued from the pool are rescued again no more often than any, it evicts the pages
 *     its hand passes directly but for a sample and, while first touches are most installs, the
 *     pages first touched among the last -L/4 installs (evict.c, "the adaptive clock"; modelled with the
 *     same counts, its constants scaled by the rate: sqlite3 at 1/4 and 1/2 of its peak -0.4 and
 *     -0.5 %, where the model without adaptation said +8.8 and +14 %). Where a working set
 *     is about the size of -L the two differ by 2x and more (sqlite3 at 1/8 of its peak: 54 k
 *     refaults measured, LRU 121 k). The miniature cache must hold enough sampled pages: at 1 in
 *     8 that point (56 of them, on a cliff) came out 16-31 % low, at 1 in 2 (224) within 6 %,
 *     hence record --mrc's dense start on small programs (runtime/probe.c). On a cliff the model's
 *     details still decide: modelling inline eviction's batches exactly (local memory swinging
 *     from -L down by 64 pages) moved sqlite3 with 50 k rows at 1/8 (1.05 MiB) from +23 % to
 *     +10 % but the 100 k-row run's 1/8 point from -2 % to -23 %; not kept.
 * The rate may have dropped during the run, for the sample's size or for its cost (record
 * --mrc-budget, runtime/probe.c); either way only the pages under the final threshold are kept,
 * for the whole run, and the band widens as they thin.
 * The band: the estimate is a Horvitz-Thompson sum over the sampled pages, whose variance is
 * (1 - R) / R^2 * sum of m_i^2 (m_i = the misses of sampled page i), and the distance threshold
 * itself is uncertain by the binomial count of sampled pages in C pages (relative error
 * 1 / sqrt(C R)); lower and upper take both at two standard errors.
 *
 * What it cannot see: a page re-touched before the prober re-armed it (once about --mrc-gap other
 * pages were touched, runtime/probe.c) shows no reuse for that touch, and its next one looks up to
 * that much farther than it was; pages the program frees leave local memory in the runtime but stay in
 * the models until they are pushed out (python3, which frees much, is predicted ~10 % high). The
 * sampling error is the band's: with a few hundred sample pages in a small -L, which pages were
 * drawn matters (graph_bfs 2^16 at 1/8 of its 9 MiB: clock +30 % at 1 page in 8, -5 % at 1 in 1). */
#include "mrc.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "faultline/evict_sizes.h"
#include "faultline/record_schema.h"
#include "faultline/trace.h"
#include "fault_stream.h"
#include "stats_json.h"

#define NO_ACCESS UINT32_MAX

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Fenwick tree over positions 0 .. n-1 (1-based inside). */
static void fenwick_add(int32_t *tree, size_t n, size_t pos, int32_t delta)
{
	for (size_t i = pos + 1; i <= n; i += i & (~i + 1))
		tree[i] += delta;
}

static int64_t fenwick_prefix(const int32_t *tree, size_t pos_inclusive)
{
	int64_t sum = 0;
	for (size_t i = pos_inclusive + 1; i > 0; i -= i & (~i + 1))
		sum += tree[i];
	return sum;
}

static bool mrc_threshold_of(const struct fl_process *proc, uint64_t *threshold)
{
	if (proc->has_stats && stats_json_uint(&proc->stats, FL_STATS_MRC_THRESHOLD, threshold) == 0)
		return *threshold > 0;
	return stats_json_uint(&proc->meta, FL_META_MRC_THRESHOLD, threshold) == 0 && *threshold > 0;
}

/* Sorts the n values of v and keeps each once, in place; returns how many remain. */
static size_t sort_unique(uint64_t *v, size_t n)
{
	size_t distinct = 0;
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), compare_u64);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || v[i] != v[i - 1])
			v[distinct++] = v[i];
	return distinct;
}

/* Appends PAGE to a growable array. 0, or -1 when out of memory. */
static int push_page(uint64_t **v, size_t *n, size_t *cap, uint64_t page)
{
	if (*n == *cap) {
		size_t grown = *cap ? *cap * 2 : 4096;
		uint64_t *p = realloc(*v, grown * sizeof(*p));
		if (!p)
			return -1;
		*v = p;
		*cap = grown;
	}
	(*v)[(*n)++] = page;
	return 0;
}

/* Notes PAGE among the distinct pages touched: an array made unique whenever it fills, so it
 * holds about the distinct pages, not every fault. 0, or -1 when out of memory. */
static int note_touched(uint64_t **v, size_t *n, size_t *cap, uint64_t page)
{
	if (*n == *cap && *n) {
		*n = sort_unique(*v, *n);
		if (*n < *cap / 2)
			return push_page(v, n, cap, page);
	}
	return push_page(v, n, cap, page);
}

/* The sampled accesses of one process -> its reuses. 0, or -1 (err says why). The faults are
 * walked once through a fault stream: memory holds the sampled accesses and the distinct pages,
 * not every fault. */
static int build_process(const struct fl_process *proc, uint64_t threshold, struct mrc_process *mp, char *err,
			 size_t errlen)
{
	uint64_t page_size = proc->page_size ? proc->page_size : 4096;
	size_t n = 0, ntouched = 0, pages_cap = 0, touched_cap = 0, first_cap = 0;
	uint64_t *pages = NULL, *ids = NULL;
	uint64_t *touched = NULL; /* the distinct pages the faults touched (made unique as it fills) */
	bool *first = NULL;
	uint32_t *last = NULL;
	int32_t *tree = NULL;
	int rc = -1, got;
	struct fl_fault_stream *fs = NULL;
	const struct fl_fault *f;

	memset(mp, 0, sizeof(*mp));
	mp->pid = proc->pid;
	mp->rate = (double)threshold / 4294967296.0;
	snprintf(err, errlen, "out of memory (process %u)", proc->pid);
	if (fl_fault_stream_open(proc, &fs, err, errlen) < 0)
		goto out;
	while ((got = fl_fault_stream_next(fs, &f)) > 0) {
		const struct fl_fault_record *r = &f->rec;
		if (r->kind == FL_FAULT_CONCURRENT || r->addr < proc->region_start)
			continue;
		uint64_t page = (r->addr - proc->region_start) / page_size;
		if (note_touched(&touched, &ntouched, &touched_cap, page) < 0)
			goto out;
		if (fl_probe_page_hash(page) >= threshold)
			continue;
		if (n == first_cap) {
			size_t grown = first_cap ? first_cap * 2 : 4096;
			bool *p = realloc(first, grown);
			if (!p)
				goto out;
			first = p;
			first_cap = grown;
		}
		first[n] = r->kind == FL_FAULT_FIRST_TOUCH;
		if (push_page(&pages, &n, &pages_cap, page) < 0)
			goto out;
	}
	if (got < 0) {
		snprintf(err, errlen, "%s", fl_fault_stream_error(fs));
		goto out;
	}
	ids = malloc((n + 1) * sizeof(*ids));
	if (!ids)
		goto out;
	if (n)
		memcpy(ids, pages, n * sizeof(*ids));
	size_t distinct = sort_unique(ids, n);
	last = malloc((distinct + 1) * sizeof(*last));
	tree = calloc(n + 1, sizeof(*tree));
	mp->reuse_page = malloc((n + 1) * sizeof(*mp->reuse_page));
	mp->reuse_distance = malloc((n + 1) * sizeof(*mp->reuse_distance));
	mp->access_page = malloc((n + 1) * sizeof(*mp->access_page));
	mp->access_first = malloc(n + 1);
	if (!last || !tree || !mp->reuse_page || !mp->reuse_distance || !mp->access_page || !mp->access_first)
		goto out;
	for (size_t i = 0; i < distinct; i++)
		last[i] = NO_ACCESS;
	for (size_t j = 0; j < n; j++) {
		uint64_t *hit = bsearch(&pages[j], ids, distinct, sizeof(*ids), compare_u64);
		uint32_t id = (uint32_t)(hit - ids);
		mp->access_page[j] = id;
		mp->access_first[j] = last[id] == NO_ACCESS || first[j];
		if (last[id] != NO_ACCESS) {
			if (!first[j]) { /* markers strictly between the previous access and this one */
				int64_t d = fenwick_prefix(tree, j - 1) - fenwick_prefix(tree, last[id]);
				mp->reuse_page[mp->nreuses] = id;
				mp->reuse_distance[mp->nreuses++] = (uint32_t)d;
			}
			fenwick_add(tree, n, last[id], -1);
		}
		fenwick_add(tree, n, j, 1);
		last[id] = (uint32_t)j;
	}
	mp->sampled_pages = distinct;
	/* The rate the sample really has: its distinct pages over all the distinct pages the
	 * process's faults touched, counted alike (every kind but concurrent, in the region): a page's
	 * first touch is a fault record whether it is sampled or not, and a forked child's inherited
	 * pages show by their refaults, sampled or not, so the sample is a subset and the rate at
	 * most 1. The hash draws about R of them; scaling by what it drew rather than by R removes
	 * that part of the sampling error (SHARDS' adjustment in spirit). R when nothing was touched. */
	ntouched = sort_unique(touched, ntouched);
	if (ntouched && distinct)
		mp->rate = (double)distinct / (double)ntouched;
	mp->accesses = n;
	uint64_t peak = 0;
	if (!(proc->has_stats && stats_json_uint(&proc->stats, FL_STATS_PEAK_RESIDENT, &peak) == 0) || peak == 0)
		peak = (uint64_t)((double)distinct / mp->rate) * page_size;
	mp->peak_bytes = peak;
	stats_json_uint(&proc->meta, FL_META_LOCAL_LIMIT, &mp->local_limit_bytes);
	stats_json_uint(&proc->meta, FL_META_MRC_MAX_PAGES, &mp->max_pages);
	stats_json_uint(&proc->meta, FL_META_MRC_BUDGET, &mp->budget);
	if (proc->has_stats)
		stats_json_uint(&proc->stats, FL_STATS_MRC_BUDGET_CUTS, &mp->budget_cuts);
	/* the re-arm gap: G pages of the whole, as the runtime counts it, round(G x rate) sample
	 * accesses and at least one (runtime/probe.c: mrc_gap_accesses), each standing for 1 / rate
	 * pages; a recording from before mrc_gap_pages counted it in sample accesses */
	uint64_t gap = 0;
	if (stats_json_uint(&proc->meta, FL_META_MRC_GAP_PAGES, &gap) == 0 && gap)
		mp->blind_pages = fmax(1, round((double)gap * mp->rate)) / mp->rate;
	else if (stats_json_uint(&proc->meta, FL_META_MRC_GAP, &gap) == 0 && gap)
		mp->blind_pages = (double)gap / mp->rate;
	rc = 0;
out:
	fl_fault_stream_close(fs);
	free(pages);
	free(touched);
	free(first);
	free(ids);
	free(last);
	free(tree);
	return rc;
}

int mrc_build(const struct fl_recording *rec, struct mrc_model *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	out->procs = calloc(rec->nprocs + 1, sizeof(*out->procs));
	if (!out->procs) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < rec->nprocs; i++) {
		uint64_t threshold;
		if (!mrc_threshold_of(&rec->procs[i], &threshold)) {
			out->skipped++;
			continue;
		}
		struct mrc_process *mp = &out->procs[out->nprocs];
		if (build_process(&rec->procs[i], threshold, mp, err, errlen) < 0) {
			out->nprocs++;
			mrc_free(out);
			return -1;
		}
		out->nprocs++;
		if (mp->peak_bytes > out->peak_bytes)
			out->peak_bytes = mp->peak_bytes;
	}
	if (out->nprocs == 0) {
		mrc_free(out);
		snprintf(err, errlen, "%s was not recorded with --mrc (no process has an mrc_threshold in its "
			 "meta.json): record it again with `faultline record --mrc`", rec->dir);
		return -1;
	}
	return 0;
}

/* ---- miniature simulations of the runtime's policies (runtime/evict.c) ---- */

enum { MINI_NEW, MINI_FAR, MINI_RESIDENT, MINI_SOFT };

/* One simulated local memory over a process's sampled pages (indices 0 .. pages-1, in address
 * order, as the clock hand walks them). */
struct mini_cache {
	enum mrc_policy policy;
	size_t pages, capacity, soft_target;  /* capacity: pages kept (resident + soft) */
	/* clock: the adaptive clock (runtime/evict.c): trials, or direct eviction but for a sample */
	bool trial;
	uint8_t *rescue;                      /* per page: RESCUE_LAST, RESCUE_REPEAT */
	double window, min_repeat;            /* the runtime's decision window and trust, scaled */
	double trials, trials_repeat, rescues, rescues_repeat;
	size_t soft_target_direct;
	uint8_t *where;                       /* MINI_* per page */
	uint8_t *ref;                         /* clock: a fault brought it in since the hand passed */
	uint32_t *arrived;                    /* clock: per page, `installs` at its first touch (else old) */
	uint64_t installs, first_installs;    /* clock: pages brought in so far, and by first touches */
	uint64_t phase_installs, phase_first; /* clock: the two when the phase was last judged */
	bool fresh;                           /* clock: a fresh phase: young pages are spared */
	double young;                         /* clock: arrivals the direct sweep passes over, scaled */
	uint32_t *seq;                        /* per page: bumped at every move, so queue entries go stale */
	uint32_t *queue, *queue_seq;          /* clock: the soft pool; fifo: resident pages; oldest first */
	size_t head, tail, local, soft, hand;
};

/* The adaptive clock, as runtime/evict.c runs it: a page unmapped on trial and one rescued
 * from the soft pool are counted; after each window of trials the clock keeps taking trials
 * while pages rescued at their previous trial are rescued again at least twice as often as any. */
#define RESCUE_LAST 0x01
#define RESCUE_REPEAT 0x02

static void mini_note_trial(struct mini_cache *c, size_t p)
{
	uint8_t f = c->rescue[p];
	c->rescue[p] = (f & RESCUE_LAST) ? RESCUE_REPEAT : 0;
	c->trials++;
	if (f & RESCUE_LAST)
		c->trials_repeat++;
}

static void mini_note_rescue(struct mini_cache *c, size_t p)
{
	uint8_t f = c->rescue[p];
	c->rescue[p] = RESCUE_LAST;
	c->rescues++;
	if (f & RESCUE_REPEAT)
		c->rescues_repeat++;
}

static void mini_decide(struct mini_cache *c)
{
	if (c->trials < c->window)
		return;
	c->trial = c->trials_repeat >= c->min_repeat &&
		   c->rescues_repeat * c->trials >= 2 * c->rescues * c->trials_repeat;
	c->trials /= 2, c->trials_repeat /= 2, c->rescues /= 2, c->rescues_repeat /= 2;
}

/* The pages that keep taking trials while the clock evicts directly: the runtime takes 1 chunk
 * of 16 pages in 32 by address; here, 1 sampled page in 32 by its index. */
static bool mini_in_sample(size_t p)
{
	return ((uint32_t)p * 0x9e3779b1u) >> 27 == 0;
}

/* clock: unmaps resident page p on trial, into the soft pool. */
static void mini_trial(struct mini_cache *c, size_t p)
{
	c->where[p] = MINI_SOFT;
	c->queue[c->tail] = (uint32_t)p, c->queue_seq[c->tail++] = ++c->seq[p];
	c->soft++;
	mini_note_trial(c, p);
}

/* clock: moves the next unreferenced resident page (address order) into the soft pool; evicting
 * directly, only a page of the sample. */
static bool mini_sweep_one(struct mini_cache *c)
{
	for (size_t examined = 0; examined < 2 * c->pages + 1; examined++) {
		size_t p = c->hand;
		c->hand = p + 1 < c->pages ? p + 1 : 0;
		if (c->where[p] != MINI_RESIDENT || (!c->trial && !mini_in_sample(p)))
			continue;
		if (c->ref[p]) {
			c->ref[p] = 0;
			continue;
		}
		mini_trial(c, p);
		return true;
	}
	return false;
}

/* clock: a fresh phase while at least half of the last `young` installs were first touches
 * (runtime/evict.c, judge_phase). */
static void mini_judge_phase(struct mini_cache *c)
{
	uint64_t n = c->installs - c->phase_installs;
	if ((double)n < c->young)
		return;
	c->fresh = 2 * (c->first_installs - c->phase_first) >= n;
	c->phase_installs = c->installs, c->phase_first = c->first_installs;
}

/* clock, evicting directly: the next resident page the hand passes goes to the far store,
 * referenced or not, unless in a fresh phase it was first touched lately (runtime/evict.c,
 * arrived_lately); pages of the sample it passes take trials on the way. */
static bool mini_evict_direct(struct mini_cache *c)
{
	for (size_t examined = 0; examined < 2 * c->pages + 1; examined++) {
		size_t p = c->hand;
		c->hand = p + 1 < c->pages ? p + 1 : 0;
		if (c->where[p] != MINI_RESIDENT)
			continue;
		if (mini_in_sample(p)) {
			if (c->ref[p])
				c->ref[p] = 0;
			else
				mini_trial(c, p);
			continue;
		}
		if (c->fresh && (double)(uint32_t)((uint32_t)c->installs - c->arrived[p]) < c->young)
			continue;
		c->where[p] = MINI_FAR, c->seq[p]++, c->local--;
		return true;
	}
	return false;
}

/* Evicts one page for real (clock: the oldest soft page, after topping the pool up, or evicting
 * directly the next page the hand passes; fifo: the oldest resident page). False when none can
 * go. */
static bool mini_evict_one(struct mini_cache *c)
{
	if (c->policy == MRC_POLICY_CLOCK) {
		mini_decide(c);
		mini_judge_phase(c); /* at every eviction, as the runtime at every sweep */
		if (!c->trial && c->soft <= c->soft_target_direct && mini_evict_direct(c))
			return true;
		while (c->soft < (c->trial ? c->soft_target : c->soft_target_direct) + 1 && mini_sweep_one(c))
			;
	}
	uint8_t from = c->policy == MRC_POLICY_CLOCK ? MINI_SOFT : MINI_RESIDENT;
	while (c->head < c->tail) {
		uint32_t p = c->queue[c->head], s = c->queue_seq[c->head++];
		if (c->seq[p] != s || c->where[p] != from)
			continue; /* moved since it was queued */
		c->where[p] = MINI_FAR, c->seq[p]++, c->local--;
		if (from == MINI_SOFT)
			c->soft--;
		return true;
	}
	return false;
}

/* One access; true when it refaults. */
static bool mini_access(struct mini_cache *c, uint32_t p, bool first)
{
	uint8_t w = c->where[p];
	if (w == MINI_RESIDENT) {
		if (first) { /* freed and allocated again: its first touch faults, a fresh arrival */
			c->ref[p] = 1;
			c->arrived[p] = (uint32_t)c->installs++;
			c->first_installs++;
		}
		return false;
	}
	bool fresh_page = w == MINI_NEW || first; /* came in by its first touch: else never young */
	c->arrived[p] = (uint32_t)(fresh_page ? c->installs : c->installs - (uint64_t)(c->young + 1));
	c->installs++, c->first_installs += fresh_page;
	if (w == MINI_SOFT) { /* a soft fault: back, referenced */
		c->where[p] = MINI_RESIDENT, c->ref[p] = 1, c->seq[p]++, c->soft--;
		mini_note_rescue(c, p);
		return false;
	}
	bool refault = w == MINI_FAR && !first;
	c->where[p] = MINI_RESIDENT, c->ref[p] = 1, c->seq[p]++, c->local++;
	if (c->policy == MRC_POLICY_FIFO)
		c->queue[c->tail] = p, c->queue_seq[c->tail++] = c->seq[p];
	while (c->local > c->capacity && mini_evict_one(c))
		;
	return refault;
}

/* Misses per sampled page (into `misses`) of the simulated policy keeping `kept` sampled pages,
 * of which the clock's soft pool aims at `soft`, its direct sweep passing over the last `young`
 * arrivals (all three already scaled by the rate). */
static int simulate(const struct mrc_process *mp, enum mrc_policy policy, double kept, double soft, double young,
		    uint32_t *misses)
{
	struct mini_cache c = { .policy = policy, .pages = mp->sampled_pages, .trial = true };
	size_t queue_cap = mp->accesses + mp->sampled_pages + 1;
	c.capacity = kept < 1 ? 1 : (size_t)(kept + 0.5);
	c.soft_target = (size_t)(soft + 0.5);
	c.young = young;
	/* runtime/evict.c's constants (ADAPT_WINDOW 512 trials, ADAPT_MIN_REPEAT 32, a direct pool
	 * of 1/32 of the target but 16 pages at least), scaled by the sampling rate */
	c.window = 512 * mp->rate > 8 ? 512 * mp->rate : 8;
	c.min_repeat = 32 * mp->rate > 1 ? 32 * mp->rate : 1;
	double direct = soft / 32 > 16 * mp->rate ? soft / 32 : 16 * mp->rate;
	c.soft_target_direct = (size_t)(direct + 0.5);
	c.rescue = calloc(c.pages + 1, 1);
	c.where = calloc(c.pages + 1, 1), c.ref = calloc(c.pages + 1, 1);
	c.arrived = calloc(c.pages + 1, sizeof(*c.arrived));
	c.seq = calloc(c.pages + 1, sizeof(*c.seq));
	c.queue = malloc(queue_cap * sizeof(*c.queue)), c.queue_seq = malloc(queue_cap * sizeof(*c.queue_seq));
	int rc = -1;
	if (c.where && c.ref && c.seq && c.queue && c.queue_seq && c.rescue && c.arrived) {
		for (size_t i = 0; i < mp->accesses; i++)
			if (mini_access(&c, mp->access_page[i], mp->access_first[i]))
				misses[mp->access_page[i]]++;
		rc = 0;
	}
	free(c.where), free(c.ref), free(c.seq), free(c.queue), free(c.queue_seq), free(c.rescue), free(c.arrived);
	return rc;
}

/* The Horvitz-Thompson estimate of a process's misses from the misses of its sampled pages,
 * and its standard error. */
static void scale_misses(const struct mrc_process *mp, const uint32_t *misses, double *est, double *se)
{
	double sum = 0, sum_sq = 0;
	for (size_t i = 0; i < mp->sampled_pages; i++)
		sum += misses[i], sum_sq += (double)misses[i] * misses[i];
	*est = sum / mp->rate;
	*se = sqrt((1 - mp->rate) * sum_sq) / mp->rate;
}

/* Misses of one process keeping `kept` sampled pages (`soft` of them the clock's soft pool, and
 * `young` the arrivals its direct sweep passes over): estimate and standard error; `misses` is
 * scratch, one counter per sampled page. */
static void estimate(const struct mrc_process *mp, enum mrc_policy policy, double kept, double soft, double young,
		     uint32_t *misses, double *est, double *se)
{
	memset(misses, 0, (mp->sampled_pages + 1) * sizeof(*misses));
	if (policy == MRC_POLICY_LRU) {
		for (size_t i = 0; i < mp->nreuses; i++)
			if ((double)mp->reuse_distance[i] >= kept)
				misses[mp->reuse_page[i]]++;
	} else if (simulate(mp, policy, kept, soft, young, misses) < 0) {
		*est = *se = NAN; /* out of memory */
		return;
	}
	scale_misses(mp, misses, est, se);
}

static const char *const policy_names[] = { "clock", "fifo", "lru" }; /* by enum mrc_policy */

int mrc_policy_parse(const char *name, enum mrc_policy *policy)
{
	for (int i = 0; i < 3; i++)
		if (strcmp(name, policy_names[i]) == 0) {
			*policy = (enum mrc_policy)i;
			return 0;
		}
	return -1;
}

const char *mrc_policy_name(enum mrc_policy policy)
{
	return policy_names[policy];
}

struct mrc_row mrc_predict(const struct mrc_model *m, uint64_t local_bytes, enum mrc_policy policy)
{
	struct mrc_row row = { local_bytes, 0, 0, 0 };
	for (size_t p = 0; p < m->nprocs; p++) {
		const struct mrc_process *mp = &m->procs[p];
		uint32_t *misses = malloc((mp->sampled_pages + 1) * sizeof(*misses));
		if (!misses) {
			row.predicted = NAN; /* out of memory: the caller says so */
			return row;
		}
		uint64_t limit = local_bytes / 4096;
		double pages = (double)limit, high = (double)fl_evict_reserve_high(limit);
		/* free pages the runtime keeps on average: with the evictor thread (from 4096 pages of -L
		 * on) between high / 2 and high; below, faults evict inline, min(-L / 4, 64) at a time */
		double batch = (double)fl_evict_inline_batch(limit);
		double usable = pages - (pages >= FL_EVICTOR_MIN_PAGES ? 0.75 * high : batch / 2);
		if (usable < 1)
			usable = 1;
		double t = usable * mp->rate, spread = 2 / sqrt(t > 1 ? t : 1);
		double soft = (double)fl_evict_soft_target(limit) * mp->rate;
		double young = (double)fl_evict_young_installs(limit) * mp->rate;
		double est, se, est_lo, se_lo, est_hi, se_hi;
		estimate(mp, policy, t, soft, young, misses, &est, &se);
		estimate(mp, policy, t * (1 + spread), soft, young, misses, &est_lo, &se_lo); /* more room: fewer misses */
		estimate(mp, policy, t * (1 - spread) > 0 ? t * (1 - spread) : 0, soft, young, misses, &est_hi, &se_hi);
		/* the simulated policies are not stack algorithms: more room can miss more, locally */
		double low = fmin(est - 2 * se, fmin(est_lo - 2 * se_lo, est_hi - 2 * se_hi));
		double high_est = fmax(est + 2 * se, fmax(est_lo + 2 * se_lo, est_hi + 2 * se_hi));
		row.predicted += est;
		row.lower += low > 0 ? low : 0;
		row.upper += high_est;
		free(misses);
	}
	return row;
}

uint64_t *mrc_sizes(const struct mrc_model *m, const uint64_t *extra, size_t nextra, size_t *n)
{
	const uint64_t mib = 1048576;
	uint64_t peak = m->peak_bytes > mib ? m->peak_bytes : mib;
	uint64_t *sizes = malloc((80 + nextra) * sizeof(*sizes));
	size_t k = 0;
	if (!sizes)
		return NULL;
	for (uint64_t s = mib; k < 64; s *= 2) {
		sizes[k++] = s;
		if (s >= peak)
			break;
	}
	for (unsigned d = 1; d <= 8; d *= 2)
		if (peak / d >= mib)
			sizes[k++] = (peak / d + 4095) & ~(uint64_t)4095;
	for (size_t i = 0; i < nextra; i++)
		sizes[k++] = extra[i];
	qsort(sizes, k, sizeof(*sizes), compare_u64);
	size_t u = 0;
	for (size_t i = 0; i < k; i++)
		if (i == 0 || sizes[i] != sizes[u - 1])
			sizes[u++] = sizes[i];
	*n = u;
	return sizes;
}

void mrc_free(struct mrc_model *m)
{
	for (size_t i = 0; i < m->nprocs; i++) {
		free(m->procs[i].reuse_page);
		free(m->procs[i].reuse_distance);
		free(m->procs[i].access_page);
		free(m->procs[i].access_first);
	}
	free(m->procs);
	memset(m, 0, sizeof(*m));
}
