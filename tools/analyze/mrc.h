/* mrc.h: the miss-ratio curve of a recording made with `record --mrc` — predicted refaults for
 * any local-memory size (-L), from the reuse distances of the spatially sampled pages (SHARDS).
 * A model, no printing (render/mrc_output.c prints it). */
#ifndef FAULTLINE_MRC_H
#define FAULTLINE_MRC_H

#include <stddef.h>
#include <stdint.h>

#include "trace_reader.h"

/* One process's sampled reuses. */
struct mrc_process {
	uint32_t pid;
	double rate;                 /* sampling rate: threshold / 2^32 */
	uint64_t local_limit_bytes;  /* -L of the --mrc run itself (0: unlimited) */
	uint64_t max_pages;          /* the run's cap on sampled pages (meta.json mrc_max_pages; 0: unknown) */
	uint64_t budget;             /* the run's cost budget (meta.json mrc_budget; 0: none or unknown) */
	uint64_t budget_cuts;        /* times the budget lowered the rate (stats.json mrc_budget_cuts) */
	double blind_pages;          /* reuses nearer than this many pages are not seen (record --mrc-gap,
	                              * runtime/probe.c); 0: not recorded (before the option) */
	uint64_t peak_bytes;         /* its peak of local memory (stats.json), or distinct pages / rate */
	uint64_t sampled_pages;      /* distinct sampled pages seen */
	uint64_t accesses;           /* accesses to sampled pages (fault records) */
	size_t nreuses;
	uint32_t *reuse_page;        /* the page (index among the sampled pages) of each reuse */
	uint32_t *reuse_distance;    /* distinct other sampled pages touched since its previous access */
	uint32_t *access_page;       /* each access (`accesses` of them, in time order): its page, as an
	                              * index among the sampled pages (which are in address order) */
	uint8_t *access_first;       /* 1 where the access is a first touch (a new page, or one freed
	                              * and allocated again), 0 for a re-touch */
};

/* The replacement a prediction models. LRU: from the reuse distances (SHARDS). CLOCK and FIFO:
 * a miniature simulation (Waldspurger et al., ATC'17) of the runtime's own policy (runtime/
 * evict.c) over the sampled accesses, with the cache scaled by the sampling rate. */
enum mrc_policy { MRC_POLICY_CLOCK, MRC_POLICY_FIFO, MRC_POLICY_LRU };

struct mrc_model {
	struct mrc_process *procs;
	size_t nprocs;
	size_t skipped;              /* processes recorded without --mrc */
	uint64_t peak_bytes;         /* the largest process peak */
};

struct mrc_row {
	uint64_t local_bytes;
	double predicted, lower, upper; /* refaults; [lower, upper] about 95 % (sampling error) */
};

/* Builds the model from every process of rec recorded with --mrc. -1 with a reason in err when
 * none was, or out of memory. */
int mrc_build(const struct fl_recording *rec, struct mrc_model *out, char *err, size_t errlen);

/* Predicted refaults of the whole recording (processes summed, each with local_bytes of local
 * memory) under POLICY, with the band of the sampling error. predicted is NaN when out of memory. */
struct mrc_row mrc_predict(const struct mrc_model *m, uint64_t local_bytes, enum mrc_policy policy);

/* "clock", "fifo" or "lru" -> *policy; -1 for another name. */
int mrc_policy_parse(const char *name, enum mrc_policy *policy);
const char *mrc_policy_name(enum mrc_policy policy);

/* The sizes of a curve: every power of two from 1 MiB to the peak (and the next one), the peak
 * and its halves down to 1/8, plus `extra` (nextra values), sorted and unique. Returns a
 * malloc'd array (free it) of *n sizes, or NULL when out of memory. */
uint64_t *mrc_sizes(const struct mrc_model *m, const uint64_t *extra, size_t nextra, size_t *n);

void mrc_free(struct mrc_model *m);

#endif
