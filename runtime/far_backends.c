/* far_backends.c: the table of far-store backends, and the one lookup of a FAULTLINE_FAR spec
 * in it. A new backend adds a file of its own (far_store.h's interface) and one line here. */
#include "far_backends.h"
#include "far_store.h"

#include <string.h>

extern const struct fl_far_store fl_far_mem;
extern const struct fl_far_store fl_far_file;
extern const struct fl_far_store fl_far_memcached;

static const struct fl_far_store *const backends[] = {
	&fl_far_mem,
	&fl_far_file,
	&fl_far_memcached,
};

const struct fl_far_store *fl_far_store_find(const char *spec)
{
	if (!spec || !*spec)
		spec = "mem";
	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++) {
		size_t n = strlen(backends[i]->name);
		if (strncmp(spec, backends[i]->name, n) == 0 && (spec[n] == '\0' || spec[n] == ':'))
			return backends[i];
	}
	return NULL;
}
