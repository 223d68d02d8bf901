/* trace_load.c: opens a recording — its process directories, each process's meta.json and
 * stats.json, and the order a process's files are loaded in (load_process). The machinery every
 * file's loader shares (errors, warnings, mapped binary files) is trace_load_state.c's.
 *
 * Nothing is read into memory whole: binary files are mapped and their records validated and
 * decoded where they lie (trace_load_faults.c, trace_load_allocs.c). The contract is in
 * trace_reader.h, the format in inc/faultline/trace.h. */
#include "trace_load_allocs.h"
#include "trace_load_faults.h"
#include "trace_load_maps.h"
#include "regular_file.h"
#include "trace_load_state.h"
#include "trace_load_stream.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <faultline/record_schema.h>

#define PID_MAX_VALUE 0x7fffffffu

/* ======================================================================= meta.json, stats.json */

static int load_meta(struct loader *ld)
{
	struct fl_process *proc = ld->proc;
	char reason[768];
	uint64_t v;

	if (fl_load_set_path(ld, FL_FILE_NAME_META) < 0)
		return -1;
	if (access(ld->path, F_OK) < 0) {
		if (errno == ENOENT)
			return fl_load_fail(ld, "missing: every process directory must have one (%s)", strerror(errno));
		return fl_load_fail(ld, "%s", strerror(errno)); /* EACCES: a directory not ours to read */
	}
	if (stats_json_load(ld->path, &proc->meta, reason, sizeof(reason)) < 0) {
		snprintf(ld->err, ld->errlen, "%s", reason);
		return -1;
	}
	if (stats_json_uint(&proc->meta, FL_META_PID, &v) < 0)
		return fl_load_fail(ld, "no integer \"pid\"");
	if (v != proc->pid)
		return fl_load_fail(ld, "pid %llu, but the process directory is %s", (unsigned long long)v, proc->name);
	if (stats_json_uint(&proc->meta, FL_META_FORMAT_VERSION, &v) < 0)
		fl_load_warning(ld->rec, "%s: no integer \"%s\": read as format version %d", ld->path,
				FL_META_FORMAT_VERSION, FL_TRACE_VERSION);
	else if (v > FL_TRACE_VERSION)
		return fl_load_fail(ld, "format version %llu is newer than this faultline reads (%d): use a newer "
				 "faultline", (unsigned long long)v, FL_TRACE_VERSION);
	proc->exe = stats_json_string(&proc->meta, FL_META_EXE);
	if (!proc->exe)
		proc->exe = "";
	if (stats_json_strings(&proc->meta, FL_META_CMDLINE, &proc->cmdline, &proc->ncmdline) < 0) {
		proc->cmdline = NULL;
		proc->ncmdline = 0;
	}
	if (stats_json_uint(&proc->meta, FL_META_HANDLERS, &v) == 0)
		ld->handlers = v;
	/* The values the faults header must repeat (when meta.json has them). */
	memset(&ld->faults_header, 0, sizeof(ld->faults_header));
	ld->known = 0;
	if (stats_json_uint(&proc->meta, FL_META_PAGE_SIZE, &v) == 0 && v <= UINT32_MAX)
		ld->faults_header.page_size = (uint32_t)v, ld->known |= REF_PAGE_SIZE;
	if (stats_json_uint(&proc->meta, FL_META_START_NS, &v) == 0)
		ld->faults_header.start_ns = v, ld->known |= REF_START_NS;
	if (stats_json_uint(&proc->meta, FL_META_REGION_START, &v) == 0)
		ld->faults_header.region_start = v, ld->known |= REF_REGION_START;
	if (stats_json_uint(&proc->meta, FL_META_REGION_SIZE, &v) == 0)
		ld->faults_header.region_size = v, ld->known |= REF_REGION_SIZE;
	return 0;
}

/* A file the process's stats.json says it wrote (its count KEY above 0) but which is not there: one
 * warning saying what that loses. The verbs go on without it. */
static void warn_missing(struct loader *ld, const char *name, const char *key, const char *what, const char *lost)
{
	struct fl_process *proc = ld->proc;
	char path[PATH_MAX + 64];
	uint64_t count;
	if (stats_json_uint(&proc->stats, key, &count) < 0 || count == 0)
		return;
	snprintf(path, sizeof(path), "%s/%s", proc->dir, name);
	if (access(path, F_OK) < 0 && errno == ENOENT)
		fl_load_warning(ld->rec, "%s: missing, though stats.json counts %llu %s: %s", path,
				(unsigned long long)count, what, lost);
}

