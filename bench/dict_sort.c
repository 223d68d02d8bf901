/* dict_sort.c: an allocation-heavy dict build and sort, like a Python dict of N entries built with
 * PYTHONMALLOC=malloc and then sorted by key: many small malloc'd objects, touched in hash order
 * while the table grows and in key order while it is sorted, so neither follows allocation order.
 *
 * usage: dict_sort ENTRIES
 *
 * Builds a chained hash table of ENTRIES entries, each one malloc'd object holding its key (the
 * decimal string of a pseudo-random 64-bit number: the same keys in every run, no two equal), its
 * hash and a value (its insertion number). The table starts at 8 buckets and doubles, rehashing
 * every entry, whenever it holds more entries than buckets. Then it collects pointers to every
 * entry (bucket order) into an array, sorts them by key with qsort(strcmp), and walks the sorted
 * array: checks the keys are in strictly increasing order, folds every value into an order-
 * dependent checksum, and frees the entry. Memory: about 48 B an entry, 8 B a bucket and 8 B a
 * pointer (plus qsort's buffer of one pointer an entry): about 80 MB for 1 M entries.
 *
 * prints: dict entries=N buckets=B build_ns=T sort_ns=T ns=T cpu_ns=C checksum=X */
#include "bench.h"

struct entry {
	struct entry *next; /* the bucket's chain */
	uint64_t hash;
	uint64_t value;
	char key[];
};

struct table {
	struct entry **bucket;
	uint64_t buckets; /* a power of two */
	uint64_t count;
};

static uint64_t hash_key(const char *key)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
	for (; *key; key++)
		h = (h ^ (unsigned char)*key) * 0x100000001b3ULL;
	return h;
}

static void grow(struct table *t)
{
	uint64_t buckets = t->buckets * 2;
	struct entry **bucket = calloc(buckets, sizeof(*bucket));
	if (!bucket)
		bench_die_errno("calloc(%llu buckets)", (unsigned long long)buckets);
	for (uint64_t b = 0; b < t->buckets; b++) {
		struct entry *e = t->bucket[b], *next;
		for (; e; e = next) {
			next = e->next;
			uint64_t i = e->hash & (buckets - 1);
			e->next = bucket[i];
			bucket[i] = e;
		}
	}
	free(t->bucket);
	t->bucket = bucket;
	t->buckets = buckets;
}

/* Inserts KEY with VALUE, or replaces the value of an equal key (dict semantics). */
static void insert(struct table *t, const char *key, size_t len, uint64_t value)
{
	uint64_t h = hash_key(key);
	for (struct entry *e = t->bucket[h & (t->buckets - 1)]; e; e = e->next)
		if (e->hash == h && strcmp(e->key, key) == 0) {
			e->value = value;
			return;
		}
	if (t->count >= t->buckets)
		grow(t);
	struct entry *e = malloc(sizeof(*e) + len + 1);
	if (!e)
		bench_die_errno("malloc(%zu)", sizeof(*e) + len + 1);
	memcpy(e->key, key, len + 1);
	e->hash = h;
	e->value = value;
	uint64_t i = h & (t->buckets - 1);
	e->next = t->bucket[i];
	t->bucket[i] = e;
	t->count++;
}

static int by_key(const void *a, const void *b)
{
	const struct entry *x = *(struct entry *const *)a, *y = *(struct entry *const *)b;
	return strcmp(x->key, y->key);
}

int main(int argc, char **argv)
{
	uint64_t entries = bench_arg(argc, argv, 1, 0);
	if (entries < 1 || entries > (1ULL << 30))
		bench_die("usage: dict_sort ENTRIES(1..2^30)");
	uint64_t c0 = bench_cpu_ns(), t0 = bench_now_ns();
	struct table t = { .buckets = 8 };
	t.bucket = calloc(t.buckets, sizeof(*t.bucket));
	if (!t.bucket)
		bench_die_errno("calloc(%llu buckets)", (unsigned long long)t.buckets);
	for (uint64_t i = 0; i < entries; i++) {
		char key[24];
		int len = snprintf(key, sizeof(key), "%llu", (unsigned long long)bench_mix64(i + 1));
		insert(&t, key, (size_t)len, i);
	}
	if (t.count != entries)
		bench_die("%llu entries in the table, %llu inserted (keys collided)", (unsigned long long)t.count,
			  (unsigned long long)entries);
	uint64_t t1 = bench_now_ns();
	struct entry **sorted = malloc(t.count * sizeof(*sorted));
	if (!sorted)
		bench_die_errno("malloc(%llu pointers)", (unsigned long long)t.count);
	uint64_t n = 0;
	for (uint64_t b = 0; b < t.buckets; b++)
		for (struct entry *e = t.bucket[b]; e; e = e->next)
			sorted[n++] = e;
	qsort(sorted, n, sizeof(*sorted), by_key);
	uint64_t t2 = bench_now_ns();
	uint64_t checksum = 0;
	for (uint64_t i = 0; i < n; i++) {
		if (i + 1 < n && strcmp(sorted[i]->key, sorted[i + 1]->key) >= 0)
			bench_die("sorted position %llu: key '%s' is not below the next, '%s'", (unsigned long long)i,
				  sorted[i]->key, sorted[i + 1]->key);
		checksum = checksum * 0x100000001b3ULL + bench_mix64(sorted[i]->value ^ (i << 32));
		free(sorted[i]);
	}
	uint64_t t3 = bench_now_ns(), c1 = bench_cpu_ns();
	printf("dict entries=%llu buckets=%llu build_ns=%llu sort_ns=%llu ns=%llu cpu_ns=%llu checksum=%016llx\n",
	       (unsigned long long)n, (unsigned long long)t.buckets, (unsigned long long)(t1 - t0),
	       (unsigned long long)(t2 - t1), (unsigned long long)(t3 - t0), (unsigned long long)(c1 - c0),
	       (unsigned long long)checksum);
	free(sorted);
	free(t.bucket);
	return 0;
}
