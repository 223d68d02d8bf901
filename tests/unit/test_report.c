/* test_report.c: `faultline report` and its modules on synthetic recordings whose stacks point into this
 * test program itself (its own /proc/self/maps is the recording's maps, so the symbolizer resolves
 * real functions with DWARF): every count, kind, filter, grouping, PMU delta and skip decision is
 * known exactly.
 *
 *   report_map: inserts, lookups, walks against a plain array.
 *   callsite rules: libc frames skipped; all-skipped stacks fall back to the innermost frame; empty
 *   stacks are "<no stack>"; --skip and --no-skip.
 *   rows: --by callsite/function/alloc/thread/process, --kind, --pid, --from/--to, --top; reads and
 *   writes; per-fault PMU deltas per thread (two interleaved threads); CSV and JSON carry the same
 *   values; locality scores of a sequential row.
 *   bad input: missing and empty directories, a faults file cut mid-record (warning, fewer faults).
 *
 * `test_report --bench N STACKS DIR` writes a synthetic recording of N faults over STACKS distinct
 * stacks of random PCs in this program's code into DIR and times the report and a JSON report on
 * it (for measurements; the normal run does a smaller one and only prints its time). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <faultline/trace.h>

#include "report_render.h"
#include "report_verb.h"
#include "report_map.h"

#include "check.h"
#include "trace_header.h"

/* ----------------------------------------------------------------- functions the stacks point into */

__attribute__((noinline)) int report_test_leaf(int x);
__attribute__((noinline)) int report_test_middle(int x);
__attribute__((noinline)) int report_test_outer(int x);

__attribute__((noinline)) int report_test_leaf(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}

__attribute__((noinline)) int report_test_middle(int x)
{
	int y = report_test_leaf(x);
	__asm__ volatile("" ::: "memory");
	return y + 2;
}

__attribute__((noinline)) int report_test_outer(int x)
{
	int y = report_test_middle(x);
	__asm__ volatile("" ::: "memory");
	return y * 5;
}

/* ----------------------------------------------------------------- synthetic recordings */

#define REGION 0x7e0000000000ull
#define RSIZE (1ull << 30)
#define PAGE 4096u

struct buf {
	unsigned char *p;
	size_t len, cap;
};

static void buf_put(struct buf *b, const void *data, size_t len)
{
	if (b->len + len > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + len)
			cap *= 2;
		if (!(b->p = realloc(b->p, cap))) {
			perror("realloc");
			exit(2);
		}
		b->cap = cap;
	}
	if (len) /* memcpy from NULL is undefined even for 0 bytes */
		memcpy(b->p + b->len, data, len);
	b->len += len;
}

enum { F_FAULTS, F_CONTEXTS, F_STACKS, F_ALLOCS, NBIN };
static const char *const bin_names[NBIN] = { "faults", "contexts", "stacks", "allocs" };
static const uint32_t bin_kinds[NBIN] = { FL_FILE_FAULTS, FL_FILE_CONTEXTS, FL_FILE_STACKS, FL_FILE_ALLOCS };
static const uint32_t bin_sizes[NBIN] = { sizeof(struct fl_fault_record), sizeof(struct fl_fault_context), 0,
					  sizeof(struct fl_alloc_record) };

struct synth {
	uint32_t pid;
	uint64_t start_ns;
	struct buf bin[NBIN];
	uint32_t nfaults;
	uint64_t kinds[5];
	uint64_t last_pmu[2][3]; /* per thread (tid & 1): cumulative task-clock, page-faults, cs */
};

static void synth_init(struct synth *s, uint32_t pid, uint64_t start_ns)
{
	memset(s, 0, sizeof(*s));
	s->pid = pid;
	s->start_ns = start_ns;
	for (int f = 0; f < NBIN; f++) {
		struct fl_file_header h = trace_header(2 /* fixed-size records (format 3 frames faults) */, bin_kinds[f],
						       bin_sizes[f], pid);
		h.page_size = PAGE;
		h.start_ns = start_ns;
		h.region_start = REGION;
		h.region_size = RSIZE;
		buf_put(&s->bin[f], &h, sizeof(h));
	}
}

