/* far_state.h: the far store's part of the runtime context (fl_runtime.farst), types only: the
 * generations of far copies, the far-traffic counters and the generic state every backend
 * shares. A leaf: the runtime's context (context.h) embeds it, and far_store.c, its backends and
 * far_prefetch.c read it; the functions that keep it are declared in far_store.h. */
#ifndef FL_FAR_STATE_H
#define FL_FAR_STATE_H

#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FL_FAR_MAX_GENS 32     /* generations one process reads; compacted beyond */
#define FL_FAR_NO_COPY 0       /* gen_of[page]: no far copy, the page reads as zeros; else gen + 1 */
#define FL_FAR_STALE_MAX 64    /* mirror pages dropped together, per handler */

/* One generation of far copies: a file (fd), or a key prefix (id) on memcached servers. */
struct fl_far_gen {
	int fd;
	uint64_t id;
	bool live;                 /* readable by this process */
	bool frozen;               /* a fork happened after pages were written here: read-only */
};

/* Counters of far traffic (stats.json). */
struct fl_far_stats {
	_Atomic uint64_t reads, read_pages, read_ns;       /* requests, pages, time in the backend */
	_Atomic uint64_t writes, write_pages, write_ns;    /* write-back batches, pages written */
	_Atomic uint64_t delay_ns;                         /* emulated latency + bandwidth, total */
	_Atomic uint64_t prefetch_requests, prefetched, prefetch_hits, prefetch_unused;
	_Atomic uint64_t mirror_drops;                     /* stale mirror pages dropped */
	_Atomic uint64_t compactions;
};

struct fl_prefetch;

/* The far store's part of the runtime context (fl_runtime.farst). */
struct fl_far_state {
	char spec[PATH_MAX];              /* FAULTLINE_FAR as given */
	char keep[PATH_MAX];              /* FAULTLINE_FAR_KEEP: keep files under this name */
	uint64_t latency_ns;              /* emulated, per far request */
	uint64_t bandwidth;               /* emulated, bytes per second; 0 = unlimited */
	unsigned prefetch;                /* read-ahead window in pages; 0 = off */
	/* generations (non-mem backends) */
	_Atomic uint8_t *gen_of;          /* per page: generation + 1; FL_FAR_NO_COPY = zeros */
	struct fl_far_gen gens[FL_FAR_MAX_GENS + 1];  /* + 1: the target of a compaction */
	unsigned ngens;                   /* live generations */
	_Atomic unsigned readers;         /* reads in flight (a compaction waits for them) */
	int pidfd;                        /* this process, for process_madvise */
	int cur;                          /* generation written to; -1 = to be created */
	size_t cur_written;               /* pages written into cur */
	_Atomic uint64_t forks;           /* bumped by the fork prepare handler */
	uint64_t forks_seen;              /* under the eviction lock */
	void *backend;                    /* backend state (its own mmap) */
	/* mirror pages that went stale (fl_far_mirror_stale), per handler, dropped in batches */
	uint32_t stale[16][FL_FAR_STALE_MAX];
	unsigned nstale[16];
	struct fl_prefetch *pf;           /* far_prefetch.c; NULL = off */
	_Atomic size_t prefetch_staged;   /* pages read ahead and not yet used or dropped (FAR | STAGED):
	                                     far_prefetch.c counts them, discards uncount them */
	struct fl_far_stats stats;
	_Atomic int failing;              /* a fatal far-store error is being reported */
	_Atomic bool mirror_reads_direct; /* process_vm_readv refused: installs read the mirror itself */
};

#endif
