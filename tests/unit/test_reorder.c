/* test_reorder.c: the bounded reorder buffer (tools/trace/reorder.h) puts a stream in key order
 * exactly when its window is wide enough, in its lanes and in its heap:
 *   - two sorted runs interleaved in chunks (the handlers' chunks of a faults file): every window
 *     of at least the chunk size sorts them, and a narrower one is caught (a key out of order);
 *   - a shuffled stream (more runs than the lanes hold: the buffer turns into a heap) with a window
 *     as large as the stream sorts it;
 *   - the records come back with their keys and payloads intact. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "reorder.h"

/* Runs KEYS[0..n) (a = key, b = index) through a window of WIDTH; true when they came out in
 * order, each with its own payload. */
static bool sorts(const uint64_t *keys, size_t n, size_t width)
{
	struct reorder r;
	uint64_t last_a = 0, last_b = 0, a, b, out = 0;
	bool in_order = true;
	CHECK(reorder_init(&r, width, sizeof(uint64_t)) == 0, "init %zu", width);
	for (size_t i = 0; i <= n; i++) {
		if (i < n) {
			uint64_t *p = reorder_push(&r, keys[i], i);
			CHECK(p != NULL, "push %zu", i);
			*p = keys[i] * 3 + 1;
			if (reorder_has_room(&r))
				continue;
		}
		const uint64_t *got;
		while ((got = reorder_pop(&r, &a, &b)) != NULL) {
			CHECK(*got == a * 3 + 1, "payload of key %" PRIu64, a);
			if (out++ && (a < last_a || (a == last_a && b <= last_b)))
				in_order = false;
			last_a = a, last_b = b;
			if (i < n)
				break; /* one pop per push once full; all at the end */
		}
	}
	CHECK(out == n, "%" PRIu64 " records out of %zu", out, n);
	reorder_free(&r);
	return in_order;
}

int main(void)
{
	enum { N = 200000, CHUNK = 2048 };
	uint64_t *keys = malloc(N * sizeof(*keys));
	if (!keys)
		return 1;
	/* two runs (even and odd keys), chunks of CHUNK alternating, each pair written swapped */
	size_t n = 0;
	for (size_t c = 0; c < N / CHUNK; c++) {
		size_t chunk = c ^ 1;
		for (size_t i = chunk * CHUNK; i < (chunk + 1) * CHUNK; i++)
			keys[n++] = i;
	}
	CHECK(sorts(keys, n, 2 * CHUNK), "swapped chunks, window 2 chunks");
	CHECK(sorts(keys, n, 64 * CHUNK), "swapped chunks, window 64 chunks");
	CHECK(!sorts(keys, n, CHUNK / 2), "swapped chunks, window of half a chunk: caught out of order");
	/* shuffled: far more runs than lanes */
	srand(7);
	for (size_t i = 0; i < n; i++)
		keys[i] = i;
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = (size_t)rand() % (i + 1);
		uint64_t t = keys[i];
		keys[i] = keys[j], keys[j] = t;
	}
	CHECK(sorts(keys, n, n), "shuffled, window of the whole stream (heap)");
	CHECK(!sorts(keys, n, 1000), "shuffled, narrow window: caught out of order");
	/* equal a, ordered by b */
	for (size_t i = 0; i < n; i++)
		keys[i] = i / 1000;
	CHECK(sorts(keys, n, 16), "equal keys in order");
	free(keys);
	return check_summary("test_reorder");
}
