/* trace_reader.h: reads and validates a faultline recording, and answers what every verb asks of
 * it — the faults in time order, a fault's context and stack, the allocation a fault hit, the
 * memory map at a time.
 *
 * A recording is a directory DIR with one subdirectory per traced process, named by its pid in
 * decimal, or "PID.N" for the N-th later exec image of the same pid. The files of a process
 * directory and their layout are defined in inc/faultline/trace.h:
 *   meta.json   required    stats.json  optional (absent: the process was killed, its trace may be cut)
 *   faults      required    contexts, stacks, allocs (or allocs.zst), sites  optional binary files
 *   maps        optional text
 *
 * Headers and records longer than this reader knows (trace.h's extension rule) are read by their
 * known prefix. Both format versions are read: version 1 (32-bit seq) is decoded into the version-2
 * structs. Fault records of 32 bytes (no object fields) are joined to objects by a sweep over the
 * allocation log, longer ones by the object they name.
 *
 * Validation. fl_recording_open checks everything it reads — magic (the other byte order is
 * refused by name), version (a newer one is refused by name), kind, header_size and record_size
 * (at least what the version defines, multiples of 8; 0 for stacks), pid against the
 * directory name and meta.json, the clock origin and region against meta.json, enum values and
 * flag bits, fault addresses inside the region, unique seqs / stack ids / alloc ids, stack sizes
 * (at most FL_STACK_MAX_FRAMES frames), and every reference between files (a fault's or context's
 * or allocation's stack id, a context's seq). Corruption makes the open fail with one line
 * "PATH: offset N: what is wrong"; nothing read from a file sizes an allocation beyond what the
 * file itself holds, and no input crashes the reader.
 *
 * What is not an error: a file cut in the middle of a record (or of its header) by a crash or
 * SIGKILL. The complete records are kept and the recording carries a warning
 * "PATH: truncated at offset N (M complete records; ...)". A process whose trace may be cut (no
 * stats.json, a truncated file, or dropped records) may also hold references to records that
 * never reached the disk; those are reported as one warning per file and ignored instead of
 * failing the open. Verbs print rec->warnings on stderr.
 *
 * Time. Record times are nanoseconds since their process's runtime start (its start_ns, on
 * CLOCK_MONOTONIC). The reader also gives a recording time: nanoseconds since the earliest
 * process start of the recording, so faults of several processes share one time axis.
 *
 * Memory. A recording opened for streaming (fl_recording_open_stream) holds no fault and no
 * context: they are checked and counted in one read at the open, and every walk over them reads the
 * files again in bounded memory (fault_stream.h; one frame at a time, put in order by a reorder
 * window the open measured). What follows is the held recording (fl_recording_open).
 * Binary files are mapped, not read: faults are validated in the mapping and held once, in
 * time order (72 bytes each with their joins); contexts and stacks stay in their mappings when their
 * layout allows (contexts are gathered once in seq order otherwise); allocation events are held
 * once (40 bytes); plus the parsed maps snapshots. Loading is split by concern: trace_load*.c
 * (open, map, validate), trace_query.c (the queries below), alloc_index.c (the allocation sweep).
 *
 * Everything returned points into the recording and stays valid until fl_recording_close. The
 * recording is read-only after open: several threads may query it at once. */
#ifndef FAULTLINE_TOOLS_TRACE_READER_H
#define FAULTLINE_TOOLS_TRACE_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <faultline/trace.h>

#include "maps.h"
#include "stats_json.h"

/* A reader-made allocation record (never in a file): an object that faulted but whose allocation
 * the sampled log does not hold, made from the fault records that hit it. Its time_ns is its
 * first fault's (it was allocated before), its end is unknown (no FREE follows). */
#define FL_ALLOC_UNLOGGED 0x80

/* "No such record" in the index fields below. */
#define FL_NONE UINT32_MAX

/* The deepest stack a valid stacks file may hold. */
#define FL_STACK_MAX_FRAMES 1024

/* At most this many warnings are kept (the rest are counted in warnings_suppressed). */
#define FL_MAX_WARNINGS 100

/* A fault as the reader holds it: the record as written, and its joins to the other files. */
struct fl_fault {
	struct fl_fault_record rec; /* exactly as in the faults file */
	uint32_t context;           /* index into proc->contexts, or FL_NONE (no context) */
	uint32_t alloc;             /* index into proc->allocs of the live allocation holding
	                             * rec.addr at rec.time_ns, or FL_NONE */
};