static int load_stats(struct loader *ld)
{
	struct fl_process *proc = ld->proc;
	char reason[768];
	uint64_t v;

	if (fl_load_set_path(ld, FL_FILE_NAME_STATS) < 0)
		return -1;
	if (access(ld->path, F_OK) < 0) {
		if (errno != ENOENT)
			return fl_load_fail(ld, "access: %s", strerror(errno));
		proc->maybe_cut = true;
		proc->stats_missing = true; /* said once every process is known (explain_missing_stats) */
		return 0;
	}
	int rc = stats_json_load(ld->path, &proc->stats, reason, sizeof(reason));
	if (rc < 0) {
		if (rc != STATS_JSON_DAMAGED) { /* a link, a FIFO, an I/O error: refused */
			snprintf(ld->err, ld->errlen, "%s", reason);
			return -1;
		}
		/* damaged content, as if missing: the counts come from the records, the trace may be cut */
		proc->maybe_cut = true;
		fl_load_warning(ld->rec, "%s: ignored, as if the process had been killed (its trace may be cut)", reason);
		return 0;
	}
	proc->has_stats = true;
	if (stats_json_uint(&proc->stats, FL_STATS_PID, &v) == 0 && v != proc->pid)
		return fl_load_fail(ld, "pid %llu, but the process directory is %s", (unsigned long long)v, proc->name);
	if (stats_json_uint(&proc->stats, FL_STATS_RECORDS_DROPPED, &v) == 0 && v > 0) {
		proc->maybe_cut = true;
		fl_load_warning(ld->rec, "%s: %llu fault records were dropped while recording (%s): the trace is "
			    "incomplete", ld->path, (unsigned long long)v,
			    stats_json_string(&proc->stats, FL_STATS_RECORDS_DROPPED_REASON) ?: "no reason given");
	}
	warn_missing(ld, FL_FILE_NAME_CONTEXTS, FL_STATS_CONTEXTS_WRITTEN, "fault contexts",
		     "the faults' PMU values (and the stacks in them) are not known");
	warn_missing(ld, FL_FILE_NAME_EVICTIONS, FL_STATS_EVICTIONS, "evictions",
		     "the eviction events are not known (stats.json's count stands)");
	return 0;
}

/* Compares the number of fault records with stats.json's count (a file cut at a record boundary),
 * and sets how many the trace lacks (from the gaps in the seq numbers without stats.json). */
