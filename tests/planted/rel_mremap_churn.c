/* rel_mremap_churn.c: random churn of anonymous private mappings — mmap, mremap (grow, shrink, move,
 * move to a fixed address), munmap of heads, tails, middles and wholes, MAP_FIXED over live pages,
 * MADV_DONTNEED — checked against a model of what every page must hold. Under faultline these
 * mappings live in the managed region, and with a small -L many of their pages are evicted between
 * operations: a moved page must keep its data, an unmapped, replaced or discarded one must read back
 * as zeros (never a stale far copy).
 *
 * Model: up to MAX_MAPS mappings, each with a tag per page; page content is
 * pattern_word(word, tag) for every word, or zeros for tag 0. Tags are never reused.
 *
 * usage: rel_mremap_churn OPS [MAX_PAGES [SEED]]   (defaults 4000, 8192 pages live at most, 1)
 * stdout (identical in every correct run): per-operation counts and a checksum of the final state. */
#include "planted.h"
#include <stdbool.h>
#include <sys/mman.h>

#define PG PAGE_SIZE_BYTES
#define MAX_MAPS 64
#define MAX_MAP_PAGES 512

struct mapping {
	uint8_t *base;
	size_t npages;
	uint64_t *tag; /* per page, 0 = zeros */
};

static struct mapping maps[MAX_MAPS];
static unsigned nmaps;
static size_t live_pages, max_pages;
static uint64_t rng, next_tag = 1;
static unsigned long op_count[16];
static unsigned long pages_checked;

enum op { OP_MAP, OP_GROW, OP_SHRINK, OP_MOVE_FIXED, OP_UNMAP_HEAD, OP_UNMAP_TAIL, OP_PUNCH, OP_FIXED_OVER,
	  OP_DONTNEED, OP_WRITE, OP_UNMAP_ALL, OP_CHECK, NOPS };
static const char *op_name[NOPS] = { "map", "grow", "shrink", "move-fixed", "unmap-head", "unmap-tail", "punch",
				     "fixed-over", "dontneed", "write", "unmap-all", "check" };

static size_t rnd(size_t n)
{
	return n ? (size_t)(rng_next(&rng) % n) : 0;
}

static void write_page(uint8_t *page, uint64_t tag)
{
	fill_words((uint64_t *)page, WORDS_PER_PAGE, tag);
}

static void check_page(const struct mapping *m, size_t k, const char *when)
{
	const uint64_t *w = (const uint64_t *)(m->base + k * PG);
	uint64_t tag = m->tag[k];
	pages_checked++;
	for (size_t i = 0; i < WORDS_PER_PAGE; i++) {
		uint64_t want = tag ? pattern_word(i, tag) : 0;
		if (w[i] != want)
			die("after %s: mapping %p (%zu pages), page %zu word %zu (%p): expected %#llx (tag %llu), got %#llx",
			    when, (void *)m->base, m->npages, k, i, (const void *)&w[i], (unsigned long long)want,
			    (unsigned long long)tag, (unsigned long long)w[i]);
	}
}

static void check_range(const struct mapping *m, size_t from, size_t n, const char *when)
{
	for (size_t k = from; k < from + n && k < m->npages; k++)
		check_page(m, k, when);
}

static uint64_t *tags_resize(uint64_t *tag, size_t n)
{
	uint64_t *t = realloc(tag, (n ? n : 1) * sizeof(*t));
	if (!t)
		die_errno("realloc(tags, %zu)", n);
	return t;
}

static void add_mapping(uint8_t *base, size_t npages, uint64_t *tag)
{
	if (nmaps == MAX_MAPS)
		die("model: too many mappings");
	maps[nmaps++] = (struct mapping){ base, npages, tag };
}

static void drop_mapping(unsigned i)
{
	free(maps[i].tag);
	maps[i] = maps[--nmaps];
}

static void write_some(struct mapping *m, size_t from, size_t n)
{
	for (size_t k = from; k < from + n; k++)
		if (rnd(4)) { /* leave some pages untouched: they must stay zero */
			m->tag[k] = next_tag++;
			write_page(m->base + k * PG, m->tag[k]);
		}
}

