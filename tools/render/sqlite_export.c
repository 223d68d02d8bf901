/* sqlite_export.c: a recording as one SQLite database (sqlite_export.h), the writer behind `faultline
 * export --sqlite` (cmd/export.c parses the options and installs the file). The schema and example
 * queries are in faultline-export(1), man/faultline-export.1.scd; EXPORT_SCHEMA below is the authority.
 *
 * Follow one run: sqlite_export_new numbers the records (and the extra stacks rows, below); then
 * sqlite_export_write opens the database (journal off, one transaction, indexes built after the
 * rows) and fills each table from the reader — processes, stacks with their symbolized source
 * frames (the callsite table of callsite.h: the same frames, skip list and callsite as `faultline
 * report`), allocations, allocation events, faults, PMU contexts, eviction events (evictions.h),
 * counter timelines (timeline.h).
 *
 * Ids are stable functions of the recording: processes.id is the process's index in recording order;
 * stacks, allocations and faults number each process's records after those of the processes before
 * it (id = base of the process + index in its array + 1). Times are nanoseconds since the recording's
 * start (its earliest process), the time axis of `faultline report --from/--to`; with --time virtual,
 * faults.time_ns is the program's CPU time instead (fault_time.h); faults.wall_ns always holds the
 * wall time and faults.vtime_ns the faulting thread's own CPU time.
 *
 * Memory. A recording opened for streaming (fl_recording_open_stream) has its faults and contexts
 * walked through fault streams as they are written, never held. Contexts then come in their faults'
 * time order; the PMU deltas are taken in each thread's seq order (as with the held recording's file
 * order), so a thread whose contexts come out of seq order ends the write with SQLITE_EXPORT_HOLD:
 * the caller does it again on the held recording, as report does. */
#include "sqlite_export.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include <faultline/record_schema.h>

#include "evictions.h"
#include "fault_stream.h"
#include "fault_time.h"
#include "report.h"
#include "report_map.h"
#include "timeline.h"

#define EXPORT_SCHEMA_VERSION 6 /* 2: allocations.source, alloc_sites; 3: faults.wall_ns, vtime_ns, service_ns,
                                 * evictions, meta time_axis (--time); 4: timeline; 5: a stacks row per (stack,
                                 * maps snapshot) in use, stacks.maps_snapshot, maps_snapshots; 6: faults.wait_ns */
#define PROGRESS_STEP 65536

static const char EXPORT_SCHEMA[] =
	"CREATE TABLE meta(key TEXT PRIMARY KEY, value);\n"
	"CREATE TABLE processes(\n"
	"  id INTEGER PRIMARY KEY, pid INTEGER NOT NULL, image INTEGER NOT NULL, dir TEXT NOT NULL,\n"
	"  exe TEXT, cmdline TEXT, start_ns INTEGER NOT NULL, offset_ns INTEGER NOT NULL,\n"
	"  region_start INTEGER NOT NULL, region_size INTEGER NOT NULL, page_size INTEGER NOT NULL,\n"
	"  local_limit_bytes INTEGER, max_bytes INTEGER, pmu_events TEXT, pmu_kind TEXT, exit TEXT,\n"
	"  records_dropped INTEGER, complete INTEGER NOT NULL);\n"
	"CREATE TABLE stacks(\n"
	"  id INTEGER PRIMARY KEY, process_id INTEGER NOT NULL REFERENCES processes(id),\n"
	"  recorded_id INTEGER NOT NULL, nframes INTEGER NOT NULL, exact_pc INTEGER NOT NULL,\n"
	"  truncated INTEGER NOT NULL, callsite_depth INTEGER, maps_snapshot INTEGER NOT NULL);\n"
	"CREATE TABLE maps_snapshots(\n"
	"  process_id INTEGER NOT NULL REFERENCES processes(id), idx INTEGER NOT NULL, time_ns INTEGER NOT NULL,\n"
	"  reason TEXT NOT NULL, mappings INTEGER NOT NULL, PRIMARY KEY (process_id, idx));\n"
	"CREATE TABLE frames(\n"
	"  stack_id INTEGER NOT NULL REFERENCES stacks(id), depth INTEGER NOT NULL, frame INTEGER NOT NULL,\n"
	"  pc INTEGER NOT NULL, function TEXT NOT NULL, file TEXT, line INTEGER, binary TEXT, offset INTEGER,\n"
	"  inlined INTEGER NOT NULL, skipped INTEGER NOT NULL, symbolized INTEGER NOT NULL,\n"
	"  PRIMARY KEY (stack_id, depth)) WITHOUT ROWID;\n"
	"CREATE TABLE allocations(\n"
	"  id INTEGER PRIMARY KEY, process_id INTEGER NOT NULL REFERENCES processes(id),\n"
	"  alloc_id INTEGER NOT NULL, kind TEXT NOT NULL, time_ns INTEGER NOT NULL, freed_ns INTEGER,\n"
	"  addr INTEGER NOT NULL, size INTEGER NOT NULL, tid INTEGER NOT NULL,\n"
	"  stack_id INTEGER REFERENCES stacks(id), source TEXT NOT NULL);\n"
	"CREATE TABLE alloc_sites(\n"
	"  process_id INTEGER NOT NULL REFERENCES processes(id), stack_id INTEGER REFERENCES stacks(id),\n"
	"  key INTEGER NOT NULL, allocs INTEGER NOT NULL, frees INTEGER NOT NULL, bytes INTEGER NOT NULL,\n"
	"  live_peak_bytes INTEGER NOT NULL, live_bytes INTEGER NOT NULL, objects_faulted INTEGER NOT NULL,\n"
	"  faults INTEGER NOT NULL, overflow INTEGER NOT NULL);\n"
	"CREATE TABLE alloc_events(\n"
	"  process_id INTEGER NOT NULL REFERENCES processes(id), time_ns INTEGER NOT NULL, kind TEXT NOT NULL,\n"
	"  addr INTEGER NOT NULL, size INTEGER NOT NULL, tid INTEGER NOT NULL,\n"
	"  stack_id INTEGER REFERENCES stacks(id), allocation_id INTEGER REFERENCES allocations(id));\n"
	"CREATE TABLE faults(\n"
	"  id INTEGER PRIMARY KEY, process_id INTEGER NOT NULL REFERENCES processes(id), seq INTEGER NOT NULL,\n"
	"  time_ns INTEGER, addr INTEGER NOT NULL, page INTEGER NOT NULL, tid INTEGER NOT NULL,\n"
	"  kind TEXT NOT NULL, is_write INTEGER NOT NULL, flags INTEGER NOT NULL, handler INTEGER NOT NULL,\n"
	"  stack_id INTEGER REFERENCES stacks(id), allocation_id INTEGER REFERENCES allocations(id),\n"
	"  wall_ns INTEGER NOT NULL, vtime_ns INTEGER, service_ns INTEGER, wait_ns INTEGER);\n"
	"CREATE TABLE evictions(\n"
	"  process_id INTEGER NOT NULL REFERENCES processes(id), time_ns INTEGER NOT NULL, addr INTEGER NOT NULL,\n"
	"  page INTEGER NOT NULL, decision TEXT NOT NULL, to_far INTEGER NOT NULL, dirty INTEGER NOT NULL,\n"
	"  inline INTEGER NOT NULL);\n"
	"CREATE TABLE pmu_events(\n"
	"  process_id INTEGER NOT NULL REFERENCES processes(id), idx INTEGER NOT NULL, name TEXT NOT NULL,\n"
	"  PRIMARY KEY (process_id, idx));\n"
	"CREATE TABLE contexts(\n"
	"  fault_id INTEGER PRIMARY KEY REFERENCES faults(id), process_id INTEGER NOT NULL, tid INTEGER NOT NULL,\n"
	"  stack_id INTEGER REFERENCES stacks(id), npmu INTEGER NOT NULL,\n"
	"  pmu0 INTEGER, pmu1 INTEGER, pmu2 INTEGER, pmu3 INTEGER,\n"
	"  delta0 INTEGER, delta1 INTEGER, delta2 INTEGER, delta3 INTEGER);\n"
	"CREATE TABLE timeline(\n"
	"  process_id INTEGER NOT NULL REFERENCES processes(id), tid INTEGER NOT NULL, time_ns INTEGER NOT NULL,\n"
	"  reason TEXT NOT NULL, task_clock_ns INTEGER, page_faults INTEGER, context_switches INTEGER,\n"
	"  instructions INTEGER, cycles INTEGER, resident_pages INTEGER, soft_pages INTEGER,\n"
	"  far_read_bytes INTEGER, far_write_bytes INTEGER, evictions INTEGER, writebacks INTEGER,\n"
	"  first_touch INTEGER, refaults INTEGER, soft_faults INTEGER, concurrent INTEGER);\n"
	"CREATE VIEW callsites AS\n"
	"  SELECT s.id AS stack_id, f.function, f.file, f.line, f.binary, f.pc, f.inlined\n"
	"  FROM stacks AS s JOIN frames AS f ON f.stack_id = s.id AND f.depth = s.callsite_depth;\n";

