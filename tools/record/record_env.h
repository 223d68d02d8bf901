/* record_env.h: the traced program's environment (record_env.c): the FAULTLINE_* variables of
 * inc/faultline/env.h and LD_PRELOAD, built before the fork and installed in the child. */
#ifndef FAULTLINE_TOOLS_RECORD_ENV_H
#define FAULTLINE_TOOLS_RECORD_ENV_H

#include <stddef.h>

#include "record_options.h"

#define CHILD_ENV_MAX 32 /* at least the child_env_add calls of child_env_build (22 today) */

/* Variables set in the child just before exec; values owned here. */
struct child_env {
	const char *names[CHILD_ENV_MAX];
	char *values[CHILD_ENV_MAX];
	size_t count;
	const char *unset;          /* a variable to remove, or NULL */
};

int child_env_build(const struct record_options *o, const char *dir, const char *library, struct child_env *env);
int child_env_apply(const struct child_env *env); /* in the child: installs the environment */
void child_env_free(struct child_env *env);

/* LD_PRELOAD for the child: library appended to existing ("old:lib"), or library alone
 * when existing is NULL or empty, or existing unchanged when it already lists library.
 * Returns a new string (free it), or NULL when out of memory. */
char *record_ld_preload(const char *existing, const char *library);

#endif
