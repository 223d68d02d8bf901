/* visualize_frames.h: a recorded call stack as the source-level frames people read — function,
 * file, line — with inlined functions expanded, the runtime's own frames (libfaultline.so) left
 * out, and each frame marked as the program's code, a library's, or a pseudo frame.
 *
 * The frames themselves come from the one stack → frames → callsite resolver (callsite.h), the
 * one report, ranges and export use: the same maps snapshot (the one in force at the event's time,
 * vf_stack_frames_in), the same lookups (frame 0 an exact PC
 * when the stack says so, FL_STACK_EXACT_PC, every other frame a return address, PC - 1). This
 * module only names them for stack views (flame graphs), innermost first or root first.
 *
 * Names. A function the debug info or symbol table names keeps its (demangled) name. Otherwise the
 * frame is named after its binary, "[libfoo.so.1]" (so unknown code of one library merges into one
 * frame, as perf's "[unknown]" does per DSO; consecutive such frames of one binary become one), or
 * "[unknown]" when no mapping holds the address; its location then is the symbolizer's label
 * ("libfoo.so.1+0x1234"). A symbol-table-only frame's
 * location is its binary's name. */
#ifndef FAULTLINE_TOOLS_VISUALIZE_FRAMES_H
#define FAULTLINE_TOOLS_VISUALIZE_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "callsite.h"
#include "trace_reader.h"

enum vf_origin {
	VF_ORIGIN_PROGRAM = 0,  /* the traced executable (meta.json "exe") */
	VF_ORIGIN_LIBRARY,      /* any other mapped file, [vdso] */
	VF_ORIGIN_PSEUDO,       /* no function known */
};

struct vf_frame {
	const char *function;   /* never NULL */
	const char *file;       /* source file, binary name or label; NULL when none */
	unsigned line;          /* 0 when unknown */
	bool inlined;           /* inlined into the next outer frame */
	enum vf_origin origin;
};

/* How stacks are turned into frames. */
struct vf_options {
	bool keep_runtime;      /* keep libfaultline.so's frames (default: skip them) */
};

struct vf_namer;

/* A namer over the resolver TABLE of recording REC (neither owned; both must outlive the namer).
 * NULL on ENOMEM. */
struct vf_namer *vf_namer_new(struct callsite_table *table, const struct fl_recording *rec,
			      const struct vf_options *opts);
void vf_namer_free(struct vf_namer *namer);

/* The frames of STACK, a stack of PROC (one of the recording's processes). *OUT points to N frames
 * owned by the namer, valid until the next call;
 * ROOT_FIRST orders them from the outermost caller to the innermost frame, else the reverse.
 * N is 0 when every frame was the runtime's. Returns 0, or -1 on ENOMEM. Strings stay valid until
 * vf_namer_free and the symbolizer's free. */
int vf_stack_frames(struct vf_namer *namer, const struct fl_process *proc, const struct fl_stack *stack,
		    bool root_first, const struct vf_frame **out, size_t *n);

/* vf_stack_frames under maps snapshot SNAPSHOT of PROC (callsite_snapshot_at of the event's time),
 * where vf_stack_frames takes the snapshot of the stack's first use. */
int vf_stack_frames_in(struct vf_namer *namer, const struct fl_process *proc, const struct fl_stack *stack,
		       uint32_t snapshot, bool root_first, const struct vf_frame **out, size_t *n);

/* True when BINARY (a mapped file's path) is faultline's runtime library. */
bool vf_is_runtime_binary(const char *binary);

#endif
