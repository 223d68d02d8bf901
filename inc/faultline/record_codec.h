/* record_codec.h: the encoding of fault, context and eviction records inside the frames of a
 * format-3 trace file (inc/faultline/trace.h, "Framed files"): each field as a LEB128 varint of
 * its difference from the same field of the previous record of the frame (zigzag for signed
 * differences), the first record of a frame against zero. Shared by the runtime, which encodes,
 * and the readers, which decode. No allocation, no I/O. */
#ifndef FL_RECORD_CODEC_H
#define FL_RECORD_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include <faultline/trace.h>

/* The longest encoding of one record of any kind, bytes. */
#define FL_CODEC_RECORD_MAX 160

/* The previous record of the frame, per kind (all zero at a frame's start). */
struct fl_codec_state {
	struct fl_fault_record fault;
	struct fl_fault_context context;
	struct fl_evict_record evict;
	uint32_t version;    /* decoding: the file's format version (a fault's wait_ns is read from
	                      * FL_TRACE_VERSION_WAIT on); set after each reset */
};

/* Appends the encoding of one record of KIND (FL_FILE_FAULTS, FL_FILE_CONTEXTS or
 * FL_FILE_EVICTIONS) at OUT, which has room for FL_CODEC_RECORD_MAX bytes; returns its length
 * (0 for another kind). */
size_t fl_codec_encode(uint32_t kind, struct fl_codec_state *st, const void *rec, unsigned char *out);

/* Decodes one record of KIND from [*pos, end) into REC (the struct of its kind, reserved fields
 * zero) and advances *pos. Returns 0, or -1 when the bytes end inside the record or a field does
 * not fit its width. */
int fl_codec_decode(uint32_t kind, struct fl_codec_state *st, const unsigned char **pos, const unsigned char *end,
		    void *rec);

/* The size of the decoded struct of KIND (0 for a kind that is not framed). */
size_t fl_codec_record_size(uint32_t kind);

#endif
