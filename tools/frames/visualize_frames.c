/* visualize_frames.c: stacks → named source frames (visualize_frames.h). */
#include "visualize_frames.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Pseudo names "[libfoo.so]" are built once per binary and kept in a list (few binaries). */
struct pseudo_name {
	char *binary;
	char *name;
};

struct vf_namer {
	struct callsite_table *table;
	const struct fl_recording *rec;
	struct vf_options opts;
	struct vf_frame *frames;
	size_t cap;
	struct pseudo_name *pseudo;
	size_t npseudo;
};

struct vf_namer *vf_namer_new(struct callsite_table *table, const struct fl_recording *rec,
			      const struct vf_options *opts)
{
	struct vf_namer *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->table = table;
	n->rec = rec;
	if (opts)
		n->opts = *opts;
	return n;
}

void vf_namer_free(struct vf_namer *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->npseudo; i++) {
		free(n->pseudo[i].binary);
		free(n->pseudo[i].name);
	}
	free(n->pseudo);
	free(n->frames);
	free(n);
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

bool vf_is_runtime_binary(const char *binary)
{
	return binary && strncmp(base_name(binary), "libfaultline", 12) == 0;
}

/* "[BASENAME]" for BINARY, kept for the namer's lifetime; NULL on ENOMEM. */
static const char *pseudo_name(struct vf_namer *n, const char *binary)
{
	struct pseudo_name *grown;
	char *name;

	for (size_t i = 0; i < n->npseudo; i++) {
		if (strcmp(n->pseudo[i].binary, binary) == 0)
			return n->pseudo[i].name;
	}
	grown = realloc(n->pseudo, (n->npseudo + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	n->pseudo = grown;
	if (asprintf(&name, "[%s]", base_name(binary)) < 0)
		return NULL;
	n->pseudo[n->npseudo].binary = strdup(binary);
	if (!n->pseudo[n->npseudo].binary) {
		free(name);
		return NULL;
	}
	n->pseudo[n->npseudo].name = name;
	return n->pseudo[n->npseudo++].name;
}

static int push(struct vf_namer *n, size_t *len, const struct vf_frame *f)
{
	if (*len == n->cap) {
		size_t cap = n->cap ? n->cap * 2 : 64;
		struct vf_frame *frames = realloc(n->frames, cap * sizeof(*frames));
		if (!frames)
			return -1;
		n->frames = frames;
		n->cap = cap;
	}
	n->frames[(*len)++] = *f;
	return 0;
}

/* Whether BINARY is the traced executable. */
static bool is_program(const struct fl_process *proc, const char *binary)
{
	return binary && proc->exe && *proc->exe && strcmp(binary, proc->exe) == 0;
}

int vf_stack_frames(struct vf_namer *n, const struct fl_process *proc, const struct fl_stack *stack,
		    bool root_first, const struct vf_frame **out, size_t *nout)
{
	uint32_t snap = stack ? callsite_stack_snapshot(n->table, (size_t)(proc - n->rec->procs), stack) : 0;

	if (snap == FL_NONE) {
		errno = ENOMEM;
		return -1;
	}
	return vf_stack_frames_in(n, proc, stack, snap, root_first, out, nout);
}

int vf_stack_frames_in(struct vf_namer *n, const struct fl_process *proc, const struct fl_stack *stack,
		       uint32_t snapshot, bool root_first, const struct vf_frame **out, size_t *nout)
{
	const struct callsite_frame *cf = NULL;
	size_t len = 0, ncf = 0, callsite;

	if (stack && callsite_expand_in(n->table, (size_t)(proc - n->rec->procs), stack, snapshot, &cf, &ncf,
					&callsite) < 0)
		goto nomem;
	for (size_t k = 0; k < ncf; k++) {
		const struct callsite_frame *sf = &cf[k];
		struct vf_frame f;

		if (!n->opts.keep_runtime && vf_is_runtime_binary(sf->binary))
			continue;
		enum vf_origin origin = is_program(proc, sf->binary) ? VF_ORIGIN_PROGRAM : VF_ORIGIN_LIBRARY;
		if (sf->unknown) {
			/* Nothing but the label: name the frame after its binary. */
			const char *name = "[unknown]";
			if (sf->binary && !(name = pseudo_name(n, sf->binary)))
				goto nomem;
			/* Unknown code calling unknown code of the same binary: one frame (no name to tell
			 * the levels apart; perf's [unknown] runs read the same). */
			if (len > 0 && n->frames[len - 1].origin == VF_ORIGIN_PSEUDO && n->frames[len - 1].function == name)
				continue;
			f = (struct vf_frame){ name, sf->label, 0, false, VF_ORIGIN_PSEUDO };
			if (push(n, &len, &f) < 0)
				goto nomem;
			continue;
		}
		const char *file = sf->file;
		const char *function = sf->function;
		if (!function) {
			if (!(function = sf->binary ? pseudo_name(n, sf->binary) : "[unknown]"))
				goto nomem;
		}
		if (!file && sf->symtab_only && sf->binary)
			file = base_name(sf->binary);
		f = (struct vf_frame){ function, file, file == sf->file ? sf->line : 0, sf->inlined,
				       sf->function ? origin : VF_ORIGIN_PSEUDO };
		if (push(n, &len, &f) < 0)
			goto nomem;
	}
	if (root_first) {
		for (size_t i = 0; i < len / 2; i++) {
			struct vf_frame t = n->frames[i];
			n->frames[i] = n->frames[len - 1 - i];
			n->frames[len - 1 - i] = t;
		}
	}
	*out = n->frames;
	*nout = len;
	return 0;
nomem:
	errno = ENOMEM;
	return -1;
}
