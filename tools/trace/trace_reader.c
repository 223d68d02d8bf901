/* trace_reader.c: reads and validates a recording directory into arrays, joins the files of each
 * process (fault → context, fault/context/allocation → stack, fault → live allocation), and walks
 * faults in time order. The contract is in trace_reader.h, the format in inc/faultline/trace.h.
 *
 * A process is loaded top to bottom by load_process: meta.json, stats.json, faults, stacks (so the
 * references of the other files can be checked), contexts, allocs, then the attribution sweep and
 * the maps snapshots. Each binary file is read whole (its size bounds every allocation made for
 * it), its header checked by check_header, then its records one by one with their file offsets at
 * hand, so every complaint names "PATH: offset N". Cross-record checks (unique seqs and ids) sort
 * packed (key, record index) pairs and report the later record of a duplicate. */
#include "trace_reader.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#define HEADER_SIZE ((uint32_t)sizeof(struct fl_file_header))
#define STACK_FLAGS_KNOWN (FL_STACK_EXACT_PC | FL_STACK_TRUNCATED)
#define FAULT_FLAGS_KNOWN (FL_FAULT_WRITE | FL_FAULT_PREFETCH_HIT | FL_FAULT_NO_STACK | FL_FAULT_OBJECT)
#define PID_MAX_VALUE 0x7fffffffu

/* What a process owns besides its public arrays. */
struct fl_process_private {
	uint32_t *fault_by_seq;     /* indexes into faults, sorted by rec.seq */
	uint32_t *alloc_by_id;      /* indexes into allocs of MALLOC/MMAP records, sorted by alloc_id */
	uint32_t fault_record_size; /* as the faults file declares it */
	size_t nalloc_by_id;
	unsigned char *stack_data;  /* the stacks file as read; fl_stack.frames point into it */
};

/* One live object piece of an allocation sweep (see trace_reader.h). */
struct fl_alloc_piece {
	uint64_t start, end;        /* [start, end), non-empty, disjoint from every other piece */
	uint32_t alloc;             /* index into proc->allocs of the MALLOC/MMAP record */
	uint32_t left, right;       /* children (0 = none); left keys < start < right keys */
	uint32_t priority;          /* a parent's priority is >= its children's */
};

/* ======================================================================= small helpers */

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

const char *fl_fault_kind_name(unsigned kind)
{
	switch (kind) {
	case FL_FAULT_FIRST_TOUCH: return "first-touch";
	case FL_FAULT_REFAULT: return "refault";
	case FL_FAULT_SOFT: return "soft";
	case FL_FAULT_CONCURRENT: return "concurrent";
	case FL_FAULT_ACCESS_SAMPLE: return "access";
	default: return "?";
	}
}

const char *fl_alloc_kind_name(unsigned kind)
{
	switch (kind) {
	case FL_ALLOC_MALLOC: return "malloc";
	case FL_ALLOC_FREE: return "free";
	case FL_ALLOC_MMAP: return "mmap";
	case FL_ALLOC_MUNMAP: return "munmap";
	default: return "?";
	}
}

static const char *file_kind_name(uint32_t kind)
{
	switch (kind) {
	case FL_FILE_FAULTS: return FL_FILE_NAME_FAULTS;
	case FL_FILE_STACKS: return FL_FILE_NAME_STACKS;
	case FL_FILE_ALLOCS: return FL_FILE_NAME_ALLOCS;
	case FL_FILE_CONTEXTS: return FL_FILE_NAME_CONTEXTS;
	case FL_FILE_SITES: return FL_FILE_NAME_SITES;
	case FL_FILE_ALLOCS_ZSTD: return FL_FILE_NAME_ALLOCS_ZSTD;
	default: return "unknown";
	}
}

/* ======================================================================= loader state */

/* Header fields a file must agree on with the reference (meta.json for faults, faults for others). */
enum {
	REF_PAGE_SIZE = 1,
	REF_START_NS = 2,
	REF_REGION_START = 4,
	REF_REGION_SIZE = 8,
};

/* What loading one process needs at hand: where errors go and which file is being read. */
struct loader {
	struct fl_recording *rec;
	struct fl_process *proc;
	char *err;
	size_t errlen;
	char path[PATH_MAX];            /* the file being read */
	struct fl_file_header faults_header; /* the reference the other headers must agree with */
	unsigned known;                 /* REF_* bits: which faults_header fields are known */
	uint64_t handlers;              /* meta.json "handlers", 0 if absent */
	size_t dangling;                /* references to missing records in the current file */
	uint64_t first_dangling;        /* offset of the first one */
	uint32_t record_size;           /* of the file being read (records may be longer than we know) */
};