static void check_fault_count(struct loader *ld)
{
	struct fl_process *proc = ld->proc;
	uint64_t total, dropped;

	if (!fl_load_stats_records(proc, &total, &dropped)) {
		uint64_t seq_end = 0;
		for (size_t i = 0; i < proc->nfaults; i++)
			if (proc->faults[i].rec.seq + 1 > seq_end)
				seq_end = proc->faults[i].rec.seq + 1;
		uint64_t gaps = seq_end > proc->nfaults ? seq_end - proc->nfaults : 0;
		proc->faults_lost_exact = false;
		if (ld->rec->in_progress) { /* not lost: still in the runtime's buffers */
			proc->faults_lost = 0;
			if (gaps)
				fl_load_warning(ld->rec, "%s/%s: %llu fault records not written yet (the recording is in "
					    "progress)", proc->dir, FL_FILE_NAME_FAULTS, (unsigned long long)gaps);
			return;
		}
		proc->faults_lost = gaps;
		if (proc->faults_lost)
			fl_load_warning(ld->rec, "%s/%s: at least %llu fault records are missing (gaps in their seq "
				    "numbers)", proc->dir, FL_FILE_NAME_FAULTS, (unsigned long long)proc->faults_lost);
		return;
	}
	proc->faults_lost = total > proc->nfaults ? total - proc->nfaults : 0;
	proc->faults_lost_exact = true;
	/* more records than it counts: faults served after the last stats.json, when the process
	 * ended with threads still faulting (it counts only faults whose records were flushed) */
	if (total >= dropped && total - dropped > proc->nfaults) {
		proc->maybe_cut = true;
		fl_load_warning(ld->rec, "%s/%s: %zu fault records, but stats.json counts %llu faults (%llu dropped)",
			    proc->dir, FL_FILE_NAME_FAULTS, proc->nfaults, (unsigned long long)total,
			    (unsigned long long)dropped);
	}
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
	free(proc->stacks);
	free(proc->allocs);
	free(proc->sites);
	for (size_t i = 0; i < proc->nmaps; i++) {
		free(proc->maps[i].reason);
		if (proc->maps[i].maps)
			maps_free(proc->maps[i].maps);
	}
	free(proc->maps);
	fl_load_private_free(proc);
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
	int rc = -1;
	if (ld->stream)
		return load_meta(ld) == 0 && load_stats(ld) == 0 ? fl_load_stream_process(ld) : FL_LOAD_HOLD;
	if (load_meta(ld) == 0 && load_stats(ld) == 0 && fl_load_faults(ld) == 0) {
		/* the fault count first: a file cut at a record boundary makes the trace one that may be
		 * cut, whose dangling references are then warnings */
		check_fault_count(ld);
		if (fl_load_stacks(ld) == 0 && fl_load_fault_joins(ld) == 0 && fl_load_contexts(ld) == 0 &&
		    fl_load_allocs(ld) == 0 && fl_load_sites(ld) == 0 && fl_load_attribute(ld) == 0 && fl_load_maps(ld) == 0)
			rc = 0;
	}
	free(ld->fault_file_index);
	ld->fault_file_index = NULL;
	return rc;
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

/* Loads every process directory of rec->dir (STREAM: for streaming). 0, -1 on error, or
 * FL_LOAD_HOLD. */
static int load_processes(struct fl_recording *rec, bool stream, char *err, size_t errlen)
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
			fl_load_warning(rec, "%s: empty process directory skipped (the process died before its "
				    "runtime wrote anything)", path);
			continue;
		}
		char meta[PATH_MAX + 16];
		snprintf(meta, sizeof(meta), "%s/%s", path, FL_FILE_NAME_META);
		if (access(meta, F_OK) < 0 && errno == ENOENT) { /* the runtime writes it last when it starts */
			fl_load_warning(rec, "%s: no %s yet: skipped (the process was starting when read, or died "
				    "starting)", path, FL_FILE_NAME_META);
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
		struct loader ld = { .rec = rec, .proc = proc, .err = err, .errlen = errlen, .stream = stream };
		rc = load_process(&ld, e->d_name);
	}
	if (rc == 0 && errno) {
		snprintf(err, errlen, "%s: readdir: %s", rec->dir, strerror(errno));
		rc = -1;
	}
	closedir(d);
	return rc;
}

/* DIR/exit: "exit N" or "signal N", then a line "running PID" for each traced process that still
 * ran when record ended. Anything else (a damaged file) counts as not known, with a
 * warning; a missing file is not known without one. */
