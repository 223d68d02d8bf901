/* test_ranges.c: unit tests of the hot-range module (tools/ranges.c, ranges_print.c) on a synthetic
 * recording written with the structs of inc/faultline/trace.h. The process has
 *   A  a 4 MiB array (one malloc, stack 1: libc frame, then prog+0x123), refaulted 8 times per page;
 *   C  20 small allocations of 8 KiB (stack 3), 40 faults per page;
 *   B  a 256 MiB array (stack 2), 2,000 faults spread over it;
 *   O  500 faults on 4 pages outside every allocation.
 * Checks: every range's bounds against exact counts computed here (lower <= exact <= upper, and
 * trace == exact); the top range is A's pages past the hot node that holds C, O and A's first MiB,
 * joined from several tree nodes (a join stays inside that node: A's first MiB is a range nested in
 * it), its first site A's allocation (hull, stack, name "prog+0x123" after skipping the libc
 * frame); the small allocations
 * form one site with many allocations; faults outside allocations are counted per range; the
 * region's mapping is named; --no-merge gives single nodes; kinds select faults; a valid
 * ranges.rap is used (same ranges as the trace's when built from the same stream), a corrupt one
 * or one of another geometry is rejected with a warning, from_trace and kinds bypass it;
 * ranges_top skips the root and sorts; the three output formats; option and pid errors; kind
 * parsing; symbolization of a missing binary degrades to a label. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <faultline/rap.h>
#include <faultline/trace.h>

#include "ranges.h"
#include "trace_reader.h"

#include "check.h"
#include "trace_header.h"

#define REGION  0x7f0000000000ull
#define RSIZE   (1ull << 30)
#define PAGE    4096ull
#define START   1000000000ull
#define PID     4242
#define A_ADDR  (REGION + 0x300040)
#define A_SIZE  (4ull << 20)
#define B_ADDR  (REGION + 0x10000000)
#define B_SIZE  (256ull << 20)
#define C_ADDR  (REGION + 0x100000)
#define C_N     20
#define C_SIZE  0x2000ull
#define O_ADDR  (REGION + 0x200000)

static char base[PATH_MAX];

/* snprintf into a path buffer; a path that does not fit ends the test. */
static void pathf(char *out, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void pathf(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(out, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len) {
		fprintf(stderr, "path too long: %s...\n", out);
		exit(2);
	}
}

/* ---------------------------------------------------------------- the synthetic recording */

struct fault { uint64_t addr; uint8_t kind; };
static struct fault *faults;
static size_t nfaults, cap;

static void add_fault(uint64_t addr, uint8_t kind)
{
	if (nfaults == cap) {
		cap = cap ? 2 * cap : 4096;
		faults = realloc(faults, cap * sizeof(*faults));
		if (!faults)
			exit(2);
	}
	faults[nfaults++] = (struct fault){ addr, kind };
}

static void make_faults(void)
{
	uint64_t rng = 12345;
	for (int round = 0; round < 8; round++)
		for (uint64_t a = A_ADDR & ~(PAGE - 1); a < A_ADDR + A_SIZE; a += PAGE)
			add_fault(a + 8, round ? FL_FAULT_REFAULT : FL_FAULT_FIRST_TOUCH);
	for (int round = 0; round < 40; round++)
		for (uint64_t a = C_ADDR; a < C_ADDR + C_N * C_SIZE; a += PAGE)
			add_fault(a, round ? FL_FAULT_REFAULT : FL_FAULT_FIRST_TOUCH);
	for (int i = 0; i < 2000; i++) {
		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		add_fault(B_ADDR + ((rng >> 20) % (B_SIZE / PAGE)) * PAGE + 16, FL_FAULT_FIRST_TOUCH);
	}
	for (int i = 0; i < 500; i++)
		add_fault(O_ADDR + (uint64_t)(i % 4) * PAGE, i < 4 ? FL_FAULT_FIRST_TOUCH : FL_FAULT_SOFT);
}

static void write_file(const char *dir, const char *name, const void *data, size_t len)
{
	char path[PATH_MAX];
	pathf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || (len && write(fd, data, len) != (ssize_t)len) || close(fd) < 0) {
		fprintf(stderr, "writing %s: %s\n", path, strerror(errno));
		exit(2);
	}
}

