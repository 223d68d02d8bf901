/* fault_context.h: the faulting thread's side of a fault (fault_context.c): the stack signal
 * and its handler; what the shim may call of it is in runtime_api.h. */
#ifndef FL_FAULT_CONTEXT_H
#define FL_FAULT_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fl_runtime;

int fl_fault_context_setup(struct fl_runtime *rt);
bool fl_fault_context_request(struct fl_runtime *rt, uint32_t tid, uint32_t seq);

#endif