static void put_stack(struct synth *s, uint32_t id, uint16_t flags, unsigned n, const uint64_t *frames)
{
	struct fl_stack_record r = { id, (uint16_t)n, flags, 0x5eed0000ull + id };
	buf_put(&s->bin[F_STACKS], &r, sizeof(r));
	buf_put(&s->bin[F_STACKS], frames, n * sizeof(uint64_t));
}

/* A fault (in time order) with a context carrying STACK_ID (0: no context) and PMU increments. */
static void put_fault(struct synth *s, uint64_t time, uint64_t addr, uint32_t tid, uint32_t stack_id, uint8_t kind,
		      uint8_t flags, uint64_t clock_step)
{
	struct fl_fault_record r = { .time_ns = time, .addr = addr, .seq = s->nfaults, .tid = tid, .stack_id = stack_id,
				     .kind = kind, .flags = flags };
	buf_put(&s->bin[F_FAULTS], &r, sizeof(r));
	s->kinds[kind]++;
	if (stack_id) {
		uint64_t *v = s->last_pmu[tid & 1];
		v[0] += clock_step;
		v[1] += 1;
		v[2] += (tid & 1) ? 0 : 2;
		struct fl_fault_context c = { .seq = s->nfaults, .stack_id = stack_id, .tid = tid, .npmu = 3,
					      .pmu = { v[0], v[1], v[2], 0 } };
		buf_put(&s->bin[F_CONTEXTS], &c, sizeof(c));
	}
	s->nfaults++;
}

static void put_alloc(struct synth *s, uint64_t time, uint8_t kind, uint64_t addr, uint64_t size, uint32_t alloc_id,
		      uint32_t stack_id)
{
	struct fl_alloc_record a;
	memset(&a, 0, sizeof(a));
	a.time_ns = time;
	a.addr = addr;
	a.size = size;
	a.tid = s->pid;
	a.stack_id = stack_id;
	a.alloc_id = alloc_id;
	a.kind = kind;
	buf_put(&s->bin[F_ALLOCS], &a, sizeof(a));
}

static void write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || (len && write(fd, data, len) != (ssize_t)len) || close(fd) < 0) {
		fprintf(stderr, "writing %s: %s\n", path, strerror(errno));
		exit(2);
	}
}