static void header(struct fl_file_header *h, uint32_t kind, uint32_t record_size)
{
	*h = trace_header(2 /* fixed-size records (format 3 frames faults) */, kind, record_size, PID);
	h->page_size = PAGE;
	h->start_ns = START;
	h->region_start = REGION;
	h->region_size = RSIZE;
}

static void write_recording(const char *rec)
{
	char dir[PATH_MAX], text[4096];
	mkdir(rec, 0755);
	pathf(dir, sizeof(dir), "%s/%d", rec, PID);
	mkdir(dir, 0755);
	int n = snprintf(text, sizeof(text),
			 "{\n  \"format_version\": 1,\n  \"pid\": %d,\n  \"exe\": \"/bin/prog\",\n"
			 "  \"cmdline\": [\"prog\", \"8\"],\n  \"page_size\": %llu,\n  \"region_start\": %llu,\n"
			 "  \"region_size\": %llu,\n  \"start_ns\": %llu\n}\n", PID, PAGE, REGION, RSIZE, START);
	write_file(dir, FL_FILE_NAME_META, text, (size_t)n);
	n = snprintf(text, sizeof(text), "{\n  \"pid\": %d,\n  \"faults_total\": %zu,\n  \"records_dropped\": 0,\n"
		     "  \"exit\": \"exit\"\n}\n", PID, nfaults);
	write_file(dir, FL_FILE_NAME_STATS, text, (size_t)n);

	size_t len = sizeof(struct fl_file_header) + nfaults * sizeof(struct fl_fault_record);
	uint8_t *buf = calloc(1, len);
	header((struct fl_file_header *)buf, FL_FILE_FAULTS, sizeof(struct fl_fault_record));
	struct fl_fault_record *fr = (struct fl_fault_record *)(buf + sizeof(struct fl_file_header));
	for (size_t i = 0; i < nfaults; i++)
		fr[i] = (struct fl_fault_record){ .time_ns = 1000 + i, .addr = faults[i].addr, .tid = PID,
						  .seq = i, .kind = faults[i].kind };
	write_file(dir, FL_FILE_NAME_FAULTS, buf, len);
	free(buf);

	/* stacks: 1 = libc frame then prog+0x123; 2 = prog+0x456; 3 = prog+0x789 */
	uint8_t sbuf[512];
	size_t slen = 0;
	header((struct fl_file_header *)sbuf, FL_FILE_STACKS, 0);
	slen = sizeof(struct fl_file_header);
	static const uint64_t f1[] = { 0x7f5000000100ull, 0x400123 }, f2[] = { 0x400456 }, f3[] = { 0x400789 };
	const uint64_t *frames[] = { f1, f2, f3 };
	const unsigned nf[] = { 2, 1, 1 };
	for (uint32_t id = 1; id <= 3; id++) {
		struct fl_stack_record s = { id, (uint16_t)nf[id - 1], 0, 0x1000 + id };
		memcpy(sbuf + slen, &s, sizeof(s));
		slen += sizeof(s);
		memcpy(sbuf + slen, frames[id - 1], nf[id - 1] * sizeof(uint64_t));
		slen += nf[id - 1] * sizeof(uint64_t);
	}
	write_file(dir, FL_FILE_NAME_STACKS, sbuf, slen);

	size_t na = 2 + C_N;
	len = sizeof(struct fl_file_header) + na * sizeof(struct fl_alloc_record);
	buf = calloc(1, len);
	header((struct fl_file_header *)buf, FL_FILE_ALLOCS, sizeof(struct fl_alloc_record));
	struct fl_alloc_record *ar = (struct fl_alloc_record *)(buf + sizeof(struct fl_file_header));
	ar[0] = (struct fl_alloc_record){ .time_ns = 10, .addr = A_ADDR, .size = A_SIZE, .tid = PID, .stack_id = 1,
					  .alloc_id = 1, .kind = FL_ALLOC_MALLOC };
	ar[1] = (struct fl_alloc_record){ .time_ns = 11, .addr = B_ADDR, .size = B_SIZE, .tid = PID, .stack_id = 2,
					  .alloc_id = 2, .kind = FL_ALLOC_MMAP };
	for (uint32_t i = 0; i < C_N; i++)
		ar[2 + i] = (struct fl_alloc_record){ .time_ns = 12 + i, .addr = C_ADDR + i * C_SIZE, .size = C_SIZE,
						      .tid = PID, .stack_id = 3, .alloc_id = 3 + i,
						      .kind = FL_ALLOC_MALLOC };
	write_file(dir, FL_FILE_NAME_ALLOCS, buf, len);
	free(buf);

	n = snprintf(text, sizeof(text),
		     "# maps 5 start\n"
		     "00400000-00401000 r-xp 00000000 fe:00 123 /bin/prog\n"
		     "7f0000000000-7f0040000000 rw-p 00000000 00:00 0 \n"
		     "7f5000000000-7f5000010000 r-xp 00000000 fe:00 77 /usr/lib/x86_64-linux-gnu/libc.so.6\n");
	write_file(dir, FL_FILE_NAME_MAPS, text, (size_t)n);
}

