/* far_store.c: the list of far-store backends, the choice among them, and what every backend
 * shares (see far_store.h): start-up from the FAULTLINE_FAR* environment, write-back batches,
 * generations of far copies across fork, stale mirror pages, meta.json / stats.json fields.
 *
 * Generations (file and memcached stores). Copy-on-fork of data that lives outside the process
 * cannot come from the kernel, so far copies are versioned: gen_of[page] (1 byte per page) names
 * the generation — a file, or a key prefix on the servers — holding the page's current far copy.
 * New copies go to the current generation. At a fork, the generation written so far is frozen:
 * both processes keep reading it (the child inherits the file descriptor / key prefix and its
 * copy of gen_of), and each writes into a generation of its own from then on, so neither sees
 * the other's later writes and nothing is copied at fork time. A fork prepare handler bumps a
 * counter, and so does the parent handler (see far_prepare_fork); the next write-back after
 * it (under the eviction lock) switches generation. A
 * write-back already past that check at the fork only writes pages that are BUSY at the fork,
 * which the child settles from its mirror (fl_far_after_fork). A generation is created lazily,
 * at the first write into it, so fork + exec costs nothing. When a process reads
 * FL_FAR_MAX_GENS generations (a long fork chain, a parent that forks many children between
 * evictions), the next switch compacts: every far copy is copied into the new generation and
 * the old ones are released.
 *
 * Mirror pages of non-mem stores are dropped when their page goes far (write-back) and when
 * they go stale (the page came back by a soft fault or a prefetch hit): the latter in batches
 * per handler (one system call per FL_FAR_STALE_MAX pages, each call paying one TLB shootdown).
 *
 * Bookkeeping per page of -M (what the process holds besides its -L of pages; measured in
 * tests/cases/far_rss.sh): state 1 B + epoch 4 B + gen_of 1 B = 6 B/page = 1.5 MiB per GiB,
 * touched only up to the highest page the program used; page tables of the region and mirror
 * (not in VmRSS). Fixed: trace buffers (64 KiB per handler), rings of the clock policy, io_uring
 * rings, per-handler stale lists (<= 64 pages each in the mirror), the prefetch staging (counted
 * in -L), and the runtime's and libraries' code. */
#include "far_store.h"
#include "fds.h"
#include "far_latency.h"
#include "context.h"
#include "env.h"
#include "pages.h"
#include "diag.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "faultline/env.h"
#include "faultline/record_schema.h"

_Static_assert(FL_MAX_HANDLERS <= 16, "fl_far_state.stale has 16 rows");

static void copy_env(const char *name, char *dst, size_t cap)
{
	const char *v = getenv(name);
	struct fl_buf b = { dst, 0, cap };
	fl_buf_str(&b, v ? v : "");
}

/* The fork prepare and parent handlers: the next write-back switches to a new generation.
 * Both bump: a write-back that runs between the prepare handler and the fork itself (the
 * evictor thread runs while the program forks) sees the first bump and switches before the
 * fork, so its new generation is shared with the child; the second bump makes the parent
 * leave that one too, before it writes anything newer than the fork. */
static void far_prepare_fork(void)
{
	atomic_fetch_add(&fl_rt.farst.forks, 1);
}

int fl_far_open(struct fl_runtime *rt)
{
	struct fl_far_state *fs = &rt->farst;
	copy_env(FL_ENV_FAR, fs->spec, sizeof(fs->spec));
	copy_env(FL_ENV_FAR_KEEP, fs->keep, sizeof(fs->keep));
	fs->latency_ns = fl_env_u64(FL_ENV_FAR_LATENCY_NS, 0);
	fs->bandwidth = fl_env_u64(FL_ENV_FAR_BANDWIDTH, 0);
	fs->prefetch = (unsigned)fl_env_u64(FL_ENV_PREFETCH, 0);
	if (fs->prefetch > 1024)
		fs->prefetch = 1024;
	fs->cur = -1;
	fs->pidfd = fl_fd_keep((int)syscall(SYS_pidfd_open, getpid(), 0)); /* for process_madvise; -1: one madvise per run */
	if (!rt->far->mirror_is_far) {
		fs->gen_of = fl_sys_reserve(rt->region_pages, "mmap(far copy generations)");
		if (!fs->gen_of)
			return -1;
		/* no malloc here: glibc keeps the first atfork handlers in static storage */
		if (pthread_atfork(far_prepare_fork, far_prepare_fork, NULL) != 0) {
			fl_log("far store: pthread_atfork failed; fork would not be isolated");
			return -1;
		}
	}
	if (rt->far->open(rt, fs->spec[0] ? fs->spec : "mem") < 0)
		return -1;
	return 0;
}

