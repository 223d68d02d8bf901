/* test_side_file.c: the one reader of side files (tools/trace/side_file.c, on trace_file.c's header
 * check), through the evictions reader, on made-up files:
 *   - no file: present false, no error; a file cut inside its header: present, no records, a warning;
 *   - records of several writers come back in time order; a cut tail keeps the complete records
 *     and warns with the offset of the cut; a longer record_size is read by its known prefix;
 *   - a header that disagrees with the process (region, start_ns, pid), a version before side files
 *     existed, the wrong kind, and a bad record are errors naming the file and the field's offset. */
#include "check.h"
#include "trace_header.h"
#include "evictions.h"

#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/test_side_file.XXXXXX";
static char path[256];

#define REGION 0x10000000ull

static struct fl_file_header header(void)
{
	struct fl_file_header h = trace_header(2 /* fixed-size records */, FL_FILE_EVICTIONS,
					       sizeof(struct fl_evict_record), 42);
	h.start_ns = 1000;
	h.region_start = REGION;
	h.region_size = 1 << 20;
	return h;
}

/* Writes the header, N records (padded to the header's record_size), then CUT bytes of a partial
 * record; or only the first HEADER_BYTES of the header when that is below 64. */
static void write_file(const struct fl_file_header *h, const struct fl_evict_record *recs, size_t n, size_t cut,
		       size_t header_bytes)
{
	char pad[64] = { 0 };
	FILE *f = fopen(path, "w");
	REQUIRE(f != NULL, "fopen %s", path);
	fwrite(h, header_bytes < sizeof(*h) ? header_bytes : sizeof(*h), 1, f);
	for (size_t i = 0; i < n && header_bytes >= sizeof(*h); i++) {
		fwrite(&recs[i], sizeof(recs[i]), 1, f);
		fwrite(pad, h->record_size - sizeof(recs[i]), 1, f);
	}
	fwrite(pad, cut, 1, f);
	fclose(f);
}

/* Loads; returns the reader's status, with err. */
static int load(const struct fl_process *proc, struct fl_evictions *ev, char *err, size_t errlen)
{
	err[0] = '\0';
	return fl_evictions_load(proc, FL_EVICTIONS_BY_TIME, ev, err, errlen);
}

int main(void)
{
	struct fl_process proc;
	struct fl_evictions ev;
	char err[1024];

	REQUIRE(mkdtemp(dir) != NULL, "mkdtemp");
	snprintf(path, sizeof(path), "%s/%s", dir, FL_FILE_NAME_EVICTIONS);
	memset(&proc, 0, sizeof(proc));
	proc.dir = dir;
	proc.pid = 42;
	snprintf(proc.name, sizeof(proc.name), "42");
	proc.start_ns = 1000;
	proc.page_size = 4096;
	proc.region_start = REGION;
	proc.region_size = 1 << 20;

	CHECK(load(&proc, &ev, err, sizeof(err)) == 0 && !ev.present && ev.n == 0, "no file: none, no error (%s)", err);

	struct fl_file_header h = header();
	write_file(&h, NULL, 0, 0, 20);
	CHECK(load(&proc, &ev, err, sizeof(err)) == 0 && ev.present && ev.n == 0 &&
	      strstr(ev.warning, "truncated at offset 20, inside its 64-byte header"), "cut in the header: %s", ev.warning);

	struct fl_evict_record recs[3] = {
		{ .time_ns = 30, .addr = REGION + 8192, .decision = FL_EVICT_FIFO },
		{ .time_ns = 10, .addr = REGION, .decision = FL_EVICT_FIFO, .flags = FL_EVICT_DIRTY },
		{ .time_ns = 20, .addr = REGION + 4096, .decision = FL_EVICT_CLOCK_TRIAL },
	};
	write_file(&h, recs, 3, 10, 64);
	REQUIRE(load(&proc, &ev, err, sizeof(err)) == 0, "read: %s", err);
	CHECK(ev.present && ev.n == 3 && ev.recs[0].time_ns == 10 && ev.recs[1].time_ns == 20 && ev.recs[2].time_ns == 30,
	      "3 records in time order (%zu)", ev.n);
	CHECK(strstr(ev.warning, "truncated at offset 136 (3 complete records; 10 bytes") != NULL, "cut tail: %s",
	      ev.warning);
	fl_evictions_free(&ev);
	REQUIRE(fl_evictions_load(&proc, FL_EVICTIONS_AS_WRITTEN, &ev, err, sizeof(err)) == 0, "read: %s", err);
	CHECK(ev.n == 3 && ev.recs[0].time_ns == 30 && ev.recs[1].time_ns == 10 && ev.recs[2].time_ns == 20 &&
	      ev.file.map.data && !ev.sorted, "as written: file order, in the mapping (%zu)", ev.n);
	fl_evictions_free(&ev);

	h.record_size = sizeof(struct fl_evict_record) + 16;
	write_file(&h, recs, 3, 0, 64);
	CHECK(load(&proc, &ev, err, sizeof(err)) == 0 && ev.n == 3 && !ev.warning[0] && ev.recs[2].addr == REGION + 8192,
	      "40-byte records read by their 24-byte prefix (%s)", err);
	fl_evictions_free(&ev);
	CHECK(fl_evictions_load(&proc, FL_EVICTIONS_AS_WRITTEN, &ev, err, sizeof(err)) == 0 && ev.n == 3 &&
	      ev.recs[0].addr == REGION + 8192 && ev.recs[1].flags == FL_EVICT_DIRTY && !ev.file.map.data,
	      "40-byte records as written: copied by their prefix (%s)", err);
	fl_evictions_free(&ev);

	h = header();
	h.region_start = REGION + 4096;
	write_file(&h, recs, 3, 0, 64);
	CHECK(load(&proc, &ev, err, sizeof(err)) < 0 && strstr(err, "offset 40: header region_start") && !ev.present,
	      "another region: %s", err);
	h = header();
	h.start_ns = 999;
	write_file(&h, recs, 3, 0, 64);
	CHECK(load(&proc, &ev, err, sizeof(err)) < 0 && strstr(err, "offset 32: header start_ns 999"), "another clock: %s",
	      err);
	h = header();
	h.pid = 43;
	write_file(&h, recs, 3, 0, 64);
	CHECK(load(&proc, &ev, err, sizeof(err)) < 0 && strstr(err, "offset 24: pid 43"), "another pid: %s", err);
	h = header();
	h.version = 1;
	write_file(&h, recs, 3, 0, 64);
	CHECK(load(&proc, &ev, err, sizeof(err)) < 0 && strstr(err, "offset 8: format version 1 has no evictions file"),
	      "version 1: %s", err);
	h = header();
	h.kind = FL_FILE_TIMELINE;
	write_file(&h, recs, 3, 0, 64);
	CHECK(load(&proc, &ev, err, sizeof(err)) < 0 && strstr(err, "offset 12: file kind 7 (timeline), want 8 (evictions)"),
	      "the wrong kind: %s", err);
	h = header();
	recs[1].addr = REGION + 100;
	write_file(&h, recs, 3, 0, 64);
	CHECK(load(&proc, &ev, err, sizeof(err)) < 0 && strstr(err, path) &&
	      strstr(err, "offset 96: address 0x10000064 is not a page"), "a bad record: %s", err);

	unlink(path);
	rmdir(dir);
	return check_summary("test_side_file");
}
