/* trace_file.c: one binary file of a recording mapped, its header checked and its records counted
 * (trace_file.h). The one place that knows which header each file kind must have. */
#include "trace_file.h"
#include "frame_decode.h"
#include "regular_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

const char *fl_trace_file_kind_name(uint32_t kind)
{
	switch (kind) {
	case FL_FILE_FAULTS: return FL_FILE_NAME_FAULTS;
	case FL_FILE_STACKS: return FL_FILE_NAME_STACKS;
	case FL_FILE_ALLOCS: return FL_FILE_NAME_ALLOCS;
	case FL_FILE_CONTEXTS: return FL_FILE_NAME_CONTEXTS;
	case FL_FILE_SITES: return FL_FILE_NAME_SITES;
	case FL_FILE_ALLOCS_ZSTD: return FL_FILE_NAME_ALLOCS_ZSTD;
	case FL_FILE_TIMELINE: return FL_FILE_NAME_TIMELINE;
	case FL_FILE_EVICTIONS: return FL_FILE_NAME_EVICTIONS;
	default: return "unknown";
	}
}

/* The first format version that has files of KIND. */
static uint32_t first_version(uint32_t kind)
{
	return kind == FL_FILE_TIMELINE || kind == FL_FILE_EVICTIONS ? 2 : 1;
}

/* The shortest record of KIND a file of format VERSION may declare (0: variable-sized records). */
static uint32_t min_record_size(uint32_t kind, uint32_t version)
{
	switch (kind) {
	case FL_FILE_FAULTS: return version == 1 ? FL_FAULT_RECORD_SIZE_V1 : FL_FAULT_RECORD_SIZE_V2;
	case FL_FILE_CONTEXTS: return version == 1 ? FL_CONTEXT_SIZE_V1 : sizeof(struct fl_fault_context);
	case FL_FILE_STACKS: return 0;
	case FL_FILE_ALLOCS:
	case FL_FILE_ALLOCS_ZSTD: return sizeof(struct fl_alloc_record);
	case FL_FILE_SITES: return sizeof(struct fl_site_record);
	case FL_FILE_TIMELINE: return sizeof(struct fl_timeline_record);
	case FL_FILE_EVICTIONS: return sizeof(struct fl_evict_record);
	default: return 0;
	}
}

/* ======================================================================= mapping */

int fl_trace_file_map(const char *path, struct mapped_file *out, char *err, size_t errlen)
{
	struct stat st;
	int fd = regular_file_open(path, &st, err, errlen);

	out->data = NULL;
	out->len = 0;
	out->writable = false;
	out->note[0] = '\0';
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	if (st.st_size == 0) {
		close(fd);
		return 1;
	}
	/* MAP_POPULATE: the whole file is read (it is validated record by record), so map it at once
	 * rather than page by page. Read-only: populating a writable private mapping breaks copy on
	 * write for every page, copying the whole file into anonymous memory; a loader that must clear
	 * a dangling reference in place asks for write access first (fl_trace_file_make_writable) */
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	int saved = errno;
	close(fd);
	if (p == MAP_FAILED) {
		snprintf(err, errlen, "%s: mmap of %lld bytes: %s", path, (long long)st.st_size, strerror(saved));
		return -1;
	}
	out->data = p;
	out->len = (size_t)st.st_size;
	out->note[0] = '\0';
	if (fl_frames_is_framed(p, out->len)) {
		unsigned char *image;
		size_t image_len;
		int rc = fl_frames_decode(path, p, out->len, &image, &image_len, out->note, sizeof(out->note), err, errlen);
		munmap(p, out->len);
		out->data = NULL;
		out->len = 0;
		if (rc < 0)
			return -1;
		out->data = image;
		out->len = image_len;
	}
	return 1;
}

int fl_trace_file_make_writable(const char *path, struct mapped_file *file, char *err, size_t errlen)
{
	if (!file->data || file->writable)
		return 0;
	if (mprotect((void *)file->data, file->len, PROT_READ | PROT_WRITE) < 0) {
		snprintf(err, errlen, "%s: mprotect of %zu bytes: %s", path, file->len, strerror(errno));
		return -1;
	}
	file->writable = true;
	return 0;
}

