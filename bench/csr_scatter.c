/* csr_scatter.c: a multi-threaded random scatter — building a graph's CSR form from an edge list,
 * the phase that took 98.9 % of the faults of a graph suite's BFS under memory pressure.
 *
 * usage: csr_scatter LOG2_NODES [DEGREE (16)] [THREADS (2)]
 *
 * Generates E = N × DEGREE edges (N = 2^LOG2_NODES), each a pair of pseudo-random node numbers (a
 * hash of the edge's index: the same list in every run) in an edge list of 8 B per edge. Then, with
 * THREADS threads each taking a slice of the list: counts every source's out-degree (atomic
 * increments), prefix-sums the counts into offsets (one thread), and scatters every edge's target
 * into its source's run of the neighbour array by an atomic fetch-add on the source's cursor. The
 * scatter writes 4 B to a random page per edge. Memory: edge list 8 E, neighbours 4 E, offsets and
 * cursors 8 N each: 2^18 nodes × 16 edges = 32 + 16 + 2 + 2 MiB (52 MiB) plus the program.
 *
 * prints: csr nodes=N edges=E threads=T build_ns=T cpu_ns=C checksum=X
 * The order within a run depends on the threads' interleaving; the checksum (a sum over every
 * node's run of a hash of the node and each neighbour) does not, so it is the same in every
 * correct run. */
#include "bench.h"

#include <pthread.h>
#include <stdatomic.h>

struct graph {
	uint32_t nodes;
	uint64_t edges;
	uint32_t *edge_list;          /* 2 per edge: source, target */
	_Atomic uint64_t *cursor;     /* per source: the next free slot of its run */
	uint64_t *offsets;            /* nodes + 1 */
	uint32_t *neighbours;
	pthread_barrier_t barrier;
	unsigned threads;
};

struct worker {
	struct graph *g;
	unsigned index;
	pthread_t thread;
	uint64_t checksum;
};

static void slice(const struct graph *g, unsigned index, uint64_t total, uint64_t *lo, uint64_t *hi)
{
	*lo = total * index / g->threads;
	*hi = total * (index + 1) / g->threads;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	struct graph *g = w->g;
	uint64_t lo, hi;
	slice(g, w->index, g->edges, &lo, &hi);
	for (uint64_t e = lo; e < hi; e++) { /* the edge list */
		uint64_t h = bench_mix64(e * 0x9e3779b97f4a7c15ULL + 1);
		g->edge_list[2 * e] = (uint32_t)(h % g->nodes);
		g->edge_list[2 * e + 1] = (uint32_t)((h >> 32) % g->nodes);
	}
	for (uint64_t e = lo; e < hi; e++) /* out-degrees */
		atomic_fetch_add_explicit(&g->cursor[g->edge_list[2 * e]], 1, memory_order_relaxed);
	pthread_barrier_wait(&g->barrier);
	if (w->index == 0) { /* offsets; cursors become each run's start */
		uint64_t sum = 0;
		for (uint32_t u = 0; u < g->nodes; u++) {
			uint64_t d = atomic_load_explicit(&g->cursor[u], memory_order_relaxed);
			g->offsets[u] = sum;
			atomic_store_explicit(&g->cursor[u], sum, memory_order_relaxed);
			sum += d;
		}
		g->offsets[g->nodes] = sum;
	}
	pthread_barrier_wait(&g->barrier);
	for (uint64_t e = lo; e < hi; e++) { /* the scatter */
		uint32_t u = g->edge_list[2 * e], v = g->edge_list[2 * e + 1];
		uint64_t slot = atomic_fetch_add_explicit(&g->cursor[u], 1, memory_order_relaxed);
		g->neighbours[slot] = v;
	}
	pthread_barrier_wait(&g->barrier);
	uint64_t nlo, nhi, sum = 0;
	slice(g, w->index, g->nodes, &nlo, &nhi);
	for (uint64_t u = nlo; u < nhi; u++)
		for (uint64_t i = g->offsets[u]; i < g->offsets[u + 1]; i++)
			sum += bench_mix64((u << 32) | g->neighbours[i]);
	w->checksum = sum;
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned log2n = (unsigned)bench_arg(argc, argv, 1, 18);
	uint64_t deg = bench_arg(argc, argv, 2, 16);
	unsigned threads = (unsigned)bench_arg(argc, argv, 3, 2);
	if (log2n < 4 || log2n > 28 || deg < 1 || deg > 1024 || threads < 1 || threads > 64)
		bench_die("usage: csr_scatter LOG2_NODES(4..28) [DEGREE(1..1024)] [THREADS(1..64)]");
	struct graph g = { .nodes = 1u << log2n, .threads = threads };
	g.edges = (uint64_t)g.nodes * deg;
	uint64_t c0 = bench_cpu_ns(), t0 = bench_now_ns();
	g.edge_list = malloc(g.edges * 2 * sizeof(uint32_t));
	g.cursor = calloc(g.nodes, sizeof(*g.cursor));
	g.offsets = malloc((g.nodes + 1ULL) * sizeof(uint64_t));
	g.neighbours = malloc(g.edges * sizeof(uint32_t));
	if (!g.edge_list || !g.cursor || !g.offsets || !g.neighbours)
		bench_die_errno("malloc of %llu edges", (unsigned long long)g.edges);
	int err = pthread_barrier_init(&g.barrier, NULL, threads);
	if (err)
		bench_die("pthread_barrier_init(%u): %s", threads, strerror(err));
	struct worker w[64];
	for (unsigned i = 0; i < threads; i++) {
		w[i] = (struct worker){ .g = &g, .index = i };
		err = pthread_create(&w[i].thread, NULL, work, &w[i]);
		if (err)
			bench_die("pthread_create: %s", strerror(err));
	}
	uint64_t checksum = 0;
	for (unsigned i = 0; i < threads; i++) {
		pthread_join(w[i].thread, NULL);
		checksum += w[i].checksum;
	}
	uint64_t t1 = bench_now_ns(), c1 = bench_cpu_ns();
	printf("csr nodes=%u edges=%llu threads=%u build_ns=%llu cpu_ns=%llu checksum=%016llx\n", g.nodes,
	       (unsigned long long)g.edges, threads, (unsigned long long)(t1 - t0), (unsigned long long)(c1 - c0),
	       (unsigned long long)checksum);
	pthread_barrier_destroy(&g.barrier);
	free(g.edge_list);
	free((void *)g.cursor);
	free(g.offsets);
	free(g.neighbours);
	return 0;
}
