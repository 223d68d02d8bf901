/* trace_load_state.c: the machinery every file's loader shares: error and warning lines that name
 * the file and byte offset, and binary files mapped read-only with their headers checked against
 * the faults header (the mapping and the checks themselves are trace_file.c's, shared with the
 * side files' reader). */
#include "trace_load_state.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <faultline/record_schema.h>

/* ======================================================================= errors and warnings */

/* Appends one warning line to rec (counted as suppressed beyond FL_MAX_WARNINGS or without memory). */
void fl_load_warning(struct fl_recording *rec, const char *fmt, ...)
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

/* Writes "PATH: offset N: reason" into the error buffer; returns -1. */
int fl_load_fail_at(struct loader *ld, uint64_t offset, const char *fmt, ...)
{
	char reason[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	snprintf(ld->err, ld->errlen, "%s: offset %llu: %s", ld->path, (unsigned long long)offset, reason);
	return -1;
}

/* Writes "PATH: reason" into the error buffer; returns -1. */
int fl_load_fail(struct loader *ld, const char *fmt, ...)
{
	char reason[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	snprintf(ld->err, ld->errlen, "%s: %s", ld->path, reason);
	return -1;
}

int fl_load_nomem(struct loader *ld, const char *what)
{
	return fl_load_fail(ld, "out of memory for %s", what);
}

/* Sets ld->path to the process directory's file NAME. */
int fl_load_set_path(struct loader *ld, const char *name)
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
int fl_load_dangling(struct loader *ld, uint64_t offset, const char *fmt, ...)
{
	char reason[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	if (!ld->proc->maybe_cut)
		return fl_load_fail_at(ld, offset, "%s", reason);
	if (ld->dangling++ == 0 || offset < ld->first_dangling)
		ld->first_dangling = offset; /* the first in file order, whichever order they are met in */
	return 0;
}

/* Ends the dangling-reference count of the current file with its warning. */
void fl_load_report_dangling(struct loader *ld, const char *what)
{
	if (ld->dangling)
		fl_load_warning(ld->rec, "%s: %zu %s missing from the trace (first at offset %llu); ignored: the "
			    "process's trace may be cut", ld->path, ld->dangling, what,
			    (unsigned long long)ld->first_dangling);
	ld->dangling = 0;
}

/* ======================================================================= file headers */

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

/* Validates the header of the current binary file, of kind KIND (trace_file.c); a file cut inside
 * its header is accepted (*complete false). Sets ld->version, data_offset and record_size. */
static int check_header(struct loader *ld, const unsigned char *data, size_t len, uint32_t kind,
			struct fl_file_header *hdr, bool *complete)
{
	struct fl_header_want want = {
		.path = ld->path, .kind = kind, .pid = ld->proc->pid, .proc_name = ld->proc->name,
		.ref = &ld->faults_header, .known = ld->known,
		.ref_name = kind == FL_FILE_FAULTS ? FL_FILE_NAME_META : "the faults header",
	};
	struct fl_header_found found;

	int rc = fl_trace_file_check_header(&want, data, len, &found, ld->err, ld->errlen);
	ld->version = found.version;
	ld->data_offset = found.data_offset;
	ld->record_size = found.record_size;
	*hdr = found.hdr;
	*complete = found.complete;
	return rc;
}

/* The number of complete records of the current file (0 for variable-sized records); a cut file
 * (inside its header or a record) is warned about and its process marked as maybe cut. */
static size_t count_records(struct loader *ld, size_t len, bool complete)
{
	struct fl_header_found found = { .version = ld->version, .data_offset = ld->data_offset,
					 .record_size = ld->record_size, .complete = complete };
	char warning[PATH_MAX + 256];
	size_t n = fl_trace_file_count_records(ld->path, &found, len, warning, sizeof(warning));
	if (warning[0]) {
		ld->proc->maybe_cut = true;
		fl_load_warning(ld->rec, "%s", warning);
	}
	return n;
}

bool fl_load_stats_records(const struct fl_process *proc, uint64_t *counted, uint64_t *dropped)
{
	uint64_t access_samples = 0;
	*dropped = 0;
	if (!proc->has_stats || stats_json_uint(&proc->stats, FL_STATS_FAULTS_TOTAL, counted) < 0)
		return false;
	stats_json_uint(&proc->stats, FL_STATS_RECORDS_DROPPED, dropped);
	if (stats_json_uint(&proc->stats, FL_STATS_ACCESS_SAMPLES, &access_samples) == 0)
		*counted += access_samples; /* record --sample-accesses, --mrc */
	return true;
}

void fl_load_take_fault_header(const struct loader *ld, struct fl_process *proc)
{
	proc->page_size = ld->faults_header.page_size;
	proc->start_ns = ld->faults_header.start_ns;
	proc->region_start = ld->faults_header.region_start;
	proc->region_size = ld->faults_header.region_size;
	proc->priv->fault_record_size = ld->record_size;
	proc->priv->fault_data_offset = ld->data_offset;
	proc->priv->fault_version = ld->version;
}

int fl_load_header(struct loader *ld, const unsigned char *data, size_t len, uint32_t kind)
{
	struct fl_file_header hdr;
	bool complete;

	if (check_header(ld, data, len, kind, &hdr, &complete) < 0)
		return -1;
	if (kind == FL_FILE_FAULTS)
		set_reference(ld, &hdr, len);
	return complete ? 0 : -1;
}

int fl_load_map(struct loader *ld, struct mapped_file *out)
{
	int rc = fl_trace_file_map(ld->path, out, ld->err, ld->errlen);
	if (rc > 0 && out->note[0]) { /* a framed file whose frames stopped early */
		ld->proc->maybe_cut = true;
		fl_load_warning(ld->rec, "%s", out->note);
	}
	return rc;
}

void fl_load_unmap(struct mapped_file *file)
{
	fl_trace_file_unmap(file);
}

int fl_load_binary(struct loader *ld, const char *name, uint32_t kind, struct mapped_file *file, size_t *nrecords)
{
	struct fl_file_header hdr;
	bool complete;
	int rc;

	*nrecords = 0;
	if (fl_load_set_path(ld, name) < 0)
		return -1;
	rc = fl_load_map(ld, file);
	if (rc <= 0)
		return rc;
	if (check_header(ld, file->data, file->len, kind, &hdr, &complete) < 0) {
		fl_load_unmap(file);
		return -1;
	}
	if (kind == FL_FILE_FAULTS)
		set_reference(ld, &hdr, file->len);
	if (!complete) {
		count_records(ld, file->len, false); /* its warning */
		return 1;
	}
	if (kind != FL_FILE_STACKS && kind != FL_FILE_ALLOCS_ZSTD) /* variable-sized records, zstd frames */
		*nrecords = count_records(ld, file->len, true);
	return 1;
}
