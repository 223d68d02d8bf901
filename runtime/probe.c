/* probe.c: the access prober — sees re-touches of resident pages without memory pressure
 * (record --mrc, record --sample-accesses).
 *
 * A page of the sample is *armed*: the prober thread unmaps it on trial exactly as the clock
 * policy does (its content moves into its mirror page with UFFDIO_MOVE, or is dropped when clean
 * and its far copy is valid; nothing is written to a far store), and the page becomes SOFT, still
 * counted as local memory. The program's next touch of it is a MISSING fault, served from the
 * mirror by fault.c's soft path, which asks fl_probe_claim whether the prober armed it: then the
 * fault is recorded as FL_FAULT_ACCESS_SAMPLE (with its stack, through the normal path) instead
 * of FL_FAULT_SOFT, and counted apart (stats.json "access_samples", never in faults_total).
 * --mrc: fl_probe_note (after every served fault) hands a touched sample page to the prober
 * through a per-handler ring (one producer, one consumer, no lock, no allocation); it is armed
 * again once the program went on to other sample pages (below), by the handler of
 * the touching thread's next fault or at the prober's next tick (FAULTLINE_PROBE_PERIOD_US, 1 ms
 * by default). --sample-accesses: the prober sees the claim (the page's PROBE_ARMED flag
 * cleared) at its next tick and re-arms the page PROBE_ACCESS_REARM_MS later.
 *
 * Two ways to choose the sample:
 *   --mrc N (SHARDS, Waldspurger et al., FAST'15): page P is in the sample when
 *     fl_probe_page_hash(P) < threshold (trace.h), initially 2^32 / N (N = 2 by default).
 *     Fixed-size SHARDS: when more than mrc_max_pages (2048 by default) distinct pages have been
 *     sampled, the threshold drops (by buckets of 2^16 hash values) until 15/16 of the maximum
 *     remain, so the prober's memory and work are bounded, and a small program is sampled
 *     densely: its miniature caches at small -L hold enough pages (sqlite3's 14 MiB at 1/8 of
 *     its peak: 56 sample pages at 1 in 8 predicted 16-31 % low, 224 at 1 in 2 from 4.7 % low
 *     to 5.4 % high in nine recordings). The threshold drops for the sample's cost too (record
 *     --mrc-budget, mrc_keep_budget below), down to a floor of 32 pages. Every access the
 *     runtime sees to a sampled page is a fault record, so the reuse distances are computed
 *     offline (tools/analyze/mrc.c) from the faults file: crash-safe with the other streams.
 *   --sample-accesses RATE (in the spirit of DAMON's region sampling, in user space): *probes*,
 *     RATE per second (a token bucket). A probe arms one page and watches it for a window of
 *     PROBE_WINDOW_MS (DAMON's sampling interval): a touch within the window is one access sample
 *     (with its stack); an untouched page is restored (mapped again) when the window ends. So one
 *     probe measures whether its page is touched within W, P = 1 - e^(-λW) for a page touched λ
 *     times a second: about λW for a rarely used page, 1 for one in constant use.
 *     Where the probes go adapts to where the accesses are: a new probe takes a uniformly chosen
 *     resident page, and a page touched within its window stays in the set and is probed again
 *     (PROBE_ACCESS_REARM_MS after the touch, so the touching thread runs on), up to
 *     PROBE_ACCESS_PROBES probes in all; a page not touched leaves the set at once. Cold pages
 *     thus cost one probe each and the probes concentrate on the pages in use, the way DAMON's
 *     regions split around accessed memory.
 *     The per-MiB counts stay honest: pages enter the set uniformly (every resident page alike),
 *     and what follows depends only on the page's own accesses, so the expected samples of a MiB
 *     are (entries per MiB, the same everywhere) x g(λ), g(λ) = P + P^2 + ... + P^PROBES, one
 *     increasing function for all memory: equal access frequencies give equal samples per MiB
 *     wherever they are, a higher one more, saturating at PROBE_ACCESS_PROBES per entry (as
 *     DAMON's nr_accesses saturates). Many distinct pages are probed (about RATE per second, not
 *     a set's turnover), so a small hot array among much cold memory is seen steadily. The
 *     window is a time, not a count of re-arms, so a probe waiting for a token measures the same.
 *
 * Limits: with a memory limit (-L), armed pages are local memory the clock cannot evict; the
 * --mrc sample is capped at 1/16 of -L. A forked child starts its own prober (the parent's
 * armed pages stay armed in it). With a far store other than mem, a page restored by the prober
 * keeps its (stale) mirror page until it is evicted again.
 *
 * Runs on its own thread, which takes evict_lock around each round (the mirror must be
 * registered as a move destination once, evict.c); pages are taken with trylock only. */
#include "probe.h"
#include "pages.h"
#include "diag.h"
#include "uffd_compat.h"
#include "faultline/env.h"
#include "faultline/record_schema.h"
#include "env.h"
#include "evict.h"
#include "far_store.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <time.h>

#define PROBE_RING 16384          /* touched sample pages per handler, awaiting re-arm */
#define PROBE_PENDING 65536       /* pages re-armed at the next tick */
#define PROBE_BUCKETS 65536       /* --mrc: distinct sampled pages per top 16 bits of hash */
#define PROBE_SLOTS_MAX 4096      /* --sample-accesses: pages in the set (probed or awaiting a probe) */
#define PROBE_WINDOW_MS 5         /* --sample-accesses: how long a probe watches its page */
#define PROBE_ACCESS_REARM_MS 2   /* --sample-accesses: a touched page is probed again 2 ms later */
#define PROBE_ACCESS_PROBES 8     /* --sample-accesses: probes of a page while it keeps being touched */
#define PROBE_PICK_TRIES 256      /* random picks per tick for new probes before giving up */
#define PROBE_NICE (-10)          /* the prober thread's nice value, where permitted */

/* Flags of a page, one byte per region page. */
#define PROBE_ARMED  0x01         /* unmapped on trial by the prober (epoch in armed_epoch) */
#define PROBE_MEMBER 0x02         /* --sample-accesses: in the set (one of p->slots) */
#define PROBE_SEEN   0x04         /* --mrc: counted among the distinct sampled pages */
#define PROBE_BACK_CLEAN 0x08     /* its last access sample brought it back clean (fl_probe_back_clean) */
#define PROBE_WRITER 0x10         /* written while back clean: its samples move it in, dirty */
#define PROBE_RETRY_CLEAN 32      /* a writer page is tried clean again at one install in 32 */

