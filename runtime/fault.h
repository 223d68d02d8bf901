/* fault.h: serving a batch of fault messages (fault.c), the fault path. */
#ifndef FL_FAULT_H
#define FL_FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fl_handler;

void fl_fault_serve_batch(struct fl_handler *h, const void *msgs, int n);

#endif
