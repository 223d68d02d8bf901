/* ranges.c: hot address ranges of a recording (ranges.h) — picking each process's tree (the
 * runtime's ranges.rap or one built from the fault records), extracting and joining its hot
 * ranges, and attributing them to allocation sites and mappings.
 *
 * Attribution is one pass over the process's faults: each selected fault adds a pair
 * (range index, allocation index) for every range holding its page (ranges nest, so a fault may
 * be in several); the pairs are counted in a hash map as they come (runs of one pair counted
 * first), then sorted, and grouped per stack id into sites. Memory: one entry per distinct
 * (range, allocation) pair, freed before returning; the faults are walked as a stream
 * (fault_stream.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "ranges.h"

#include "callsite.h"
#include "fault_stream.h"
#include "report_map.h"
#include "symbolize.h"

#define RANGES_MAX_FILE (UINT64_C(1) << 32)  /* a larger ranges.rap is not one we wrote */

/* Working state of one ranges_compute call. */
struct ctx {
	const struct ranges_options *o;
	const struct fl_recording *rec;
	struct ranges_result *res;
	struct callsite_skip skip;          /* the default skip list of every verb */
	bool skip_ready;
	struct callsite_table *callsites;   /* the one stack → callsite resolver; created on first use */
	bool sym_failed;
	char *err;
	size_t errlen;
};

static void set_err(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_err(struct ctx *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->err, c->errlen, fmt, ap);
	va_end(ap);
}

/* Appends a warning to the result (dropped silently when memory runs out). */
static void warn(struct ranges_result *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct ranges_result *res, const char *fmt, ...)
{
	char *line;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&line, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	char **w = realloc(res->warnings, (res->nwarnings + 1) * sizeof(*w));
	if (!w) {
		free(line);
		return;
	}
	res->warnings = w;
	w[res->nwarnings++] = line;
}

static void sym_diag(void *ctx, const char *message)
{
	warn(ctx, "%s", message);
}

/* ---------------------------------------------------------------- options */

void ranges_options_init(struct ranges_options *o)
{
	memset(o, 0, sizeof(*o));
	o->eps = RANGES_DEFAULT_EPS;
	o->phi = RANGES_DEFAULT_PHI;
	o->kinds = RANGES_KINDS_ALL;
	o->coalesce = true;
	o->attribute = true;
	o->symbolize = true;
	o->max_sites = 3;
	o->max_maps = 3;
}

static const char *const kind_names[] = {
	[FL_FAULT_FIRST_TOUCH] = "first-touch",
	[FL_FAULT_REFAULT] = "refault",
	[FL_FAULT_SOFT] = "soft",
	[FL_FAULT_CONCURRENT] = "concurrent",
	[FL_FAULT_ACCESS_SAMPLE] = "access", /* never in all, as in report: not a fault */
};
#define NKINDS (sizeof(kind_names) / sizeof(kind_names[0]))

int ranges_parse_kinds(const char *text, unsigned *kinds, char *err, size_t errlen)
{
	unsigned mask = 0;
	if (strcmp(text, "all") == 0) {
		*kinds = RANGES_KINDS_ALL;
		return 0;
	}
	for (const char *p = text;;) {
		size_t n = strcspn(p, ",");
		unsigned k;
		for (k = 1; k < NKINDS; k++)
			if (strlen(kind_names[k]) == n && strncmp(p, kind_names[k], n) == 0)
				break;
		if (k == NKINDS) {
			snprintf(err, errlen, "unknown fault kind '%.*s' (all, first-touch, refault, soft, "
				 "concurrent, access, or a comma-separated list)", (int)n, p);
			return -1;
		}
		mask |= RANGES_KIND(k);
		if (!p[n])
			break;
		p += n + 1;
	}
	*kinds = mask;
	return 0;
}

