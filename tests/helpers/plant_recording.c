/* plant_recording.c: writes a planted recording of N faults straight to disk, in the current
 * format (framed, compressed faults and contexts), without running anything — so readers can be
 * tested and measured on recordings of any size in seconds.
 *
 * usage: plant_recording DIR NFAULTS
 *
 * One process (pid 4242) with 2 handlers, 4 threads, 4 objects of 1 GiB mapped at the start, 64
 * stacks. Fault i (seq i, time 1000 + 100 i ns) is taken by thread 1000 + i % 4 on object i % 4,
 * of kind refault when i % 7 == 0, else soft when i % 13 == 0, else first-touch; stack 1 + (i /
 * 1000) % 64. Every third fault has a context (its stack, task-clock). The handlers' chunks of
 * 2048 records are written pairwise swapped, as handlers' flushes interleave, so a reader must put
 * them in order. Prints the exact counts a reader must find, one "name value" a line. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zstd.h>

#include <faultline/record_codec.h>
#include <faultline/trace.h>
#include "../unit/trace_header.h"

#define PID 4242
#define HANDLERS 2
#define THREADS 4
#define OBJECTS 4
#define STACKS 64
#define CHUNK 2048
#define FRAME_RECORDS 16384
#define PAGE 4096ull
#define OBJECT_BYTES (1ull << 30)
#define REGION_START 0x7f0000000000ull
#define REGION_SIZE (OBJECTS * OBJECT_BYTES)
#define START_NS 1000000000ull

static void die(const char *what)
{
	fprintf(stderr, "plant_recording: %s: %s\n", what, strerror(errno));
	exit(1);
}

static FILE *create(const char *dir, const char *name)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (!f)
		die(path);
	return f;
}

static void put_header(FILE *f, uint32_t kind, uint32_t record_size)
{
	struct fl_file_header h = trace_header(FL_TRACE_VERSION, kind, record_size, PID);
	h.page_size = (uint32_t)PAGE;
	h.start_ns = START_NS;
	h.region_start = REGION_START;
	h.region_size = REGION_SIZE;
	if (fwrite(&h, sizeof(h), 1, f) != 1)
		die("write a header");
}

/* A framed file being written: records encoded into a frame, compressed when it is full. */
struct framed {
	FILE *f;
	uint32_t kind;
	struct fl_codec_state st;
	unsigned char *plain, *packed;
	size_t len, packed_cap;
	uint32_t n;
};

static void framed_flush(struct framed *w)
{
	if (w->n == 0)
		return;
	size_t z = ZSTD_compress(w->packed, w->packed_cap, w->plain, w->len, 1);
	if (ZSTD_isError(z)) {
		fprintf(stderr, "plant_recording: zstd: %s\n", ZSTD_getErrorName(z));
		exit(1);
	}
	struct fl_frame_header fh = { FL_FRAME_MAGIC, w->n, (uint32_t)z, (uint32_t)w->len };
	if (fwrite(&fh, sizeof(fh), 1, w->f) != 1 || fwrite(w->packed, z, 1, w->f) != 1)
		die("write a frame");
	memset(&w->st, 0, sizeof(w->st));
	w->len = 0;
	w->n = 0;
}

static void framed_add(struct framed *w, const void *rec)
{
	if (w->n == FRAME_RECORDS || w->len + FL_CODEC_RECORD_MAX > FL_FRAME_ENCODED_MAX)
		framed_flush(w);
	w->len += fl_codec_encode(w->kind, &w->st, rec, w->plain + w->len);
	w->n++;
}

static void framed_open(struct framed *w, const char *dir, const char *name, uint32_t kind)
{
	memset(w, 0, sizeof(*w));
	w->f = create(dir, name);
	w->kind = kind;
	w->plain = malloc(FL_FRAME_ENCODED_MAX);
	w->packed_cap = ZSTD_compressBound(FL_FRAME_ENCODED_MAX);
	w->packed = malloc(w->packed_cap);
	if (!w->plain || !w->packed)
		die("malloc");
	put_header(w->f, kind, (uint32_t)fl_codec_record_size(kind));
}

