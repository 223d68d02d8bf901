/* binary_id.h: the identity of a binary a recording mapped — its GNU build-id (from the ELF's
 * PT_NOTE segments, as perf reads it), size and modification time — and the recording's list of
 * them, DIR/binaries, which `record` writes after the program ends and the symbolizer checks
 * before it trusts a file at the same path (symbolize.h: symbolizer_expect_binary).
 *
 * DIR/binaries is text, one binary per line after a '#' header line, five tab-separated fields:
 *     BUILD_ID_HEX|-   SIZE   MTIME_NS   ARCHIVED|-   PATH
 * ARCHIVED is the path, relative to DIR, of the copy `record --archive` kept
 * (".build-id/xx/rest", perf's build-id cache layout; its separate debug file, when there was one,
 * next to it as ".build-id/xx/rest.debug"). PATH is last, so it may hold tabs; a newline in a path
 * is written as "\n". A damaged line is skipped (and counted). */
#ifndef FAULTLINE_BINARY_ID_H
#define FAULTLINE_BINARY_ID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BINARY_ID_MAX_BUILD_ID 64
#define BINARY_IDS_FILE "binaries"
#define BINARY_ARCHIVE_DIR ".build-id"

struct binary_id {
	char *path;                /* as the maps line names it */
	uint8_t build_id[BINARY_ID_MAX_BUILD_ID];
	size_t build_id_len;       /* 0: the file has no build-id note */
	uint64_t size;             /* bytes */
	int64_t mtime_ns;          /* st_mtim */
	uint64_t inode;            /* st_ino when read (not stored in the file) */
	char *archived;            /* relative to the recording; NULL when not archived */
};

/* Reads PATH's identity (stat, then its ELF notes). Returns 0, or -1 with the failing call and
 * errno's text in err (not a regular file, unreadable). A file that is not ELF, or has no
 * build-id note, has build_id_len 0. */
int binary_id_read(const char *path, struct binary_id *out, char *err, size_t errlen);

/* The GNU build-id in LEN bytes of ELF notes aligned to ALIGN (4 or 8: a PT_NOTE segment's or an
 * SHT_NOTE section's contents): the first note named "GNU" of type NT_GNU_BUILD_ID with 1 to
 * BINARY_ID_MAX_BUILD_ID bytes, copied to ID. Its length, or 0 when there is none or a note runs
 * past LEN (the ones after it are not read). The one reader of the note: binary_id_read and the
 * symbolizer (symbolize.c) both use it. */
size_t binary_id_from_notes(const unsigned char *notes, size_t len, size_t align, uint8_t id[BINARY_ID_MAX_BUILD_ID]);

/* BUILD_ID as lowercase hex into buf (2 * len + 1 bytes). Returns buf. */
char *binary_id_hex(const uint8_t *id, size_t len, char *buf);

/* The archive's relative name of a build-id: ".build-id/xx/rest". Returns -1 when the id is
 * shorter than 2 bytes or buf too small. */
int binary_id_archive_name(const struct binary_id *id, char *buf, size_t len);

/* Writes DIR/binaries (through a temporary file, renamed). Returns 0 or -1 with err. */
int binary_ids_write(const char *dir, const struct binary_id *ids, size_t n, char *err, size_t errlen);

/* Loads DIR/binaries. A missing file is 0 with *n = 0 (recordings made before it existed).
 * *skipped counts damaged lines. Returns 0, or -1 with err (unreadable, out of memory). */
int binary_ids_load(const char *dir, struct binary_id **out, size_t *n, unsigned *skipped, char *err,
		    size_t errlen);

void binary_ids_free(struct binary_id *ids, size_t n);

#endif