struct probe_ring {
	_Atomic uint32_t head, tail;  /* tail written by the handler, head by the prober */
	uint32_t pages[PROBE_RING];
	uint64_t progress[PROBE_RING]; /* --mrc: mrc_progress at the touch */
};

/* --mrc: a touched sample page is armed again once the program has gone on to other sample
 * pages: when mrc_gap_accesses() more accesses to sample pages (faults on them, any thread: the
 * counter mrc_progress) have been seen since its touch: record --mrc-gap G pages (default 32)
 * times the current rate. The gap is counted in accesses, not in time: a reuse is missed only
 * when fewer than that many other sample pages were touched in between (a reuse distance below
 * about G pages, 128 KiB by default, or 1 / rate pages when that is more; `faultline mrc` says
 * below which -L that matters), whatever the program's speed. Counted in pages of the whole, the
 * gap keeps the cost proportional to the rate: a fixed gap of 4 sample accesses made 1 page in 2
 * cost 80x 1 page in 8 on sqlite3 (304 s against 3.7 s), a gap of 16 there 2.9x (10.7 s).
 * A time gap (1 ms, as before) lost most reuses of a
 * fast scan (sqlite3: 7,079 seen at 1 page in 8 where 1 in 1, 25x slower, saw 8x as many per
 * page) and made the prediction depend on how fast the recording ran.
 * The pages a thread touched lately are re-armed by the handler at one of that thread's later
 * faults; the prober's tick re-arms the others (threads that stopped faulting, full lists). */
#define PROBE_THREADS 1024        /* threads followed (open addressing by tid); others: ticks only */
#define PROBE_THREAD_PAGES 32     /* recent sample pages per thread */
struct probe_thread {
	_Atomic uint32_t tid;         /* 0 = free slot */
	uint32_t npages;
	uint32_t page[PROBE_THREAD_PAGES];
	uint64_t touched_at[PROBE_THREAD_PAGES]; /* mrc_progress at the touch */
};

/* --sample-accesses: a page of the set. PROBING: armed, watched until deadline_ns (the window's
 * end); its PROBE_ARMED flag cleared by a fault (fl_probe_claim) means it was touched. WAITING:
 * touched, probed again at deadline_ns (when a token is there). */
enum probe_slot_state { SLOT_PROBING, SLOT_WAITING };
struct probe_slot {
	uint32_t page;
	uint8_t state;                /* enum probe_slot_state */
	uint8_t probes;               /* probes of this page so far (<= PROBE_ACCESS_PROBES) */
	uint64_t deadline_ns;
};

struct fl_probe {
	bool mrc, access;
	bool mrc_stacks;                     /* --mrc-stacks: the sample's re-touches take their stacks */
	_Atomic bool mirror_ready;           /* the mirror is a move destination (or never will be) */
	bool release_again;                  /* --mrc: release_dropped met a busy page: pass again */
	uint64_t period_ns;
	_Atomic uint32_t mrc_threshold;
	uint32_t mrc_threshold_start, mrc_max_pages, mrc_denominator;
	uint64_t access_rate;                /* --sample-accesses: probes per second */
	_Atomic uint8_t *flags;              /* PROBE_* per page */
	uint32_t *armed_epoch;               /* rt->epoch[page] when it was armed */
	struct probe_ring rings[FL_MAX_HANDLERS];
	struct probe_thread *threads;        /* --mrc: PROBE_THREADS, written by the handler serving the thread */
	_Atomic uint64_t mrc_progress;       /* --mrc: faults on sample pages so far (first touches and re-touches) */
	uint64_t mrc_gap_pages;              /* --mrc: FAULTLINE_PROBE_MRC_GAP (record --mrc-gap) */
	uint64_t mrc_budget;                 /* --mrc: arms of sample pages per program CPU second (0: no bound) */
	/* the prober thread's own state */
	pthread_t thread;
	bool thread_started;
	struct probe_pending {               /* --mrc: touched pages, oldest first */
		uint32_t page;
		uint64_t due_progress;       /* re-armed once mrc_progress reaches it */
	} *pending;
	uint32_t pending_head, pending_tail; /* FIFO indices (modulo PROBE_PENDING) */
	uint32_t *bucket_count;              /* --mrc */
	uint64_t mrc_pages;                  /* distinct sampled pages under the current threshold */
	uint64_t window_cpu_ns, window_spent; /* --mrc budget: program CPU and mrc_arms at the window's start */
	struct probe_slot *slots;            /* --sample-accesses: the set, in no order */
	size_t nslots, nslots_peak;
	double tokens;                       /* --sample-accesses: probes allowed now (RATE per second) */
	uint64_t tokens_ns;                  /* when they were last refilled */
	uint64_t rng;
	/* counters (stats.json) */
	_Atomic uint64_t armed, rearmed, arm_skipped, restored, ring_drops, pending_drops, rounds;
	_Atomic uint64_t cpu_ns;             /* the prober thread's CPU time, updated every 64 rounds */
	_Atomic uint64_t budget_cuts, program_cpu_ns; /* --mrc budget: rate drops; the program's CPU time */
	_Atomic uint64_t mrc_arms;           /* --mrc budget: arms of sample pages (the cost it holds) */
};

