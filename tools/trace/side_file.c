/* side_file.c: reads a process's side file whole (side_file.h), on trace_file.c's mapping and
 * header check: its records copied out, or left in the mapping for a reader that only reads them. */
#include "side_file.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_file.h"

/* The process's fields every header of it must agree on, as a reference header. */
static void process_reference(const struct fl_process *proc, struct fl_file_header *ref, unsigned *known)
{
	memset(ref, 0, sizeof(*ref));
	ref->page_size = proc->page_size;
	ref->start_ns = proc->start_ns;
	ref->region_start = proc->region_start;
	ref->region_size = proc->region_size;
	*known = REF_START_NS | REF_REGION_START | REF_REGION_SIZE | (proc->page_size ? REF_PAGE_SIZE : 0);
}

/* Copies the known prefix of each of the N complete records out of the mapping. */
static int copy_records(struct fl_side_file *out, const struct mapped_file *file, size_t n, size_t known_size,
			char *err, size_t errlen)
{
	if (n == 0)
		return 0;
	unsigned char *recs = malloc(n * known_size);
	if (!recs) {
		snprintf(err, errlen, "%s: out of memory for %zu records", out->path, n);
		return -1;
	}
	if (out->record_size == known_size)
		memcpy(recs, file->data + out->data_offset, n * known_size);
	else
		for (size_t i = 0; i < n; i++)
			memcpy(recs + i * known_size, file->data + fl_side_file_offset(out, i), known_size);
	out->recs = out->copy = recs;
	out->n = n;
	return 0;
}

int fl_side_file_read(const struct fl_process *proc, const char *name, uint32_t kind, size_t known_size,
		      enum fl_side_records how, fl_side_record_check check, const void *arg, struct fl_side_file *out,
		      char *err, size_t errlen)
{
	struct mapped_file file;
	struct fl_file_header ref;
	struct fl_header_found found;

	memset(out, 0, sizeof(*out));
	int n = snprintf(out->path, sizeof(out->path), "%s/%s", proc->dir, name);
	if (n < 0 || (size_t)n >= sizeof(out->path)) {
		snprintf(err, errlen, "%s/%s: path too long", proc->dir, name);
		return -1;
	}
	int rc = fl_trace_file_map(out->path, &file, err, errlen);
	if (rc <= 0)
		return rc;
	out->present = true;
	struct fl_header_want want = { .path = out->path, .kind = kind, .pid = proc->pid, .proc_name = proc->name,
				       .ref = &ref, .ref_name = "the faults header" };
	process_reference(proc, &ref, &want.known);
	if (fl_trace_file_check_header(&want, file.data, file.len, &found, err, errlen) < 0) {
		fl_trace_file_unmap(&file);
		memset(out, 0, sizeof(*out));
		return -1;
	}
	out->data_offset = found.data_offset;
	out->record_size = found.record_size;
	size_t nrecs = fl_trace_file_count_records(out->path, &found, file.len, out->warning, sizeof(out->warning));
	if (file.note[0] && !out->warning[0]) /* a framed file whose frames stopped early */
		snprintf(out->warning, sizeof(out->warning), "%s", file.note);
	rc = 0;
	if (how == FL_SIDE_IN_PLACE && out->record_size == known_size) {
		out->map = file; /* the records stay where they lie; the mapping is read-only */
		out->recs = nrecs ? file.data + out->data_offset : NULL;
		out->n = nrecs;
	} else {
		rc = copy_records(out, &file, nrecs, known_size, err, errlen);
		fl_trace_file_unmap(&file);
	}
	for (size_t i = 0; i < out->n && rc == 0; i++)
		rc = check(out, i, arg, err, errlen);
	if (rc < 0) {
		fl_side_file_free(out);
		memset(out, 0, sizeof(*out));
	}
	return rc;
}

uint64_t fl_side_file_offset(const struct fl_side_file *file, size_t i)
{
	return file->data_offset + (uint64_t)i * file->record_size;
}

int fl_side_file_fail_at(const struct fl_side_file *file, size_t i, size_t field_offset, char *err, size_t errlen,
			 const char *fmt, ...)
{
	char reason[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	snprintf(err, errlen, "%s: offset %llu: %s", file->path,
		 (unsigned long long)(fl_side_file_offset(file, i) + field_offset), reason);
	return -1;
}

void fl_side_file_free(struct fl_side_file *file)
{
	free(file->copy);
	fl_trace_file_unmap(&file->map);
	file->copy = NULL;
	file->recs = NULL;
	file->n = 0;
}
