/* far_backends.h: the far-store backends by name (far_backends.c), for runtime.c's start-up.
 * Above the backends (far_mem.c, far_file.c, far_memcached.c), which include far_store.h only. */
#ifndef FL_FAR_BACKENDS_H
#define FL_FAR_BACKENDS_H

struct fl_far_store;

/* The backend named by a FAULTLINE_FAR spec ("mem", "file:PATH", ...), or NULL. */
const struct fl_far_store *fl_far_store_find(const char *spec);

#endif