static void framed_close(struct framed *w)
{
	framed_flush(w);
	if (fclose(w->f) != 0)
		die("close a framed file");
	free(w->plain);
	free(w->packed);
}

static uint8_t kind_of(uint64_t i)
{
	return i % 7 == 0 ? FL_FAULT_REFAULT : i % 13 == 0 ? FL_FAULT_SOFT : FL_FAULT_FIRST_TOUCH;
}

static uint32_t stack_of(uint64_t i)
{
	return 1 + (uint32_t)((i / 1000) % STACKS);
}

static void fault_of(uint64_t i, struct fl_fault_record *r)
{
	uint64_t object = i % OBJECTS, page = (i * 7919) % (OBJECT_BYTES / PAGE);
	memset(r, 0, sizeof(*r));
	r->time_ns = 1000 + 100 * i;
	r->addr = REGION_START + object * OBJECT_BYTES + page * PAGE + 8 * (i % 512);
	r->seq = i;
	r->tid = 1000 + (uint32_t)(i % THREADS);
	r->stack_id = stack_of(i);
	r->kind = kind_of(i);
	r->flags = FL_FAULT_OBJECT | (i % 2 ? FL_FAULT_WRITE : 0);
	r->handler = (uint8_t)((i / CHUNK) % HANDLERS);
	r->obj_addr = REGION_START + object * OBJECT_BYTES;
	r->obj_size = OBJECT_BYTES;
	r->obj_alloc_id = (uint32_t)object + 1;
	r->obj_stack_id = 1;
	r->thread_time_ns = 50 * i + 1;
	r->service_ns = 1000 + (uint32_t)(i % 5000);
	r->wait_ns = i % 4 == 3 ? 0 : 300 + (uint32_t)(i * 7 % 90000); /* a quarter without a wait */
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: plant_recording DIR NFAULTS\n");
		return 2;
	}
	const char *top = argv[1];
	uint64_t n = strtoull(argv[2], NULL, 10);
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/%d", top, PID);
	if ((mkdir(top, 0755) < 0 && errno != EEXIST) || mkdir(dir, 0755) < 0)
		die(dir);

	FILE *meta = create(dir, FL_FILE_NAME_META);
	fprintf(meta, "{\n  \"format_version\": %d,\n  \"pid\": %d,\n  \"exe\": \"/planted/recording\",\n"
		"  \"cmdline\": [\"/planted/recording\", \"%llu\"],\n  \"local_limit_bytes\": 67108864,\n"
		"  \"max_bytes\": %llu,\n  \"handlers\": %d,\n  \"policy\": \"clock\",\n  \"page_size\": %llu,\n"
		"  \"region_start\": %llu,\n  \"region_size\": %llu,\n  \"start_ns\": %llu,\n  \"sample\": 1,\n"
		"  \"alloc_log\": \"sampled\",\n  \"pmu_events\": [\"task-clock\"],\n  \"pmu_kind\": \"software\"\n}\n",
		FL_TRACE_VERSION, PID, (unsigned long long)n, (unsigned long long)REGION_SIZE, HANDLERS,
		PAGE, REGION_START, (unsigned long long)REGION_SIZE, START_NS);
	if (fclose(meta) != 0)
		die("meta.json");

	FILE *maps = create(dir, FL_FILE_NAME_MAPS); /* one snapshot, of no file: frames stay numbers */
	fprintf(maps, "# maps %llu start\n", (unsigned long long)START_NS);
	if (fclose(maps) != 0)
		die("maps");

	FILE *stacks = create(dir, FL_FILE_NAME_STACKS);
	put_header(stacks, FL_FILE_STACKS, 0);
	for (uint32_t s = 1; s <= STACKS; s++) {
		uint64_t frames[3] = { 0x401000 + 16 * s, 0x402000 + s, 0x403000 };
		struct fl_stack_record r = { s, 3, FL_STACK_EXACT_PC, s * 0x9e3779b97f4a7c15ull };
		if (fwrite(&r, sizeof(r), 1, stacks) != 1 || fwrite(frames, sizeof(frames), 1, stacks) != 1)
			die("stacks");
	}
	if (fclose(stacks) != 0)
		die("stacks");

	FILE *allocs = create(dir, FL_FILE_NAME_ALLOCS);
	put_header(allocs, FL_FILE_ALLOCS, sizeof(struct fl_alloc_record));
	for (uint32_t o = 0; o < OBJECTS; o++) {
		struct fl_alloc_record a = { .time_ns = 10 + o, .addr = REGION_START + o * OBJECT_BYTES, .size = OBJECT_BYTES,
					     .tid = 1000, .stack_id = 1, .alloc_id = o + 1, .kind = FL_ALLOC_MMAP };
		if (fwrite(&a, sizeof(a), 1, allocs) != 1)
			die("allocs");
	}
	if (fclose(allocs) != 0)
		die("allocs");

	/* faults: chunks of CHUNK records; chunk pairs written swapped (the later chunk first) */
	struct framed faults, contexts;
	uint64_t kinds[FL_FAULT_KIND_MAX + 1] = { 0 }, with_context = 0;
	framed_open(&faults, dir, FL_FILE_NAME_FAULTS, FL_FILE_FAULTS);
	framed_open(&contexts, dir, FL_FILE_NAME_CONTEXTS, FL_FILE_CONTEXTS);
	uint64_t nchunks = (n + CHUNK - 1) / CHUNK;
	for (uint64_t c = 0; c < nchunks; c++) {
		uint64_t chunk = c ^ 1; /* 1, 0, 3, 2, ... */
		if (chunk >= nchunks)
			chunk = c;
		for (uint64_t i = chunk * CHUNK; i < (chunk + 1) * CHUNK && i < n; i++) {
			struct fl_fault_record r;
			fault_of(i, &r);
			framed_add(&faults, &r);
			kinds[r.kind]++;
			if (i % 3 == 0) {
				struct fl_fault_context ctx = { .seq = i, .stack_id = r.stack_id, .tid = r.tid, .npmu = 1,
								.pmu = { r.thread_time_ns } };
				framed_add(&contexts, &ctx);
				with_context++;
			}
		}
	}
	framed_close(&faults);
	framed_close(&contexts);

	FILE *stats = create(dir, FL_FILE_NAME_STATS);
	fprintf(stats, "{\n  \"pid\": %d,\n  \"faults_total\": %llu,\n  \"faults_first_touch\": %llu,\n"
		"  \"faults_refault\": %llu,\n  \"faults_soft\": %llu,\n  \"faults_concurrent\": 0,\n"
		"  \"records_dropped\": 0,\n  \"wall_ns\": %llu\n}\n", PID, (unsigned long long)n,
		(unsigned long long)kinds[FL_FAULT_FIRST_TOUCH], (unsigned long long)kinds[FL_FAULT_REFAULT],
		(unsigned long long)kinds[FL_FAULT_SOFT], (unsigned long long)(1000 + 100 * n));
	if (fclose(stats) != 0)
		die("stats.json");
	printf("faults %llu\nfirst_touch %llu\nrefault %llu\nsoft %llu\ncontexts %llu\nper_thread %llu\n",
	       (unsigned long long)n, (unsigned long long)kinds[FL_FAULT_FIRST_TOUCH],
	       (unsigned long long)kinds[FL_FAULT_REFAULT], (unsigned long long)kinds[FL_FAULT_SOFT],
	       (unsigned long long)with_context, (unsigned long long)(n / THREADS));
	return 0;
}
