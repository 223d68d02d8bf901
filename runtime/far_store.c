/* far_store.c: the list of far-store backends and the choice among them (see far_store.h). */
#include "far_store.h"

#include <string.h>

static const struct fl_far_store *const backends[] = {
	&fl_far_mem,
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