static char *read_text(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	struct buf b = { 0 };
	char chunk[65536];
	size_t n;
	if (!f) {
		perror(path);
		exit(2);
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf_put(&b, chunk, n);
	fclose(f);
	buf_put(&b, "", 1);
	*len = b.len - 1;
	return (char *)b.p;
}

/* Writes S as DIR/PID (meta.json, stats.json, the binary files, maps = this process's maps). */
static void synth_write(struct synth *s, const char *dir)
{
	char path[PATH_MAX + 64], text[2048];
	size_t maps_len;
	char *maps = read_text("/proc/self/maps", &maps_len);

	mkdir(dir, 0755);
	snprintf(path, sizeof(path), "%s/%u", dir, s->pid);
	mkdir(path, 0755);
	int n = snprintf(text, sizeof(text),
			 "{\"format_version\": 1, \"pid\": %u, \"exe\": \"/proc/self/exe\", \"cmdline\": [\"synth\", \"%u\"],"
			 " \"local_limit_bytes\": 4194304, \"max_bytes\": %llu, \"page_size\": %u, \"region_start\": %llu,"
			 " \"region_size\": %llu, \"start_ns\": %llu,"
			 " \"pmu_events\": [\"task-clock\", \"page-faults\", \"context-switches\"], \"pmu_kind\": \"software\"}\n",
			 s->pid, s->pid, (unsigned long long)RSIZE, PAGE, (unsigned long long)REGION, (unsigned long long)RSIZE,
			 (unsigned long long)s->start_ns);
	snprintf(path, sizeof(path), "%s/%u/meta.json", dir, s->pid);
	write_file(path, text, (size_t)n);
	n = snprintf(text, sizeof(text),
		     "{\"pid\": %u, \"faults_total\": %u, \"faults_first_touch\": %llu, \"faults_refault\": %llu,"
		     " \"faults_soft\": %llu, \"faults_concurrent\": %llu, \"records_written\": %u, \"records_dropped\": 0,"
		     " \"wall_ns\": 5000000, \"exit\": \"exit\"}\n",
		     s->pid, s->nfaults, (unsigned long long)s->kinds[1], (unsigned long long)s->kinds[2],
		     (unsigned long long)s->kinds[3], (unsigned long long)s->kinds[4], s->nfaults);
	snprintf(path, sizeof(path), "%s/%u/stats.json", dir, s->pid);
	write_file(path, text, (size_t)n);
	for (int f = 0; f < NBIN; f++) {
		snprintf(path, sizeof(path), "%s/%u/%s", dir, s->pid, bin_names[f]);
		write_file(path, s->bin[f].p, s->bin[f].len);
		free(s->bin[f].p);
	}
	snprintf(path, sizeof(path), "%s/%u/maps", dir, s->pid);
	n = snprintf(text, sizeof(text), "# maps 0 start\n");
	struct buf m = { 0 };
	buf_put(&m, text, (size_t)n);
	buf_put(&m, maps, maps_len);
	write_file(path, m.p, m.len);
	free(m.p);
	free(maps);
}

/* ----------------------------------------------------------------- the small recording */

static uint64_t fn(int (*f)(int))
{
	return (uint64_t)(uintptr_t)f;
}

/* Process 1000 (threads 1000 and 1001) and process 2000; see the expectations in test_rows. */
static void make_small(const char *dir)
{
	struct synth s;
	uint64_t libc_a = (uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "strlen");
	uint64_t libc_b = (uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "memcpy");
	uint64_t leaf = fn(report_test_leaf), middle = fn(report_test_middle), outer = fn(report_test_outer);

	synth_init(&s, 1000, 1000000000ull);
	put_stack(&s, 1, FL_STACK_EXACT_PC, 1, (uint64_t[]){ leaf + 4 });
	put_stack(&s, 2, FL_STACK_EXACT_PC, 3, (uint64_t[]){ libc_a + 2, middle + 1, outer + 1 });
	put_stack(&s, 3, FL_STACK_EXACT_PC, 2, (uint64_t[]){ libc_a + 2, libc_b + 1 });
	put_stack(&s, 4, 0, 0, NULL);
	put_stack(&s, 5, 0, 1, (uint64_t[]){ outer + 1 });
	put_stack(&s, 6, 0, 2, (uint64_t[]){ libc_b + 1, middle + 1 });
	put_alloc(&s, 500, FL_ALLOC_MALLOC, REGION, 64 * PAGE, 1, 5);
	put_alloc(&s, 600, FL_ALLOC_MALLOC, REGION + (1u << 20), 64 * PAGE, 2, 6);
	/* 10 first-touch writes at the leaf, thread 1000, pages 0..9 of allocation 1, at 1..10 us */
	for (unsigned i = 0; i < 10; i++)
		put_fault(&s, 1000 * (i + 1), REGION + i * PAGE, 1000, 1, FL_FAULT_FIRST_TOUCH, FL_FAULT_WRITE, 100);
	/* 6 refault reads through libc into middle, thread 1001, allocation 2, at 11..16 us */
	for (unsigned i = 0; i < 6; i++)
		put_fault(&s, 11000 + 1000 * i, REGION + (1u << 20) + i * PAGE, 1001, 2, FL_FAULT_REFAULT, 0, 1000);
	/* 3 soft faults entirely in libc, outside any allocation, at 17..19 us */
	for (unsigned i = 0; i < 3; i++)
		put_fault(&s, 17000 + 1000 * i, REGION + (8u << 20) + i * PAGE, 1000, 3, FL_FAULT_SOFT, 0, 100);
	/* 2 concurrent faults without a stack (an empty one), at 20..21 us */
	for (unsigned i = 0; i < 2; i++)
		put_fault(&s, 20000 + 1000 * i, REGION + (9u << 20) + i * PAGE, 1000, 4, FL_FAULT_CONCURRENT, 0, 100);
	synth_write(&s, dir);

	synth_init(&s, 2000, 1000000000ull + 1000000ull);
	put_stack(&s, 1, FL_STACK_EXACT_PC, 1, (uint64_t[]){ outer + 4 });
	for (unsigned i = 0; i < 4; i++)
		put_fault(&s, 1000 * (i + 1), REGION + i * PAGE, 2000, 1, FL_FAULT_FIRST_TOUCH, FL_FAULT_WRITE, 100);
	synth_write(&s, dir);
}

/* ----------------------------------------------------------------- running the report */

struct output {
	char *text;
	int status;
};

/* Runs `faultline report ARGS...` (NULL-terminated) into o->text. */
static void run_report(struct output *o, ...)
{
	char *argv[64];
	int argc = 0;
	va_list ap;
	struct report_options opts;
	FILE *out = tmpfile();

	argv[argc++] = "report";
	va_start(ap, o);
	for (char *a; (a = va_arg(ap, char *)) != NULL && argc < 63;)
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	o->status = report_parse(argc, argv, &opts);
	if (o->status == 0) {
		opts.progress = false;
		o->status = report_run(&opts, out);
		free(opts.skip);
	}
	size_t len = (size_t)ftell(out);
	o->text = calloc(1, len + 1);
	rewind(out);
	if (len && fread(o->text, 1, len, out) != len)
		o->status = 99;
	fclose(out);
}

/* CSV cell of the row whose FUNCTION column starts with NAME (or the row number ROW when NAME is NULL),
 * column COLUMN; "" when absent. Fields are plain (no quotes) in these tests. */
static const char *csv_cell(const char *csv, const char *name, int row, const char *column)
{
	static char cell[512];
	char header[2048], line[4096];
	const char *p = csv, *nl = strchr(p, '\n');
	int col = -1, fcol = -1, k = 0, r = 0;

	cell[0] = '\0';
	if (!nl || (size_t)(nl - p) >= sizeof(header))
		return cell;
	memcpy(header, p, (size_t)(nl - p));
	header[nl - p] = '\0';
	for (char *save, *t = strtok_r(header, ",", &save); t; t = strtok_r(NULL, ",", &save), k++) {
		if (strcmp(t, column) == 0)
			col = k;
		if (strcmp(t, "function") == 0)
			fcol = k;
	}
	for (p = nl + 1; col >= 0 && *p; p = nl + 1, r++) {
		char *fields[64];
		int n = 0;
		if (!(nl = strchr(p, '\n')) || (size_t)(nl - p) >= sizeof(line))
			break;
		memcpy(line, p, (size_t)(nl - p));
		line[nl - p] = '\0';
		for (char *q = line, *f = line;; q++) {
			if (*q == ',' || *q == '\0') {
				bool end = *q == '\0';
				*q = '\0';
				if (n < 64)
					fields[n++] = f;
				f = q + 1;
				if (end)
					break;
			}
		}
		bool match = name ? fcol < n && strncmp(fields[fcol], name, strlen(name)) == 0 : r == row;
		if (match && col < n) {
			snprintf(cell, sizeof(cell), "%s", fields[col]);
			return cell;
		}
	}
	return cell;
}

static long csv_int(const char *csv, const char *name, const char *column)
{
	const char *c = csv_cell(csv, name, 0, column);
	return *c ? strtol(c, NULL, 10) : -1;
}

static int csv_rows(const char *csv)
{
	int n = -1;
	for (const char *p = csv; (p = strchr(p, '\n')) != NULL; p++)
		n++;
	return n;
}

/* ----------------------------------------------------------------- tests */

static void test_map(void)
{
	struct report_map m = REPORT_MAP_INIT;
	const struct report_map_slot *s;
	uint64_t sum = 0;
	size_t count = 0;

	for (uint64_t i = 0; i < 100000; i++) {
		bool added;
		uint64_t *v = report_map_add(&m, i % 1000, i / 1000, &added);
		CHECK(v && added, "map add %" PRIu64 " new", i);
		*v = i + 1;
	}
	for (uint64_t i = 0; i < 100000; i += 7) {
		bool added;
		uint64_t *v = report_map_add(&m, i % 1000, i / 1000, &added);
		CHECK(v && !added && *v == i + 1, "map add %" PRIu64 " again", i);
		CHECK(report_map_find(&m, i % 1000, i / 1000) == v, "map find %" PRIu64, i);
	}
	CHECK(report_map_find(&m, 1000, 0) == NULL, "map find absent");
	for (size_t i = 0; (s = report_map_next(&m, &i)) != NULL; count++)
		sum += s->value;
	CHECK(count == 100000 && m.count == 100000, "map walk %zu entries", count);
	CHECK(sum == 100000ull * 100001 / 2, "map walk sum %" PRIu64, sum);
	report_map_free(&m);
	CHECK(report_map_find(&m, 1, 1) == NULL, "map empty after free");
}

static void test_rows(const char *dir)
{
	struct output o;

	/* by callsite (default) */
	run_report(&o, (char *)dir, "--format", "csv", NULL);
	CHECK(o.status == 0, "csv report exit %d", o.status);
	CHECK(csv_rows(o.text) == 5, "5 callsite rows, got %d:\n%s", csv_rows(o.text), o.text);
	CHECK(strncmp(o.text, "rank,faults,percent,first_touch,refault,soft,concurrent,reads,writes,function,file,line,binary,", 93) == 0,
	      "CSV header: %.120s", o.text);
	CHECK(strcmp(csv_cell(o.text, NULL, 0, "function"), "report_test_leaf") == 0, "top row leaf: %s", o.text);
	CHECK(csv_int(o.text, "report_test_leaf", "faults") == 10, "leaf faults");
	CHECK(csv_int(o.text, "report_test_leaf", "first_touch") == 10, "leaf first-touch");
	CHECK(csv_int(o.text, "report_test_leaf", "writes") == 10, "leaf writes");
	CHECK(csv_int(o.text, "report_test_leaf", "reads") == 0, "leaf reads");
	CHECK(strstr(csv_cell(o.text, "report_test_leaf", 0, "file"), "test_report.c") != NULL, "leaf file");
	CHECK(csv_int(o.text, "report_test_leaf", "line") > 0, "leaf line");
	CHECK(strcmp(csv_cell(o.text, "report_test_leaf", 0, "percent"), "40.00") == 0, "leaf percent 10/25");
	CHECK(strcmp(csv_cell(o.text, "report_test_leaf", 0, "task_clock_us_per_fault"), "0.100") == 0,
	      "leaf task-clock per fault: %s", csv_cell(o.text, "report_test_leaf", 0, "task_clock_us_per_fault"));
	CHECK(strcmp(csv_cell(o.text, "report_test_leaf", 0, "context_switches_per_fault"), "2.000") == 0,
	      "leaf context switches per fault");
	/* libc is skipped: the faults in strlen are middle's */
	CHECK(csv_int(o.text, "report_test_middle", "refault") == 6, "middle refaults (libc frame skipped)");
	CHECK(csv_int(o.text, "report_test_middle", "reads") == 6, "middle reads");
	CHECK(strcmp(csv_cell(o.text, "report_test_middle", 0, "task_clock_us_per_fault"), "1.000") == 0,
	      "middle task-clock per fault (thread 1001's own deltas)");
	CHECK(strcmp(csv_cell(o.text, "report_test_middle", 0, "context_switches_per_fault"), "0.000") == 0,
	      "middle context switches per fault");
	CHECK(csv_int(o.text, "report_test_outer", "faults") == 4, "outer faults (process 2000)");
	CHECK(csv_int(o.text, "<no stack>", "concurrent") == 2, "no-stack row");
	CHECK(strcmp(csv_cell(o.text, "<no stack>", 0, "task_clock_us_per_fault"), "0.100") == 0, "no-stack PMU");
	/* the all-libc stack falls back to its innermost frame, in libc */
	CHECK(strstr(csv_cell(o.text, NULL, 3, "binary"), "libc.so") != NULL, "all-skipped stack in libc: %s", o.text);
	CHECK(strcmp(csv_cell(o.text, NULL, 3, "soft"), "3") == 0, "all-skipped stack's soft faults");
	free(o.text);

	/* --no-skip: strlen's faults stay in libc; --skip middle: they go to outer */
	run_report(&o, (char *)dir, "--format", "csv", "--no-skip", NULL);
	CHECK(csv_int(o.text, "report_test_middle", "faults") == -1, "--no-skip: no middle row");
	CHECK(strstr(csv_cell(o.text, NULL, 1, "binary"), "libc.so") != NULL, "--no-skip: second row in libc:\n%s", o.text);
	CHECK(strcmp(csv_cell(o.text, NULL, 1, "faults"), "9") == 0, "--no-skip: strlen row 6 + 3 faults");
	free(o.text);
	run_report(&o, (char *)dir, "--format", "csv", "--skip", "report_test_mid", NULL);
	CHECK(csv_int(o.text, "report_test_outer", "faults") == 10, "--skip middle: outer gets 6 + 4:\n%s", o.text);
	free(o.text);

	/* --by alloc: sites are the callers of the allocations; unallocated faults by mapping */
	run_report(&o, (char *)dir, "--format", "csv", "--by", "alloc", NULL);
	CHECK(csv_int(o.text, "report_test_outer", "faults") == 10, "alloc site outer: %s", o.text);
	CHECK(csv_int(o.text, "report_test_outer", "allocs") == 1, "alloc site outer: one allocation");
	CHECK(csv_int(o.text, "report_test_middle", "faults") == 6, "alloc site middle (libc skipped)");
	CHECK(csv_int(o.text, "<unallocated>", "faults") == 9, "unallocated: 3 + 2 + process 2000's 4");
	free(o.text);

	/* --by thread, --by process, --by function */
	run_report(&o, (char *)dir, "--format", "csv", "--by", "thread", NULL);
	CHECK(csv_rows(o.text) == 3, "3 threads");
	CHECK(strcmp(csv_cell(o.text, NULL, 0, "tid"), "1000") == 0 && strcmp(csv_cell(o.text, NULL, 0, "faults"), "15") == 0,
	      "thread 1000 first with 15 faults:\n%s", o.text);
	CHECK(strcmp(csv_cell(o.text, NULL, 0, "function"), "report_test_leaf") == 0, "thread 1000's top callsite");
	free(o.text);
	run_report(&o, (char *)dir, "--format", "csv", "--by", "process", NULL);
	CHECK(csv_rows(o.text) == 2 && strcmp(csv_cell(o.text, NULL, 0, "pid"), "1000") == 0 &&
	      strcmp(csv_cell(o.text, NULL, 1, "faults"), "4") == 0, "processes:\n%s", o.text);
	free(o.text);
	run_report(&o, (char *)dir, "--format", "csv", "--by", "function", NULL);
	CHECK(csv_int(o.text, "report_test_leaf", "faults") == 10 && csv_rows(o.text) == 5, "functions:\n%s", o.text);
	free(o.text);

	/* filters */
	run_report(&o, (char *)dir, "--format", "csv", "--kind", "refault", NULL);
	CHECK(csv_rows(o.text) == 1 && csv_int(o.text, "report_test_middle", "faults") == 6, "--kind refault:\n%s", o.text);
	free(o.text);
	run_report(&o, (char *)dir, "--format", "csv", "--from", "0.000011", "--to", "0.000017", NULL);
	CHECK(csv_rows(o.text) == 1 && csv_int(o.text, "report_test_middle", "faults") == 6, "--from/--to:\n%s", o.text);
	CHECK(strcmp(csv_cell(o.text, NULL, 0, "percent"), "100.00") == 0, "percent of the selection");
	free(o.text);
	run_report(&o, (char *)dir, "--format", "csv", "--pid", "2000", NULL);
	CHECK(csv_rows(o.text) == 1 && csv_int(o.text, "report_test_outer", "faults") == 4, "--pid 2000:\n%s", o.text);
	free(o.text);
	run_report(&o, (char *)dir, "--pid", "3000", NULL);
	CHECK(o.status == 1, "--pid of an absent process: exit %d", o.status);
	free(o.text);
	run_report(&o, (char *)dir, "--format", "csv", "--top", "2", NULL);
	CHECK(csv_rows(o.text) == 2, "--top 2");
	free(o.text);

	/* locality: the leaf touched pages 0..9 in order */
	run_report(&o, (char *)dir, "--format", "csv", "--locality", NULL);
	CHECK(strcmp(csv_cell(o.text, "report_test_leaf", 0, "spatial"), "1.0000") == 0, "leaf spatial 1:\n%s", o.text);
	CHECK(strcmp(csv_cell(o.text, "report_test_leaf", 0, "temporal"), "0.0000") == 0, "leaf temporal 0");
	free(o.text);

	/* JSON: same numbers, plus the stack with the callsite marked */
	run_report(&o, (char *)dir, "--format", "json", NULL);
	CHECK(o.status == 0 && o.text[0] == '[', "json starts with [");
	CHECK(strstr(o.text, "\"function\": \"report_test_leaf\"") != NULL, "json leaf row");
	CHECK(strstr(o.text, "\"faults\": 10, \"percent\": 40.00, \"first_touch\": 10") != NULL, "json leaf counts");
	const char *middle_row = strstr(o.text, "\"faults\": 6,");
	CHECK(middle_row && strstr(middle_row, "\"callsite\": true") != NULL, "json middle row's stack marks the callsite");
	CHECK(middle_row && strstr(middle_row, "\"skipped\": true") != NULL, "json middle row's stack marks libc skipped");
	free(o.text);

	/* the table */
	run_report(&o, (char *)dir, NULL);
	CHECK(o.status == 0 && strstr(o.text, "# faultline report of ") == o.text, "table header");
	CHECK(strstr(o.text, "# command:         synth 1000") != NULL, "table command");
	CHECK(strstr(o.text, "# limits:          -L 4 MiB, -M 1 GiB") != NULL, "table limits:\n%s", o.text);
	CHECK(strstr(o.text, "# PMU events:      task-clock, page-faults, context-switches (software)") != NULL, "table PMU");
	CHECK(strstr(o.text, "# faults:          25 (first-touch 14, refault 6, soft 3, concurrent 2)") != NULL, "table totals");
	CHECK(strstr(o.text, "report_test_leaf") != NULL && strstr(o.text, "40.00%") != NULL, "table leaf row");
	free(o.text);
}

static void test_bad_input(const char *base)
{
	char dir[PATH_MAX], path[PATH_MAX + 32];
	struct output o;
	struct stat st;

	snprintf(dir, sizeof(dir), "%s/missing", base);
	run_report(&o, dir, NULL);
	CHECK(o.status == 1 && o.text[0] == '\0', "missing dir: exit %d", o.status);
	free(o.text);
	snprintf(dir, sizeof(dir), "%s/empty", base);
	mkdir(dir, 0755);
	run_report(&o, dir, NULL);
	CHECK(o.status == 1, "empty dir: exit %d", o.status);
	free(o.text);
	run_report(&o, "--by", "nonsense", dir, NULL);
	CHECK(o.status == 2, "bad --by: exit %d", o.status);
	free(o.text);
	run_report(&o, "--from", "2", "--to", "1", dir, NULL);
	CHECK(o.status == 2, "--to before --from: exit %d", o.status);
	free(o.text);

	/* a faults file cut in the middle of its last record */
	snprintf(dir, sizeof(dir), "%s/cut", base);
	make_small(dir);
	snprintf(path, sizeof(path), "%s/1000/faults", dir);
	stat(path, &st);
	CHECK(truncate(path, st.st_size - 5) == 0, "truncate");
	run_report(&o, dir, NULL);
	CHECK(o.status == 0, "cut recording: exit %d", o.status);
	CHECK(strstr(o.text, "# warning: ") && strstr(o.text, "1000/faults: truncated"), "cut: warning in header:\n%s", o.text);
	CHECK(strstr(o.text, "# faults:          24 ") != NULL, "cut: one fault fewer");
	free(o.text);
}

/* ----------------------------------------------------------------- a large recording, timed */

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* This program's executable code, from its maps. */
static void own_text(uint64_t *lo, uint64_t *hi)
{
	uint64_t here = fn(report_test_leaf);
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1024];
	*lo = *hi = 0;
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long a, b;
		char perms[8];
		if (sscanf(line, "%llx-%llx %7s", &a, &b, perms) == 3 && perms[2] == 'x' && here >= a && here < b) {
			*lo = a;
			*hi = b;
		}
	}
	if (f)
		fclose(f);
}

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void make_large(const char *dir, uint64_t nfaults, uint32_t nstacks)
{
	struct synth s;
	uint64_t lo, hi, state = 0x1234567;
	own_text(&lo, &hi);
	synth_init(&s, 4000, 5000000000ull);
	for (uint32_t id = 1; id <= nstacks; id++) {
		uint64_t frames[8];
		for (int k = 0; k < 8; k++)
			frames[k] = lo + rng(&state) % (hi - lo);
		put_stack(&s, id, FL_STACK_EXACT_PC, 8, frames);
	}
	put_alloc(&s, 1, FL_ALLOC_MALLOC, REGION, RSIZE / 2, 1, 1);
	for (uint64_t i = 0; i < nfaults; i++) {
		uint32_t stack = 1 + (uint32_t)(rng(&state) % nstacks);
		uint64_t page = (stack * 64 + i % 64) % (RSIZE / PAGE);
		put_fault(&s, 1000 + i * 100, REGION + page * PAGE, 4000 + (uint32_t)(i & 1), stack,
			  (uint8_t)(1 + i % 2), (uint8_t)(i % 3 == 0), 100);
	}
	synth_write(&s, dir);
}