static const char EXPORT_INDEXES[] =
	"CREATE INDEX faults_time ON faults(time_ns);\n"
	"CREATE INDEX faults_addr ON faults(addr);\n"
	"CREATE INDEX faults_stack ON faults(stack_id);\n"
	"CREATE INDEX faults_allocation ON faults(allocation_id);\n"
	"CREATE INDEX allocations_addr ON allocations(addr);\n"
	"CREATE INDEX allocations_time ON allocations(time_ns);\n"
	"CREATE INDEX allocations_stack ON allocations(stack_id);\n"
	"CREATE INDEX alloc_events_time ON alloc_events(time_ns);\n"
	"CREATE INDEX contexts_tid ON contexts(process_id, tid);\n"
	"CREATE INDEX evictions_page ON evictions(page);\n"
	"CREATE INDEX timeline_time ON timeline(process_id, tid, time_ns);\n";

/* One export: the recording, the ids its rows take, and the open database. */
struct sqlite_export {
	struct sqlite_export_options o;
	struct fl_recording *rec;
	sqlite3 *db;
	struct callsite_table *callsites;
	struct report_progress *progress;
	struct report_warnings *warnings;
	struct fault_clock clock;   /* wall and virtual fault times */
	uint64_t *stack_base, *alloc_base, *fault_base; /* per process: ids before its records */
	/* stacks rows beyond the first nstacks: ((process << 32) | stack index, maps snapshot) → row id,
	 * for a stack used at a time when another snapshot was in force than at its first use */
	struct report_map stack_in_snapshot;
	uint64_t nstack_rows;       /* rows of the stacks table */
	bool hold;                  /* streamed, but a thread's contexts came out of seq order: the
	                             * export is to be done again on the held recording */
	char *err;                  /* the caller's */
	size_t errlen;
};

/* ----------------------------------------------------------------- SQL helpers */

static int sql_fail(struct sqlite_export *x, const char *call, const char *what)
{
	snprintf(x->err, x->errlen, "%s(%.512s): %.400s", call, what, sqlite3_errmsg(x->db));
	return -1;
}

static int sql_exec(struct sqlite_export *x, const char *sql, const char *what)
{
	char *message = NULL;

	if (sqlite3_exec(x->db, sql, NULL, NULL, &message) != SQLITE_OK) {
		snprintf(x->err, x->errlen, "sqlite3_exec(%s): %s", what, message ? message : "?");
		sqlite3_free(message);
		return -1;
	}
	return 0;
}

static sqlite3_stmt *sql_prepare(struct sqlite_export *x, const char *sql)
{
	sqlite3_stmt *stmt = NULL;

	if (sqlite3_prepare_v2(x->db, sql, -1, &stmt, NULL) != SQLITE_OK) {
		sql_fail(x, "sqlite3_prepare_v2", sql);
		return NULL;
	}
	return stmt;
}

/* Runs an INSERT whose parameters are bound, and makes it ready for the next row. */
static int sql_insert(struct sqlite_export *x, sqlite3_stmt *stmt, const char *table)
{
	int rc = sqlite3_step(stmt);

	sqlite3_reset(stmt);
	sqlite3_clear_bindings(stmt);
	return rc == SQLITE_DONE ? 0 : sql_fail(x, "sqlite3_step", table);
}

static void bind_int(sqlite3_stmt *stmt, int column, uint64_t value)
{
	sqlite3_bind_int64(stmt, column, (sqlite3_int64)value);
}

