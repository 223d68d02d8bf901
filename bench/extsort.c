/* extsort.c: an external-sort-like stream, the shape of sort(1) on input larger than its buffer:
 * records generated in chunks, each chunk sorted into a run kept in memory, then every run merged
 * through a heap into one sorted stream.
 *
 * usage: extsort TOTAL_MIB [CHUNK_KIB (8192)]
 *
 * Two threads overlap the first phase: a producer generates records of 64 B (a pseudo-random
 * 64-bit key, the record's sequence number, 48 B of payload derived from it: the same records in
 * every run) into freshly malloc'd chunks of CHUNK_KIB and hands them through a queue of two to a
 * sorter, which sorts each chunk by (key, sequence number) with qsort and keeps it as a run. Then
 * the main thread merges the runs through a binary min-heap of their heads, checks that the stream
 * comes out in order and that every record's payload is what was generated, folds every record
 * into an order-dependent checksum, and frees each run as it is used up. Memory: TOTAL_MIB of runs
 * at the peak, plus a chunk or two in flight and qsort's buffer.
 *
 * prints: extsort records=N runs=R chunk_records=C generate_sort_ns=T merge_ns=T ns=T cpu_ns=C checksum=X */
#include "bench.h"

#include <pthread.h>

struct record {
	uint64_t key;
	uint64_t seq;
	uint64_t payload[6];
};

struct run {
	struct record *rec;
	uint64_t count;
	uint64_t next; /* merge cursor */
};

/* The producer-to-sorter queue: at most QUEUE_DEPTH generated chunks wait to be sorted. */
#define QUEUE_DEPTH 2
struct stream {
	uint64_t total, chunk_records, chunks;
	struct run *runs; /* chunks of them, filled by the sorter in order */
	pthread_mutex_t lock;
	pthread_cond_t changed;
	uint64_t queued[QUEUE_DEPTH]; /* chunk numbers; a chunk's run holds its records */
	unsigned head, length;
};

static void make_record(struct record *r, uint64_t seq)
{
	r->key = bench_mix64(seq * 0x9e3779b97f4a7c15ULL + 3);
	r->seq = seq;
	for (unsigned i = 0; i < 6; i++)
		r->payload[i] = (seq + i) * 0xff51afd7ed558ccdULL;
}

static void check_record(const struct record *r)
{
	struct record want;
	make_record(&want, r->seq);
	if (memcmp(r, &want, sizeof(want)) != 0)
		bench_die("record %llu: contents differ from what was generated (key %016llx, want %016llx)",
			  (unsigned long long)r->seq, (unsigned long long)r->key, (unsigned long long)want.key);
}

static int record_less(const struct record *a, const struct record *b)
{
	return a->key < b->key || (a->key == b->key && a->seq < b->seq);
}

static int by_key(const void *a, const void *b)
{
	const struct record *x = a, *y = b;
	return record_less(x, y) ? -1 : record_less(y, x) ? 1 : 0;
}

static void *produce(void *arg)
{
	struct stream *s = arg;
	for (uint64_t c = 0; c < s->chunks; c++) {
		uint64_t first = c * s->chunk_records;
		uint64_t count = s->total - first < s->chunk_records ? s->total - first : s->chunk_records;
		struct record *rec = malloc(count * sizeof(*rec));
		if (!rec)
			bench_die_errno("malloc(%llu records)", (unsigned long long)count);
		for (uint64_t i = 0; i < count; i++)
			make_record(&rec[i], first + i);
		pthread_mutex_lock(&s->lock);
		while (s->length == QUEUE_DEPTH)
			pthread_cond_wait(&s->changed, &s->lock);
		s->runs[c] = (struct run){ .rec = rec, .count = count };
		s->queued[(s->head + s->length) % QUEUE_DEPTH] = c;
		s->length++;
		pthread_cond_broadcast(&s->changed);
		pthread_mutex_unlock(&s->lock);
	}
	return NULL;
}

static void *sort_chunks(void *arg)
{
	struct stream *s = arg;
	for (uint64_t done = 0; done < s->chunks; done++) {
		pthread_mutex_lock(&s->lock);
		while (s->length == 0)
			pthread_cond_wait(&s->changed, &s->lock);
		uint64_t c = s->queued[s->head];
		struct run *run = &s->runs[c];
		pthread_mutex_unlock(&s->lock);
		qsort(run->rec, run->count, sizeof(*run->rec), by_key);
		pthread_mutex_lock(&s->lock); /* the slot is free once the chunk is sorted */
		s->head = (s->head + 1) % QUEUE_DEPTH;
		s->length--;
		pthread_cond_broadcast(&s->changed);
		pthread_mutex_unlock(&s->lock);
	}
	return NULL;
}