int fl_probe_setup(struct fl_runtime *rt)
{
	uint64_t mrc = fl_env_u64(FL_ENV_PROBE_MRC, 0), rate = fl_env_u64(FL_ENV_PROBE_ACCESS, 0);
	rt->probe = NULL;
	if (!mrc && !rate)
		return 0;
	struct fl_probe *p = fl_sys_reserve(sizeof(*p), "mmap(access prober)");
	if (!p)
		return -1;
	p->mrc = mrc != 0;
	p->access = rate != 0;
	p->period_ns = fl_env_u64(FL_ENV_PROBE_PERIOD_US, 1000) * 1000;
	if (p->period_ns < 100000)
		p->period_ns = 100000;
	p->mrc_denominator = mrc > UINT32_MAX ? UINT32_MAX : (uint32_t)(mrc ? mrc : 1);
	p->mrc_threshold_start = mrc ? (uint32_t)(((uint64_t)1 << 32) / (mrc < 2 ? 2 : mrc)) : 0;
	if (mrc == 1)
		p->mrc_threshold_start = UINT32_MAX; /* every page */
	atomic_store(&p->mrc_threshold, p->mrc_threshold_start);
	uint64_t max = fl_env_u64(FL_ENV_PROBE_MRC_MAX, FL_PROBE_MRC_MAX_DEFAULT);
	if (rt->local_limit_pages && max > rt->local_limit_pages / 16)
		max = rt->local_limit_pages / 16;
	p->mrc_max_pages = (uint32_t)(max < 64 ? 64 : max > (1u << 24) ? (1u << 24) : max);
	p->mrc_gap_pages = fl_env_u64(FL_ENV_PROBE_MRC_GAP, FL_PROBE_MRC_GAP_DEFAULT);
	if (p->mrc_gap_pages < 1)
		p->mrc_gap_pages = 1;
	if (p->mrc_gap_pages > (1u << 20)) /* record's own bound; keeps gap x threshold in 64 bits */
		p->mrc_gap_pages = 1u << 20;
	p->mrc_budget = fl_env_u64(FL_ENV_PROBE_MRC_BUDGET, FL_PROBE_MRC_BUDGET_DEFAULT);
	p->mrc_stacks = fl_env_u64(FL_ENV_PROBE_MRC_STACKS, 0) != 0;
	p->access_rate = rate;
	p->flags = fl_sys_reserve(rt->region_pages, "mmap(access prober page flags)");
	p->armed_epoch = fl_sys_reserve(rt->region_pages * sizeof(uint32_t), "mmap(access prober epochs)");
	p->pending = fl_sys_reserve(PROBE_PENDING * sizeof(*p->pending), "mmap(access prober queue)");
	p->bucket_count = fl_sys_reserve(PROBE_BUCKETS * sizeof(uint32_t), "mmap(access prober buckets)");
	p->slots = fl_sys_reserve(PROBE_SLOTS_MAX * sizeof(struct probe_slot), "mmap(access prober slots)");
	p->threads = fl_sys_reserve(PROBE_THREADS * sizeof(struct probe_thread), "mmap(access prober threads)");
	if (!p->threads || !p->flags || !p->armed_epoch || !p->pending || !p->bucket_count || !p->slots)
		return -1;
	p->rng = fl_now_ns() | 1;
	rt->probe = p;
	return 0;
}

static bool arm(struct fl_runtime *rt, struct fl_probe *p, size_t page, bool mrc);

/* ---- handler side (fault path: no lock, no allocation) ---- */

/* --mrc: the re-arm gap in accesses to sample pages: mrc_gap_pages pages of the whole at the
 * current rate (at least 1), so a reuse nearer than about mrc_gap_pages pages goes unseen at
 * every rate, and the cost (one fault per sampled access beyond the gap) follows the rate. */
static uint64_t mrc_gap_accesses(const struct fl_probe *p)
{
	uint64_t threshold = atomic_load_explicit(&p->mrc_threshold, memory_order_relaxed);
	uint64_t gap = (p->mrc_gap_pages * threshold + (1ull << 31)) >> 32;
	return gap ? gap : 1;
}

/* --mrc: is the page in the sample? (--sample-accesses keeps its set in p->slots.) */
static bool in_sample(const struct fl_probe *p, size_t page)
{
	return p->mrc && fl_probe_page_hash(page) < atomic_load_explicit(&p->mrc_threshold, memory_order_relaxed);
}

/* A MISSING fault on a SOFT page the caller has locked: was it armed by the prober? Clears the
 * mark either way. A mark from before the page was freed and touched again is stale: the epoch
 * (incremented at every install) differs. */
bool fl_probe_claim(struct fl_runtime *rt, size_t page)
{
	struct fl_probe *p = rt->probe;
	if (!p || !(atomic_load_explicit(&p->flags[page], memory_order_relaxed) & PROBE_ARMED))
		return false;
	atomic_fetch_and_explicit(&p->flags[page], (uint8_t)~PROBE_ARMED, memory_order_relaxed);
	return p->armed_epoch[page] == rt->epoch[page];
}

/* A fault about to be served on PAGE (not locked): false when it will be a re-touch of a page of
 * the --mrc sample, armed by the prober, and record --mrc-stacks is off. Such a fault goes
 * without its stack: `faultline mrc` needs only its page and time, and the unwinding in the
 * handler, while the thread waits, was most of the sample's service (median 15.7 µs with the
 * stack, 0.4 µs without, sqlite3 under --mrc). --sample-accesses probes (PROBE_MEMBER) keep
 * theirs: they are what that mode shows. */
bool fl_probe_wants_stack(struct fl_runtime *rt, size_t page)
{
	struct fl_probe *p = rt->probe;
	if (!p || !p->mrc || p->mrc_stacks)
		return true;
	uint8_t f = atomic_load_explicit(&p->flags[page], memory_order_acquire);
	if (!(f & PROBE_ARMED) || (f & PROBE_MEMBER))
		return true;
	/* armed and still soft (or being armed: locked, resident until the unmap): its touch is an
	 * access sample. A page freed since it was armed keeps the mark until it is installed again,
	 * with the same epoch: its state (free, far) says it will be a first touch or refault */
	uint8_t state = atomic_load_explicit(&rt->state[page], memory_order_acquire);
	bool soft_or_arming = (state & PG_WHERE) == PG_SOFT || (state & PG_BUSY);
	return !soft_or_arming || p->armed_epoch[page] != __atomic_load_n(&rt->epoch[page], __ATOMIC_ACQUIRE);
}

/* An access sample that reads a page armed dirty, its content in its mirror page: true to copy it
 * back clean (write-protected, the mirror page kept as its far copy, so its next arm drops it:
 * one TLB shootdown a sample), false to move it in (dirty: a move in and a move out, two). A
 * page written after it came back clean (fl_probe_written) is a writer: its write would cost a
 * write-protect round trip on top of the move out, so its samples move it in, but one install in
 * PROBE_RETRY_CLEAN tries it clean again, in case it is only read now. Measured under --mrc
 * (/proc/interrupts, stats.json; load 1-6): bench/graph_bfs 16 32 3, its sample pages only read,
 * 0.37 shootdowns a sample against 1.8 by moves, 47-79 µs of CPU a sample against 69-93. sqlite3,
 * its hot pages written: with every read brought back clean, 9,500-12,300 write-protect faults
 * in ~150,000 samples and 88-125 µs a sample against 80-101; as a writer's, tried clean at one
 * install in 32, 3,100-4,200 such faults and no difference the load let us measure (33-88 µs a
 * sample against 36-107, six interleaved pairs). The caller holds the page locked. */
