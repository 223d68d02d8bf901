/* report_progress.h: a progress line on stderr for verbs that may take a while (report, export).
 *
 * Shown only when stderr is a terminal and only once the work has taken more than a second (the
 * environment's FAULTLINE_PROGRESS_AFTER, in seconds, when set: 0 shows it at once), then
 * refreshed ten times a second by a helper thread: "faultline report: attributing faults 41% (...)".
 * The worker only stores counters (relaxed atomics); it never waits on the display. The line is
 * erased when the progress stops, before anything else is printed on stderr. */
#ifndef FAULTLINE_TOOLS_REPORT_PROGRESS_H
#define FAULTLINE_TOOLS_REPORT_PROGRESS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

struct report_progress {
	const char *verb;              /* "report" */
	bool running;                  /* the display thread was started */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop;                     /* under lock */
	bool shown;                    /* the line was printed (display thread only, then joined) */
	struct timespec start;         /* CLOCK_MONOTONIC */
	double delay_s;                /* shown once the work took this long (FAULTLINE_PROGRESS_AFTER) */
	_Atomic(const char *) phase;   /* what is being done ("reading the recording") */
	_Atomic uint64_t done, total;  /* total 0: no count shown */
};

/* Starts the display (when stderr is a terminal and ENABLED). Never fails: without a thread there is
 * simply no progress line. */
void report_progress_start(struct report_progress *p, const char *verb, bool enabled);

/* Begins a phase of TOTAL steps (0: unknown). PHASE must be a string literal or outlive the progress. */
void report_progress_phase(struct report_progress *p, const char *phase, uint64_t total);

/* Steps done in the current phase. */
static inline void report_progress_set(struct report_progress *p, uint64_t done)
{
	atomic_store_explicit(&p->done, done, memory_order_relaxed);
}

/* Stops the display and erases its line. Safe to call twice. */
void report_progress_stop(struct report_progress *p);

/* Seconds since report_progress_start. */
double report_progress_elapsed(const struct report_progress *p);

#endif
