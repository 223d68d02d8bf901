/* frame_decode.c: framed files decoded to fixed-size records (frame_decode.h). Two passes: the
 * frame headers alone give the record count (the mapping's size), then each frame is
 * decompressed into one reused buffer and its records decoded into place. */
#include "frame_decode.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <zstd.h>

#include <faultline/record_codec.h>
#include <faultline/trace.h>

#define HEADER ((size_t)sizeof(struct fl_file_header))
#define FRAME_HEADER ((size_t)sizeof(struct fl_frame_header))
#define MIN_ENCODED 4 /* the shortest encoded record of any framed kind */

bool fl_frames_is_framed(const unsigned char *data, size_t len)
{
	struct fl_file_header h;
	if (len < HEADER)
		return false;
	memcpy(&h, data, HEADER);
	return h.magic == FL_TRACE_MAGIC && h.version >= FL_TRACE_VERSION_FRAMED && fl_codec_record_size(h.kind) &&
	       h.header_size >= HEADER && h.header_size <= len;
}

static void say(char *note, size_t notelen, const char *path, unsigned frame, size_t offset, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
static void say(char *note, size_t notelen, const char *path, unsigned frame, size_t offset, const char *fmt, ...)
{
	char reason[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	snprintf(note, notelen, "%s: frame %u at offset %zu: %s; the records from it on are ignored (the file may "
		 "be cut)", path, frame, offset, reason);
}

/* Checks the frame header at OFFSET; returns its total size, or 0 with NOTE set. */
static size_t check_frame(const char *path, const unsigned char *data, size_t len, size_t offset, unsigned frame,
			  struct fl_frame_header *fh, char *note, size_t notelen)
{
	if (len - offset < FRAME_HEADER) {
		say(note, notelen, path, frame, offset, "cut inside its header (%zu of %zu bytes)", len - offset, FRAME_HEADER);
		return 0;
	}
	memcpy(fh, data + offset, FRAME_HEADER);
	if (fh->magic != FL_FRAME_MAGIC) {
		say(note, notelen, path, frame, offset, "bad frame magic 0x%08x (want 0x%08x)", fh->magic, FL_FRAME_MAGIC);
		return 0;
	}
	if (fh->nrecords == 0 || fh->encoded_size > FL_FRAME_ENCODED_MAX ||
	    (uint64_t)fh->nrecords * MIN_ENCODED > fh->encoded_size) {
		say(note, notelen, path, frame, offset, "bad counts: %u records in %u encoded bytes (at most %u)",
		    fh->nrecords, fh->encoded_size, FL_FRAME_ENCODED_MAX);
		return 0;
	}
	if (fh->compressed_size > len - offset - FRAME_HEADER) {
		say(note, notelen, path, frame, offset, "cut: %u compressed bytes announced, %zu left in the file",
		    fh->compressed_size, len - offset - FRAME_HEADER);
		return 0;
	}
	return FRAME_HEADER + fh->compressed_size;
}

int fl_frames_decode(const char *path, const unsigned char *data, size_t len, unsigned char **out, size_t *out_len,
		     char *note, size_t notelen, char *err, size_t errlen)
{
	struct fl_file_header h;
	struct fl_frame_header fh;
	memcpy(&h, data, HEADER);
	size_t size = fl_codec_record_size(h.kind);
	note[0] = '\0';

	/* pass 1: the frame headers */
	uint64_t total = 0;
	unsigned frames = 0;
	char first_note[1024] = "";
	for (size_t off = h.header_size; off < len; frames++) {
		size_t step = check_frame(path, data, len, off, frames, &fh, first_note, sizeof(first_note));
		if (!step)
			break;
		total += fh.nrecords;
		off += step;
	}
	size_t bytes = HEADER + total * size;
	unsigned char *image = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char *scratch = malloc(FL_FRAME_ENCODED_MAX);
	ZSTD_DCtx *dctx = ZSTD_createDCtx();
	if (image == MAP_FAILED || !scratch || !dctx) {
		snprintf(err, errlen, "%s: out of memory for %llu decoded records", path, (unsigned long long)total);
		if (image != MAP_FAILED)
			munmap(image, bytes);
		free(scratch);
		ZSTD_freeDCtx(dctx);
		return -1;
	}
	/* the header as the reader knows it: records start right after it */
	h.header_size = (uint32_t)HEADER;
	h.record_size = (uint32_t)size;
	memcpy(image, &h, HEADER);

	/* pass 2: decompress and decode, up to the first bad frame */
	uint64_t done = 0;
	size_t off = ((const struct fl_file_header *)(const void *)data)->header_size;
	for (unsigned frame = 0; frame < frames; frame++) {
		size_t step = check_frame(path, data, len, off, frame, &fh, note, notelen);
		const unsigned char *z = data + off + FRAME_HEADER;
		size_t got = ZSTD_decompressDCtx(dctx, scratch, fh.encoded_size, z, fh.compressed_size);
		if (ZSTD_isError(got)) {
			say(note, notelen, path, frame, off, "corrupt zstd data (%s)", ZSTD_getErrorName(got));
			break;
		}
		if (got != fh.encoded_size) {
			say(note, notelen, path, frame, off, "decompresses to %zu bytes, its header says %u", got,
			    fh.encoded_size);
			break;
		}
		struct fl_codec_state st;
		memset(&st, 0, sizeof(st));
		st.version = h.version;
		const unsigned char *pos = scratch, *end = scratch + got;
		uint32_t i = 0;
		for (; i < fh.nrecords; i++)
			if (fl_codec_decode(h.kind, &st, &pos, end, image + HEADER + (done + i) * size) < 0)
				break;
		if (i < fh.nrecords || pos != end) {
			say(note, notelen, path, frame, off, i < fh.nrecords ? "record %u of %u does not decode"
					    : "%u records decoded, but bytes are left over", i, fh.nrecords);
			break;
		}
		done += fh.nrecords;
		off += step;
	}
	if (!note[0] && first_note[0])
		snprintf(note, notelen, "%s", first_note);
	free(scratch);
	ZSTD_freeDCtx(dctx);
	*out_len = HEADER + done * size;
	if (*out_len < bytes) { /* frames were left out: give their room back */
		void *shrunk = mremap(image, bytes, *out_len, 0);
		if (shrunk != MAP_FAILED) /* shrinking in place does not fail; if it did, the tail stays mapped */
			image = shrunk;
	}
	*out = image;
	return 0;
}