void fl_trace_file_unmap(struct mapped_file *file)
{
	if (file->data)
		munmap((void *)file->data, file->len);
	file->data = NULL;
	file->len = 0;
	file->writable = false;
}

/* ======================================================================= the header */

static int fail_at(const struct fl_header_want *want, char *err, size_t errlen, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static int fail_at(const struct fl_header_want *want, char *err, size_t errlen, uint64_t offset, const char *fmt, ...)
{
	char reason[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	snprintf(err, errlen, "%s: offset %llu: %s", want->path, (unsigned long long)offset, reason);
	return -1;
}

/* Checks the magic in the first HAVE bytes of the header (at most 8 of them). */
static int check_magic(const struct fl_header_want *want, const struct fl_file_header *hdr, size_t have, char *err,
		       size_t errlen)
{
	uint64_t magic = FL_TRACE_MAGIC;
	const unsigned char *got = (const unsigned char *)&hdr->magic, *bytes = (const unsigned char *)&magic;
	size_t n = have < 8 ? have : 8;

	if (n == 8 && hdr->magic == FL_TRACE_MAGIC_SWAPPED)
		return fail_at(want, err, errlen, 0, "written in the other byte order (big-endian): faultline reads "
			       "little-endian recordings only");
	if (memcmp(got, bytes, n) == 0)
		return 0;
	size_t at = 0;
	while (at < n && got[at] == bytes[at])
		at++;
	return fail_at(want, err, errlen, at, "bad magic: not a faultline trace file (want \"FLTRACE\\0\")");
}

/* One header field to check against the reference: skipped when the file was cut before its end
 * or the reference does not know it (BIT not in want->known). */
static int check_field(const struct fl_header_want *want, size_t len, size_t offset, size_t size, unsigned bit,
		       uint64_t got, uint64_t ref, const char *name, char *err, size_t errlen)
{
	if (len < offset + size || !(want->known & bit) || got == ref)
		return 0;
	return fail_at(want, err, errlen, offset, "header %s %llu differs from %s (%llu)", name, (unsigned long long)got,
		       want->ref_name, (unsigned long long)ref);
}

static int check_reference(const struct fl_header_want *want, const struct fl_file_header *hdr, size_t len, char *err,
			   size_t errlen)
{
	const struct fl_file_header *ref = want->ref;
	if (check_field(want, len, offsetof(struct fl_file_header, page_size), sizeof(hdr->page_size), REF_PAGE_SIZE,
			hdr->page_size, ref->page_size, "page_size", err, errlen) < 0 ||
	    check_field(want, len, offsetof(struct fl_file_header, start_ns), sizeof(hdr->start_ns), REF_START_NS,
			hdr->start_ns, ref->start_ns, "start_ns", err, errlen) < 0 ||
	    check_field(want, len, offsetof(struct fl_file_header, region_start), sizeof(hdr->region_start),
			REF_REGION_START, hdr->region_start, ref->region_start, "region_start", err, errlen) < 0 ||
	    check_field(want, len, offsetof(struct fl_file_header, region_size), sizeof(hdr->region_size),
			REF_REGION_SIZE, hdr->region_size, ref->region_size, "region_size", err, errlen) < 0)
		return -1;
	return 0;
}

/* Whether the first HAVE bytes of a header hold FIELD (of the given offset and size). */
#define HOLDS(have, field) ((have) >= offsetof(struct fl_file_header, field) + sizeof(((struct fl_file_header *)0)->field))
#define AT(field) offsetof(struct fl_file_header, field)

/* version, kind, header_size and record_size; sets found's version, data_offset and record_size. */
static int check_layout(const struct fl_header_want *want, const struct fl_file_header *hdr, size_t have,
			struct fl_header_found *found, char *err, size_t errlen)
{
	if (HOLDS(have, version)) {
		if (hdr->version == 0)
			return fail_at(want, err, errlen, AT(version), "bad format version 0");
		if (hdr->version > FL_TRACE_VERSION)
			return fail_at(want, err, errlen, AT(version), "format version %u is newer than this faultline reads "
				       "(%d): use a newer faultline", hdr->version, FL_TRACE_VERSION);
		if (hdr->version < first_version(want->kind))
			return fail_at(want, err, errlen, AT(version), "format version %u has no %s file (it was added "
				       "in version %u)", hdr->version, fl_trace_file_kind_name(want->kind),
				       first_version(want->kind));
		found->version = hdr->version;
	}
	if (HOLDS(have, kind) && hdr->kind != want->kind)
		return fail_at(want, err, errlen, AT(kind), "file kind %u (%s), want %u (%s)", hdr->kind,
			       fl_trace_file_kind_name(hdr->kind), want->kind, fl_trace_file_kind_name(want->kind));
	/* A header may be longer than this reader knows (fields added at its end, trace.h). */
	if (HOLDS(have, header_size)) {
		if (hdr->header_size < FL_HEADER_SIZE || hdr->header_size > 65536 || hdr->header_size % 8 != 0)
			return fail_at(want, err, errlen, AT(header_size), "header_size %u, want a multiple of 8, at "
				       "least %u", hdr->header_size, FL_HEADER_SIZE);
		found->data_offset = hdr->header_size;
	}
	/* A record may be longer than this reader knows (fields added at its end, trace.h): the known
	 * prefix is read and the tail skipped. Shorter than the first version of the record is wrong. */
	uint32_t record_size = min_record_size(want->kind, found->version);
	found->record_size = record_size;
	if (HOLDS(have, record_size)) {
		if (record_size == 0 ? hdr->record_size != 0
				     : hdr->record_size < record_size || hdr->record_size > 65536 || hdr->record_size % 8 != 0)
			return fail_at(want, err, errlen, AT(record_size), "record_size %u, want %s%u for a %s file",
				       hdr->record_size, record_size ? "a multiple of 8, at least " : "", record_size,
				       fl_trace_file_kind_name(want->kind));
		found->record_size = hdr->record_size;
	}
	return 0;
}

int fl_trace_file_check_header(const struct fl_header_want *want, const unsigned char *data, size_t len,
			       struct fl_header_found *found, char *err, size_t errlen)
{
	struct fl_file_header *hdr = &found->hdr;
	size_t have = len < FL_HEADER_SIZE ? len : FL_HEADER_SIZE;

	memset(found, 0, sizeof(*found));
	if (have)
		memcpy(hdr, data, have);
	found->version = FL_TRACE_VERSION;
	found->data_offset = FL_HEADER_SIZE;
	if (check_magic(want, hdr, have, err, errlen) < 0 || check_layout(want, hdr, have, found, err, errlen) < 0)
		return -1;
	found->complete = len >= found->data_offset;
	if (HOLDS(have, pid) && hdr->pid != want->pid)
		return fail_at(want, err, errlen, AT(pid), "pid %u, but the process directory is %s", hdr->pid,
			       want->proc_name);
	if (HOLDS(have, page_size) && (hdr->page_size == 0 || (hdr->page_size & (hdr->page_size - 1)) != 0))
		return fail_at(want, err, errlen, AT(page_size), "page_size %u is not a power of two", hdr->page_size);
	if (HOLDS(have, region_size) && hdr->region_start + hdr->region_size < hdr->region_start)
		return fail_at(want, err, errlen, AT(region_size), "region [0x%llx, +%llu) wraps around the address "
			       "space", (unsigned long long)hdr->region_start, (unsigned long long)hdr->region_size);
	return check_reference(want, hdr, len, err, errlen);
}

#undef HOLDS
#undef AT

/* ======================================================================= records */

size_t fl_trace_file_count_records(const char *path, const struct fl_header_found *found, size_t len, char *warning,
				   size_t warnlen)
{
	warning[0] = '\0';
	if (!found->complete) {
		snprintf(warning, warnlen, "%s: truncated at offset %zu, inside its %u-byte header (0 complete records)",
			 path, len, found->data_offset);
		return 0;
	}
	if (found->record_size == 0 || len <= found->data_offset)
		return 0;
	size_t body = len - found->data_offset, n = body / found->record_size, rest = body % found->record_size;
	if (rest)
		snprintf(warning, warnlen, "%s: truncated at offset %zu (%zu complete records; %zu bytes of a partial "
			 "record ignored)", path, found->data_offset + n * found->record_size, n, rest);
	return n;
}