/* The tree the runtime would write for these faults (geometry of runtime/rap_online.c). */
static void write_rap(const char *rec, unsigned gran_log2, bool flip)
{
	struct rap_config cfg = { .eps = 0.01, .branch_log2 = 2, .addr_bits = 47, .gran_log2 = gran_log2 };
	char dir[PATH_MAX], err[256];
	rap_t *t = rap_init(&cfg, err, sizeof(err));
	if (!t) {
		fprintf(stderr, "rap_init: %s\n", err);
		exit(2);
	}
	for (size_t i = 0; i < nfaults; i++)
		rap_add(t, faults[i].addr & ~(PAGE - 1), 1);
	size_t len = rap_serialize(t, NULL, 0);
	uint8_t *buf = malloc(len);
	rap_serialize(t, buf, len);
	if (flip)
		buf[len / 2] ^= 0x10;
	pathf(dir, sizeof(dir), "%s/%d", rec, PID);
	write_file(dir, FL_FILE_NAME_RAP, buf, len);
	free(buf);
	rap_free(t);
}

static void remove_rap(const char *rec)
{
	char path[PATH_MAX];
	pathf(path, sizeof(path), "%s/%d/%s", rec, PID, FL_FILE_NAME_RAP);
	unlink(path);
}

/* ---------------------------------------------------------------- expectations */

static bool in_alloc(uint64_t addr)
{
	return (addr >= A_ADDR && addr < A_ADDR + A_SIZE) || (addr >= B_ADDR && addr < B_ADDR + B_SIZE) ||
	       (addr >= C_ADDR && addr < C_ADDR + C_N * C_SIZE);
}

static void exact(uint64_t lo, uint64_t hi, unsigned kinds, uint64_t *count, uint64_t *outside)
{
	*count = *outside = 0;
	for (size_t i = 0; i < nfaults; i++) {
		uint64_t page = faults[i].addr & ~(PAGE - 1);
		if (page < lo || page >= hi || (kinds && !(kinds & RANGES_KIND(faults[i].kind))))
			continue;
		(*count)++;
		*outside += !in_alloc(faults[i].addr);
	}
}

