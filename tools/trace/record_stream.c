/* record_stream.c: one fault, context or eviction file read record by record in bounded memory
 * (record_stream.h): pread into one reused buffer, a framed file one frame at a time. */
#include "record_stream.h"
#include "regular_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#define HEADER ((size_t)sizeof(struct fl_file_header))
#define FRAME_HEADER ((size_t)sizeof(struct fl_frame_header))
#define FLAT_BUFFER (1u << 20)

static int note(struct fl_record_stream *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int note(struct fl_record_stream *s, const char *fmt, ...)
{
	char reason[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	snprintf(s->note, sizeof(s->note), "%.300s: %.255s", s->path, reason);
	return -1;
}

/* Reads exactly N bytes at OFF into BUF. 0, or -1 (note set; a short read is a cut file). */
static int read_at(struct fl_record_stream *s, void *buf, size_t n, uint64_t off)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(s->fd, (char *)buf + got, n - got, (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return note(s, "pread %zu bytes at offset %llu: %s", n - got, (unsigned long long)(off + got),
				    strerror(errno));
		if (r == 0)
			return note(s, "cut at offset %llu", (unsigned long long)(off + got));
		got += (size_t)r;
	}
	return 0;
}

static size_t known_record_size(uint32_t kind)
{
	switch (kind) {
	case FL_FILE_FAULTS: return FL_FAULT_RECORD_SIZE_V2;
	case FL_FILE_CONTEXTS: return sizeof(struct fl_fault_context);
	case FL_FILE_EVICTIONS: return sizeof(struct fl_evict_record);
	default: return 0;
	}
}

int fl_record_stream_open(struct fl_record_stream *s, const char *path, uint32_t kind, char *err, size_t errlen)
{
	struct fl_file_header h;
	struct stat st;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->kind = kind;
	s->struct_size = fl_codec_record_size(kind);
	snprintf(s->path, sizeof(s->path), "%s", path);
	s->fd = regular_file_open(path, &st, err, errlen);
	if (s->fd < 0)
		return errno == ENOENT ? 0 : -1;
	s->len = (uint64_t)st.st_size;
	if (s->len < HEADER || read_at(s, &h, HEADER, 0) < 0 || h.magic != FL_TRACE_MAGIC || h.kind != kind ||
	    h.version < 2 || h.header_size < HEADER || h.header_size > s->len || !s->struct_size) {
		snprintf(err, errlen, "%s: not a format-2 or later %s file whole enough to stream", path,
			 kind == FL_FILE_FAULTS ? "faults" : kind == FL_FILE_CONTEXTS ? "contexts" : "evictions");
		fl_record_stream_close(s);
		return -1;
	}
	s->framed = h.version >= FL_TRACE_VERSION_FRAMED;
	s->version = h.version;
	s->disk_size = h.record_size;
	s->offset = h.header_size;
	if (!s->framed && (h.record_size < known_record_size(kind) || h.record_size % 8)) {
		snprintf(err, errlen, "%s: record size %u, want at least %zu", path, h.record_size, known_record_size(kind));
		fl_record_stream_close(s);
		return -1;
	}
	s->buf_cap = s->framed ? FL_FRAME_ENCODED_MAX : FLAT_BUFFER - FLAT_BUFFER % h.record_size;
	s->buf = malloc(s->buf_cap);
	if (s->framed) {
		s->plain = malloc(FL_FRAME_ENCODED_MAX);
		s->dctx = ZSTD_createDCtx();
	}
	if (!s->buf || (s->framed && (!s->plain || !s->dctx))) {
		snprintf(err, errlen, "%s: out of memory for its read buffers", path);
		fl_record_stream_close(s);
		return -1;
	}
	return 1;
}

int fl_record_stream_rewind(struct fl_record_stream *s)
{
	struct fl_file_header h;
	if (read_at(s, &h, HEADER, 0) < 0)
		return -1;
	s->offset = h.header_size;
	s->buf_len = s->buf_pos = 0;
	s->left = 0;
	s->frame = 0;
	return 0;
}

/* Reads, decompresses and starts decoding the next frame. 1, 0 at the end, -1 (note). */
static int next_frame(struct fl_record_stream *s)
{
	struct fl_frame_header fh;
	uint64_t at = s->offset;

	if (at == s->len)
		return 0;
	if (s->len - at < FRAME_HEADER || read_at(s, &fh, FRAME_HEADER, at) < 0)
		return note(s, "frame %u at offset %llu: cut inside its header", s->frame, (unsigned long long)at);
	if (fh.magic != FL_FRAME_MAGIC || fh.nrecords == 0 || fh.encoded_size > FL_FRAME_ENCODED_MAX ||
	    fh.compressed_size > s->buf_cap || fh.compressed_size > s->len - at - FRAME_HEADER)
		return note(s, "frame %u at offset %llu: bad or cut frame", s->frame, (unsigned long long)at);
	if (read_at(s, s->buf, fh.compressed_size, at + FRAME_HEADER) < 0)
		return -1;
	size_t got = ZSTD_decompressDCtx(s->dctx, s->plain, fh.encoded_size, s->buf, fh.compressed_size);
	if (ZSTD_isError(got) || got != fh.encoded_size)
		return note(s, "frame %u at offset %llu: corrupt zstd data", s->frame, (unsigned long long)at);
	memset(&s->codec, 0, sizeof(s->codec));
	s->codec.version = s->version;
	s->pos = s->plain;
	s->end = s->plain + got;
	s->left = fh.nrecords;
	s->offset = at + FRAME_HEADER + fh.compressed_size;
	s->frame++;
	return 1;
}

int fl_record_stream_next(struct fl_record_stream *s, void *rec)
{
	if (s->framed) {
		while (s->left == 0) {
			if (s->pos != s->end)
				return note(s, "frame %u: bytes left over after its records", s->frame - 1);
			int rc = next_frame(s);
			if (rc <= 0)
				return rc;
		}
		if (fl_codec_decode(s->kind, &s->codec, &s->pos, s->end, rec) < 0)
			return note(s, "frame %u: a record does not decode", s->frame - 1);
		s->left--;
		return 1;
	}
	if (s->buf_pos == s->buf_len) {
		uint64_t rest = s->len - s->offset;
		if (rest == 0)
			return 0;
		if (rest < s->disk_size)
			return note(s, "cut inside a record at offset %llu", (unsigned long long)s->offset);
		size_t n = rest < s->buf_cap ? (size_t)(rest - rest % s->disk_size) : s->buf_cap;
		if (read_at(s, s->buf, n, s->offset) < 0)
			return -1;
		s->offset += n;
		s->buf_len = n;
		s->buf_pos = 0;
	}
	size_t take = s->disk_size < s->struct_size ? s->disk_size : s->struct_size;
	if (take < s->struct_size)
		memset(rec, 0, s->struct_size);
	memcpy(rec, s->buf + s->buf_pos, take);
	s->buf_pos += s->disk_size;
	return 1;
}

int64_t fl_record_stream_count(struct fl_record_stream *s)
{
	struct fl_file_header h;
	if (read_at(s, &h, HEADER, 0) < 0)
		return -1;
	if (!s->framed) {
		uint64_t rest = s->len - h.header_size;
		if (rest % s->disk_size)
			return note(s, "cut inside a record");
		return (int64_t)(rest / s->disk_size);
	}
	int64_t n = 0;
	for (uint64_t at = h.header_size; at < s->len;) {
		struct fl_frame_header fh;
		if (s->len - at < FRAME_HEADER || read_at(s, &fh, FRAME_HEADER, at) < 0)
			return note(s, "cut inside a frame header at offset %llu", (unsigned long long)at);
		if (fh.magic != FL_FRAME_MAGIC || fh.nrecords == 0 || fh.compressed_size > s->len - at - FRAME_HEADER)
			return note(s, "bad or cut frame at offset %llu", (unsigned long long)at);
		n += fh.nrecords;
		at += FRAME_HEADER + fh.compressed_size;
	}
	return n;
}

void fl_record_stream_close(struct fl_record_stream *s)
{
	if (s->fd >= 0)
		close(s->fd);
	free(s->buf);
	free(s->plain);
	ZSTD_freeDCtx(s->dctx);
	s->fd = -1;
	s->buf = s->plain = NULL;
	s->dctx = NULL;
}