const char *ranges_kinds_name(unsigned kinds, char *buf, size_t len)
{
	size_t used = 0;
	if (kinds == RANGES_KINDS_ALL) {
		snprintf(buf, len, "all");
		return buf;
	}
	buf[0] = '\0';
	for (unsigned k = 1; k < NKINDS; k++) {
		if (!(kinds & RANGES_KIND(k)))
			continue;
		int n = snprintf(buf + used, len - used, "%s%s", used ? "," : "", kind_names[k]);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
	return buf;
}

static bool kind_selected(const struct ranges_options *o, unsigned kind)
{
	if (o->kinds == RANGES_KINDS_ALL) /* the faults: access samples are counted apart, as the online tree does */
		return kind != FL_FAULT_ACCESS_SAMPLE;
	return kind < 32 && (o->kinds & RANGES_KIND(kind));
}

/* ---------------------------------------------------------------- trees */

static unsigned gran_log2_of(const struct fl_process *proc)
{
	uint32_t ps = proc->page_size ? proc->page_size : 4096;
	return (unsigned)__builtin_ctz(ps);
}

static uint64_t page_of(const struct fl_process *proc, uint64_t addr)
{
	return addr & ~((UINT64_C(1) << gran_log2_of(proc)) - 1);
}

/* The runtime's rule (runtime/rap_online.c): 2^47, or enough for the region's end. */
static unsigned addr_bits_of(const struct fl_process *proc)
{
	uint64_t end = proc->region_start + proc->region_size;
	unsigned bits = end > 1 ? 64 - (unsigned)__builtin_clzll(end - 1) : 1;
	if (bits < RANGES_MIN_ADDR_BITS)
		bits = RANGES_MIN_ADDR_BITS;
	return bits > 63 ? 63 : bits;
}

/* Reads DIR/ranges.rap into *tree. Returns 1 (loaded), 0 (no such file), or -1 (unusable: a
 * warning says why). */
static int load_online(struct ctx *c, const struct fl_process *proc, rap_t **tree)
{
	char path[4096], why[512];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s", proc->dir, FL_FILE_NAME_RAP);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(why, sizeof(why), "open: %s", strerror(errno));
		goto bad;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > RANGES_MAX_FILE) {
		snprintf(why, sizeof(why), "%s", S_ISREG(st.st_mode) ? "too large" : "not a regular file");
		close(fd);
		goto bad;
	}
	size_t len = (size_t)st.st_size, got = 0;
	uint8_t *buf = malloc(len ? len : 1);
	if (!buf) {
		close(fd);
		snprintf(why, sizeof(why), "out of memory for %zu bytes", len);
		goto bad;
	}
	while (got < len) {
		ssize_t r = read(fd, buf + got, len - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	*tree = rap_deserialize(buf, got, why, sizeof(why));
	free(buf);
	if (!*tree)
		goto bad;
	struct rap_stats rs;
	rap_get_stats(*tree, &rs);
	if (rs.gran_log2 != gran_log2_of(proc) ||
	    (rs.addr_bits < 64 && proc->region_start + proc->region_size > (UINT64_C(1) << rs.addr_bits))) {
		snprintf(why, sizeof(why), "tree geometry (unit 2^%u bytes, addresses below 2^%u) does not fit "
			 "the process (page %u bytes, region ends at 0x%" PRIx64 ")", rs.gran_log2, rs.addr_bits,
			 proc->page_size, proc->region_start + proc->region_size);
		rap_free(*tree);
		*tree = NULL;
		goto bad;
	}
	return 1;
bad:
	warn(c->res, "%s: %s; using the fault records instead", path, why);
	return -1;
}

/* Builds a tree from the process's selected fault records. */
static rap_t *build_from_trace(struct ctx *c, const struct fl_process *proc, uint64_t *counted)
{
	struct rap_config cfg = {
		.eps = c->o->eps,
		.branch_log2 = RANGES_BRANCH_LOG2,
		.addr_bits = addr_bits_of(proc),
		.gran_log2 = gran_log2_of(proc),
	};
	char why[256];
	rap_t *tree = rap_init(&cfg, why, sizeof(why));
	if (!tree) {
		set_err(c, "%s: %s", proc->dir, why);
		return NULL;
	}
	*counted = 0;
	struct fl_fault_stream *fs;
	const struct fl_fault *f;
	int got = fl_fault_stream_open(proc, &fs, why, sizeof(why));
	if (got < 0) {
		set_err(c, "%s", why);
		rap_free(tree);
		return NULL;
	}
	while ((got = fl_fault_stream_next(fs, &f)) > 0) {
		const struct fl_fault_record *r = &f->rec;
		if (kind_selected(c->o, r->kind) && rap_add(tree, page_of(proc, r->addr), 1) == 0)
			(*counted)++;
	}
	if (got < 0) {
		set_err(c, "%s", fl_fault_stream_error(fs));
		rap_free(tree);
		tree = NULL;
	}
	fl_fault_stream_close(fs);
	return tree;
}

static uint64_t selected_faults(const struct ranges_options *o, const struct fl_process *proc)
{
	uint64_t n = 0;
	for (unsigned kind = 0; kind <= FL_FAULT_KIND_MAX; kind++)
		if (kind_selected(o, kind))
			n += proc->kind_counts[kind];
	return n;
}

/* Picks and loads the tree of one process. Returns 0, or -1 (error set). */
static int choose_tree(struct ctx *c, struct ranges_proc *rp)
{
	const struct fl_process *proc = rp->proc;
	char count[32], count2[32];
	rp->trace_faults = selected_faults(c->o, proc);
	if (!c->o->from_trace && c->o->kinds == RANGES_KINDS_ALL && load_online(c, proc, &rp->tree) == 1) {
		/* a whole trace and its online tree count the same faults (the runtime adds each to both),
		 * but for the faults served after the tree was written at shutdown (threads still faulting
		 * while the process exits: a few): a tree counting more, or under half, is not this
		 * process's (a file copied from another recording) */
		struct rap_stats st;
		rap_get_stats(rp->tree, &st);
		uint64_t whole = rp->trace_faults + proc->faults_lost;
		if (!proc->faults_lost_exact || (st.n <= whole && 2 * st.n >= whole)) {
			rp->source = RANGES_SOURCE_ONLINE;
			snprintf(rp->source_text, sizeof(rp->source_text), "online tree (%s)", FL_FILE_NAME_RAP);
			return 0;
		}
		warn(c->res, "%s/%s: counts %s faults, but the process's whole trace holds %s: not this process's "
		     "tree; using the fault records instead", proc->dir, FL_FILE_NAME_RAP,
		     cli_format_count(st.n, count, sizeof(count)), cli_format_count(rp->trace_faults, count2, sizeof(count2)));
		rap_free(rp->tree);
		rp->tree = NULL;
	}
	uint64_t counted;
	rp->tree = build_from_trace(c, proc, &counted);
	if (!rp->tree)
		return -1;
	rp->source = RANGES_SOURCE_TRACE;
	snprintf(rp->source_text, sizeof(rp->source_text), "built from %s fault record%s",
		 cli_format_count(counted, count, sizeof(count)), counted == 1 ? "" : "s");
	return 0;
}

/* ---------------------------------------------------------------- hot ranges */

static double pct_of(uint64_t part, uint64_t n)
{
	return n ? 100.0 * (double)part / (double)n : 0.0;
}

static void set_range(struct ranges_range *out, const rap_t *tree, uint64_t n, uint64_t lo, uint64_t hi,
		      uint64_t est, uint64_t excl, uint64_t upper, unsigned depth, unsigned nodes)
{
	memset(out, 0, sizeof(*out));
	out->lo = out->node_lo = lo;
	out->hi = out->node_hi = hi;
	out->parent = RANGES_NO_PARENT;
	out->est = out->lower = est;
	out->upper = upper;
	out->excl = excl;
	out->pct = pct_of(est, n);
	out->excl_pct = pct_of(excl, n);
	out->depth = depth;
	out->nodes = nodes;
	(void)tree;
}

static int by_excl(const void *pa, const void *pb)
{
	const struct ranges_range *a = pa, *b = pb;
	if (a->excl != b->excl)
		return a->excl > b->excl ? -1 : 1;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->hi > b->hi ? -1 : a->hi < b->hi;
}

/* Hot ranges of rp->tree, joined where touching innermost nodes, sorted by exclusive count. */
static int extract_ranges(struct ctx *c, struct ranges_proc *rp)
{
	const rap_t *tree = rp->tree;
	uint64_t n = rp->stats.n;
	size_t nhot = rap_hot_ranges(tree, c->o->phi, NULL, 0);
	if (nhot == 0)
		return 0;
	struct rap_range *hot = malloc(nhot * sizeof(*hot));
	rp->ranges = calloc(nhot, sizeof(*rp->ranges));
	if (!hot || !rp->ranges) {
		free(hot);
		set_err(c, "out of memory");
		return -1;
	}
	rap_hot_ranges(tree, c->o->phi, hot, nhot);
	/* the ends of the hot nodes that enclose the current one, innermost last: a joined run stays
	 * inside them (one that ran past its parent's end overlapped it, and nested under it) */
	uint64_t *enclosing = malloc(nhot * sizeof(*enclosing));
	if (!enclosing) {
		free(hot);
		set_err(c, "out of memory");
		return -1;
	}
	size_t out = 0, nenclosing = 0;
	for (size_t i = 0; i < nhot;) {
		/* hot is sorted by (lo, hi descending): i contains i + 1 iff i + 1 starts inside it */
		bool innermost = i + 1 == nhot || hot[i + 1].lo >= hot[i].hi;
		while (nenclosing && enclosing[nenclosing - 1] <= hot[i].lo)
			nenclosing--;
		uint64_t limit = nenclosing ? enclosing[nenclosing - 1] : UINT64_MAX;
		size_t j = i + 1;
		if (c->o->coalesce && innermost) {
			while (j < nhot && hot[j].lo == hot[j - 1].hi && hot[j].hi <= limit &&
			       (j + 1 == nhot || hot[j + 1].lo >= hot[j].hi))
				j++;
		}
		if (!innermost)
			enclosing[nenclosing++] = hot[i].hi;
		if (j == i + 1) {
			set_range(&rp->ranges[out++], tree, n, hot[i].lo, hot[i].hi, hot[i].est,
				  hot[i].discounted, hot[i].upper, hot[i].depth, 1);
		} else {
			uint64_t est = 0, excl = 0, lower, upper;
			unsigned depth = hot[i].depth;
			for (size_t k = i; k < j; k++) {
				est += hot[k].est;
				excl += hot[k].discounted;
				if (hot[k].depth < depth)
					depth = hot[k].depth;
			}
			rap_query(tree, hot[i].lo, hot[j - 1].hi, &lower, &upper);
			/* lower = the joined subtrees' sum = est; upper adds their ancestors once */
			set_range(&rp->ranges[out++], tree, n, hot[i].lo, hot[j - 1].hi, est, excl,
				  upper > est ? upper : est, depth, (unsigned)(j - i));
		}
		i = j;
	}
	free(enclosing);
	free(hot);
	rp->nranges = out;
	qsort(rp->ranges, out, sizeof(*rp->ranges), by_excl);
	return 0;
}

/* ---------------------------------------------------------------- clipping and nesting */

/* Indices of the ranges by node bounds: lo ascending, hi descending (a tree's pre-order, since
 * hot nodes and joined runs of innermost nodes nest or are disjoint). */
static size_t *node_order(const struct ranges_proc *rp)
{
	size_t nr = rp->nranges, *order = malloc((nr ? nr : 1) * sizeof(*order));
	if (!order)
		return NULL;
	for (size_t i = 0; i < nr; i++) {
		size_t v = i, j = i;
		const struct ranges_range *r = &rp->ranges[v];
		while (j > 0) { /* insertion sort: at most a few hundred ranges */
			const struct ranges_range *q = &rp->ranges[order[j - 1]];
			if (q->node_lo < r->node_lo || (q->node_lo == r->node_lo && q->node_hi >= r->node_hi))
				break;
			order[j] = order[j - 1];
			j--;
		}
		order[j] = v;
	}
	return order;
}

/* Clips every range to the region, then to the extent of the selected fault records inside its
 * node: [first faulted page, last faulted page + page). Without a fault record inside, the range
 * keeps its node clipped to the region. */
static int clip_ranges(struct ranges_proc *rp, const struct ranges_options *o, const size_t *order)
{
	const struct fl_process *proc = rp->proc;
	uint64_t page_size = UINT64_C(1) << gran_log2_of(proc), nr = rp->nranges;
	uint64_t rs = proc->region_start, re = proc->region_start + proc->region_size;
	uint64_t *first = malloc(nr * sizeof(*first)), *last = calloc(nr, sizeof(*last));
	if (!first || !last) {
		free(first);
		free(last);
		return -1;
	}
	for (size_t i = 0; i < nr; i++)
		first[i] = UINT64_MAX;
	struct fl_fault_stream *fs;
	const struct fl_fault *fault;
	char why[256];
	int got = fl_fault_stream_open(proc, &fs, why, sizeof(why));
	if (got < 0) {
		free(first);
		free(last);
		return -1;
	}
	while ((got = fl_fault_stream_next(fs, &fault)) > 0) {
		const struct fl_fault_record *rec = &fault->rec;
		if (!kind_selected(o, rec->kind))
			continue;
		uint64_t page = page_of(proc, rec->addr);
		for (size_t k = 0; k < nr && rp->ranges[order[k]].node_lo <= page; k++) {
			size_t i = order[k];
			if (page >= rp->ranges[i].node_hi)
				continue;
			if (page < first[i])
				first[i] = page;
			if (page > last[i])
				last[i] = page;
		}
	}
	fl_fault_stream_close(fs);
	if (got < 0) {
		free(first);
		free(last);
		return -1;
	}
	for (size_t i = 0; i < nr; i++) {
		struct ranges_range *r = &rp->ranges[i];
		if (proc->region_size && r->lo < re && r->hi > rs) {
			r->lo = r->lo > rs ? r->lo : rs;
			r->hi = r->hi < re ? r->hi : re;
		}
		if (first[i] != UINT64_MAX) {
			r->lo = first[i] > r->lo ? first[i] : r->lo;
			r->hi = last[i] + page_size < r->hi ? last[i] + page_size : r->hi;
		}
	}
	free(first);
	free(last);
	return 0;
}

/* Parents and levels: the smallest range whose node holds another's is its parent. order is the
 * pre-order of node_order, so a range's parent comes before it and is on the stack of open ones. */
static int nest_ranges(struct ranges_proc *rp, size_t *order)
{
	size_t nr = rp->nranges, depth = 0;
	size_t *open = malloc((nr ? nr : 1) * sizeof(*open));
	if (!open)
		return -1;
	for (size_t k = 0; k < nr; k++) {
		struct ranges_range *r = &rp->ranges[order[k]];
		while (depth > 0 && rp->ranges[open[depth - 1]].node_hi <= r->node_lo)
			depth--;
		r->parent = depth ? open[depth - 1] : RANGES_NO_PARENT;
		r->level = (unsigned)depth;
		open[depth++] = order[k];
	}
	free(open);
	rp->tree_order = order;
	return 0;
}

static int clip_and_nest(struct ctx *c, struct ranges_proc *rp)
{
	if (rp->nranges == 0)
		return 0;
	size_t *order = node_order(rp);
	if (!order || clip_ranges(rp, c->o, order) < 0 || nest_ranges(rp, order) < 0) {
		free(order);
		set_err(c, "out of memory, or %s/%s could not be read again", rp->proc->dir, FL_FILE_NAME_FAULTS);
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------- attribution */

/* A run of faults of one range on one allocation: key range << 32 | alloc index. */
struct pair_run {
	uint64_t key, faults;
};

static int by_key(const void *pa, const void *pb)
{
	uint64_t a = ((const struct pair_run *)pa)->key, b = ((const struct pair_run *)pb)->key;
	return a < b ? -1 : a > b;
}

/* Adds *run to the faults counted per (range, allocation) (when it holds faults) and empties it.
 * -1 on ENOMEM. */
static int flush_run(struct pair_run *run, struct report_map *counts)
{
	if (run->faults == 0)
		return 0;
	uint64_t *count = report_map_add(counts, run->key, 0, NULL);
	if (!count)
		return -1;
	*count += run->faults;
	run->faults = 0;
	return 0;
}

/* The distinct (range, allocation) pairs of COUNTS with their faults, in *pairs. -1 on ENOMEM. */
static int pairs_of(const struct report_map *counts, struct pair_run **pairs, size_t *n)
{
	const struct report_map_slot *slot;
	*n = 0;
	*pairs = malloc((counts->count ? counts->count : 1) * sizeof(**pairs));
	if (!*pairs)
		return -1;
	for (size_t i = 0; (slot = report_map_next(counts, &i)) != NULL;)
		(*pairs)[(*n)++] = (struct pair_run){ slot->a, slot->value };
	return 0;
}

/* Per (range, allocation): how many faults. */
struct alloc_count {
	uint32_t range, alloc;   /* alloc: index into proc->allocs, FL_NONE = none */
	uint32_t stack_id;
	uint32_t snapshot;       /* the maps snapshot in force at the allocation's time */
	uint64_t faults;
};

static int by_range_stack(const void *pa, const void *pb)
{
	const struct alloc_count *a = pa, *b = pb;
	if (a->range != b->range)
		return a->range < b->range ? -1 : 1;
	if (a->stack_id != b->stack_id)
		return a->stack_id < b->stack_id ? -1 : 1;
	if (a->snapshot != b->snapshot)
		return a->snapshot < b->snapshot ? -1 : 1;
	return a->faults > b->faults ? -1 : a->faults < b->faults;
}

static int by_site_faults(const void *pa, const void *pb)
{
	const struct ranges_site *a = pa, *b = pb;
	if (a->faults != b->faults)
		return a->faults > b->faults ? -1 : 1;
	if (a->stack_id != b->stack_id)
		return a->stack_id < b->stack_id ? -1 : 1;
	return a->snapshot < b->snapshot ? -1 : a->snapshot > b->snapshot;
}

/* The default skip list (callsite.h), compiled on first use; NULL when it cannot be. */
static const struct callsite_skip *skip_list(struct ctx *c)
{
	char err[256];

	if (!c->skip_ready && !c->sym_failed) {
		if (callsite_skip_init(&c->skip, true, NULL, 0, err, sizeof(err)) < 0)
			c->sym_failed = true;
		else
			c->skip_ready = true;
	}
	return c->skip_ready ? &c->skip : NULL;
}

/* The shared resolver (callsite.h), made on first use; NULL when it cannot be. */
static struct callsite_table *resolver(struct ctx *c)
{
	if (c->o->resolver)
		return c->o->resolver;
	if (!c->callsites && skip_list(c)) {
		c->callsites = callsite_table_new(c->rec, &c->skip, sym_diag, c->res);
		if (!c->callsites)
			c->sym_failed = true;
	}
	return c->callsites;
}

/* Without symbols: the first frame of STACK whose binary the skip list does not cover, named
 * "BINARY+0xOFFSET" in the site's maps snapshot (or "0xPC"). */
static void raw_site(struct ctx *c, const struct fl_process *proc, const struct fl_stack *stack,
		     struct ranges_site *site, char *buf, size_t len)
{
	const struct maps *maps = site->snapshot < proc->nmaps ? proc->maps[site->snapshot].maps : NULL;
	const struct callsite_skip *skip = skip_list(c);
	const struct maps_entry *e = NULL;

	site->pc = stack->frames[0];
	for (unsigned i = 0; maps && i < stack->nframes; i++) {
		site->pc = stack->frames[i];
		e = maps_find(maps, site->pc);
		if (!e || e->kind != MAPS_FILE || !skip || !callsite_skip_binary(skip, e->path))
			break;
	}
	if (e && e->kind == MAPS_FILE) {
		const char *base = strrchr(e->path, '/');
		snprintf(buf, len, "%s+0x%" PRIx64, base ? base + 1 : e->path, site->pc - e->start + e->pgoff);
	} else {
		snprintf(buf, len, "0x%" PRIx64, site->pc);
	}
}

/* Names the allocation site of the stack: its callsite as `faultline report --by alloc` names it
 * (callsite.h: the first source frame outside libc, the allocators and the runtime, under the maps
 * snapshot in force when its allocations were made), "function file:line"; binary+offset of its
 * first frame without symbols (--no-symbols). */
static void name_site(struct ctx *c, const struct fl_process *proc, struct ranges_site *site)
{
	const struct fl_stack *stack = site->stack_id ? fl_process_stack(proc, site->stack_id) : NULL;
	struct callsite_table *t = c->o->symbolize ? resolver(c) : NULL;
	const struct callsite_frame *f = NULL;
	char buf[1024];

	if (!stack || stack->nframes == 0) {
		site->name = strdup(site->stack_id ? "(stack not in the trace)" : "(no stack)");
		return;
	}
	if (t && callsite_frame_of_stack_in(t, (size_t)(proc - c->rec->procs), stack, site->snapshot, &f) < 0)
		f = NULL;
	if (!f) {
		raw_site(c, proc, stack, site, buf, sizeof(buf));
		site->name = strdup(buf);
		return;
	}
	site->pc = f->pc;
	if (f->function && f->file) {
		const char *base = strrchr(f->file, '/');
		snprintf(buf, sizeof(buf), "%s %s:%u", f->function, base ? base + 1 : f->file, f->line);
	} else if (f->function) {
		snprintf(buf, sizeof(buf), "%s (%s)", f->function, f->label);
	} else {
		snprintf(buf, sizeof(buf), "%s", f->label);
	}
	site->name = strdup(buf);
}

/* Names the N sites (one per stack and maps snapshot, in that order) and makes one site of the
 * consecutive ones of a stack that are named alike: a snapshot that did not rename the stack's
 * frames (a dlopen elsewhere) does not split its site. TOP: per site, its top allocation's faults.
 * Returns the sites left, or (size_t)-1 when out of memory (the names freed). */
static size_t merge_same_sites(struct ctx *c, const struct fl_process *proc, struct ranges_site *sites,
			       uint64_t *top, size_t n)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		name_site(c, proc, &sites[i]);
		if (!sites[i].name) {
			for (size_t k = 0; k < m; k++)
				free((char *)sites[k].name);
			return (size_t)-1;
		}
		struct ranges_site *prev = m ? &sites[m - 1] : NULL;
		if (!prev || prev->stack_id != sites[i].stack_id || strcmp(prev->name, sites[i].name) != 0) {
			sites[m] = sites[i], top[m++] = top[i];
			continue;
		}
		prev->faults += sites[i].faults;
		prev->allocs += sites[i].allocs;
		prev->lo = sites[i].lo < prev->lo ? sites[i].lo : prev->lo;
		prev->hi = sites[i].hi > prev->hi ? sites[i].hi : prev->hi;
		if (top[i] > top[m - 1])
			prev->alloc_id = sites[i].alloc_id, top[m - 1] = top[i];
		free((char *)sites[i].name);
	}
	return m;
}

/* Turns the sorted (range, alloc) counts of one range into its sites. */
static int make_sites(struct ctx *c, const struct fl_process *proc, struct ranges_range *r,
		      const struct alloc_count *ac, size_t n)
{
	size_t nsites = 0;
	bool have = false;
	uint32_t last = 0, last_snapshot = 0;
	for (size_t i = 0; i < n; i++) {
		if (ac[i].alloc == FL_NONE)
			continue;
		if (!have || ac[i].stack_id != last || ac[i].snapshot != last_snapshot)
			nsites++;
		have = true;
		last = ac[i].stack_id;
		last_snapshot = ac[i].snapshot;
	}
	if (nsites == 0)
		return 0;
	struct ranges_site *sites = calloc(nsites, sizeof(*sites));
	uint64_t *top = calloc(nsites, sizeof(*top)); /* per site: its top allocation's faults */
	if (!sites || !top) {
		free(sites), free(top);
		return -1;
	}
	size_t s = (size_t)-1;
	for (size_t i = 0; i < n; i++) {
		if (ac[i].alloc == FL_NONE)
			continue;
		const struct fl_alloc_record *a = &proc->allocs[ac[i].alloc];
		if (s == (size_t)-1 || sites[s].stack_id != ac[i].stack_id || sites[s].snapshot != ac[i].snapshot) {
			s++;
			sites[s].stack_id = ac[i].stack_id;
			sites[s].snapshot = ac[i].snapshot;
			sites[s].lo = a->addr;
			sites[s].hi = a->addr + a->size;
			sites[s].alloc_id = a->alloc_id; /* ac is sorted by faults within a stack */
			top[s] = ac[i].faults;
		}
		sites[s].faults += ac[i].faults;
		sites[s].allocs++;
		if (a->addr < sites[s].lo)
			sites[s].lo = a->addr;
		if (a->addr + a->size > sites[s].hi)
			sites[s].hi = a->addr + a->size;
	}
	nsites = merge_same_sites(c, proc, sites, top, nsites);
	free(top);
	if (nsites == (size_t)-1) {
		free(sites);
		return -1;
	}
	qsort(sites, nsites, sizeof(*sites), by_site_faults);
	size_t keep = nsites < c->o->max_sites ? nsites : c->o->max_sites;
	for (size_t i = keep; i < nsites; i++)
		free((char *)sites[i].name);
	r->sites_total = nsites;
	r->sites = sites;
	r->nsites = keep;
	return 0;
}

/* A mapping as a range lists it. */
static void describe_map(const struct fl_process *proc, const struct maps_entry *e, struct ranges_map *o)
{
	uint64_t rs = proc->region_start, re = proc->region_start + proc->region_size;

	o->start = e->start, o->end = e->end;
	snprintf(o->perms, sizeof(o->perms), "%c%c%c%c", e->prot & MAPS_PROT_READ ? 'r' : '-',
		 e->prot & MAPS_PROT_WRITE ? 'w' : '-', e->prot & MAPS_PROT_EXEC ? 'x' : '-',
		 e->prot & MAPS_SHARED ? 's' : 'p');
	o->name = e->path && *e->path ? e->path : (e->start < re && e->end > rs) ? "[faultline region]" : "[anon]";
}

static int by_map(const void *pa, const void *pb)
{
	const struct ranges_map *a = pa, *b = pb;
	int d;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	if ((d = strcmp(a->perms, b->perms)) != 0)
		return d;
	return strcmp(a->name, b->name);
}

/* The mappings overlapping the range in the maps snapshots in force while its faults happened: from
 * the one in force at its first fault (FIRST_NS) to the one at its last (LAST_NS); every snapshot
 * when it has none (FIRST_NS > LAST_NS). A mapping that several snapshots hold alike (same bounds,
 * permissions and name) is listed once; address order. The names are borrowed from the snapshots
 * until copied at the end. */
static int find_maps(struct ctx *c, const struct fl_process *proc, struct ranges_range *r, uint64_t first_ns,
		     uint64_t last_ns)
{
	size_t from = 0, to = proc->nmaps, n = 0, cap = 0;
	struct ranges_map *all = NULL;

	if (proc->nmaps == 0)
		return 0;
	if (first_ns <= last_ns) {
		from = (size_t)(fl_process_maps_at(proc, first_ns) - proc->maps);
		to = (size_t)(fl_process_maps_at(proc, last_ns) - proc->maps) + 1;
	}
	for (size_t k = from; k < to; k++) {
		const struct maps *m = proc->maps[k].maps;
		if (!m)
			continue;
		size_t a = 0, b = m->count;
		while (a < b) { /* first entry ending after r->lo */
			size_t mid = a + (b - a) / 2;
			if (m->entries[mid].end <= r->lo)
				a = mid + 1;
			else
				b = mid;
		}
		for (; a < m->count && m->entries[a].start < r->hi; a++) {
			if (n == cap) {
				size_t ncap = cap ? 2 * cap : 16;
				struct ranges_map *grown = realloc(all, ncap * sizeof(*grown));
				if (!grown) {
					free(all);
					return -1;
				}
				all = grown, cap = ncap;
			}
			describe_map(proc, &m->entries[a], &all[n++]);
		}
	}
	if (n > 1)
		qsort(all, n, sizeof(*all), by_map);
	size_t total = 0;
	for (size_t i = 0; i < n; i++) { /* unique, in place */
		if (total == 0 || by_map(&all[total - 1], &all[i]) != 0)
			all[total++] = all[i];
	}
	r->maps_total = total;
	size_t keep = total < c->o->max_maps ? total : c->o->max_maps;
	if (keep > 0 && !(r->maps = calloc(keep, sizeof(*r->maps)))) {
		free(all);
		return -1;
	}
	for (size_t i = 0; i < keep; i++) {
		r->maps[i] = all[i];
		r->maps[i].name = strdup(all[i].name);
		r->nmaps = i + 1;
		if (!r->maps[i].name) {
			free(all);
			return -1;
		}
	}
	free(all);
	return 0;
}

/* One pass over the faults (in time order): exact counts, allocation sites, mappings of every range. */
static int attribute(struct ctx *c, struct ranges_proc *rp)
{
	const struct fl_process *proc = rp->proc;
	size_t nr = rp->nranges;
	if (nr == 0)
		return 0;
	if (nr > UINT32_MAX - 1) {
		set_err(c, "too many ranges");
		return -1;
	}
	/* ranges in address order (lo, hi descending) for the scan */
	uint32_t *order = malloc(nr * sizeof(*order));
	uint64_t *span = malloc(2 * nr * sizeof(*span)); /* per range: its first and last fault's time */
	struct pair_run *pending = calloc(nr, sizeof(*pending)); /* per range: its current run */
	struct pair_run *pairs = NULL;
	size_t npairs = 0;
	struct report_map counts = REPORT_MAP_INIT; /* (range << 32 | alloc, 0) → faults */
	int rc = -1;
	struct fl_fault_stream *fs = NULL;
	if (!order || !span || !pending)
		goto out;
	for (size_t i = 0; i < nr; i++)
		span[2 * i] = UINT64_MAX, span[2 * i + 1] = 0;
	for (size_t i = 0; i < nr; i++)
		order[i] = (uint32_t)i;
	for (size_t i = 1; i < nr; i++) { /* insertion sort: at most ~1/φ ranges */
		uint32_t v = order[i];
		size_t j = i;
		while (j > 0 && (rp->ranges[order[j - 1]].lo > rp->ranges[v].lo ||
				 (rp->ranges[order[j - 1]].lo == rp->ranges[v].lo && rp->ranges[order[j - 1]].hi < rp->ranges[v].hi))) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = v;
	}
	for (size_t i = 0; i < nr; i++)
		rp->ranges[i].has_trace = true;
	char why[256];
	const struct fl_fault *fault;
	int got;
	if (fl_fault_stream_open(proc, &fs, why, sizeof(why)) < 0)
		goto out;
	while ((got = fl_fault_stream_next(fs, &fault)) > 0) {
		if (!kind_selected(c->o, fault->rec.kind))
			continue;
		uint64_t page = page_of(proc, fault->rec.addr);
		for (size_t k = 0; k < nr && rp->ranges[order[k]].lo <= page; k++) {
			struct ranges_range *r = &rp->ranges[order[k]];
			if (page >= r->hi)
				continue;
			r->trace++;
			if (span[2 * order[k]] == UINT64_MAX) /* faults are in time order */
				span[2 * order[k]] = fault->rec.time_ns;
			span[2 * order[k] + 1] = fault->rec.time_ns;
			if (fault->alloc == FL_NONE)
				r->unattributed++;
			/* consecutive faults of a range mostly hit one allocation: counted as a run */
			uint64_t key = (uint64_t)order[k] << 32 | fault->alloc;
			struct pair_run *run = &pending[order[k]];
			if (run->faults && run->key != key && flush_run(run, &counts) < 0)
				goto out;
			run->key = key;
			run->faults++;
		}
	}
	if (got < 0)
		goto out;
	fl_fault_stream_close(fs);
	fs = NULL;
	for (size_t i = 0; i < nr; i++)
		if (flush_run(&pending[i], &counts) < 0)
			goto out;
	if (pairs_of(&counts, &pairs, &npairs) < 0)
		goto out;
	qsort(pairs, npairs, sizeof(*pairs), by_key);
	/* counts per (range, alloc), then sorted by (range, stack, faults desc) */
	struct alloc_count *ac = malloc((npairs ? npairs : 1) * sizeof(*ac));
	if (!ac)
		goto out;
	size_t nac = 0;
	for (size_t i = 0; i < npairs; i++) {
		uint32_t range = (uint32_t)(pairs[i].key >> 32), alloc = (uint32_t)pairs[i].key;
		if (nac && ac[nac - 1].range == range && ac[nac - 1].alloc == alloc) {
			ac[nac - 1].faults += pairs[i].faults;
			continue;
		}
		ac[nac].range = range;
		ac[nac].alloc = alloc;
		ac[nac].stack_id = alloc == FL_NONE ? 0 : proc->allocs[alloc].stack_id;
		ac[nac].snapshot = alloc == FL_NONE ? 0 : fl_process_maps_index_at(proc, proc->allocs[alloc].time_ns);
		ac[nac].faults = pairs[i].faults;
		nac++;
	}
	qsort(ac, nac, sizeof(*ac), by_range_stack);
	for (size_t i = 0, j; i < nac; i = j) {
		for (j = i; j < nac && ac[j].range == ac[i].range; j++)
			;
		if (make_sites(c, proc, &rp->ranges[ac[i].range], ac + i, j - i) < 0) {
			free(ac);
			goto out;
		}
	}
	free(ac);
	for (size_t i = 0; i < nr; i++)
		if (find_maps(c, proc, &rp->ranges[i], span[2 * i], span[2 * i + 1]) < 0)
			goto out;
	rc = 0;
out:
	if (rc < 0)
		set_err(c, "out of memory, or %s/%s could not be read again", proc->dir, FL_FILE_NAME_FAULTS);
	fl_fault_stream_close(fs);
	free(order);
	free(pending);
	free(pairs);
	report_map_free(&counts);
	free(span);
	return rc;
}

/* ---------------------------------------------------------------- the result */

static void resolver_free(struct ctx *c)
{
	callsite_table_free(c->callsites);
	if (c->skip_ready)
		callsite_skip_free(&c->skip);
}

int ranges_compute(const struct fl_recording *rec, const struct ranges_options *o,
		   struct ranges_result *out, char *err, size_t errlen)
{
	struct ctx c = { .o = o, .rec = rec, .res = out, .err = err, .errlen = errlen };
	memset(out, 0, sizeof(*out));
	if (!(o->eps > 0 && o->eps < 1)) {
		set_err(&c, "eps = %g: need 0 < eps < 1", o->eps);
		return -1;
	}
	if (!(o->phi > 0 && o->phi <= 1)) {
		set_err(&c, "phi = %g: need 0 < phi <= 1", o->phi);
		return -1;
	}
	size_t n = 0;
	for (size_t i = 0; i < rec->nprocs; i++)
		n += o->pid == 0 || rec->procs[i].pid == o->pid;
	if (n == 0) {
		if (o->pid)
			set_err(&c, "%s: no process with pid %u in the recording", rec->dir, o->pid);
		else
			set_err(&c, "%s: no process in the recording", rec->dir);
		return -1;
	}
	out->procs = calloc(n, sizeof(*out->procs));
	if (!out->procs) {
		set_err(&c, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < rec->nprocs; i++) {
		if (o->pid != 0 && rec->procs[i].pid != o->pid)
			continue;
		struct ranges_proc *rp = &out->procs[out->nprocs++];
		rp->proc = &rec->procs[i];
		if (choose_tree(&c, rp) < 0)
			goto fail;
		rap_get_stats(rp->tree, &rp->stats);
		rp->error_bound = rap_error_bound(rp->tree);
		if (rp->stats.n && o->phi <= rp->stats.eps_now)
			warn(out, "%s: phi %g is not above the tree's error fraction %.4f: ranges near the "
			     "threshold may be missed or spurious", rp->proc->dir, o->phi, rp->stats.eps_now);
		if (extract_ranges(&c, rp) < 0 || clip_and_nest(&c, rp) < 0 ||
		    (o->attribute && attribute(&c, rp) < 0))
			goto fail;
	}
	resolver_free(&c);
	return 0;
fail:
	resolver_free(&c);
	ranges_result_free(out);
	return -1;
}

size_t ranges_top(const struct ranges_result *res, size_t max, struct ranges_ref *out)
{
	size_t stored = 0;
	for (size_t p = 0; p < res->nprocs; p++) {
		const struct ranges_proc *rp = &res->procs[p];
		for (size_t i = 0; i < rp->nranges; i++) {
			const struct ranges_range *r = &rp->ranges[i];
			if (r->depth == 0 && r->nodes == 1)
				continue; /* the root: "everything else" */
			/* insert by excl descending, keeping the max largest */
			size_t j;
			if (stored == max) {
				if (max == 0 || out[max - 1].range->excl >= r->excl)
					continue;
				j = max - 1; /* the smallest drops out */
			} else {
				j = stored++;
			}
			while (j > 0 && out[j - 1].range->excl < r->excl) {
				out[j] = out[j - 1];
				j--;
			}
			out[j] = (struct ranges_ref){ rp, r };
		}
	}
	return stored;
}

void ranges_result_free(struct ranges_result *res)
{
	if (!res)
		return;
	for (size_t p = 0; p < res->nprocs; p++) {
		struct ranges_proc *rp = &res->procs[p];
		for (size_t i = 0; i < rp->nranges; i++) {
			struct ranges_range *r = &rp->ranges[i];
			for (size_t k = 0; k < r->nsites; k++)
				free((char *)r->sites[k].name);
			for (size_t k = 0; k < r->nmaps; k++)
				free((char *)r->maps[k].name);
			free(r->sites);
			free(r->maps);
		}
		free(rp->ranges);
		free(rp->tree_order);
		rap_free(rp->tree);
	}
	free(res->procs);
	for (size_t i = 0; i < res->nwarnings; i++)
		free(res->warnings[i]);
	free(res->warnings);
	memset(res, 0, sizeof(*res));
}