static void check_bounds(const struct ranges_proc *rp, unsigned kinds, const char *what)
{
	for (size_t i = 0; i < rp->nranges; i++) {
		const struct ranges_range *r = &rp->ranges[i];
		uint64_t n, outside;
		exact(r->lo, r->hi, kinds, &n, &outside);
		CHECK(r->lower == r->est && r->lower <= n && n <= r->upper,
		      "%s: range %zu [%#llx, %#llx): exact %llu not in [%llu, %llu]", what, i,
		      (unsigned long long)r->lo, (unsigned long long)r->hi, (unsigned long long)n,
		      (unsigned long long)r->lower, (unsigned long long)r->upper);
		CHECK(r->has_trace && r->trace == n, "%s: range %zu trace %llu, exact %llu", what, i,
		      (unsigned long long)r->trace, (unsigned long long)n);
		CHECK(r->unattributed == outside, "%s: range %zu unattributed %llu, want %llu", what, i,
		      (unsigned long long)r->unattributed, (unsigned long long)outside);
		CHECK(r->upper - r->lower <= 2 * rp->error_bound, "%s: range %zu upper - lower > 2 * bound", what, i);
		CHECK(i == 0 || rp->ranges[i - 1].excl >= r->excl, "%s: ranges not sorted by excl", what);
		bool region = false;
		for (size_t k = 0; k < r->nmaps; k++)
			region |= strcmp(r->maps[k].name, "[faultline region]") == 0 &&
				  strcmp(r->maps[k].perms, "rw-p") == 0;
		if (r->lo >= REGION && r->hi <= REGION + RSIZE)
			CHECK(region && r->maps_total == 1, "%s: range %zu: region mapping not named", what, i);
	}
}

/* ---------------------------------------------------------------- tests */

static int compute(struct fl_recording *rec, const struct ranges_options *o, struct ranges_result *res)
{
	char err[512];
	int rc = ranges_compute(rec, o, res, err, sizeof(err));
	CHECK(rc == 0, "ranges_compute: %s", err);
	return rc;
}

static const struct ranges_range *range_with_stack(const struct ranges_proc *rp, uint32_t stack)
{
	for (size_t i = 0; i < rp->nranges; i++)
		if (rp->ranges[i].nsites && rp->ranges[i].sites[0].stack_id == stack)
			return &rp->ranges[i];
	return NULL;
}

