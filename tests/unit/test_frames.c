/* test_frames.c: format 3's framed files (inc/faultline/trace.h, "Framed files"): the record codec
 * (lib/record_codec.c) and the reader's decoder (tools/trace/frame_decode.c), on made-up frames:
 *   - faults, contexts and evictions with extreme values (deltas that wrap, all-ones fields) come
 *     back field for field, over several frames;
 *   - a frame cut short, a bad magic, a count that disagrees with the encoded bytes, corrupt zstd
 *     data and bytes left over each keep the frames before it and say so, naming the file, the
 *     frame and its offset;
 *   - encoded records stay small: a run of sequential first touches takes < 8 bytes a fault
 *     compressed. */
#include "check.h"
#include "trace_header.h"
#include "frame_decode.h"

#include <faultline/record_codec.h>

#include <string.h>
#include <sys/mman.h>
#include <zstd.h>

#define MAXBUF (1 << 22)
static unsigned char file[MAXBUF];
static size_t file_len;

static void start_file_version(uint32_t kind, uint32_t version)
{
	struct fl_file_header h = trace_header(version, kind, (uint32_t)fl_codec_record_size(kind), 7);
	memcpy(file, &h, sizeof(h));
	file_len = sizeof(h);
}

static void start_file(uint32_t kind)
{
	struct fl_file_header h = trace_header(FL_TRACE_VERSION, kind, (uint32_t)fl_codec_record_size(kind), 7);
	memcpy(file, &h, sizeof(h));
	file_len = sizeof(h);
}

/* Appends one frame of N records of KIND; returns its offset. */
static size_t add_frame(uint32_t kind, const void *recs, size_t n)
{
	static unsigned char enc[MAXBUF];
	struct fl_codec_state st;
	size_t len = 0, size = fl_codec_record_size(kind);
	memset(&st, 0, sizeof(st));
	for (size_t i = 0; i < n; i++)
		len += fl_codec_encode(kind, &st, (const unsigned char *)recs + i * size, enc + len);
	size_t at = file_len;
	size_t z = ZSTD_compress(file + at + 16, MAXBUF - at - 16, enc, len, 3);
	REQUIRE(!ZSTD_isError(z), "compress");
	struct fl_frame_header fh = { FL_FRAME_MAGIC, (uint32_t)n, (uint32_t)z, (uint32_t)len };
	memcpy(file + at, &fh, sizeof(fh));
	file_len = at + 16 + z;
	return at;
}

/* Decodes the file; returns the records (N of them) and the note. */
static unsigned char *decode(size_t *n, char *note, size_t notelen)
{
	unsigned char *out;
	size_t out_len;
	char err[256] = "";
	REQUIRE(fl_frames_is_framed(file, file_len), "a framed file");
	REQUIRE(fl_frames_decode("F", file, file_len, &out, &out_len, note, notelen, err, sizeof(err)) == 0, "decode: %s",
		err);
	struct fl_file_header h;
	memcpy(&h, out, sizeof(h));
	CHECK(h.header_size == 64 && h.record_size == fl_codec_record_size(h.kind), "decoded header: %u %u",
	      h.header_size, h.record_size);
	*n = (out_len - 64) / h.record_size;
	return out;
}

