/* test_trace_reader.c: unit tests of the trace reader (tools/trace_reader.c) on synthetic
 * recordings written with the structs of inc/faultline/trace.h:
 *   - a recording of three process images covering every file (faults out of time order as two
 *     handlers append them, contexts, stacks, allocs, maps), checked through the API: counts,
 *     time order and the merge across processes, seq/context/stack joins, allocation attribution
 *     (freed-then-reused address, partial munmap splitting and trimming an mmap, MAP_FIXED-style
 *     replacement, same-time events in file order), maps snapshots by time, the newest-recording
 *     search;
 *   - every file cut at many offsets: a cut inside a header or a record is a warning naming the
 *     file and offset, never an error; cut JSON is an error;
 *   - targeted corruption of each header field and record field, each with the exact file and
 *     byte offset the error must name;
 *   - every byte of every binary file flipped (make test: every header byte and every third record
 *     byte; FAULTLINE_TEST_LONG=1: every byte), each open in a child process: an error naming the
 *     file and an offset, or a successful open whose data can be walked — never a crash or hang;
 *   - a large recording (2 x 10^5 faults and allocation events; FAULTLINE_TEST_LONG=1: 10^6), every
 *     fault attributed right (its speed is printed, measured by make bench, never asserted).
 * Prints each failure with file:line, ends with a summary line, exits 1 on any failure. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <faultline/trace.h>

#include "trace_reader.h"

#include "check.h"
#include "trace_header.h"

/* ------------------------------------------------------------------ synthetic files */

/* snprintf for paths: a truncated path would test the wrong file, so it stops the test. */
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

#define REGION  0x7f0000000000ull
#define RSIZE   (256ull << 20)
#define START   1000000000ull
#define PAGE    4096u
#define ADDR_A  (REGION + 0x1000)
#define ADDR_B  (REGION + 0x100000)
#define ADDR_C  (REGION + 0x200000)

struct buf {
	unsigned char *p;
	size_t len, cap;
};

static void buf_put(struct buf *b, const void *data, size_t len)
{
	if (len == 0)
		return;
	if (b->len + len > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + len)
			cap *= 2;
		b->p = realloc(b->p, cap);
		if (!b->p) {
			perror("realloc");
			exit(2);
		}
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, len);
	b->len += len;
}

static void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void buf_printf(struct buf *b, const char *fmt, ...)
{
	char text[4096];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	buf_put(b, text, (size_t)n);
}

enum file_index { F_META, F_STATS, F_FAULTS, F_CONTEXTS, F_STACKS, F_ALLOCS, F_MAPS, NFILES };
static const char *const file_names[NFILES] = {
	FL_FILE_NAME_META, FL_FILE_NAME_STATS, FL_FILE_NAME_FAULTS, FL_FILE_NAME_CONTEXTS,
	FL_FILE_NAME_STACKS, FL_FILE_NAME_ALLOCS, FL_FILE_NAME_MAPS,
};

/* One synthetic process directory: each file's bytes, or absent. */
struct synth_proc {
	char name[32];
	uint32_t pid;
	uint64_t start_ns;
	struct buf files[NFILES];
	bool present[NFILES];
};

/* The format version the synthetic files are written in: 1 (32-bit seqs; the offsets of
 * test_corruption are of its layouts) or 2 (fixed-size records; format 3's framed files are
 * covered by test_frames). */
static uint32_t synth_version = 1;
/* Bytes of an unknown header extension (a later version's fields) after the 64 bytes this reader
 * knows: header_size grows by as much. */
static uint32_t synth_header_extra = 0;

static uint32_t fault_size(void) { return synth_version == 1 ? FL_FAULT_RECORD_SIZE_V1 : sizeof(struct fl_fault_record); }
static uint32_t context_size(void) { return synth_version == 1 ? FL_CONTEXT_SIZE_V1 : sizeof(struct fl_fault_context); }

static void put_header(struct synth_proc *p, enum file_index f, uint32_t kind, uint32_t record_size)
{
	struct fl_file_header h = trace_header(synth_version, kind, record_size, p->pid);
	h.header_size += synth_header_extra;
	h.page_size = PAGE;
	h.start_ns = p->start_ns;
	h.region_start = REGION;
	h.region_size = RSIZE;
	buf_put(&p->files[f], &h, sizeof(h));
	for (uint32_t i = 0; i < synth_header_extra; i++)
		buf_put(&p->files[f], "\xdd", 1);
	p->present[f] = true;
}

static void put_meta(struct synth_proc *p, bool with_stats, uint64_t faults_total, const uint64_t kinds[5])
{
	buf_printf(&p->files[F_META],
		   "{\n  \"format_version\": %u,\n  \"pid\": %u,\n  \"ppid\": 1,\n  \"exe\": \"/bin/prog\",\n"
		   "  \"cmdline\": [\"prog\", \"arg one\"],\n  \"handlers\": 2,\n  \"page_size\": %u,\n"
		   "  \"region_start\": %llu,\n  \"region_size\": %llu,\n  \"start_ns\": %llu,\n"
		   "  \"pmu_events\": [\"task-clock\", \"page-faults\", \"context-switches\"]\n}\n",
		   synth_version, p->pid, PAGE, (unsigned long long)REGION, (unsigned long long)RSIZE,
		   (unsigned long long)p->start_ns);
	p->present[F_META] = true;
	if (!with_stats)
		return;
	buf_printf(&p->files[F_STATS],
		   "{\n  \"pid\": %u,\n  \"faults_total\": %llu,\n  \"faults_first_touch\": %llu,\n"
		   "  \"faults_refault\": %llu,\n  \"faults_soft\": %llu,\n  \"faults_concurrent\": %llu,\n"
		   "  \"records_written\": %llu,\n  \"records_dropped\": 0,\n  \"records_dropped_reason\": \"\",\n"
		   "  \"wall_ns\": 1000000,\n  \"exit\": \"exit\"\n}\n",
		   p->pid, (unsigned long long)faults_total, (unsigned long long)kinds[1],
		   (unsigned long long)kinds[2], (unsigned long long)kinds[3], (unsigned long long)kinds[4],
		   (unsigned long long)faults_total);
	p->present[F_STATS] = true;
}

/* A fault record without object fields (the reader's sweep joins it to objects; test_record_extension
 * covers records that name their object): version 1's 32 bytes, or version 2's record with
 * FL_FAULT_OBJECT clear. */
static void put_fault(struct synth_proc *p, uint64_t time, uint64_t addr, uint32_t tid, uint64_t seq,
		      uint32_t stack_id, uint8_t kind, uint8_t flags, uint8_t handler)
{
	if (synth_version == 1) {
		struct { uint64_t time, addr; uint32_t tid, seq, stack_id; uint8_t kind, flags, handler, reserved; } v1 = {
			time, addr, tid, (uint32_t)seq, stack_id, kind, flags, handler, 0
		};
		_Static_assert(sizeof(v1) == FL_FAULT_RECORD_SIZE_V1, "version-1 fault record");
		buf_put(&p->files[F_FAULTS], &v1, sizeof(v1));
		return;
	}
	struct fl_fault_record r = { .time_ns = time, .addr = addr, .seq = seq, .tid = tid, .stack_id = stack_id,
				     .kind = kind, .flags = flags, .handler = handler };
	buf_put(&p->files[F_FAULTS], &r, sizeof(r));
}

static void put_context(struct synth_proc *p, uint64_t seq, uint32_t stack_id, uint32_t tid, uint32_t npmu,
			uint64_t v0, uint64_t v1, uint64_t v2)
{
	if (synth_version == 1) {
		struct { uint32_t seq, stack_id, tid, npmu; uint64_t pmu[4]; } c1 = {
			(uint32_t)seq, stack_id, tid, npmu, { v0, v1, v2, 0 }
		};
		_Static_assert(sizeof(c1) == FL_CONTEXT_SIZE_V1, "version-1 context record");
		buf_put(&p->files[F_CONTEXTS], &c1, sizeof(c1));
		return;
	}
	struct fl_fault_context c = { .seq = seq, .stack_id = stack_id, .tid = tid, .npmu = npmu, .pmu = { v0, v1, v2, 0 } };
	buf_put(&p->files[F_CONTEXTS], &c, sizeof(c));
}

static void put_stack(struct synth_proc *p, uint32_t id, uint16_t flags, unsigned nframes, const uint64_t *frames)
{
	struct fl_stack_record s = { id, (uint16_t)nframes, flags, 0x1234567800000000ull | id };
	buf_put(&p->files[F_STACKS], &s, sizeof(s));
	buf_put(&p->files[F_STACKS], frames, nframes * sizeof(uint64_t));
}

static void put_alloc(struct synth_proc *p, uint64_t time, uint8_t kind, uint64_t addr, uint64_t size,
		      uint32_t alloc_id, uint32_t stack_id)
{
	struct fl_alloc_record a;
	memset(&a, 0, sizeof(a));
	a.time_ns = time;
	a.addr = addr;
	a.size = size;
	a.tid = p->pid;
	a.stack_id = stack_id;
	a.alloc_id = alloc_id;
	a.kind = kind;
	buf_put(&p->files[F_ALLOCS], &a, sizeof(a));
}

/* The expected view of process 1000's faults, in seq order (= time order). */
struct expect_fault {
	uint64_t time, addr;
	uint32_t alloc_id;  /* 0: none */
	uint32_t stack_id;  /* what fl_fault_stack must return; 0: none */
	uint32_t tid;
};

static const struct expect_fault expect_1000[] = {
	/*  0 */ { 50, ADDR_A, 0, 0, 1000 },            /* before the malloc */
	/*  1 */ { 100, ADDR_A, 1, 1, 1000 },           /* same time as the malloc: event first */
	/*  2 */ { 150, ADDR_A + 0x1500, 1, 0, 1000 },
	/*  3 */ { 250, ADDR_A + 0x10, 1, 0, 1000 },
	/*  4 */ { 250, ADDR_B + 0x5000, 2, 2, 1002 },
	/*  5 */ { 350, ADDR_A + 0x10, 0, 0, 1000 },    /* freed */
	/*  6 */ { 450, ADDR_A + 0x10, 3, 3, 1000 },    /* reused by a new malloc */
	/*  7 */ { 450, ADDR_A + 0x900, 0, 0, 1000 },   /* beyond the new, smaller object */
	/*  8 */ { 550, ADDR_B + 0x5000, 0, 0, 1000 },  /* in the munmapped hole */
	/*  9 */ { 550, ADDR_B + 0x3000, 2, 0, 1002 },  /* piece before the hole */
	/* 10 */ { 550, ADDR_B + 0x9000, 2, 0, 1000 },  /* piece after the hole */
	/* 11 */ { 650, ADDR_B + 0xd000, 0, 0, 1000 },  /* trimmed tail */
	/* 12 */ { 650, ADDR_B + 0xb000, 2, 0, 1000 },
	/* 13 */ { 750, ADDR_B + 0x2000, 4, 4, 1000 },  /* a new mmap over part of the old one */
	/* 14 */ { 750, ADDR_B + 0x1000, 2, 0, 1000 },
	/* 15 */ { 750, ADDR_B + 0x3000, 2, 0, 1000 },
	/* 16 */ { 750, ADDR_C, 0, 0, 1000 },           /* malloc + free at the same time, in file order */
	/* 17 */ { 800, REGION + 0x500000, 0, 2, 1000 },/* stack on the fault record itself */
};
#define N1000 (sizeof(expect_1000) / sizeof(expect_1000[0]))

