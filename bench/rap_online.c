/* rap_online.c: the runtime's online RAP path (runtime/rap_online.c) measured on a real fault trace.
 *
 * usage: rap_online PROC_DIR [REPEAT (20)] [BUDGET_BYTES (8192)] [PHI (0.05)]
 * build: gcc -std=gnu11 -O2 -D_GNU_SOURCE -Iinc -Ibench -o build/bench/rap_online bench/rap_online.c lib/rap.c
 *
 * PROC_DIR is one process directory of a recording (DIR/<pid>): its `faults` file gives the
 * stream (fault addresses in file order, i.e. the order the handlers served them), its region the
 * geometry, exactly as the runtime configures its trees: ε = 0.01, b = 4, 4 KiB units, addresses
 * below 2^max(47, bits of the region's end), default node budget (4·b·D/ε).
 *
 * Prints one line per measurement:
 *   online ups=U ups_plain=P events=N repeat=R      updates per second of one thread: with the
 *          runtime's handshake (seq_cst store of `busy`, load of `frozen`, release store), and
 *          plain rap_add calls
 *   memory tree_bytes=B resident_bytes=R nodes=K capacity=C     one handler's tree: its mapping
 *          (pool + descriptor) and the part of the pool in use after the whole trace
 *   snapshot trees=2 merge_us=M serialize_us=S file_bytes=F    the shutdown's work while the
 *          handlers wait: the trace dealt to two trees in chunks of 2048 faults (as two handlers
 *          take them), merged into a tree of twice the budget, then serialized (best of 5)
 *   accuracy tree=NAME bytes=B nodes=K eps_now=E hot=H accuracy=A accuracy_noroot=A2
 *          for the trees: "default" (default budget, fed the trace), "8k" (the largest budget
 *          whose memory fits BUDGET_BYTES, fed the trace) and "file" (PROC_DIR/ranges.rap, the
 *          runtime's own merged tree, when present). Accuracy = 1 - Σ|est - true| / Σ true over
 *          the hot ranges at PHI (rap_hot_ranges), true = exact fault records inside the range;
 *          accuracy_noroot leaves out the root range, whose estimate is always exact. */
#include "bench.h"
#include "faultline/rap.h"
#include "faultline/trace.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <sched.h>
#include <sys/stat.h>

static uint64_t *load_faults(const char *dir, size_t *count, uint64_t *region_end)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, FL_FILE_NAME_FAULTS);
	FILE *f = fopen(path, "rb");
	if (!f)
		bench_die_errno("fopen %s", path);
	struct fl_file_header h;
	if (fread(&h, sizeof(h), 1, f) != 1 || h.magic != FL_TRACE_MAGIC ||
	    h.record_size != sizeof(struct fl_fault_record))
		bench_die("%s: not a faults file of this version", path);
	*region_end = h.region_start + h.region_size;
	size_t cap = 1 << 16, n = 0;
	uint64_t *addrs = malloc(cap * sizeof(*addrs));
	struct fl_fault_record r;
	while (addrs && fread(&r, sizeof(r), 1, f) == 1) {
		if (n == cap)
			addrs = realloc(addrs, (cap *= 2) * sizeof(*addrs));
		if (addrs)
			addrs[n++] = r.addr & ~(uint64_t)(BENCH_PAGE - 1);
	}
	if (!addrs)
		bench_die("out of memory");
	fclose(f);
	*count = n;
	return addrs;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Faults with page in [lo, hi) in the sorted array. */