static void op_map(void)
{
	size_t n = 1 + rnd(rnd(8) ? 64 : MAX_MAP_PAGES);
	uint8_t *p = mmap(NULL, n * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die_errno("mmap(%zu pages)", n);
	uint64_t *tag = calloc(n, sizeof(*tag));
	if (!tag)
		die_errno("calloc(tags)");
	add_mapping(p, n, tag);
	struct mapping *m = &maps[nmaps - 1];
	check_range(m, 0, n < 4 ? n : 4, "mmap (fresh pages are zeros)");
	write_some(m, 0, n);
	live_pages += n;
}

static void op_grow(struct mapping *m)
{
	size_t add = 1 + rnd(128);
	if (m->npages + add > MAX_MAP_PAGES)
		return;
	void *p = mremap(m->base, m->npages * PG, (m->npages + add) * PG, MREMAP_MAYMOVE);
	if (p == MAP_FAILED)
		die_errno("mremap(%p, %zu -> %zu pages, MAYMOVE)", (void *)m->base, m->npages, m->npages + add);
	size_t old = m->npages;
	m->base = p;
	m->npages += add;
	m->tag = tags_resize(m->tag, m->npages);
	memset(m->tag + old, 0, add * sizeof(*m->tag));
	live_pages += add;
	check_range(m, 0, m->npages, "mremap grow (old pages keep their data, the new tail is zeros)");
	write_some(m, old, add);
}

static void op_shrink(struct mapping *m)
{
	if (m->npages < 2)
		return;
	size_t keep = 1 + rnd(m->npages - 1);
	void *p = mremap(m->base, m->npages * PG, keep * PG, 0);
	if (p == MAP_FAILED || p != m->base)
		die_errno("mremap(%p, %zu -> %zu pages) = %p", (void *)m->base, m->npages, keep, p);
	live_pages -= m->npages - keep;
	m->npages = keep;
	check_range(m, 0, keep, "mremap shrink");
}

static void op_move_fixed(struct mapping *m)
{
	/* a destination owned by the program: a fresh mapping of the same size, written first, so the
	 * move replaces live (possibly evicted) pages */
	uint8_t *dst = mmap(NULL, m->npages * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (dst == MAP_FAILED)
		die_errno("mmap(destination, %zu pages)", m->npages);
	for (size_t k = 0; k < m->npages; k++)
		write_page(dst + k * PG, 0xdeadULL + k);
	void *p = mremap(m->base, m->npages * PG, m->npages * PG, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	if (p != dst)
		die_errno("mremap(%p, %zu pages, FIXED %p) = %p", (void *)m->base, m->npages, (void *)dst, p);
	m->base = dst;
	check_range(m, 0, m->npages, "mremap MREMAP_FIXED over written pages");
}

static void op_unmap_head(struct mapping *m)
{
	if (m->npages < 2)
		return;
	size_t k = 1 + rnd(m->npages - 1);
	if (munmap(m->base, k * PG))
		die_errno("munmap(head %p, %zu pages)", (void *)m->base, k);
	memmove(m->tag, m->tag + k, (m->npages - k) * sizeof(*m->tag));
	m->base += k * PG;
	m->npages -= k;
	live_pages -= k;
	check_range(m, 0, 4, "munmap of the head");
}

static void op_unmap_tail(struct mapping *m)
{
	if (m->npages < 2)
		return;
	size_t k = 1 + rnd(m->npages - 1);
	if (munmap(m->base + (m->npages - k) * PG, k * PG))
		die_errno("munmap(tail of %p, %zu pages)", (void *)m->base, k);
	m->npages -= k;
	live_pages -= k;
	check_range(m, m->npages >= 4 ? m->npages - 4 : 0, 4, "munmap of the tail");
}

/* Splits mapping i at page k: pages k.. become a mapping of their own (the kernel keeps them in a
 * separate VMA after a MAP_FIXED, and mremap refuses a range that spans VMAs). */
static void split_mapping(unsigned i, size_t k)
{
	struct mapping *m = &maps[i];
	size_t rest = m->npages - k;
	uint64_t *tag2 = malloc(rest * sizeof(*tag2));
	if (!tag2)
		die_errno("malloc(tags)");
	memcpy(tag2, m->tag + k, rest * sizeof(*tag2));
	m->npages = k;
	add_mapping(m->base + k * PG, rest, tag2);
}

static void op_punch(unsigned i)
{
	struct mapping *m = &maps[i];
	if (m->npages < 3 || nmaps == MAX_MAPS)
		return;
	size_t from = 1 + rnd(m->npages - 2), n = 1 + rnd(m->npages - from - 1);
	if (munmap(m->base + from * PG, n * PG))
		die_errno("munmap(middle of %p: pages %zu + %zu)", (void *)m->base, from, n);
	split_mapping(i, from + n);
	maps[i].npages = from;
	live_pages -= n;
	check_range(&maps[i], from >= 2 ? from - 2 : 0, 2, "munmap of a middle (left part)");
	check_range(&maps[nmaps - 1], 0, 2, "munmap of a middle (right part)");
}

static void op_fixed_over(unsigned i)
{
	struct mapping *m = &maps[i];
	if (nmaps + 2 > MAX_MAPS)
		return;
	size_t from = rnd(m->npages), n = 1 + rnd(m->npages - from);
	void *p = mmap(m->base + from * PG, n * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (p != m->base + from * PG)
		die_errno("mmap(MAP_FIXED over %p pages %zu + %zu) = %p", (void *)m->base, from, n, p);
	memset(m->tag + from, 0, n * sizeof(*m->tag));
	check_range(m, from >= 1 ? from - 1 : 0, n + 2, "mmap MAP_FIXED over live pages (zeros)");
	write_some(m, from, n / 2);
	if (from + n < m->npages)
		split_mapping(i, from + n);
	if (from > 0)
		split_mapping(i, from);
}

static void op_dontneed(struct mapping *m)
{
	size_t from = rnd(m->npages), n = 1 + rnd(m->npages - from);
	if (madvise(m->base + from * PG, n * PG, MADV_DONTNEED))
		die_errno("madvise(%p pages %zu + %zu, MADV_DONTNEED)", (void *)m->base, from, n);
	memset(m->tag + from, 0, n * sizeof(*m->tag));
	check_range(m, from >= 1 ? from - 1 : 0, n + 2, "MADV_DONTNEED (zeros)");
}

static void op_write(struct mapping *m)
{
	size_t from = rnd(m->npages), n = 1 + rnd(m->npages - from < 32 ? m->npages - from : 32);
	check_range(m, from, n, "before a rewrite");
	write_some(m, from, n);
}

static void op_unmap_all(unsigned i)
{
	struct mapping *m = &maps[i];
	check_range(m, 0, m->npages, "before munmap of the whole mapping");
	if (munmap(m->base, m->npages * PG))
		die_errno("munmap(%p, %zu pages)", (void *)m->base, m->npages);
	live_pages -= m->npages;
	drop_mapping(i);
}

static uint64_t checksum_all(void)
{
	uint64_t sum = 0;
	for (unsigned i = 0; i < nmaps; i++)
		for (size_t k = 0; k < maps[i].npages; k++) {
			check_page(&maps[i], k, "final check");
			sum = (sum ^ maps[i].tag[k]) * 0x100000001B3ULL;
		}
	return sum;
}

int main(int argc, char **argv)
{
	unsigned long ops = arg_ulong(argc, argv, 1, 4000);
	max_pages = arg_ulong(argc, argv, 2, 8192);
	rng = 0x3e3a9ULL * arg_ulong(argc, argv, 3, 1);

	for (unsigned long n = 0; n < ops; n++) {
		enum op op = (enum op)rnd(NOPS);
		bool room = live_pages + MAX_MAP_PAGES < max_pages && nmaps < MAX_MAPS / 2;
		if (nmaps == 0 || (op != OP_UNMAP_ALL && room && rnd(4) == 0))
			op = OP_MAP;
		else if (op == OP_MAP && !room)
			op = OP_UNMAP_ALL;
		unsigned i = (unsigned)rnd(nmaps);
		struct mapping *m = &maps[i];
		switch (op) {
		case OP_MAP: op_map(); break;
		case OP_GROW: op_grow(m); break;
		case OP_SHRINK: op_shrink(m); break;
		case OP_MOVE_FIXED: op_move_fixed(m); break;
		case OP_UNMAP_HEAD: op_unmap_head(m); break;
		case OP_UNMAP_TAIL: op_unmap_tail(m); break;
		case OP_PUNCH: op_punch(i); break;
		case OP_FIXED_OVER: op_fixed_over(i); break;
		case OP_DONTNEED: op_dontneed(m); break;
		case OP_WRITE: op_write(m); break;
		case OP_UNMAP_ALL: op_unmap_all(i); break;
		case OP_CHECK: check_range(m, 0, m->npages, "full check"); break;
		default: die("bad op %d", op);
		}
		op_count[op]++;
	}
	uint64_t sum = checksum_all();
	for (int op = 0; op < NOPS; op++)
		printf("%s %lu\n", op_name[op], op_count[op]);
	printf("rel_mremap_churn %lu ops: %u mappings, %zu pages live, checksum %016llx\n", ops, nmaps, live_pages,
	       (unsigned long long)sum);
	fprintf(stderr, "rel_mremap_churn: %lu pages checked\n", pages_checked);
	while (nmaps)
		op_unmap_all(0);
	return 0;
}