/* File order of process 1000's faults: handler 0 (even seqs) appended before handler 1 (odd). */
static uint32_t fault_file_seq(size_t i)
{
	size_t evens = (N1000 + 1) / 2;
	return (uint32_t)(i < evens ? 2 * i : 2 * (i - evens) + 1);
}

static void build_1000(struct synth_proc *p)
{
	static const uint64_t f1[] = { 0x401000, 0x401100 }, f2[] = { 0x402000 },
		f3[] = { 0x403000, 0x403100, 0x403200 }, f4[] = { 0x404000, 0x404100 };
	uint64_t kinds[5] = { 0 };

	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "1000");
	p->pid = 1000;
	p->start_ns = START;
	for (size_t i = 0; i < N1000; i++)
		kinds[1 + i % 4]++;
	put_meta(p, true, N1000, kinds);

	put_header(p, F_FAULTS, FL_FILE_FAULTS, fault_size());
	for (size_t i = 0; i < N1000; i++) {
		uint32_t seq = fault_file_seq(i);
		const struct expect_fault *e = &expect_1000[seq];
		put_fault(p, e->time, e->addr, e->tid, seq, seq == 17 ? 2 : 0, (uint8_t)(1 + seq % 4),
			  (seq & 1) ? FL_FAULT_WRITE : 0, (uint8_t)(seq & 1));
	}

	put_header(p, F_CONTEXTS, FL_FILE_CONTEXTS, context_size());
	put_context(p, 6, 3, 1000, 3, 61, 62, 63);
	put_context(p, 1, 1, 1000, 3, 11, 22, 33);
	put_context(p, 16, 0, 1000, 1, 7, 0, 0);
	put_context(p, 4, 2, 1002, 2, 41, 42, 0);
	put_context(p, 13, 4, 1000, 0, 0, 0, 0);

	put_header(p, F_STACKS, FL_FILE_STACKS, 0);
	put_stack(p, 3, FL_STACK_EXACT_PC | FL_STACK_TRUNCATED, 3, f3);
	put_stack(p, 1, FL_STACK_EXACT_PC, 2, f1);
	put_stack(p, 4, 0, 2, f4);
	put_stack(p, 2, FL_STACK_EXACT_PC, 1, f2);

	put_header(p, F_ALLOCS, FL_FILE_ALLOCS, sizeof(struct fl_alloc_record));
	put_alloc(p, 400, FL_ALLOC_MALLOC, ADDR_A, 0x800, 3, 3);
	put_alloc(p, 100, FL_ALLOC_MALLOC, ADDR_A, 0x2000, 1, 1);
	put_alloc(p, 200, FL_ALLOC_MMAP, ADDR_B, 0x10000, 2, 2);
	put_alloc(p, 300, FL_ALLOC_FREE, ADDR_A, 0, 0, 0);
	put_alloc(p, 500, FL_ALLOC_MUNMAP, ADDR_B + 0x4000, 0x4000, 0, 0);
	put_alloc(p, 600, FL_ALLOC_MUNMAP, ADDR_B + 0xc000, 0x8000, 0, 0);
	put_alloc(p, 700, FL_ALLOC_MALLOC, ADDR_C, 0x1000, 5, 0);
	put_alloc(p, 700, FL_ALLOC_FREE, ADDR_C, 0, 0, 0);
	put_alloc(p, 700, FL_ALLOC_MMAP, ADDR_B + 0x2000, 0x1000, 4, 4);

	buf_printf(&p->files[F_MAPS],
		   "# maps 10 start\n"
		   "00400000-00401000 r-xp 00000000 fe:00 123 /bin/prog\n"
		   "# maps 900 exit\n"
		   "00400000-00401000 r-xp 00000000 fe:00 123 /bin/prog\n"
		   "7f1000000000-7f1000001000 r-xp 00000000 fe:00 456 /lib/libx.so\n"
		   "7f2000000000-7f2000001000 r-xp 00000000 fe:00 789 /lib/liby.so\n"
		   "# maps 500 dlopen\n"
		   "00400000-00401000 r-xp 00000000 fe:00 123 /bin/prog\n"
		   "7f1000000000-7f1000001000 r-xp 00000000 fe:00 456 /lib/libx.so\n");
	p->present[F_MAPS] = true;
}

/* Process 1001 (a child, killed: no stats.json) and 1000.1 (a later exec image of 1000). */
static void build_small(struct synth_proc *p, const char *name, uint32_t pid, uint64_t start, bool stats,
			const uint64_t *times, size_t n)
{
	uint64_t kinds[5] = { 0, n, 0, 0, 0 };
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->pid = pid;
	p->start_ns = start;
	put_meta(p, stats, n, kinds);
	put_header(p, F_FAULTS, FL_FILE_FAULTS, fault_size());
	for (size_t i = 0; i < n; i++)
		put_fault(p, times[i], REGION + 0x10000 * (i + 1), pid, (uint32_t)i, 0, FL_FAULT_FIRST_TOUCH, 0, 0);
}

#define NPROCS 3
struct synth {
	struct synth_proc procs[NPROCS];
};

static void build_synth(struct synth *s)
{
	static const uint64_t t1001[] = { 0, 300, 600 }, t1000_1[] = { 1, 2 };
	build_1000(&s->procs[0]);
	build_small(&s->procs[1], "1001", 1001, START + 100, false, t1001, 3);
	build_small(&s->procs[2], "1000.1", 1000, START + 5000, true, t1000_1, 2);
}

static void synth_free(struct synth *s)
{
	for (int i = 0; i < NPROCS; i++)
		for (int f = 0; f < NFILES; f++)
			free(s->procs[i].files[f].p);
}

static char base_dir[PATH_MAX];

static void write_bytes(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || (len && write(fd, data, len) != (ssize_t)len) || close(fd) < 0) {
		fprintf(stderr, "writing %s: %s\n", path, strerror(errno));
		exit(2);
	}
}

static void file_path(char *out, size_t len, const char *dir, const struct synth_proc *p, enum file_index f)
{
	pathf(out, len, "%s/%s/%s", dir, p->name, file_names[f]);
}

