/* evictions.c: reads and validates a process's evictions file (evictions.h). */
#include "evictions.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HEADER_SIZE ((uint32_t)sizeof(struct fl_file_header))
#define KNOWN_FLAGS (FL_EVICT_DIRTY | FL_EVICT_INLINE)

const char *fl_evict_decision_name(unsigned decision)
{
	switch (decision) {
	case FL_EVICT_CLOCK_TRIAL: return "clock-trial";
	case FL_EVICT_CLOCK_SOFT: return "clock-soft";
	case FL_EVICT_SOFT_CAP: return "soft-cap";
	case FL_EVICT_FIFO: return "fifo";
	default: return "?";
	}
}

static int fail(char *err, size_t errlen, const char *path, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static int fail(char *err, size_t errlen, const char *path, uint64_t offset, const char *fmt, ...)
{
	char what[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(err, errlen, "%s: offset %llu: %s", path, (unsigned long long)offset, what);
	return -1;
}

/* Reads the whole file; 1 with *data, 0 when it does not exist, -1 (err set) otherwise. */
static int read_file(const char *path, unsigned char **data, size_t *len, char *err, size_t errlen)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "open(%s): %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		snprintf(err, errlen, "fstat(%s): %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	*data = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!*data) {
		snprintf(err, errlen, "%s: out of memory (%lld bytes)", path, (long long)st.st_size);
		close(fd);
		return -1;
	}
	size_t got = 0; /* a file still being written may grow meanwhile: read what was there */
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, *data + got, (size_t)st.st_size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(err, errlen, "read(%s): %s", path, strerror(errno));
			free(*data);
			close(fd);
			return -1;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	*len = got;
	return 1;
}

static int check_header(const struct fl_process *proc, const char *path, const struct fl_file_header *h,
			char *err, size_t errlen)
{
	if (h->magic == FL_TRACE_MAGIC_SWAPPED)
		return fail(err, errlen, path, 0, "written on a machine of the other byte order");
	if (h->magic != FL_TRACE_MAGIC)
		return fail(err, errlen, path, 0, "bad magic: not a faultline trace file");
	if (h->version < 2 || h->version > FL_TRACE_VERSION)
		return fail(err, errlen, path, 8, "format version %u, this faultline reads evictions of version 2 to %d",
			    h->version, FL_TRACE_VERSION);
	if (h->kind != FL_FILE_EVICTIONS)
		return fail(err, errlen, path, 12, "file kind %u, want %d (evictions)", h->kind, FL_FILE_EVICTIONS);
	if (h->header_size < HEADER_SIZE || h->header_size % 8 || h->header_size > 65536)
		return fail(err, errlen, path, 16, "header_size %u, want a multiple of 8, at least %u", h->header_size,
			    HEADER_SIZE);
	if (h->record_size < sizeof(struct fl_evict_record) || h->record_size % 8 || h->record_size > 65536)
		return fail(err, errlen, path, 20, "record_size %u, want a multiple of 8, at least %zu", h->record_size,
			    sizeof(struct fl_evict_record));
	if (h->pid != proc->pid)
		return fail(err, errlen, path, 24, "pid %u, but the process directory is %s", h->pid, proc->name);
	if (h->start_ns != proc->start_ns || h->region_start != proc->region_start || h->region_size != proc->region_size)
		return fail(err, errlen, path, 32, "clock origin or region differ from the faults header");
	return 0;
}

static int check_record(const struct fl_process *proc, const char *path, uint64_t at, const struct fl_evict_record *r,
			char *err, size_t errlen)
{
	uint64_t page = proc->page_size ? proc->page_size : 4096;
	if (r->decision < FL_EVICT_CLOCK_TRIAL || r->decision > FL_EVICT_FIFO)
		return fail(err, errlen, path, at + 16, "decision %u is not one of enum fl_evict_decision", r->decision);
	if (r->flags & ~KNOWN_FLAGS)
		return fail(err, errlen, path, at + 17, "unknown flag bits 0x%x", r->flags & ~KNOWN_FLAGS);
	if (r->addr < proc->region_start || r->addr - proc->region_start >= proc->region_size || r->addr % page)
		return fail(err, errlen, path, at + 8, "address 0x%llx is not a page of the region",
			    (unsigned long long)r->addr);
	return 0;
}

/* Records in time order; the writers' chunks interleave in the file (runtime/evict_log.c). */
struct ordered {
	struct fl_evict_record rec;
	size_t index;
};

static int by_time(const void *a, const void *b)
{
	const struct ordered *x = a, *y = b;
	if (x->rec.time_ns != y->rec.time_ns)
		return x->rec.time_ns < y->rec.time_ns ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int sort_by_time(struct fl_evictions *ev)
{
	size_t i = 1;
	while (i < ev->n && ev->recs[i - 1].time_ns <= ev->recs[i].time_ns)
		i++;
	if (i >= ev->n)
		return 0; /* already in order (one writer) */
	struct ordered *tmp = malloc(ev->n * sizeof(*tmp));
	if (!tmp)
		return -1;
	for (i = 0; i < ev->n; i++)
		tmp[i] = (struct ordered){ ev->recs[i], i };
	qsort(tmp, ev->n, sizeof(*tmp), by_time);
	for (i = 0; i < ev->n; i++)
		ev->recs[i] = tmp[i].rec;
	free(tmp);
	return 0;
}

int fl_evictions_load(const struct fl_process *proc, struct fl_evictions *out, char *err, size_t errlen)
{
	char path[4096];
	unsigned char *data = NULL;
	size_t len = 0;
	struct fl_file_header h;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "%s/%s", proc->dir, FL_FILE_NAME_EVICTIONS);
	int rc = read_file(path, &data, &len, err, errlen);
	if (rc <= 0)
		return rc;
	out->present = true;
	if (len < HEADER_SIZE) { /* created, killed before its header was written */
		snprintf(out->warning, sizeof(out->warning), "%.200s: truncated at offset %zu, inside its header", path, len);
		free(data);
		return 0;
	}
	memcpy(&h, data, sizeof(h));
	if (check_header(proc, path, &h, err, errlen) < 0) {
		free(data);
		return -1;
	}
	if (len < h.header_size) {
		snprintf(out->warning, sizeof(out->warning), "%.200s: truncated at offset %zu, inside its header", path, len);
		free(data);
		return 0;
	}
	size_t n = (len - h.header_size) / h.record_size, rest = (len - h.header_size) % h.record_size;
	if (rest)
		snprintf(out->warning, sizeof(out->warning),
			 "%.160s: truncated at offset %zu (%zu complete records; %zu bytes of a partial record ignored)", path,
			 h.header_size + n * h.record_size, n, rest);
	out->recs = malloc((n ? n : 1) * sizeof(*out->recs));
	if (!out->recs) {
		free(data);
		snprintf(err, errlen, "%s: out of memory (%zu records)", path, n);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t at = h.header_size + (uint64_t)i * h.record_size;
		memcpy(&out->recs[i], data + at, sizeof(out->recs[i]));
		if (check_record(proc, path, at, &out->recs[i], err, errlen) < 0) {
			free(data);
			fl_evictions_free(out);
			return -1;
		}
	}
	out->n = n;
	free(data);
	if (sort_by_time(out) < 0) {
		snprintf(err, errlen, "%s: out of memory (sorting %zu records)", path, n);
		fl_evictions_free(out);
		return -1;
	}
	return 0;
}

void fl_evictions_free(struct fl_evictions *ev)
{
	free(ev->recs);
	memset(ev, 0, sizeof(*ev));
}