static void test_trace(struct fl_recording *rec)
{
	struct ranges_options o;
	struct ranges_result res;
	ranges_options_init(&o);
	o.symbolize = false;
	if (compute(rec, &o, &res))
		return;
	CHECK(res.nprocs == 1 && res.nwarnings == 0, "one process, no warning (%zu, %zu)", res.nprocs, res.nwarnings);
	const struct ranges_proc *rp = &res.procs[0];
	CHECK(rp->source == RANGES_SOURCE_TRACE && strcmp(rp->source_text, "built from 12,300 fault records") == 0 &&
	      nfaults == 12300,
	      "source %d '%s'", rp->source, rp->source_text);
	CHECK(rp->stats.n == nfaults && rp->trace_faults == nfaults, "n %llu", (unsigned long long)rp->stats.n);
	CHECK(rp->nranges >= 3, "%zu ranges", rp->nranges);
	check_bounds(rp, 0, "trace");

	const struct ranges_range *top = &rp->ranges[0];
	CHECK(top->lo == REGION + 0x400000 && top->hi == REGION + 0x700000 && top->nodes >= 2,
	      "top range [%#llx, %#llx) of %u nodes, want A's pages [R+4M, R+7M) joined", (unsigned long long)top->lo,
	      (unsigned long long)top->hi, top->nodes);
	CHECK(top->excl_pct > 45 && top->pct >= top->excl_pct, "top excl %.2f %%", top->excl_pct);
	/* A's first MiB: inside the hot node [R, R+4M) that holds C and O too, nested there */
	const struct ranges_range *first_mib = NULL;
	for (size_t i = 0; i < rp->nranges; i++)
		if (rp->ranges[i].lo == REGION + 0x300000 && rp->ranges[i].hi == REGION + 0x400000)
			first_mib = &rp->ranges[i];
	CHECK(first_mib && first_mib->parent != RANGES_NO_PARENT &&
	      rp->ranges[first_mib->parent].node_lo <= first_mib->node_lo &&
	      first_mib->node_hi <= rp->ranges[first_mib->parent].node_hi && first_mib->unattributed == 8,
	      "A's first MiB [R+3M, R+4M): not a range nested in its hot node");
	CHECK(top->nsites == 1 && top->sites_total == 1, "top: %zu sites", top->nsites);
	if (top->nsites) {
		const struct ranges_site *s = &top->sites[0];
		CHECK(s->stack_id == 1 && s->allocs == 1 && s->alloc_id == 1 && s->lo == A_ADDR && s->hi == A_ADDR + A_SIZE,
		      "top site stack %u allocs %u id %u [%#llx, %#llx)", s->stack_id, s->allocs, s->alloc_id,
		      (unsigned long long)s->lo, (unsigned long long)s->hi);
		/* A starts 0x40 into its first page: that page's faults (at +8) are outside it, in the
		 * range of A's first MiB */
		CHECK(s->faults + top->unattributed == top->trace && top->unattributed == 0 && s->pc == 0x400123 && strcmp(s->name, "prog+0x123") == 0,
		      "top site faults %llu pc %#llx name '%s'", (unsigned long long)s->faults,
		      (unsigned long long)s->pc, s->name);
	}
	const struct ranges_range *c = range_with_stack(rp, 3);
	CHECK(c && c->sites[0].allocs >= 8 && c->sites[0].lo >= C_ADDR && c->sites[0].hi <= C_ADDR + C_N * C_SIZE &&
	      strcmp(c->sites[0].name, "prog+0x789") == 0, "no range of the small allocations as one site");

	/* ranges_top: no root, sorted, at most max */
	struct ranges_ref top2[2];
	size_t nt = ranges_top(&res, 2, top2);
	CHECK(nt == 2 && top2[0].range == top && top2[0].range->excl >= top2[1].range->excl &&
	      top2[1].range->depth > 0, "ranges_top: %zu", nt);
	struct ranges_ref all[64];
	nt = ranges_top(&res, 64, all);
	for (size_t i = 0; i < nt; i++)
		CHECK(!(all[i].range->depth == 0 && all[i].range->nodes == 1) && (i == 0 || all[i - 1].range->excl >= all[i].range->excl),
		      "ranges_top entry %zu", i);

	/* output formats */
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	CHECK(ranges_print(&res, &o, "REC", RANGES_TEXT, true, f) == 0, "print text");
	fclose(f);
	CHECK(strstr(text, "# source: built from 12,300 fault records") && strstr(text, "prog+0x123  [stack 1, alloc #1]") &&
	      strstr(text, "# rap eps=0.0100") && strstr(text, " HOT\n") && strstr(text, "[faultline region]") &&
	      strstr(text, "outside "), "text output:\n%s", text);
	free(text);
	f = open_memstream(&text, &len);
	CHECK(ranges_print(&res, &o, "REC", RANGES_CSV, false, f) == 0, "print csv");
	fclose(f);
	size_t lines = 0;
	for (char *p = text; *p; p++)
		lines += *p == '\n';
	CHECK(lines == 1 + rp->nranges && strncmp(text, "pid,process,source,rank,start,end,", 34) == 0 &&
	      strstr(text, "\n4242,4242,trace,1,0x00007f0000400000,0x00007f0000700000,3145728,"), "csv:\n%s", text);
	free(text);
	f = open_memstream(&text, &len);
	CHECK(ranges_print(&res, &o, "R\"EC", RANGES_JSON, true, f) == 0, "print json");
	fclose(f);
	CHECK(strncmp(text, "{\"recording\": \"R\\\"EC\"", 21) == 0 && strstr(text, "\"tree\": [") &&
	      strstr(text, "\"name\": \"prog+0x123\"") && strstr(text, "\"source\": \"trace\""), "json:\n%.400s", text);
	free(text);
	size_t merged_ranges = rp->nranges;
	ranges_result_free(&res);

	/* --no-merge */
	o.coalesce = false;
	if (compute(rec, &o, &res) == 0) {
		for (size_t i = 0; i < res.procs[0].nranges; i++)
			CHECK(res.procs[0].ranges[i].nodes == 1, "no-merge: range %zu of %u nodes", i, res.procs[0].ranges[i].nodes);
		CHECK(res.procs[0].nranges > merged_ranges, "no-merge: %zu ranges", res.procs[0].nranges);
		check_bounds(&res.procs[0], 0, "no-merge");
		ranges_result_free(&res);
	}
	o.coalesce = true;

	/* kinds */
	o.kinds = RANGES_KIND(FL_FAULT_FIRST_TOUCH) | RANGES_KIND(FL_FAULT_SOFT);
	if (compute(rec, &o, &res) == 0) {
		uint64_t want, outside;
		exact(0, UINT64_MAX, o.kinds, &want, &outside);
		CHECK(res.procs[0].stats.n == want && res.procs[0].trace_faults == want, "kinds: n %llu, want %llu",
		      (unsigned long long)res.procs[0].stats.n, (unsigned long long)want);
		check_bounds(&res.procs[0], o.kinds, "kinds");
		ranges_result_free(&res);
	}
}

