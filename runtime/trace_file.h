/* trace_file.h: creating the trace directory and its files (trace_file.c). */
#ifndef FL_TRACE_FILE_H
#define FL_TRACE_FILE_H

#include <stdint.h>

struct fl_runtime;

/* Creates DIR/<pid> (or DIR/<pid>.N when this pid already has one, after an exec) into rt->dir. */
int fl_trace_make_dir(struct fl_runtime *rt, const char *top);
/* Creates NAME in rt->dir (O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | EXTRA_FLAGS); the
 * descriptor, or -1 after saying why. */
int fl_trace_create_file(const struct fl_runtime *rt, const char *name, int extra_flags);
/* Creates a binary trace file and writes its header; returns the descriptor or -1. */
int fl_trace_open_binary(struct fl_runtime *rt, const char *name, uint32_t kind, uint32_t record_size,
			 int append);
/* The same, O_APPEND: the trace's record files, and the timeline's. */
int fl_trace_open_file(struct fl_runtime *rt, const char *name, uint32_t kind, uint32_t record_size);

#endif
