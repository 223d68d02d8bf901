/* handler.c: the fault handler threads.
 *
 * Each handler blocks in read(2) on the shared userfaultfd (in blocking mode), reads up to
 * FL_MSG_BATCH messages at once and serves them (fault.c): one system call per wake-up, as
 * the minimal handler (bench/uffd_floor.c). Handlers are pinned one per CPU by default: on
 * this kind of VM a wake-up across vCPUs costs ~20 µs, so a fault served by the handler on the
 * faulting thread's vCPU costs ~8.5 µs against ~47 µs from the other (docs/design.md,
 * measured facts).
 *
 * Handlers block every signal but one, the handler signal: a real-time signal of the
 * runtime's (the highest free one below the stack signal), whose action does nothing and is
 * installed without SA_RESTART, so it ends a blocking read with EINTR. It comes
 *   - from a timer of each handler every FLUSH_PERIOD_MS: the handler writes out its buffered
 *     records (and handler 0 the application threads' streams), so a process killed with
 *     SIGKILL loses at most the last ~100 ms;
 *   - from fl_handlers_flush (exit, exec, fatal signals), sent again every few ms until the
 *     handler has answered, so a signal that arrives just before the read blocks is no loss.
 * The program's signals are never delivered to handlers.
 *
 * Every handler blocks on the userfaultfd, so every message wakes every handler (the kernel's
 * wait there is not exclusive): +1.2-1.7 µs per fault against the minimal handler (bench row
 * 1e). Tried and not kept: only the handlers of CPUs where faulting threads run wait there,
 * the others on a futex until a fault of their CPU's threads needs them. The first-touch loop
 * got 3-17 % faster, but fill and refault passes 7-16 % slower: with the other vCPU idle, the
 * scheduler moves the woken thread there 5-10x as often (docs/design.md). Whether more than one
 * handler should read at all is measured while the program runs (readers.c): the handlers beyond
 * rt->readers.reading sleep, in READER_SLEEP_MS naps cut short by the handler signal. */
#include "handler.h"
#include "thrash_warn.h"
#include "context.h"
#include "fault.h"
#include "live_objects.h"
#include "readers.h"
#include "stream.h"
#include "thread_slot.h"
#include "trace_writer.h"
#include "diag.h"
#include "clock.h"
#include "sys.h"
#include "uffd_compat.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define FLUSH_PERIOD_MS 100
#define FLUSH_RESEND_US 5000   /* fl_handlers_flush signals a handler that has not answered again */
#define FLUSH_WAIT_US 2000000  /* ... and waits for it at most this long */
#define READER_SLEEP_MS 100    /* a handler not reading looks again this often */
#define FIRST_HANDLER_WAIT_NS 30000000000ull /* serve_until_first_handler gives up after this */

/* The handler signal, picked once per process image (a forked child keeps its action). */
static int handler_signal;

int fl_handler_signal(void)
{
	return handler_signal;
}

static void on_handler_signal(int sig)
{
	(void)sig; /* its only purpose: ending the handler's blocking read */
}