static size_t lower_index(const uint64_t *s, size_t n, uint64_t v)
{
	size_t a = 0, b = n;
	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (s[m] < v)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

static uint64_t exact(const uint64_t *sorted, size_t n, uint64_t lo, uint64_t hi)
{
	return lower_index(sorted, n, hi) - lower_index(sorted, n, lo);
}

static void accuracy(const char *name, const rap_t *t, const uint64_t *sorted, size_t n, double phi)
{
	struct rap_stats st;
	rap_get_stats(t, &st);
	size_t nhot = rap_hot_ranges(t, phi, NULL, 0);
	struct rap_range *hot = calloc(nhot ? nhot : 1, sizeof(*hot));
	if (!hot)
		bench_die("out of memory");
	rap_hot_ranges(t, phi, hot, nhot);
	double err = 0, tot = 0, err2 = 0, tot2 = 0;
	for (size_t i = 0; i < nhot; i++) {
		double tr = (double)exact(sorted, n, hot[i].lo, hot[i].hi);
		double d = tr > (double)hot[i].est ? tr - (double)hot[i].est : (double)hot[i].est - tr;
		err += d, tot += tr;
		if (hot[i].depth > 0)
			err2 += d, tot2 += tr;
	}
	printf("accuracy tree=%s bytes=%zu nodes=%zu capacity=%zu n=%llu eps_now=%.4f hot=%zu accuracy=%.6f "
	       "accuracy_noroot=%.6f\n", name, st.memory_bytes, st.nodes, st.node_capacity,
	       (unsigned long long)st.n, st.eps_now, nhot, tot ? 1 - err / tot : 1, tot2 ? 1 - err2 / tot2 : 1);
	free(hot);
}

/* The runtime's handshake around each update (runtime/rap_online.c, fl_rap_online_add). */
static _Atomic int busy, frozen;

static void online_add(rap_t *t, uint64_t addr)
{
	for (;;) {
		atomic_store(&busy, 1);
		if (!atomic_load(&frozen))
			break;
		atomic_store(&busy, 0);
		while (atomic_load_explicit(&frozen, memory_order_acquire))
			sched_yield();
	}
	rap_add(t, addr & ~(uint64_t)(BENCH_PAGE - 1), 1);
	atomic_store_explicit(&busy, 0, memory_order_release);
}

static double run(const struct rap_config *cfg, void *mem, size_t bytes, const uint64_t *a, size_t n,
		  unsigned repeat, bool handshake, rap_t **last)
{
	uint64_t best = UINT64_MAX;
	for (unsigned r = 0; r < repeat; r++) {
		rap_t *t = rap_init_in(cfg, mem, bytes, NULL, 0);
		uint64_t t0 = bench_now_ns();
		if (handshake)
			for (size_t i = 0; i < n; i++)
				online_add(t, a[i]);
		else
			for (size_t i = 0; i < n; i++)
				rap_add(t, a[i], 1);
		uint64_t dt = bench_now_ns() - t0;
		if (dt < best)
			best = dt;
		*last = t;
	}
	return (double)n / ((double)best / 1e9);
}

/* What fl_rap_online_write does at shutdown, timed. */
static void snapshot(const struct rap_config *cfg, const uint64_t *a, size_t n)
{
	rap_t *h[2] = { rap_init(cfg, NULL, 0), rap_init(cfg, NULL, 0) };
	struct rap_config mc = *cfg;
	struct rap_stats st;
	if (!h[0] || !h[1])
		bench_die("out of memory");
	for (size_t i = 0; i < n; i++)
		rap_add(h[(i / 2048) & 1], a[i], 1);
	rap_get_stats(h[0], &st);
	mc.node_budget = 2 * st.node_capacity;
	size_t len = 0;
	void *buf = NULL;
	uint64_t merge_ns = UINT64_MAX, ser_ns = UINT64_MAX;
	for (int rep = 0; rep < 5; rep++) { /* best of 5: the handlers wait this long at exit */
		rap_t *m = rap_init(&mc, NULL, 0);
		if (!m)
			bench_die("out of memory");
		uint64_t t0 = bench_now_ns();
		rap_merge(m, h[0], NULL, 0);
		rap_merge(m, h[1], NULL, 0);
		uint64_t t1 = bench_now_ns();
		if (!buf) {
			len = rap_serialize(m, NULL, 0);
			if (!(buf = malloc(len)))
				bench_die("out of memory");
		}
		uint64_t t2 = bench_now_ns();
		rap_serialize(m, buf, len);
		uint64_t t3 = bench_now_ns();
		if (t1 - t0 < merge_ns)
			merge_ns = t1 - t0;
		if (t3 - t2 < ser_ns)
			ser_ns = t3 - t2;
		rap_free(m);
	}
	printf("snapshot trees=2 merge_us=%.0f serialize_us=%.0f file_bytes=%zu\n", (double)merge_ns / 1e3,
	       (double)ser_ns / 1e3, len);
	free(buf);
	rap_free(h[0]);
	rap_free(h[1]);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		bench_die("usage: rap_online PROC_DIR [REPEAT] [BUDGET_BYTES] [PHI]");
	const char *dir = argv[1];
	unsigned repeat = (unsigned)bench_arg(argc, argv, 2, 20);
	size_t budget_bytes = (size_t)bench_arg(argc, argv, 3, 8192);
	double phi = argc > 4 ? atof(argv[4]) : 0.05;
	size_t n;
	uint64_t end;
	uint64_t *addrs = load_faults(dir, &n, &end);
	if (n == 0)
		bench_die("%s: no faults", dir);
	unsigned bits = 64 - (unsigned)__builtin_clzll(end - 1);
	struct rap_config cfg = { .eps = 0.01, .branch_log2 = 2, .addr_bits = bits < 47 ? 47 : bits, .gran_log2 = 12 };
	char err[256];
	size_t bytes = rap_memory_size(&cfg, err, sizeof(err));
	if (!bytes)
		bench_die("%s", err);
	void *mem = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
	if (!mem)
		bench_die("out of memory");
	memset(mem, 0, bytes); /* resident before timing, as the handler's pages are after warm-up */
	rap_t *t = NULL;
	double ups = run(&cfg, mem, bytes, addrs, n, repeat, true, &t);
	double plain = run(&cfg, mem, bytes, addrs, n, repeat, false, &t);
	printf("online ups=%.0f ups_plain=%.0f events=%zu repeat=%u\n", ups, plain, n, repeat);
	struct rap_stats st;
	rap_get_stats(t, &st);
	printf("memory tree_bytes=%zu resident_bytes=%zu nodes=%zu capacity=%zu\n", st.memory_bytes,
	       st.memory_bytes - st.pool_bytes + st.nodes_reserved * st.bytes_per_node, st.nodes, st.node_capacity);

	snapshot(&cfg, addrs, n);

	uint64_t *sorted = malloc(n * sizeof(*sorted));
	if (!sorted)
		bench_die("out of memory");
	memcpy(sorted, addrs, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_u64);
	accuracy("default", t, sorted, n, phi);

	struct rap_config small = cfg;
	for (small.node_budget = 1 + 2 * 4 + 4;; small.node_budget += 4) {
		struct rap_config next = small;
		next.node_budget += 4;
		if (rap_memory_size(&next, NULL, 0) > budget_bytes)
			break;
	}
	rap_t *t8 = rap_init(&small, err, sizeof(err));
	if (!t8)
		bench_die("%s", err);
	rap_add_points(t8, addrs, n);
	accuracy("8k", t8, sorted, n, phi);
	rap_free(t8);

	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, FL_FILE_NAME_RAP);
	FILE *f = fopen(path, "rb");
	if (f) {
		struct stat sb;
		fstat(fileno(f), &sb);
		void *buf = malloc((size_t)sb.st_size + 1);
		size_t got = buf ? fread(buf, 1, (size_t)sb.st_size, f) : 0;
		fclose(f);
		rap_t *ft = rap_deserialize(buf, got, err, sizeof(err));
		free(buf);
		if (!ft)
			bench_die("%s: %s", path, err);
		accuracy("file", ft, sorted, n, phi);
		rap_free(ft);
	}
	free(sorted);
	free(mem);
	free(addrs);
	return 0;
}
