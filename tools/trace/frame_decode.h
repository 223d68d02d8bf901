/* frame_decode.h: a framed file of a format-3 recording (faults, contexts, evictions:
 * inc/faultline/trace.h, "Framed files") decoded into the layout every reader knows: its
 * fl_file_header followed by fixed-size records, in memory. */
#ifndef FAULTLINE_TOOLS_FRAME_DECODE_H
#define FAULTLINE_TOOLS_FRAME_DECODE_H

#include <stdbool.h>
#include <stddef.h>

/* Whether the LEN bytes at DATA start with the header of a framed file. */
bool fl_frames_is_framed(const unsigned char *data, size_t len);

/* Decodes the framed file at DATA (LEN bytes, named PATH in messages) into a new anonymous
 * mapping: *out, *out_len. The frames before the first bad one are kept: a frame cut short (the
 * file's end, a crash), a bad header, count or size, corrupt zstd data or records that do not
 * decode leave one line naming the file, the frame and its offset in NOTE (else NOTE is "").
 * Returns 0, or -1 with "PATH: reason" in err when memory runs out. */
int fl_frames_decode(const char *path, const unsigned char *data, size_t len, unsigned char **out, size_t *out_len,
		     char *note, size_t notelen, char *err, size_t errlen);

#endif
