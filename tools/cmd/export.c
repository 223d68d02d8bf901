/* export.c: `faultline export --sqlite FILE [DIR]` — a whole recording in one SQLite database, for ad
 * hoc questions in SQL (render/sqlite_export.c writes it, see sqlite_export.h; the schema and example
 * queries are in faultline-export(1)). `--pprof FILE` writes the recording as a pprof profile
 * instead or as well (render/pprof.c, see pprof.h), through the same callsite table. This file
 * parses the options and runs the export.
 *
 * Follow one run: the recording is read and validated (trace_reader.h), its callsite table built
 * (callsite.h: the same frames, skip list and callsite as `faultline report`) and its rows numbered
 * (sqlite_export_new); the profile, then the database, is written to a temporary file next to FILE
 * and renamed to FILE, which is never replaced unless --force (rename without replace, so a FILE
 * that appeared meanwhile survives).
 *
 * Memory. On the wall axis a recording of the common clean shape is opened for streaming
 * (fl_recording_open_stream): its faults and contexts are walked as they are written, never held. A
 * thread whose contexts come out of seq order sends the whole export back to the held recording
 * (EXPORT_HOLD), as report does. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "callsite.h"
#include "cli.h"
#include "temp_file.h"
#include "fault_time.h"
#include "pprof.h"
#include "report.h"
#include "report_progress.h"
#include "sqlite_export.h"
#include "trace_reader.h"

struct export_options {
	const char *file;       /* --sqlite FILE */
	const char *dir;        /* NULL: the newest faultline-* directory here */
	const char *pprof;      /* --pprof FILE, NULL when not given */
	bool force;
	bool default_skip;
	char **skip;
	size_t nskip;
	enum fl_time_axis time_axis; /* --time: what faults.time_ns holds */
};

struct exporter {
	const struct export_options *o;
	struct fl_recording *rec;
	struct callsite_skip skip;
	struct callsite_table *callsites;
	struct sqlite_export *db;   /* the database's writer, its rows numbered */
	struct report_progress progress;
	struct report_warnings warnings;
	bool streamed;              /* the recording was opened for streaming (fault_stream.h) */
	bool pprof_done;            /* --pprof written (by a first, streamed attempt) */
	char err[1024];
};

/* ----------------------------------------------------------------- options */

static void export_usage(FILE *out)
{
	fputs("usage: faultline export (--sqlite FILE | --pprof FILE) [DIR] [--force] [--time wall|virtual]\n"
	      "                        [--skip REGEX] [--no-skip]\n"
	      "\n"
	      "Writes a whole recording into one SQLite database: processes, faults, allocations and\n"
	      "allocation events, stacks with their symbolized frames (inlined frames too, the callsite\n"
	      "marked as `faultline report` picks it), PMU contexts with their deltas; indexes on time,\n"
	      "address and stack; eviction events; each fault's service time and virtual time (its thread's\n"
	      "CPU time). The schema and example queries: man faultline-export (SCHEMA, EXAMPLES).\n"
	      "\n"
	      "      --sqlite FILE    the database to write (refused when it exists, unless --force)\n"
	      "      --pprof FILE     also or instead: a gzipped pprof profile (go tool pprof FILE): sample types\n"
	      "                       faults, first_touch, refault, soft (count) and alloc_bytes (bytes, per\n"
	      "                       allocation site, when the recording has its sites files); each sample's\n"
	      "                       leaf is its callsite as faultline report picks it, inlined frames kept;\n"
	      "                       labels kind, thread, process, alloc_site (refused when FILE exists,\n"
	      "                       unless --force)\n"
	      "  DIR                  the recording (default: the newest faultline-* directory here)\n"
	      "  -f, --force          replace FILE (a regular file: never a directory, device, FIFO\n"
	      "                       or link)\n"
	      "      --time AXIS      what faults.time_ns holds: wall (default: ns since the recording\n"
	      "                       started) or virtual (the CPU time, task-clock ns, the process's\n"
	      "                       threads had used at the fault; NULL when unknown). faults.wall_ns\n"
	      "                       always holds the wall time, faults.vtime_ns the faulting thread's\n"
	      "                       own CPU time; evictions are on the wall axis (the runtime's threads)\n"
	      "      --skip REGEX     also skip frames whose binary path or function name matches when\n"
	      "                       choosing callsites (repeatable)\n"
	      "      --no-skip        drop the default skip list (" CALLSITE_DEFAULT_SKIP_NAMES ")\n"
	      "  -h, --help           this help\n", out);
}

enum { OPT_SQLITE, OPT_SKIP, OPT_FORCE, OPT_NO_SKIP, OPT_PPROF, OPT_TIME };

static int export_option(void *ctx, int id, const char *value, char *err, size_t errlen)
{
	struct export_options *o = ctx;

	switch (id) {
	case OPT_SQLITE: o->file = value; return 0;
	case OPT_PPROF: o->pprof = value; return 0;
	case OPT_FORCE: o->force = true; return 0;
	case OPT_NO_SKIP: o->default_skip = false; return 0;
	case OPT_TIME: return fl_time_axis_parse(value, &o->time_axis, err, errlen);
	default: /* OPT_SKIP */
		return cli_append_value(&o->skip, &o->nskip, value, err, errlen);
	}
}

