/* readers.c: how many fault handlers read the userfaultfd, chosen by measuring.
 *
 * Every handler blocks in read(2) on the one userfaultfd, and the kernel wakes every waiting
 * handler for each message (handler.c). With one faulting thread that herd pays for itself: the
 * handler of the faulting thread's vCPU serves it, without a wake-up across vCPUs. With threads
 * faulting on every vCPU it does not: each fault wakes a handler on a vCPU that runs a program
 * thread (a preemption, a reschedule IPI) for nothing, and two handlers serving at once make each
 * eviction's TLB shootdown reach a busy vCPU. Two threads scattering writes at a fifth of their
 * heap (bench/csr_scatter 14 16 2 at -L 1M) took 70 µs of process CPU per fault with two
 * handlers reading, 44 µs with one; a single-threaded program's faults (bench/dict_sort, a fill)
 * cost 5-10 % more CPU and 25 % more wall with one.
 *
 * So the runtime measures both, while the program runs. Handler 0 (which always reads) runs the
 * choice between its batches: after WARMUP_MS, a window of at least WINDOW_MS with every handler
 * reading, one with handler 0 alone, one with all again. A window's cost is the process's CPU
 * time and the wall time per message served in it. One reader is kept when it cost at most
 * ONE_READER_CPU_SHARE of the CPU of the two windows around it, and no more wall time; else all.
 * The choice is kept KEEP_MS, twice as long each time the same is made again (up to
 * KEEP_MAX_MS), then measured anew: a program's phases change. While one reader is kept, every
 * window is measured as well, and all read again at once when one costs ONE_READER_GIVE_UP times
 * what all did (a single window is noisier than the choice's three): a single faulting thread
 * that the scheduler moved off handler 0's CPU would otherwise pay a wake-up across CPUs per
 * fault for the rest of the keep (bench/dict_sort 100000 at -L 2M once took 59 s against 29). A
 * window of fewer than WINDOW_MIN_MESSAGES messages is extended up to WINDOW_MAX_MS; a program
 * that faults less keeps every handler reading (its time does not go to faults). Handlers not
 * reading sleep (handler.c) and are woken by the handler signal when all read again. The choice
 * is per process (a forked child measures its own). */
#include "readers.h"
#include "context.h"
#include "clock.h"

#include <stdint.h>
#include <time.h>

#define WARMUP_MS 200           /* every handler reads at first: start-up is not the program's cost */
#define WINDOW_MS 100
#define WINDOW_MAX_MS 1000
#define WINDOW_MIN_MESSAGES 500
#define KEEP_MS 2000              /* a choice is kept this long, ... */
#define KEEP_MAX_MS 16000         /* ... twice as long each time it is made again, up to this */
#define ONE_READER_CPU_SHARE 0.85 /* one reader must save this much CPU per message ... */
#define ONE_READER_WALL_SHARE 1.0 /* ... and take no more wall time per message */
#define ONE_READER_GIVE_UP 1.1    /* while kept, a window of one costing this much more than all did ends it */

static uint64_t process_cpu_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Messages the handlers have served so far (faults and write-protect messages). */
static uint64_t messages_served(const struct fl_runtime *rt)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < rt->nhandlers; i++) {
		const struct fl_handler_stats *s = &rt->handlers[i].stats;
		n += atomic_load_explicit(&s->faults_total, memory_order_relaxed) +
		     atomic_load_explicit(&s->wp_faults, memory_order_relaxed);
	}
	return n;
}

static void start_phase(struct fl_runtime *rt, enum fl_readers_phase phase, uint64_t now)
{
	struct fl_readers *r = &rt->readers;
	r->phase = phase;
	r->window_start_ns = now;
	r->window_cpu_ns = process_cpu_ns();
	r->window_messages = messages_served(rt);
	atomic_store(&r->reading, phase == FL_READERS_TRY_ONE || phase == FL_READERS_KEEP_ONE ? 1u : rt->nhandlers);
}

void fl_readers_init(struct fl_runtime *rt)
{
	struct fl_readers *r = &rt->readers;
	atomic_store(&r->chose_one, 0);
	atomic_store(&r->chose_all, 0);
	atomic_store(&r->gave_up_one, 0);
	r->last_choice = FL_READERS_TRY_ALL; /* none yet */
	start_phase(rt, FL_READERS_KEEP_ALL, fl_now_ns());
	r->keep_start_ns = r->window_start_ns;
	r->keep_ns = rt->nhandlers > 1 ? (uint64_t)WARMUP_MS * 1000000 : UINT64_MAX;
}

/* The cost of the measuring window that ends now; false while it must go on (too short, or
 * too few messages yet). A window of too few messages has no cost (cpu 0). */
