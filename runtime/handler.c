/* handler.c: the fault handler threads.
 *
 * Each handler blocks in poll(2) on the shared userfaultfd (non-blocking) and on its own
 * eventfd (flush requests), reads up to FL_MSG_BATCH messages at once and serves them
 * (fault.c). Handlers are pinned one per CPU by default: on this kind of VM a wake-up across
 * vCPUs costs ~20 µs, so a fault served by the handler on the faulting thread's vCPU costs
 * ~8.5 µs against ~47 µs from the other (notes/mechanisms.md §7.3). Idle handlers sleep; with
 * unwritten records they wake every 100 ms to flush them, so little is lost to a SIGKILL.
 * Handlers block every signal: the program's signals are never delivered to them. */
#include "runtime.h"
#include "diag.h"
#include "uffd_compat.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define FLUSH_PERIOD_MS 100

static void handle_flush_request(struct fl_handler *h)
{
	uint64_t v;
	while (fl_sys_read(h->wake_fd, &v, sizeof(v)) < 0 && errno == EINTR)
		;
	uint64_t req = atomic_load(&h->flush_request);
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
}

static void *handler_main(void *arg)
{
	struct fl_handler *h = arg;
	struct fl_runtime *rt = h->rt;
	struct uffd_msg msgs[FL_MSG_BATCH];

	fl_internal_thread = 1;
	fl_sys_block_all_signals();
	if (h->cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(h->cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev_uffd = { .events = EPOLLIN | EPOLLEXCLUSIVE, .data.u32 = 0 };
	struct epoll_event ev_wake = { .events = EPOLLIN, .data.u32 = 1 };
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, rt->uffd, &ev_uffd) < 0 ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, h->wake_fd, &ev_wake) < 0) {
		fl_log_errno("epoll (fault handler)", errno);
		return NULL;
	}
	for (;;) {
		struct epoll_event evs[2];
		/* handler 0 keeps the cadence of the application threads' streams too */
		int timeout = (h->nrecords || h->index == 0) ? FLUSH_PERIOD_MS : -1;
		int r = epoll_wait(ep, evs, 2, timeout);
		bool uffd_ready = false;
		if (r < 0) {
			if (errno != EINTR)
				fl_log_errno("epoll_wait(userfaultfd)", errno);
			continue;
		}
		if (r == 0) {
			fl_trace_flush(h);
			flush_thread_streams(h, true);
			continue;
		}
		for (int i = 0; i < r; i++) {
			if (evs[i].data.u32 == 1)
				handle_flush_request(h);
			else if (evs[i].events & (EPOLLERR | EPOLLHUP))
				return NULL; /* userfaultfd closed: the process image is going away */
			else
				uffd_ready = true;
		}
		if (atomic_load(&rt->stopping)) { /* the process is dying: wait for the end */
			epoll_ctl(ep, EPOLL_CTL_DEL, rt->uffd, NULL);
			continue;
		}
		/* drain: one wake-up serves every message queued meanwhile. A read returns every
		 * message queued (up to the batch), so one that returns fewer has drained the
		 * queue: no further read that would only say EAGAIN */
		if (uffd_ready)
			atomic_fetch_add_explicit(&h->stats.wakeups, 1, memory_order_relaxed);
		while (uffd_ready && !atomic_load(&rt->stopping)) {
			ssize_t n = fl_sys_read(rt->uffd, msgs, sizeof(msgs));
			if (n < 0) {
				if (errno == EAGAIN) /* another handler took the messages first */
					atomic_fetch_add_explicit(&h->stats.empty_wakeups, 1, memory_order_relaxed);
				else if (errno != EINTR)
					fl_log_errno("read(userfaultfd)", errno);
				break;
			}
			uffd_ready = n == (ssize_t)sizeof(msgs);
			fl_fault_serve_batch(h, msgs, (int)(n / (ssize_t)sizeof(msgs[0])));
			flush_thread_streams(h, false);
			if (atomic_load_explicit(&rt->final_mode, memory_order_relaxed)) {
				fl_trace_flush(h);
				if (!atomic_load(&rt->stopping))
					fl_runtime_write_stats(rt);
			}
		}
	}
	return NULL;
}

int fl_handlers_start(struct fl_runtime *rt)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 1)
		ncpu = 1;
	for (unsigned i = 0; i < rt->nhandlers; i++) {
		struct fl_handler *h = &rt->handlers[i];
		h->rt = rt;
		h->index = i;
		h->cpu = (int)(i % (unsigned)ncpu);
		h->nrecords = 0;
		fl_stream_init(&h->contexts, FL_SF_CONTEXTS);
		fl_stream_init(&h->stacks, FL_SF_STACKS);
		if (!h->bounce) {
			h->bounce = fl_sys_mmap(NULL, FL_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (h->bounce == MAP_FAILED) {
				h->bounce = NULL;
				fl_log_errno("mmap(handler bounce page)", errno);
				return -1;
			}
		}
		atomic_store(&h->flush_request, 0);
		atomic_store(&h->flush_done, 0);
		h->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (h->wake_fd < 0) {
			fl_log_errno("eventfd(handler wake-up)", errno);
			return -1;
		}
		int err = pthread_create(&h->thread, NULL, handler_main, h);
		if (err) {
			fl_log_errno("pthread_create(fault handler)", err);
			return -1;
		}
	}
	return 0;
}

/* Asks every handler to write out its buffered records and waits (at most ~2 s) until done. */
void fl_handlers_flush(struct fl_runtime *rt)
{
	for (unsigned i = 0; i < rt->nhandlers; i++) {
		struct fl_handler *h = &rt->handlers[i];
		uint64_t one = 1;
		if (h->wake_fd < 0)
			continue; /* not started (a forked child that dies before its handlers start) */
		if (pthread_equal(h->thread, pthread_self())) { /* a handler stopping the program */
			fl_trace_flush(h);
			continue;
		}
		atomic_fetch_add(&h->flush_request, 1);
		if (fl_sys_write(h->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
			fl_log_errno("write(handler eventfd)", errno);
	}
	for (unsigned i = 0; i < rt->nhandlers; i++) {
		struct fl_handler *h = &rt->handlers[i];
		struct timespec pause = { 0, 100000 };
		if (h->wake_fd < 0 || pthread_equal(h->thread, pthread_self()))
			continue;
		for (int tries = 0; tries < 20000; tries++) {
			if (atomic_load(&h->flush_done) >= atomic_load(&h->flush_request))
				break;
			nanosleep(&pause, NULL);
		}
	}
}
