/* callsite.h: where in the program a recorded stack points — its source frames and its callsite.
 *
 * A recorded stack is a list of PCs, innermost first: frame 0 is the faulting instruction when the
 * stack has FL_STACK_EXACT_PC, else (faults inside system calls, allocation stacks) a return address
 * like every other frame; return addresses are looked up at PC − 1 so that they land on the call.
 * Symbolizing expands each PC into its chain of source frames (the innermost inlined function first,
 * then the functions it was inlined into), so a stack reads as a list of *source frames*.
 *
 * The callsite of a stack is its first source frame not covered by the skip list. By default the
 * list covers the machinery between a program and its faults: frames in libc, libstdc++, the dynamic
 * loader, libjemalloc, libunwind and libfaultline (matched on the binary's path). Users may add POSIX
 * extended regular expressions, each matched against the binary path and the function name of every
 * source frame (so skipping an inlined helper moves the callsite to the function it was inlined into,
 * at the same PC), or drop the defaults. A stack whose every frame is skipped has its innermost
 * source frame as callsite; a stack without frames has the location "<no stack>".
 *
 * This is the one stack → frames → callsite resolver: report and export take callsites and frames
 * from it, ranges its allocation sites, visualize its frames (visualize_frames.h names them for
 * flame graphs), so every verb names the same callsite for the same fault.
 *
 * Layout. A stack may be used at several times (faults, allocations), and the same PC may be named by
 * different files at different times (a library unloaded and another loaded in its place, an exec).
 * The rule: an event's stack is named under the maps snapshot in force at the time of the event
 * (the last "# maps TIME REASON" snapshot taken at or before it): the *_at functions, memoized per
 * (stack, snapshot), as fast as the plain ones when a process has one snapshot. The plain functions,
 * for a stack without an event (sites aggregate a whole run), take the snapshot in force at the
 * stack's first use (the earliest fault or allocation naming it). A PC outside the chosen snapshot is
 * looked up in the later snapshots, then the earlier ones (a library loaded or unloaded in between).
 *
 * Locations are interned: one id per distinct (function, file, line, binary), compared by content,
 * where a frame without a function name is named by its label ("fill+0x14c3"). A report row is a
 * location id. Symbolization goes through one symbolizer (symbolize.h): each distinct PC is looked up
 * in its binary once. Not thread-safe. */
#ifndef FAULTLINE_TOOLS_CALLSITE_H
#define FAULTLINE_TOOLS_CALLSITE_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize.h"
#include "trace_reader.h"

/* The default skip list, as a POSIX ERE on the binary path. */
#define CALLSITE_DEFAULT_SKIP \
	"(^|/)(libc\\.so|libc-[0-9.]+\\.so|libstdc\\+\\+\\.so|ld-linux[^/]*\\.so|ld\\.so|libjemalloc\\.so|" \
	"libunwind[^/]*\\.so|libfaultline\\.so)[^/]*$"
#define CALLSITE_DEFAULT_SKIP_NAMES "libc, libstdc++, ld.so, libjemalloc, libunwind, libfaultline"

/* Names of the locations that are not source frames. */
#define CALLSITE_NO_STACK "<no stack>"

struct callsite_skip {
	bool defaults;          /* the default list applies */
	regex_t default_re;     /* compiled CALLSITE_DEFAULT_SKIP (when defaults) */
	regex_t *user;          /* the user's patterns */
	size_t nuser;
};

/* Compiles the skip list: the defaults when DEFAULTS, plus every pattern. 0, or -1 with a reason
 * ("--skip 'x(': unmatched parenthesis") in err. */
int callsite_skip_init(struct callsite_skip *skip, bool defaults, char *const *patterns, size_t npatterns,
		       char *err, size_t errlen);

void callsite_skip_free(struct callsite_skip *skip);

/* Does the list cover frames of this binary path / this function name? */
bool callsite_skip_binary(const struct callsite_skip *skip, const char *path);
bool callsite_skip_function(const struct callsite_skip *skip, const char *function);

/* fl_process_stack and fl_fault_stack (trace_reader.h) with an O(1) path for the usual dense stack ids
 * (stack id i at index i - 1); the same answers. */
const struct fl_stack *callsite_stack_by_id(const struct fl_process *proc, uint32_t stack_id);
const struct fl_stack *callsite_fault_stack(const struct fl_process *proc, const struct fl_fault *fault);

/* An interned location. */
struct callsite_loc {
	const char *function;   /* the demangled name, else the frame's label; never NULL */
	const char *file;       /* source file, NULL when unknown */
	unsigned line;          /* 0 when unknown */
	const char *binary;     /* the mapped file or pseudo mapping, NULL when none held the PC */
	bool symbolized;        /* function is a name, not a label */
};