static bool same_ranges(const struct ranges_proc *a, const struct ranges_proc *b)
{
	if (a->nranges != b->nranges)
		return false;
	for (size_t i = 0; i < a->nranges; i++) {
		const struct ranges_range *x = &a->ranges[i], *y = &b->ranges[i];
		if (x->lo != y->lo || x->hi != y->hi || x->est != y->est || x->upper != y->upper || x->excl != y->excl)
			return false;
	}
	return true;
}

static bool has_warning(const struct ranges_result *res, const char *a, const char *b)
{
	for (size_t i = 0; i < res->nwarnings; i++)
		if (strstr(res->warnings[i], a) && strstr(res->warnings[i], b))
			return true;
	return false;
}

static void test_online(const char *dir)
{
	struct fl_recording *rec;
	struct ranges_options o;
	struct ranges_result trace, res;
	char err[512];
	ranges_options_init(&o);
	o.symbolize = false;

	remove_rap(dir);
	if (fl_recording_open(dir, &rec, err, sizeof(err)) < 0 || compute(rec, &o, &trace)) {
		CHECK(0, "open: %s", err);
		return;
	}
	fl_recording_close(rec);

	write_rap(dir, 12, false);
	if (fl_recording_open(dir, &rec, err, sizeof(err)) < 0)
		return;
	if (compute(rec, &o, &res) == 0) {
		CHECK(res.procs[0].source == RANGES_SOURCE_ONLINE && res.nwarnings == 0 &&
		      strcmp(res.procs[0].source_text, "online tree (ranges.rap)") == 0, "valid ranges.rap not used: '%s'",
		      res.procs[0].source_text);
		CHECK(same_ranges(&res.procs[0], &trace.procs[0]), "online ranges differ from the same stream's");
		check_bounds(&res.procs[0], 0, "online");
		ranges_result_free(&res);
	}
	o.from_trace = true;
	if (compute(rec, &o, &res) == 0) {
		CHECK(res.procs[0].source == RANGES_SOURCE_TRACE && res.nwarnings == 0, "from_trace ignored");
		ranges_result_free(&res);
	}
	o.from_trace = false;
	o.kinds = RANGES_KIND(FL_FAULT_REFAULT);
	if (compute(rec, &o, &res) == 0) {
		CHECK(res.procs[0].source == RANGES_SOURCE_TRACE && res.nwarnings == 0, "kinds did not read the trace");
		ranges_result_free(&res);
	}
	o.kinds = RANGES_KINDS_ALL;
	fl_recording_close(rec);

	/* a corrupt file, and one of another geometry: one warning each, then the trace's ranges */
	for (int variant = 0; variant < 2; variant++) {
		write_rap(dir, variant ? 13 : 12, variant == 0);
		if (fl_recording_open(dir, &rec, err, sizeof(err)) < 0)
			return;
		if (compute(rec, &o, &res) == 0) {
			CHECK(res.procs[0].source == RANGES_SOURCE_TRACE && res.nwarnings == 1 &&
			      has_warning(&res, "/4242/ranges.rap: ", "; using the fault records instead") &&
			      has_warning(&res, variant ? "geometry" : "checksum", ""),
			      "variant %d: %zu warnings: %s", variant, res.nwarnings, res.nwarnings ? res.warnings[0] : "");
			CHECK(same_ranges(&res.procs[0], &trace.procs[0]), "variant %d: ranges differ from the trace's", variant);
			ranges_result_free(&res);
		}
		fl_recording_close(rec);
	}
	remove_rap(dir);
	ranges_result_free(&trace);
}

