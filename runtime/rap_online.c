/* rap_online.c: the online RAP tree — hot address ranges of every fault, counted while the
 * program runs and written to DIR/<pid>/ranges.rap at shutdown, so `faultline ranges` has
 * them without reading the fault records (and whatever sampling did to stacks).
 *
 * Trees. One RAP tree (lib/rap.c, inc/faultline/rap.h) per handler thread, each in memory
 * mapped once at start with fl_sys_mmap (MAP_NORESERVE: only the nodes in use become
 * resident). A handler counts the page of every fault it serves into its own tree
 * (fl_rap_online_add, called by fault.c after the fault is served): no lock, no allocation,
 * O(D) plus an occasional merge pass over its own nodes. Geometry: 4 KiB units, b = 4,
 * addresses up to 2^47 (or the region's end, if higher), ε from FAULTLINE_RAP_EPS (default
 * 0.01; 0 turns the online tree off), node budget from FAULTLINE_RAP_NODES (default the
 * library's 4·b·D/ε: 28,800 nodes, 450 KiB per handler at ε = 0.01).
 *
 * Snapshot (fl_rap_online_write, from fl_runtime_shutdown; again at a later shutdown if an
 * exec failed): the trees are merged (rap_merge) into a tree mapped for the purpose, which
 * is serialized (rap_serialize) and written as ranges.rap.tmp, then renamed to ranges.rap,
 * so a reader never sees half a file. The merge reads trees the handlers write, so it runs
 * inside a handshake: the snapshot sets `frozen` and waits until no handler is inside an
 * update (`busy`); a handler that finds `frozen` set waits (yielding) until the merge is
 * done — a few milliseconds — and then counts its fault: none is lost. Both sides store
 * their flag and then load the other's, sequentially consistent (Dekker), so either the
 * handler sees `frozen` or the snapshot sees `busy`. The waiting handler needs nothing from
 * the snapshotting thread but plain computation on runtime memory, so it cannot deadlock.
 *
 * fork: the child's trees start empty (re-initialised in the inherited copy of the memory).
 * Faults served after the last shutdown (later destructors, the exit path) are not in the
 * file; `faultline ranges` states the tree's count next to the trace's. */
#include "rap_online.h"
#include "context.h"
#include "diag.h"

#include "faultline/rap.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FL_ENV_RAP_EPS   "FAULTLINE_RAP_EPS"    /* ε of the online trees; 0 = off */
#define FL_ENV_RAP_NODES "FAULTLINE_RAP_NODES"  /* node budget per tree; 0 = default */
#define RAP_ONLINE_DEFAULT_EPS 0.01
#define RAP_ONLINE_BRANCH_LOG2 2                 /* b = 4 */
#define RAP_ONLINE_MIN_ADDR_BITS 47              /* x86-64 user space, 4-level paging */
#define RAP_MERGED_BUDGET_FACTOR 2               /* the merged tree gets twice a handler's budget */

/* One handler's tree, on its own cache line(s) so handlers never share a written line. */
struct fl_rap_slot {
	rap_t *tree;
	_Atomic int busy;                  /* the handler is inside rap_add */
	uint64_t added;                    /* faults counted (for diagnostics) */
} __attribute__((aligned(64)));

struct fl_rap_online {
	struct rap_config cfg;             /* every handler tree's configuration */
	size_t tree_bytes;                 /* memory of one tree (rap_memory_size, rounded to 64) */
	size_t map_bytes;                  /* the whole mapping: this struct + the trees */
	unsigned ntrees;
	_Atomic int frozen;                /* a snapshot is reading the trees */
	_Atomic int writing;               /* a snapshot is in progress (no nesting) */
	struct fl_rap_slot slot[FL_MAX_HANDLERS];
};

/* Parses a decimal fraction "0.01", ".5", "1" (no exponent, no sign) without libc's
 * locale-dependent strtod. Returns -1 when malformed. */
static double parse_fraction(const char *s)
{
	double v = 0, scale = 1;
	bool digits = false, point = false;
	for (; *s; s++) {
		if (*s == '.' && !point) {
			point = true;
		} else if (*s >= '0' && *s <= '9') {
			digits = true;
			if (point)
				scale /= 10, v += (*s - '0') * scale;
			else
				v = v * 10 + (*s - '0');
		} else {
			return -1;
		}
	}
	return digits ? v : -1;
}