/* Symbolizes every frame of every stack of DIR (as export does): distinct PCs per second. */
static void time_symbolize(const char *dir)
{
	struct fl_recording *rec;
	struct callsite_skip skip;
	struct callsite_table *table;
	struct sym_stats st;
	char err[512];
	size_t frames = 0;

	if (fl_recording_open(dir, &rec, err, sizeof(err)) < 0 || callsite_skip_init(&skip, true, NULL, 0, err, sizeof(err)) < 0) {
		CHECK(0, "%s", err);
		return;
	}
	table = callsite_table_new(rec, &skip, NULL, NULL);
	double t0 = now();
	for (size_t p = 0; table && p < rec->nprocs; p++) {
		for (size_t i = 0; i < rec->procs[p].nstacks; i++) {
			const struct callsite_frame *f;
			size_t n, callsite;
			CHECK(callsite_expand(table, p, &rec->procs[p].stacks[i], &f, &n, &callsite) == 0, "expand");
			frames += n;
		}
	}
	double t1 = now();
	callsite_sym_stats(table, &st);
	printf("# symbolize every stack: %" PRIu64 " distinct PCs (%zu source frames) in %.2f s: %.0f distinct PCs/s\n",
	       st.distinct, frames, t1 - t0, (double)st.distinct / (t1 - t0));
	callsite_table_free(table);
	callsite_skip_free(&skip);
	fl_recording_close(rec);
}