static void test_round_trip(void)
{
	struct fl_fault_record f[5];
	memset(f, 0, sizeof(f));
	for (int i = 0; i < 5; i++) {
		f[i].time_ns = 1000u * (uint64_t)i;
		f[i].addr = 0x7f0000000000ull + 4096u * (uint64_t)i;
		f[i].seq = (uint64_t)i;
		f[i].tid = 100 + (uint32_t)(i % 2);
		f[i].stack_id = 3;
		f[i].kind = FL_FAULT_FIRST_TOUCH;
		f[i].flags = FL_FAULT_WRITE | FL_FAULT_OBJECT;
		f[i].handler = (uint8_t)i;
		f[i].obj_addr = 0x7f0000000000ull;
		f[i].obj_size = 1 << 20;
		f[i].obj_alloc_id = 9;
		f[i].obj_stack_id = 4;
		f[i].thread_time_ns = 5000u * (uint64_t)i;
		f[i].service_ns = 1200;
		f[i].wait_ns = i % 2 ? 0 : 700u * (uint32_t)(i + 1); /* known on some faults only */
	}
	/* extremes: a time that goes back, all-ones fields, a seq past 2^32 */
	f[3].time_ns = 0;
	f[3].addr = UINT64_MAX;
	f[3].seq = (1ull << 32) + 5;
	f[3].tid = UINT32_MAX;
	f[3].stack_id = UINT32_MAX;
	f[3].obj_size = UINT64_MAX;
	f[3].service_ns = UINT32_MAX;
	f[3].wait_ns = UINT32_MAX;
	f[4].kind = FL_FAULT_KIND_MAX;
	start_file(FL_FILE_FAULTS);
	add_frame(FL_FILE_FAULTS, f, 2);
	add_frame(FL_FILE_FAULTS, f + 2, 3);
	char note[1024];
	size_t n;
	unsigned char *out = decode(&n, note, sizeof(note));
	CHECK(n == 5 && note[0] == '\0', "faults: 5 records over 2 frames (%zu), no note (%s)", n, note);
	CHECK(memcmp(out + 64, f, sizeof(f)) == 0, "faults come back field for field");
	munmap(out, 64 + n * sizeof(f[0]));

	struct fl_fault_context c[3];
	memset(c, 0, sizeof(c));
	for (int i = 0; i < 3; i++) {
		c[i].seq = 10u - (uint64_t)i;
		c[i].stack_id = 2 + (uint32_t)i;
		c[i].tid = 100;
		c[i].npmu = (uint32_t)i + 1;
		for (int k = 0; k <= i; k++)
			c[i].pmu[k] = UINT64_MAX - (uint64_t)k;
	}
	start_file(FL_FILE_CONTEXTS);
	add_frame(FL_FILE_CONTEXTS, c, 3);
	out = decode(&n, note, sizeof(note));
	CHECK(n == 3 && memcmp(out + 64, c, sizeof(c)) == 0, "contexts come back (%zu)", n);
	munmap(out, 64 + n * sizeof(c[0]));

	struct fl_evict_record e[2] = { { 5, 0x1000, FL_EVICT_CLOCK_TRIAL, FL_EVICT_DIRTY, { 0 } },
					{ 3, 0x0, FL_EVICT_FIFO, FL_EVICT_INLINE, { 0 } } };
	start_file(FL_FILE_EVICTIONS);
	add_frame(FL_FILE_EVICTIONS, e, 2);
	out = decode(&n, note, sizeof(note));
	CHECK(n == 2 && memcmp(out + 64, e, sizeof(e)) == 0, "evictions come back (%zu)", n);
	munmap(out, 64 + n * sizeof(e[0]));
}

static struct fl_fault_record seqs[3000];

/* Two good frames, then the third broken by BREAK; the first two must come back. */
static void expect_broken(const char *what, void (*breaker)(size_t third), const char *want)
{
	start_file(FL_FILE_FAULTS);
	add_frame(FL_FILE_FAULTS, seqs, 1000);
	add_frame(FL_FILE_FAULTS, seqs + 1000, 1000);
	size_t third = add_frame(FL_FILE_FAULTS, seqs + 2000, 1000);
	breaker(third);
	char note[1024], offset[64];
	size_t n;
	unsigned char *out = decode(&n, note, sizeof(note));
	snprintf(offset, sizeof(offset), "frame 2 at offset %zu: ", third);
	CHECK(n == 2000 && memcmp(out + 64, seqs, 2000 * sizeof(seqs[0])) == 0, "%s: the 2 frames before it kept (%zu)",
	      what, n);
	CHECK(strncmp(note, "F: ", 3) == 0 && strstr(note, offset) && strstr(note, want), "%s: note '%s'", what, note);
	munmap(out, 64 + n * sizeof(seqs[0]));
}

/* A fault's wait_ns (from format 4): the kind byte's 0x80 and a varint after service_ns. Decoding
 * refuses a wait of 0 or past 32 bits and a record cut anywhere; a version-3 file reads the bit
 * as a bad record, not as a wait. */
