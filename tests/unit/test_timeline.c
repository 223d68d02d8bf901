/* test_timeline.c: the timeline reader and timeline.svg on made-up files.
 *   - records of several writers come back sorted by time; a file cut inside a record keeps its
 *     complete records with a warning; a longer record_size (a newer writer) is read by its prefix;
 *   - a bad magic (at its first wrong byte), the other byte order, another pid, an unknown reason
 *     are errors naming the file and offset;
 *   - no file: present false, no error;
 *   - the SVG: one strip per counter present, the far-read strip's total = the last value, a rate
 *     drawn per interval, the axis given by end_ns (as the heatmap's). */
#include "check.h"
#include "trace_header.h"
#include "timeline.h"
#include "timeline_svg.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/test_timeline.XXXXXX";

static void write_file(uint32_t pid, uint64_t magic, uint32_t record_size, const struct fl_timeline_record *recs,
		       size_t n, size_t cut)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, FL_FILE_NAME_TIMELINE);
	FILE *f = fopen(path, "w");
	REQUIRE(f != NULL, "fopen %s", path);
	struct fl_file_header h = trace_header(FL_TRACE_VERSION, FL_FILE_TIMELINE, record_size, pid);
	h.start_ns = 1000;
	h.magic = magic; /* the test's own: a bad one, or the other byte order */
	fwrite(&h, sizeof(h), 1, f);
	char pad[64] = { 0 };
	for (size_t i = 0; i < n; i++) {
		fwrite(&recs[i], sizeof(recs[i]), 1, f);
		fwrite(pad, record_size - sizeof(recs[i]), 1, f);
	}
	fwrite(pad, cut, 1, f);
	fclose(f);
}

static struct fl_timeline_record sample(uint64_t t, uint32_t tid, uint64_t far_read, uint64_t resident)
{
	struct fl_timeline_record r = { .time_ns = t, .tid = tid, .reason = FL_TL_PERIODIC };
	r.values[FL_TL_FAR_READ_BYTES] = far_read;
	r.values[FL_TL_RESIDENT_PAGES] = resident;
	r.valid = (1u << FL_TL_FAR_READ_BYTES) | (1u << FL_TL_RESIDENT_PAGES);
	return r;
}

int main(void)
{
	struct fl_process proc;
	struct fl_timeline tl;
	char err[1024];

	REQUIRE(mkdtemp(dir) != NULL, "mkdtemp");
	memset(&proc, 0, sizeof(proc));
	proc.dir = dir;
	proc.pid = 42;
	snprintf(proc.name, sizeof(proc.name), "42");
	proc.start_ns = 1000;

	CHECK(fl_timeline_read(&proc, &tl, err, sizeof(err)) == 0 && !tl.present && tl.nrecs == 0, "no file: no timeline, no error");

	struct fl_timeline_record recs[3] = { sample(30000000, 0, 8192, 10), sample(10000000, 0, 0, 5),
					      sample(20000000, 0, 4096, 7) };
	write_file(42, FL_TRACE_MAGIC, sizeof(recs[0]), recs, 3, 100);
	REQUIRE(fl_timeline_read(&proc, &tl, err, sizeof(err)) == 0, "read: %s", err);
	CHECK(tl.present && tl.nrecs == 3, "3 complete records (%zu)", tl.nrecs);
	CHECK(tl.recs[0].time_ns == 10000000 && tl.recs[1].time_ns == 20000000 && tl.recs[2].time_ns == 30000000,
	      "sorted by time");
	CHECK(strstr(tl.warning, "truncated") != NULL, "a cut tail is a warning: %s", tl.warning);

	/* the SVG of this series */
	uint64_t x[3] = { 10000000, 20000000, 30000000 };
	struct timeline_series s = { "pid 42", tl.recs, x, 3 };
	struct timeline_svg_options o = { .end_ns = 40000000, .plot_width = 840 };
	char *svg = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&svg, &len);
	REQUIRE(out != NULL, "open_memstream");
	REQUIRE(timeline_svg_write(&s, 1, &o, out, NULL) == 0, "timeline_svg_write");
	fclose(out);
	CHECK(strstr(svg, "data-counter=\"far_read_bytes\" data-total=\"8192\"") != NULL, "far-read strip, total 8192");
	CHECK(strstr(svg, "data-counter=\"resident_pages\" data-total=\"10\"") != NULL, "resident strip, highest 10");
	CHECK(strstr(svg, "data-counter=\"task_clock_ns\"") == NULL, "no strip for a counter no sample holds");
	CHECK(strstr(svg, "data-ns-per-px=\"47619.048\"") != NULL, "the axis: 40 ms over 840 px");
	/* 4096 bytes in each 10 ms interval: 409,600 bytes per second */
	CHECK(strstr(svg, "data-max=\"409600\"") != NULL, "far reads drawn as a rate per second");
	free(svg);
	fl_timeline_free(&tl);

	/* a newer writer's longer records: read by their known prefix */
	write_file(42, FL_TRACE_MAGIC, sizeof(recs[0]) + 16, recs, 3, 0);
	CHECK(fl_timeline_read(&proc, &tl, err, sizeof(err)) == 0 && tl.nrecs == 3 && !tl.warning[0] &&
	      tl.recs[2].values[FL_TL_FAR_READ_BYTES] == 8192, "160-byte records read by their 144-byte prefix");
	fl_timeline_free(&tl);

	write_file(42, FL_TRACE_MAGIC ^ 0xff00000000000000ull, sizeof(recs[0]), recs, 3, 0);
	CHECK(fl_timeline_read(&proc, &tl, err, sizeof(err)) < 0 && strstr(err, "offset 7: bad magic"),
	      "bad magic, named at its first wrong byte: %s", err);
	write_file(42, FL_TRACE_MAGIC_SWAPPED, sizeof(recs[0]), recs, 3, 0);
	CHECK(fl_timeline_read(&proc, &tl, err, sizeof(err)) < 0 && strstr(err, "offset 0: written in the other byte order"),
	      "the other byte order: %s", err);
	write_file(43, FL_TRACE_MAGIC, sizeof(recs[0]), recs, 3, 0);
	CHECK(fl_timeline_read(&proc, &tl, err, sizeof(err)) < 0 && strstr(err, "pid 43"), "another pid: %s", err);
	recs[1].reason = 9;
	write_file(42, FL_TRACE_MAGIC, sizeof(recs[0]), recs, 3, 0);
	CHECK(fl_timeline_read(&proc, &tl, err, sizeof(err)) < 0 && strstr(err, "offset 220: timeline record with reason 9"),
	      "unknown reason: %s", err);

	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, FL_FILE_NAME_TIMELINE);
	unlink(path);
	rmdir(dir);
	return check_summary("test_timeline");
}