/* A call stack, innermost frame first. */
struct fl_stack {
	uint32_t id;                /* >= 1 */
	uint16_t nframes;           /* 0 .. FL_STACK_MAX_FRAMES (0: the unwinder found no frame) */
	uint16_t flags;             /* FL_STACK_* */
	uint64_t hash;              /* as recorded (not checked: the algorithm is the writer's) */
	const uint64_t *frames;     /* nframes program counters / return addresses */
};

/* One /proc/self/maps snapshot from the maps file. */
struct fl_maps_snapshot {
	uint64_t time_ns;           /* since the process's start_ns */
	char *reason;               /* "start", "dlopen", "exec", "exit" (others are kept as written) */
	struct maps *maps;          /* the parsed table (tools/maps.h) */
};

struct fl_process_private;

/* One traced process image: the contents of DIR/PID or DIR/PID.N. */
struct fl_process {
	char name[32];              /* directory name: "1234" or "1234.1" */
	char *dir;                  /* DIR/name */
	uint32_t pid;
	uint32_t image;             /* N of "PID.N"; 0 for "PID" */

	struct flat_json meta;      /* meta.json */
	struct flat_json stats;     /* stats.json; empty (count 0) when has_stats is false */
	bool has_stats;
	bool maybe_cut;             /* no stats.json, a truncated file, or records_dropped > 0 */
	bool stats_missing;         /* no stats.json at all (killed, or not ended yet) */
	bool outlived;              /* ... and still running when record ended, or a child of one (DIR/exit) */
	uint64_t faults_lost;       /* fault records the runtime served but the trace lacks: stats.json's
	                             * count minus the records, or without stats.json (SIGKILL) the
	                             * gaps in the records' seq numbers (a lower bound: faults_lost_exact
	                             * false, the ones after the last record written are not seen) */
	bool faults_lost_exact;
	const char *exe;            /* meta.json "exe", or "" */
	char *const *cmdline;       /* meta.json "cmdline" (ncmdline strings; none when absent) */
	size_t ncmdline;

	/* From the faults file header (meta.json agrees, or the open failed). */
	uint64_t start_ns;          /* CLOCK_MONOTONIC at the process's runtime start */
	uint64_t offset_ns;         /* start_ns minus the recording's start_ns */
	uint64_t region_start;
	uint64_t region_size;
	uint32_t page_size;

	struct fl_fault *faults;    /* sorted by (rec.time_ns, rec.seq); seqs are unique. NULL when the
	                             * recording was opened for streaming: fault_stream.h reads them */
	size_t nfaults;
	uint64_t kind_counts[FL_FAULT_KIND_MAX + 1]; /* faults by enum fl_fault_kind */
	uint64_t last_fault_ns;     /* the last fault's time_ns (0 without faults) */
	struct fl_fault_context *contexts; /* in seq order; each joined to exactly one fault (NULL when
	                                    * streamed: fl_fault_context gives a streamed fault's) */
	size_t ncontexts;           /* the contexts (when streamed: counted by the open, not held) */
	struct fl_stack *stacks;    /* sorted by id; ids are unique */
	size_t nstacks;
	struct fl_alloc_record *allocs; /* in time order (ties keep file order) */
	size_t nallocs;
	bool alloc_log_complete;    /* allocs holds every event (--alloc-log full, or an older recording);
	                             * false: a sample (meta.json alloc_log "sampled", trace.h) */
	bool fault_objects;         /* fault records name their object (FL_FAULT_OBJECT): faults are
	                             * joined to objects by them, exactly, sampled log or not */
	size_t unlogged_objects;    /* records the reader made for faulted objects the log lacks */
	struct fl_site_record *sites; /* the sites file (exact per-site aggregates); in file order */
	size_t nsites;
	struct fl_maps_snapshot *maps;  /* sorted by time (ties keep file order) */
	size_t nmaps;

	struct fl_process_private *priv; /* indexes and buffers the reader owns */
};

/* A recording: its processes and what was wrong with it short of an error. */
enum fl_ending {
	FL_ENDING_UNKNOWN,          /* no DIR/exit: record was killed, or an older recording */
	FL_ENDING_EXIT,             /* the command exited with status ending_value */
	FL_ENDING_SIGNAL,           /* the command was killed by signal ending_value */
};

struct fl_recording {
	char *dir;
	enum fl_ending ending;      /* how the traced command ended (DIR/exit) */
	int ending_value;
	uint32_t *outlived;         /* pids of processes still running when record ended (DIR/exit) */
	size_t noutlived;
	bool in_progress;           /* record still runs (it holds its lock on DIR): the trace is partial,
	                             * and a process without stats.json is still being recorded */
	struct fl_process *procs;   /* sorted by (start_ns, pid, image) */
	size_t nprocs;
	uint64_t start_ns;          /* the earliest process start_ns */
	uint64_t nfaults;           /* over every process */
	char **warnings;            /* one line each, no newline */
	size_t nwarnings;
	size_t warnings_suppressed; /* warnings beyond FL_MAX_WARNINGS, not kept */
};