bool fl_far_first_failure(struct fl_runtime *rt)
{
	return atomic_exchange(&rt->farst.failing, 1) == 0;
}

/* ---- generations ---- */

static void wait_for_readers(struct fl_far_state *fs)
{
	while (atomic_load(&fs->readers) != 0)
		sched_yield();
}

/* Copies every far copy into generation `to` and releases the others. Under the eviction lock:
 * nothing else writes; readers may still use an old generation until it is released. */
static int compact(struct fl_runtime *rt, unsigned to)
{
	struct fl_far_state *fs = &rt->farst;
	enum { CHUNK = 64 };
	char *buf = fl_sys_mmap(NULL, CHUNK * FL_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t pages[CHUNK], high = __atomic_load_n(&rt->va_high_pages, __ATOMIC_RELAXED);
	uint8_t gens[CHUNK], tags[CHUNK];
	char *ptrs[CHUNK];
	int err = 0;

	if (buf == MAP_FAILED)
		return errno;
	for (size_t p = 0, n = 0; p <= high && !err; p++) {
		uint8_t g = p < high ? atomic_load(&fs->gen_of[p]) : 0;
		if (g != FL_FAR_NO_COPY && g != to + 1) {
			pages[n] = p, gens[n] = (uint8_t)(g - 1), tags[n] = g;
			ptrs[n] = buf + n * FL_PAGE_SIZE;
			n++;
		}
		if (n == CHUNK || (p == high && n)) {
			err = rt->far->read(rt, pages, gens, ptrs, n);
			if (!err)
				err = rt->far->write(rt, to, pages, ptrs, n);
			for (size_t i = 0; i < n && !err; i++) {
				uint8_t expect = tags[i]; /* a discard meanwhile wins: no copy resurrected */
				atomic_compare_exchange_strong(&fs->gen_of[pages[i]], &expect, (uint8_t)(to + 1));
			}
			n = 0;
		}
	}
	fl_sys_munmap(buf, CHUNK * FL_PAGE_SIZE);
	if (err)
		return err;
	wait_for_readers(fs);
	for (unsigned g = 0; g <= FL_FAR_MAX_GENS; g++) {
		if (g != to && fs->gens[g].live) {
			rt->far->drop_gen(rt, g);
			fs->gens[g].live = false;
			fs->ngens--;
		}
	}
	atomic_fetch_add(&fs->stats.compactions, 1);
	return 0;
}

/* The generation new copies go to, created (or switched to after a fork) if needed; < 0 = -errno.
 * Under the eviction lock. */
static int gen_for_write(struct fl_runtime *rt)
{
	struct fl_far_state *fs = &rt->farst;
	uint64_t forks = atomic_load(&fs->forks);
	if (forks != fs->forks_seen) {
		if (fs->cur >= 0 && fs->cur_written) {
			fs->gens[fs->cur].frozen = true;
			fs->cur = -1;
		}
		fs->forks_seen = forks;
	}
	if (fs->cur >= 0)
		return fs->cur;
	unsigned g = 0;
	while (g < FL_FAR_MAX_GENS && fs->gens[g].live)
		g++;
	if (g == FL_FAR_MAX_GENS)
		while (fs->gens[g].live) /* the spare slot is taken only during a compaction */
			g--;
	int err = rt->far->new_gen(rt, g);
	if (err)
		return -err;
	fs->gens[g].live = true;
	fs->gens[g].frozen = false;
	fs->ngens++;
	if (fs->ngens > FL_FAR_MAX_GENS) {
		err = compact(rt, g);
		if (err)
			return -err;
	}
	fs->cur = (int)g;
	fs->cur_written = 0;
	return (int)g;
}

int fl_far_gen_put(struct fl_runtime *rt, const size_t *pages, const bool *dirty, size_t n)
{
	struct fl_far_state *fs = &rt->farst;
	size_t wp[FL_EVICT_BATCH];
	char *src[FL_EVICT_BATCH];
	size_t k = 0;

	for (size_t i = 0; i <= n; i++) {
		if (i < n && dirty[i]) {
			wp[k] = pages[i];
			src[k] = fl_mirror_addr(rt, pages[i]);
			k++;
		}
		if (k == FL_EVICT_BATCH || (i == n && k)) {
			int g = gen_for_write(rt);
			if (g < 0)
				return -g;
			int err = rt->far->write(rt, (unsigned)g, wp, src, k);
			if (err)
				return err;
			for (size_t j = 0; j < k; j++)
				atomic_store(&fs->gen_of[wp[j]], (uint8_t)(g + 1));
			fs->cur_written += k;
			k = 0;
		}
	}
	return 0;
}

int fl_far_gen_get_many(struct fl_runtime *rt, const size_t *pages, char *const *dst, size_t n)
{
	struct fl_far_state *fs = &rt->farst;
	size_t rp[FL_EVICT_BATCH];
	uint8_t gens[FL_EVICT_BATCH];
	char *rd[FL_EVICT_BATCH];
	int err = 0;

	atomic_fetch_add(&fs->readers, 1);
	for (size_t i = 0, k = 0; i <= n && !err; i++) {
		if (i < n) {
			uint8_t g = atomic_load(&fs->gen_of[pages[i]]);
			if (g == FL_FAR_NO_COPY) {
				memset(dst[i], 0, FL_PAGE_SIZE);
			} else {
				rp[k] = pages[i], gens[k] = (uint8_t)(g - 1), rd[k] = dst[i];
				k++;
			}
		}
		if (k == FL_EVICT_BATCH || (i == n && k)) {
			err = rt->far->read(rt, rp, gens, rd, k);
			k = 0;
		}
	}
	atomic_fetch_sub(&fs->readers, 1);
	return err;
}

int fl_far_gen_get(struct fl_runtime *rt, size_t page, void *dst)
{
	char *d = dst;
	return fl_far_gen_get_many(rt, &page, &d, 1);
}

/* Staged pages (far_prefetch.c) in a discarded range: locked by the discarding thread, made FREE
 * by region.c; they stop counting as staged and as local, and count as read ahead unused. */
void fl_far_discard_staged(struct fl_runtime *rt, size_t first, size_t count)
{
	size_t n = 0;
	if (!rt->farst.pf)
		return;
	for (size_t p = first; p < first + count; p++) {
		uint8_t s = atomic_load_explicit(&rt->state[p], memory_order_relaxed);
		if ((s & PG_WHERE) == PG_FAR && (s & PG_STAGED))
			n++;
	}
	if (n) {
		atomic_fetch_sub(&rt->farst.prefetch_staged, n);
		atomic_fetch_add(&rt->farst.stats.prefetch_unused, n);
		fl_local_sub(rt, n);
	}
}

void fl_far_gen_discard(struct fl_runtime *rt, size_t first, size_t count)
{
	fl_far_discard_staged(rt, first, count);
	for (size_t p = first; p < first + count; p++)
		if (atomic_load_explicit(&rt->farst.gen_of[p], memory_order_relaxed) != FL_FAR_NO_COPY)
			atomic_store(&rt->farst.gen_of[p], FL_FAR_NO_COPY);
}

/* ---- mirror pages ---- */

/* Drops the mirror pages of pages[0..n) (any order; runs of consecutive pages coalesced):
 * one process_madvise for all of them where the kernel has it, else one madvise per run. */
static void drop_mirror_pages(struct fl_runtime *rt, const size_t *pages, size_t n)
{
	struct iovec iov[FL_EVICT_BATCH];
	size_t nio = 0;
	for (size_t i = 0; i < n; i++) {
		char *at = fl_mirror_addr(rt, pages[i]);
		if (nio && (char *)iov[nio - 1].iov_base + iov[nio - 1].iov_len == at) {
			iov[nio - 1].iov_len += FL_PAGE_SIZE;
			continue;
		}
		if (nio == FL_EVICT_BATCH) {
			drop_mirror_pages(rt, pages + i, n - i);
			break;
		}
		iov[nio].iov_base = at, iov[nio].iov_len = FL_PAGE_SIZE;
		nio++;
	}
	if (nio > 1 && rt->farst.pidfd >= 0 &&
	    syscall(SYS_process_madvise, rt->farst.pidfd, iov, nio, MADV_DONTNEED, 0) >= 0)
		goto done;
	for (size_t i = 0; i < nio; i++)
		if (fl_sys_madvise(iov[i].iov_base, iov[i].iov_len, MADV_DONTNEED) < 0)
			fl_log_errno("madvise(MADV_DONTNEED) of far-store mirror pages", errno);
done:
	atomic_fetch_add_explicit(&rt->farst.stats.mirror_drops, n, memory_order_relaxed);
}

/* Whether a resident page's mirror page holds nothing worth keeping. With a non-mem store the
 * mirror only passes pages through; with the in-memory store it holds the page's far copy,
 * which is obsolete once the page is dirty (its next eviction must save it, and a move needs a
 * hole there). Without write protection every page counts as dirty. */
static bool mirror_copy_stale(const struct fl_runtime *rt, uint8_t state)
{
	return !rt->far->mirror_is_far || (state & PG_DIRTY) || !rt->write_protect;
}

static void flush_stale(struct fl_runtime *rt, unsigned row)
{
	struct fl_far_state *fs = &rt->farst;
	size_t locked[FL_FAR_STALE_MAX];
	uint8_t olds[FL_FAR_STALE_MAX];
	size_t n = 0;
	for (unsigned i = 0; i < fs->nstale[row]; i++) {
		size_t page = fs->stale[row][i];
		uint8_t old;
		if (!fl_page_trylock(rt, page, &old))
			continue; /* in transition: its mirror page is rewritten or dropped anyway */
		if ((old & PG_WHERE) != PG_RESIDENT || !mirror_copy_stale(rt, old)) {
			fl_page_unlock(rt, page, old); /* evicted since: the mirror page is live again */
			continue;
		}
		locked[n] = page, olds[n] = old;
		n++;
	}
	fs->nstale[row] = 0;
	if (n)
		drop_mirror_pages(rt, locked, n);
	for (size_t i = 0; i < n; i++)
		fl_page_unlock(rt, locked[i], olds[i]);
}

void fl_far_mirror_stale(struct fl_handler *h, size_t page, uint8_t state)
{
	struct fl_runtime *rt = h->rt;
	struct fl_far_state *fs = &rt->farst;
	if (!mirror_copy_stale(rt, state))
		return;
	fs->stale[h->index][fs->nstale[h->index]++] = (uint32_t)page;
	if (fs->nstale[h->index] == FL_FAR_STALE_MAX)
		flush_stale(rt, h->index);
}

void fl_far_mirror_dirtied(struct fl_handler *h, size_t page)
{
	if (h->rt->far->mirror_is_far) /* a non-mem store's mirror page was queued when it came back */
		fl_far_mirror_stale(h, page, PG_RESIDENT | PG_DIRTY);
}

/* ---- what the fault handler and the evictor call ---- */

/* What an install copies a mirror page's content from: a copy in the handler's bounce page,
 * read with process_vm_readv, where the kernel copies through its own mapping of the page.
 * UFFDIO_COPY straight from the mirror reads through the program's page tables, and in a guest
 * that shadows page tables the first touch of a PTE just changed (the page was moved into the
 * mirror by its eviction) costs an exit to the host: measured per page, copying straight from
 * mirror pages just moved there cost 11.3 us of CPU and 19-26 us wall, through the bounce page
 * 4.8 us and 8-11 us (4,096 pages, 8 alternating rounds, load ~8). Where process_vm_readv is
 * refused (a seccomp filter, an old kernel), straight from the mirror. */
const void *fl_far_mirror_source(struct fl_handler *h, size_t page)
{
	struct fl_runtime *rt = h->rt;
	char *mirror = fl_mirror_addr(rt, page);
	if (atomic_load_explicit(&rt->farst.mirror_reads_direct, memory_order_relaxed))
		return mirror;
	struct iovec local = { .iov_base = h->bounce, .iov_len = FL_PAGE_SIZE };
	struct iovec remote = { .iov_base = mirror, .iov_len = FL_PAGE_SIZE };
	/* the handler's own thread id names the process: the main thread's (rt->pid) is gone once it
	 * has called pthread_exit while other threads run on (ESRCH) */
	int self = atomic_load_explicit(&h->tid, memory_order_relaxed);
	if (process_vm_readv(self ? self : rt->pid, &local, 1, &remote, 1, 0) == (ssize_t)FL_PAGE_SIZE)
		return h->bounce;
	if (!atomic_exchange(&rt->farst.mirror_reads_direct, true))
		fl_log_errno("process_vm_readv of a mirror page (from now on pages are copied straight from the "
			     "mirror)", errno);
	return mirror;
}

const void *fl_far_read(struct fl_handler *h, size_t page, int *err)
{
	struct fl_runtime *rt = h->rt;
	struct fl_far_stats *st = &rt->farst.stats;
	fl_far_delay(rt, FL_PAGE_SIZE);
	atomic_fetch_add_explicit(&st->reads, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&st->read_pages, 1, memory_order_relaxed);
	if (!rt->far->get)
		return fl_far_mirror_source(h, page);
	uint64_t t0 = fl_now_ns();
	*err = rt->far->get(rt, page, h->bounce);
	atomic_fetch_add_explicit(&st->read_ns, fl_now_ns() - t0, memory_order_relaxed);
	return *err ? NULL : h->bounce;
}

int fl_far_write_back(struct fl_runtime *rt, const size_t *pages, const uint8_t *old, size_t n)
{
	struct fl_far_stats *st = &rt->farst.stats;
	bool dirty[FL_EVICT_BATCH];
	size_t ndirty = 0;
	int err;

	if (n > FL_EVICT_BATCH) {
		err = fl_far_write_back(rt, pages, old, FL_EVICT_BATCH);
		return err ? err : fl_far_write_back(rt, pages + FL_EVICT_BATCH, old + FL_EVICT_BATCH, n - FL_EVICT_BATCH);
	}
	for (size_t i = 0; i < n; i++) {
		dirty[i] = (old[i] & PG_DIRTY) != 0;
		ndirty += dirty[i];
	}
	if (ndirty) {
		fl_far_delay(rt, ndirty * FL_PAGE_SIZE);
		atomic_fetch_add_explicit(&st->writes, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&st->write_pages, ndirty, memory_order_relaxed);
	}
	uint64_t t0 = fl_now_ns();
	err = rt->far->put(rt, pages, dirty, n);
	atomic_fetch_add_explicit(&st->write_ns, fl_now_ns() - t0, memory_order_relaxed);
	if (err)
		return err;
	if (!rt->far->mirror_is_far)
		drop_mirror_pages(rt, pages, n);
	return 0;
}

/* ---- fork ---- */

/* A page whose write-back was in flight in the parent at the fork may have lost its mirror
 * page already (written and dropped, not yet marked FAR): the child's settle step made it SOFT;
 * its content is the far copy. Tells them apart by whether the mirror page has content
 * (present or swapped, /proc/self/pagemap). */
static void settle_written_soft_pages(struct fl_runtime *rt)
{
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	size_t fixed = 0;
	if (fd < 0)
		return;
	for (size_t p = 0; p < rt->va_high_pages; p++) {
		uint8_t s = atomic_load(&rt->state[p]);
		uint64_t entry = 0;
		if ((s & PG_WHERE) != PG_SOFT || atomic_load(&rt->farst.gen_of[p]) == FL_FAR_NO_COPY)
			continue;
		off_t at = (off_t)(((uintptr_t)fl_mirror_addr(rt, p) / FL_PAGE_SIZE) * sizeof(entry));
		if (fl_sys_pread(fd, &entry, sizeof(entry), at) != (ssize_t)sizeof(entry))
			break;
		if (entry & (3ULL << 62)) /* present or swapped */
			continue;
		atomic_store(&rt->state[p], (uint8_t)(PG_FAR | (s & PG_NOACCESS)));
		atomic_fetch_sub(&rt->soft_pages, 1);
		fl_local_sub(rt, 1);
		fixed++;
	}
	fl_sys_close(fd);
	(void)fixed;
}

int fl_far_after_fork(struct fl_runtime *rt)
{
	struct fl_far_state *fs = &rt->farst;
	memset(&fs->stats, 0, sizeof(fs->stats));
	atomic_store(&fs->failing, 0);
	atomic_store(&fs->readers, 0);
	if (!rt->far->mirror_is_far) {
		settle_written_soft_pages(rt);
		/* stale mirror pages of the parent's handlers: no other thread runs yet */
		for (unsigned row = 0; row < FL_MAX_HANDLERS; row++) {
			for (unsigned i = 0; i < fs->nstale[row]; i++) {
				size_t page = fs->stale[row][i];
				if ((atomic_load(&rt->state[page]) & PG_WHERE) == PG_RESIDENT)
					fl_sys_madvise(fl_mirror_addr(rt, page), FL_PAGE_SIZE, MADV_DONTNEED);
			}
			fs->nstale[row] = 0;
		}
		if (fs->cur >= 0 && fs->cur_written)
			fs->gens[fs->cur].frozen = true;
		fs->cur = -1; /* the parent keeps writing its current generation: never ours */
		fs->forks_seen = atomic_load(&fs->forks);
	} else {
		/* the in-memory store's stale mirror pages are found again when evicted (EEXIST) */
		memset(fs->nstale, 0, sizeof(fs->nstale));
	}
	if (fs->pidfd >= 0)
		fl_sys_close(fs->pidfd); /* the parent's process */
	fs->pidfd = fl_fd_keep((int)syscall(SYS_pidfd_open, getpid(), 0));
	if (rt->far->after_fork(rt) < 0)
		return -1;
	return 0;
}

/* ---- meta.json and stats.json ---- */

void fl_far_json_meta(struct fl_runtime *rt, struct fl_buf *b)
{
	struct fl_far_state *fs = &rt->farst;
	fl_buf_json_key_str(b, FL_META_FAR_SPEC, fs->spec[0] ? fs->spec : "mem");
	fl_buf_json_key_str(b, FL_META_FAR_DETAIL, rt->far->detail ? rt->far->detail(rt) : "mirror");
	fl_buf_json_key_u64(b, FL_META_FAR_LATENCY_NS, fs->latency_ns);
	fl_buf_json_key_u64(b, FL_META_FAR_BANDWIDTH, fs->bandwidth);
	fl_buf_json_key_u64(b, FL_META_PREFETCH_PAGES, fs->prefetch);
}

void fl_far_json_stats(struct fl_runtime *rt, struct fl_buf *b)
{
	struct fl_far_stats *st = &rt->farst.stats;
	fl_buf_json_key_u64(b, FL_STATS_FAR_READS, atomic_load(&st->reads));
	fl_buf_json_key_u64(b, FL_STATS_FAR_READ_PAGES, atomic_load(&st->read_pages));
	fl_buf_json_key_u64(b, FL_STATS_FAR_READ_NS, atomic_load(&st->read_ns));
	fl_buf_json_key_u64(b, FL_STATS_FAR_WRITES, atomic_load(&st->writes));
	fl_buf_json_key_u64(b, FL_STATS_FAR_WRITE_PAGES, atomic_load(&st->write_pages));
	fl_buf_json_key_u64(b, FL_STATS_FAR_WRITE_NS, atomic_load(&st->write_ns));
	fl_buf_json_key_u64(b, FL_STATS_FAR_DELAY_NS, atomic_load(&st->delay_ns));
	fl_buf_json_key_u64(b, FL_STATS_PREFETCH_REQUESTS, atomic_load(&st->prefetch_requests));
	fl_buf_json_key_u64(b, FL_STATS_PREFETCHED_PAGES, atomic_load(&st->prefetched));
	fl_buf_json_key_u64(b, FL_STATS_PREFETCH_HITS, atomic_load(&st->prefetch_hits));
	fl_buf_json_key_u64(b, FL_STATS_PREFETCH_UNUSED, atomic_load(&st->prefetch_unused) + atomic_load(&rt->farst.prefetch_staged));
	fl_buf_json_key_u64(b, FL_STATS_FAR_MIRROR_DROPS, atomic_load(&st->mirror_drops));
	fl_buf_json_key_u64(b, FL_STATS_FAR_GENERATIONS, rt->farst.ngens);
	fl_buf_json_key_u64(b, FL_STATS_FAR_COMPACTIONS, atomic_load(&st->compactions));
}