bool fl_probe_back_clean(struct fl_runtime *rt, size_t page)
{
	struct fl_probe *p = rt->probe;
	uint8_t f = atomic_load_explicit(&p->flags[page], memory_order_relaxed);
	if ((f & PROBE_WRITER) && rt->epoch[page] % PROBE_RETRY_CLEAN != 0)
		return false;
	atomic_fetch_and_explicit(&p->flags[page], (uint8_t)~PROBE_WRITER, memory_order_relaxed);
	atomic_fetch_or_explicit(&p->flags[page], PROBE_BACK_CLEAN, memory_order_relaxed);
	return true;
}

/* A write-protect fault made the page dirty: if an access sample had brought it back clean, it is
 * a writer (fl_probe_back_clean). */
void fl_probe_written(struct fl_runtime *rt, size_t page)
{
	struct fl_probe *p = rt->probe;
	if (!p || !(atomic_load_explicit(&p->flags[page], memory_order_relaxed) & PROBE_BACK_CLEAN))
		return;
	atomic_fetch_and_explicit(&p->flags[page], (uint8_t)~PROBE_BACK_CLEAN, memory_order_relaxed);
	atomic_fetch_or_explicit(&p->flags[page], PROBE_WRITER, memory_order_relaxed);
}

/* The thread's slot in the table (found or taken), or NULL when the table is full. */
static struct probe_thread *thread_slot(struct fl_probe *p, uint32_t tid)
{
	for (uint32_t i = 0; i < 16; i++) {
		struct probe_thread *t = &p->threads[(tid * 2654435761u + i) % PROBE_THREADS];
		uint32_t seen = atomic_load_explicit(&t->tid, memory_order_relaxed), free_slot = 0;
		if (seen == tid)
			return t;
		if (seen == 0 && atomic_compare_exchange_strong(&t->tid, &free_slot, tid)) {
			t->npages = 0;
			return t;
		}
	}
	return NULL;
}

/* --mrc: thread tid faulted again: the sample pages it touched at least the gap's sample accesses
 * ago (PROGRESS now) are armed again; the page of this fault is added. */
static void rearm_after_progress(struct fl_handler *h, struct fl_probe *p, uint32_t tid, size_t page, bool sampled,
				 uint64_t progress)
{
	struct probe_thread *t = thread_slot(p, tid);
	uint32_t kept = 0;
	if (!t)
		return;
	uint64_t gap = mrc_gap_accesses(p);
	for (uint32_t i = 0; i < t->npages; i++) {
		if (t->page[i] != page && progress - t->touched_at[i] < gap) {
			t->page[kept] = t->page[i], t->touched_at[kept++] = t->touched_at[i];
			continue;
		}
		if (t->page[i] != page && arm(h->rt, p, t->page[i], true))
			atomic_fetch_add_explicit(&p->rearmed, 1, memory_order_relaxed);
	}
	t->npages = kept;
	if (sampled && t->npages < PROBE_THREAD_PAGES)
		t->page[t->npages] = (uint32_t)page, t->touched_at[t->npages++] = progress;
}

/* After a fault was served: a page of the --mrc sample that came in is queued for re-arming (a
 * --sample-accesses probe sees its touch by its PROBE_ARMED flag, cleared by fl_probe_claim). */
void fl_probe_note(struct fl_handler *h, size_t page, uint32_t tid, unsigned kind)
{
	struct fl_probe *p = h->rt->probe;
	if (!p || kind == FL_FAULT_CONCURRENT)
		return;
	bool sampled = in_sample(p, page);
	uint64_t progress = 0;
	if (p->mrc) {
		progress = atomic_load_explicit(&p->mrc_progress, memory_order_relaxed);
		if (sampled)
			progress = atomic_fetch_add_explicit(&p->mrc_progress, 1, memory_order_relaxed) + 1;
		if (p->mirror_ready)
			rearm_after_progress(h, p, tid, page, sampled, progress);
	}
	if (!sampled)
		return;
	struct probe_ring *r = &p->rings[h->index];
	uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	if (tail - atomic_load_explicit(&r->head, memory_order_acquire) >= PROBE_RING) {
		atomic_fetch_add_explicit(&p->ring_drops, 1, memory_order_relaxed);
		return;
	}
	r->pages[tail % PROBE_RING] = (uint32_t)page;
	r->progress[tail % PROBE_RING] = progress;
	atomic_store_explicit(&r->tail, tail + 1, memory_order_release);
}

/* ---- the prober thread ---- */

/* Moves (or drops) one locked resident page out of the region; false if it could not. */
static bool unmap_one(struct fl_runtime *rt, size_t page, uint8_t old)
{
	char *addr = fl_page_addr(rt, page);
	if (!(old & PG_DIRTY) && rt->write_protect && rt->far->mirror_is_far)
		return fl_sys_madvise(addr, FL_PAGE_SIZE, MADV_DONTNEED) == 0; /* far copy valid */
	if (fl_evict_mirror_movable(rt)) {
		/* no ALLOW_SRC_HOLES: a resident page is mapped, and a move that reports an error may
		 * have moved it all the same (evict.c's top comment): then its mirror page is the only
		 * copy, never to be dropped as an older one, and the page is not copied either */
		for (int attempt = 0; attempt < 3; attempt++) {
			struct uffdio_move mv = {
				.dst = (uint64_t)(uintptr_t)fl_mirror_addr(rt, page), .src = (uint64_t)(uintptr_t)addr,
				.len = FL_PAGE_SIZE, .mode = UFFDIO_MOVE_MODE_DONTWAKE,
			};
			if (ioctl(rt->uffd, UFFDIO_MOVE, &mv) == 0)
				return true;
			int err = errno;
			if (fl_evict_moved_anyway(rt, page))
				return true;
			if (err == EEXIST) /* an older copy in the mirror (the page is still mapped): obsolete */
				fl_sys_madvise(fl_mirror_addr(rt, page), FL_PAGE_SIZE, MADV_DONTNEED);
			else if (err != EAGAIN)
				break;
		}
	}
	/* a move refused (shared with a forked process, mprotect'ed): copy, as evict.c does */
	if (rt->write_protect) {
		struct uffdio_writeprotect wp = {
			.range = { .start = (uint64_t)(uintptr_t)addr, .len = FL_PAGE_SIZE },
			.mode = UFFDIO_WRITEPROTECT_MODE_WP,
		};
		if (ioctl(rt->uffd, UFFDIO_WRITEPROTECT, &wp) < 0)
			return false;
	}
	memcpy(fl_mirror_addr(rt, page), addr, FL_PAGE_SIZE);
	if (fl_sys_madvise(addr, FL_PAGE_SIZE, MADV_DONTNEED) < 0) {
		fl_log_errno("madvise(MADV_DONTNEED) of a probed page", errno);
		return false;
	}
	return true;
}