static void add_warning(struct fl_recording *rec, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends one warning line to rec (counted as suppressed beyond FL_MAX_WARNINGS or without memory). */
static void add_warning(struct fl_recording *rec, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (rec->nwarnings >= FL_MAX_WARNINGS) {
		rec->warnings_suppressed++;
		return;
	}
	char **grown = realloc(rec->warnings, (rec->nwarnings + 1) * sizeof(*grown));
	char *copy = strdup(line);
	if (grown)
		rec->warnings = grown;
	if (!grown || !copy) {
		free(copy);
		rec->warnings_suppressed++;
		return;
	}
	rec->warnings[rec->nwarnings++] = copy;
}

static int fail_at(struct loader *ld, uint64_t offset, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Writes "PATH: offset N: reason" into the error buffer; returns -1. */
static int fail_at(struct loader *ld, uint64_t offset, const char *fmt, ...)
{
	char reason[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	snprintf(ld->err, ld->errlen, "%s: offset %llu: %s", ld->path, (unsigned long long)offset, reason);
	return -1;
}

static int fail_file(struct loader *ld, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Writes "PATH: reason" into the error buffer; returns -1. */
static int fail_file(struct loader *ld, const char *fmt, ...)
{
	char reason[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	snprintf(ld->err, ld->errlen, "%s: %s", ld->path, reason);
	return -1;
}

static int fail_nomem(struct loader *ld, const char *what)
{
	return fail_file(ld, "out of memory for %s", what);
}

/* Sets ld->path to the process directory's file NAME. */
static int set_path(struct loader *ld, const char *name)
{
	int n = snprintf(ld->path, sizeof(ld->path), "%s/%s", ld->proc->dir, name);
	if (n < 0 || (size_t)n >= sizeof(ld->path)) {
		snprintf(ld->err, ld->errlen, "%s/%s: path too long", ld->proc->dir, name);
		return -1;
	}
	return 0;
}

/* A reference to a record that is not in the trace, at OFFSET of the current file: corruption in
 * a complete trace; in a trace that may be cut, counted for one warning per file and ignored
 * (returns 0, and the caller drops the reference). */
static int dangling_ref(struct loader *ld, uint64_t offset, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int dangling_ref(struct loader *ld, uint64_t offset, const char *fmt, ...)
{
	char reason[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	if (!ld->proc->maybe_cut)
		return fail_at(ld, offset, "%s", reason);
	if (ld->dangling++ == 0)
		ld->first_dangling = offset;
	return 0;
}

/* Ends the dangling-reference count of the current file with its warning. */
static void report_dangling(struct loader *ld, const char *what)
{
	if (ld->dangling)
		add_warning(ld->rec, "%s: %zu %s missing from the trace (first at offset %llu); ignored: the "
			    "process's trace may be cut", ld->path, ld->dangling, what,
			    (unsigned long long)ld->first_dangling);
	ld->dangling = 0;
}

/* Reads the current file whole. Returns 1 with *data (malloc'd, NUL-terminated) and *len, 0 when
 * the file does not exist, -1 on error. Reads at most the size fstat reported: a file still growing
 * is read as it was when opened. */
static int read_whole(struct loader *ld, unsigned char **data, size_t *len)
{
	struct stat st;
	/* O_NONBLOCK: opening a FIFO planted in a recording must not wait for a writer (the
	 * file is refused below as not regular; reads of a regular file ignore the flag) */
	int fd = open(ld->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	*data = NULL;
	*len = 0;
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		return fail_file(ld, "open: %s", strerror(errno));
	}
	if (fstat(fd, &st) < 0) {
		int saved = errno;
		close(fd);
		return fail_file(ld, "fstat: %s", strerror(saved));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return fail_file(ld, "not a regular file");
	}
	size_t size = (size_t)st.st_size, got = 0;
	unsigned char *buf = malloc(size + 1);
	if (!buf) {
		close(fd);
		return fail_file(ld, "out of memory reading %zu bytes", size);
	}
	while (got < size) {
		ssize_t r = read(fd, buf + got, size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int saved = errno;
			free(buf);
			close(fd);
			return fail_file(ld, "read: %s", strerror(saved));
		}
		if (r == 0)
			break;  /* shrank while we read: take what is there */
		got += (size_t)r;
	}
	close(fd);
	buf[got] = '\0';
	*data = buf;
	*len = got;
	return 1;
}

/* ======================================================================= file headers */

/* One header field to check against the reference: skipped when the file was cut before its end
 * (END is the field's end offset) or the reference does not know it (BIT not in ld->known). */
static int check_field(struct loader *ld, size_t len, size_t offset, size_t end, unsigned bit, uint64_t got,
		       uint64_t want, const char *name, const char *source)
{
	if (len < end || !(ld->known & bit))
		return 0;
	if (got != want)
		return fail_at(ld, offset, "header %s %llu differs from %s (%llu)", name,
			       (unsigned long long)got, source, (unsigned long long)want);
	return 0;
}

/* Makes the faults header (its fields present in LEN bytes) the reference for the other files. */
static void set_reference(struct loader *ld, const struct fl_file_header *hdr, size_t len)
{
	struct fl_file_header *ref = &ld->faults_header;
	if (len >= 32)
		ref->page_size = hdr->page_size, ld->known |= REF_PAGE_SIZE;
	if (len >= 40)
		ref->start_ns = hdr->start_ns, ld->known |= REF_START_NS;
	if (len >= 48)
		ref->region_start = hdr->region_start, ld->known |= REF_REGION_START;
	if (len >= 56)
		ref->region_size = hdr->region_size, ld->known |= REF_REGION_SIZE;
}

/* Validates the header of the current binary file, of kind KIND with records of RECORD_SIZE
 * bytes. A file shorter than a header is accepted when what it holds is a valid beginning of one
 * (a crash between creating and writing it): *complete is set to false and a warning added. */
static int check_header(struct loader *ld, const unsigned char *data, size_t len, uint32_t kind,
			uint32_t record_size, struct fl_file_header *hdr, bool *complete)
{
	const struct fl_file_header *ref = &ld->faults_header;
	const char *ref_name = kind == FL_FILE_FAULTS ? FL_FILE_NAME_META : "the faults header";
	size_t have = len < HEADER_SIZE ? len : HEADER_SIZE;

	memset(hdr, 0, sizeof(*hdr));
	memcpy(hdr, data, have);
	*complete = len >= HEADER_SIZE;
	if (memcmp(hdr->magic, FL_TRACE_MAGIC, have < 8 ? have : 8) != 0) {
		size_t at = 0;
		while (at < 7 && hdr->magic[at] == FL_TRACE_MAGIC[at])
			at++;
		return fail_at(ld, at, "bad magic: not a faultline trace file (want \"%s\")", FL_TRACE_MAGIC);
	}
	if (have >= 12) {
		if (hdr->version == 0)
			return fail_at(ld, offsetof(struct fl_file_header, version), "bad format version 0");
		if (hdr->version > FL_TRACE_VERSION)
			return fail_at(ld, offsetof(struct fl_file_header, version), "format version %u is newer than this faultline reads (%d): "
				       "use a newer faultline", hdr->version, FL_TRACE_VERSION);
	}
	if (have >= 16 && hdr->kind != kind)
		return fail_at(ld, offsetof(struct fl_file_header, kind), "file kind %u (%s), want %u (%s)", hdr->kind, file_kind_name(hdr->kind),
			       kind, file_kind_name(kind));
	if (have >= 20 && hdr->header_size != HEADER_SIZE)
		return fail_at(ld, offsetof(struct fl_file_header, header_size), "header_size %u, want %u", hdr->header_size, HEADER_SIZE);
	/* A record may be longer than this reader knows (fields added at its end, trace.h): the known
	 * prefix is read and the tail skipped. Shorter than the first version of the record is wrong. */
	if (have >= 24 && (record_size == 0 ? hdr->record_size != 0
					    : hdr->record_size < record_size || hdr->record_size > 65536 ||
						      hdr->record_size % 8 != 0))
		return fail_at(ld, offsetof(struct fl_file_header, record_size), "record_size %u, want %s%u for a %s file",
			       hdr->record_size, record_size ? "a multiple of 8, at least " : "", record_size,
			       file_kind_name(kind));
	ld->record_size = have >= 24 ? hdr->record_size : record_size;
	if (have >= 28 && hdr->pid != ld->proc->pid)
		return fail_at(ld, offsetof(struct fl_file_header, pid), "pid %u, but the process directory is %s", hdr->pid, ld->proc->name);
	if (have >= 32 && (hdr->page_size == 0 || (hdr->page_size & (hdr->page_size - 1)) != 0))
		return fail_at(ld, offsetof(struct fl_file_header, page_size), "page_size %u is not a power of two", hdr->page_size);
	if (have >= 56 && hdr->region_start + hdr->region_size < hdr->region_start)
		return fail_at(ld, offsetof(struct fl_file_header, region_size), "region [0x%llx, +%llu) wraps around the address space",
			       (unsigned long long)hdr->region_start, (unsigned long long)hdr->region_size);
	/* The faults header agrees with meta.json; every other header with the faults header. */
	if (check_field(ld, len, 28, 32, REF_PAGE_SIZE, hdr->page_size, ref->page_size, "page_size", ref_name) < 0 ||
	    check_field(ld, len, 32, 40, REF_START_NS, hdr->start_ns, ref->start_ns, "start_ns", ref_name) < 0 ||
	    check_field(ld, len, 40, 48, REF_REGION_START, hdr->region_start, ref->region_start, "region_start",
			ref_name) < 0 ||
	    check_field(ld, len, 48, 56, REF_REGION_SIZE, hdr->region_size, ref->region_size, "region_size",
			ref_name) < 0)
		return -1;
	if (!*complete) {
		ld->proc->maybe_cut = true;
		add_warning(ld->rec, "%s: truncated at offset %zu, inside its %u-byte header (0 complete records)",
			    ld->path, len, HEADER_SIZE);
	}
	return 0;
}

/* For a file of fixed-size records: how many complete records it holds; warns about a cut tail. */
static size_t count_records(struct loader *ld, size_t len, uint32_t record_size)
{
	if (len <= HEADER_SIZE)
		return 0;
	size_t body = len - HEADER_SIZE, n = body / record_size, rest = body % record_size;
	if (rest) {
		ld->proc->maybe_cut = true;
		add_warning(ld->rec, "%s: truncated at offset %zu (%zu complete records; %zu bytes of a "
			    "partial record ignored)", ld->path, HEADER_SIZE + n * record_size, n, rest);
	}
	return n;
}

/* Reads the current binary file and checks its header. Returns 1 with the data and the number of
 * complete fixed-size records (0 for stacks), 0 when the file is absent, -1 on error. */
static int open_binary(struct loader *ld, const char *name, uint32_t kind, uint32_t record_size,
		       unsigned char **data, size_t *len, size_t *nrecords)
{
	struct fl_file_header hdr;
	bool complete;
	int rc;

	*nrecords = 0;
	if (set_path(ld, name) < 0)
		return -1;
	rc = read_whole(ld, data, len);
	if (rc <= 0)
		return rc;
	if (check_header(ld, *data, *len, kind, record_size, &hdr, &complete) < 0) {
		free(*data);
		*data = NULL;
		return -1;
	}
	if (kind == FL_FILE_FAULTS)
		set_reference(ld, &hdr, *len);
	if (record_size && kind != FL_FILE_ALLOCS_ZSTD) /* zstd frames, not records */
		*nrecords = count_records(ld, *len, ld->record_size);
	return 1;
}

/* ======================================================================= meta.json, stats.json */

static int load_meta(struct loader *ld)
{
	struct fl_process *proc = ld->proc;
	char reason[768];
	uint64_t v;

	if (set_path(ld, FL_FILE_NAME_META) < 0)
		return -1;
	if (access(ld->path, F_OK) < 0)
		return fail_file(ld, "missing: every process directory must have one (%s)", strerror(errno));
	if (stats_json_load(ld->path, &proc->meta, reason, sizeof(reason)) < 0) {
		snprintf(ld->err, ld->errlen, "%s", reason);
		return -1;
	}
	if (stats_json_uint(&proc->meta, "pid", &v) < 0)
		return fail_file(ld, "no integer \"pid\"");
	if (v != proc->pid)
		return fail_file(ld, "pid %llu, but the process directory is %s", (unsigned long long)v, proc->name);
	if (stats_json_uint(&proc->meta, "format_version", &v) == 0 && v > FL_TRACE_VERSION)
		return fail_file(ld, "format version %llu is newer than this faultline reads (%d): use a newer "
				 "faultline", (unsigned long long)v, FL_TRACE_VERSION);
	proc->exe = stats_json_string(&proc->meta, "exe");
	if (!proc->exe)
		proc->exe = "";
	if (stats_json_strings(&proc->meta, "cmdline", &proc->cmdline, &proc->ncmdline) < 0) {
		proc->cmdline = NULL;
		proc->ncmdline = 0;
	}
	if (stats_json_uint(&proc->meta, "handlers", &v) == 0)
		ld->handlers = v;
	/* The values the faults header must repeat (when meta.json has them). */
	memset(&ld->faults_header, 0, sizeof(ld->faults_header));
	ld->known = 0;
	if (stats_json_uint(&proc->meta, "page_size", &v) == 0 && v <= UINT32_MAX)
		ld->faults_header.page_size = (uint32_t)v, ld->known |= REF_PAGE_SIZE;
	if (stats_json_uint(&proc->meta, "start_ns", &v) == 0)
		ld->faults_header.start_ns = v, ld->known |= REF_START_NS;
	if (stats_json_uint(&proc->meta, "region_start", &v) == 0)
		ld->faults_header.region_start = v, ld->known |= REF_REGION_START;
	if (stats_json_uint(&proc->meta, "region_size", &v) == 0)
		ld->faults_header.region_size = v, ld->known |= REF_REGION_SIZE;
	return 0;
}

static int load_stats(struct loader *ld)
{
	struct fl_process *proc = ld->proc;
	char reason[768];
	uint64_t v;

	if (set_path(ld, FL_FILE_NAME_STATS) < 0)
		return -1;
	if (access(ld->path, F_OK) < 0) {
		if (errno != ENOENT)
			return fail_file(ld, "access: %s", strerror(errno));
		proc->maybe_cut = true;
		add_warning(ld->rec, "%s: no %s: the process was killed (SIGKILL?) and its trace may be cut",
			    proc->dir, FL_FILE_NAME_STATS);
		return 0;
	}
	if (stats_json_load(ld->path, &proc->stats, reason, sizeof(reason)) < 0) {
		snprintf(ld->err, ld->errlen, "%s", reason);
		return -1;
	}
	proc->has_stats = true;
	if (stats_json_uint(&proc->stats, "pid", &v) == 0 && v != proc->pid)
		return fail_file(ld, "pid %llu, but the process directory is %s", (unsigned long long)v, proc->name);
	if (stats_json_uint(&proc->stats, "records_dropped", &v) == 0 && v > 0) {
		proc->maybe_cut = true;
		add_warning(ld->rec, "%s: %llu fault records were dropped while recording (%s): the trace is "
			    "incomplete", ld->path, (unsigned long long)v,
			    stats_json_string(&proc->stats, "records_dropped_reason") ?: "no reason given");
	}
	return 0;
}

/* Compares the number of fault records with stats.json's count (a file cut at a record boundary). */
static void check_fault_count(struct loader *ld)
{
	struct fl_process *proc = ld->proc;
	uint64_t total, dropped = 0, access_samples = 0;

	if (!proc->has_stats || stats_json_uint(&proc->stats, "faults_total", &total) < 0)
		return;
	stats_json_uint(&proc->stats, "records_dropped", &dropped);
	if (stats_json_uint(&proc->stats, "access_samples", &access_samples) == 0)
		total += access_samples; /* records too, but not faults (record --sample-accesses, --mrc) */
	if (total >= dropped && total - dropped != proc->nfaults) {
		proc->maybe_cut = true;
		add_warning(ld->rec, "%s/%s: %zu fault records, but stats.json counts %llu faults (%llu dropped)",
			    proc->dir, FL_FILE_NAME_FAULTS, proc->nfaults, (unsigned long long)total,
			    (unsigned long long)dropped);
	}
}

/* ======================================================================= faults */

static int compare_fault_time(const void *a, const void *b)
{
	const struct fl_fault_record *x = &((const struct fl_fault *)a)->rec;
	const struct fl_fault_record *y = &((const struct fl_fault *)b)->rec;
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int compare_fault_seq(const void *a, const void *b, void *faults_arg)
{
	const struct fl_fault *faults = faults_arg;
	uint32_t x = faults[*(const uint32_t *)a].rec.seq, y = faults[*(const uint32_t *)b].rec.seq;
	return x < y ? -1 : x > y;
}

/* Checks one fault record (except its stack reference, checked once stacks are read). */
static int check_fault(struct loader *ld, const struct fl_fault_record *r, uint64_t at, size_t i)
{
	const struct fl_file_header *h = &ld->faults_header;

	if (r->kind < FL_FAULT_FIRST_TOUCH || r->kind > FL_FAULT_KIND_MAX)
		return fail_at(ld, at + offsetof(struct fl_fault_record, kind), "fault record %zu: kind %u is not a fault kind (1..%u)", i, r->kind, FL_FAULT_KIND_MAX);
	if (r->flags & ~FAULT_FLAGS_KNOWN)
		return fail_at(ld, at + offsetof(struct fl_fault_record, flags), "fault record %zu: unknown flag bits 0x%x", i, r->flags & ~FAULT_FLAGS_KNOWN);
	if (r->addr < h->region_start || r->addr - h->region_start >= h->region_size)
		return fail_at(ld, at + offsetof(struct fl_fault_record, addr), "fault record %zu: address 0x%llx outside the region [0x%llx, 0x%llx)",
			       i, (unsigned long long)r->addr, (unsigned long long)h->region_start,
			       (unsigned long long)(h->region_start + h->region_size));
	if (ld->handlers && r->handler >= ld->handlers)
		return fail_at(ld, at + offsetof(struct fl_fault_record, handler), "fault record %zu: handler %u, but meta.json says %llu handlers", i,
			       r->handler, (unsigned long long)ld->handlers);
	return 0;
}

/* Fails on two records with the same key among PAIRS (key << 32 | record index, sorted here);
 * WHAT names the key, OFFSET_OF gives a record's file offset. */
static int check_unique(struct loader *ld, uint64_t *pairs, size_t n, const char *what, uint32_t record_size)
{
	qsort(pairs, n, sizeof(*pairs), compare_u64);
	for (size_t i = 1; i < n; i++) {
		if (pairs[i] >> 32 != pairs[i - 1] >> 32)
			continue;
		/* Name the later of the two records (in file order). */
		size_t a = (uint32_t)pairs[i - 1], b = (uint32_t)pairs[i];
		size_t later = a > b ? a : b, earlier = a > b ? b : a;
		return fail_at(ld, HEADER_SIZE + (uint64_t)later * record_size, "%s %llu appears twice (records %zu and %zu)", what,
			       (unsigned long long)(pairs[i] >> 32), earlier, later);
	}
	return 0;
}

/* File offsets of records, with the record sizes the files declare. */
#define fault_offset(i) (HEADER_SIZE + (uint64_t)(i) * ld->proc->priv->fault_record_size)
#define context_offset(i) (HEADER_SIZE + (uint64_t)(i) * ld->record_size)
#define alloc_offset(i) (HEADER_SIZE + (uint64_t)(i) * ld->record_size)

/* Reads the faults file into proc->faults, in file order, and checks each record and the
 * uniqueness of seqs. The header values become the process's. */
static int load_faults(struct loader *ld)
{
	struct fl_process *proc = ld->proc;
	unsigned char *data;
	size_t len, n;
	int rc = open_binary(ld, FL_FILE_NAME_FAULTS, FL_FILE_FAULTS, FL_FAULT_RECORD_SIZE_V1, &data, &len, &n);

	if (rc == 0)
		return fail_file(ld, "missing: every process directory must have one");
	if (rc < 0)
		return -1;
	/* From the header, or from meta.json for what a header cut short lacks. */
	proc->page_size = ld->faults_header.page_size;
	proc->start_ns = ld->faults_header.start_ns;
	proc->region_start = ld->faults_header.region_start;
	proc->region_size = ld->faults_header.region_size;
	proc->priv->fault_record_size = ld->record_size;
	if (n > UINT32_MAX - 1) {
		free(data);
		return fail_file(ld, "%zu records: more than this reader indexes", n);
	}
	proc->faults = calloc(n ? n : 1, sizeof(*proc->faults));
	uint64_t *pairs = malloc((n ? n : 1) * sizeof(*pairs));
	if (!proc->faults || !pairs) {
		free(data);
		free(pairs);
		return fail_nomem(ld, "fault records");
	}
	for (size_t i = 0; i < n; i++) {
		struct fl_fault *f = &proc->faults[i];
		/* the fields this reader knows; those a shorter (older) record lacks stay zero */
		memcpy(&f->rec, data + fault_offset(i), ld->record_size < sizeof(f->rec) ? ld->record_size : sizeof(f->rec));
		f->context = FL_NONE;
		f->alloc = FL_NONE;
		pairs[i] = (uint64_t)f->rec.seq << 32 | i;
		if (ld->record_size < sizeof(f->rec))
			f->rec.flags &= (uint8_t)~FL_FAULT_OBJECT; /* the record has no object fields */
		proc->fault_objects |= (f->rec.flags & FL_FAULT_OBJECT) != 0;
		if (check_fault(ld, &f->rec, fault_offset(i), i) < 0) {
			free(data);
			free(pairs);
			return -1;
		}
	}
	free(data);
	proc->nfaults = n;
	rc = check_unique(ld, pairs, n, "seq", ld->record_size);
	free(pairs);
	return rc;
}

/* ======================================================================= stacks */

static int compare_stack_id(const void *a, const void *b)
{
	uint32_t x = ((const struct fl_stack *)a)->id, y = ((const struct fl_stack *)b)->id;
	return x < y ? -1 : x > y;
}

/* Walks the stack records of DATA[HEADER_SIZE, len): with stacks NULL only counts them (and
 * validates them: errors are reported on this pass); otherwise fills stacks. Returns the number
 * of complete records, or -1. A record cut short ends the walk with a truncation warning. */
static long walk_stacks(struct loader *ld, const unsigned char *data, size_t len, struct fl_stack *stacks)
{
	size_t at = HEADER_SIZE, n = 0;

	while (at < len) {
		struct fl_stack_record r;
		size_t rest = len - at;
		if (rest < sizeof(r))
			goto truncated;
		memcpy(&r, data + at, sizeof(r));
		if (!stacks) {
			if (r.stack_id == 0)
				return fail_at(ld, at, "stack record %zu: stack id 0 (ids start at 1)", n);
			if (r.nframes > FL_STACK_MAX_FRAMES)
				return fail_at(ld, at + offsetof(struct fl_stack_record, nframes), "stack record %zu (id %u): %u frames, at most %d", n,
					       r.stack_id, r.nframes, FL_STACK_MAX_FRAMES);
			if (r.flags & ~STACK_FLAGS_KNOWN)
				return fail_at(ld, at + offsetof(struct fl_stack_record, flags), "stack record %zu (id %u): unknown flag bits 0x%x", n,
					       r.stack_id, r.flags & ~STACK_FLAGS_KNOWN);
		}
		size_t size = sizeof(r) + (size_t)r.nframes * sizeof(uint64_t);
		if (rest < size)
			goto truncated;
		if (stacks) {
			stacks[n].id = r.stack_id;
			stacks[n].nframes = r.nframes;
			stacks[n].flags = r.flags;
			stacks[n].hash = r.hash;
			/* Every record starts 8-aligned (64 + 16 + 8k) in an 8-aligned buffer. */
			stacks[n].frames = (const uint64_t *)(const void *)(data + at + sizeof(r));
		}
		at += size;
		n++;
	}
	return (long)n;
truncated:
	if (!stacks) {
		ld->proc->maybe_cut = true;
		add_warning(ld->rec, "%s: truncated at offset %zu (%zu complete records; %zu bytes of a partial "
			    "record ignored)", ld->path, at, n, len - at);
	}
	return (long)n;
}

static int load_stacks(struct loader *ld)
{
	struct fl_process *proc = ld->proc;
	unsigned char *data;
	size_t len, unused;
	int rc = open_binary(ld, FL_FILE_NAME_STACKS, FL_FILE_STACKS, 0, &data, &len, &unused);

	if (rc <= 0)
		return rc;
	proc->priv->stack_data = data;
	long n = walk_stacks(ld, data, len, NULL);
	if (n < 0)
		return -1;
	proc->stacks = calloc(n ? (size_t)n : 1, sizeof(*proc->stacks));
	if (!proc->stacks)
		return fail_nomem(ld, "stack records");
	proc->nstacks = (size_t)walk_stacks(ld, data, len, proc->stacks);
	qsort(proc->stacks, proc->nstacks, sizeof(*proc->stacks), compare_stack_id);
	for (size_t i = 1; i < proc->nstacks; i++) {
		if (proc->stacks[i].id == proc->stacks[i - 1].id) {
			/* Name the later definition. */
			const unsigned char *a = (const unsigned char *)proc->stacks[i - 1].frames;
			const unsigned char *b = (const unsigned char *)proc->stacks[i].frames;
			size_t later = (size_t)((a > b ? a : b) - data) - sizeof(struct fl_stack_record);
			return fail_at(ld, later, "stack id %u defined twice", proc->stacks[i].id);
		}
	}
	return 0;
}

/* Checks that stack id ID, referenced at OFFSET of the current file, exists; a missing id in a
 * trace that may be cut is cleared (*id = 0) and counted. */
static int check_stack_ref(struct loader *ld, uint32_t *id, uint64_t offset, const char *what, size_t i)
{
	if (*id == 0 || fl_process_stack(ld->proc, *id))
		return 0;
	if (dangling_ref(ld, offset, "%s %zu: stack id %u is not defined in %s/%s", what, i, *id,
			 ld->proc->dir, FL_FILE_NAME_STACKS) < 0)
		return -1;
	*id = 0;
	return 0;
}

/* Checks the stack ids of the fault records (still in file order, so offsets are known). */
static int check_fault_stacks(struct loader *ld)
{
	struct fl_process *proc = ld->proc;

	if (set_path(ld, FL_FILE_NAME_FAULTS) < 0)
		return -1;
	for (size_t i = 0; i < proc->nfaults; i++) {
		if (check_stack_ref(ld, &proc->faults[i].rec.stack_id, fault_offset(i) + offsetof(struct fl_fault_record, stack_id), "fault record", i) < 0)
			return -1;
	}
	report_dangling(ld, "fault stack ids");
	return 0;
}

/* Puts the faults into time order (handlers append their chunks independently) and indexes them
 * by seq. */
static int index_faults(struct loader *ld)
{
	struct fl_process *proc = ld->proc;
	size_t n = proc->nfaults;

	for (size_t i = 1; i < n; i++) {
		if (compare_fault_time(&proc->faults[i - 1], &proc->faults[i]) > 0) {
			qsort(proc->faults, n, sizeof(*proc->faults), compare_fault_time);
			break;
		}
	}
	proc->priv->fault_by_seq = malloc((n ? n : 1) * sizeof(uint32_t));
	if (!proc->priv->fault_by_seq)
		return fail_nomem(ld, "the seq index");
	for (size_t i = 0; i < n; i++)
		proc->priv->fault_by_seq[i] = (uint32_t)i;
	qsort_r(proc->priv->fault_by_seq, n, sizeof(uint32_t), compare_fault_seq, proc->faults);
	check_fault_count(ld);
	return 0;
}

/* ======================================================================= contexts */

static int compare_context_seq(const void *a, const void *b, void *ctx)
{
	const struct fl_fault_context *c = ctx;
	uint32_t x = c[*(const uint32_t *)a].seq, y = c[*(const uint32_t *)b].seq;
	return (x > y) - (x < y);
}

/* Contexts in seq order, which is each thread's own order (its PMU values increase in it),
 * whichever writer appended them (the thread itself, or the handler that served its fault). */
static int order_contexts_by_seq(struct loader *ld)
{
	struct fl_process *proc = ld->proc;
	size_t n = proc->ncontexts;
	uint32_t *order = malloc((n ? n : 1) * sizeof(*order));
	uint32_t *position = malloc((n ? n : 1) * sizeof(*position));
	struct fl_fault_context *sorted = malloc((n ? n : 1) * sizeof(*sorted));
	if (!order || !position || !sorted) {
		free(order), free(position), free(sorted);
		return fail_nomem(ld, "the context order");
	}
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, n, sizeof(*order), compare_context_seq, proc->contexts);
	for (size_t k = 0; k < n; k++) {
		sorted[k] = proc->contexts[order[k]];
		position[order[k]] = (uint32_t)k;
	}
	for (size_t i = 0; i < proc->nfaults; i++)
		if (proc->faults[i].context != FL_NONE)
			proc->faults[i].context = position[proc->faults[i].context];
	free(proc->contexts);
	proc->contexts = sorted;
	free(order), free(position);
	return 0;
}

static int load_contexts(struct loader *ld)
{
	struct fl_process *proc = ld->proc;
	unsigned char *data;
	size_t len, n, kept = 0;
	int rc = open_binary(ld, FL_FILE_NAME_CONTEXTS, FL_FILE_CONTEXTS, sizeof(struct fl_fault_context),
			     &data, &len, &n);

	if (rc <= 0)
		return rc;
	proc->contexts = calloc(n ? n : 1, sizeof(*proc->contexts));
	if (!proc->contexts) {
		free(data);
		return fail_nomem(ld, "context records");
	}
	for (size_t i = 0; i < n; i++) {
		struct fl_fault_context c;
		uint64_t at = context_offset(i);
		memcpy(&c, data + at, sizeof(c));
		if (c.npmu > FL_PMU_MAX) {
			free(data);
			return fail_at(ld, at + offsetof(struct fl_fault_context, npmu), "context record %zu: npmu %u, at most %d", i, c.npmu, FL_PMU_MAX);
		}
		if (check_stack_ref(ld, &c.stack_id, at + offsetof(struct fl_fault_context, stack_id), "context record", i) < 0) {
			free(data);
			return -1;
		}
		const struct fl_fault *found = fl_process_fault_by_seq(proc, c.seq);
		if (!found) {
			if (dangling_ref(ld, at, "context record %zu: seq %u is not in %s/%s", i, c.seq, proc->dir,
					 FL_FILE_NAME_FAULTS) < 0) {
				free(data);
				return -1;
			}
			continue;
		}
		struct fl_fault *f = &proc->faults[found - proc->faults];
		if (f->context != FL_NONE) {
			free(data);
			return fail_at(ld, at, "context record %zu: a second context for seq %u", i, c.seq);
		}
		if (c.tid != f->rec.tid) {
			free(data);
			return fail_at(ld, at + offsetof(struct fl_fault_context, tid), "context record %zu: tid %u, but fault seq %u was taken by tid %u",
				       i, c.tid, c.seq, f->rec.tid);
		}
		f->context = (uint32_t)kept;
		proc->contexts[kept++] = c;
	}
	free(data);
	proc->ncontexts = kept;
	report_dangling(ld, "context seqs or stack ids");
	return order_contexts_by_seq(ld);
}

/* ======================================================================= allocs */

/* Checks one allocation record (its stack reference included). */
static int check_alloc(struct loader *ld, struct fl_alloc_record *a, uint64_t at, size_t i)
{
	switch (a->kind) {
	case FL_ALLOC_MALLOC:
	case FL_ALLOC_MMAP:
		if (a->alloc_id == 0)
			return fail_at(ld, at + offsetof(struct fl_alloc_record, alloc_id), "alloc record %zu (%s): alloc_id 0 (ids start at 1)", i,
				       fl_alloc_kind_name(a->kind));
		break;
	case FL_ALLOC_FREE:
	case FL_ALLOC_MUNMAP:
		if (a->alloc_id != 0)
			return fail_at(ld, at + offsetof(struct fl_alloc_record, alloc_id), "alloc record %zu (%s): alloc_id %u, want 0", i,
				       fl_alloc_kind_name(a->kind), a->alloc_id);
		if (a->kind == FL_ALLOC_FREE && a->size != 0)
			return fail_at(ld, at + offsetof(struct fl_alloc_record, size), "alloc record %zu (free): size %llu, want 0", i,
				       (unsigned long long)a->size);
		break;
	default:
		return fail_at(ld, at + offsetof(struct fl_alloc_record, kind), "alloc record %zu: kind %u is not an allocation kind (1..4)", i, a->kind);
	}
	if (a->addr + a->size < a->addr)
		return fail_at(ld, at + offsetof(struct fl_alloc_record, size), "alloc record %zu: [0x%llx, +%llu) wraps around the address space", i,
			       (unsigned long long)a->addr, (unsigned long long)a->size);
	return check_stack_ref(ld, &a->stack_id, at + offsetof(struct fl_alloc_record, stack_id), "alloc record", i);
}

static int compare_alloc_order(const void *a, const void *b, void *allocs_arg)
{
	const struct fl_alloc_record *allocs = allocs_arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	if (allocs[i].time_ns != allocs[j].time_ns)
		return allocs[i].time_ns < allocs[j].time_ns ? -1 : 1;
	return i < j ? -1 : i > j;
}

static int compare_alloc_id(const void *a, const void *b, void *allocs_arg)
{
	const struct fl_alloc_record *allocs = allocs_arg;
	uint32_t x = allocs[*(const uint32_t *)a].alloc_id, y = allocs[*(const uint32_t *)b].alloc_id;
	return x < y ? -1 : x > y;
}

/* Puts proc->allocs into time order, keeping file order among equal times. */
static int sort_allocs(struct loader *ld)
{
	struct fl_process *proc = ld->proc;
	size_t n = proc->nallocs;
	bool sorted = true;

	for (size_t i = 1; i < n && sorted; i++)
		sorted = proc->allocs[i - 1].time_ns <= proc->allocs[i].time_ns;
	if (sorted)
		return 0;
	uint32_t *order = malloc(n * sizeof(*order));
	struct fl_alloc_record *out = malloc(n * sizeof(*out));
	if (!order || !out) {
		free(order);
		free(out);
		return fail_nomem(ld, "sorting alloc records");
	}
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, n, sizeof(*order), compare_alloc_order, proc->allocs);
	for (size_t i = 0; i < n; i++)
		out[i] = proc->allocs[order[i]];
	free(order);
	free(proc->allocs);
	proc->allocs = out;
	return 0;
}

/* Builds the alloc_id index of proc->allocs (in time order). */
static int index_allocs(struct loader *ld)
{
	struct fl_process *proc = ld->proc;
	size_t nids = 0;

	free(proc->priv->alloc_by_id);
	proc->priv->alloc_by_id = malloc((proc->nallocs ? proc->nallocs : 1) * sizeof(uint32_t));
	if (!proc->priv->alloc_by_id)
		return fail_nomem(ld, "the alloc_id index");
	for (size_t i = 0; i < proc->nallocs; i++) {
		if (proc->allocs[i].alloc_id)
			proc->priv->alloc_by_id[nids++] = (uint32_t)i;
	}
	proc->priv->nalloc_by_id = nids;
	qsort_r(proc->priv->alloc_by_id, nids, sizeof(uint32_t), compare_alloc_id, proc->allocs);
	return 0;
}

/* Checks the n records of proc->allocs (read from the current file; OFFSETS false when they were
 * decoded from allocs.zst, whose records have no file offset: then the record index is named),
 * their unique alloc_ids, and puts them in time order with an alloc_id index. */
static int check_allocs(struct loader *ld, size_t n, bool offsets)
{
	struct fl_process *proc = ld->proc;
	size_t nids = 0;
	uint64_t *pairs = malloc((n ? n : 1) * sizeof(*pairs));
	int rc;

	if (!pairs)
		return fail_nomem(ld, "alloc records");
	for (size_t i = 0; i < n; i++) {
		struct fl_alloc_record *a = &proc->allocs[i];
		if (check_alloc(ld, a, offsets ? alloc_offset(i) : i, i) < 0) {
			free(pairs);
			return -1;
		}
		if (a->alloc_id)
			pairs[nids++] = (uint64_t)a->alloc_id << 32 | i;
	}
	proc->nallocs = n;
	rc = check_unique(ld, pairs, nids, "alloc_id", offsets ? ld->record_size : 1);
	free(pairs);
	if (rc < 0 || sort_allocs(ld) < 0)
		return -1;
	report_dangling(ld, "allocation stack ids");
	return index_allocs(ld);
}

static int read_varint(const unsigned char **p, const unsigned char *end, uint64_t *out)
{
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 64 && *p < end; shift += 7) {
		unsigned char b = *(*p)++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return -1;
}

static int64_t unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

/* Decodes one chunk of the full allocation log (trace.h) onto *out. Returns 0 or -1. */
static int decode_chunk(struct loader *ld, const unsigned char *c, size_t len, uint64_t at,
			struct fl_alloc_record **out, size_t *n, size_t *cap)
{
	uint32_t header[4];
	const unsigned char *p = c + sizeof(header), *end = c + len;
	uint64_t time = 0, addr = 0, id = 0;

	if (len < sizeof(header))
		return fail_at(ld, at, "zstd frame holds %zu bytes, less than a chunk header", len);
	memcpy(header, c, sizeof(header));
	if (header[0] != FL_ALLOC_CHUNK_MAGIC)
		return fail_at(ld, at, "zstd frame is not an allocation chunk (magic 0x%x)", header[0]);
	for (uint32_t e = 0; e < header[2]; e++) {
		struct fl_alloc_record r = { .tid = header[1] };
		uint64_t v, size = 0, stack = 0, did = 0, dt, da;
		if (p >= end)
			return fail_at(ld, at, "allocation chunk ends after %u of its %u events", e, header[2]);
		r.kind = *p & 0x0f;
		r.flags = *p >> 4;
		p++;
		if (read_varint(&p, end, &dt) < 0 || read_varint(&p, end, &da) < 0 ||
		    (r.kind != FL_ALLOC_FREE && read_varint(&p, end, &size) < 0) ||
		    ((r.kind == FL_ALLOC_MALLOC || r.kind == FL_ALLOC_MMAP) &&
		     (read_varint(&p, end, &stack) < 0 || read_varint(&p, end, &did) < 0)))
			return fail_at(ld, at, "allocation chunk: event %u is cut or malformed", e);
		time += dt;
		addr += (uint64_t)unzigzag(da);
		if (r.kind == FL_ALLOC_MALLOC || r.kind == FL_ALLOC_MMAP)
			id += (uint64_t)unzigzag(did);
		v = r.kind == FL_ALLOC_MALLOC || r.kind == FL_ALLOC_MMAP ? id : 0;
		if (stack > UINT32_MAX || v > UINT32_MAX)
			return fail_at(ld, at, "allocation chunk: event %u: stack id or alloc_id out of range", e);
		r.time_ns = time;
		r.addr = addr;
		r.size = size;
		r.stack_id = (uint32_t)stack;
		r.alloc_id = (uint32_t)v;
		if (*n == *cap) {
			size_t ncap = *cap ? *cap * 2 : 4096;
			struct fl_alloc_record *grown = realloc(*out, ncap * sizeof(*grown));
			if (!grown)
				return fail_nomem(ld, "decoded alloc records");
			*out = grown, *cap = ncap;
		}
		(*out)[(*n)++] = r;
	}
	return 0;
}

/* The full allocation log: zstd frames of encoded chunks after the header (trace.h). */
static int load_allocs_zstd(struct loader *ld)
{
	struct fl_process *proc = ld->proc;
	unsigned char *data, *chunk = NULL;
	size_t len, unused, n = 0, cap = 0, at = HEADER_SIZE, frames = 0;
	struct fl_alloc_record *recs = NULL;
	ZSTD_DCtx *dctx;
	int rc = open_binary(ld, FL_FILE_NAME_ALLOCS_ZSTD, FL_FILE_ALLOCS_ZSTD, sizeof(struct fl_alloc_record), &data,
			     &len, &unused);

	if (rc <= 0)
		return rc;
	if (!(dctx = ZSTD_createDCtx())) {
		free(data);
		return fail_nomem(ld, "a zstd context");
	}
	rc = 0;
	while (at < len && rc == 0) {
		size_t fsize = ZSTD_findFrameCompressedSize(data + at, len - at);
		unsigned long long csize = ZSTD_isError(fsize) ? ZSTD_CONTENTSIZE_ERROR
							      : ZSTD_getFrameContentSize(data + at, fsize);
		uint32_t magic = 0;
		memcpy(&magic, data + at, len - at < 4 ? len - at : 4);
		if (ZSTD_isError(fsize) && (len - at < 4 || magic == ZSTD_MAGICNUMBER)) {
			/* a frame cut short: the tail of a crash (frames are written whole, in order) */
			proc->maybe_cut = true;
			add_warning(ld->rec, "%s: truncated at offset %zu (%zu complete zstd frames; %zu bytes of a "
				    "partial frame ignored)", ld->path, at, frames, len - at);
			break;
		}
		if (ZSTD_isError(fsize) || csize == ZSTD_CONTENTSIZE_ERROR || csize == ZSTD_CONTENTSIZE_UNKNOWN ||
		    csize > (1u << 24)) {
			rc = fail_at(ld, at, "not a zstd frame of an allocation chunk (%s)",
				     ZSTD_isError(fsize) ? ZSTD_getErrorName(fsize) : "bad content size");
			break;
		}
		unsigned char *grown = realloc(chunk, csize ? csize : 1);
		if (!grown) {
			rc = fail_nomem(ld, "a zstd frame");
			break;
		}
		chunk = grown;
		size_t got = ZSTD_decompressDCtx(dctx, chunk, csize, data + at, fsize);
		if (ZSTD_isError(got) || got != csize)
			rc = fail_at(ld, at, "zstd frame does not decompress: %s",
				     ZSTD_isError(got) ? ZSTD_getErrorName(got) : "short content");
		else
			rc = decode_chunk(ld, chunk, got, at, &recs, &n, &cap);
		at += fsize;
		frames++;
	}
	ZSTD_freeDCtx(dctx);
	free(chunk);
	free(data);
	if (rc < 0 || n > UINT32_MAX - 1) {
		free(recs);
		return rc < 0 ? rc : fail_file(ld, "%zu records: more than this reader indexes", n);
	}
	proc->allocs = recs ? recs : calloc(1, sizeof(*proc->allocs));
	if (!proc->allocs)
		return fail_nomem(ld, "alloc records");
	snprintf(ld->path + strlen(ld->path), sizeof(ld->path) - strlen(ld->path), " (decoded record)");
	proc->alloc_log_complete = true;
	return check_allocs(ld, n, false);
}

static int load_allocs(struct loader *ld)
{
	struct fl_process *proc = ld->proc;
	unsigned char *data;
	size_t len, n;
	int rc = open_binary(ld, FL_FILE_NAME_ALLOCS, FL_FILE_ALLOCS, sizeof(struct fl_alloc_record), &data, &len, &n);

	if (rc == 0)
		return load_allocs_zstd(ld);
	if (rc < 0)
		return rc;
	if (n > UINT32_MAX - 1) {
		free(data);
		return fail_file(ld, "%zu records: more than this reader indexes", n);
	}
	proc->allocs = calloc(n ? n : 1, sizeof(*proc->allocs));
	if (!proc->allocs) {
		free(data);
		return fail_nomem(ld, "alloc records");
	}
	for (size_t i = 0; i < n; i++)
		memcpy(&proc->allocs[i], data + alloc_offset(i), sizeof(proc->allocs[i]));
	free(data);
	/* a recording before sampling (no "alloc_log" in meta.json) logged every allocation */
	const char *mode = stats_json_string(&proc->meta, "alloc_log");
	proc->alloc_log_complete = !mode || strcmp(mode, "sampled") != 0;
	return check_allocs(ld, n, true);
}

/* ======================================================================= sites */

static int load_sites(struct loader *ld)
{
	struct fl_process *proc = ld->proc;
	unsigned char *data;
	size_t len, n;
	int rc = open_binary(ld, FL_FILE_NAME_SITES, FL_FILE_SITES, sizeof(struct fl_site_record), &data, &len, &n);

	if (rc <= 0)
		return rc;
	proc->sites = calloc(n ? n : 1, sizeof(*proc->sites));
	if (!proc->sites) {
		free(data);
		return fail_nomem(ld, "site records");
	}
	for (size_t i = 0; i < n; i++) {
		struct fl_site_record *s = &proc->sites[i];
		uint64_t at = HEADER_SIZE + (uint64_t)i * ld->record_size;
		memcpy(s, data + at, sizeof(*s));
		if (s->frees > s->allocs || s->objects_faulted > s->allocs || s->live_bytes > s->bytes ||
		    s->live_peak_bytes > s->bytes) {
			free(data);
			return fail_at(ld, at, "site record %zu: inconsistent counts (allocs %llu, frees %llu, bytes %llu, "
				       "live %llu, peak %llu, objects faulted %llu)", i, (unsigned long long)s->allocs,
				       (unsigned long long)s->frees, (unsigned long long)s->bytes,
				       (unsigned long long)s->live_bytes, (unsigned long long)s->live_peak_bytes,
				       (unsigned long long)s->objects_faulted);
		}
		if (check_stack_ref(ld, &s->stack_id, at, "site record", i) < 0) {
			free(data);
			return -1;
		}
	}
	free(data);
	proc->nsites = n;
	report_dangling(ld, "site stack ids");
	return 0;
}

/* Joins every fault to the allocation live at its address and time (one sweep in time order). */
static int attribute_faults_by_sweep(struct loader *ld)
{
	struct fl_process *proc = ld->proc;
	struct fl_alloc_sweep sweep;

	if (proc->nallocs == 0)
		return 0;
	fl_alloc_sweep_init(&sweep, proc);
	for (size_t i = 0; i < proc->nfaults; i++) {
		struct fl_fault *f = &proc->faults[i];
		if (fl_alloc_sweep_advance(&sweep, f->rec.time_ns) < 0) {
			fl_alloc_sweep_free(&sweep);
			snprintf(ld->err, ld->errlen, "%s: out of memory attributing faults to allocations", proc->dir);
			return -1;
		}
		f->alloc = fl_alloc_sweep_find(&sweep, f->rec.addr);
	}
	fl_alloc_sweep_free(&sweep);
	return 0;
}

/* The index into proc->allocs of the MALLOC/MMAP record of this fault's object, or FL_NONE. */
static uint32_t alloc_of_object(const struct fl_process *proc, const struct fl_fault_record *r)
{
	const struct fl_alloc_record *a = fl_process_alloc_by_id(proc, r->obj_alloc_id);
	return a && a->addr == r->obj_addr ? (uint32_t)(a - proc->allocs) : FL_NONE;
}

/* Fault records that name their object (the runtime resolved it when serving the fault): the
 * join is the record's own. An object the sampled log does not hold gets a record made from
 * its faults (FL_ALLOC_UNLOGGED: its time is its first fault's, its end unknown). */
static int attribute_faults(struct loader *ld)
{
	struct fl_process *proc = ld->proc;
	size_t extra = 0;
	uint64_t *pairs;

	if (!proc->fault_objects)
		return attribute_faults_by_sweep(ld);
	/* (alloc_id, fault index) of the faults on objects the log lacks; sorted, the first fault of
	 * each object (faults are in time order) makes its record */
	pairs = malloc((proc->nfaults ? proc->nfaults : 1) * sizeof(*pairs));
	if (!pairs)
		return fail_nomem(ld, "records of unlogged objects");
	for (size_t i = 0; i < proc->nfaults; i++) {
		const struct fl_fault_record *r = &proc->faults[i].rec;
		if ((r->flags & FL_FAULT_OBJECT) && r->obj_addr && r->obj_alloc_id &&
		    !fl_process_alloc_by_id(proc, r->obj_alloc_id))
			pairs[extra++] = (uint64_t)r->obj_alloc_id << 32 | i;
	}
	qsort(pairs, extra, sizeof(*pairs), compare_u64);
	size_t objects = 0;
	for (size_t k = 0; k < extra; k++)
		if (k == 0 || pairs[k] >> 32 != pairs[k - 1] >> 32)
			pairs[objects++] = pairs[k];
	if (objects) {
		struct fl_alloc_record *grown = realloc(proc->allocs, (proc->nallocs + objects) * sizeof(*grown));
		if (!grown) {
			free(pairs);
			return fail_nomem(ld, "records of unlogged objects");
		}
		proc->allocs = grown;
		for (size_t k = 0; k < objects; k++) {
			const struct fl_fault_record *r = &proc->faults[(uint32_t)pairs[k]].rec;
			proc->allocs[proc->nallocs++] = (struct fl_alloc_record){
				.time_ns = r->time_ns, .addr = r->obj_addr, .size = r->obj_size, .tid = r->tid,
				.stack_id = r->obj_stack_id, .alloc_id = r->obj_alloc_id, .kind = FL_ALLOC_MALLOC,
				.flags = FL_ALLOC_UNLOGGED,
			};
		}
		proc->unlogged_objects = objects;
	}
	free(pairs);
	if (objects && (sort_allocs(ld) < 0 || index_allocs(ld) < 0))
		return -1;
	for (size_t i = 0; i < proc->nfaults; i++) {
		struct fl_fault *f = &proc->faults[i];
		f->alloc = f->rec.obj_addr && (f->rec.flags & FL_FAULT_OBJECT) ? alloc_of_object(proc, &f->rec) : FL_NONE;
	}
	return 0;
}

/* ======================================================================= maps */

/* Where maps.c's diagnostics go: the recording's warnings. */
static void maps_diag_to_warning(void *ctx, const char *message)
{
	add_warning(ctx, "%s", message);
}

/* Parses "# maps TIME REASON" (the line without its newline) into *time and *reason (malloc'd).
 * Returns 0, 1 when the line is no snapshot header at all, -1 when it is a malformed one. */
static int parse_maps_header(const char *line, size_t len, uint64_t *time, char **reason)
{
	static const char prefix[] = "# maps ";
	size_t at = sizeof(prefix) - 1, digits = 0;
	uint64_t t = 0;

	if (len < at || memcmp(line, prefix, at) != 0)
		return 1;
	while (at < len && line[at] >= '0' && line[at] <= '9') {
		unsigned d = (unsigned)(line[at++] - '0');
		if (t > (UINT64_MAX - d) / 10)
			return -1;
		t = t * 10 + d;
		digits++;
	}
	if (digits == 0 || at >= len || line[at] != ' ')
		return -1;
	at++;
	if (at >= len || len - at > 63)
		return -1;
	for (size_t i = at; i < len; i++) {
		if (line[i] <= ' ' || line[i] > '~')
			return -1;
	}
	*reason = strndup(line + at, len - at);
	if (!*reason)
		return -1;
	*time = t;
	return 0;
}

/* Parses the snapshot whose text is [text, text + len), starting at OFFSET of the file. */
static int add_snapshot(struct loader *ld, const char *text, size_t len, size_t offset)
{
	struct fl_process *proc = ld->proc;
	struct fl_maps_snapshot *s = &proc->maps[proc->nmaps - 1];
	char source[PATH_MAX + 64];

	snprintf(source, sizeof(source), "%s (snapshot at offset %zu)", ld->path, offset);
	s->maps = maps_parse(text, len, source, maps_diag_to_warning, ld->rec);
	if (!s->maps)
		return fail_nomem(ld, "a maps snapshot");
	return 0;
}

static int load_maps(struct loader *ld)
{
	struct fl_process *proc = ld->proc;
	unsigned char *data;
	size_t len, cap = 0, at = 0, section = 0, section_offset = 0;

	if (set_path(ld, FL_FILE_NAME_MAPS) < 0)
		return -1;
	int rc = read_whole(ld, &data, &len);
	if (rc <= 0)
		return rc;
	const char *text = (const char *)data;
	while (at < len) {
		const char *nl = memchr(text + at, '\n', len - at);
		if (!nl) {
			proc->maybe_cut = true;
			add_warning(ld->rec, "%s: truncated at offset %zu (a last line without its newline ignored; "
				    "%zu complete snapshots)", ld->path, at, proc->nmaps);
			break;
		}
		size_t line_len = (size_t)(nl - (text + at));
		uint64_t time;
		char *reason = NULL;
		int header = parse_maps_header(text + at, line_len, &time, &reason);
		if (header < 0) {
			free(data);
			return fail_at(ld, at, "malformed snapshot line (want \"# maps TIME REASON\")");
		}
		if (header == 0) {
			if (proc->nmaps && add_snapshot(ld, text + section, at - section, section_offset) < 0) {
				free(reason);
				free(data);
				return -1;
			}
			if (proc->nmaps == cap) {
				size_t grown_cap = cap ? cap * 2 : 4;
				struct fl_maps_snapshot *grown = realloc(proc->maps, grown_cap * sizeof(*grown));
				if (!grown) {
					free(reason);
					free(data);
					return fail_nomem(ld, "maps snapshots");
				}
				proc->maps = grown;
				cap = grown_cap;
			}
			proc->maps[proc->nmaps++] = (struct fl_maps_snapshot){ time, reason, NULL };
			section = (size_t)(nl - text) + 1;
			section_offset = at;
		} else if (proc->nmaps == 0) {
			free(data);
			return fail_at(ld, at, "text before the first \"# maps TIME REASON\" line");
		}
		at = (size_t)(nl - text) + 1;
	}
	if (proc->nmaps && add_snapshot(ld, text + section, at - section, section_offset) < 0) {
		free(data);
		return -1;
	}
	free(data);
	/* Insertion sort by time: snapshots are few and normally in order already. */
	for (size_t i = 1; i < proc->nmaps; i++) {
		struct fl_maps_snapshot s = proc->maps[i];
		size_t j = i;
		for (; j > 0 && proc->maps[j - 1].time_ns > s.time_ns; j--)
			proc->maps[j] = proc->maps[j - 1];
		proc->maps[j] = s;
	}
	return 0;
}

/* ======================================================================= processes */

/* Parses a process directory name: "PID" or "PID.N" (decimal, no leading zeros, PID >= 1, N >= 1). */
static bool parse_process_name(const char *name, uint32_t *pid, uint32_t *image)
{
	uint64_t v[2] = { 0, 0 };
	int part = 0;
	const char *p = name;

	for (;;) {
		const char *digits = p;
		if (*p < '1' || *p > '9')
			return false;
		while (*p >= '0' && *p <= '9') {
			v[part] = v[part] * 10 + (uint64_t)(*p - '0');
			if (v[part] > PID_MAX_VALUE || p - digits > 10)
				return false;
			p++;
		}
		if (*p == '\0')
			break;
		if (*p != '.' || part == 1)
			return false;
		part = 1;
		p++;
	}
	*pid = (uint32_t)v[0];
	*image = (uint32_t)v[1];
	return true;
}

/* True when DIR holds no entries besides . and .. (false when it cannot be read). */
static bool dir_is_empty(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	bool empty = true;

	if (!d)
		return false;
	while (empty && (e = readdir(d)) != NULL)
		empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
	closedir(d);
	return empty;
}

static void process_free(struct fl_process *proc)
{
	free(proc->dir);
	stats_json_free(&proc->meta);
	stats_json_free(&proc->stats);
	free(proc->faults);
	free(proc->contexts);
	free(proc->stacks);
	free(proc->allocs);
	free(proc->sites);
	for (size_t i = 0; i < proc->nmaps; i++) {
		free(proc->maps[i].reason);
		if (proc->maps[i].maps)
			maps_free(proc->maps[i].maps);
	}
	free(proc->maps);
	if (proc->priv) {
		free(proc->priv->fault_by_seq);
		free(proc->priv->alloc_by_id);
		free(proc->priv->stack_data);
		free(proc->priv);
	}
	memset(proc, 0, sizeof(*proc));
}

/* Loads DIR/NAME into proc (zeroed by the caller). */
static int load_process(struct loader *ld, const char *name)
{
	struct fl_process *proc = ld->proc;

	snprintf(proc->name, sizeof(proc->name), "%.31s", name); /* at most 21 characters: see parse_process_name */
	if (asprintf(&proc->dir, "%s/%s", ld->rec->dir, name) < 0) {
		proc->dir = NULL;
		snprintf(ld->err, ld->errlen, "%s/%s: out of memory", ld->rec->dir, name);
		return -1;
	}
	proc->priv = calloc(1, sizeof(*proc->priv));
	if (!proc->priv) {
		snprintf(ld->err, ld->errlen, "%s: out of memory", proc->dir);
		return -1;
	}
	ld->handlers = 0;
	ld->dangling = 0;
	if (load_meta(ld) < 0 || load_stats(ld) < 0 || load_faults(ld) < 0 || load_stacks(ld) < 0 ||
	    check_fault_stacks(ld) < 0 || index_faults(ld) < 0 || load_contexts(ld) < 0 || load_allocs(ld) < 0 ||
	    load_sites(ld) < 0 || attribute_faults(ld) < 0 || load_maps(ld) < 0)
		return -1;
	return 0;
}

static int compare_process(const void *a, const void *b)
{
	const struct fl_process *x = a, *y = b;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->image < y->image ? -1 : x->image > y->image;
}

/* Loads every process directory of rec->dir. */
static int load_processes(struct fl_recording *rec, char *err, size_t errlen)
{
	DIR *d = opendir(rec->dir);
	struct dirent *e;
	size_t cap = 0;
	int rc = 0;

	if (!d) {
		snprintf(err, errlen, "%s: cannot open the recording: %s", rec->dir, strerror(errno));
		return -1;
	}
	while (rc == 0 && (errno = 0, e = readdir(d)) != NULL) {
		uint32_t pid, image;
		char path[PATH_MAX];
		struct stat st;

		if (!parse_process_name(e->d_name, &pid, &image))
			continue;
		snprintf(path, sizeof(path), "%s/%s", rec->dir, e->d_name);
		if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		if (dir_is_empty(path)) {
			add_warning(rec, "%s: empty process directory skipped (the process died before its "
				    "runtime wrote anything)", path);
			continue;
		}
		if (rec->nprocs == cap) {
			size_t grown_cap = cap ? cap * 2 : 8;
			struct fl_process *grown = realloc(rec->procs, grown_cap * sizeof(*grown));
			if (!grown) {
				snprintf(err, errlen, "%s: out of memory", rec->dir);
				rc = -1;
				break;
			}
			rec->procs = grown;
			cap = grown_cap;
		}
		struct fl_process *proc = &rec->procs[rec->nprocs++];
		memset(proc, 0, sizeof(*proc));
		proc->pid = pid;
		proc->image = image;
		struct loader ld = { .rec = rec, .proc = proc, .err = err, .errlen = errlen };
		rc = load_process(&ld, e->d_name);
	}
	if (rc == 0 && errno) {
		snprintf(err, errlen, "%s: readdir: %s", rec->dir, strerror(errno));
		rc = -1;
	}
	closedir(d);
	return rc;
}

int fl_recording_open(const char *dir, struct fl_recording **out, char *err, size_t errlen)
{
	struct fl_recording *rec = calloc(1, sizeof(*rec));
	struct stat st;

	*out = NULL;
	if (!rec || !(rec->dir = strdup(dir))) {
		free(rec);
		snprintf(err, errlen, "%s: out of memory", dir);
		return -1;
	}
	if (stat(dir, &st) < 0) {
		snprintf(err, errlen, "%s: no such recording directory (%s)", dir, strerror(errno));
		fl_recording_close(rec);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: not a directory (want a recording directory)", dir);
		fl_recording_close(rec);
		return -1;
	}
	if (load_processes(rec, err, errlen) < 0) {
		fl_recording_close(rec);
		return -1;
	}
	if (rec->nprocs == 0) {
		snprintf(err, errlen, "%s: no process directory (DIR/<pid>) in it: not a faultline recording, "
			 "or nothing was traced", dir);
		fl_recording_close(rec);
		return -1;
	}
	qsort(rec->procs, rec->nprocs, sizeof(*rec->procs), compare_process);
	rec->start_ns = rec->procs[0].start_ns;
	for (size_t i = 0; i < rec->nprocs; i++) {
		rec->procs[i].offset_ns = rec->procs[i].start_ns - rec->start_ns;
		rec->nfaults += rec->procs[i].nfaults;
	}
	*out = rec;
	return 0;
}

void fl_recording_close(struct fl_recording *rec)
{
	if (!rec)
		return;
	for (size_t i = 0; i < rec->nprocs; i++)
		process_free(&rec->procs[i]);
	free(rec->procs);
	for (size_t i = 0; i < rec->nwarnings; i++)
		free(rec->warnings[i]);
	free(rec->warnings);
	free(rec->dir);
	free(rec);
}

int fl_recording_find_newest(const char *parent, char *out, size_t outlen, char *err, size_t errlen)
{
	const char *where = parent ? parent : ".";
	DIR *d = opendir(where);
	struct dirent *e;
	struct timespec best_time = { 0, 0 };
	char best[NAME_MAX + 1] = "";

	if (!d) {
		snprintf(err, errlen, "%s: cannot list the directory: %s", where, strerror(errno));
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		char path[PATH_MAX];
		struct stat st;
		if (strncmp(e->d_name, "faultline-", 10) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", where, e->d_name);
		if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		int newer = !best[0] || st.st_mtim.tv_sec > best_time.tv_sec ||
			    (st.st_mtim.tv_sec == best_time.tv_sec && (st.st_mtim.tv_nsec > best_time.tv_nsec ||
			     (st.st_mtim.tv_nsec == best_time.tv_nsec && strcmp(e->d_name, best) > 0)));
		if (newer) {
			best_time = st.st_mtim;
			snprintf(best, sizeof(best), "%s", e->d_name);
		}
	}
	closedir(d);
	if (!best[0]) {
		snprintf(err, errlen, "no recording given and no faultline-* directory in %s "
			 "(record one with: faultline record -- PROGRAM)", parent ? parent : "the current directory");
		return -1;
	}
	int n = parent && strcmp(parent, ".") != 0 ? snprintf(out, outlen, "%s/%s", parent, best)
						   : snprintf(out, outlen, "%s", best);
	if (n < 0 || (size_t)n >= outlen) {
		snprintf(err, errlen, "%s/%s: path too long", where, best);
		return -1;
	}
	return 0;
}

const struct fl_process *fl_recording_find_pid(const struct fl_recording *rec, uint32_t pid)
{
	for (size_t i = 0; i < rec->nprocs; i++) {
		if (rec->procs[i].pid == pid)
			return &rec->procs[i];
	}
	return NULL;
}

/* ======================================================================= fault iteration */

/* The recording time of process index P's next fault (the heap key). */
static uint64_t iter_key(const struct fl_fault_iter *it, size_t p)
{
	const struct fl_process *proc = &it->rec->procs[p];
	return fl_fault_time_ns(proc, &proc->faults[it->next[p]]);
}

static bool iter_less(const struct fl_fault_iter *it, size_t a, size_t b)
{
	uint64_t x = iter_key(it, a), y = iter_key(it, b);
	return x != y ? x < y : a < b; /* ties: process order (seq order within a process) */
}

static void iter_sift_down(struct fl_fault_iter *it, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < it->nheap && iter_less(it, it->heap[l], it->heap[m]))
			m = l;
		if (r < it->nheap && iter_less(it, it->heap[r], it->heap[m]))
			m = r;
		if (m == i)
			return;
		size_t t = it->heap[i];
		it->heap[i] = it->heap[m];
		it->heap[m] = t;
		i = m;
	}
}

int fl_fault_iter_init(struct fl_fault_iter *it, const struct fl_recording *rec, uint32_t pid)
{
	size_t n = rec->nprocs ? rec->nprocs : 1;

	memset(it, 0, sizeof(*it));
	it->rec = rec;
	it->heap = malloc(n * sizeof(*it->heap));
	it->next = calloc(n, sizeof(*it->next));
	if (!it->heap || !it->next) {
		fl_fault_iter_free(it);
		errno = ENOMEM;
		return -1;
	}
	for (size_t p = 0; p < rec->nprocs; p++) {
		if ((pid == 0 || rec->procs[p].pid == pid) && rec->procs[p].nfaults > 0)
			it->heap[it->nheap++] = p;
	}
	for (size_t i = it->nheap; i-- > 0;)
		iter_sift_down(it, i);
	return 0;
}

const struct fl_fault *fl_fault_iter_next(struct fl_fault_iter *it, const struct fl_process **proc_out)
{
	if (it->nheap == 0)
		return NULL;
	size_t p = it->heap[0];
	const struct fl_process *proc = &it->rec->procs[p];
	const struct fl_fault *f = &proc->faults[it->next[p]++];
	if (it->next[p] == proc->nfaults)
		it->heap[0] = it->heap[--it->nheap];
	iter_sift_down(it, 0);
	if (proc_out)
		*proc_out = proc;
	return f;
}

void fl_fault_iter_free(struct fl_fault_iter *it)
{
	free(it->heap);
	free(it->next);
	it->heap = NULL;
	it->next = NULL;
	it->nheap = 0;
}

uint64_t fl_fault_time_ns(const struct fl_process *proc, const struct fl_fault *fault)
{
	return proc->offset_ns + fault->rec.time_ns;
}

/* ======================================================================= joins */

const struct fl_fault *fl_process_fault_by_seq(const struct fl_process *proc, uint32_t seq)
{
	const uint32_t *index = proc->priv ? proc->priv->fault_by_seq : NULL;
	size_t lo = 0, hi = index ? proc->nfaults : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint32_t s = proc->faults[index[mid]].rec.seq;
		if (s == seq)
			return &proc->faults[index[mid]];
		if (s < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct fl_fault_context *fl_process_context(const struct fl_process *proc, uint32_t seq)
{
	const struct fl_fault *f = fl_process_fault_by_seq(proc, seq);
	return f ? fl_fault_context(proc, f) : NULL;
}

const struct fl_fault_context *fl_fault_context(const struct fl_process *proc, const struct fl_fault *fault)
{
	return fault->context == FL_NONE ? NULL : &proc->contexts[fault->context];
}

const struct fl_stack *fl_process_stack(const struct fl_process *proc, uint32_t stack_id)
{
	size_t lo = 0, hi = proc->nstacks;

	if (stack_id == 0)
		return NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (proc->stacks[mid].id == stack_id)
			return &proc->stacks[mid];
		if (proc->stacks[mid].id < stack_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct fl_stack *fl_fault_stack(const struct fl_process *proc, const struct fl_fault *fault)
{
	const struct fl_fault_context *c = fl_fault_context(proc, fault);
	if (c && c->stack_id)
		return fl_process_stack(proc, c->stack_id);
	return fl_process_stack(proc, fault->rec.stack_id);
}

const struct fl_alloc_record *fl_process_alloc_by_id(const struct fl_process *proc, uint32_t alloc_id)
{
	const uint32_t *index = proc->priv ? proc->priv->alloc_by_id : NULL;
	size_t lo = 0, hi = index ? proc->priv->nalloc_by_id : 0;

	while (alloc_id && lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint32_t id = proc->allocs[index[mid]].alloc_id;
		if (id == alloc_id)
			return &proc->allocs[index[mid]];
		if (id < alloc_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct fl_alloc_record *fl_fault_alloc(const struct fl_process *proc, const struct fl_fault *fault)
{
	return fault->alloc == FL_NONE ? NULL : &proc->allocs[fault->alloc];
}

/* ======================================================================= allocation sweep (treap) */

void fl_alloc_sweep_init(struct fl_alloc_sweep *sweep, const struct fl_process *proc)
{
	memset(sweep, 0, sizeof(*sweep));
	sweep->proc = proc;
	sweep->rng = 0x9e3779b97f4a7c15ull;
}

void fl_alloc_sweep_free(struct fl_alloc_sweep *sweep)
{
	free(sweep->nodes);
	sweep->nodes = NULL;
	sweep->nnodes = sweep->cap = sweep->free_list = sweep->root = sweep->live = sweep->hint = 0;
}

/* Makes room for N more nodes, so that no operation runs out of memory halfway through. */
static int sweep_reserve(struct fl_alloc_sweep *s, uint32_t n)
{
	uint32_t avail = s->cap - s->nnodes, on_free_list = 0;
	for (uint32_t i = s->free_list; i && on_free_list < n; i = s->nodes[i].left)
		on_free_list++;
	if (avail + on_free_list >= n)
		return 0;
	size_t cap = s->cap ? (size_t)s->cap * 2 : 64;
	if (cap < (size_t)s->nnodes + n)
		cap = (size_t)s->nnodes + n;
	if (cap > UINT32_MAX) {
		errno = ENOMEM;
		return -1;
	}
	struct fl_alloc_piece *grown = realloc(s->nodes, cap * sizeof(*grown));
	if (!grown)
		return -1;
	s->nodes = grown;
	if (s->nnodes == 0)
		s->nnodes = 1; /* node 0 stands for "none" */
	s->cap = (uint32_t)cap;
	return 0;
}

static uint32_t sweep_new_node(struct fl_alloc_sweep *s, uint64_t start, uint64_t end, uint32_t alloc)
{
	uint32_t n;
	if (s->free_list) {
		n = s->free_list;
		s->free_list = s->nodes[n].left;
	} else {
		n = s->nnodes++; /* sweep_reserve made room */
	}
	/* xorshift64: a fixed seed keeps runs reproducible. */
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	s->nodes[n] = (struct fl_alloc_piece){ start, end, alloc, 0, 0, (uint32_t)(s->rng >> 32) };
	s->live++;
	return n;
}

/* Returns a subtree's nodes to the free list. */
static void sweep_free_tree(struct fl_alloc_sweep *s, uint32_t t)
{
	while (t) {
		uint32_t right = s->nodes[t].right;
		sweep_free_tree(s, s->nodes[t].left);
		s->nodes[t].left = s->free_list;
		s->free_list = t;
		s->live--;
		t = right;
	}
}

/* Splits tree T into *l (starts < key) and *r (starts >= key). */
static void sweep_split(struct fl_alloc_sweep *s, uint32_t t, uint64_t key, uint32_t *l, uint32_t *r)
{
	if (!t) {
		*l = *r = 0;
	} else if (s->nodes[t].start < key) {
		sweep_split(s, s->nodes[t].right, key, &s->nodes[t].right, r);
		*l = t;
	} else {
		sweep_split(s, s->nodes[t].left, key, l, &s->nodes[t].left);
		*r = t;
	}
}

/* Joins trees L and R where every start in L is below every start in R. */
static uint32_t sweep_merge(struct fl_alloc_sweep *s, uint32_t l, uint32_t r)
{
	if (!l || !r)
		return l ? l : r;
	if (s->nodes[l].priority >= s->nodes[r].priority) {
		s->nodes[l].right = sweep_merge(s, s->nodes[l].right, r);
		return l;
	}
	s->nodes[r].left = sweep_merge(s, l, s->nodes[r].left);
	return r;
}

static uint32_t sweep_rightmost(const struct fl_alloc_sweep *s, uint32_t t)
{
	while (t && s->nodes[t].right)
		t = s->nodes[t].right;
	return t;
}

/* Removes [lo, hi) (lo < hi) from every live piece: pieces inside go, a piece straddling an end is
 * trimmed, a piece covering the whole range is split in two. Needs 1 node reserved. */
static void sweep_remove_range(struct fl_alloc_sweep *s, uint64_t lo, uint64_t hi)
{
	uint32_t left, middle, right, rest, tail = 0;

	sweep_split(s, s->root, lo, &left, &rest);
	sweep_split(s, rest, hi, &middle, &right);
	uint32_t p = sweep_rightmost(s, left);
	if (p && s->nodes[p].end > lo) {          /* starts before lo, reaches into the range */
		uint64_t end = s->nodes[p].end;
		s->nodes[p].end = lo;
		if (end > hi)                      /* covers it: the part after hi lives on */
			tail = sweep_new_node(s, hi, end, s->nodes[p].alloc);
	}
	p = sweep_rightmost(s, middle);
	if (p && s->nodes[p].end > hi) {          /* starts inside, reaches past hi */
		uint64_t end = s->nodes[p].end;
		uint32_t alloc = s->nodes[p].alloc;
		sweep_free_tree(s, middle);
		middle = 0;
		tail = sweep_new_node(s, hi, end, alloc);
	}
	sweep_free_tree(s, middle);
	s->root = sweep_merge(s, sweep_merge(s, left, tail), right);
}

/* The piece with the greatest start below KEY, or 0. */
static uint32_t sweep_below(const struct fl_alloc_sweep *s, uint64_t key)
{
	uint32_t t = s->root, best = 0;
	while (t) {
		if (s->nodes[t].start < key) {
			best = t;
			t = s->nodes[t].right;
		} else {
			t = s->nodes[t].left;
		}
	}
	return best;
}

/* True when some live piece overlaps [lo, hi) (lo < hi): the last piece starting below hi
 * reaches past lo. */
static bool sweep_overlaps(const struct fl_alloc_sweep *s, uint64_t lo, uint64_t hi)
{
	uint32_t p = sweep_below(s, hi);
	return p && s->nodes[p].end > lo;
}

/* Inserts node N, whose range overlaps no live piece: down to where its priority belongs, then
 * the subtree there is split around it (one descent, no rebuilding above). */
static void sweep_insert(struct fl_alloc_sweep *s, uint32_t n)
{
	uint32_t *link = &s->root; /* points into nodes[]: nothing below reallocates it */
	while (*link && s->nodes[*link].priority >= s->nodes[n].priority)
		link = s->nodes[n].start < s->nodes[*link].start ? &s->nodes[*link].left : &s->nodes[*link].right;
	sweep_split(s, *link, s->nodes[n].start, &s->nodes[n].left, &s->nodes[n].right);
	*link = n;
}

/* Removes the piece that starts exactly at START, if any. */
static void sweep_erase(struct fl_alloc_sweep *s, uint64_t start)
{
	uint32_t *link = &s->root;
	while (*link && s->nodes[*link].start != start)
		link = start < s->nodes[*link].start ? &s->nodes[*link].left : &s->nodes[*link].right;
	uint32_t n = *link;
	if (!n)
		return;
	*link = sweep_merge(s, s->nodes[n].left, s->nodes[n].right);
	s->nodes[n].left = s->free_list;
	s->free_list = n;
	s->live--;
}

/* Applies one allocation event (index I of proc->allocs). */
static int sweep_apply(struct fl_alloc_sweep *s, uint32_t i)
{
	const struct fl_alloc_record *a = &s->proc->allocs[i];

	if (sweep_reserve(s, 2) < 0)
		return -1;
	s->hint = 0; /* the piece it named may change or go */
	switch (a->kind) {
	case FL_ALLOC_MALLOC:
	case FL_ALLOC_MMAP:
		if (a->size == 0)
			return 0;
		if (sweep_overlaps(s, a->addr, a->addr + a->size))
			sweep_remove_range(s, a->addr, a->addr + a->size);
		sweep_insert(s, sweep_new_node(s, a->addr, a->addr + a->size, i));
		return 0;
	case FL_ALLOC_FREE:
		sweep_erase(s, a->addr);
		return 0;
	case FL_ALLOC_MUNMAP:
		if (a->size && sweep_overlaps(s, a->addr, a->addr + a->size))
			sweep_remove_range(s, a->addr, a->addr + a->size);
		return 0;
	default:
		return 0; /* the loader rejected other kinds */
	}
}

int fl_alloc_sweep_advance(struct fl_alloc_sweep *sweep, uint64_t time_ns)
{
	const struct fl_process *proc = sweep->proc;

	while (sweep->next_event < proc->nallocs && proc->allocs[sweep->next_event].time_ns <= time_ns) {
		if (sweep_apply(sweep, (uint32_t)sweep->next_event) < 0)
			return -1;
		sweep->next_event++;
	}
	return 0;
}

uint32_t fl_alloc_sweep_find(struct fl_alloc_sweep *sweep, uint64_t addr)
{
	uint32_t hint = sweep->hint;
	if (hint && sweep->nodes[hint].start <= addr && addr < sweep->nodes[hint].end)
		return sweep->nodes[hint].alloc;
	uint32_t best = addr == UINT64_MAX ? 0 : sweep_below(sweep, addr + 1); /* greatest start <= addr */
	if (!best || addr >= sweep->nodes[best].end)
		return FL_NONE;
	sweep->hint = best;
	return sweep->nodes[best].alloc;
}

/* ======================================================================= maps lookup */

const struct fl_maps_snapshot *fl_process_maps_at(const struct fl_process *proc, uint64_t time_ns)
{
	size_t lo = 0, hi = proc->nmaps; /* find the first snapshot taken after time_ns */

	if (proc->nmaps == 0)
		return NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (proc->maps[mid].time_ns <= time_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return &proc->maps[lo ? lo - 1 : 0];
}
