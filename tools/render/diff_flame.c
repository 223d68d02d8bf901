/* diff_flame.c: the differential flame graph of `faultline diff`: both recordings' faults added to
 * one flame tree by their full stacks, A as the baseline (flame_add_base) and B as the counts, so the
 * SVG is B's flame graph coloured by growth over A (flamegraph.h's differential mode, as flamegraph.pl
 * draws difffolded.pl's output). Each distinct stack is named once (visualize_frames.h). */
#include "diff_render.h"

#include <stdlib.h>

#include "fault_stream.h"
#include "visualize_frames.h"

#define NO_STACK "[no stack]"

static enum flame_class class_of(enum vf_origin origin)
{
	return origin == VF_ORIGIN_PROGRAM ? FLAME_CLASS_CODE : origin == VF_ORIGIN_LIBRARY ? FLAME_CLASS_LIBRARY
											 : FLAME_CLASS_PSEUDO;
}

/* Adds COUNT faults of STACK (NULL: none) of process P. */
static int add_stack(struct flame *flame, struct vf_namer *namer, const struct fl_process *proc,
		     const struct fl_stack *stack, uint64_t count, bool base, struct flame_frame **frames, size_t *cap)
{
	const struct vf_frame *vf = NULL;
	size_t n = 0;

	if (stack && vf_stack_frames(namer, proc, stack, true, &vf, &n) < 0)
		return -1;
	if (n + 1 > *cap) {
		struct flame_frame *grown = realloc(*frames, (n + 64) * sizeof(*grown));
		if (!grown)
			return -1;
		*frames = grown;
		*cap = n + 64;
	}
	if (n == 0)
		(*frames)[n++] = (struct flame_frame){ NO_STACK, NULL, 0, FLAME_CLASS_PSEUDO };
	else
		for (size_t i = 0; i < n; i++)
			(*frames)[i] = (struct flame_frame){ vf[i].function, vf[i].file, vf[i].line, class_of(vf[i].origin) };
	return base ? flame_add_base(flame, *frames, n, count) : flame_add(flame, *frames, n, count);
}

int diff_flame_add(struct flame *flame, const struct report *r, unsigned kind, bool base)
{
	struct vf_options vo = { false };
	struct vf_namer *namer = vf_namer_new(r->callsites, r->rec, &vo);
	struct flame_frame *frames = NULL;
	size_t cap = 0;
	int rc = namer ? 0 : -1;

	for (size_t p = 0; rc == 0 && p < r->rec->nprocs; p++) {
		const struct fl_process *proc = &r->rec->procs[p];
		uint64_t *counts = calloc(proc->nstacks + 1, sizeof(*counts)); /* index 0: no stack */
		if (!counts) {
			rc = -1;
			break;
		}
		struct fl_fault_stream *fs;
		const struct fl_fault *f;
		char why[512];
		int got = -1;
		if (fl_fault_stream_open(proc, &fs, why, sizeof(why)) == 0) {
			while ((got = fl_fault_stream_next(fs, &f)) > 0) {
				if (kind && f->rec.kind != kind)
					continue;
				const struct fl_stack *s = fl_fault_stack(proc, f);
				counts[s ? (size_t)(s - proc->stacks) + 1 : 0]++;
			}
			fl_fault_stream_close(fs);
		}
		if (got < 0) /* a streamed file that cannot be read again */
			rc = -1;
		for (size_t si = 0; rc == 0 && si <= proc->nstacks; si++) {
			if (counts[si])
				rc = add_stack(flame, namer, proc, si ? &proc->stacks[si - 1] : NULL, counts[si], base, &frames, &cap);
		}
		free(counts);
	}
	free(frames);
	vf_namer_free(namer);
	return rc;
}