/* Unmaps one resident page on trial and marks it armed; false if it is not resident (or busy), or,
 * for --mrc (MRC), no longer in the sample: checked with the page locked, so a page armed while
 * the prober lowers the threshold is either seen here or found by release_dropped's pass (which
 * runs again when the page was busy). */
static bool arm(struct fl_runtime *rt, struct fl_probe *p, size_t page, bool mrc)
{
	uint8_t old;
	if (!fl_page_trylock(rt, page, &old))
		return false;
	if ((old & PG_WHERE) != PG_RESIDENT || (old & PG_NOACCESS) || (mrc && !in_sample(p, page))) {
		fl_page_unlock(rt, page, old);
		atomic_fetch_add_explicit(&p->arm_skipped, 1, memory_order_relaxed);
		return false;
	}
	/* marked before it is unmapped: a touch right after the unmap is planned by its handler
	 * before it can lock the page, and asks fl_probe_wants_stack, which reads the mark */
	p->armed_epoch[page] = rt->epoch[page];
	atomic_fetch_or_explicit(&p->flags[page], PROBE_ARMED, memory_order_release);
	if (!unmap_one(rt, page, old)) {
		atomic_fetch_and_explicit(&p->flags[page], (uint8_t)~PROBE_ARMED, memory_order_relaxed);
		fl_page_unlock(rt, page, old);
		atomic_fetch_add_explicit(&p->arm_skipped, 1, memory_order_relaxed);
		return false;
	}
	uint8_t dirty = rt->write_protect ? (old & PG_DIRTY) : PG_DIRTY;
	atomic_fetch_add_explicit(&rt->soft_pages, 1, memory_order_relaxed);
	fl_page_unlock(rt, page, (uint8_t)(PG_SOFT | dirty | (old & PG_NOACCESS)));
	atomic_fetch_add_explicit(&p->armed, 1, memory_order_relaxed);
	if (mrc)
		atomic_fetch_add_explicit(&p->mrc_arms, 1, memory_order_relaxed);
	return true;
}

/* Maps an armed page back (its time in the sample is over), as a soft fault would; false when
 * the page is busy (a fault on it in progress, which will claim it), so it is still armed. The
 * caller holds evict_lock. */
static bool restore(struct fl_runtime *rt, struct fl_probe *p, size_t page)
{
	uint8_t old;
	if (!fl_page_trylock(rt, page, &old))
		return false;
	/* the claim clears the mark either way: a page freed or evicted while probed must not keep
	 * it, or it would never be probed again once reinstalled */
	bool armed = fl_probe_claim(rt, page);
	if ((old & PG_WHERE) != PG_SOFT || !armed) {
		fl_page_unlock(rt, page, old);
		return true;
	}
	/* as a soft fault (fault.c): where the mirror is the far store, its page is the valid copy */
	bool dirty = ((old & PG_DIRTY) && !rt->far->mirror_is_far) || !rt->write_protect;
	struct uffdio_copy copy = {
		.dst = (uint64_t)(uintptr_t)fl_page_addr(rt, page), .src = (uint64_t)(uintptr_t)fl_mirror_addr(rt, page),
		.len = FL_PAGE_SIZE, .mode = dirty ? 0 : UFFDIO_COPY_MODE_WP,
	};
	int rc;
	while ((rc = ioctl(rt->uffd, UFFDIO_COPY, &copy)) < 0 && errno == EAGAIN)
		copy.copy = 0;
	if (rc < 0 && errno != EEXIST) {
		/* not mapped (the process is exiting, or no memory): the page stays soft, its content in
		 * the mirror, and its next touch is served as a soft fault; never published resident */
		if (errno != ESRCH && errno != ENOENT)
			fl_log_errno("ioctl(UFFDIO_COPY) restoring a probed page", errno);
		fl_page_unlock(rt, page, old);
		return true;
	}
	if (rc < 0) /* mapped already: its content is whatever is there, so assume it was written */
		dirty = true;
	rt->epoch[page]++;
	atomic_fetch_sub_explicit(&rt->soft_pages, 1, memory_order_relaxed);
	fl_page_unlock(rt, page, (uint8_t)(PG_RESIDENT | (dirty ? PG_DIRTY : 0) | (old & PG_NOACCESS)));
	/* a new epoch: fifo's entry for the page is stale, so it takes a new place in the line (or
	 * under --policy fifo no page restored would ever be evicted: a program that left its pages
	 * untouched while probed stalled eviction once it needed room) */
	fl_evict_note_installed_locked(rt, page);
	atomic_fetch_add_explicit(&p->restored, 1, memory_order_relaxed);
	return true;
}

/* --mrc: the sample as buckets of 2^16 hash values (the threshold rounded up). */
static uint32_t mrc_buckets(const struct fl_probe *p)
{
	return (uint32_t)(((uint64_t)atomic_load(&p->mrc_threshold) + 0xffff) >> 16);
}

/* --mrc: the sample shrinks to its first `buckets` buckets (at least one): the pages of the others
 * leave it, as fixed-size SHARDS lowers its rate (the threshold only ever drops, so `faultline
 * mrc` keeps the pages under the final one, for the whole run). */
static void mrc_keep_buckets(struct fl_probe *p, uint32_t buckets)
{
	uint32_t bucket = mrc_buckets(p);
	if (buckets < 1)
		buckets = 1;
	if (buckets >= bucket)
		return;
	while (bucket > buckets)
		p->mrc_pages -= p->bucket_count[--bucket];
	atomic_store(&p->mrc_threshold, bucket << 16);
}

/* --mrc: a page of the sample seen for the first time; drops the threshold when the sample
 * holds more than mrc_max_pages distinct pages (fixed-size SHARDS). */
