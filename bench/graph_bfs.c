/* graph_bfs.c: a random-access graph workload — BFS over a random graph in CSR form, the access
 * pattern of gapbs-class programs (issue 17: they did not finish at -L 64 under faultline).
 *
 * usage: graph_bfs LOG2_NODES [AVG_DEGREE (64)] [ROOTS (3)]
 *
 * Builds a directed graph of N = 2^LOG2_NODES nodes: node u has 1 + h(u) % (2 * AVG_DEGREE - 1)
 * out-edges (AVG_DEGREE on average), each to a pseudo-random node (a hash of u and the edge's
 * rank: no input file, the same graph in every run). CSR arrays, all malloc'd: offsets (N + 1 ×
 * 8 B), edges (E × 4 B), and for the BFS a distance array (N × 4 B) and a queue (N × 4 B). With
 * LOG2_NODES 20 and AVG_DEGREE 64 that is 8 + 256 + 4 + 4 MiB, about 290 MB. Then BFS from ROOTS
 * roots (node 0, N/3, 2N/3), each over the whole graph: nodes come off the queue in an order
 * unrelated to their address, so every one reads its own run of edges (one page, often the start
 * of another) and scattered distance entries.
 * prints: graph nodes=N edges=E build_ns=T bfs_ns=T cpu_ns=C reached=R checksum=X
 * (cpu_ns: whole process, build and BFS). reached and checksum (over the distances) are the same
 * in every correct run. */
#include "bench.h"

int main(int argc, char **argv)
{
	unsigned log2n = (unsigned)bench_arg(argc, argv, 1, 20);
	uint64_t deg = bench_arg(argc, argv, 2, 64);
	unsigned roots = (unsigned)bench_arg(argc, argv, 3, 3);
	if (log2n < 4 || log2n > 28 || deg < 1 || deg > 1024 || roots < 1)
		bench_die("usage: graph_bfs LOG2_NODES(4..28) [AVG_DEGREE(1..1024)] [ROOTS]");
	uint32_t n = 1u << log2n;
	uint64_t c0 = bench_cpu_ns(), t0 = bench_now_ns();

	uint64_t *offsets = malloc((n + 1ULL) * sizeof(uint64_t));
	if (!offsets)
		bench_die_errno("malloc(offsets)");
	offsets[0] = 0;
	for (uint32_t u = 0; u < n; u++)
		offsets[u + 1] = offsets[u] + 1 + bench_mix64(u) % (2 * deg - 1);
	uint64_t m = offsets[n];
	uint32_t *edges = malloc(m * sizeof(uint32_t));
	uint32_t *dist = malloc((uint64_t)n * sizeof(uint32_t));
	uint32_t *queue = malloc((uint64_t)n * sizeof(uint32_t));
	if (!edges || !dist || !queue)
		bench_die_errno("malloc(%llu edges)", (unsigned long long)m);
	for (uint32_t u = 0; u < n; u++)
		for (uint64_t e = offsets[u]; e < offsets[u + 1]; e++)
			edges[e] = (uint32_t)(bench_mix64(((uint64_t)u << 20) ^ (e - offsets[u]) ^ 0x9e3779b97f4a7c15ULL) & (n - 1));
	uint64_t t1 = bench_now_ns();

	uint64_t reached = 0, checksum = 0;
	for (unsigned r = 0; r < roots; r++) {
		uint32_t root = (uint32_t)((uint64_t)n * r / roots);
		memset(dist, 0xff, (uint64_t)n * sizeof(uint32_t));
		uint32_t head = 0, tail = 0;
		dist[root] = 0;
		queue[tail++] = root;
		while (head < tail) {
			uint32_t u = queue[head++], du = dist[u] + 1;
			for (uint64_t e = offsets[u]; e < offsets[u + 1]; e++) {
				uint32_t v = edges[e];
				if (dist[v] == UINT32_MAX) {
					dist[v] = du;
					queue[tail++] = v;
				}
			}
		}
		reached += tail;
		for (uint32_t i = 0; i < tail; i++)
			checksum = checksum * 31 + dist[queue[i]] + queue[i];
	}
	uint64_t t2 = bench_now_ns();
	printf("graph nodes=%u edges=%llu build_ns=%llu bfs_ns=%llu cpu_ns=%llu reached=%llu checksum=%016llx\n",
	       n, (unsigned long long)m, (unsigned long long)(t1 - t0), (unsigned long long)(t2 - t1),
	       (unsigned long long)(bench_cpu_ns() - c0), (unsigned long long)reached, (unsigned long long)checksum);
	free(queue);
	free(dist);
	free(edges);
	free(offsets);
	return 0;
}