/* PATH with its directory resolved (realpath) into buf: one name for one file, existing or not;
 * PATH itself when its directory cannot be resolved. */
static const char *resolved_path(const char *path, char *buf, size_t len)
{
	char dir[PATH_MAX], real[PATH_MAX];
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	if (!realpath(cli_path_dir(path, dir, sizeof(dir)), real) || (size_t)snprintf(buf, len, "%s/%s", real, base) >= len)
		snprintf(buf, len, "%s", path);
	return buf;
}

/* Whether paths A and B name one file: the same resolved name, or (both existing) one inode. */
static bool same_file(const char *a, const char *b)
{
	char ra[PATH_MAX + 256], rb[PATH_MAX + 256];
	struct stat sa, sb;
	if (strcmp(resolved_path(a, ra, sizeof(ra)), resolved_path(b, rb, sizeof(rb))) == 0)
		return true;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* 0 to run, -1 after --help, CLI_EXIT_USAGE, or 1 when an output cannot be written there (a
 * directory, device, FIFO or link in its place, or a directory not writable). */
static int export_parse(int argc, char **argv, struct export_options *o)
{
	static const struct cli_opt opts[] = {
		{ NULL, "--sqlite", CLI_VALUE, OPT_SQLITE },
		{ NULL, "--skip", CLI_VALUE, OPT_SKIP },
		{ "-f", "--force", CLI_FLAG, OPT_FORCE },
		{ NULL, "--no-skip", CLI_FLAG, OPT_NO_SKIP },
		{ NULL, "--pprof", CLI_VALUE, OPT_PPROF },
		{ NULL, "--time", CLI_VALUE, OPT_TIME },
	};
	struct cli_verb verb = { "export", export_usage, opts, sizeof(opts) / sizeof(opts[0]), export_option, NULL, &o->dir,
				 o };
	int rc;

	*o = (struct export_options){ .default_skip = true };
	if ((rc = cli_parse_verb(&verb, argc, argv)) != 0)
		return rc;
	if (!o->file && !o->pprof)
		return cli_usage_error("export", "--sqlite FILE or --pprof FILE is required");
	if (o->file && o->pprof && same_file(o->file, o->pprof))
		return cli_usage_error("export", "--sqlite and --pprof name the same file, %s: one would replace the other",
				       o->pprof);
	const char *outs[] = { o->file, o->pprof };
	for (int i = 0; i < 2; i++) {
		char err[PATH_MAX + 128];
		if (outs[i] && temp_file_check_target(outs[i], err, sizeof(err)) < 0) {
			cli_error("export: %s", err); /* exit 1, as for an existing file without --force */
			return 1;
		}
		if (outs[i] && cli_check_output_path("export", outs[i]) != 0)
			return 1;
	}
	return 0;
}
/* ----------------------------------------------------------------- the run */

/* Renames T's temporary file to FILE (T's final name), without replacing an existing FILE unless
 * FORCE; the temporary file is removed when that fails. */
static int install(struct temp_file *t, const char *file, bool force, char *err, size_t errlen)
{
	if (temp_file_commit(t, force ? TEMP_FILE_REPLACE : TEMP_FILE_NO_REPLACE, err, errlen) == 0)
		return 0;
	snprintf(err, errlen, "%s: %s%s", file, strerror(errno), errno == EEXIST ? " (use --force to replace it)" : "");
	return -1;
}

static void collect_warning(void *ctx, const char *message)
{
	report_warn(ctx, "%s", message);
}

/* An error while writing a temporary file (the database, the profile) is said of FILE, the one
 * the user named: the temporary name is an implementation detail (it was shown as is). */
static void name_the_file(struct exporter *x, const char *tmp, const char *file)
{
	char detail[sizeof(x->err)];
	size_t n = strlen(tmp), used = 0;
	const char *from = x->err, *hit;
	while ((hit = strstr(from, tmp)) != NULL && used < sizeof(detail)) {
		used += (size_t)snprintf(detail + used, sizeof(detail) - used, "%.*s%s", (int)(hit - from), from, file);
		from = hit + n;
	}
	if (used < sizeof(detail))
		snprintf(detail + used, sizeof(detail) - used, "%s", from);
	snprintf(x->err, sizeof(x->err), "cannot write %.256s: %.700s", file, detail);
}

/* --pprof: the profile written next to FILE under a temporary name, then installed. */
static int export_pprof(struct exporter *x)
{
	struct pprof_stats st;
	struct temp_file t;
	char suffix[32];

	snprintf(suffix, sizeof(suffix), ".tmp.%ld", (long)getpid());
	if (temp_file_begin(&t, x->o->pprof, suffix, true, x->err, sizeof(x->err)) < 0)
		return 1;
	report_progress_phase(&x->progress, "writing the pprof profile", 0);
	if (pprof_write(x->rec, x->callsites, t.tmp, &st, x->err, sizeof(x->err)) < 0) {
		name_the_file(x, t.tmp, x->o->pprof);
		temp_file_discard(&t);
		return 1;
	}
	if (install(&t, x->o->pprof, x->o->force, x->err, sizeof(x->err)) < 0)
		return 1;
	report_progress_stop(&x->progress);
	cli_error("export: wrote %s: %zu samples of %" PRIu64 " faults, %zu locations, %zu functions, %zu bytes gzipped",
		  x->o->pprof, st.samples, st.faults, st.locations, st.functions, st.bytes);
	return 0;
}

#define EXPORT_HOLD (-2) /* a streamed export must be done again on the held recording */

/* Exports DIR, streamed when STREAM and the recording allows (the wall axis, the clean shape):
 * the exit status, or EXPORT_HOLD. */
static int export_recording(struct exporter *x, const char *dir, bool stream)
{
	struct temp_file t;
	char suffix[32];
	int rc;

	report_progress_phase(&x->progress, "reading the recording", 0);
	x->streamed = stream && x->o->time_axis == FL_TIME_WALL && fl_recording_open_stream(dir, &x->rec) == 0;
	if (!x->streamed && fl_recording_open(dir, &x->rec, x->err, sizeof(x->err)) < 0)
		return 1;
	for (size_t i = 0; i < x->rec->nwarnings; i++)
		report_warn(&x->warnings, "%s", x->rec->warnings[i]);
	if (callsite_skip_init(&x->skip, x->o->default_skip, x->o->skip, x->o->nskip, x->err, sizeof(x->err)) < 0)
		return CLI_EXIT_USAGE;
	x->callsites = callsite_table_new(x->rec, &x->skip, collect_warning, &x->warnings);
	if (!x->callsites) {
		snprintf(x->err, sizeof(x->err), "out of memory");
		return 1;
	}
	struct sqlite_export_options so = { x->o->default_skip, x->o->skip, x->o->nskip, x->o->time_axis, x->streamed };
	if (sqlite_export_new(&x->db, x->rec, x->callsites, &so, &x->progress, &x->warnings, x->err,
			      sizeof(x->err)) < 0) {
		if (!x->err[0])
			snprintf(x->err, sizeof(x->err), "out of memory");
		return 1;
	}
	if (x->o->pprof && !x->pprof_done) {
		if ((rc = export_pprof(x)) != 0)
			return rc;
		x->pprof_done = true;
	}
	if (!x->o->file)
		return 0;
	snprintf(suffix, sizeof(suffix), ".tmp.%ld", (long)getpid());
	if (temp_file_begin(&t, x->o->file, suffix, true, x->err, sizeof(x->err)) < 0)
		return 1;
	rc = sqlite_export_write(x->db, t.tmp);
	if (rc != 0) {
		if (rc != SQLITE_EXPORT_HOLD)
			name_the_file(x, t.tmp, x->o->file);
		temp_file_discard(&t);
		return rc == SQLITE_EXPORT_HOLD ? EXPORT_HOLD : 1;
	}
	return install(&t, x->o->file, x->o->force, x->err, sizeof(x->err)) < 0 ? 1 : 0;
}

/* Releases what an export attempt holds and makes the exporter ready for another (the options,
 * the progress line and pprof_done stay). */
static void exporter_free(struct exporter *x)
{
	sqlite_export_free(x->db);
	callsite_table_free(x->callsites);
	callsite_skip_free(&x->skip);
	fl_recording_close(x->rec);
	report_warnings_free(&x->warnings);
	x->rec = NULL;
	x->db = NULL;
	memset(&x->skip, 0, sizeof(x->skip));
	x->callsites = NULL;
	memset(&x->warnings, 0, sizeof(x->warnings));
	x->streamed = false;
	x->err[0] = '\0';
}

int cmd_export(int argc, char **argv)
{
	struct export_options o;
	struct exporter x;
	struct stat st;
	char newest[4096];
	const char *dir;
	int rc = export_parse(argc, argv, &o);

	if (rc != 0) {
		free(o.skip);
		return rc < 0 ? 0 : rc;
	}
	memset(&x, 0, sizeof(x));
	x.o = &o;
	for (int k = 0; k < 2; k++) {
		const char *file = k ? o.pprof : o.file;
		if (file && !o.force && stat(file, &st) == 0) {
			cli_error("export: %s exists (use --force to replace it)", file);
			free(o.skip);
			return 1;
		}
	}
	dir = o.dir;
	if (!dir && fl_recording_find_newest(NULL, newest, sizeof(newest), x.err, sizeof(x.err)) == 0) {
		dir = newest;
		cli_error("export: reading the newest recording here, %s", dir);
	}
	report_progress_start(&x.progress, "export", true);
	rc = dir ? export_recording(&x, dir, true) : 1;
	if (rc == EXPORT_HOLD) { /* the whole export again, on the held recording */
		exporter_free(&x);
		rc = export_recording(&x, dir, false);
	}
	report_progress_stop(&x.progress);
	for (size_t i = 0; i < x.warnings.count; i++)
		cli_error("export: warning: %s", x.warnings.lines[i]);
	if (rc != 0)
		cli_error("export: %s", x.err);
	exporter_free(&x);
	free(o.skip);
	return rc;
}