static void mrc_count_page(struct fl_probe *p, size_t page)
{
	if (!in_sample(p, page))
		return; /* queued before the threshold dropped: its bucket's count was taken off already */
	uint8_t f = atomic_fetch_or_explicit(&p->flags[page], PROBE_SEEN, memory_order_relaxed);
	if (f & PROBE_SEEN)
		return;
	p->bucket_count[fl_probe_page_hash(page) >> 16]++;
	if (++p->mrc_pages <= p->mrc_max_pages)
		return;
	uint32_t bucket = mrc_buckets(p);
	uint64_t pages = p->mrc_pages;
	while (bucket > 1 && pages > (uint64_t)p->mrc_max_pages * 15 / 16)
		pages -= p->bucket_count[--bucket];
	mrc_keep_buckets(p, bucket);
}

/* --mrc: the program's own CPU time: the process's less that of the handlers, the evictor and this
 * prober, whose work follows the faults. The frame writer's (compressing every record), the
 * timeline's and the prefetcher's time, and the program threads' own part of each fault, count
 * as the program's, so the allowance grows a little with the sampling itself. The process's
 * clock is read last, so it is never less than the sum. */
static uint64_t program_cpu_ns(struct fl_runtime *rt)
{
	uint64_t handlers, evictor;
	fl_runtime_worker_cpu_ns(rt, &handlers, &evictor);
	uint64_t internal = fl_sys_thread_cpu_ns() + handlers + evictor;
	uint64_t all = fl_sys_cpu_ns_of(-1);
	return all > internal ? all - internal : 0;
}

/* --mrc: the cost budget (record --mrc-budget B). A sample page costs a move each time it is
 * armed (or restored) and a fault each time it is touched again (about 90 µs of CPU in all here,
 * while the faulting thread waits), and a program that touches its sample pages faster than they
 * can be served would pay for every touch: random access cost 100x a plain record. So the arms of
 * sample pages so far (each one sample at most) are held to B per second of the program's own CPU
 * time (not the restores a cut itself causes, nor --sample-accesses' probes, which have their own rate),
 * plus MRC_BUDGET_START_NS's worth to begin with. Past that allowance, while the rate of the last
 * window is above B, the sample shrinks by whole buckets (mrc_keep_buckets, as for the size
 * cap) to bring that rate to B, by half at most per window: the rate never rises again, so one
 * burst of reuses must not decide it for the whole run more than it has to. A window is at least
 * MRC_BUDGET_WINDOW_NS of program CPU or MRC_BUDGET_WINDOW_SAMPLES samples, so a cut waits for a
 * rate measured under the previous one; a burst overdraws by about that many samples per halving.
 * The budget never takes the sample below the buckets holding MRC_BUDGET_MIN_PAGES of the pages
 * seen so far: with fewer, the miniature caches and the reuses seen (none nearer than 1 / rate
 * pages) say nothing at a fifth of a small program's peak. There the cost is the floor's: on a
 * small random-access program (bench/graph_bfs 2^16, 9 MiB, 0.2 s) 2.3-7x a plain record instead
 * of over 100x, where the budget alone left 1 or 2 pages and a curve of zeros; 10x on sqlite3
 * where the floor's pages were among its hottest (-M 2G; 2.4x without), 2.3x with a floor of 8
 * pages there, but a band of [0, 1.5 M] at every size. */
#define MRC_BUDGET_START_NS 50000000ull   /* 50 ms of program CPU time's worth of samples to start with */
#define MRC_BUDGET_WINDOW_NS 5000000ull   /* 5 ms of program CPU time ... */
#define MRC_BUDGET_WINDOW_SAMPLES 64      /* ... or 64 samples, whichever comes first */
#define MRC_BUDGET_MIN_WINDOW_NS 100000ull /* a stalled program's window counts as at least 0.1 ms */
#define MRC_BUDGET_MIN_PAGES 32           /* the budget keeps at least the buckets of this many pages */
static void mrc_keep_budget(struct fl_runtime *rt, struct fl_probe *p)
{
	uint64_t cpu = program_cpu_ns(rt);
	uint64_t spent = atomic_load_explicit(&p->mrc_arms, memory_order_relaxed);
	atomic_store_explicit(&p->program_cpu_ns, cpu, memory_order_relaxed);
	uint64_t window_cpu = cpu > p->window_cpu_ns ? cpu - p->window_cpu_ns : 0;
	uint64_t window_spent = spent - p->window_spent;
	if (window_cpu < MRC_BUDGET_WINDOW_NS && window_spent < MRC_BUDGET_WINDOW_SAMPLES)
		return;
	p->window_cpu_ns = cpu, p->window_spent = spent;
	double budget = (double)p->mrc_budget, allowed = budget * (double)(cpu + MRC_BUDGET_START_NS) / 1e9;
	double recent = (double)window_spent * 1e9 /
			(double)(window_cpu > MRC_BUDGET_MIN_WINDOW_NS ? window_cpu : MRC_BUDGET_MIN_WINDOW_NS);
	if ((double)spent <= allowed || recent <= budget)
		return;
	uint32_t buckets = mrc_buckets(p), floor = 0;
	for (uint64_t kept = 0; floor < buckets && kept < MRC_BUDGET_MIN_PAGES; floor++)
		kept += p->bucket_count[floor];
	double keep = budget / recent;
	uint32_t want = (uint32_t)((double)buckets * (keep > 0.5 ? keep : 0.5));
	mrc_keep_buckets(p, want > floor ? want : floor);
	if (mrc_buckets(p) < buckets)
		atomic_fetch_add_explicit(&p->budget_cuts, 1, memory_order_relaxed);
}

static uint64_t next_random(struct fl_probe *p)
{
	p->rng ^= p->rng << 13, p->rng ^= p->rng >> 7, p->rng ^= p->rng << 17;
	return p->rng;
}

/* --sample-accesses: takes slot i out of the set (the caller has restored its page if needed). */
static void leave_set(struct fl_probe *p, size_t i)
{
	atomic_fetch_and_explicit(&p->flags[p->slots[i].page], (uint8_t)~PROBE_MEMBER, memory_order_relaxed);
	p->slots[i] = p->slots[--p->nslots];
}

