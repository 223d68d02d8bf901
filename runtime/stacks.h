/* stacks.h: the table of distinct stacks and their capture (stacks.c). */
#ifndef FL_STACKS_H
#define FL_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fl_runtime;
struct fl_stream;

int fl_stacks_setup(struct fl_runtime *rt);
uint32_t fl_stack_intern(struct fl_stream *defs, const uint64_t *frames, unsigned n, uint16_t flags, bool may_wait);
unsigned fl_stack_capture_here(uint64_t *frames, unsigned max);   /* callers of the runtime/shim */
void fl_stacks_after_fork(void);

#endif