static void bind_text(sqlite3_stmt *stmt, int column, const char *text)
{
	if (text)
		sqlite3_bind_text(stmt, column, text, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(stmt, column);
}

/* Binds the meta.json/stats.json integer KEY, or NULL. */
static void bind_json_int(sqlite3_stmt *stmt, int column, const struct flat_json *json, const char *key)
{
	int64_t value;

	if (stats_json_int(json, key, &value) == 0)
		sqlite3_bind_int64(stmt, column, value);
	else
		sqlite3_bind_null(stmt, column);
}

/* ----------------------------------------------------------------- tables */

static int write_meta(struct sqlite_export *x)
{
	sqlite3_stmt *stmt = sql_prepare(x, "INSERT INTO meta(key, value) VALUES (?, ?)");
	char skip[2048] = "";
	int rc = 0;

	if (!stmt)
		return -1;
	if (x->o.default_skip)
		snprintf(skip, sizeof(skip), "%s", CALLSITE_DEFAULT_SKIP);
	for (size_t i = 0; i < x->o.nskip; i++)
		snprintf(skip + strlen(skip), sizeof(skip) - strlen(skip), "%s%s", skip[0] ? " | " : "", x->o.skip[i]);
	const char *text[][2] = { { "recording", x->rec->dir }, { "skip", skip }, { "faultline", PACKAGE_VERSION },
				  { "time_axis", fl_time_axis_name(x->o.time_axis) } };
	for (size_t i = 0; i < sizeof(text) / sizeof(text[0]) && rc == 0; i++) {
		bind_text(stmt, 1, text[i][0]);
		bind_text(stmt, 2, text[i][1]);
		rc = sql_insert(x, stmt, "meta");
	}
	const struct { const char *key; uint64_t value; } ints[] = {
		{ "schema_version", EXPORT_SCHEMA_VERSION }, { "start_ns", x->rec->start_ns }, { "faults", x->rec->nfaults },
	};
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]) && rc == 0; i++) {
		bind_text(stmt, 1, ints[i].key);
		bind_int(stmt, 2, ints[i].value);
		rc = sql_insert(x, stmt, "meta");
	}
	sqlite3_finalize(stmt);
	return rc;
}

/* "a, b, c" of a string array, or NULL. Caller frees. */
static char *join_strings(const struct flat_json *json, const char *key, const char *sep)
{
	char *const *strings;
	size_t n, len = 1;
	char *out;

	if (stats_json_strings(json, key, &strings, &n) < 0)
		return NULL;
	for (size_t i = 0; i < n; i++)
		len += strlen(strings[i]) + strlen(sep);
	if (!(out = malloc(len)))
		return NULL;
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (i)
			strcat(out, sep);
		strcat(out, strings[i]);
	}
	return out;
}

static int write_process(struct sqlite_export *x, sqlite3_stmt *stmt, size_t p)
{
	const struct fl_process *proc = &x->rec->procs[p];
	char *cmdline = join_strings(&proc->meta, FL_META_CMDLINE, " ");
	char *events = join_strings(&proc->meta, FL_META_PMU_EVENTS, ",");
	int64_t dropped;

	bind_int(stmt, 1, p);
	bind_int(stmt, 2, proc->pid);
	bind_int(stmt, 3, proc->image);
	bind_text(stmt, 4, proc->name);
	bind_text(stmt, 5, proc->exe);
	bind_text(stmt, 6, cmdline);
	bind_int(stmt, 7, proc->start_ns);
	bind_int(stmt, 8, proc->offset_ns);
	bind_int(stmt, 9, proc->region_start);
	bind_int(stmt, 10, proc->region_size);
	bind_int(stmt, 11, proc->page_size);
	bind_json_int(stmt, 12, &proc->meta, FL_META_LOCAL_LIMIT);
	bind_json_int(stmt, 13, &proc->meta, FL_META_MAX_BYTES);
	bind_text(stmt, 14, events);
	bind_text(stmt, 15, stats_json_string(&proc->meta, FL_META_PMU_KIND));
	bind_text(stmt, 16, proc->has_stats ? stats_json_string(&proc->stats, FL_STATS_EXIT) : NULL);
	if (proc->has_stats && stats_json_int(&proc->stats, FL_STATS_RECORDS_DROPPED, &dropped) == 0)
		sqlite3_bind_int64(stmt, 17, dropped);
	bind_int(stmt, 18, !proc->maybe_cut);
	free(cmdline);
	free(events);
	return sql_insert(x, stmt, "processes");
}