static void log_env(const char *name, const char *value, const char *why)
{
	char msg[256];
	struct fl_buf b = { msg, 0, sizeof(msg) };
	fl_buf_str(&b, name);
	fl_buf_str(&b, "=");
	fl_buf_str(&b, value);
	fl_buf_str(&b, ": ");
	fl_buf_str(&b, why);
	fl_log(msg);
}

/* Reads ε and the node budget; returns false when the online tree is off. */
static bool read_config(struct fl_runtime *rt, struct rap_config *cfg)
{
	const char *eps_text = getenv(FL_ENV_RAP_EPS), *nodes_text = getenv(FL_ENV_RAP_NODES);
	double eps = RAP_ONLINE_DEFAULT_EPS;
	uint64_t end = (uint64_t)(uintptr_t)rt->region + rt->region_pages * FL_PAGE_SIZE;
	unsigned bits = 64 - (unsigned)__builtin_clzll(end - 1);

	if (eps_text && *eps_text) {
		double v = parse_fraction(eps_text);
		if (v == 0)
			return false;
		if (v > 0 && v < 1)
			eps = v;
		else
			log_env(FL_ENV_RAP_EPS, eps_text, "need 0 < eps < 1 (0 = off); using 0.01");
	}
	memset(cfg, 0, sizeof(*cfg));
	cfg->eps = eps;
	cfg->branch_log2 = RAP_ONLINE_BRANCH_LOG2;
	cfg->addr_bits = bits < RAP_ONLINE_MIN_ADDR_BITS ? RAP_ONLINE_MIN_ADDR_BITS : bits;
	cfg->gran_log2 = FL_PAGE_SHIFT;
	if (nodes_text && *nodes_text) {
		uint64_t n = 0;
		const char *p = nodes_text;
		for (; *p >= '0' && *p <= '9' && n < (UINT64_C(1) << 40); p++)
			n = n * 10 + (uint64_t)(*p - '0');
		if (*p)
			log_env(FL_ENV_RAP_NODES, nodes_text, "not a node count; using the default budget");
		else
			cfg->node_budget = (size_t)n;
	}
	return true;
}

static size_t round64(size_t n)
{
	return (n + 63) & ~(size_t)63;
}

/* (Re)initialises every tree, empty, in its slot of the mapping. */
static int init_trees(struct fl_rap_online *o)
{
	char *base = (char *)o + round64(sizeof(*o));
	for (unsigned i = 0; i < o->ntrees; i++) {
		struct fl_rap_slot *s = &o->slot[i];
		s->tree = rap_init_in(&o->cfg, base + i * o->tree_bytes, o->tree_bytes, NULL, 0);
		if (!s->tree)
			return -1;
		atomic_store(&s->busy, 0);
		s->added = 0;
	}
	atomic_store(&o->frozen, 0);
	atomic_store(&o->writing, 0);
	return 0;
}

int fl_rap_online_setup(struct fl_runtime *rt)
{
	struct rap_config cfg;
	char err[256];
	rt->rap_online = NULL;
	if (!read_config(rt, &cfg))
		return 0;
	size_t tree = rap_memory_size(&cfg, err, sizeof(err));
	if (tree == 0) {
		fl_log(err);
		fl_log("online RAP tree off (faultline ranges rebuilds ranges from the fault records)");
		return 0;
	}
	unsigned ntrees = rt->nhandlers ? rt->nhandlers : 1;
	size_t bytes = round64(sizeof(struct fl_rap_online)) + ntrees * round64(tree);
	void *mem = fl_sys_reserve(bytes, "mmap(online RAP trees)");
	if (!mem)
		return 0;
	struct fl_rap_online *o = mem;
	o->cfg = cfg;
	o->tree_bytes = round64(tree);
	o->map_bytes = bytes;
	o->ntrees = ntrees;
	if (init_trees(o) < 0) {
		fl_log("online RAP tree: initialisation failed; off");
		fl_sys_munmap(mem, bytes);
		return 0;
	}
	rt->rap_online = o;
	return 0;
}