/* --sample-accesses: one slot's turn; false when it left the set (slot i now holds another). */
static bool probe_slot_step(struct fl_runtime *rt, struct fl_probe *p, size_t i, uint64_t now)
{
	struct probe_slot *s = &p->slots[i];
	if (s->state == SLOT_PROBING) {
		bool touched = !(atomic_load_explicit(&p->flags[s->page], memory_order_relaxed) & PROBE_ARMED);
		if (touched && s->probes < PROBE_ACCESS_PROBES) { /* in use: probed again, after a while */
			s->state = SLOT_WAITING;
			s->deadline_ns = now + PROBE_ACCESS_REARM_MS * 1000000ull;
			return true;
		}
		if (!touched && now < s->deadline_ns)
			return true; /* still watched */
		if (!touched && !restore(rt, p, s->page))
			return true; /* a fault on it in progress: it will be claimed (touched) */
		leave_set(p, i); /* not touched within the window, or probed enough */
		return false;
	}
	if (now < s->deadline_ns || p->tokens < 1)
		return true; /* waits for its time, or for a token */
	p->tokens -= 1;
	if (!arm(rt, p, s->page, false)) { /* no longer resident (freed, evicted) or busy */
		leave_set(p, i);
		return false;
	}
	atomic_fetch_add_explicit(&p->rearmed, 1, memory_order_relaxed);
	s->state = SLOT_PROBING;
	s->probes++;
	s->deadline_ns = now + PROBE_WINDOW_MS * 1000000ull;
	return true;
}

/* --sample-accesses: advances the set's probes (see the top comment), then spends the tokens
 * left on probes of new, uniformly chosen resident pages. */
static void access_round(struct fl_runtime *rt, struct fl_probe *p, uint64_t now)
{
	for (size_t i = 0; i < p->nslots;)
		if (probe_slot_step(rt, p, i, now))
			i++;
	size_t high = __atomic_load_n(&rt->va_high_pages, __ATOMIC_RELAXED);
	for (unsigned tries = 0; high && p->tokens >= 1 && p->nslots < PROBE_SLOTS_MAX && tries < PROBE_PICK_TRIES; tries++) {
		size_t page = (size_t)(next_random(p) % high);
		uint8_t s = atomic_load_explicit(&rt->state[page], memory_order_relaxed);
		if ((s & PG_WHERE) != PG_RESIDENT || (s & (PG_BUSY | PG_NOACCESS)) || in_sample(p, page) ||
		    (atomic_load_explicit(&p->flags[page], memory_order_relaxed) & (PROBE_MEMBER | PROBE_ARMED)))
			continue;
		if (!arm(rt, p, page, false))
			continue;
		p->tokens -= 1;
		atomic_fetch_or_explicit(&p->flags[page], PROBE_MEMBER, memory_order_relaxed);
		p->slots[p->nslots++] = (struct probe_slot){ (uint32_t)page, SLOT_PROBING, 1, now + PROBE_WINDOW_MS * 1000000ull };
	}
	if (p->nslots > p->nslots_peak)
		p->nslots_peak = p->nslots;
}

/* --mrc: the threshold dropped: pages armed while they were in the sample and no longer are would
 * stay unmapped (local memory the clock cannot evict) until the program touched them again, which
 * under -L could leave nothing to evict. They are mapped back. One pass over the flags of the
 * region's pages used so far per drop; a drop keeps 15/16 of the sample, so a heap of N pages
 * sampled at most M at a time takes about 15.5 ln(N / M) drops over its run (a 1 GiB heap with the
 * default M = 2048: ~77 passes over 262,144 flags). A page busy at the pass (a fault claiming it,
 * or a handler arming it) makes the next round pass again. */
static void release_dropped(struct fl_runtime *rt, struct fl_probe *p)
{
	size_t high = __atomic_load_n(&rt->va_high_pages, __ATOMIC_RELAXED);
	bool again = false;
	pthread_mutex_lock(&rt->evict_lock);
	for (size_t page = 0; page < high; page++) {
		uint8_t f = atomic_load_explicit(&p->flags[page], memory_order_relaxed);
		if ((f & PROBE_ARMED) && !(f & PROBE_MEMBER) && !in_sample(p, page) && !restore(rt, p, page))
			again = true;
	}
	pthread_mutex_unlock(&rt->evict_lock);
	p->release_again = again;
}

/* One tick: re-arms the pages touched during the previous tick, then takes the new ones. */
static void probe_round(struct fl_runtime *rt, struct fl_probe *p)
{
	uint32_t threshold = atomic_load(&p->mrc_threshold);
	uint64_t now = fl_now_ns();
	if (p->access) { /* the probes of --sample-accesses cost one token each: RATE per second */
		p->tokens += (double)p->access_rate * (double)(now - p->tokens_ns) / 1e9;
		if (p->tokens > (double)p->access_rate / 10 + 1)
			p->tokens = (double)p->access_rate / 10 + 1;
		p->tokens_ns = now;
	}
	pthread_mutex_lock(&rt->evict_lock);
	for (; p->pending_head != p->pending_tail; p->pending_head++) {
		const struct probe_pending *e = &p->pending[p->pending_head % PROBE_PENDING];
		if (e->due_progress > atomic_load_explicit(&p->mrc_progress, memory_order_relaxed))
			break;
		if (arm(rt, p, e->page, true)) /* false too when out of the sample meanwhile (the threshold dropped) */
			atomic_fetch_add_explicit(&p->rearmed, 1, memory_order_relaxed);
	}
	if (p->access)
		access_round(rt, p, now);
	pthread_mutex_unlock(&rt->evict_lock);
	for (unsigned h = 0; h < rt->nhandlers; h++) {
		struct probe_ring *r = &p->rings[h];
		uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
		uint32_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
		for (; head != tail; head++) {
			uint32_t page = r->pages[head % PROBE_RING];
			mrc_count_page(p, page);
			if (!in_sample(p, page))
				continue; /* left the sample since (the threshold dropped) */
			if (p->pending_tail - p->pending_head < PROBE_PENDING)
				p->pending[p->pending_tail++ % PROBE_PENDING] =
					(struct probe_pending){ page, r->progress[head % PROBE_RING] + mrc_gap_accesses(p) };
			else
				atomic_fetch_add_explicit(&p->pending_drops, 1, memory_order_relaxed);
		}
		atomic_store_explicit(&r->head, head, memory_order_release);
	}
	if (p->mrc && p->mrc_budget)
		mrc_keep_budget(rt, p);
	if (p->mrc && (atomic_load(&p->mrc_threshold) < threshold || p->release_again))
		release_dropped(rt, p);
	atomic_fetch_add_explicit(&p->rounds, 1, memory_order_relaxed);
}