/* Writes s as the recording DIR (created). */
static void write_synth(const struct synth *s, const char *dir)
{
	char path[PATH_MAX];
	mkdir(dir, 0755);
	for (int i = 0; i < NPROCS; i++) {
		const struct synth_proc *p = &s->procs[i];
		pathf(path, sizeof(path), "%s/%s", dir, p->name);
		mkdir(path, 0755);
		for (int f = 0; f < NFILES; f++) {
			file_path(path, sizeof(path), dir, p, f);
			if (p->present[f])
				write_bytes(path, p->files[f].p, p->files[f].len);
			else
				unlink(path);
		}
	}
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static void remove_tree(const char *dir)
{
	nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ------------------------------------------------------------------ opening helpers */

static bool has_warning(const struct fl_recording *rec, const char *a, const char *b)
{
	for (size_t i = 0; i < rec->nwarnings; i++)
		if (strstr(rec->warnings[i], a) && (!b || strstr(rec->warnings[i], b)))
			return true;
	return false;
}

static void print_warnings(const struct fl_recording *rec)
{
	for (size_t i = 0; i < rec->nwarnings; i++)
		fprintf(stderr, "    warning: %s\n", rec->warnings[i]);
}

/* Touches every fault and its joins (for data accepted after corruption: must not crash). */
static uint64_t walk_everything(const struct fl_recording *rec)
{
	struct fl_fault_iter it;
	const struct fl_process *proc;
	const struct fl_fault *f;
	uint64_t sum = 0;

	if (fl_fault_iter_init(&it, rec, 0) < 0)
		return 0;
	while ((f = fl_fault_iter_next(&it, &proc)) != NULL) {
		const struct fl_fault_context *c = fl_fault_context(proc, f);
		const struct fl_stack *s = fl_fault_stack(proc, f);
		const struct fl_alloc_record *a = fl_fault_alloc(proc, f);
		sum += fl_fault_time_ns(proc, f) + f->rec.addr;
		if (c)
			for (uint32_t i = 0; i < c->npmu; i++)
				sum += c->pmu[i];
		if (s)
			for (uint32_t i = 0; i < s->nframes; i++)
				sum += s->frames[i];
		if (a)
			sum += a->alloc_id + a->size;
		const struct fl_maps_snapshot *m = fl_process_maps_at(proc, f->rec.time_ns);
		if (m && maps_find(m->maps, 0x400000))
			sum++;
	}
	fl_fault_iter_free(&it);
	return sum;
}

#define EXPECT_ERROR(dir, ...) expect_error(dir, __FILE__, __LINE__, __VA_ARGS__, NULL)

/* Opening DIR must fail with an error containing every given substring. */
static void expect_error(const char *dir, const char *file, int line, ...)
{
	struct fl_recording *rec = NULL;
	char err[1024] = "";
	int rc = fl_recording_open(dir, &rec, err, sizeof(err));
	va_list ap;
	const char *want;
	bool ok = rc < 0 && rec == NULL && strchr(err, '\n') == NULL;

	va_start(ap, line);
	while ((want = va_arg(ap, const char *)) != NULL)
		ok = ok && strstr(err, want) != NULL;
	va_end(ap);
	check_at(ok, file, line, "open(%s): rc %d, err \"%s\"", dir, rc, err);
	fl_recording_close(rec);
}

/* Opens DIR, which must succeed; a warning containing WARN (and WARN2) must be there if given. */
static struct fl_recording *expect_open(const char *dir, const char *warn, const char *warn2, const char *file, int line)
{
	struct fl_recording *rec = NULL;
	char err[1024] = "";
	int rc = fl_recording_open(dir, &rec, err, sizeof(err));

	check_at(rc == 0 && rec != NULL, file, line, "open(%s) failed: %s", dir, err);
	if (rc < 0)
		return NULL;
	if (warn) {
		bool found = has_warning(rec, warn, warn2);
		check_at(found, file, line, "open(%s): no warning with \"%s\"%s%s (%zu warnings)", dir, warn,
			 warn2 ? " and " : "", warn2 ? warn2 : "", rec->nwarnings);
		if (!found)
			print_warnings(rec);
	}
	return rec;
}
#define EXPECT_OPEN(dir, warn, warn2) expect_open(dir, warn, warn2, __FILE__, __LINE__)

/* ------------------------------------------------------------------ the good recording */

static void test_good(void)
{
	struct synth s;
	char dir[PATH_MAX];
	build_synth(&s);
	pathf(dir, sizeof(dir), "%s/good", base_dir);
	write_synth(&s, dir);

	struct fl_recording *rec = EXPECT_OPEN(dir, "1001: no stats.json", "may be cut");
	if (!rec) {
		synth_free(&s);
		return;
	}
	CHECK(rec->nprocs == 3, "nprocs %zu", rec->nprocs);
	CHECK(rec->nfaults == N1000 + 5, "nfaults %llu", (unsigned long long)rec->nfaults);
	CHECK(rec->start_ns == START, "start_ns %llu", (unsigned long long)rec->start_ns);
	CHECK(rec->nwarnings == 1, "%zu warnings, want 1 (no stats.json of 1001)", rec->nwarnings);
	if (rec->nwarnings != 1)
		print_warnings(rec);

	const struct fl_process *p = fl_recording_find_pid(rec, 1000);
	CHECK(p && strcmp(p->name, "1000") == 0 && p->image == 0, "find_pid(1000)");
	CHECK(&rec->procs[1] == fl_recording_find_pid(rec, 1001) && rec->procs[1].offset_ns == 100 &&
	      !rec->procs[1].has_stats && rec->procs[1].maybe_cut, "process 1001 second, offset 100, cut");
	CHECK(strcmp(rec->procs[2].name, "1000.1") == 0 && rec->procs[2].pid == 1000 && rec->procs[2].image == 1 &&
	      rec->procs[2].offset_ns == 5000, "process 1000.1 last");
	CHECK(fl_recording_find_pid(rec, 4242) == NULL, "find_pid(4242)");
	if (!p) {
		fl_recording_close(rec);
		synth_free(&s);
		return;
	}
	CHECK(p->nfaults == N1000 && p->ncontexts == 5 && p->nstacks == 4 && p->nallocs == 9 && p->nmaps == 3,
	      "1000 counts: faults %zu contexts %zu stacks %zu allocs %zu maps %zu", p->nfaults, p->ncontexts,
	      p->nstacks, p->nallocs, p->nmaps);
	CHECK(p->has_stats && !p->maybe_cut && p->page_size == PAGE && p->region_start == REGION &&
	      p->region_size == RSIZE && p->start_ns == START, "1000 header values");
	CHECK(strcmp(p->exe, "/bin/prog") == 0 && p->ncmdline == 2 && strcmp(p->cmdline[1], "arg one") == 0,
	      "1000 exe and cmdline");

	/* Faults sorted by (time, seq) — the file had handler chunks out of order. */
	for (size_t i = 0; i < p->nfaults; i++) {
		const struct fl_fault *f = &p->faults[i];
		const struct expect_fault *e = &expect_1000[i];
		CHECK(f->rec.seq == i && f->rec.time_ns == e->time && f->rec.addr == e->addr && f->rec.tid == e->tid,
		      "fault %zu: seq %llu time %llu", i, (unsigned long long)f->rec.seq, (unsigned long long)f->rec.time_ns);
		CHECK(fl_process_fault_by_seq(p, (uint32_t)i) == f, "fault_by_seq(%zu)", i);
		const struct fl_alloc_record *a = fl_fault_alloc(p, f);
		CHECK(e->alloc_id ? a && a->alloc_id == e->alloc_id : a == NULL,
		      "fault seq %zu at 0x%llx t=%llu: alloc %u, want %u", i, (unsigned long long)e->addr,
		      (unsigned long long)e->time, a ? a->alloc_id : 0, e->alloc_id);
		const struct fl_stack *st = fl_fault_stack(p, f);
		CHECK(e->stack_id ? st && st->id == e->stack_id : st == NULL, "fault seq %zu: stack %u, want %u",
		      i, st ? st->id : 0, e->stack_id);
		CHECK(f->rec.kind == 1 + i % 4 && (f->rec.flags & FL_FAULT_WRITE) == ((i & 1) ? FL_FAULT_WRITE : 0),
		      "fault seq %zu kind/flags", i);
	}
	CHECK(fl_process_fault_by_seq(p, 99) == NULL, "fault_by_seq(99)");

	/* Contexts. */
	const struct fl_fault_context *c = fl_process_context(p, 1);
	CHECK(c && c->npmu == 3 && c->pmu[0] == 11 && c->pmu[1] == 22 && c->pmu[2] == 33 && c->stack_id == 1,
	      "context of seq 1");
	c = fl_process_context(p, 4);
	CHECK(c && c->tid == 1002 && c->npmu == 2 && c->pmu[1] == 42, "context of seq 4");
	CHECK(fl_process_context(p, 2) == NULL && fl_process_context(p, 1000) == NULL, "no context of seq 2");
	c = fl_process_context(p, 16);
	CHECK(c && c->stack_id == 0 && c->npmu == 1 && c->pmu[0] == 7, "context of seq 16");

	/* Stacks. */
	const struct fl_stack *st = fl_process_stack(p, 3);
	CHECK(st && st->nframes == 3 && st->frames[0] == 0x403000 && st->frames[2] == 0x403200 &&
	      st->flags == (FL_STACK_EXACT_PC | FL_STACK_TRUNCATED) && st->hash == (0x1234567800000000ull | 3),
	      "stack 3");
	st = fl_process_stack(p, 2);
	CHECK(st && st->nframes == 1 && st->frames[0] == 0x402000, "stack 2");
	CHECK(fl_process_stack(p, 0) == NULL && fl_process_stack(p, 5) == NULL, "stacks 0 and 5 absent");
	for (size_t i = 1; i < p->nstacks; i++)
		CHECK(p->stacks[i - 1].id < p->stacks[i].id, "stacks sorted by id");

	/* Allocations: time order, file order among equal times, lookup by id. */
	for (size_t i = 1; i < p->nallocs; i++)
		CHECK(p->allocs[i - 1].time_ns <= p->allocs[i].time_ns, "allocs in time order");
	CHECK(p->allocs[6].kind == FL_ALLOC_MALLOC && p->allocs[7].kind == FL_ALLOC_FREE &&
	      p->allocs[8].kind == FL_ALLOC_MMAP, "equal times keep file order");
	const struct fl_alloc_record *a = fl_process_alloc_by_id(p, 3);
	CHECK(a && a->addr == ADDR_A && a->size == 0x800 && a->stack_id == 3 && a->time_ns == 400, "alloc id 3");
	CHECK(fl_process_alloc_by_id(p, 0) == NULL && fl_process_alloc_by_id(p, 6) == NULL, "alloc ids 0, 6");

	/* The sweep on its own, at times between events. */
	struct fl_alloc_sweep sw;
	fl_alloc_sweep_init(&sw, p);
	CHECK(fl_alloc_sweep_find(&sw, ADDR_A) == FL_NONE, "sweep: nothing live at start");
	CHECK(fl_alloc_sweep_advance(&sw, 250) == 0, "sweep advance");
	uint32_t idx = fl_alloc_sweep_find(&sw, ADDR_B + 0xffff);
	CHECK(idx != FL_NONE && p->allocs[idx].alloc_id == 2, "sweep: end of the mmap at 250");
	CHECK(fl_alloc_sweep_find(&sw, ADDR_B + 0x10000) == FL_NONE, "sweep: one past the mmap");
	CHECK(fl_alloc_sweep_find(&sw, ADDR_A - 1) == FL_NONE, "sweep: one before the malloc");
	CHECK(fl_alloc_sweep_advance(&sw, 2000) == 0, "sweep advance to the end");
	idx = fl_alloc_sweep_find(&sw, ADDR_B + 0x2fff);
	CHECK(idx != FL_NONE && p->allocs[idx].alloc_id == 4, "sweep: new mmap at the end");
	idx = fl_alloc_sweep_find(&sw, ADDR_B + 0xbfff);
	CHECK(idx != FL_NONE && p->allocs[idx].alloc_id == 2, "sweep: last byte of the trimmed piece");
	CHECK(fl_alloc_sweep_find(&sw, ADDR_B + 0xc000) == FL_NONE, "sweep: first byte trimmed");
	fl_alloc_sweep_free(&sw);

	/* Maps snapshots, sorted by time. */
	const struct fl_maps_snapshot *m = fl_process_maps_at(p, 5);
	CHECK(m && m->time_ns == 10 && strcmp(m->reason, "start") == 0 && m->maps->count == 1, "maps at 5");
	m = fl_process_maps_at(p, 499);
	CHECK(m && m->time_ns == 10, "maps at 499");
	m = fl_process_maps_at(p, 500);
	CHECK(m && m->time_ns == 500 && strcmp(m->reason, "dlopen") == 0 && m->maps->count == 2, "maps at 500");
	m = fl_process_maps_at(p, UINT64_MAX);
	CHECK(m && m->time_ns == 900 && m->maps->count == 3 && maps_find(m->maps, 0x7f2000000010) != NULL,
	      "last maps");
	CHECK(fl_process_maps_at(&rec->procs[1], 0) == NULL, "no maps of 1001");

	/* Merged iteration: every process, in recording time. */
	struct fl_fault_iter it;
	const struct fl_process *fp;
	const struct fl_fault *f;
	uint64_t last = 0, count = 0, from1001 = 0;
	bool ordered = true;
	CHECK(fl_fault_iter_init(&it, rec, 0) == 0, "iter init");
	while ((f = fl_fault_iter_next(&it, &fp)) != NULL) {
		uint64_t t = fl_fault_time_ns(fp, f);
		ordered = ordered && t >= last;
		last = t;
		count++;
		if (fp->pid == 1001) {
			from1001++;
			if (f->rec.seq == 0)  /* at 100, the same time as seq 1 of 1000: 1000 goes first */
				CHECK(count == 3, "1001's first fault is third, got %llu", (unsigned long long)count);
		}
	}
	fl_fault_iter_free(&it);
	CHECK(ordered && count == N1000 + 5 && from1001 == 3, "merged iteration: %llu faults, ordered %d",
	      (unsigned long long)count, ordered);
	CHECK(fl_fault_iter_init(&it, rec, 1000) == 0, "iter init pid 1000");
	count = 0;
	while ((f = fl_fault_iter_next(&it, &fp)) != NULL)
		count += fp->pid == 1000;
	fl_fault_iter_free(&it);
	CHECK(count == N1000 + 2, "pid 1000 iteration: %llu faults (both images)", (unsigned long long)count);
	CHECK(fl_fault_iter_init(&it, rec, 77) == 0 && fl_fault_iter_next(&it, NULL) == NULL, "pid 77: none");
	fl_fault_iter_free(&it);
	CHECK(strcmp(fl_fault_kind_name(FL_FAULT_SOFT), "soft") == 0 && strcmp(fl_fault_kind_name(9), "?") == 0 &&
	      strcmp(fl_alloc_kind_name(FL_ALLOC_MUNMAP), "munmap") == 0, "kind names");
	fl_recording_close(rec);
	synth_free(&s);
}

/* ------------------------------------------------------------------ directory-level cases */

static void test_directories(void)
{
	char dir[PATH_MAX], path[PATH_MAX], out[PATH_MAX], err[512];
	struct synth s;

	pathf(dir, sizeof(dir), "%s/nonexistent", base_dir);
	EXPECT_ERROR(dir, "nonexistent", "no such recording directory");
	pathf(dir, sizeof(dir), "%s/empty", base_dir);
	mkdir(dir, 0755);
	EXPECT_ERROR(dir, "empty", "no process directory");
	pathf(path, sizeof(path), "%s/notes.txt", dir);
	write_bytes(path, "x", 1);
	pathf(path, sizeof(path), "%s/0123", dir);   /* not a pid: leading zero */
	mkdir(path, 0755);
	pathf(path, sizeof(path), "%s/77", dir);     /* empty: died before writing anything */
	mkdir(path, 0755);
	EXPECT_ERROR(dir, "no process directory");
	EXPECT_ERROR(path, "no process directory");
	pathf(path, sizeof(path), "%s/notes.txt", dir);
	EXPECT_ERROR(path, "not a directory");

	/* One good process next to the empty one: opens, with a warning about the empty one. */
	build_synth(&s);
	write_synth(&s, dir);
	struct fl_recording *rec = EXPECT_OPEN(dir, "/77: empty process directory", NULL);
	CHECK(rec && rec->nprocs == 3, "empty process directory skipped");
	fl_recording_close(rec);

	/* faults missing: an error naming the file. meta.json missing (the runtime writes it last as
	 * it starts: a recording read while a process starts): that process is skipped, with a warning. */
	pathf(path, sizeof(path), "%s/1000/faults", dir);
	unlink(path);
	EXPECT_ERROR(dir, "/1000/faults", "missing");
	write_synth(&s, dir);
	pathf(path, sizeof(path), "%s/1000/meta.json", dir);
	unlink(path);
	rec = EXPECT_OPEN(dir, "/1000: no meta.json yet: skipped", NULL);
	CHECK(rec && rec->nprocs == 2, "a process directory without meta.json skipped (%zu processes)", rec ? rec->nprocs : 0);
	fl_recording_close(rec);

	/* a contexts file stats.json counts records of, missing: a warning saying what is lost */
	write_synth(&s, dir);
	pathf(path, sizeof(path), "%s/1000/stats.json", dir);
	{
		FILE *f = fopen(path, "r");
		char text[4096];
		size_t n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
		if (f)
			fclose(f);
		text[n] = '\0';
		char *end = strrchr(text, '}');
		REQUIRE(end != NULL, "stats.json of the synthetic recording");
		snprintf(end, sizeof(text) - (size_t)(end - text), ",\n  \"contexts_written\": 3\n}\n");
		write_bytes(path, text, strlen(text));
	}
	pathf(path, sizeof(path), "%s/1000/contexts", dir);
	unlink(path);
	rec = EXPECT_OPEN(dir, "1000/contexts: missing, though stats.json counts 3 fault contexts", NULL);
	fl_recording_close(rec);

	/* another process's maps (its first snapshot maps another executable): a warning */
	write_synth(&s, dir);
	pathf(path, sizeof(path), "%s/1000/maps", dir);
	{
		const char *other = "# maps 10 start\n00400000-00401000 r-xp 00000000 fe:00 9 /usr/bin/other\n";
		write_bytes(path, other, strlen(other));
	}
	rec = EXPECT_OPEN(dir, "1000/maps: its first snapshot does not map the process's executable /bin/prog", NULL);
	fl_recording_close(rec);
	synth_free(&s);

	/* The newest faultline-* directory. */
	pathf(dir, sizeof(dir), "%s/parent", base_dir);
	mkdir(dir, 0755);
	CHECK(fl_recording_find_newest(dir, out, sizeof(out), err, sizeof(err)) < 0 &&
	      strstr(err, "no faultline-* directory"), "find_newest in an empty directory: %s", err);
	/* recordings (a process directory with a meta.json in each), and a newer faultline-* directory
	 * that is not one (a sweep's, notes): passed over */
	const char *names[] = { "faultline-old", "faultline-new", "faultline-mid", "other", "faultline-notes" };
	const time_t times[] = { 1000, 3000, 2000, 4000, 5000 };
	for (int i = 0; i < 5; i++) {
		struct timespec ts[2] = { { times[i], 0 }, { times[i], 0 } };
		pathf(path, sizeof(path), "%s/%s", dir, names[i]);
		mkdir(path, 0755);
		if (strcmp(names[i], "faultline-notes") != 0) {
			pathf(path, sizeof(path), "%s/%s/1000", dir, names[i]);
			mkdir(path, 0755);
			pathf(path, sizeof(path), "%s/%s/1000/meta.json", dir, names[i]);
			write_bytes(path, "{}", 2);
			pathf(path, sizeof(path), "%s/%s", dir, names[i]);
		}
		utimensat(AT_FDCWD, path, ts, 0);
	}
	pathf(path, sizeof(path), "%s/faultline-file", dir);
	write_bytes(path, "", 0);
	pathf(path, sizeof(path), "%s/faultline-new", dir);
	CHECK(fl_recording_find_newest(dir, out, sizeof(out), err, sizeof(err)) == 0 && strcmp(out, path) == 0,
	      "find_newest: got %s, want %s", out, path);
}

/* ------------------------------------------------------------------ cut files */

/* Rewrites process 1000's file F cut to LEN bytes (restored by write_synth). */
static void cut_file(const struct synth *s, const char *dir, enum file_index f, size_t len)
{
	char path[PATH_MAX];
	file_path(path, sizeof(path), dir, &s->procs[0], f);
	write_bytes(path, s->procs[0].files[f].p, len);
}

static void test_cuts(void)
{
	struct synth s;
	char dir[PATH_MAX], where[64];
	const enum file_index binary[] = { F_FAULTS, F_CONTEXTS, F_STACKS, F_ALLOCS };
	const size_t record_sizes[] = { fault_size(), context_size(), 0, 40 };
	unsigned cuts = 0;

	build_synth(&s);
	pathf(dir, sizeof(dir), "%s/cuts", base_dir);
	write_synth(&s, dir);
	for (size_t b = 0; b < 4; b++) {
		enum file_index f = binary[b];
		size_t full = s.procs[0].files[f].len;
		for (size_t len = 0; len < full; len++) {
			size_t rs = record_sizes[b];
			bool boundary = len >= 64 && rs && (len - 64) % rs == 0;
			if (f == F_STACKS) { /* record boundaries of the stacks file: 64, then 16 + 8n each */
				size_t at = 64;
				const unsigned char *p = s.procs[0].files[f].p;
				while (at < len) {
					struct fl_stack_record r;
					memcpy(&r, p + at, sizeof(r));
					at += sizeof(r) + 8u * r.nframes;
				}
				boundary = at == len;
			}
			cut_file(&s, dir, f, len);
			snprintf(where, sizeof(where), "1000/%s: truncated at offset", file_names[f]);
			cuts++;
			if (!boundary) {
				/* Inside the header or a record: a warning only. */
				struct fl_recording *rec = EXPECT_OPEN(dir, where, NULL);
				if (rec)
					walk_everything(rec);
				fl_recording_close(rec);
				continue;
			}
			/* At a record boundary the file looks complete: fine, unless records other files
			 * refer to are gone (a dangling reference in a complete trace is corruption). */
			struct fl_recording *rec = NULL;
			char err[1024] = "";
			int rc = fl_recording_open(dir, &rec, err, sizeof(err));
			bool refs_lost = f == F_STACKS && len < full;
			if (f == F_FAULTS)  /* fewer faults than stats.json counts: a warning */
				CHECK(rc == 0 && (len == full || has_warning(rec, "stats.json counts", NULL)),
				      "faults cut at record boundary %zu: %s", len, err);
			else if (refs_lost)
				CHECK(rc < 0 && strstr(err, "is not defined in") && strstr(err, ": offset "),
				      "stacks cut at %zu: rc %d err %s", len, rc, err);
			else
				CHECK(rc == 0, "%s cut at record boundary %zu: %s", file_names[f], len, err);
			fl_recording_close(rec);
		}
		write_synth(&s, dir);
	}

	/* maps: a cut inside a line is a warning; at a line end, nothing. */
	size_t maps_len = s.procs[0].files[F_MAPS].len;
	for (size_t len = 1; len < maps_len; len++) {
		bool line_end = s.procs[0].files[F_MAPS].p[len - 1] == '\n';
		cut_file(&s, dir, F_MAPS, len);
		cuts++;
		struct fl_recording *rec = EXPECT_OPEN(dir, line_end ? NULL : "1000/maps: truncated at offset", NULL);
		if (rec && line_end)
			CHECK(!has_warning(rec, "maps", NULL), "maps cut at line end %zu: no warning", len);
		fl_recording_close(rec);
	}
	write_synth(&s, dir);

	/* JSON files are written whole: a cut meta.json is corrupt; a cut stats.json is ignored, as a
	 * missing one is (the process was killed while writing it), with a warning. */
	cut_file(&s, dir, F_META, s.procs[0].files[F_META].len / 2);
	EXPECT_ERROR(dir, "1000/meta.json");
	write_synth(&s, dir);
	cut_file(&s, dir, F_STATS, 0);
	struct fl_recording *cut_stats = EXPECT_OPEN(dir, "1000/stats.json", "empty file");
	CHECK(cut_stats && has_warning(cut_stats, "ignored, as if the process had been killed", NULL),
	      "an empty stats.json: ignored");
	fl_recording_close(cut_stats);
	cut_file(&s, dir, F_STATS, 20);
	cut_stats = EXPECT_OPEN(dir, "1000/stats.json", "line");
	fl_recording_close(cut_stats);
	write_synth(&s, dir);

	/* A cut trace (no stats.json) tolerates references lost with the cut, with one warning. */
	char path[PATH_MAX];
	file_path(path, sizeof(path), dir, &s.procs[0], F_STATS);
	unlink(path);
	cut_file(&s, dir, F_FAULTS, 64 + fault_size() * 3);
	struct fl_recording *rec = EXPECT_OPEN(dir, "1000/contexts", "missing from the trace");
	if (rec) {
		const struct fl_process *p = fl_recording_find_pid(rec, 1000);
		CHECK(p && p->nfaults == 3 && p->maybe_cut && p->ncontexts == 1, "cut faults: %zu faults, %zu contexts",
		      p ? p->nfaults : 0, p ? p->ncontexts : 0);
	}
	fl_recording_close(rec);
	cut_file(&s, dir, F_STACKS, 64 + 16 + 24 + 16 + 16 + 4);  /* stacks 3 and 1 kept, 4 cut, 2 gone */
	rec = EXPECT_OPEN(dir, "1000/stacks: truncated at offset 136 (2 complete records", NULL);
	if (rec) {
		const struct fl_process *p = fl_recording_find_pid(rec, 1000);
		CHECK(p && p->nstacks == 2 && fl_process_stack(p, 4) == NULL, "cut stacks");
		CHECK(has_warning(rec, "1000/allocs", "allocation stack ids missing"), "allocs dangling warning");
		walk_everything(rec);
	}
	fl_recording_close(rec);
	write_synth(&s, dir);
	printf("# %u cuts checked\n", cuts);
	synth_free(&s);
}

/* ------------------------------------------------------------------ targeted corruption */

/* Overwrites LEN bytes at OFFSET of process 1000's file F (in memory and on disk). */
static void poke(struct synth *s, const char *dir, enum file_index f, size_t offset, const void *data, size_t len)
{
	char path[PATH_MAX];
	memcpy(s->procs[0].files[f].p + offset, data, len);
	file_path(path, sizeof(path), dir, &s->procs[0], f);
	write_bytes(path, s->procs[0].files[f].p, s->procs[0].files[f].len);
}

static void poke32(struct synth *s, const char *dir, enum file_index f, size_t offset, uint32_t v)
{
	poke(s, dir, f, offset, &v, sizeof(v));
}

static void poke16(struct synth *s, const char *dir, enum file_index f, size_t offset, uint16_t v)
{
	poke(s, dir, f, offset, &v, sizeof(v));
}

static void poke64(struct synth *s, const char *dir, enum file_index f, size_t offset, uint64_t v)
{
	poke(s, dir, f, offset, &v, sizeof(v));
}

static void poke8(struct synth *s, const char *dir, enum file_index f, size_t offset, uint8_t v)
{
	poke(s, dir, f, offset, &v, sizeof(v));
}

/* Restores the pristine recording. */
static void reset(struct synth *s, const char *dir)
{
	synth_free(s);
	build_synth(s);
	write_synth(s, dir);
}

static void rewrite_json(struct synth *s, const char *dir, enum file_index f, const char *from, const char *to)
{
	struct buf *b = &s->procs[0].files[f];
	char *text = strndup((char *)b->p, b->len), *at = strstr(text, from);
	struct buf out = { 0 };
	char path[PATH_MAX];
	if (!at) {
		fprintf(stderr, "rewrite_json: '%s' not found\n", from);
		exit(2);
	}
	buf_put(&out, text, (size_t)(at - text));
	buf_put(&out, to, strlen(to));
	buf_put(&out, at + strlen(from), strlen(at + strlen(from)));
	free(b->p);
	*b = out;
	free(text);
	file_path(path, sizeof(path), dir, &s->procs[0], f);
	write_bytes(path, b->p, b->len);
}

static void test_corruption(void)
{
	struct synth s;
	char dir[PATH_MAX], want[128];
	const enum file_index binary[] = { F_FAULTS, F_CONTEXTS, F_STACKS, F_ALLOCS };

	build_synth(&s);
	pathf(dir, sizeof(dir), "%s/corrupt", base_dir);
	write_synth(&s, dir);
	struct fl_recording *rec = EXPECT_OPEN(dir, NULL, NULL);
	fl_recording_close(rec);

	/* Every header field of every binary file. */
	for (size_t b = 0; b < 4; b++) {
		enum file_index f = binary[b];
		char name[64];
		snprintf(name, sizeof(name), "1000/%s: ", file_names[f]);
#define AT(off) (snprintf(want, sizeof(want), "%soffset %d:", name, off), want)
		poke8(&s, dir, f, 0, 'X');
		EXPECT_ERROR(dir, AT(0), "bad magic");
		reset(&s, dir);
		poke8(&s, dir, f, 6, 'x');
		EXPECT_ERROR(dir, AT(6), "bad magic");
		reset(&s, dir);
		poke8(&s, dir, f, 7, '!');  /* the NUL of the magic */
		EXPECT_ERROR(dir, AT(7), "bad magic");
		reset(&s, dir);
		poke32(&s, dir, f, 8, FL_TRACE_VERSION + 1);
		EXPECT_ERROR(dir, AT(8), "format version 5 is newer than this faultline reads (4)");
		reset(&s, dir);
		poke32(&s, dir, f, 8, 0);
		EXPECT_ERROR(dir, AT(8), "bad format version 0");
		reset(&s, dir);
		poke32(&s, dir, f, 12, b == 0 ? FL_FILE_ALLOCS : FL_FILE_FAULTS);
		EXPECT_ERROR(dir, AT(12), "file kind");
		reset(&s, dir);
		poke32(&s, dir, f, 12, 99);
		EXPECT_ERROR(dir, AT(12), "file kind 99");
		reset(&s, dir);
		poke32(&s, dir, f, 16, 65);
		EXPECT_ERROR(dir, AT(16), "header_size 65");
		reset(&s, dir);
		poke32(&s, dir, f, 20, f == F_STACKS ? 16 : 33);
		EXPECT_ERROR(dir, AT(20), "record_size");
		reset(&s, dir);
		poke32(&s, dir, f, 24, 999);
		EXPECT_ERROR(dir, AT(24), "pid 999");
		reset(&s, dir);
		poke32(&s, dir, f, 28, 3000);
		EXPECT_ERROR(dir, AT(28), "page_size 3000");
		reset(&s, dir);
		poke32(&s, dir, f, 28, 8192);
		EXPECT_ERROR(dir, AT(28), "page_size 8192 differs");
		reset(&s, dir);
		poke64(&s, dir, f, 32, START + 1);
		EXPECT_ERROR(dir, AT(32), "start_ns");
		reset(&s, dir);
		poke64(&s, dir, f, 40, REGION + PAGE);
		EXPECT_ERROR(dir, AT(40), "region_start");
		reset(&s, dir);
		poke64(&s, dir, f, 48, RSIZE * 2);
		EXPECT_ERROR(dir, AT(48), "region_size");
		reset(&s, dir);
		poke64(&s, dir, f, 56, 0xdead);   /* reserved: ignored (see trace_reader.h) */
		rec = EXPECT_OPEN(dir, NULL, NULL);
		fl_recording_close(rec);
		reset(&s, dir);
#undef AT
	}

	/* Fault records. */
#define FAULTS_AT(off) (snprintf(want, sizeof(want), "1000/faults: offset %zu:", (size_t)(off)), want)
	poke8(&s, dir, F_FAULTS, 64 + 28, 9);
	EXPECT_ERROR(dir, FAULTS_AT(64 + 28), "fault record 0: kind 9");
	reset(&s, dir);
	poke8(&s, dir, F_FAULTS, 64 + 32 * 5 + 28, 0);
	EXPECT_ERROR(dir, FAULTS_AT(64 + 32 * 5 + 28), "fault record 5: kind 0");
	reset(&s, dir);
	poke8(&s, dir, F_FAULTS, 64 + 32 + 29, 0x80);
	EXPECT_ERROR(dir, FAULTS_AT(64 + 32 + 29), "unknown flag bits 0x80");
	reset(&s, dir);
	poke64(&s, dir, F_FAULTS, 64 + 32 * 2 + 8, REGION + RSIZE);
	EXPECT_ERROR(dir, FAULTS_AT(64 + 32 * 2 + 8), "outside the region");
	reset(&s, dir);
	poke64(&s, dir, F_FAULTS, 64 + 32 * 2 + 8, 0x1000);
	EXPECT_ERROR(dir, FAULTS_AT(64 + 32 * 2 + 8), "outside the region");
	reset(&s, dir);
	poke8(&s, dir, F_FAULTS, 64 + 30, 2);  /* meta.json says 2 handlers */
	EXPECT_ERROR(dir, FAULTS_AT(64 + 30), "handler 2");
	reset(&s, dir);
	poke32(&s, dir, F_FAULTS, 64 + 32 * 4 + 20, 0); /* seq 8 becomes a second seq 0 */
	EXPECT_ERROR(dir, FAULTS_AT(64 + 32 * 4), "seq 0 appears twice (records 0 and 4)");
	reset(&s, dir);
	poke32(&s, dir, F_FAULTS, 64 + 32 * 3 + 24, 99);
	EXPECT_ERROR(dir, FAULTS_AT(64 + 32 * 3 + 24), "fault record 3: stack id 99 is not defined in", "1000/stacks");
	reset(&s, dir);

	/* Contexts (file order: seqs 6, 1, 16, 4, 13). */
#define CTX_AT(off) (snprintf(want, sizeof(want), "1000/contexts: offset %zu:", (size_t)(off)), want)
	poke32(&s, dir, F_CONTEXTS, 64 + 48 + 12, 5);
	EXPECT_ERROR(dir, CTX_AT(64 + 48 + 12), "npmu 5");
	reset(&s, dir);
	poke32(&s, dir, F_CONTEXTS, 64 + 48 * 2, 40);
	EXPECT_ERROR(dir, CTX_AT(64 + 48 * 2), "seq 40 is not in", "1000/faults");
	reset(&s, dir);
	poke32(&s, dir, F_CONTEXTS, 64 + 48 * 2, 6);
	EXPECT_ERROR(dir, CTX_AT(64 + 48 * 2), "a second context for seq 6");
	reset(&s, dir);
	poke32(&s, dir, F_CONTEXTS, 64 + 48 * 3 + 8, 1000);
	EXPECT_ERROR(dir, CTX_AT(64 + 48 * 3 + 8), "tid 1000, but fault seq 4 was taken by tid 1002");
	reset(&s, dir);
	poke32(&s, dir, F_CONTEXTS, 64 + 48 * 4 + 4, 12345);
	EXPECT_ERROR(dir, CTX_AT(64 + 48 * 4 + 4), "stack id 12345 is not defined");
	reset(&s, dir);

	/* Stacks (file order: 3 [3 frames] at 64, 1 [2] at 104, 4 [2] at 136, 2 [1] at 168). */
#define STK_AT(off) (snprintf(want, sizeof(want), "1000/stacks: offset %zu:", (size_t)(off)), want)
	poke16(&s, dir, F_STACKS, 168 + 4, 0);  /* the last stack emptied: valid (nothing unwound) ... */
	poke(&s, dir, F_STACKS, 168 + 16, "", 0);
	s.procs[0].files[F_STACKS].len -= 8;   /* ... once its frame is gone */
	cut_file(&s, dir, F_STACKS, s.procs[0].files[F_STACKS].len);
	rec = EXPECT_OPEN(dir, NULL, NULL);
	if (rec) {
		const struct fl_stack *st = fl_process_stack(fl_recording_find_pid(rec, 1000), 2);
		CHECK(st && st->nframes == 0 && rec->nwarnings == 1, "an empty stack is accepted");
	}
	fl_recording_close(rec);
	reset(&s, dir);
	poke16(&s, dir, F_STACKS, 104 + 4, 1025);
	EXPECT_ERROR(dir, STK_AT(104 + 4), "1025 frames, at most 1024");
	reset(&s, dir);
	poke16(&s, dir, F_STACKS, 104 + 4, 0xffff);
	EXPECT_ERROR(dir, STK_AT(104 + 4), "65535 frames");
	reset(&s, dir);
	poke32(&s, dir, F_STACKS, 136, 0);
	EXPECT_ERROR(dir, STK_AT(136), "stack id 0");
	reset(&s, dir);
	poke32(&s, dir, F_STACKS, 168, 3);
	EXPECT_ERROR(dir, STK_AT(168), "stack id 3 defined twice");
	reset(&s, dir);
	poke16(&s, dir, F_STACKS, 64 + 6, 0x10);
	EXPECT_ERROR(dir, STK_AT(64 + 6), "unknown flag bits 0x10");
	reset(&s, dir);
	poke32(&s, dir, F_STACKS, 64, 9);  /* stack 3 renamed: its users dangle (contexts first) */
	EXPECT_ERROR(dir, "1000/contexts: offset 68:", "stack id 3 is not defined");
	reset(&s, dir);

	/* Allocs (file order: see build_1000). */
#define ALC_AT(off) (snprintf(want, sizeof(want), "1000/allocs: offset %zu:", (size_t)(off)), want)
	poke8(&s, dir, F_ALLOCS, 64 + 40 + 36, 7);
	EXPECT_ERROR(dir, ALC_AT(64 + 40 + 36), "alloc record 1: kind 7");
	reset(&s, dir);
	poke8(&s, dir, F_ALLOCS, 64 + 40 + 36, 0);
	EXPECT_ERROR(dir, ALC_AT(64 + 40 + 36), "kind 0");
	reset(&s, dir);
	poke32(&s, dir, F_ALLOCS, 64 + 40 * 2 + 32, 0);
	EXPECT_ERROR(dir, ALC_AT(64 + 40 * 2 + 32), "alloc_id 0");
	reset(&s, dir);
	poke32(&s, dir, F_ALLOCS, 64 + 40 * 3 + 32, 8);
	EXPECT_ERROR(dir, ALC_AT(64 + 40 * 3 + 32), "(free): alloc_id 8, want 0");
	reset(&s, dir);
	poke64(&s, dir, F_ALLOCS, 64 + 40 * 3 + 16, 16);
	EXPECT_ERROR(dir, ALC_AT(64 + 40 * 3 + 16), "(free): size 16, want 0");
	reset(&s, dir);
	poke64(&s, dir, F_ALLOCS, 64 + 40 * 4 + 16, UINT64_MAX - 100);
	EXPECT_ERROR(dir, ALC_AT(64 + 40 * 4 + 16), "wraps around");
	reset(&s, dir);
	poke32(&s, dir, F_ALLOCS, 64 + 40 * 2 + 28, 77);
	EXPECT_ERROR(dir, ALC_AT(64 + 40 * 2 + 28), "stack id 77 is not defined");
	reset(&s, dir);
	poke32(&s, dir, F_ALLOCS, 64 + 40 * 8 + 32, 1);
	EXPECT_ERROR(dir, ALC_AT(64 + 40 * 8), "alloc_id 1 appears twice (records 1 and 8)");
	reset(&s, dir);

	/* JSON files. */
	rewrite_json(&s, dir, F_META, "\"pid\": 1000", "\"pid\": 1003");
	EXPECT_ERROR(dir, "1000/meta.json: pid 1003, but the process directory is 1000");
	reset(&s, dir);
	rewrite_json(&s, dir, F_META, "\"format_version\": 1", "\"format_version\": 99");
	EXPECT_ERROR(dir, "1000/meta.json: format version 99 is newer");
	reset(&s, dir);
	rewrite_json(&s, dir, F_META, "\"start_ns\": 1000000000", "\"start_ns\": 1000000001");
	EXPECT_ERROR(dir, "1000/faults: offset 32:", "differs from meta.json");
	reset(&s, dir);
	rewrite_json(&s, dir, F_META, "\"pid\": 1000,", "");
	EXPECT_ERROR(dir, "1000/meta.json: no integer \"pid\"");
	reset(&s, dir);
	rewrite_json(&s, dir, F_STATS, "\"pid\": 1000", "\"pid\": 1");
	EXPECT_ERROR(dir, "1000/stats.json: pid 1,");
	reset(&s, dir);
	rewrite_json(&s, dir, F_STATS, "\"records_dropped\": 0", "\"records_dropped\": 2");
	rec = EXPECT_OPEN(dir, "fault records were dropped", NULL);
	fl_recording_close(rec);
	reset(&s, dir);

	/* maps. */
	struct buf *maps = &s.procs[0].files[F_MAPS];
	char *text = strndup((char *)maps->p, maps->len);
	/* a damaged maps file keeps the snapshots before the damage, with a warning */
	snprintf(want, sizeof(want), "1000/maps: damaged at offset %zu", (size_t)(strstr(text, "# maps 500") - text));
	free(text);
	rewrite_json(&s, dir, F_MAPS, "# maps 500 dlopen", "# maps 5x0 dlopen");
	rec = EXPECT_OPEN(dir, want, "malformed snapshot line");
	CHECK(rec && rec->procs[0].nmaps == 2, "maps damaged at its third snapshot: %zu kept, want 2",
	      rec ? rec->procs[0].nmaps : 0);
	fl_recording_close(rec);
	reset(&s, dir);
	rewrite_json(&s, dir, F_MAPS, "# maps 10 start\n", "# maps 10 start and more\n");
	rec = EXPECT_OPEN(dir, "1000/maps: damaged at offset 0", "malformed");
	fl_recording_close(rec);
	reset(&s, dir);
	rewrite_json(&s, dir, F_MAPS, "# maps 10 start\n", "00400000-00401000 r-xp 00000000 fe:00 1 /x\n");
	rec = EXPECT_OPEN(dir, "1000/maps: damaged at offset 0", "text before the first");
	CHECK(rec && rec->procs[0].nmaps == 0, "maps damaged at offset 0: %zu snapshots kept", rec ? rec->procs[0].nmaps : 0);
	fl_recording_close(rec);
	reset(&s, dir);
	rewrite_json(&s, dir, F_MAPS, "7f2000000000-7f2000001000", "7f2000000000+7f2000001000");
	rec = EXPECT_OPEN(dir, "1000/maps (snapshot at offset 68):3:", "skipped");
	fl_recording_close(rec);
	reset(&s, dir);
	synth_free(&s);
}

/* ------------------------------------------------------------------ every byte flipped */

/* Opens DIR in a child (so a crash or hang is caught and named). Returns 0 when the child opened
 * it, 1 when it reported a well-formed error, 2 on anything else (described in what). */
static int open_in_child(const char *dir, char *what, size_t whatlen)
{
	int pipefd[2];
	if (pipe(pipefd) < 0) {
		snprintf(what, whatlen, "pipe: %s", strerror(errno));
		return 2;
	}
	pid_t pid = fork();
	if (pid == 0) {
		struct fl_recording *rec;
		char err[1024] = "";
		close(pipefd[0]);
		alarm(10);
		int rc = fl_recording_open(dir, &rec, err, sizeof(err));
		if (rc == 0)
			walk_everything(rec), fl_recording_close(rec);
		if (write(pipefd[1], err, strlen(err)) < 0)
			_exit(3);
		_exit(rc == 0 ? 0 : 1);
	}
	close(pipefd[1]);
	char err[1024] = "";
	ssize_t n = 0, r;
	while ((r = read(pipefd[0], err + n, sizeof(err) - 1 - (size_t)n)) > 0)
		n += r;
	close(pipefd[0]);
	int status;
	waitpid(pid, &status, 0);
	if (WIFSIGNALED(status)) {
		snprintf(what, whatlen, "child killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
		return 2;
	}
	snprintf(what, whatlen, "%s", err);
	if (WEXITSTATUS(status) == 0)
		return 0;
	return WEXITSTATUS(status) == 1 ? 1 : 2;
}

/* make test-long (FAULTLINE_TEST_LONG=1): the full-size variants. */
static bool test_long(void)
{
	const char *v = getenv("FAULTLINE_TEST_LONG");
	return v && strcmp(v, "1") == 0;
}

static void test_flips(void)
{
	struct synth s;
	char dir[PATH_MAX], path[PATH_MAX], what[1100];
	const enum file_index binary[] = { F_FAULTS, F_CONTEXTS, F_STACKS, F_ALLOCS };
	const uint8_t masks[] = { 0xff, 0x01, 0x80 };
	unsigned trials = 0, opened = 0, refused = 0;

	build_synth(&s);
	pathf(dir, sizeof(dir), "%s/flips", base_dir);
	write_synth(&s, dir);
	for (size_t b = 0; b < 4; b++) {
		enum file_index f = binary[b];
		struct buf *file = &s.procs[0].files[f];
		file_path(path, sizeof(path), dir, &s.procs[0], f);
		int fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0) {
			CHECK(0, "open %s: %s", path, strerror(errno));
			continue;
		}
		/* every header byte; then every record byte, or every third one in make test */
		size_t stride = test_long() ? 1 : 3;
		for (size_t off = 0; off < file->len; off += off < sizeof(struct fl_file_header) ? 1 : stride) {
			for (size_t m = 0; m < sizeof(masks); m++) {
				uint8_t byte = file->p[off] ^ masks[m];
				if (pwrite(fd, &byte, 1, (off_t)off) != 1) {
					CHECK(0, "pwrite: %s", strerror(errno));
					continue;
				}
				int rc = open_in_child(dir, what, sizeof(what));
				trials++;
				opened += rc == 0;
				refused += rc == 1;
				char prefix[PATH_MAX + 8];
				pathf(prefix, sizeof(prefix), "%s/1000/", dir);
				CHECK(rc == 0 || (rc == 1 && strncmp(what, prefix, strlen(prefix)) == 0 &&
						  strstr(what, ": offset ") && !strchr(what, '\n')),
				      "%s byte %zu ^ 0x%02x: rc %d: %s", file_names[f], off, masks[m], rc, what);
				if (pwrite(fd, &file->p[off], 1, (off_t)off) != 1)
					CHECK(0, "pwrite: %s", strerror(errno));
			}
		}
		close(fd);
	}
	printf("# %u byte flips: %u refused with file and offset, %u accepted (values without a checkable "
	       "invariant)\n", trials, refused, opened);
	synth_free(&s);
}

/* ------------------------------------------------------------------ attribution against a model */

/* The semantics of trace_reader.h, written the slow and obvious way: a list of disjoint pieces. */
struct model_piece {
	uint64_t start, end;
	uint32_t alloc_id;
};

struct model {
	struct model_piece pieces[4096];
	size_t n;
};

static void model_remove_range(struct model *m, uint64_t lo, uint64_t hi)
{
	size_t n = m->n;
	for (size_t i = 0; i < n; i++) {
		struct model_piece *p = &m->pieces[i];
		if (p->end <= lo || p->start >= hi)
			continue;
		if (p->start < lo && p->end > hi) {          /* split */
			m->pieces[m->n++] = (struct model_piece){ hi, p->end, p->alloc_id };
			p->end = lo;
		} else if (p->start < lo) {
			p->end = lo;
		} else if (p->end > hi) {
			p->start = hi;
		} else {
			p->end = p->start;                     /* empty: dropped below */
		}
	}
	size_t kept = 0;
	for (size_t i = 0; i < m->n; i++)
		if (m->pieces[i].end > m->pieces[i].start)
			m->pieces[kept++] = m->pieces[i];
	m->n = kept;
}

static void model_apply(struct model *m, const struct fl_alloc_record *a)
{
	switch (a->kind) {
	case FL_ALLOC_MALLOC:
	case FL_ALLOC_MMAP:
		if (a->size == 0)
			return;
		model_remove_range(m, a->addr, a->addr + a->size);
		m->pieces[m->n++] = (struct model_piece){ a->addr, a->addr + a->size, a->alloc_id };
		return;
	case FL_ALLOC_FREE:
		for (size_t i = 0; i < m->n; i++) {
			if (m->pieces[i].start == a->addr) {
				m->pieces[i] = m->pieces[--m->n];
				return;
			}
		}
		return;
	case FL_ALLOC_MUNMAP:
		if (a->size)
			model_remove_range(m, a->addr, a->addr + a->size);
		return;
	}
}

static uint32_t model_find(const struct model *m, uint64_t addr)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->pieces[i].start <= addr && addr < m->pieces[i].end)
			return m->pieces[i].alloc_id;
	return 0;
}