void fl_rap_online_after_fork(struct fl_runtime *rt)
{
	if (rt->rap_online && init_trees(rt->rap_online) < 0)
		rt->rap_online = NULL; /* cannot happen: same memory, same configuration */
}

void fl_rap_online_add(struct fl_handler *h, uint64_t addr)
{
	struct fl_rap_online *o = h->rt->rap_online;
	if (!o || h->index >= o->ntrees)
		return;
	struct fl_rap_slot *s = &o->slot[h->index];
	for (;;) {
		atomic_store(&s->busy, 1);
		if (!atomic_load(&o->frozen))
			break;
		atomic_store(&s->busy, 0);
		while (atomic_load_explicit(&o->frozen, memory_order_acquire))
			sched_yield();
	}
	rap_add(s->tree, addr & ~(uint64_t)(FL_PAGE_SIZE - 1), 1);
	s->added++;
	atomic_store_explicit(&s->busy, 0, memory_order_release);
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t w = fl_sys_write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? errno : EIO;
		p += w, len -= (size_t)w;
	}
	return 0;
}

/* Writes buf as DIR/ranges.rap, through ranges.rap.tmp and rename(2). */
static void write_file(struct fl_runtime *rt, const void *buf, size_t len)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	struct fl_buf b = { path, 0, sizeof(path) }, t = { tmp, 0, sizeof(tmp) };
	fl_buf_str(&b, rt->dir);
	fl_buf_str(&b, "/" FL_FILE_NAME_RAP);
	fl_buf_str(&t, path);
	fl_buf_str(&t, ".tmp");
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		fl_log_errno(tmp, errno);
		return;
	}
	int err = write_all(fd, buf, len);
	if (fl_sys_close(fd) < 0 && !err)
		err = errno;
	if (!err && rename(tmp, path) < 0)
		err = errno;
	if (err) {
		fl_log_errno(path, err);
		unlink(tmp);
	}
}

/* Merges every handler's tree into merged, with the handlers held off meanwhile. */
static int merge_trees(struct fl_rap_online *o, rap_t *merged)
{
	int rc = 0;
	atomic_store(&o->frozen, 1);
	for (unsigned i = 0; i < o->ntrees; i++)
		while (atomic_load(&o->slot[i].busy))
			sched_yield();
	for (unsigned i = 0; i < o->ntrees && rc == 0; i++)
		rc = rap_merge(merged, o->slot[i].tree, NULL, 0);
	atomic_store_explicit(&o->frozen, 0, memory_order_release);
	return rc;
}

void fl_rap_online_write(struct fl_runtime *rt)
{
	struct fl_rap_online *o = rt->rap_online;
	if (!o || atomic_exchange(&o->writing, 1))
		return;
	struct rap_config cfg = o->cfg;
	struct rap_stats st;
	rap_get_stats(o->slot[0].tree, &st);
	cfg.node_budget = st.node_capacity * RAP_MERGED_BUDGET_FACTOR;
	size_t mbytes = rap_memory_size(&cfg, NULL, 0);
	void *mmem = mbytes ? fl_sys_mmap(NULL, mbytes, PROT_READ | PROT_WRITE,
					  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0) : MAP_FAILED;
	if (mmem == MAP_FAILED) {
		fl_log_errno("mmap(merged RAP tree)", errno);
		atomic_store(&o->writing, 0);
		return;
	}
	rap_t *merged = rap_init_in(&cfg, mmem, mbytes, NULL, 0);
	if (!merged || merge_trees(o, merged) < 0) {
		fl_log("online RAP tree: merging the handlers' trees failed; no ranges.rap");
	} else {
		size_t len = rap_serialize(merged, NULL, 0);
		void *buf = fl_sys_mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (buf == MAP_FAILED) {
			fl_log_errno("mmap(ranges.rap buffer)", errno);
		} else {
			rap_serialize(merged, buf, len);
			write_file(rt, buf, len);
			fl_sys_munmap(buf, len);
		}
	}
	fl_sys_munmap(mmem, mbytes);
	atomic_store(&o->writing, 0);
}