/* ----------------------------------------------------------------- opening */

/* Reads and validates the recording in DIR. Returns 0 with *out set, or -1 with *out NULL and a
 * one-line reason in err (naming the file and byte offset when a file is corrupt; a missing or
 * empty DIR, or one holding no process directory, is an error too). Process directories that are
 * completely empty (a process that died before its runtime wrote anything) are skipped with a
 * warning. Entries of DIR that are not process directories are ignored. */
int fl_recording_open(const char *dir, struct fl_recording **out, char *err, size_t errlen);

/* Opens the recording in DIR for streaming: everything is loaded as by fl_recording_open but the
 * faults and contexts, which are checked and counted in one read and then read again, in bounded
 * memory, by every walk over them (fault_stream.h, and fl_fault_iter below). proc->faults and
 * proc->contexts are then NULL. Only the common clean shape is streamed (format 2 or later, no
 * file cut, stats.json agreeing with the records, fault records naming their objects). Returns 0
 * with *out set, or 1 (*out NULL) when the recording is to be opened with fl_recording_open, which
 * reads every shape and words every error and warning. The environment variable
 * FAULTLINE_READ_HELD=1 makes it return 1 always (to compare both readers' results). */
int fl_recording_open_stream(const char *dir, struct fl_recording **out);

/* Releases everything the recording owns (NULL is fine). */
void fl_recording_close(struct fl_recording *rec);

/* Finds the newest directory named "faultline-*" that is a recording (holds a process directory
 * with a meta.json; a sweep's directory is not) (by modification time; ties: the greater name)
 * in PARENT ("." if NULL) and writes its path, "PARENT/NAME" (just NAME for "."), into out.
 * Returns 0, or -1 with a reason in err when there is none or PARENT cannot be read. */
int fl_recording_find_newest(const char *parent, char *out, size_t outlen, char *err, size_t errlen);

/* The first process (in recording order) with this pid, or NULL. Later exec images of the same
 * pid follow it in rec->procs. */
const struct fl_process *fl_recording_find_pid(const struct fl_recording *rec, uint32_t pid);

/* The largest `record -s N` (meta.json "sample": a stack for 1 fault in N) of the processes with this
 * pid (0: of every process); 1 when none says, as for every fault with a stack. */
uint64_t fl_recording_stack_sample(const struct fl_recording *rec, uint32_t pid);
/* Whether no process of REC (or process PID) took fault stacks: recorded with -s 0 or
 * --stack-depth 0 (meta.json sample or stack_depth 0). */
bool fl_recording_no_fault_stacks(const struct fl_recording *rec, uint32_t pid);

/* ----------------------------------------------------------------- faults in time order */

/* Walks the faults of every process (pid 0) or of every image of one pid, merged in recording
 * time order (ties: process order, then seq). Usage:
 *     struct fl_fault_iter it;
 *     if (fl_fault_iter_init(&it, rec, 0) < 0) ... it.error says why
 *     while ((f = fl_fault_iter_next(&it, &proc)) != NULL) ...
 *     if (it.error[0]) ... the walk ended early (a streamed file could not be read again)
 *     fl_fault_iter_free(&it);
 * A fault returned stays valid until the second next call after it (fault_stream.h). */
struct fl_fault_stream;
struct fl_fault_iter {
	const struct fl_recording *rec;
	struct fl_fault_stream **streams; /* per process (NULL: not walked) */
	const struct fl_fault **head;     /* per process: its next fault */
	size_t *heap;               /* process indexes, a min-heap on their next fault's time */
	size_t nheap;
	char error[768];            /* "" or why the walk failed or ended early */
};

/* Prepares an iterator; returns 0, or -1 with it->error set. */
int fl_fault_iter_init(struct fl_fault_iter *it, const struct fl_recording *rec, uint32_t pid);

/* The next fault in time order and (when proc is not NULL) its process; NULL at the end (or on
 * an error: it->error). */
const struct fl_fault *fl_fault_iter_next(struct fl_fault_iter *it, const struct fl_process **proc);

/* Releases the iterator's memory. */
void fl_fault_iter_free(struct fl_fault_iter *it);

/* A fault's time in recording time (nanoseconds since rec->start_ns). */
uint64_t fl_fault_time_ns(const struct fl_process *proc, const struct fl_fault *fault);

/* ----------------------------------------------------------------- joins */