static void load_ending(struct fl_recording *rec)
{
	char path[PATH_MAX], line[128], word[8];
	int value;
	unsigned long pid;
	char why[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/%s", rec->dir, FL_FILE_NAME_EXIT);
	FILE *f = regular_file_fopen(path, why, sizeof(why)); /* never blocks on a FIFO planted there */
	if (!f) {
		if (errno != ENOENT)
			fl_load_warning(rec, "%s: how the command ended is not known", why);
		return;
	}
	bool ok = fgets(line, sizeof(line), f) && sscanf(line, "%7s %d", word, &value) == 2 && value >= 0 &&
		  value <= 255;
	if (ok && strcmp(word, "exit") == 0)
		rec->ending = FL_ENDING_EXIT, rec->ending_value = value;
	else if (ok && strcmp(word, "signal") == 0 && value > 0)
		rec->ending = FL_ENDING_SIGNAL, rec->ending_value = value;
	else
		ok = false;
	while (ok && fgets(line, sizeof(line), f)) {
		uint32_t *grown;
		if (sscanf(line, "running %lu", &pid) != 1 || pid == 0 || pid > UINT32_MAX ||
		    !(grown = realloc(rec->outlived, (rec->noutlived + 1) * sizeof(*grown)))) {
			ok = false;
			break;
		}
		rec->outlived = grown;
		rec->outlived[rec->noutlived++] = (uint32_t)pid;
	}
	fclose(f);
	if (!ok) {
		rec->ending = FL_ENDING_UNKNOWN;
		fl_load_warning(rec, "%s: not \"exit N\" or \"signal N\" and \"running PID\" lines: how the command "
				"ended is not known", path);
	}
}

static bool outlived_record(const struct fl_recording *rec, uint32_t pid)
{
	for (size_t i = 0; i < rec->noutlived; i++)
		if (rec->outlived[i] == pid)
			return true;
	return false;
}

/* A process without stats.json was killed, or had not ended yet when record ended: DIR/exit names
 * the processes still running then, and a process they started (its ppid one of them, at any
 * depth) may have begun after record wrote that list. */
static void explain_missing_stats(struct fl_recording *rec)
{
	bool grew = true;
	while (grew) {
		grew = false;
		for (size_t i = 0; i < rec->nprocs; i++) {
			struct fl_process *proc = &rec->procs[i];
			uint64_t ppid;
			if (!proc->stats_missing || proc->outlived)
				continue;
			proc->outlived = outlived_record(rec, proc->pid) ||
					 (stats_json_uint(&proc->meta, FL_META_PPID, &ppid) == 0 && ppid <= UINT32_MAX &&
					  outlived_record(rec, (uint32_t)ppid));
			uint32_t *more;
			if (proc->outlived && !outlived_record(rec, proc->pid) &&
			    (more = realloc(rec->outlived, (rec->noutlived + 1) * sizeof(*more)))) {
				rec->outlived = more;
				rec->outlived[rec->noutlived++] = proc->pid;
				grew = true;
			}
		}
	}
	for (size_t i = 0; i < rec->nprocs; i++) {
		struct fl_process *proc = &rec->procs[i];
		if (proc->stats_missing && rec->in_progress) {
			proc->outlived = true; /* not killed: still running, its trace being written */
			fl_load_warning(rec, "%s: no %s yet: the recording is in progress (record still runs); the "
					"process's trace is partial", proc->dir, FL_FILE_NAME_STATS);
		} else if (proc->stats_missing && proc->outlived)
			fl_load_warning(rec, "%s: no %s: the process still ran when record ended (it outlived the command); "
					"its trace is complete once it has exited", proc->dir, FL_FILE_NAME_STATS);
		else if (proc->stats_missing)
			fl_load_warning(rec, "%s: no %s: the process was killed (SIGKILL?) and its trace may be cut",
					proc->dir, FL_FILE_NAME_STATS);
	}
}

/* Whether a running `record` holds the directory whose stat is ST: its flock for the run (tools/record/record_outdir.c),
 * seen in /proc/locks without taking a lock of our own, which could make a record starting at
 * that moment find the directory busy. */
static bool held_by_record(const struct stat *st)
{
	char want[64], line[256];
	snprintf(want, sizeof(want), " %02x:%02x:%llu ", major(st->st_dev), minor(st->st_dev),
		 (unsigned long long)st->st_ino);
	FILE *f = fopen("/proc/locks", "re");
	bool held = false;
	if (!f)
		return false;
	while (!held && fgets(line, sizeof(line), f))
		held = strstr(line, " FLOCK ") && strstr(line, " WRITE ") && strstr(line, want);
	fclose(f);
	return held;
}

/* When DIR is a sweep's (it holds sweep.csv), the name of one of its runs (DIR/L-<size>) into run. */
static bool sweep_run_of(const char *dir, char *run, size_t len)
{
	char path[PATH_MAX];
	struct stat st;
	snprintf(path, sizeof(path), "%s/sweep.csv", dir);
	DIR *d = stat(path, &st) == 0 && S_ISREG(st.st_mode) ? opendir(dir) : NULL;
	struct dirent *e;
	bool found = false;
	if (!d)
		return false;
	while (!found && (e = readdir(d)) != NULL)
		if (strncmp(e->d_name, "L-", 2) == 0) {
			snprintf(run, len, "%s", e->d_name);
			found = true;
		}
	closedir(d);
	return found;
}

static int open_recording(const char *dir, bool stream, struct fl_recording **out, char *err, size_t errlen)
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
	rec->in_progress = held_by_record(&st);
	load_ending(rec); /* first: a process without stats.json may have outlived record */
	if (load_processes(rec, stream, err, errlen) != 0) {
		fl_recording_close(rec);
		return -1;
	}
	explain_missing_stats(rec);
	if (rec->nprocs == 0) {
		char meta[PATH_MAX];
		struct stat ms;
		snprintf(meta, sizeof(meta), "%s/%s", dir, FL_FILE_NAME_META);
		char run[PATH_MAX];
		if (lstat(meta, &ms) == 0 && S_ISREG(ms.st_mode)) /* DIR is one process's directory */
			snprintf(err, errlen, "%s: a process directory of a recording, not a recording: give the "
				 "directory that holds it (DIR/..)", dir);
		else if (sweep_run_of(dir, run, sizeof(run)))
			snprintf(err, errlen, "%s: a sweep's directory (sweep.csv), not a recording: give one of its "
				 "runs, such as %s/%s", dir, dir, run);
		else
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

int fl_recording_open(const char *dir, struct fl_recording **out, char *err, size_t errlen)
{
	return open_recording(dir, false, out, err, errlen);
}

int fl_recording_open_stream(const char *dir, struct fl_recording **out)
{
	char err[1024];
	const char *held = getenv("FAULTLINE_READ_HELD");
	*out = NULL;
	if (held && strcmp(held, "1") == 0)
		return 1;
	return open_recording(dir, true, out, err, sizeof(err)) == 0 ? 0 : 1;
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
	free(rec->outlived);
	free(rec->dir);
	free(rec);
}

/* Whether PATH holds a process directory (one with a meta.json): a recording, not a sweep's
 * directory of recordings or some other faultline-* directory. */
static bool holds_process_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	bool found = false;
	if (!d)
		return false;
	while (!found && (e = readdir(d)) != NULL) {
		char meta[PATH_MAX];
		struct stat st;
		uint32_t pid, image;
		if (!parse_process_name(e->d_name, &pid, &image))
			continue;
		int n = snprintf(meta, sizeof(meta), "%s/%s/%s", path, e->d_name, FL_FILE_NAME_META);
		found = n > 0 && (size_t)n < sizeof(meta) && lstat(meta, &st) == 0 && S_ISREG(st.st_mode);
	}
	closedir(d);
	return found;
}

int fl_recording_find_newest(const char *parent, char *out, size_t outlen, char *err, size_t errlen)
{
	const char *where = parent ? parent : ".";
	DIR *d = opendir(where);
	struct dirent *e;
	struct timespec best_time = { 0, 0 };
	char best[NAME_MAX + 1] = "", skipped[NAME_MAX + 1] = "";

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
		if (!holds_process_dir(path)) {
			snprintf(skipped, sizeof(skipped), "%s", e->d_name);
			continue;
		}
		int newer = !best[0] || st.st_mtim.tv_sec > best_time.tv_sec ||
			    (st.st_mtim.tv_sec == best_time.tv_sec && (st.st_mtim.tv_nsec > best_time.tv_nsec ||
			     (st.st_mtim.tv_nsec == best_time.tv_nsec && strcmp(e->d_name, best) > 0)));
		if (newer) {
			best_time = st.st_mtim;
			snprintf(best, sizeof(best), "%s", e->d_name);
		}
	}
	closedir(d);
	if (!best[0] && skipped[0]) {
		snprintf(err, errlen, "no recording given and no faultline-* recording in %s (%s is not one: a "
			 "sweep's runs are its DIR/L-<size>; record one with: faultline record -- PROGRAM)",
			 parent ? parent : "the current directory", skipped);
		return -1;
	}
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

bool fl_recording_no_fault_stacks(const struct fl_recording *rec, uint32_t pid)
{
	bool any = false;
	for (size_t i = 0; i < rec->nprocs; i++) {
		uint64_t sample, depth;
		if (pid && rec->procs[i].pid != pid)
			continue;
		any = true;
		bool off = (stats_json_uint(&rec->procs[i].meta, FL_META_SAMPLE, &sample) == 0 && sample == 0) ||
			   (stats_json_uint(&rec->procs[i].meta, FL_META_STACK_DEPTH, &depth) == 0 && depth == 0);
		if (!off)
			return false;
	}
	return any;
}

uint64_t fl_recording_stack_sample(const struct fl_recording *rec, uint32_t pid)
{
	uint64_t sample = 1;
	for (size_t i = 0; i < rec->nprocs; i++) {
		uint64_t n;
		if ((!pid || rec->procs[i].pid == pid) && stats_json_uint(&rec->procs[i].meta, FL_META_SAMPLE, &n) == 0 &&
		    n > sample)
			sample = n;
	}
	return sample;
}

