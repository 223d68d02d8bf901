/* exhaust.c: run out of the managed region on purpose. `record -M MAX` bounds the memory a program
 * can hold at once: past it malloc returns NULL with errno ENOMEM and mmap returns MAP_FAILED with
 * ENOMEM, without crashing and without harming what was already obtained; after freeing, the same
 * addresses serve new requests (-M bounds the peak, not the total ever allocated).
 *
 * usage: exhaust MODE MAX_MiB    MODE: malloc | mmap | churn | all (the three in this order)
 *   malloc: malloc(2*MAX) fails; then 1 MiB chunks until NULL, three rounds with everything freed in
 *           between; each round must get at least MAX/2 and at most MAX, and rounds 2 and 3 at least
 *           90 % of round 1
 *   mmap:   the same with anonymous private mmap/munmap of 1 MiB
 *   churn:  10 times mmap + touch + munmap of MAX/2 bytes: always succeeds, reads zeros when fresh
 * Natively the same checks pass under `ulimit -v` (MAX ≈ the limit). Prints one line per phase and
 * "failed requests N": the number of NULL / MAP_FAILED results this program saw (and provoked). */
#include "planted.h"
#include <sys/mman.h>

#define CHUNK MiB
#define MAX_CHUNKS 65536

static unsigned long failed_requests;

/* Writes one pattern word at the start of every page of a chunk. */
static void mark_chunk(uint8_t *p, size_t chunk_index)
{
	for (size_t off = 0; off < CHUNK; off += PAGE_SIZE_BYTES)
		*(uint64_t *)(p + off) = pattern_word(chunk_index * (CHUNK / PAGE_SIZE_BYTES) + off / PAGE_SIZE_BYTES, 0xe8);
}

static void check_chunk(const uint8_t *p, size_t chunk_index, const char *what)
{
	for (size_t off = 0; off < CHUNK; off += PAGE_SIZE_BYTES) {
		uint64_t want = pattern_word(chunk_index * (CHUNK / PAGE_SIZE_BYTES) + off / PAGE_SIZE_BYTES, 0xe8);
		uint64_t got = *(const uint64_t *)(p + off);
		if (got != want)
			die("%s: chunk %zu (%p) page %zu: expected %#llx, got %#llx", what, chunk_index,
			    (const void *)p, off / PAGE_SIZE_BYTES, (unsigned long long)want,
			    (unsigned long long)got);
	}
}

static void *get_chunk(int use_mmap)
{
	if (!use_mmap)
		return malloc(CHUNK);
	void *p = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void put_chunk(void *p, int use_mmap)
{
	if (!use_mmap)
		free(p);
	else if (munmap(p, CHUNK))
		die_errno("munmap(%p, 1 MiB)", p);
}

/* Takes chunks until the request fails; checks the failure and the chunks; frees them. Returns the
 * number of chunks obtained. */
static size_t exhaust_once(int use_mmap, size_t max_bytes, int round)
{
	static void *chunks[MAX_CHUNKS];
	const char *how = use_mmap ? "mmap" : "malloc";
	size_t n = 0;
	for (;;) {
		errno = 0;
		void *p = get_chunk(use_mmap);
		if (!p)
			break;
		if (n == MAX_CHUNKS || (n + 1) * CHUNK > max_bytes)
			die("%s round %d: got %zu MiB and still going: more than -M (%zu MiB) allows",
			    how, round, n + 1, max_bytes / MiB);
		mark_chunk(p, n);
		chunks[n++] = p;
	}
	int err = errno;
	failed_requests++;
	if (err != ENOMEM)
		die("%s round %d: request %zu failed with errno %d (%s), want ENOMEM", how, round, n + 1, err,
		    strerror(err));
	if (n * CHUNK < max_bytes / 2)
		die("%s round %d: only %zu MiB obtained before ENOMEM, want at least half of %zu MiB", how,
		    round, n, max_bytes / MiB);
	char what[64];
	snprintf(what, sizeof(what), "%s round %d, after running out", how, round);
	for (size_t i = 0; i < n; i++)
		check_chunk(chunks[i], i, what);
	for (size_t i = 0; i < n; i++)
		put_chunk(chunks[i], use_mmap);
	return n;
}

static void exhaust(int use_mmap, size_t max_bytes)
{
	const char *how = use_mmap ? "mmap" : "malloc";
	errno = 0;
	if (!use_mmap) {
		void *p = malloc(2 * max_bytes);
		failed_requests++;
		if (p || errno != ENOMEM)
			die("malloc(2 * -M) returned %p errno %d, want NULL with ENOMEM", p, errno);
	}
	size_t got[4];
	got[1] = exhaust_once(use_mmap, max_bytes, 1);
	for (int round = 2; round <= 3; round++) {
		got[round] = exhaust_once(use_mmap, max_bytes, round);
		if (got[round] * 10 < got[1] * 9)
			die("%s round %d: only %zu MiB after freeing everything, round 1 got %zu MiB: addresses are not reused",
			    how, round, got[round], got[1]);
	}
	printf("%s: 1 MiB chunks until ENOMEM, 3 rounds of %zu, %zu, %zu MiB, data intact\n", how, got[1], got[2],
	       got[3]);
}

static void churn(size_t max_bytes)
{
	size_t len = max_bytes / 2;
	for (int i = 0; i < 10; i++) {
		errno = 0;
		uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			die_errno("churn %d: mmap(%zu MiB) with nothing else mapped", i, len / MiB);
		/* every 64th page, and the last one: zeros first (fresh memory), then our mark */
		for (size_t off = 0; off < len; off += 64 * PAGE_SIZE_BYTES) {
			uint64_t *w = (uint64_t *)(p + off);
			if (*w)
				die("churn %d: fresh mapping at %p holds %#llx at offset %zu, want zeros", i,
				    (void *)p, (unsigned long long)*w, off);
			*w = pattern_word(off, i);
		}
		uint64_t *last = (uint64_t *)(p + len - 8);
		if (*last)
			die("churn %d: fresh mapping's last word is %#llx, want 0", i, (unsigned long long)*last);
		*last = i + 1;
		for (size_t off = 0; off < len; off += 64 * PAGE_SIZE_BYTES)
			if (*(uint64_t *)(p + off) != pattern_word(off, i))
				die("churn %d: mark at offset %zu lost", i, off);
		if (munmap(p, len))
			die_errno("churn %d: munmap", i);
	}
	printf("churn: 10 x mmap/munmap of %zu MiB\n", len / MiB);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: exhaust malloc|mmap|churn|all MAX_MiB\n");
		return 2;
	}
	const char *mode = argv[1];
	size_t max_bytes = arg_ulong(argc, argv, 2, 0) * MiB;
	int all = !strcmp(mode, "all");
	if (all || !strcmp(mode, "malloc"))
		exhaust(0, max_bytes);
	if (all || !strcmp(mode, "mmap"))
		exhaust(1, max_bytes);
	if (all || !strcmp(mode, "churn"))
		churn(max_bytes);
	if (!all && strcmp(mode, "malloc") && strcmp(mode, "mmap") && strcmp(mode, "churn"))
		die("unknown mode '%s'", mode);
	printf("failed requests %lu\n", failed_requests);
	return 0;
}
