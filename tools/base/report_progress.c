/* report_progress.c: the progress line of report_progress.h — a display thread that wakes ten times a
 * second and, past the first second (FAULTLINE_PROGRESS_AFTER seconds when set), rewrites one line
 * on stderr from the worker's counters. */
#include "report_progress.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROGRESS_DELAY_S 1.0
#define PROGRESS_PERIOD_NS 100000000L

static double since(const struct timespec *start)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

double report_progress_elapsed(const struct report_progress *p)
{
	return since(&p->start);
}

static void show(struct report_progress *p)
{
	const char *phase = atomic_load_explicit(&p->phase, memory_order_relaxed);
	uint64_t done = atomic_load_explicit(&p->done, memory_order_relaxed);
	uint64_t total = atomic_load_explicit(&p->total, memory_order_relaxed);
	char line[256];

	if (total > 0)
		snprintf(line, sizeof(line), "\r\033[Kfaultline %s: %s %3u%% (%" PRIu64 "/%" PRIu64 ", %.1f s)",
			 p->verb, phase ? phase : "", (unsigned)(done >= total ? 100 : done * 100 / total), done,
			 total, since(&p->start));
	else
		snprintf(line, sizeof(line), "\r\033[Kfaultline %s: %s (%.1f s)", p->verb, phase ? phase : "",
			 since(&p->start));
	fputs(line, stderr);
	fflush(stderr);
	p->shown = true;
}

static void *display(void *arg)
{
	struct report_progress *p = arg;
	struct timespec deadline;

	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		clock_gettime(CLOCK_MONOTONIC, &deadline);
		deadline.tv_nsec += PROGRESS_PERIOD_NS;
		if (deadline.tv_nsec >= 1000000000L) {
			deadline.tv_sec++;
			deadline.tv_nsec -= 1000000000L;
		}
		int rc = 0;
		while (!p->stop && rc != ETIMEDOUT)
			rc = pthread_cond_timedwait(&p->wake, &p->lock, &deadline);
		if (!p->stop && since(&p->start) >= p->delay_s)
			show(p);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

void report_progress_start(struct report_progress *p, const char *verb, bool enabled)
{
	pthread_condattr_t attr;

	memset(p, 0, sizeof(*p));
	p->verb = verb;
	p->delay_s = PROGRESS_DELAY_S;
	const char *after = getenv("FAULTLINE_PROGRESS_AFTER");
	char *end;
	double value = after ? strtod(after, &end) : -1;
	if (after && end != after && *end == '\0' && value >= 0 && value <= 3600)
		p->delay_s = value;
	clock_gettime(CLOCK_MONOTONIC, &p->start);
	if (!enabled || !isatty(STDERR_FILENO))
		return;
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&p->wake, &attr);
	pthread_condattr_destroy(&attr);
	p->running = pthread_create(&p->thread, NULL, display, p) == 0;
	if (!p->running) {
		pthread_cond_destroy(&p->wake);
		pthread_mutex_destroy(&p->lock);
	}
}

void report_progress_phase(struct report_progress *p, const char *phase, uint64_t total)
{
	atomic_store_explicit(&p->phase, phase, memory_order_relaxed);
	atomic_store_explicit(&p->total, total, memory_order_relaxed);
	atomic_store_explicit(&p->done, 0, memory_order_relaxed);
}

void report_progress_stop(struct report_progress *p)
{
	if (!p->running)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	p->running = false;
	if (p->shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->lock);
}