/* The merge's min-heap of run numbers, ordered by each run's next record. */
static int head_less(const struct run *runs, uint64_t a, uint64_t b)
{
	return record_less(&runs[a].rec[runs[a].next], &runs[b].rec[runs[b].next]);
}

static void sift_down(const struct run *runs, uint64_t *heap, uint64_t size, uint64_t i)
{
	for (;;) {
		uint64_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < size && head_less(runs, heap[l], heap[m]))
			m = l;
		if (r < size && head_less(runs, heap[r], heap[m]))
			m = r;
		if (m == i)
			return;
		uint64_t tmp = heap[i];
		heap[i] = heap[m];
		heap[m] = tmp;
		i = m;
	}
}

static uint64_t merge(struct stream *s)
{
	uint64_t *heap = malloc(s->chunks * sizeof(*heap)), size = s->chunks, checksum = 0, out = 0;
	if (!heap)
		bench_die_errno("malloc(%llu heap entries)", (unsigned long long)s->chunks);
	for (uint64_t i = 0; i < size; i++)
		heap[i] = i;
	for (uint64_t i = size / 2; i-- > 0;)
		sift_down(s->runs, heap, size, i);
	struct record last = { 0 };
	while (size > 0) {
		struct run *run = &s->runs[heap[0]];
		const struct record *r = &run->rec[run->next];
		if (out > 0 && !record_less(&last, r))
			bench_die("merged record %llu (seq %llu) is not above the one before (seq %llu)",
				  (unsigned long long)out, (unsigned long long)r->seq, (unsigned long long)last.seq);
		check_record(r);
		checksum = checksum * 0x100000001b3ULL + bench_mix64(r->key ^ (r->seq << 1) ^ out);
		last = *r;
		out++;
		if (++run->next == run->count) {
			free(run->rec);
			run->rec = NULL;
			heap[0] = heap[--size];
		}
		if (size > 0)
			sift_down(s->runs, heap, size, 0);
	}
	free(heap);
	if (out != s->total)
		bench_die("merged %llu records, generated %llu", (unsigned long long)out, (unsigned long long)s->total);
	return checksum;
}

int main(int argc, char **argv)
{
	uint64_t total_mib = bench_arg(argc, argv, 1, 0);
	uint64_t chunk_kib = bench_arg(argc, argv, 2, 8192);
	if (total_mib < 1 || total_mib > (1u << 20) || chunk_kib < 4 || chunk_kib > total_mib * 1024)
		bench_die("usage: extsort TOTAL_MIB(1..2^20) [CHUNK_KIB(4..TOTAL_MIB*1024)]");
	struct stream s = {
		.total = total_mib * BENCH_MiB / sizeof(struct record),
		.chunk_records = chunk_kib * 1024 / sizeof(struct record),
	};
	s.chunks = (s.total + s.chunk_records - 1) / s.chunk_records;
	s.runs = calloc(s.chunks, sizeof(*s.runs));
	if (!s.runs)
		bench_die_errno("calloc(%llu runs)", (unsigned long long)s.chunks);
	int err;
	if ((err = pthread_mutex_init(&s.lock, NULL)) || (err = pthread_cond_init(&s.changed, NULL)))
		bench_die("pthread_mutex_init/pthread_cond_init: %s", strerror(err));
	uint64_t c0 = bench_cpu_ns(), t0 = bench_now_ns();
	pthread_t producer, sorter;
	if ((err = pthread_create(&producer, NULL, produce, &s)) || (err = pthread_create(&sorter, NULL, sort_chunks, &s)))
		bench_die("pthread_create: %s", strerror(err));
	pthread_join(producer, NULL);
	pthread_join(sorter, NULL);
	uint64_t t1 = bench_now_ns();
	uint64_t checksum = merge(&s);
	uint64_t t2 = bench_now_ns(), c1 = bench_cpu_ns();
	printf("extsort records=%llu runs=%llu chunk_records=%llu generate_sort_ns=%llu merge_ns=%llu ns=%llu cpu_ns=%llu "
	       "checksum=%016llx\n",
	       (unsigned long long)s.total, (unsigned long long)s.chunks, (unsigned long long)s.chunk_records,
	       (unsigned long long)(t1 - t0), (unsigned long long)(t2 - t1), (unsigned long long)(t2 - t0),
	       (unsigned long long)(c1 - c0), (unsigned long long)checksum);
	pthread_cond_destroy(&s.changed);
	pthread_mutex_destroy(&s.lock);
	free(s.runs);
	return 0;
}