static int write_processes(struct sqlite_export *x)
{
	sqlite3_stmt *stmt = sql_prepare(x, "INSERT INTO processes VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
	sqlite3_stmt *events = sql_prepare(x, "INSERT INTO pmu_events VALUES (?, ?, ?)");
	int rc = stmt && events ? 0 : -1;

	for (size_t p = 0; p < x->rec->nprocs && rc == 0; p++) {
		char *const *names;
		size_t n;
		rc = write_process(x, stmt, p);
		if (stats_json_strings(&x->rec->procs[p].meta, FL_META_PMU_EVENTS, &names, &n) < 0)
			n = 0;
		for (size_t i = 0; i < n && rc == 0; i++) {
			bind_int(events, 1, p);
			bind_int(events, 2, i);
			bind_text(events, 3, names[i]);
			rc = sql_insert(x, events, "pmu_events");
		}
	}
	sqlite3_finalize(stmt);
	sqlite3_finalize(events);
	return rc;
}

static int write_frames(struct sqlite_export *x, sqlite3_stmt *stmt, uint64_t stack_id,
			const struct callsite_frame *frames, size_t n)
{
	for (size_t d = 0; d < n; d++) {
		const struct callsite_frame *f = &frames[d];
		bind_int(stmt, 1, stack_id);
		bind_int(stmt, 2, d);
		bind_int(stmt, 3, f->index);
		bind_int(stmt, 4, f->pc);
		bind_text(stmt, 5, f->function ? f->function : f->label);
		bind_text(stmt, 6, f->file);
		if (f->line)
			bind_int(stmt, 7, f->line);
		bind_text(stmt, 8, f->binary);
		bind_int(stmt, 9, f->offset);
		bind_int(stmt, 10, f->inlined);
		bind_int(stmt, 11, f->skipped);
		bind_int(stmt, 12, f->function != NULL);
		if (sql_insert(x, stmt, "frames") < 0)
			return -1;
	}
	return 0;
}

/* One row of the stacks table: stack I of process P named under maps snapshot SNAP, and its frames. */
static int write_stack(struct sqlite_export *x, sqlite3_stmt *stacks, sqlite3_stmt *frames, uint64_t id, size_t p,
		       size_t i, uint32_t snap)
{
	const struct fl_stack *s = &x->rec->procs[p].stacks[i];
	const struct callsite_frame *f;
	size_t n, callsite;

	if (callsite_expand_in(x->callsites, p, s, snap, &f, &n, &callsite) < 0) {
		snprintf(x->err, x->errlen, "out of memory symbolizing stacks");
		return -1;
	}
	bind_int(stacks, 1, id);
	bind_int(stacks, 2, p);
	bind_int(stacks, 3, s->id);
	bind_int(stacks, 4, s->nframes);
	bind_int(stacks, 5, (s->flags & FL_STACK_EXACT_PC) != 0);
	bind_int(stacks, 6, (s->flags & FL_STACK_TRUNCATED) != 0);
	if (n)
		bind_int(stacks, 7, callsite);
	bind_int(stacks, 8, snap);
	if (sql_insert(x, stacks, "stacks") < 0)
		return -1;
	return write_frames(x, frames, id, f, n);
}

/* The stacks table: each stack under its first use's maps snapshot (id stack_base + index + 1), then
 * the (stack, snapshot) pairs other events used (numbered by collect_stack_snapshots). */
static int write_stacks(struct sqlite_export *x)
{
	sqlite3_stmt *stacks = sql_prepare(x, "INSERT INTO stacks VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
	sqlite3_stmt *frames = sql_prepare(x, "INSERT INTO frames VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
	const struct report_map_slot *slot;
	uint64_t done = 0;
	int rc = stacks && frames ? 0 : -1;

	report_progress_phase(x->progress, "symbolizing stacks", x->nstack_rows);
	for (size_t p = 0; p < x->rec->nprocs && rc == 0; p++) {
		const struct fl_process *proc = &x->rec->procs[p];
		for (size_t i = 0; i < proc->nstacks && rc == 0; i++) {
			uint32_t snap = callsite_stack_snapshot(x->callsites, p, &proc->stacks[i]);
			if (snap == FL_NONE) {
				snprintf(x->err, x->errlen, "out of memory symbolizing stacks");
				rc = -1;
				break;
			}
			rc = write_stack(x, stacks, frames, x->stack_base[p] + i + 1, p, i, snap);
			report_progress_set(x->progress, ++done);
		}
	}
	for (size_t k = 0; rc == 0 && (slot = report_map_next(&x->stack_in_snapshot, &k)) != NULL;) {
		rc = write_stack(x, stacks, frames, slot->value, (size_t)(slot->a >> 32), (uint32_t)slot->a,
				 (uint32_t)slot->b);
		report_progress_set(x->progress, ++done);
	}
	sqlite3_finalize(stacks);
	sqlite3_finalize(frames);
	return rc;
}

/* The maps_snapshots table: each process's snapshots, as stacks.maps_snapshot numbers them. */
static int write_maps_snapshots(struct sqlite_export *x)
{
	sqlite3_stmt *stmt = sql_prepare(x, "INSERT INTO maps_snapshots VALUES (?, ?, ?, ?, ?)");
	int rc = stmt ? 0 : -1;

	for (size_t p = 0; p < x->rec->nprocs && rc == 0; p++) {
		const struct fl_process *proc = &x->rec->procs[p];
		for (size_t i = 0; i < proc->nmaps && rc == 0; i++) {
			bind_int(stmt, 1, p);
			bind_int(stmt, 2, i);
			bind_int(stmt, 3, proc->offset_ns + proc->maps[i].time_ns);
			bind_text(stmt, 4, proc->maps[i].reason ? proc->maps[i].reason : "");
			bind_int(stmt, 5, proc->maps[i].maps ? proc->maps[i].maps->count : 0);
			rc = sql_insert(x, stmt, "maps_snapshots");
		}
	}
	sqlite3_finalize(stmt);
	return rc;
}

/* The stacks row of S (of process P) for an event at TIME_NS: the row under the maps snapshot in force
 * then. 0 when memory runs out. ADD numbers a row not seen before (collect_stack_snapshots). */
static uint64_t stack_row(struct sqlite_export *x, size_t p, const struct fl_stack *s, uint64_t time_ns, bool add)
{
	size_t i = (size_t)(s - x->rec->procs[p].stacks);
	uint32_t snap, first;
	uint64_t *id;

	if (x->rec->procs[p].nmaps <= 1 || (snap = callsite_snapshot_at(x->callsites, p, time_ns)) ==
						   (first = callsite_stack_snapshot(x->callsites, p, s)))
		return x->stack_base[p] + i + 1;
	if (first == FL_NONE)
		return 0;
	if (!add)
		return (id = report_map_find(&x->stack_in_snapshot, (uint64_t)p << 32 | i, snap)) ? *id : 0;
	if (!(id = report_map_add(&x->stack_in_snapshot, (uint64_t)p << 32 | i, snap, NULL)))
		return 0;
	if (*id == 0)
		*id = ++x->nstack_rows;
	return *id;
}

/* Numbers the stacks rows the events need beyond one per stack: a stack used at a time when another
 * maps snapshot was in force than at its first use (a library loaded or replaced in between). */
static int collect_stack_snapshots(struct sqlite_export *x)
{
	for (size_t p = 0; p < x->rec->nprocs; p++) {
		const struct fl_process *proc = &x->rec->procs[p];
		if (proc->nmaps <= 1)
			continue;
		struct fl_fault_stream *fs;
		const struct fl_fault *f;
		int got;
		if (fl_fault_stream_open(proc, &fs, x->err, x->errlen) < 0)
			return -1;
		while ((got = fl_fault_stream_next(fs, &f)) > 0) {
			const struct fl_fault_context *c = fl_fault_context(proc, f);
			const struct fl_stack *s = callsite_fault_stack(proc, f);
			if (s && !stack_row(x, p, s, f->rec.time_ns, true))
				break;
			s = c && c->stack_id ? callsite_stack_by_id(proc, c->stack_id) : NULL;
			if (s && !stack_row(x, p, s, f->rec.time_ns, true))
				break;
		}
		if (got < 0)
			snprintf(x->err, x->errlen, "%s", fl_fault_stream_error(fs));
		else if (got > 0)
			snprintf(x->err, x->errlen, "out of memory");
		fl_fault_stream_close(fs);
		if (got != 0)
			return -1;
		for (size_t i = 0; i < proc->nallocs; i++) {
			const struct fl_alloc_record *a = &proc->allocs[i];
			const struct fl_stack *s = a->stack_id ? callsite_stack_by_id(proc, a->stack_id) : NULL;
			if (s && !stack_row(x, p, s, a->time_ns, true))
				return -1;
		}
	}
	return 0;
}

/* S as the stack of an event without a time (a site: a whole run's aggregate): its first use's row. */
static void bind_stack(struct sqlite_export *x, sqlite3_stmt *stmt, int column, size_t p, const struct fl_stack *s)
{
	if (s)
		bind_int(stmt, column, x->stack_base[p] + (size_t)(s - x->rec->procs[p].stacks) + 1);
}

/* S as the stack of an event at TIME_NS: the row naming it under the maps snapshot in force then. */
static void bind_stack_at(struct sqlite_export *x, sqlite3_stmt *stmt, int column, size_t p, const struct fl_stack *s,
			  uint64_t time_ns)
{
	uint64_t id = s ? stack_row(x, p, s, time_ns, false) : 0;
	if (id)
		bind_int(stmt, column, id);
}

/* For each allocation event i of PROC: freed[i], the recording time at which object i was freed (or
 * unmapped whole; 0: never), and owner[i], the index + 1 of the object event i starts or ends (0: none
 * known, such as a partial munmap). */
static int free_times(const struct fl_process *proc, uint64_t *freed, uint64_t *owner)
{
	struct report_map live = REPORT_MAP_INIT;   /* start address → object index + 1 */

	for (size_t i = 0; i < proc->nallocs; i++) {
		const struct fl_alloc_record *a = &proc->allocs[i];
		uint64_t *slot = report_map_add(&live, a->addr, 0, NULL);
		if (!slot) {
			report_map_free(&live);
			return -1;
		}
		freed[i] = owner[i] = 0;
		if (a->kind == FL_ALLOC_MALLOC || a->kind == FL_ALLOC_MMAP) {
			owner[i] = i + 1;
			*slot = a->size ? i + 1 : 0;
		} else if (*slot) {
			const struct fl_alloc_record *object = &proc->allocs[*slot - 1];
			if (a->kind == FL_ALLOC_FREE || a->size >= object->size) {
				freed[*slot - 1] = proc->offset_ns + a->time_ns;
				owner[i] = *slot;
				*slot = 0;
			}
		}
	}
	report_map_free(&live);
	return 0;
}

/* Where an allocation row comes from: "log" (every event was logged), "sample" (picked by byte
 * sampling), "large" (>= 1 page: always logged), "faults" (not in the sampled log: made from the
 * faults on it; time_ns is its first fault's, freed_ns unknown). */
static const char *alloc_source(const struct fl_process *proc, const struct fl_alloc_record *a)
{
	if (a->flags & FL_ALLOC_UNLOGGED)
		return "faults";
	if (proc->alloc_log_complete)
		return "log";
	return a->flags & FL_ALLOC_SAMPLED ? "sample" : "large";
}

static int write_allocs_of(struct sqlite_export *x, sqlite3_stmt *objects, sqlite3_stmt *events, size_t p)
{
	const struct fl_process *proc = &x->rec->procs[p];
	size_t n = proc->nallocs ? proc->nallocs : 1;
	uint64_t *freed = malloc(n * sizeof(*freed)), *owner = malloc(n * sizeof(*owner));
	int rc = 0;

	if (!freed || !owner || free_times(proc, freed, owner) < 0) {
		free(freed);
		free(owner);
		snprintf(x->err, x->errlen, "out of memory reading allocations");
		return -1;
	}
	for (size_t i = 0; i < proc->nallocs && rc == 0; i++) {
		const struct fl_alloc_record *a = &proc->allocs[i];
		const struct fl_stack *s = a->stack_id ? callsite_stack_by_id(proc, a->stack_id) : NULL;
		if (a->kind == FL_ALLOC_MALLOC || a->kind == FL_ALLOC_MMAP) {
			bind_int(objects, 1, x->alloc_base[p] + i + 1);
			bind_int(objects, 2, p);
			bind_int(objects, 3, a->alloc_id);
			bind_text(objects, 4, fl_alloc_kind_name(a->kind));
			bind_int(objects, 5, proc->offset_ns + a->time_ns);
			if (freed[i])
				bind_int(objects, 6, freed[i]);
			bind_int(objects, 7, a->addr);
			bind_int(objects, 8, a->size);
			bind_int(objects, 9, a->tid);
			bind_stack_at(x, objects, 10, p, s, a->time_ns);
			bind_text(objects, 11, alloc_source(proc, a));
			rc = sql_insert(x, objects, "allocations");
		}
		if (a->flags & FL_ALLOC_UNLOGGED)
			continue; /* not an event of the log */
		bind_int(events, 1, p);
		bind_int(events, 2, proc->offset_ns + a->time_ns);
		bind_text(events, 3, fl_alloc_kind_name(a->kind));
		bind_int(events, 4, a->addr);
		bind_int(events, 5, a->size);
		bind_int(events, 6, a->tid);
		bind_stack_at(x, events, 7, p, s, a->time_ns);
		if (owner[i])
			bind_int(events, 8, x->alloc_base[p] + owner[i]);
		if (rc == 0)
			rc = sql_insert(x, events, "alloc_events");
	}
	free(freed);
	free(owner);
	return rc;
}

/* The sites file: exact per-site aggregates (stack ids as in the stacks table). */
static int write_sites(struct sqlite_export *x)
{
	sqlite3_stmt *stmt = sql_prepare(x, "INSERT INTO alloc_sites VALUES (?,?,?,?,?,?,?,?,?,?,?)");
	int rc = stmt ? 0 : -1;

	for (size_t p = 0; p < x->rec->nprocs && rc == 0; p++) {
		const struct fl_process *proc = &x->rec->procs[p];
		for (size_t i = 0; i < proc->nsites && rc == 0; i++) {
			const struct fl_site_record *s = &proc->sites[i];
			const struct fl_stack *st = s->stack_id ? callsite_stack_by_id(proc, s->stack_id) : NULL;
			bind_int(stmt, 1, p);
			bind_stack(x, stmt, 2, p, st);
			bind_int(stmt, 3, s->key);
			bind_int(stmt, 4, s->allocs);
			bind_int(stmt, 5, s->frees);
			bind_int(stmt, 6, s->bytes);
			bind_int(stmt, 7, s->live_peak_bytes);
			bind_int(stmt, 8, s->live_bytes);
			bind_int(stmt, 9, s->objects_faulted);
			bind_int(stmt, 10, s->faults);
			bind_int(stmt, 11, (s->flags & FL_SITE_OVERFLOW) != 0);
			rc = sql_insert(x, stmt, "alloc_sites");
		}
	}
	sqlite3_finalize(stmt);
	return rc;
}

static int write_allocations(struct sqlite_export *x)
{
	sqlite3_stmt *objects = sql_prepare(x, "INSERT INTO allocations VALUES (?,?,?,?,?,?,?,?,?,?,?)");
	sqlite3_stmt *events = sql_prepare(x, "INSERT INTO alloc_events VALUES (?,?,?,?,?,?,?,?)");
	int rc = objects && events ? 0 : -1;

	report_progress_phase(x->progress, "writing allocations", 0);
	for (size_t p = 0; p < x->rec->nprocs && rc == 0; p++)
		rc = write_allocs_of(x, objects, events, p);
	sqlite3_finalize(objects);
	sqlite3_finalize(events);
	return rc == 0 ? write_sites(x) : rc;
}

/* Fault F, the I-th of process P in time order. */
static int write_fault(struct sqlite_export *x, sqlite3_stmt *stmt, size_t p, size_t i, const struct fl_fault *f)
{
	const struct fl_process *proc = &x->rec->procs[p];
	uint32_t page_size = proc->page_size ? proc->page_size : 4096;

	uint64_t vtime, axis_time, wall = fl_fault_time_ns(proc, f);
	bool has_vtime = fault_clock_virtual(&x->clock, proc, f, &vtime);

	bind_int(stmt, 1, x->fault_base[p] + i + 1);
	bind_int(stmt, 2, p);
	bind_int(stmt, 3, f->rec.seq);
	if (fault_clock_time(&x->clock, proc, f, &axis_time)) /* wall, or the program's CPU time */
		bind_int(stmt, 4, axis_time);
	bind_int(stmt, 5, f->rec.addr);
	bind_int(stmt, 6, f->rec.addr / page_size);
	bind_int(stmt, 7, f->rec.tid);
	bind_text(stmt, 8, fl_fault_kind_name(f->rec.kind));
	bind_int(stmt, 9, (f->rec.flags & FL_FAULT_WRITE) != 0);
	bind_int(stmt, 10, f->rec.flags);
	bind_int(stmt, 11, f->rec.handler);
	bind_stack_at(x, stmt, 12, p, callsite_fault_stack(proc, f), f->rec.time_ns);
	if (f->alloc != FL_NONE)
		bind_int(stmt, 13, x->alloc_base[p] + f->alloc + 1);
	bind_int(stmt, 14, wall);
	if (has_vtime)
		bind_int(stmt, 15, vtime);
	if (f->rec.service_ns)
		bind_int(stmt, 16, f->rec.service_ns);
	if (f->rec.wait_ns)
		bind_int(stmt, 17, f->rec.wait_ns);
	return sql_insert(x, stmt, "faults");
}

static int write_faults(struct sqlite_export *x)
{
	sqlite3_stmt *stmt = sql_prepare(x, "INSERT INTO faults VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
	uint64_t done = 0;
	int rc = stmt ? 0 : -1;

	report_progress_phase(x->progress, "writing faults", x->rec->nfaults);
	for (size_t p = 0; p < x->rec->nprocs && rc == 0; p++) {
		const struct fl_process *proc = &x->rec->procs[p];
		struct fl_fault_stream *fs;
		const struct fl_fault *f;
		int got = 0;
		if (fl_fault_stream_open(proc, &fs, x->err, x->errlen) < 0) {
			rc = -1;
			break;
		}
		for (size_t i = 0; rc == 0 && (got = fl_fault_stream_next(fs, &f)) > 0; i++) {
			rc = write_fault(x, stmt, p, i, f);
			if (++done % PROGRESS_STEP == 0)
				report_progress_set(x->progress, done);
		}
		if (rc == 0 && got < 0) {
			snprintf(x->err, x->errlen, "%s", fl_fault_stream_error(fs));
			rc = -1;
		}
		fl_fault_stream_close(fs);
	}
	sqlite3_finalize(stmt);
	return rc;
}

struct thread_last {
	uint64_t value[FL_PMU_MAX];
	uint32_t n;
};

/* One context; FAULT is the index of its fault (FL_NONE: lost with a cut faults file), at TIME_NS. */
static int write_context(struct sqlite_export *x, sqlite3_stmt *stmt, size_t p, const struct fl_fault_context *c,
			 uint32_t fault, uint64_t time_ns, struct thread_last *last)
{
	const struct fl_process *proc = &x->rec->procs[p];
	uint32_t n = c->npmu < FL_PMU_MAX ? c->npmu : FL_PMU_MAX;

	if (fault == FL_NONE)
		return 0;
	bind_int(stmt, 1, x->fault_base[p] + fault + 1);
	bind_int(stmt, 2, p);
	bind_int(stmt, 3, c->tid);
	bind_stack_at(x, stmt, 4, p, c->stack_id ? callsite_stack_by_id(proc, c->stack_id) : NULL, time_ns);
	bind_int(stmt, 5, c->npmu);
	for (uint32_t j = 0; j < n; j++) {
		uint64_t prev = j < last->n ? last->value[j] : 0;
		bind_int(stmt, 6 + (int)j, c->pmu[j]);
		bind_int(stmt, 10 + (int)j, c->pmu[j] >= prev ? c->pmu[j] - prev : 0);
		last->value[j] = c->pmu[j];
	}
	if (n > last->n)
		last->n = n;
	return sql_insert(x, stmt, "contexts");
}

/* Contexts of one process in file order, with each thread's deltas (as `faultline report` takes them). */
static int write_contexts_of(struct sqlite_export *x, sqlite3_stmt *stmt, size_t p)
{
	const struct fl_process *proc = &x->rec->procs[p];
	struct report_map by_tid = REPORT_MAP_INIT;
	struct thread_last *last = NULL;
	size_t nlast = 0, n = proc->ncontexts ? proc->ncontexts : 1;
	uint32_t *fault_of = malloc(n * sizeof(*fault_of)); /* context index → fault index */
	int rc = 0;

	if (!fault_of) {
		snprintf(x->err, x->errlen, "out of memory reading contexts");
		return -1;
	}
	memset(fault_of, 0xff, n * sizeof(*fault_of));
	for (size_t i = 0; i < proc->nfaults; i++) {
		if (proc->faults[i].context < proc->ncontexts)
			fault_of[proc->faults[i].context] = (uint32_t)i;
	}
	for (size_t i = 0; i < proc->ncontexts && rc == 0; i++) {
		bool added;
		uint64_t *slot = report_map_add(&by_tid, proc->contexts[i].tid, 0, &added);
		if (slot && added) {
			struct thread_last *grown = realloc(last, (nlast + 1) * sizeof(*grown));
			if (grown) {
				last = grown;
				memset(&last[nlast], 0, sizeof(*last));
				*slot = nlast++;
			} else {
				slot = NULL;
			}
		}
		if (!slot) {
			snprintf(x->err, x->errlen, "out of memory reading contexts");
			rc = -1;
			break;
		}
		rc = write_context(x, stmt, p, &proc->contexts[i], fault_of[i],
				   fault_of[i] == FL_NONE ? 0 : proc->faults[fault_of[i]].rec.time_ns, &last[*slot]);
	}
	free(fault_of);
	free(last);
	report_map_free(&by_tid);
	return rc;
}

/* The per-thread state of a streamed pass over contexts: each thread's last values and seq. */
struct thread_contexts {
	struct report_map by_tid;   /* tid → index */
	struct thread_last *last;
	uint64_t *last_seq;
	size_t n;
};

/* The state of context C's thread (NULL when out of memory); sets x->hold when C comes before its
 * thread's previous context in seq order, as report's streamed pass does: the deltas are taken
 * in each thread's seq order, which only the held recording's pass gives then. */
static struct thread_last *thread_of(struct sqlite_export *x, struct thread_contexts *t, const struct fl_fault_context *c)
{
	bool added;
	uint64_t *slot = report_map_add(&t->by_tid, c->tid, 0, &added);
	if (!slot)
		return NULL;
	if (added) {
		struct thread_last *last = realloc(t->last, (t->n + 1) * sizeof(*last));
		if (last)
			t->last = last;
		uint64_t *seqs = last ? realloc(t->last_seq, (t->n + 1) * sizeof(*seqs)) : NULL;
		if (!seqs)
			return NULL;
		t->last_seq = seqs;
		memset(&t->last[t->n], 0, sizeof(t->last[t->n]));
		*slot = t->n++;
	} else if (c->seq <= t->last_seq[*slot]) {
		x->hold = true;
		return NULL;
	}
	t->last_seq[*slot] = c->seq;
	return &t->last[*slot];
}

/* Contexts of one process of a streamed recording, as their faults come (time order). */
static int write_contexts_streamed(struct sqlite_export *x, sqlite3_stmt *stmt, size_t p)
{
	const struct fl_process *proc = &x->rec->procs[p];
	struct thread_contexts t = { REPORT_MAP_INIT, NULL, NULL, 0 };
	struct fl_fault_stream *fs;
	const struct fl_fault *f;
	int rc = 0, got = 0;

	if (fl_fault_stream_open(proc, &fs, x->err, x->errlen) < 0)
		return -1;
	for (size_t i = 0; rc == 0 && (got = fl_fault_stream_next(fs, &f)) > 0; i++) {
		const struct fl_fault_context *c = fl_fault_context(proc, f);
		if (!c)
			continue;
		struct thread_last *last = thread_of(x, &t, c);
		if (!last) {
			snprintf(x->err, x->errlen, "%s", x->hold ? "contexts out of order" : "out of memory reading contexts");
			rc = -1;
			break;
		}
		rc = write_context(x, stmt, p, c, (uint32_t)i, f->rec.time_ns, last);
	}
	if (rc == 0 && got < 0) {
		snprintf(x->err, x->errlen, "%s", fl_fault_stream_error(fs));
		rc = -1;
	}
	fl_fault_stream_close(fs);
	report_map_free(&t.by_tid);
	free(t.last);
	free(t.last_seq);
	return rc;
}

static int write_contexts(struct sqlite_export *x)
{
	sqlite3_stmt *stmt = sql_prepare(x, "INSERT INTO contexts VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)");
	int rc = stmt ? 0 : -1;

	report_progress_phase(x->progress, "writing contexts", 0);
	for (size_t p = 0; p < x->rec->nprocs && rc == 0; p++)
		rc = x->o.streamed ? write_contexts_streamed(x, stmt, p) : write_contexts_of(x, stmt, p);
	sqlite3_finalize(stmt);
	return rc;
}

/* Eviction events of every process, on the wall axis (recording time). */
static int write_evictions(struct sqlite_export *x)
{
	sqlite3_stmt *stmt = sql_prepare(x, "INSERT INTO evictions VALUES (?,?,?,?,?,?,?,?)");
	int rc = stmt ? 0 : -1;

	report_progress_phase(x->progress, "writing evictions", 0);
	for (size_t p = 0; p < x->rec->nprocs && rc == 0; p++) {
		const struct fl_process *proc = &x->rec->procs[p];
		uint32_t page_size = proc->page_size ? proc->page_size : 4096;
		struct fl_evictions ev;
		if (fl_evictions_load(proc, FL_EVICTIONS_BY_TIME, &ev, x->err, x->errlen) < 0) {
			/* an optional file: the export goes on without it, as the other verbs do */
			report_warn(x->warnings, "%s; table evictions leaves this process out", x->err);
			x->err[0] = '\0';
			continue;
		}
		if (ev.warning[0])
			report_warn(x->warnings, "%s", ev.warning);
		for (size_t i = 0; i < ev.n && rc == 0; i++) {
			const struct fl_evict_record *e = &ev.recs[i];
			bind_int(stmt, 1, p);
			bind_int(stmt, 2, proc->offset_ns + e->time_ns);
			bind_int(stmt, 3, e->addr);
			bind_int(stmt, 4, e->addr / page_size);
			bind_text(stmt, 5, fl_evict_decision_name(e->decision));
			bind_int(stmt, 6, fl_evict_to_far(e->decision));
			bind_int(stmt, 7, (e->flags & FL_EVICT_DIRTY) != 0);
			bind_int(stmt, 8, (e->flags & FL_EVICT_INLINE) != 0);
			rc = sql_insert(x, stmt, "evictions");
		}
		fl_evictions_free(&ev);
	}
	sqlite3_finalize(stmt);
	return rc;
}

/* ----------------------------------------------------------------- timelines, and the whole database */

/* The counter timelines (timeline.h): one row per sample, tid 0 = the process; a counter the
 * sample does not hold is NULL. Times in recording time, as everywhere. */
static int write_timeline_of(struct sqlite_export *x, sqlite3_stmt *stmt, size_t p)
{
	const struct fl_process *proc = &x->rec->procs[p];
	struct fl_timeline tl;
	int rc = 0;

	if (fl_timeline_read(proc, &tl, x->err, x->errlen) < 0) {
		report_warn(x->warnings, "%s; table timeline leaves this process out", x->err);
		x->err[0] = '\0';
		return 0;
	}
	if (tl.warning[0])
		report_warn(x->warnings, "%s", tl.warning);
	for (size_t i = 0; i < tl.nrecs && rc == 0; i++) {
		const struct fl_timeline_record *r = &tl.recs[i];
		bind_int(stmt, 1, p);
		bind_int(stmt, 2, r->tid);
		bind_int(stmt, 3, proc->offset_ns + r->time_ns);
		bind_text(stmt, 4, fl_timeline_reason_name(r->reason));
		for (unsigned c = 0; c < FL_TL_COUNTERS; c++)
			if (r->valid & (1u << c))
				bind_int(stmt, 5 + (int)c, r->values[c]);
		rc = sql_insert(x, stmt, "timeline");
	}
	fl_timeline_free(&tl);
	return rc;
}

static int write_timeline(struct sqlite_export *x)
{
	sqlite3_stmt *stmt = sql_prepare(x, "INSERT INTO timeline VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
	int rc = stmt ? 0 : -1;

	report_progress_phase(x->progress, "writing timelines", 0);
	for (size_t p = 0; p < x->rec->nprocs && rc == 0; p++)
		rc = write_timeline_of(x, stmt, p);
	sqlite3_finalize(stmt);
	return rc;
}

static int number_records(struct sqlite_export *x)
{
	size_t n = x->rec->nprocs ? x->rec->nprocs : 1;
	uint64_t stacks = 0, allocs = 0, faults = 0;

	x->stack_base = calloc(n, sizeof(uint64_t));
	x->alloc_base = calloc(n, sizeof(uint64_t));
	x->fault_base = calloc(n, sizeof(uint64_t));
	if (!x->stack_base || !x->alloc_base || !x->fault_base)
		return -1;
	for (size_t p = 0; p < x->rec->nprocs; p++) {
		x->stack_base[p] = stacks;
		x->alloc_base[p] = allocs;
		x->fault_base[p] = faults;
		stacks += x->rec->procs[p].nstacks;
		allocs += x->rec->procs[p].nallocs;
		faults += x->rec->procs[p].nfaults;
	}
	x->nstack_rows = stacks;
	return collect_stack_snapshots(x);
}

static int write_database(struct sqlite_export *x, const char *path)
{
	int rc;

	if (sqlite3_open_v2(path, &x->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK)
		return sql_fail(x, "sqlite3_open_v2", path);
	rc = sql_exec(x, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA locking_mode = EXCLUSIVE;"
		      "PRAGMA cache_size = -65536; BEGIN", "pragmas");
	if (rc == 0)
		rc = sql_exec(x, EXPORT_SCHEMA, "schema");
	if (rc == 0)
		rc = write_meta(x);
	if (rc == 0)
		rc = write_processes(x);
	if (rc == 0)
		rc = write_maps_snapshots(x);
	if (rc == 0)
		rc = write_stacks(x);
	if (rc == 0)
		rc = write_allocations(x);
	if (rc == 0)
		rc = write_faults(x);
	if (rc == 0)
		rc = write_contexts(x);
	if (rc == 0)
		rc = write_evictions(x);
	if (rc == 0)
		rc = write_timeline(x);
	if (rc == 0) {
		report_progress_phase(x->progress, "building indexes", 0);
		rc = sql_exec(x, EXPORT_INDEXES, "indexes");
	}
	if (rc == 0)
		rc = sql_exec(x, "COMMIT", "commit");
	if (sqlite3_close(x->db) != SQLITE_OK && rc == 0)
		rc = sql_fail(x, "sqlite3_close", path);
	x->db = NULL;
	return rc;
}


int sqlite_export_new(struct sqlite_export **out, struct fl_recording *rec, struct callsite_table *callsites,
		      const struct sqlite_export_options *o, struct report_progress *progress,
		      struct report_warnings *warnings, char *err, size_t errlen)
{
	struct sqlite_export *x = calloc(1, sizeof(*x));

	*out = NULL;
	if (!x)
		return -1;
	x->o = *o;
	x->rec = rec;
	x->callsites = callsites;
	x->progress = progress;
	x->warnings = warnings;
	x->stack_in_snapshot = (struct report_map)REPORT_MAP_INIT;
	x->err = err;
	x->errlen = errlen;
	if (fault_clock_init(&x->clock, rec, o->time_axis) < 0 || number_records(x) < 0) {
		sqlite_export_free(x);
		return -1;
	}
	*out = x;
	return 0;
}

int sqlite_export_write(struct sqlite_export *x, const char *path)
{
	int rc = write_database(x, path);

	return rc != 0 && x->hold ? SQLITE_EXPORT_HOLD : rc;
}

void sqlite_export_free(struct sqlite_export *x)
{
	if (!x)
		return;
	fault_clock_free(&x->clock);
	free(x->stack_base);
	free(x->alloc_base);
	free(x->fault_base);
	report_map_free(&x->stack_in_snapshot);
	free(x);
}
