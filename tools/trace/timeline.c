/* timeline.c: the reader of a process's counter timeline (see timeline.h). */
#include "timeline.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct {
	const char *name, *label;
} counters[FL_TL_COUNTERS] = {
	[FL_TL_TASK_CLOCK] = { "task_clock_ns", "task-clock (ns)" },
	[FL_TL_PAGE_FAULTS] = { "page_faults", "page-faults" },
	[FL_TL_CONTEXT_SWITCHES] = { "context_switches", "context-switches" },
	[FL_TL_INSTRUCTIONS] = { "instructions", "instructions" },
	[FL_TL_CYCLES] = { "cycles", "cycles" },
	[FL_TL_RESIDENT_PAGES] = { "resident_pages", "resident pages" },
	[FL_TL_SOFT_PAGES] = { "soft_pages", "soft pages" },
	[FL_TL_FAR_READ_BYTES] = { "far_read_bytes", "far reads (bytes)" },
	[FL_TL_FAR_WRITE_BYTES] = { "far_write_bytes", "far writes (bytes)" },
	[FL_TL_EVICTIONS] = { "evictions", "evictions" },
	[FL_TL_WRITEBACKS] = { "writebacks", "write-backs" },
	[FL_TL_FIRST_TOUCH] = { "first_touch", "first-touch faults" },
	[FL_TL_REFAULTS] = { "refaults", "refaults" },
	[FL_TL_SOFT_FAULTS] = { "soft_faults", "soft faults" },
	[FL_TL_CONCURRENT] = { "concurrent", "concurrent faults" },
};

const char *fl_timeline_counter_name(unsigned counter)
{
	return counter < FL_TL_COUNTERS ? counters[counter].name : "?";
}

const char *fl_timeline_counter_label(unsigned counter)
{
	return counter < FL_TL_COUNTERS ? counters[counter].label : "?";
}

bool fl_timeline_counter_is_gauge(unsigned counter)
{
	return counter == FL_TL_RESIDENT_PAGES || counter == FL_TL_SOFT_PAGES;
}

const char *fl_timeline_reason_name(unsigned reason)
{
	switch (reason) {
	case FL_TL_PERIODIC: return "periodic";
	case FL_TL_EVERY_N: return "every-n";
	case FL_TL_FINAL: return "final";
	default: return "?";
	}
}

static int by_time(const void *a, const void *b)
{
	const struct fl_timeline_record *x = a, *y = b;
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (int)x->reason - (int)y->reason;
}

/* The whole file into memory; -1 with errno (ENOENT: no timeline). */
static int slurp(const char *path, unsigned char **data, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0) {
		int err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	*data = malloc((size_t)st.st_size + 1);
	*len = 0;
	if (!*data) {
		close(fd);
		errno = ENOMEM;
		return -1;
	}
	while (*len < (size_t)st.st_size) {
		ssize_t r = read(fd, *data + *len, (size_t)st.st_size - *len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		*len += (size_t)r;
	}
	close(fd);
	return 0;
}

static int check_header(const struct fl_process *proc, const char *path, const struct fl_file_header *h, char *err,
			size_t errlen)
{
	if (h->magic == FL_TRACE_MAGIC_SWAPPED)
		snprintf(err, errlen, "%s: offset 0: written on a machine of the other byte order", path);
	else if (h->magic != FL_TRACE_MAGIC)
		snprintf(err, errlen, "%s: offset 0: bad magic: not a faultline trace file", path);
	else if (h->version > FL_TRACE_VERSION)
		snprintf(err, errlen, "%s: offset 8: format version %u is newer than this faultline's (%u)", path,
			 h->version, FL_TRACE_VERSION);
	else if (h->kind != FL_FILE_TIMELINE)
		snprintf(err, errlen, "%s: offset 12: file kind %u is not a timeline (%u)", path, h->kind, FL_FILE_TIMELINE);
	else if (h->header_size < sizeof(*h) || h->header_size % 8 || h->header_size > 65536)
		snprintf(err, errlen, "%s: offset 16: header_size %u, want a multiple of 8, at least %zu", path,
			 h->header_size, sizeof(*h));
	else if (h->record_size < sizeof(struct fl_timeline_record) || h->record_size % 8 || h->record_size > 65536)
		snprintf(err, errlen, "%s: offset 20: record_size %u is not a timeline record (at least %zu, a multiple of 8)",
			 path, h->record_size, sizeof(struct fl_timeline_record));
	else if (h->pid != proc->pid)
		snprintf(err, errlen, "%s: offset 24: pid %u, but the process directory is %s", path, h->pid, proc->name);
	else if (h->start_ns != proc->start_ns)
		snprintf(err, errlen, "%s: offset 32: start_ns %llu differs from the faults file's (%llu)", path,
			 (unsigned long long)h->start_ns, (unsigned long long)proc->start_ns);
	else
		return 0;
	return -1;
}

int fl_timeline_read(const struct fl_process *proc, struct fl_timeline *out, char *err, size_t errlen)
{
	char path[4096];
	unsigned char *data = NULL;
	size_t len = 0;
	struct fl_file_header h;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "%s/%s", proc->dir, FL_FILE_NAME_TIMELINE);
	if (slurp(path, &data, &len) < 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	out->present = true;
	if (len < sizeof(h)) {
		snprintf(out->warning, sizeof(out->warning), "%s: truncated at offset %zu (inside the header; no records)",
			 path, len);
		free(data);
		return 0;
	}
	memcpy(&h, data, sizeof(h));
	if (check_header(proc, path, &h, err, errlen) < 0) {
		free(data);
		return -1;
	}
	if (len < h.header_size) {
		snprintf(out->warning, sizeof(out->warning), "%s: truncated at offset %zu (inside the header; no records)",
			 path, len);
		free(data);
		return 0;
	}
	size_t n = (len - h.header_size) / h.record_size, tail = (len - h.header_size) % h.record_size;
	if (tail)
		snprintf(out->warning, sizeof(out->warning), "%s: truncated at offset %zu (%zu complete records; the last %zu bytes are cut)",
			 path, len - tail, n, tail);
	out->recs = calloc(n ? n : 1, sizeof(*out->recs));
	if (!out->recs) {
		snprintf(err, errlen, "%s: out of memory for %zu records", path, n);
		free(data);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		size_t at = h.header_size + i * h.record_size;
		struct fl_timeline_record *r = &out->recs[i];
		memcpy(r, data + at, sizeof(*r));
		if (r->reason < FL_TL_PERIODIC || r->reason > FL_TL_FINAL) {
			snprintf(err, errlen, "%s: offset %zu: timeline record with reason %u", path, at + 12, r->reason);
			fl_timeline_free(out);
			free(data);
			return -1;
		}
		r->valid &= (uint16_t)((1u << FL_TL_COUNTERS) - 1); /* slots this reader does not know */
	}
	out->nrecs = n;
	qsort(out->recs, n, sizeof(*out->recs), by_time);
	free(data);
	return 0;
}

void fl_timeline_free(struct fl_timeline *tl)
{
	free(tl->recs);
	tl->recs = NULL;
	tl->nrecs = 0;
}
