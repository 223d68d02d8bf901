/* record_env.c: the traced program's environment: the FAULTLINE_* contract of inc/faultline/env.h
 * and LD_PRELOAD (record_ld_preload). */
#include "record_env.h"
#include "record_internal.h"

#include <stdarg.h>
#include <stdlib.h>

#include "cli.h"
#include "faultline/env.h"
#include "faultline/pmu_events.h"

/* ---------------------------------------------------------------------------------------
 * 4. The child's environment (inc/faultline/env.h)
 * ------------------------------------------------------------------------------------- */

static int child_env_add(struct child_env *env, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int child_env_add(struct child_env *env, const char *name, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (env->count == CHILD_ENV_MAX)
		return -1;
	va_start(ap, fmt);
	n = vasprintf(&env->values[env->count], fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	env->names[env->count++] = name;
	return 0;
}

void child_env_free(struct child_env *env)
{
	for (size_t i = 0; i < env->count; i++)
		free(env->values[i]);
	env->count = 0;
}

/* True when the ':'/' '-separated list holds item. */
static int list_contains(const char *list, const char *item)
{
	size_t len = strlen(item);

	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ": ");

		if (n == len && strncmp(p, item, len) == 0)
			return 1;
		p += n;
		if (*p)
			p++;
	}
	return 0;
}

char *record_ld_preload(const char *existing, const char *library)
{
	char *value;

	if (existing == NULL || *existing == '\0')
		return strdup(library);
	if (list_contains(existing, library))
		return strdup(existing);
	if (asprintf(&value, "%s:%s", existing, library) < 0)
		return NULL;
	return value;
}

int child_env_build(const struct record_options *o, const char *dir, const char *library,
			   struct child_env *env)
{
	char *preload = record_ld_preload(getenv("LD_PRELOAD"), library);
	int rc = 0;

	memset(env, 0, sizeof(*env));
	if (preload == NULL)
		return -1;
	rc |= child_env_add(env, "LD_PRELOAD", "%s", preload);
	free(preload);
	rc |= child_env_add(env, FL_ENV_DIR, "%s", dir);
	rc |= child_env_add(env, FL_ENV_LOCAL_BYTES, "%llu", (unsigned long long)o->local_bytes);
	rc |= child_env_add(env, FL_ENV_MAX_BYTES, "%llu", (unsigned long long)o->max_bytes);
	rc |= child_env_add(env, FL_ENV_HANDLERS, "%u", o->handlers);
	rc |= child_env_add(env, FL_ENV_POLICY, "%s", o->policy);
	rc |= child_env_add(env, FL_ENV_STACK_DEPTH, "%u", o->stack_depth);
	rc |= child_env_add(env, FL_ENV_SAMPLE, "%u", o->sample);
	rc |= child_env_add(env, FL_ENV_ALLOC_SAMPLE, "%u", o->alloc_sample ? o->alloc_sample : o->sample);
	rc |= child_env_add(env, FL_ENV_ALLOC_LOG, "%s", o->alloc_log ? o->alloc_log : "sampled");
	if (o->alloc_sample_bytes)
		rc |= child_env_add(env, FL_ENV_ALLOC_SAMPLE_BYTES, "%llu", (unsigned long long)o->alloc_sample_bytes);
	rc |= child_env_add(env, FL_ENV_FAR, "%s", o->far_spec);
	rc |= child_env_add(env, FL_ENV_FAR_KEEP, "%s", o->keep_far ? o->keep_far : "");
	rc |= child_env_add(env, FL_ENV_FAR_LATENCY_NS, "%llu", (unsigned long long)o->far_latency_ns);
	rc |= child_env_add(env, FL_ENV_FAR_BANDWIDTH, "%llu", (unsigned long long)o->far_bandwidth);
	rc |= child_env_add(env, FL_ENV_PREFETCH, "%u", o->prefetch);
	rc |= child_env_add(env, FL_ENV_FILL_AHEAD, "%u", o->fill_ahead);
	rc |= child_env_add(env, FL_ENV_TIMELINE_MS, "%u", o->timeline_ms);
	rc |= child_env_add(env, FL_ENV_TIMELINE_EVERY, "%u", o->timeline_every);
	rc |= child_env_add(env, FL_ENV_PROBE_MRC, "%u", o->mrc);
	rc |= child_env_add(env, FL_ENV_PROBE_MRC_GAP, "%u", o->mrc_gap);
	rc |= child_env_add(env, FL_ENV_PROBE_MRC_BUDGET, "%u", o->mrc_budget);
	rc |= child_env_add(env, FL_ENV_PROBE_MRC_STACKS, "%u", o->mrc_stacks ? 1u : 0u);
	rc |= child_env_add(env, FL_ENV_PROBE_ACCESS, "%u", o->sample_accesses);
	if (o->quiet && !getenv("FAULTLINE_THRASH_WARN_AFTER")) /* -q: no runtime note either */
		rc |= child_env_add(env, "FAULTLINE_THRASH_WARN_AFTER", "0");
	if (o->pmu != NULL)
		rc |= child_env_add(env, FL_ENV_PMU, "%s", o->pmu);
	else
		env->unset = FL_ENV_PMU;   /* settings come from options, not from a stale environment */
	if (rc != 0) {
		child_env_free(env);
		return -1;
	}
	return 0;
}

/* In the child: installs the environment. */
int child_env_apply(const struct child_env *env)
{
	for (size_t i = 0; i < env->count; i++) {
		if (setenv(env->names[i], env->values[i], 1) < 0)
			return -1;
	}
	if (env->unset != NULL && unsetenv(env->unset) < 0)
		return -1;
	return 0;
}