static void time_large(const char *dir, uint64_t nfaults, uint32_t nstacks)
{
	struct output o;
	struct rusage ru;
	double t0 = now();

	make_large(dir, nfaults, nstacks);
	double t1 = now();
	run_report(&o, (char *)dir, NULL);
	double t2 = now();
	CHECK(o.status == 0 && strstr(o.text, "# rows:            by callsite;") != NULL, "large report");
	const char *sym = strstr(o.text, "# symbolized:");
	unsigned long long pcs = 0;
	if (sym)
		sscanf(sym, "# symbolized: %llu", &pcs);
	free(o.text);
	run_report(&o, (char *)dir, "--locality", "--format", "json", NULL);
	double t3 = now();
	CHECK(o.status == 0 && o.text[0] == '[', "large json report");
	free(o.text);
	getrusage(RUSAGE_SELF, &ru);
	printf("# large: %" PRIu64 " faults, %u stacks: written in %.2f s; report %.2f s (%llu distinct PCs, "
	       "%.0f faults/s); --locality --format json %.2f s; peak RSS %ld MiB\n", nfaults, nstacks, t1 - t0, t2 - t1,
	       pcs, (double)nfaults / (t2 - t1), t3 - t2, ru.ru_maxrss / 1024);
	time_symbolize(dir);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int main(int argc, char **argv)
{
	char base[] = "/tmp/faultline-test-report.XXXXXX", dir[PATH_MAX];
	volatile int sink = report_test_outer(1);
	(void)sink;

	if (argc == 5 && strcmp(argv[1], "--bench") == 0) {
		time_large(argv[4], strtoull(argv[2], NULL, 10), (uint32_t)strtoul(argv[3], NULL, 10));
		return failures ? 1 : 0;
	}
	if (!mkdtemp(base)) {
		perror("mkdtemp");
		return 2;
	}
	test_map();
	printf("ok report_map\n");
	snprintf(dir, sizeof(dir), "%s/small", base);
	make_small(dir);
	test_rows(dir);
	printf("ok rows, filters, PMU deltas, skip list, CSV/JSON/table on a synthetic recording\n");
	test_bad_input(base);
	printf("ok bad input\n");
	snprintf(dir, sizeof(dir), "%s/large", base);
	time_large(dir, 200000, 10000);
	if (nftw(base, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
		fprintf(stderr, "could not remove %s: %s\n", base, strerror(errno));
	if (failures) {
		fprintf(stderr, "%u check(s) failed\n", failures);
		return 1;
	}
	printf("all report tests passed\n");
	return 0;
}