static uint64_t rng_state;

static uint64_t rnd(uint64_t bound)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (rng_state >> 33) % bound;
}

/* Random events over a small address range (so they collide often) with a fault after each,
 * attributed by the reader and by the model. Events are written in time order; equal times are
 * frequent, so the file order among them matters too. */
static void test_model(void)
{
	const size_t nevents = 3000, span = 0x3000;
	char dir[PATH_MAX], path[PATH_MAX];
	unsigned compared = 0;

	for (uint64_t seed = 1; seed <= 6; seed++) {
		struct synth_proc p;
		struct model *m = calloc(1, sizeof(*m));
		uint32_t *expect = calloc(nevents, sizeof(*expect));
		uint32_t next_id = 1, seq = 0;
		uint64_t kinds[5] = { 0 }, t = 0;

		rng_state = seed;
		memset(&p, 0, sizeof(p));
		snprintf(p.name, sizeof(p.name), "5000");
		p.pid = 5000;
		p.start_ns = START;
		put_header(&p, F_ALLOCS, FL_FILE_ALLOCS, sizeof(struct fl_alloc_record));
		put_header(&p, F_FAULTS, FL_FILE_FAULTS, fault_size());
		for (size_t e = 0; e < nevents; e++) {
			struct fl_alloc_record a;
			memset(&a, 0, sizeof(a));
			a.time_ns = t;   /* the same time as the previous event unless a fault came between */
			a.tid = 5000;
			uint64_t r = rnd(10);
			if (r < 4) {
				a.kind = r < 3 ? FL_ALLOC_MALLOC : FL_ALLOC_MMAP;
				a.addr = REGION + rnd(span);
				a.size = rnd(8) == 0 ? 0 : 1 + rnd(r < 3 ? 0x100 : 0x1000);
				a.alloc_id = next_id++;
			} else if (r < 8 && m->n) {
				a.kind = FL_ALLOC_FREE;   /* mostly the start of a live piece */
				a.addr = rnd(4) ? m->pieces[rnd(m->n)].start : REGION + rnd(span);
			} else {
				a.kind = FL_ALLOC_MUNMAP;
				a.addr = REGION + rnd(span);
				a.size = rnd(0x800);
			}
			buf_put(&p.files[F_ALLOCS], &a, sizeof(a));
			model_apply(m, &a);
			if (rnd(3) == 0)
				continue;  /* the next event at the same time */
			/* A fault at the time of the events before it (events apply first), inside a live
			 * piece half of the time; the next event comes later. */
			uint64_t addr = REGION + rnd(span);
			if (m->n && rnd(2)) {
				const struct model_piece *pc = &m->pieces[rnd(m->n)];
				addr = pc->start + rnd(pc->end - pc->start);
			}
			expect[seq] = model_find(m, addr);
			put_fault(&p, t, addr, 5000, seq++, 0, FL_FAULT_FIRST_TOUCH, 0, 0);
			t += 1 + rnd(3);
		}
		kinds[1] = seq;
		put_meta(&p, true, seq, kinds);
		pathf(dir, sizeof(dir), "%s/model%llu", base_dir, (unsigned long long)seed);
		pathf(path, sizeof(path), "%s/5000", dir);
		mkdir(dir, 0755);
		mkdir(path, 0755);
		for (int f = 0; f < NFILES; f++) {
			pathf(path, sizeof(path), "%s/5000/%s", dir, file_names[f]);
			if (p.present[f])
				write_bytes(path, p.files[f].p, p.files[f].len);
		}
		struct fl_recording *rec = EXPECT_OPEN(dir, NULL, NULL);
		if (rec) {
			const struct fl_process *proc = &rec->procs[0];
			size_t wrong = 0;
			for (size_t i = 0; i < proc->nfaults; i++) {
				const struct fl_fault *f = &proc->faults[i];
				const struct fl_alloc_record *a = fl_fault_alloc(proc, f);
				uint32_t got = a ? a->alloc_id : 0;
				compared++;
				if (got != expect[f->rec.seq] && wrong++ < 5)
					CHECK(0, "model seed %llu: fault seq %u at +0x%llx: alloc %u, model %u",
					      (unsigned long long)seed, (unsigned)f->rec.seq,
					      (unsigned long long)(f->rec.addr - REGION), got, expect[f->rec.seq]);
			}
			CHECK(wrong == 0 && proc->nfaults == seq && rec->nwarnings == 0, "model seed %llu: %zu of %zu wrong",
			      (unsigned long long)seed, wrong, proc->nfaults);
		}
		fl_recording_close(rec);
		for (int f = 0; f < NFILES; f++)
			free(p.files[f].p);
		free(expect);
		free(m);
	}
	printf("# %u attributions compared with the model\n", compared);
}

