/* thrash_warn.h: one note on stderr when a program mostly waits for refaults (thrash_warn.c). */
#ifndef FL_THRASH_WARN_H
#define FL_THRASH_WARN_H

struct fl_runtime;

void fl_thrash_check(struct fl_runtime *rt); /* handler 0, on its flush cadence */

#endif