/* The fault with this seq, or NULL. O(log n). */
const struct fl_fault *fl_process_fault_by_seq(const struct fl_process *proc, uint64_t seq);

/* The context of the fault with this seq, or NULL when it has none. O(log n). */
const struct fl_fault_context *fl_process_context(const struct fl_process *proc, uint64_t seq);

/* The context of a fault of proc, or NULL. O(1). */
const struct fl_fault_context *fl_fault_context(const struct fl_process *proc, const struct fl_fault *fault);

/* The stack with this id, or NULL (id 0, or an id missing from a cut trace). O(log n). */
const struct fl_stack *fl_process_stack(const struct fl_process *proc, uint32_t stack_id);

/* A fault's call stack: its context's stack when it has one, else the fault record's stack_id;
 * NULL when neither names a stack. */
const struct fl_stack *fl_fault_stack(const struct fl_process *proc, const struct fl_fault *fault);

/* The MALLOC/MMAP record with this alloc_id, or NULL. O(log n). */
const struct fl_alloc_record *fl_process_alloc_by_id(const struct fl_process *proc, uint32_t alloc_id);

/* The allocation a fault hit — the MALLOC/MMAP record of the object live at the fault's address
 * and time — or NULL when the address was in no live allocation. O(1) (computed at open). */
const struct fl_alloc_record *fl_fault_alloc(const struct fl_process *proc, const struct fl_fault *fault);

/* ----------------------------------------------------------------- allocation attribution */

/* The set of live allocations of one process at a moving point in time, for attributing any
 * (address, time) queries made in non-decreasing time order. fl_recording_open uses it for the
 * faults; verbs may use it for their own queries.
 *
 * Semantics (trace.h): MALLOC and MMAP start an object [addr, addr + size); FREE ends the object
 * that starts at addr; MUNMAP removes [addr, addr + size) from whatever it covers, so it may
 * shrink an object from either end or split it in two (both pieces keep their record). A new
 * object replaces whatever live memory it overlaps (the earlier owner's end was not recorded: a
 * MAP_FIXED mapping, or a lost FREE). Zero-sized objects hold no address and are not tracked.
 * Events at time t apply before queries at time t.
 *
 * The live objects are non-overlapping pieces [start, end) kept in a treap (a binary search tree
 * on start, heap-ordered on random priorities, so expected O(log n) depth) whose nodes live in
 * one array addressed by index (0 = none). */
struct fl_alloc_piece;

struct fl_alloc_sweep {
	const struct fl_process *proc;
	size_t next_event;          /* next index into proc->allocs to apply */
	struct fl_alloc_piece *nodes;  /* node 0 is unused: index 0 means "none" */
	uint32_t nnodes, cap, free_list, root;
	uint32_t live;              /* pieces in the tree */
	uint32_t hint;              /* the piece the last find hit (0: none); cleared by every event */
	uint64_t rng;               /* priority generator state */
};

/* Starts a sweep before the first event of proc. Returns 0 (allocates nothing yet). */
void fl_alloc_sweep_init(struct fl_alloc_sweep *sweep, const struct fl_process *proc);

/* Applies every event with time_ns <= time_ns not applied yet. Returns 0, or -1 (errno ENOMEM). */
int fl_alloc_sweep_advance(struct fl_alloc_sweep *sweep, uint64_t time_ns);

/* The index into proc->allocs of the MALLOC/MMAP record whose object holds addr now, or FL_NONE.
 * O(log n); O(1) when addr is in the same piece as the previous find and no event came between
 * (consecutive faults in one object, the common case). */
uint32_t fl_alloc_sweep_find(struct fl_alloc_sweep *sweep, uint64_t addr);

/* Releases the sweep's memory. */
void fl_alloc_sweep_free(struct fl_alloc_sweep *sweep);

/* ----------------------------------------------------------------- memory maps */

/* The maps snapshot to symbolize an address at process time time_ns (since proc->start_ns): the
 * latest snapshot taken at or before it; the earliest one when all were taken later; NULL when the
 * process has no maps file. Pass UINT64_MAX for the last snapshot. O(log n). */
const struct fl_maps_snapshot *fl_process_maps_at(const struct fl_process *proc, uint64_t time_ns);
/* The same as an index into proc->maps; 0 when the process has at most one snapshot. */
uint32_t fl_process_maps_index_at(const struct fl_process *proc, uint64_t time_ns);

/* ----------------------------------------------------------------- names */

/* "first-touch", "refault", "soft", "concurrent", or "?" for a value outside enum fl_fault_kind. */
const char *fl_fault_kind_name(unsigned kind);

/* "malloc", "free", "mmap", "munmap", or "?". */
const char *fl_alloc_kind_name(unsigned kind);

#endif