/* The highest real-time signal below the stack signal that nobody handles; 0 if none. */
static int pick_handler_signal(struct fl_runtime *rt)
{
	for (int sig = SIGRTMAX - 1; sig > SIGRTMIN + 2; sig--) {
		struct sigaction cur;
		if (sig == rt->stack_signal)
			continue;
		if (fl_sys_sigaction(sig, NULL, &cur) == 0 && !(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_DFL)
			return sig;
	}
	return 0;
}

static int setup_handler_signal(struct fl_runtime *rt)
{
	struct sigaction sa;
	if (handler_signal)
		return 0;
	int sig = pick_handler_signal(rt);
	if (!sig) {
		fl_log("no free real-time signal for the fault handlers");
		return -1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_handler_signal;
	sa.sa_flags = 0; /* no SA_RESTART: the read ends with EINTR */
	sigemptyset(&sa.sa_mask);
	if (fl_sys_sigaction(sig, &sa, NULL) < 0) {
		fl_log_errno("sigaction(handler signal)", errno);
		return -1;
	}
	handler_signal = sig;
	return 0;
}

/* Every signal blocked but the handler signal (a handler's mask for good). */
static void block_all_but_handler_signal(void)
{
	sigset_t wake;
	fl_sys_block_all_signals();
	sigemptyset(&wake);
	sigaddset(&wake, handler_signal);
	if (syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &wake, NULL, _NSIG / 8) < 0)
		fl_log_errno("rt_sigprocmask(unblock the handler signal)", errno);
}

/* A timer that sends the handler signal to this thread every FLUSH_PERIOD_MS. Timers are not
 * inherited by a forked child (its handlers make their own) and end with exec. */
static void start_flush_timer(struct fl_handler *h)
{
	struct sigevent sev;
	int timer;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = handler_signal;
	sev._sigev_un._tid = h->tid;
	struct itimerspec every = {
		.it_interval = { 0, FLUSH_PERIOD_MS * 1000000L },
		.it_value = { 0, FLUSH_PERIOD_MS * 1000000L },
	};
	if (syscall(SYS_timer_create, CLOCK_MONOTONIC, &sev, &timer) < 0 ||
	    syscall(SYS_timer_settime, timer, 0, &every, NULL) < 0)
		fl_log_errno("timer_create(handler flush period)", errno);
}

static void serve_flush_request(struct fl_handler *h)
{
	uint64_t req = atomic_load(&h->flush_request);
	if (atomic_load(&h->flush_done) >= req)
		return;
	fl_trace_flush(h);
	atomic_store(&h->flush_done, req);
}

/* Every FLUSH_PERIOD_MS, handler 0 writes out what the application threads buffered (their
 * allocation records, and the stacks and contexts they took themselves) and a snapshot of the
 * per-site aggregates (the sites file), so a process killed
 * with SIGKILL keeps all but its last ~100 ms, as for fault records. Its own buffer goes out on
 * the same cadence (or when full). */
static void flush_thread_streams(struct fl_handler *h, bool now)
{
	static uint64_t last_ns;
	if (h->index != 0)
		return;
	uint64_t t = fl_now_ns();
	if (!now && t - last_ns < FLUSH_PERIOD_MS * 1000000ull)
		return;
	last_ns = t;
	fl_threads_flush_periodic();
	fl_sites_write_periodic(h->rt); /* the per-site aggregates too (live_objects.c) */
	fl_trace_flush(h);
	fl_thrash_check(h->rt);
}

/* The handler signal ended a read (or a pause): a flush request, or the period's tick. */
static void on_interrupt(struct fl_handler *h)
{
	serve_flush_request(h);
	if (h->nrecords)
		fl_trace_flush(h);
	flush_thread_streams(h, false);
}

static bool signal_handler(struct fl_runtime *rt, struct fl_handler *h);

/* Handler 0, between batches: the choice of how many handlers read (readers.c); wakes the
 * sleeping ones when all must read again. */
static void step_readers(struct fl_handler *h)
{
	struct fl_runtime *rt = h->rt;
	if (h->index != 0 || !fl_readers_step(rt))
		return;
	for (unsigned i = 1; i < rt->nhandlers; i++)
		signal_handler(rt, &rt->handlers[i]);
}

/* A handler that does not read now: naps until a signal or READER_SLEEP_MS have passed. Its
 * buffer goes out after the nap whether a signal cut it or not (the flush timer's signal can
 * land between naps: a handler that served a few faults in an all-readers window then held them
 * for 13 s, and a reader of the faults file needed a reorder window of half a million records). */
static void sleep_while_not_reading(struct fl_handler *h)
{
	struct timespec nap = { 0, READER_SLEEP_MS * 1000000L };
	if (nanosleep(&nap, NULL) < 0)
		on_interrupt(h);
	fl_trace_flush_if_old(h, FLUSH_PERIOD_MS * 1000000ull);
}

/* Serves what one read returned, then the flushes that are due. */
static void serve_messages(struct fl_handler *h, const struct uffd_msg *msgs, ssize_t bytes)
{
	struct fl_runtime *rt = h->rt;
	atomic_fetch_add_explicit(&h->stats.wakeups, 1, memory_order_relaxed);
	fl_fault_serve_batch(h, msgs, (int)(bytes / (ssize_t)sizeof(msgs[0])));
	flush_thread_streams(h, false);
	if (atomic_load_explicit(&rt->final_mode, memory_order_relaxed)) {
		fl_trace_flush(h);
		if (!atomic_load(&rt->stopping))
			fl_trace_write_stats(rt);
	}
	serve_flush_request(h);
	fl_trace_flush_if_old(h, FLUSH_PERIOD_MS * 1000000ull); /* a rarely serving handler too */
	step_readers(h);
}

static void *handler_main(void *arg)
{
	struct fl_handler *h = arg;
	struct fl_runtime *rt = h->rt;
	struct uffd_msg msgs[FL_MSG_BATCH];

	fl_internal_thread = 1;
	block_all_but_handler_signal();
	if (h->cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(h->cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	start_flush_timer(h);
	while (!atomic_load(&rt->first_handler_reads)) { /* serve_until_first_handler serves as handler 0 */
		struct timespec nap = { 0, 100000 };
		nanosleep(&nap, NULL);
	}
	for (;;) {
		if (atomic_load(&rt->stopping)) {
			/* the process is dying: serve no fault, answer flush requests until the end */
			on_interrupt(h);
			pause();
			continue;
		}
		if (h->index >= atomic_load_explicit(&rt->readers.reading, memory_order_relaxed)) {
			sleep_while_not_reading(h);
			continue;
		}
		ssize_t n = fl_sys_read(rt->uffd, msgs, sizeof(msgs));
		if (n < 0 && errno == EINTR) {
			on_interrupt(h);
			step_readers(h);
			continue;
		}
		if (n <= 0) {
			/* not expected of a blocking userfaultfd: the handler stops (faults would wait),
			 * and the others read from now on, if they were not */
			fl_log_errno("read(userfaultfd)", n < 0 ? errno : EIO);
			if (h->index == 0 && atomic_exchange(&rt->readers.reading, rt->nhandlers) < rt->nhandlers)
				for (unsigned i = 1; i < rt->nhandlers; i++)
					signal_handler(rt, &rt->handlers[i]);
			return NULL;
		}
		if (atomic_load(&rt->stopping))
			continue; /* read while the process started dying: its threads sleep to the end */
		serve_messages(h, msgs, n);
	}
	return NULL;
}

/* The runtime opens its userfaultfd non-blocking; handlers read it blocking (the file's flag,
 * shared by every handler; nothing else reads it). */
static int make_uffd_blocking(struct fl_runtime *rt)
{
	int flags = fcntl(rt->uffd, F_GETFL);
	if (flags < 0 || ((flags & O_NONBLOCK) && fcntl(rt->uffd, F_SETFL, flags & ~O_NONBLOCK) < 0)) {
		fl_log_errno("fcntl(userfaultfd, blocking)", errno);
		return -1;
	}
	return 0;
}

/* Right after handler 0's thread is created: serves faults as handler 0 until that thread is past
 * libc's start-up of a thread, then lets it read. That start-up can touch the program's heap
 * (__ctype_init reads the locale's character tables, which a program that set its locale, such as
 * python3, allocated there), and in a forked child such a page may be evicted: with no handler
 * reading yet, no thread could serve it. Before, a forked python3 at -L 8M hung for ever, every
 * runtime thread of the child asleep in that fault. Threads created later (the other handlers, the
 * prober, the timeline sampler) are served by handler 0. The userfaultfd is non-blocking until
 * then, and blocking for the handlers' reads after. 0, or -1 after the message. */
static int serve_until_first_handler(struct fl_runtime *rt)
{
	struct fl_handler *h = &rt->handlers[0];
	struct uffd_msg msgs[FL_MSG_BATCH];
	uint64_t deadline = fl_now_ns() + FIRST_HANDLER_WAIT_NS;
	h->serving_startup = true;
	while (atomic_load(&h->tid) == 0) {
		struct pollfd p = { rt->uffd, POLLIN, 0 };
		if (fl_sys_poll(&p, 1, 1) > 0) {
			ssize_t n = fl_sys_read(rt->uffd, msgs, sizeof(msgs));
			if (n > 0)
				fl_fault_serve_batch(h, msgs, (int)(n / (ssize_t)sizeof(msgs[0])));
		}
		if (fl_now_ns() > deadline) {
			fl_log("the first fault handler did not start within 30 s; it reads all the same");
			break;
		}
	}
	h->serving_startup = false;
	int rc = make_uffd_blocking(rt);
	/* let handler 0 go in any case: on a non-blocking userfaultfd its read fails and it stops */
	atomic_store(&rt->first_handler_reads, true);
	return rc;
}

static void *handler_start(void *arg)
{
	struct fl_handler *h = arg;
	atomic_store(&h->tid, (int)syscall(SYS_gettid));
	return handler_main(arg);
}

int fl_handlers_start(struct fl_runtime *rt)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 1)
		ncpu = 1;
	if (setup_handler_signal(rt) < 0)
		return -1;
	atomic_store(&rt->first_handler_reads, false);
	fl_readers_init(rt);
	for (unsigned i = 0; i < rt->nhandlers; i++) {
		struct fl_handler *h = &rt->handlers[i];
		h->rt = rt;
		h->index = i;
		h->cpu = (int)(i % (unsigned)ncpu);
		h->nrecords = 0;
		atomic_store(&h->tid, 0);
		fl_stream_init(&h->contexts, FL_SF_CONTEXTS);
		fl_stream_init(&h->stacks, FL_SF_STACKS);
		if (!h->bounce) {
			h->bounce = fl_sys_reserve(FL_PAGE_SIZE, "mmap(handler bounce page)");
			if (!h->bounce)
				return -1;
		}
		atomic_store(&h->flush_request, 0);
		atomic_store(&h->flush_done, 0);
		int err = fl_thread_create(&h->thread, handler_start, h);
		if (err) {
			fl_log_errno("pthread_create(fault handler)", err);
			return -1;
		}
		if (i == 0 && serve_until_first_handler(rt) < 0)
			return -1;
	}
	return 0;
}

/* Sends the handler signal to a handler; false when it does not run (not started yet, or a
 * handler of the parent in a forked child). */
static bool signal_handler(struct fl_runtime *rt, struct fl_handler *h)
{
	int tid = atomic_load(&h->tid);
	if (tid <= 0 || !handler_signal)
		return false;
	if (syscall(SYS_tgkill, rt->pid, tid, handler_signal) == 0)
		return true;
	if (errno != ESRCH)
		fl_log_errno("tgkill(fault handler)", errno);
	return false;
}

/* Asks every handler to write out its buffered records and waits (at most ~2 s) until done. */
void fl_handlers_flush(struct fl_runtime *rt)
{
	bool waiting[FL_MAX_HANDLERS] = { false };
	for (unsigned i = 0; i < rt->nhandlers; i++) {
		struct fl_handler *h = &rt->handlers[i];
		if (pthread_equal(h->thread, pthread_self()) && atomic_load(&h->tid)) { /* a handler stopping the program */
			fl_trace_flush(h);
			continue;
		}
		atomic_fetch_add(&h->flush_request, 1);
		waiting[i] = signal_handler(rt, h);
	}
	struct timespec pause = { 0, 100000 };
	for (unsigned waited_us = 0; waited_us < FLUSH_WAIT_US; waited_us += 100) {
		bool all_done = true;
		for (unsigned i = 0; i < rt->nhandlers; i++) {
			struct fl_handler *h = &rt->handlers[i];
			if (!waiting[i] || atomic_load(&h->flush_done) >= atomic_load(&h->flush_request)) {
				waiting[i] = false;
				continue;
			}
			all_done = false;
			if (waited_us % FLUSH_RESEND_US == FLUSH_RESEND_US - 100)
				waiting[i] = signal_handler(rt, h);
		}
		if (all_done)
			break;
		nanosleep(&pause, NULL);
	}
}
