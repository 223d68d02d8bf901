/* readers.h: how many handlers read the userfaultfd (readers.c), run by handler 0 only. */
#ifndef FL_READERS_H
#define FL_READERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fl_runtime;

void fl_readers_init(struct fl_runtime *rt);
bool fl_readers_step(struct fl_runtime *rt); /* true when the handlers not reading must read again */

#endif