/* ------------------------------------------------------------------ 10^6 faults and allocations */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* N objects malloc'd at scattered addresses, all live at once; N faults while they are live; then
 * the objects freed in another scattered order, each free followed by a fault on the freed object
 * (no allocation) and one on an object still live. 2N allocation events, 2N faults. */
static void test_large(void)
{
	const size_t n = test_long() ? 500000 : 100000; /* both coprime with 7919 and 104729 */
	const uint64_t slot = 0x200, base = REGION; /* n slots fill the 256 MiB region */
	struct synth_proc p;
	char dir[PATH_MAX], path[PATH_MAX];
	uint32_t *where = malloc(n * sizeof(*where)), *order = malloc(n * sizeof(*order));
	uint32_t *expect = malloc(2 * n * sizeof(*expect));
	uint64_t kinds[5] = { 0, 2 * n, 0, 0, 0 };

	if (!where || !order || !expect) {
		CHECK(0, "out of memory");
		return;
	}
	/* Scattered permutations (multiplicative, n and the multipliers coprime). */
	for (size_t k = 0; k < n; k++) {
		where[k] = (uint32_t)((k * 7919) % n);
		order[k] = (uint32_t)((k * 104729 + 13) % n);
	}
	memset(&p, 0, sizeof(p));
	snprintf(p.name, sizeof(p.name), "4000");
	p.pid = 4000;
	p.start_ns = START;
	put_meta(&p, true, 2 * n, kinds);
	put_header(&p, F_ALLOCS, FL_FILE_ALLOCS, sizeof(struct fl_alloc_record));
	put_header(&p, F_FAULTS, FL_FILE_FAULTS, fault_size());
	uint32_t seq = 0;
	for (size_t k = 0; k < n; k++)
		put_alloc(&p, k, FL_ALLOC_MALLOC, base + where[k] * slot, 0x100, (uint32_t)(k + 1), 0);
	for (size_t k = 0; k < n; k++) {
		size_t obj = order[k];  /* faults in another order than the mallocs */
		expect[seq] = (uint32_t)(obj + 1);
		put_fault(&p, n + k, base + where[obj] * slot + 0x10, 4000, seq++, 0, FL_FAULT_FIRST_TOUCH, 0, 0);
	}
	for (size_t j = 0; j < n; j++) {
		size_t obj = order[n - 1 - j], live = order[(n - 1 - j) / 2];
		uint64_t t = 2 * n + 2 * j;
		put_alloc(&p, t, FL_ALLOC_FREE, base + where[obj] * slot, 0, 0, 0);
		if (j % 2 == 0 || j == n - 1) {
			expect[seq] = 0;
			put_fault(&p, t + 1, base + where[obj] * slot + 0x80, 4000, seq++, 0, FL_FAULT_FIRST_TOUCH, 0, 0);
		} else {
			expect[seq] = (uint32_t)(live + 1);
			put_fault(&p, t + 1, base + where[live] * slot + 0xff, 4000, seq++, 0, FL_FAULT_FIRST_TOUCH, 0, 0);
		}
	}
	/* The faults on "live" objects hit objects not freed yet: order[i] for i = (n-1-j)/2 is freed
	 * at step n-1-i, which is after j for every j < n - 1. */
	pathf(dir, sizeof(dir), "%s/large", base_dir);
	mkdir(dir, 0755);
	pathf(path, sizeof(path), "%s/4000", dir);
	mkdir(path, 0755);
	for (int f = 0; f < NFILES; f++) {
		pathf(path, sizeof(path), "%s/4000/%s", dir, file_names[f]);
		if (p.present[f])
			write_bytes(path, p.files[f].p, p.files[f].len);
	}
	double t0 = now_s();
	struct fl_recording *rec = EXPECT_OPEN(dir, NULL, NULL);
	double t1 = now_s();
	if (rec) {
		const struct fl_process *proc = &rec->procs[0];
		size_t wrong = 0;
		CHECK(proc->nfaults == 2 * n - 0 && proc->nallocs == 2 * n, "large: %zu faults, %zu allocs",
		      proc->nfaults, proc->nallocs);
		for (size_t i = 0; i < proc->nfaults; i++) {
			const struct fl_alloc_record *a = fl_fault_alloc(proc, &proc->faults[i]);
			uint32_t got = a ? a->alloc_id : 0;
			if (got != expect[proc->faults[i].rec.seq] && wrong++ < 5)
				CHECK(0, "large: fault seq %u: alloc %u, want %u", (unsigned)proc->faults[i].rec.seq, got,
				      expect[proc->faults[i].rec.seq]);
		}
		CHECK(wrong == 0, "large: %zu faults attributed wrongly", wrong);
		CHECK(rec->nwarnings == 0, "large: %zu warnings", rec->nwarnings);
		printf("# %zu faults and %zu allocation events read, validated and attributed in %.2f s\n",
		       proc->nfaults, proc->nallocs, t1 - t0);
		/* speed is measured in make bench, never asserted in a test (this machine is noisy) */
	}
	fl_recording_close(rec);
	for (int f = 0; f < NFILES; f++)
		free(p.files[f].p);
	free(where);
	free(order);
	free(expect);
}