static bool window_cost(struct fl_runtime *rt, uint64_t now, struct fl_readers_cost *cost)
{
	struct fl_readers *r = &rt->readers;
	uint64_t age = now - r->window_start_ns;
	if (age < (uint64_t)WINDOW_MS * 1000000)
		return false;
	uint64_t messages = messages_served(rt) - r->window_messages;
	if (messages < WINDOW_MIN_MESSAGES && age < (uint64_t)WINDOW_MAX_MS * 1000000)
		return false;
	cost->cpu = cost->wall = 0;
	if (messages >= WINDOW_MIN_MESSAGES) {
		cost->cpu = (double)(process_cpu_ns() - r->window_cpu_ns) / (double)messages;
		cost->wall = (double)age / (double)messages;
	}
	return true;
}

/* After the windows all, one, all: one reader is kept when it was cheaper than the two around
 * it (their mean is kept in cost_all: what one reader is held to while it is kept). */
static bool one_reader_cheaper(struct fl_readers *r, const struct fl_readers_cost *all_again)
{
	struct fl_readers_cost *all = &r->cost_all;
	const struct fl_readers_cost *one = &r->cost_one;
	if (all->cpu == 0 || one->cpu == 0 || all_again->cpu == 0)
		return false;
	all->cpu = (all->cpu + all_again->cpu) / 2;
	all->wall = (all->wall + all_again->wall) / 2;
	return one->cpu <= ONE_READER_CPU_SHARE * all->cpu && one->wall <= ONE_READER_WALL_SHARE * all->wall;
}

/* While one reader is kept, each window is measured too: when it costs more than all did (the
 * faulting thread moved away from handler 0's CPU, the program's phase changed), all read again
 * at once, and are measured anew. */
static bool one_reader_still_cheaper(const struct fl_readers *r, const struct fl_readers_cost *now)
{
	return now->cpu > 0 && now->cpu <= ONE_READER_GIVE_UP * r->cost_all.cpu &&
	       now->wall <= ONE_READER_GIVE_UP * r->cost_all.wall;
}

bool fl_readers_step(struct fl_runtime *rt)
{
	struct fl_readers *r = &rt->readers;
	uint64_t now = fl_now_ns();
	struct fl_readers_cost cost;

	switch (r->phase) {
	case FL_READERS_TRY_ALL:
		if (!window_cost(rt, now, &cost))
			return false;
		if (cost.cpu == 0) { /* few faults: not worth measuring */
			r->keep_ns = (uint64_t)KEEP_MS * 1000000;
			r->last_choice = FL_READERS_KEEP_ALL;
			start_phase(rt, FL_READERS_KEEP_ALL, now);
			r->keep_start_ns = now;
			return false;
		}
		r->cost_all = cost;
		start_phase(rt, FL_READERS_TRY_ONE, now);
		return false;
	case FL_READERS_TRY_ONE:
		if (!window_cost(rt, now, &cost))
			return false;
		r->cost_one = cost;
		start_phase(rt, FL_READERS_TRY_ALL_AGAIN, now);
		return true;
	case FL_READERS_TRY_ALL_AGAIN:
		if (!window_cost(rt, now, &cost))
			return false;
		enum fl_readers_phase keep = one_reader_cheaper(r, &cost) ? FL_READERS_KEEP_ONE : FL_READERS_KEEP_ALL;
		atomic_fetch_add(keep == FL_READERS_KEEP_ONE ? &r->chose_one : &r->chose_all, 1);
		/* the same choice again: kept twice as long (up to KEEP_MAX_MS) */
		if (keep == r->last_choice && r->keep_ns < (uint64_t)KEEP_MAX_MS * 1000000)
			r->keep_ns *= 2;
		else if (keep != r->last_choice)
			r->keep_ns = (uint64_t)KEEP_MS * 1000000;
		r->last_choice = keep;
		start_phase(rt, keep, now);
		r->keep_start_ns = now;
		return false;
	case FL_READERS_KEEP_ONE:
		if (!window_cost(rt, now, &cost))
			return false;
		if (!one_reader_still_cheaper(r, &cost)) {
			atomic_fetch_add(&r->gave_up_one, 1);
			r->last_choice = FL_READERS_TRY_ALL; /* measured anew, kept KEEP_MS */
			start_phase(rt, FL_READERS_TRY_ALL, now);
			return true;
		}
		if (now - r->keep_start_ns >= r->keep_ns) {
			start_phase(rt, FL_READERS_TRY_ALL, now);
			return true;
		}
		start_phase(rt, FL_READERS_KEEP_ONE, now); /* the next window */
		return false;
	case FL_READERS_KEEP_ALL:
		if (now - r->keep_start_ns >= r->keep_ns)
			start_phase(rt, FL_READERS_TRY_ALL, now);
		return false;
	}
	return false;
}
