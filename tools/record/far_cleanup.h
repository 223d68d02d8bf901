/* far_cleanup.h: deleting a recording's items from its memcached far-store servers once every
 * traced process has exited (far_cleanup.c). */
#ifndef FAULTLINE_TOOLS_FAR_CLEANUP_H
#define FAULTLINE_TOOLS_FAR_CLEANUP_H

#include <stddef.h>
#include <stdint.h>

#define FAR_CLEANUP_MAX_SERVERS 16

/* SPEC is the runtime's resolved spec ("memcached:ADDR:PORT[,...]", far_spec_check); DIR the
 * recording. Deletes every item stored under a key prefix listed in DIR/<process>/far_keys;
 * deleted[i] is how many on the i-th server of SPEC, *nservers how many servers SPEC names. 0, or
 * -1 with a one-line reason in err (a server that cannot list its keys, or refused a delete). */
int far_cleanup_memcached(const char *spec, const char *dir, uint64_t deleted[FAR_CLEANUP_MAX_SERVERS],
			  unsigned *nservers, char *err, size_t errlen);

#endif
