/* fill_ahead.h: fresh pages zero-filled ahead of a first-touch write (fill_ahead.c,
 * record --fill-ahead N). Above evict (it makes room as a fault does), below fault.c. */
#ifndef FL_FILL_AHEAD_H
#define FL_FILL_AHEAD_H

#include "context.h"

#define FL_FILL_AHEAD_MAX 64 /* pages filled after one fault at most (one UFFDIO_COPY) */

/* While the first-touch write fault on PAGE is served (PAGE locked, not yet installed): when
 * the program walks forward over fresh memory (see fill_ahead.c), installs zeros in the free
 * pages after it (never touched, or given back), up to rt->fill_ahead and below page END (the
 * end of the object the fault hit; 0: none known, no fill), in one system call, without a
 * fault record. Handler threads only. */
void fl_fill_ahead(struct fl_handler *h, size_t page, size_t end);

int fl_fill_ahead_setup(struct fl_runtime *rt); /* the per-page marks, when --fill-ahead is on */

/* The kind of a MISSING fault on PAGE (locked) whose content is at CONTENT (NULL: not read):
 * a page filled ahead, evicted before the program wrote it and faulted on now still holding
 * zeros, is first touched by this fault, not refaulted (nor soft-faulted). Clears the mark. */
uint8_t fl_fill_ahead_kind(struct fl_handler *h, size_t page, uint8_t kind, const void *content);

#endif
