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
	struct symbolizer *sym;
	struct vf_options opts;
	struct vf_frame *frames;
	size_t cap;
	struct pseudo_name *pseudo;
	size_t npseudo;
};

struct vf_namer *vf_namer_new(struct symbolizer *sym, const struct vf_options *opts)
{
	struct vf_namer *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->sym = sym;
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
		    uint64_t time_ns, bool root_first, const struct vf_frame **out, size_t *nout)
{
	const struct fl_maps_snapshot *snap = fl_process_maps_at(proc, time_ns);
	static const struct maps no_maps;
	const struct maps *maps = snap ? snap->maps : &no_maps;
	size_t len = 0;

	for (uint32_t i = 0; stack && i < stack->nframes; i++) {
		bool is_return = !(i == 0 && (stack->flags & FL_STACK_EXACT_PC));
		const struct sym_result *r = symbolizer_lookup(n->sym, maps, stack->frames[i], is_return);
		enum vf_origin origin;
		struct vf_frame f;

		if (!r)
			goto nomem;
		if (!n->opts.keep_runtime && vf_is_runtime_binary(r->binary))
			continue;
		origin = is_program(proc, r->binary) ? VF_ORIGIN_PROGRAM : VF_ORIGIN_LIBRARY;
		if (r->nframes == 0) {
			/* Nothing but the label: name the frame after its binary. */
			const char *name = "[unknown]";
			if (r->binary && !(name = pseudo_name(n, r->binary)))
				goto nomem;
			/* Unknown code calling unknown code of the same binary: one frame (no name to tell
			 * the levels apart; perf's [unknown] runs read the same). */
			if (len > 0 && n->frames[len - 1].origin == VF_ORIGIN_PSEUDO && n->frames[len - 1].function == name)
				continue;
			f = (struct vf_frame){ name, r->label, 0, false, VF_ORIGIN_PSEUDO };
			if (push(n, &len, &f) < 0)
				goto nomem;
			continue;
		}
		for (unsigned j = 0; j < r->nframes; j++) {
			const struct sym_frame *sf = &r->frames[j];
			const char *file = sf->file;
			const char *function = sf->function;
			if (!function) {
				if (!(function = r->binary ? pseudo_name(n, r->binary) : "[unknown]"))
					goto nomem;
			}
			if (!file && r->source == SYM_SOURCE_SYMTAB && r->binary)
				file = base_name(r->binary);
			f = (struct vf_frame){ function, file, file == sf->file ? sf->line : 0, j + 1 < r->nframes,
					       sf->function ? origin : VF_ORIGIN_PSEUDO };
			if (push(n, &len, &f) < 0)
				goto nomem;
		}
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
