/* rap_online.h: RAP trees of the faults (rap_online.c), written to ranges.rap at shutdown. */
#ifndef FL_RAP_ONLINE_H
#define FL_RAP_ONLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fl_runtime;
struct fl_handler;

int fl_rap_online_setup(struct fl_runtime *rt);         /* always 0: the tree is optional */
void fl_rap_online_after_fork(struct fl_runtime *rt);   /* child: trees start empty */
void fl_rap_online_add(struct fl_handler *h, uint64_t addr);  /* fault path: no lock, no malloc */
void fl_rap_online_write(struct fl_runtime *rt);        /* merge the trees, write ranges.rap */

#endif