/* Headers and records longer than this reader knows (trace.h's extension rule), in format version 2:
 * headers of 80 bytes (header_size 80; 16 unknown bytes), fault records of 72 bytes whose last 8
 * are an unknown field, naming their objects (FL_FAULT_OBJECT) over a sampled allocation log that
 * holds only one of the two objects; site records of 80 bytes. The unknown tails are skipped,
 * every fault is joined to its object by the record's own fields (never by the sweep), the object
 * the log lacks gets a reader-made record, and the site counts come through as written. */
static void test_record_extension(void)
{
	const uint32_t fault_size = sizeof(struct fl_fault_record) + 8, site_size = sizeof(struct fl_site_record) + 8;
	synth_version = 2;
	synth_header_extra = 16;
	const uint64_t obj_a = REGION + 0x1000, obj_b = REGION + 0x9000;
	uint64_t kinds[5] = { 0, 4, 0, 0, 0 };
	unsigned char tail[8];
	struct synth_proc p;
	char dir[PATH_MAX], path[PATH_MAX];

	memset(tail, 0xee, sizeof(tail));
	memset(&p, 0, sizeof(p));
	snprintf(p.name, sizeof(p.name), "6000");
	p.pid = 6000;
	p.start_ns = START;
	put_meta(&p, true, 4, kinds);
	put_header(&p, F_STACKS, FL_FILE_STACKS, 0);
	struct fl_stack_record sr = { 1, 1, 0, 0x1234 };
	uint64_t frame = 0x401000;
	buf_put(&p.files[F_STACKS], &sr, sizeof(sr));
	buf_put(&p.files[F_STACKS], &frame, sizeof(frame));
	put_header(&p, F_ALLOCS, FL_FILE_ALLOCS, sizeof(struct fl_alloc_record));
	put_alloc(&p, 10, FL_ALLOC_MALLOC, obj_a, 0x2000, 7, 1);   /* A is logged, B (id 9) is not */
	put_header(&p, F_FAULTS, FL_FILE_FAULTS, fault_size);
	for (uint32_t seq = 0; seq < 4; seq++) {
		/* seqs 0, 1 in A; 2 in B; 3 in no object (the runtime looked and found none) */
		struct fl_fault_record r = { .time_ns = 100 + seq,
					     .addr = seq < 2 ? obj_a + seq * 0x1000 : seq == 2 ? obj_b + 0x10 : REGION + 0x20000,
					     .seq = seq, .tid = 6000, .kind = FL_FAULT_FIRST_TOUCH, .flags = FL_FAULT_OBJECT };
		if (seq < 2)
			r.obj_addr = obj_a, r.obj_size = 0x2000, r.obj_alloc_id = 7, r.obj_stack_id = 1;
		else if (seq == 2)
			r.obj_addr = obj_b, r.obj_size = 0x100, r.obj_alloc_id = 9, r.obj_stack_id = 1;
		buf_put(&p.files[F_FAULTS], &r, sizeof(r));
		buf_put(&p.files[F_FAULTS], tail, sizeof(tail));
	}
	struct buf sites = { 0 };
	struct fl_file_header h;
	memcpy(&h, p.files[F_FAULTS].p, sizeof(h));
	h.kind = FL_FILE_SITES;
	h.record_size = site_size;
	buf_put(&sites, &h, sizeof(h));
	buf_put(&sites, p.files[F_FAULTS].p + sizeof(h), synth_header_extra);
	struct fl_site_record site = { 1, 0, 0x401005, 1000, 990, 64000, 6400, 640, 2, 3 };
	buf_put(&sites, &site, sizeof(site));
	buf_put(&sites, tail, sizeof(tail));

	pathf(dir, sizeof(dir), "%s/extension", base_dir);
	mkdir(dir, 0755);
	pathf(path, sizeof(path), "%s/6000", dir);
	mkdir(path, 0755);
	for (int f = 0; f < NFILES; f++) {
		pathf(path, sizeof(path), "%s/6000/%s", dir, file_names[f]);
		if (p.present[f])
			write_bytes(path, p.files[f].p, p.files[f].len);
	}
	pathf(path, sizeof(path), "%s/6000/%s", dir, FL_FILE_NAME_SITES);
	write_bytes(path, sites.p, sites.len);
	struct fl_recording *rec = EXPECT_OPEN(dir, NULL, NULL);
	if (rec) {
		const struct fl_process *proc = &rec->procs[0];
		CHECK(proc->nfaults == 4 && proc->fault_objects && proc->nallocs == 2 && proc->unlogged_objects == 1,
		      "extension: %zu faults, objects %d, %zu allocs (%zu made from faults)", proc->nfaults,
		      proc->fault_objects, proc->nallocs, proc->unlogged_objects);
		const struct fl_alloc_record *a[4];
		for (size_t i = 0; i < 4 && i < proc->nfaults; i++)
			a[proc->faults[i].rec.seq] = fl_fault_alloc(proc, &proc->faults[i]);
		CHECK(a[0] && a[0] == a[1] && a[0]->alloc_id == 7 && !(a[0]->flags & FL_ALLOC_UNLOGGED),
		      "extension: faults 0 and 1 joined to logged object A");
		CHECK(a[2] && a[2]->alloc_id == 9 && a[2]->addr == obj_b && a[2]->size == 0x100 && a[2]->stack_id == 1 &&
			      (a[2]->flags & FL_ALLOC_UNLOGGED) && a[2]->time_ns == 102,
		      "extension: fault 2 joined to a record made for unlogged object B");
		CHECK(a[3] == NULL, "extension: fault 3 in no object");
		CHECK(proc->nsites == 1 && proc->sites[0].allocs == 1000 && proc->sites[0].faults == 3 &&
			      proc->sites[0].key == 0x401005,
		      "extension: the site record, its unknown tail skipped (%zu sites)", proc->nsites);
	}
	fl_recording_close(rec);
	for (int f = 0; f < NFILES; f++)
		free(p.files[f].p);
	free(sites.p);
	synth_version = 1;
	synth_header_extra = 0;
}

