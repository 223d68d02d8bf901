/* kvstore.c: the bundled example for `make demo` — a small in-memory key-value store.
 *
 * It keeps a hash table of N entries (the hot data: every lookup touches it, at random) and an
 * append-only log of every operation (cold data: written once, read once at the end by a
 * checksum pass). With local memory smaller than both, a far-memory tracer should show the
 * log's pages as first touches and one refault each, and the table's pages refaulting often
 * unless the eviction policy keeps them. The program checks its own results and prints a
 * checksum, so a run under `faultline record` can be compared with a native run. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	uint64_t key, value;
};

struct log_record {
	uint64_t op, key, value, pad[5];
};

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static struct entry *table_create(size_t slots)
{
	struct entry *t = calloc(slots, sizeof(*t));
	if (!t) {
		perror("kvstore: calloc(table)");
		exit(1);
	}
	return t;
}

static void table_put(struct entry *t, size_t slots, uint64_t key, uint64_t value)
{
	for (size_t i = mix(key) & (slots - 1);; i = (i + 1) & (slots - 1)) {
		if (t[i].key == 0 || t[i].key == key) {
			t[i].key = key, t[i].value = value;
			return;
		}
	}
}

static uint64_t table_get(const struct entry *t, size_t slots, uint64_t key)
{
	for (size_t i = mix(key) & (slots - 1);; i = (i + 1) & (slots - 1)) {
		if (t[i].key == key)
			return t[i].value;
		if (t[i].key == 0)
			return 0;
	}
}

int main(int argc, char **argv)
{
	size_t keys = argc > 1 ? strtoull(argv[1], NULL, 10) : 400000;
	size_t ops = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000000;
	size_t slots = 1;
	while (slots < 2 * keys)
		slots <<= 1;
	struct entry *table = table_create(slots);
	struct log_record *log = malloc(ops * sizeof(*log));
	uint64_t checksum = 0;

	if (!log) {
		perror("kvstore: malloc(log)");
		return 1;
	}
	for (uint64_t k = 1; k <= keys; k++)
		table_put(table, slots, k, mix(k));
	for (size_t i = 0; i < ops; i++) {
		uint64_t key = 1 + mix(i) % keys;
		uint64_t value = table_get(table, slots, key);
		if (value != mix(key)) {
			fprintf(stderr, "kvstore: wrong value for key %llu\n", (unsigned long long)key);
			return 2;
		}
		log[i] = (struct log_record){ .op = i, .key = key, .value = value };
	}
	for (size_t i = 0; i < ops; i++)
		checksum = mix(checksum ^ log[i].key ^ log[i].value);
	printf("kvstore: %zu keys, %zu lookups, checksum %016llx\n", keys, ops, (unsigned long long)checksum);
	free(log);
	free(table);
	return 0;
}