/* One source frame of a stack. */
struct callsite_frame {
	uint64_t pc;            /* as recorded */
	uint32_t index;         /* position of pc in the recorded stack */
	bool is_return;         /* a return address (looked up at pc − 1) */
	bool inlined;           /* inlined into the next source frame (which has the same pc) */
	bool skipped;           /* covered by the skip list */
	const char *function;   /* NULL when unknown */
	const char *file;       /* NULL when unknown */
	unsigned line;          /* 0 when unknown */
	const char *binary;     /* NULL when no mapping held the PC */
	uint64_t offset;        /* of the looked-up address in binary (see sym_result) */
	const char *label;      /* "BASENAME+0xOFFSET" and the like; never NULL */
	bool unknown;           /* the symbolizer knew nothing of pc (the only frame of its pc) */
	bool symtab_only;       /* named from the symbol table alone: no file or line */
};

struct callsite_table;

/* A table for the stacks of REC (which must outlive it), with the skip list SKIP (kept by pointer).
 * Symbolizer warnings go to DIAG (stderr when NULL). NULL with errno ENOMEM. */
struct callsite_table *callsite_table_new(const struct fl_recording *rec, const struct callsite_skip *skip,
					  sym_diag_fn diag, void *diag_ctx);

void callsite_table_free(struct callsite_table *table);

/* The callsite location id of STACK of process rec->procs[PROC]; NULL stack: "<no stack>". Memoized
 * per stack; symbolizes only the frames up to the callsite. FL_NONE when memory runs out. */
uint32_t callsite_of_stack(struct callsite_table *table, size_t proc, const struct fl_stack *stack);

/* callsite_of_stack for an event at TIME_NS (the fault's or allocation's time_ns): under the maps
 * snapshot in force then. Memoized per (stack, snapshot). */
uint32_t callsite_of_stack_at(struct callsite_table *table, size_t proc, const struct fl_stack *stack,
			      uint64_t time_ns);

/* callsite_expand for an event at TIME_NS: under the maps snapshot in force then. */
int callsite_expand_at(struct callsite_table *table, size_t proc, const struct fl_stack *stack, uint64_t time_ns,
		       const struct callsite_frame **frames, size_t *nframes, size_t *callsite);

/* callsite_expand under maps snapshot SNAPSHOT (an index from the functions below). */
int callsite_expand_in(struct callsite_table *table, size_t proc, const struct fl_stack *stack, uint32_t snapshot,
		       const struct callsite_frame **frames, size_t *nframes, size_t *callsite);

/* The maps snapshot (index into rec->procs[PROC].maps; 0 when the process has at most one) in force
 * at TIME_NS, and the one the plain functions use for STACK (its first use; FL_NONE when memory runs
 * out). Two events of one stack are named alike when these indexes agree. */
uint32_t callsite_snapshot_at(const struct callsite_table *table, size_t proc, uint64_t time_ns);
uint32_t callsite_stack_snapshot(struct callsite_table *table, size_t proc, const struct fl_stack *stack);

/* Every source frame of STACK, innermost first, and the index of the callsite among them (0 when
 * there is no frame). *frames belongs to the table and stays valid until the next call. -1 (ENOMEM). */
int callsite_expand(struct callsite_table *table, size_t proc, const struct fl_stack *stack,
		    const struct callsite_frame **frames, size_t *nframes, size_t *callsite);

/* The callsite's source frame of STACK alone, as callsite_expand's frames[callsite], expanding the
 * stack only down to it (the frames beyond are not symbolized). *frame belongs to the table and stays
 * valid until the next call; NULL for a NULL or empty stack. -1 (ENOMEM). */
int callsite_frame_of_stack(struct callsite_table *table, size_t proc, const struct fl_stack *stack,
			    const struct callsite_frame **frame);

/* callsite_frame_of_stack under maps snapshot SNAPSHOT (callsite_snapshot_at of the event's time). */
int callsite_frame_of_stack_in(struct callsite_table *table, size_t proc, const struct fl_stack *stack,
			       uint32_t snapshot, const struct callsite_frame **frame);

/* Interns a location (function must not be NULL; the strings must outlive the table). Its id, or
 * FL_NONE when memory runs out. */
uint32_t callsite_intern(struct callsite_table *table, const char *function, const char *file, unsigned line,
			 const char *binary, bool symbolized);

/* The location of FRAME (its function, or its label). FL_NONE when memory runs out. */
uint32_t callsite_intern_frame(struct callsite_table *table, const struct callsite_frame *frame);

/* The function-level location of LOC: same function and binary, no file or line. */
uint32_t callsite_function_of(struct callsite_table *table, uint32_t loc);

/* Location id → location. */
const struct callsite_loc *callsite_loc(const struct callsite_table *table, uint32_t loc);

/* The symbolizer's counters (distinct PCs, binaries, ...). */
void callsite_sym_stats(const struct callsite_table *table, struct sym_stats *out);

#endif