static void test_wait_field(void)
{
	struct fl_fault_record r, back;
	struct fl_codec_state st;
	unsigned char enc[FL_CODEC_RECORD_MAX];
	memset(&r, 0, sizeof(r));
	r.time_ns = 5, r.addr = 0x7f0000001000ull, r.kind = FL_FAULT_REFAULT, r.service_ns = 300, r.wait_ns = UINT32_MAX;
	memset(&st, 0, sizeof(st));
	size_t len = fl_codec_encode(FL_FILE_FAULTS, &st, &r, enc);
	CHECK(len >= 5 && enc[len - 1] == 0x0f, "a wait of 2^32 - 1 ends the encoding (%zu bytes)", len);
	for (size_t cut_at = 0; cut_at <= len; cut_at++) {
		const unsigned char *pos = enc;
		memset(&st, 0, sizeof(st));
		st.version = FL_TRACE_VERSION_WAIT;
		int rc = fl_codec_decode(FL_FILE_FAULTS, &st, &pos, enc + cut_at, &back);
		if (cut_at < len)
			CHECK(rc < 0, "a record cut after %zu of %zu bytes does not decode", cut_at, len);
		else
			CHECK(rc == 0 && pos == enc + len && memcmp(&back, &r, sizeof(r)) == 0, "the whole record comes back");
	}
	unsigned char big[FL_CODEC_RECORD_MAX];
	memcpy(big, enc, len);
	big[len - 1] = 0x10; /* the wait's varint now says 2^32 + 2^32 - 1 */
	const unsigned char *pos = big;
	memset(&st, 0, sizeof(st));
	st.version = FL_TRACE_VERSION_WAIT;
	CHECK(fl_codec_decode(FL_FILE_FAULTS, &st, &pos, big + len, &back) < 0, "a wait past 32 bits does not decode");
	r.wait_ns = 1;
	memset(&st, 0, sizeof(st));
	len = fl_codec_encode(FL_FILE_FAULTS, &st, &r, enc);
	enc[len - 1] = 0; /* a wait of 0 is written by leaving the bit clear, never as 0 */
	pos = enc;
	memset(&st, 0, sizeof(st));
	st.version = FL_TRACE_VERSION_WAIT;
	CHECK(fl_codec_decode(FL_FILE_FAULTS, &st, &pos, enc + len, &back) < 0, "a wait of 0 does not decode");

	/* a version-3 file: the bit is no wait; the frame's bytes no longer add up */
	struct fl_fault_record two[2];
	memcpy(&two[0], &r, sizeof(r));
	memcpy(&two[1], &r, sizeof(r));
	two[1].seq = 1;
	start_file_version(FL_FILE_FAULTS, FL_TRACE_VERSION_WAIT - 1);
	add_frame(FL_FILE_FAULTS, two, 2);
	char note[1024];
	size_t n;
	unsigned char *out = decode(&n, note, sizeof(note));
	CHECK(n == 0 && note[0] != '\0', "version 3 with the bit: the frame is refused (%zu records; %s)", n, note);
	munmap(out, 64 + n * sizeof(two[0]));
}

static void cut(size_t third) { file_len = third + 30; }
static void bad_magic(size_t third) { file[third] ^= 1; }
static void bad_count(size_t third) { file[third + 4] = 0xff, file[third + 5] = 0xff; }
static void bad_zstd(size_t third) { memset(file + third + 16 + 12, 0xa5, 24); }
static void count_low(size_t third) { file[third + 4] = 1, file[third + 5] = 0; }
static void cut_header(size_t third) { file_len = third + 7; }

int main(void)
{
	test_round_trip();
	test_wait_field();
	for (size_t i = 0; i < 3000; i++) {
		seqs[i].time_ns = 1000 * i;
		seqs[i].addr = 0x7f0000000000ull + 4096 * i;
		seqs[i].seq = i;
		seqs[i].tid = 42;
		seqs[i].stack_id = 1 + (uint32_t)(i % 3);
		seqs[i].kind = FL_FAULT_FIRST_TOUCH;
		seqs[i].flags = FL_FAULT_WRITE;
		seqs[i].thread_time_ns = 700 * i;
		seqs[i].service_ns = 1000 + (uint32_t)(i % 7);
	}
	start_file(FL_FILE_FAULTS);
	add_frame(FL_FILE_FAULTS, seqs, 3000);
	CHECK((file_len - 64) < 8 * 3000, "3000 sequential faults in %zu bytes (< 8 a fault)", file_len - 64);

	expect_broken("cut inside a frame", cut, "cut:");
	expect_broken("cut inside a frame header", cut_header, "cut inside its header");
	expect_broken("bad magic", bad_magic, "bad frame magic");
	expect_broken("count beyond the encoded bytes", bad_count, "bad counts");
	expect_broken("corrupt zstd data", bad_zstd, "zstd");
	expect_broken("count below the records", count_low, "left over");
	return check_summary("test_frames");
}
