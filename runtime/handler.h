/* handler.h: the fault handler threads (handler.c). */
#ifndef FL_HANDLER_H
#define FL_HANDLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fl_runtime;

int fl_handlers_start(struct fl_runtime *rt);
void fl_handlers_flush(struct fl_runtime *rt);

#endif