/* Format version 2's 64-bit seqs: a process whose seqs cross 2^32 (version 1 wrapped there and the
 * reader refused the duplicate), handlers' chunks interleaved, contexts out of seq order; and a
 * process whose seqs are sparse (one near 2^40), which the reader indexes without a direct table.
 * Every fault is found by its seq, joined to its context, and walked in (time, seq) order. */
static void test_big_seqs(void)
{
	const uint64_t base = (1ull << 32) - 3;
	const uint64_t sparse[] = { 5, 6, 1ull << 40, (1ull << 40) + 7 };
	uint64_t kinds[5] = { 0, 12, 0, 0, 0 };
	struct synth_proc p[2];
	char dir[PATH_MAX], path[PATH_MAX];

	synth_version = 2;
	memset(p, 0, sizeof(p));
	snprintf(p[0].name, sizeof(p[0].name), "7000");
	p[0].pid = 7000;
	p[0].start_ns = START;
	put_meta(&p[0], true, 8, kinds);
	put_header(&p[0], F_FAULTS, FL_FILE_FAULTS, fault_size());
	/* handler 1's chunk (odd seqs) first, then handler 0's: time order is seq order */
	for (int handler = 1; handler >= 0; handler--)
		for (uint64_t k = (uint64_t)handler; k < 8; k += 2)
			put_fault(&p[0], 100 + k, REGION + 0x1000 * k, 7000, base + k, 0, FL_FAULT_FIRST_TOUCH, 0,
				  (uint8_t)handler);
	put_header(&p[0], F_CONTEXTS, FL_FILE_CONTEXTS, context_size());
	put_context(&p[0], base + 6, 0, 7000, 1, 60, 0, 0);
	put_context(&p[0], base + 3, 0, 7000, 1, 30, 0, 0);   /* 2^32: version 1 would read seq 0 */
	put_context(&p[0], base + 4, 0, 7000, 1, 40, 0, 0);
	kinds[1] = 4;
	snprintf(p[1].name, sizeof(p[1].name), "7001");
	p[1].pid = 7001;
	p[1].start_ns = START;
	put_meta(&p[1], true, 4, kinds);
	put_header(&p[1], F_FAULTS, FL_FILE_FAULTS, fault_size());
	for (size_t k = 0; k < 4; k++)
		put_fault(&p[1], 10 + k, REGION + 0x1000 * k, 7001, sparse[3 - k], 0, FL_FAULT_FIRST_TOUCH, 0, 0);

	pathf(dir, sizeof(dir), "%s/bigseq", base_dir);
	mkdir(dir, 0755);
	for (int i = 0; i < 2; i++) {
		pathf(path, sizeof(path), "%s/%s", dir, p[i].name);
		mkdir(path, 0755);
		for (int f = 0; f < NFILES; f++) {
			pathf(path, sizeof(path), "%s/%s/%s", dir, p[i].name, file_names[f]);
			if (p[i].present[f])
				write_bytes(path, p[i].files[f].p, p[i].files[f].len);
		}
	}
	struct fl_recording *rec = EXPECT_OPEN(dir, NULL, NULL);
	if (rec) {
		const struct fl_process *a = fl_recording_find_pid(rec, 7000), *b = fl_recording_find_pid(rec, 7001);
		CHECK(a && a->nfaults == 8 && a->ncontexts == 3, "big seqs: %zu faults, %zu contexts", a ? a->nfaults : 0,
		      a ? a->ncontexts : 0);
		for (uint64_t k = 0; a && k < a->nfaults && k < 8; k++) {
			const struct fl_fault *f = fl_process_fault_by_seq(a, base + k);
			CHECK(f == &a->faults[k] && f->rec.seq == base + k && f->rec.addr == REGION + 0x1000 * k,
			      "big seqs: seq 2^32%+lld found, in time order", (long long)(k - 3));
			const struct fl_fault_context *c = fl_fault_context(a, &a->faults[k]);
			bool want = k == 3 || k == 4 || k == 6;
			CHECK(want ? c && c->seq == base + k && c->pmu[0] == 10 * k : c == NULL,
			      "big seqs: context of seq 2^32%+lld", (long long)(k - 3));
		}
		CHECK(a && fl_process_fault_by_seq(a, 3) == NULL && fl_process_fault_by_seq(a, base + 8) == NULL,
		      "big seqs: seqs not in the trace are not found (no wrap)");
		for (size_t k = 1; a && k < a->ncontexts; k++)
			CHECK(a->contexts[k - 1].seq < a->contexts[k].seq, "big seqs: contexts in seq order");
		CHECK(b && b->nfaults == 4, "sparse seqs: %zu faults", b ? b->nfaults : 0);
		for (size_t k = 0; b && k < 4 && k < b->nfaults; k++) {
			const struct fl_fault *f = fl_process_fault_by_seq(b, sparse[k]);
			CHECK(f && f->rec.seq == sparse[k] && f->rec.time_ns == 13 - k, "sparse seqs: seq %llu found",
			      (unsigned long long)sparse[k]);
		}
		CHECK(b && fl_process_fault_by_seq(b, 7) == NULL, "sparse seqs: a missing seq is not found");
	}
	fl_recording_close(rec);

	/* the same seq twice, 2^32 apart: two records, not a duplicate; the same seq twice: refused */
	struct buf *faults = &p[1].files[F_FAULTS];
	uint64_t seq = sparse[3] + (1ull << 32);
	memcpy(faults->p + 64 + offsetof(struct fl_fault_record, seq), &seq, sizeof(seq));
	pathf(path, sizeof(path), "%s/7001/%s", dir, FL_FILE_NAME_FAULTS);
	write_bytes(path, faults->p, faults->len);
	rec = EXPECT_OPEN(dir, NULL, NULL);
	fl_recording_close(rec);
	seq = sparse[2];
	memcpy(faults->p + 64 + offsetof(struct fl_fault_record, seq), &seq, sizeof(seq));
	write_bytes(path, faults->p, faults->len);
	char want[128];
	snprintf(want, sizeof(want), "7001/faults: offset %zu:", (size_t)64 + sizeof(struct fl_fault_record));
	EXPECT_ERROR(dir, want, "appears twice (records 0 and 1)");

	/* a file of the other byte order is refused by name */
	uint64_t swapped = FL_TRACE_MAGIC_SWAPPED;
	memcpy(faults->p, &swapped, sizeof(swapped));
	write_bytes(path, faults->p, faults->len);
	EXPECT_ERROR(dir, "7001/faults: offset 0:", "other byte order");
	for (int i = 0; i < 2; i++)
		for (int f = 0; f < NFILES; f++)
			free(p[i].files[f].p);
	synth_version = 1;
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	pathf(base_dir, sizeof(base_dir), "%s/test_trace_reader.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(base_dir)) {
		perror("mkdtemp");
		return 2;
	}
	/* the API on version-1 recordings (read by decoding), then on version-2 ones */
	test_good();
	test_directories();
	test_cuts();
	test_corruption();   /* its offsets are of version 1's layouts */
	synth_version = 2;
	test_good();
	test_cuts();
	test_flips();
	test_large();
	synth_version = 1;
	test_model();
	test_record_extension();
	test_big_seqs();
	if (getenv("FAULTLINE_TEST_KEEP"))
		printf("# kept %s\n", base_dir);
	else
		remove_tree(base_dir);
	return check_summary("test_trace_reader");
}