static void test_errors(struct fl_recording *rec)
{
	struct ranges_options o;
	struct ranges_result res;
	char err[512];
	ranges_options_init(&o);
	o.pid = 999;
	CHECK(ranges_compute(rec, &o, &res, err, sizeof(err)) < 0 && strstr(err, "no process with pid 999"), "pid: %s", err);
	ranges_options_init(&o);
	o.eps = 0;
	CHECK(ranges_compute(rec, &o, &res, err, sizeof(err)) < 0 && strstr(err, "eps"), "eps: %s", err);
	ranges_options_init(&o);
	o.phi = 1.5;
	CHECK(ranges_compute(rec, &o, &res, err, sizeof(err)) < 0 && strstr(err, "phi"), "phi: %s", err);
	ranges_options_init(&o);
	o.pid = PID;
	o.attribute = false;
	o.phi = 0.5;
	if (compute(rec, &o, &res) == 0) {
		CHECK(res.nprocs == 1 && res.procs[0].nranges >= 1 && !res.procs[0].ranges[0].has_trace &&
		      res.procs[0].ranges[0].nsites == 0, "attribute off");
		ranges_result_free(&res);
	}
	/* symbolization of a binary that is not there: a label, warnings kept in the result */
	ranges_options_init(&o);
	o.symbolize = true;
	if (compute(rec, &o, &res) == 0) {
		const struct ranges_range *top = &res.procs[0].ranges[0];
		CHECK(top->nsites && top->sites[0].name && strstr(top->sites[0].name, "prog"), "symbolized name '%s'",
		      top->nsites ? top->sites[0].name : "");
		ranges_result_free(&res);
	}
}

static void test_kinds(void)
{
	unsigned k;
	char err[256], buf[96];
	CHECK(ranges_parse_kinds("all", &k, err, sizeof(err)) == 0 && k == RANGES_KINDS_ALL, "all");
	CHECK(ranges_parse_kinds("refault,soft", &k, err, sizeof(err)) == 0 &&
	      k == (RANGES_KIND(FL_FAULT_REFAULT) | RANGES_KIND(FL_FAULT_SOFT)), "refault,soft");
	CHECK(strcmp(ranges_kinds_name(k, buf, sizeof(buf)), "refault,soft") == 0, "name '%s'", buf);
	CHECK(ranges_parse_kinds("first-touch", &k, err, sizeof(err)) == 0 && k == RANGES_KIND(FL_FAULT_FIRST_TOUCH), "ft");
	CHECK(ranges_parse_kinds("refault,", &k, err, sizeof(err)) < 0, "trailing comma");
	CHECK(ranges_parse_kinds("bogus", &k, err, sizeof(err)) < 0 && strstr(err, "'bogus'"), "bogus: %s", err);
	CHECK(strcmp(ranges_kinds_name(RANGES_KINDS_ALL, buf, sizeof(buf)), "all") == 0, "all name");
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	struct fl_recording *rec;
	char err[512];
	snprintf(base, sizeof(base), "%s/test_ranges.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(base)) {
		perror("mkdtemp");
		return 2;
	}
	char dir[PATH_MAX];
	pathf(dir, sizeof(dir), "%s/rec", base);
	make_faults();
	write_recording(dir);
	test_kinds();
	if (fl_recording_open(dir, &rec, err, sizeof(err)) < 0) {
		fprintf(stderr, "open: %s\n", err);
		return 1;
	}
	test_trace(rec);
	test_errors(rec);
	fl_recording_close(rec);
	test_online(dir);
	nftw(base, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(faults);
	return check_summary("test_ranges");
}