static void *probe_main(void *arg)
{
	struct fl_runtime *rt = arg;
	struct fl_probe *p = rt->probe;
	struct timespec tick = { (time_t)(p->period_ns / 1000000000ull), (long)(p->period_ns % 1000000000ull) };
	fl_internal_thread = 1;
	fl_sys_block_all_signals();
	/* a re-arm late by a scheduling delay misses the reuses in between: ask for a higher priority
	 * (allowed to root or CAP_SYS_NICE; otherwise the default one is kept, silently) */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), PROBE_NICE);
	pthread_mutex_lock(&rt->evict_lock); /* registers the mirror as a move destination, once */
	fl_evict_mirror_movable(rt);
	pthread_mutex_unlock(&rt->evict_lock);
	atomic_store(&p->mirror_ready, true);
	p->tokens_ns = fl_now_ns();
	for (uint64_t round = 1; !atomic_load(&rt->final_mode) && !atomic_load(&rt->stopping); round++) {
		nanosleep(&tick, NULL);
		probe_round(rt, p);
		if (round % 64 == 0) /* its own cost, for stats.json (one system call per 64 ms) */
			atomic_store_explicit(&p->cpu_ns, fl_sys_thread_cpu_ns(), memory_order_relaxed);
	}
	atomic_store_explicit(&p->cpu_ns, fl_sys_thread_cpu_ns(), memory_order_relaxed);
	return NULL;
}

/* Starts the prober thread (after the handlers); 0 when off. */
int fl_probe_start(struct fl_runtime *rt)
{
	struct fl_probe *p = rt->probe;
	if (!p)
		return 0;
	for (unsigned h = 0; h < FL_MAX_HANDLERS; h++)
		atomic_store(&p->rings[h].head, 0), atomic_store(&p->rings[h].tail, 0);
	p->pending_head = p->pending_tail = 0;
	int err = fl_thread_create(&p->thread, probe_main, rt);
	if (err) {
		fl_log_errno("pthread_create(access prober)", err);
		return -1;
	}
	p->thread_started = true;
	return 0;
}

/* In a forked child: counters start again; the thread is started by fl_probe_start. */
void fl_probe_after_fork(struct fl_runtime *rt)
{
	struct fl_probe *p = rt->probe;
	if (!p)
		return;
	atomic_store(&p->armed, 0), atomic_store(&p->rearmed, 0), atomic_store(&p->arm_skipped, 0);
	atomic_store(&p->restored, 0), atomic_store(&p->ring_drops, 0), atomic_store(&p->pending_drops, 0);
	atomic_store(&p->rounds, 0), atomic_store(&p->cpu_ns, 0), atomic_store(&p->mrc_progress, 0);
	atomic_store(&p->budget_cuts, 0), atomic_store(&p->program_cpu_ns, 0), atomic_store(&p->mrc_arms, 0);
	p->window_cpu_ns = p->window_spent = 0; /* the child's CPU clock starts again */
	p->thread_started = false;
	atomic_store(&p->mirror_ready, false);
	memset(p->threads, 0, PROBE_THREADS * sizeof(struct probe_thread)); /* the parent's threads */
}

void fl_probe_json_meta(struct fl_runtime *rt, struct fl_buf *b)
{
	struct fl_probe *p = rt->probe;
	fl_buf_json_key_u64(b, FL_META_MRC_RATE_DENOMINATOR, p && p->mrc ? p->mrc_denominator : 0);
	fl_buf_json_key_u64(b, FL_META_MRC_THRESHOLD, p && p->mrc ? p->mrc_threshold_start : 0);
	fl_buf_json_key_u64(b, FL_META_MRC_MAX_PAGES, p && p->mrc ? p->mrc_max_pages : 0);
	fl_buf_json_key_u64(b, FL_META_MRC_GAP_PAGES, p && p->mrc ? p->mrc_gap_pages : 0);
	fl_buf_json_key_u64(b, FL_META_MRC_BUDGET, p && p->mrc ? p->mrc_budget : 0);
	fl_buf_json_key_u64(b, FL_META_MRC_STACKS, p && p->mrc && p->mrc_stacks ? 1 : 0);
	fl_buf_json_key_u64(b, FL_META_SAMPLE_ACCESSES_RATE, p ? p->access_rate : 0);
	fl_buf_json_key_u64(b, FL_META_PROBE_PERIOD_NS, p ? p->period_ns : 0);
}

void fl_probe_json_stats(struct fl_runtime *rt, struct fl_buf *b, uint64_t access_samples)
{
	struct fl_probe *p = rt->probe;
	fl_buf_json_key_u64(b, FL_STATS_ACCESS_SAMPLES, access_samples);
	if (!p)
		return;
	if (p->mrc) {
		fl_buf_json_key_u64(b, FL_STATS_MRC_THRESHOLD, atomic_load(&p->mrc_threshold));
		fl_buf_json_key_u64(b, FL_STATS_MRC_PAGES, p->mrc_pages);
		fl_buf_json_key_u64(b, FL_STATS_MRC_BUDGET_CUTS, atomic_load(&p->budget_cuts));
		fl_buf_json_key_u64(b, FL_STATS_MRC_PROGRAM_CPU_NS, atomic_load(&p->program_cpu_ns));
	}
	fl_buf_json_key_u64(b, FL_STATS_PROBE_ARMED, atomic_load(&p->armed));
	fl_buf_json_key_u64(b, FL_STATS_PROBE_REARMED, atomic_load(&p->rearmed));
	fl_buf_json_key_u64(b, FL_STATS_PROBE_ARM_SKIPPED, atomic_load(&p->arm_skipped));
	fl_buf_json_key_u64(b, FL_STATS_PROBE_RESTORED, atomic_load(&p->restored));
	fl_buf_json_key_u64(b, FL_STATS_PROBE_DROPPED, atomic_load(&p->ring_drops) + atomic_load(&p->pending_drops));
	fl_buf_json_key_u64(b, FL_STATS_PROBE_ROUNDS, atomic_load(&p->rounds));
	fl_buf_json_key_u64(b, FL_STATS_PROBE_CPU_NS, atomic_load(&p->cpu_ns));
	fl_buf_json_key_u64(b, FL_STATS_PROBE_SAMPLE_PAGES, p->access ? p->nslots_peak : 0);
}
