/* runtime.c: the runtime's lifecycle — start from the FAULTLINE_* environment, shutdown at
 * exit or exec, and a fresh runtime in the child of a fork.
 *
 * Design choices, measured on this machine (docs/design.md):
 *  - One region, registered MISSING | WP once, without UFFD_FEATURE_SIGBUS or
 *    UFFD_USER_MODE_ONLY (both make read()/write() into a non-resident page fail with EFAULT)
 *    and without EVENT_REMOVE (its synchronous events deadlock a handler that drops its own
 *    pages). Synchronous write-protect is the dirty bit: pages copied in from the far store
 *    are write-protected, their first write is a (cheap, unlogged) WP message, so clean pages
 *    are dropped without a write-back and dirty pages cannot change while being copied out.
 *    WP_ASYNC was rejected: a write landing between the dirty check and the drop would be lost.
 *  - fork: the kernel does not carry userfaultfd registration into the child (no EVENT_FORK),
 *    so the child registers the region again on a new userfaultfd and starts its own
 *    handlers, in an atfork *child* handler that runs before jemalloc's (so jemalloc's child
 *    handler, which touches arena metadata in the region, is already served). The child sees
 *    the parent's pages as they were: resident pages by copy-on-write, evicted pages through
 *    its copy-on-write copy of the far mirror. Transitions that were in flight in the parent
 *    at the instant of the fork are settled from the pages' presence (mincore).
 *    The parent does nothing special at fork: every page operation is atomic with respect to
 *    fork (each takes the mmap lock), so the child's copy is consistent. */
#include "context.h"
#include "alloc_log.h"
#include "env.h"
#include "evict.h"
#include "fds.h"
#include "internal_thread.h"
#include "far_store.h"
#include "fault_context.h"
#include "handler.h"
#include "live_objects.h"
#include "pmu.h"
#include "probe.h"
#include "rap_online.h"
#include "region.h"
#include "runtime_api.h"
#include "stacks.h"
#include "stream.h"
#include "timeline.h"
#include "trace_writer.h"
#include "threads.h"
#include "fault_sample.h"
#include "remote_unwind.h"
#include "pages.h"
#include "diag.h"
#include "frame_writer.h"
#include "far_backends.h"
#include "far_prefetch.h"
#include "fill_ahead.h"
#include "uffd_compat.h"

#include <errno.h>
#include <link.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "faultline/env.h"

_Atomic int fl_rt_state = FL_RT_UNINIT;

static int open_uffd(void)
{
	int fd = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		int uffd = ioctl(fd, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK);
		int err = errno;
		fl_sys_close(fd);
		if (uffd >= 0)
			return uffd;
		errno = err;
	}
	/* out of descriptors: the system call would fail as well, but for a user without its
	 * permission with EPERM, hiding the reason */
	if (errno == EMFILE || errno == ENFILE)
		return -1;
	return (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
}

/* Opens a userfaultfd with the features we use and registers the region with it. */
static int connect_region(struct fl_runtime *rt)
{
	uint64_t wanted = UFFD_FEATURE_THREAD_ID | UFFD_FEATURE_EXACT_ADDRESS;
	struct uffdio_api api = { .api = UFFD_API, .features = 0 };
	int probe = open_uffd();
	if (probe < 0) {
		if (errno == EMFILE || errno == ENFILE) /* not a permission: the program's descriptor limit */
			fl_log_errno("userfaultfd (the runtime needs about 30 descriptors beside the program's "
				     "under its RLIMIT_NOFILE)", errno);
		else
			fl_log_errno("userfaultfd (needs root, access to /dev/userfaultfd or vm.unprivileged_userfaultfd=1)", errno);
		return -1;
	}
	if (ioctl(probe, UFFDIO_API, &api) < 0) {
		fl_log_errno("ioctl(UFFDIO_API)", errno);
		fl_sys_close(probe);
		return -1;
	}
	fl_sys_close(probe);
	rt->features = api.features & wanted;
	rt->uffd = fl_fd_keep(open_uffd());
	if (rt->uffd < 0) {
		fl_log_errno("userfaultfd", errno);
		return -1;
	}
	api = (struct uffdio_api){ .api = UFFD_API, .features = rt->features };
	if (ioctl(rt->uffd, UFFDIO_API, &api) < 0) {
		fl_log_errno("ioctl(UFFDIO_API)", errno);
		return -1;
	}
	struct uffdio_register reg = {
		.range = { .start = (uint64_t)(uintptr_t)rt->region, .len = rt->region_pages * FL_PAGE_SIZE },
		.mode = UFFDIO_REGISTER_MODE_MISSING | UFFDIO_REGISTER_MODE_WP,
	};
	rt->write_protect = true;
	if (ioctl(rt->uffd, UFFDIO_REGISTER, &reg) < 0) {
		reg.mode = UFFDIO_REGISTER_MODE_MISSING; /* kernel without anonymous WP: every page is dirty */
		rt->write_protect = false;
		if (ioctl(rt->uffd, UFFDIO_REGISTER, &reg) < 0) {
			fl_log_errno("ioctl(UFFDIO_REGISTER) of the region", errno);
			return -1;
		}
	}
	return 0;
}

/* The runtime's messages go to its own copy of stderr, at a descriptor number of its own
 * (fds.c), so they never land in a file the program opens at number 2 (diag.c). The copy follows
 * the program's stderr (fl_runtime_stderr_moved): a dup2 onto 2 makes it a copy of the new one,
 * a close of 2 makes it /dev/null, so a daemon that closes or redirects its stderr does not keep
 * its parent's pipe open through the runtime (x=$(faultline record -- daemon) would wait for the
 * daemon's end). Without a stderr at start, the messages go nowhere rather than into whatever the
 * program opens at 2. Inherited by a forked child; an exec'd image makes its own copy again. */
static int stderr_copy = -1, null_copy = -1;

static void keep_stderr(void)
{
	stderr_copy = fl_fd_keep((int)syscall(SYS_fcntl, 2, F_DUPFD_CLOEXEC, 3));
	null_copy = fl_fd_keep((int)syscall(SYS_open, "/dev/null", O_WRONLY | O_CLOEXEC));
	fl_log_to(stderr_copy); /* -1: nowhere */
}

void fl_runtime_stderr_moved(void)
{
	if (stderr_copy < 0)
		return;
	/* dup3 replaces the copy at its number at once: a message being written meanwhile goes to
	 * the old file or the new one, never to a number the program reuses */
	int from = syscall(SYS_fcntl, 2, F_GETFD) >= 0 ? 2 : null_copy;
	if (from >= 0)
		syscall(SYS_dup3, from, stderr_copy, O_CLOEXEC);
}

static int read_config(struct fl_runtime *rt)
{
	const char *policy = getenv(FL_ENV_POLICY);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t local = fl_env_u64(FL_ENV_LOCAL_BYTES, 0);
	uint64_t max = fl_env_u64(FL_ENV_MAX_BYTES, (uint64_t)sysconf(_SC_PHYS_PAGES) * FL_PAGE_SIZE);

	rt->max_bytes = (size_t)((max + FL_PAGE_SIZE - 1) & ~(FL_PAGE_SIZE - 1));
	rt->local_limit_pages = (size_t)((local + FL_PAGE_SIZE - 1) >> FL_PAGE_SHIFT);
	if (rt->max_bytes == 0) {
		fl_log("FAULTLINE_MAX_BYTES is 0: nothing to manage");
		return -1;
	}
	if (rt->local_limit_pages && rt->local_limit_pages < FL_MIN_LOCAL_PAGES) {
		fl_log("-L must be at least 1 MiB");
		return -1;
	}
	rt->nhandlers = (unsigned)fl_env_u64(FL_ENV_HANDLERS, 0);
	if (rt->nhandlers == 0)
		rt->nhandlers = ncpu > 0 ? (unsigned)ncpu : 1;
	if (rt->nhandlers > FL_MAX_HANDLERS)
		rt->nhandlers = FL_MAX_HANDLERS;
	rt->policy = (policy && strcmp(policy, "fifo") == 0) ? FL_POLICY_FIFO : FL_POLICY_CLOCK;
	rt->far = fl_far_store_find(getenv(FL_ENV_FAR));
	if (!rt->far) {
		fl_log("unknown far store in FAULTLINE_FAR");
		return -1;
	}
	rt->stack_depth = (unsigned)fl_env_u64(FL_ENV_STACK_DEPTH, 64);
	if (rt->stack_depth > FL_MAX_STACK_DEPTH)
		rt->stack_depth = FL_MAX_STACK_DEPTH;
	rt->sample = (unsigned)fl_env_u64(FL_ENV_SAMPLE, 1);
	rt->fill_ahead = (unsigned)fl_env_u64(FL_ENV_FILL_AHEAD, 0); /* capped by fl_fill_ahead_setup */
	rt->alloc_sample = (unsigned)fl_env_u64(FL_ENV_ALLOC_SAMPLE, 1);
	/* rt->sample 0 (record -s 0): no fault stacks, so no PMU values either; allocation sites stay */
	if (rt->alloc_sample == 0)
		rt->alloc_sample = 1;
	const char *alloc_log = getenv(FL_ENV_ALLOC_LOG);
	rt->alloc_log_full = alloc_log && strcmp(alloc_log, "full") == 0;
	rt->alloc_sample_bytes = fl_env_u64(FL_ENV_ALLOC_SAMPLE_BYTES, 512 * 1024);
	return 0;
}

static int find_own_text(struct dl_phdr_info *info, size_t size, void *data)
{
	struct fl_runtime *rt = data;
	uintptr_t probe = (uintptr_t)&fl_runtime_init;
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && probe >= start && probe < start + ph->p_memsz) {
			rt->own_text_start = start, rt->own_text_end = start + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

/* Every step of the start that can fail for a reason of its own (configuration, files, memory),
 * before any thread starts: a runtime that cannot start leaves no thread in the program. */
static int setup_steps(struct fl_runtime *rt)
{
	keep_stderr();
	if (read_config(rt) < 0 || fl_region_setup(rt) < 0 || connect_region(rt) < 0 || fl_far_open(rt) < 0 ||
	    fl_prefetch_setup(rt) < 0 || fl_evict_setup(rt) < 0 || fl_fill_ahead_setup(rt) < 0 || fl_probe_setup(rt) < 0 ||
	    fl_threads_setup(rt) < 0 || fl_stacks_setup(rt) < 0 || fl_objects_setup(rt) < 0 ||
	    fl_alloc_log_setup(rt) < 0 || fl_pmu_setup(rt) < 0 || fl_sample_setup(rt) < 0 ||
	    fl_unwind_setup(rt) < 0 || fl_fault_context_setup(rt) < 0 || fl_timeline_setup(rt) < 0 ||
	    fl_rap_online_setup(rt) < 0)
		return -1;
	return 0;
}

/* The runtime's threads: the trace's writer, read-ahead, the evictor (without it faults evict
 * inline), the fault handlers, the prober and the timeline's sampler. */
static int start_threads(struct fl_runtime *rt)
{
	if (fl_trace_open(rt) < 0 || fl_prefetch_start(rt) < 0)
		return -1;
	fl_evict_start(rt);
	if (fl_handlers_start(rt) < 0 || fl_probe_start(rt) < 0 || fl_timeline_start(rt) < 0)
		return -1;
	return 0;
}

int fl_runtime_init(void)
{
	struct fl_runtime *rt = &fl_rt;
	const char *top = getenv(FL_ENV_DIR);
	if (!top)
		return 1;
	struct fl_buf top_buf = { rt->top_dir, 0, sizeof(rt->top_dir) };
	fl_buf_str(&top_buf, top);
	rt->check_states = getenv("FAULTLINE_CHECK_STATES") != NULL;
	/* thrash_warn.c: seconds before the thrash warning may come (tests make it sooner) */
	rt->thrash_warn_after_s = fl_env_u64("FAULTLINE_THRASH_WARN_AFTER", 10);
	rt->thrash_warn_rate = fl_env_u64("FAULTLINE_THRASH_WARN_RATE", 5000);
	if (rt->thrash_warn_after_s > 1000000) /* a million seconds: later than any run, no overflow */
		rt->thrash_warn_after_s = 1000000;
	if (rt->thrash_warn_rate > 1000000000)
		rt->thrash_warn_rate = 1000000000;
	rt->start_ns = fl_now_ns();
	rt->pid = getpid();
	rt->uid = getuid();
	fl_fatal_on_stop(fl_runtime_shutdown);
	fl_debug_marks_setup();
	atomic_store(&rt->next_alloc_id, 1);
	dl_iterate_phdr(find_own_text, rt);
	int in_runtime = fl_in_runtime_call;
	fl_in_runtime_call = 1; /* descriptors libraries open now are the runtime's (shim/fds.c) */
	int rc = setup_steps(rt) < 0 || start_threads(rt) < 0 ? -1 : 0;
	fl_in_runtime_call = in_runtime;
	if (rc < 0) {
		fl_log("the runtime could not start; the program runs untraced");
		return -1;
	}
	fl_maps_snapshot("start");
	return 0;
}

/* Invariant check (FAULTLINE_CHECK_STATES=1, for tests): a page is mapped exactly when its
 * state is RESIDENT. Pages in transition (BUSY) are skipped. Returns the mismatches. */
static uint64_t check_page_states(struct fl_runtime *rt)
{
	uint64_t bad = 0;
	for (size_t p = 0; p < rt->va_high_pages; p++) {
		unsigned char present = 0;
		uint8_t s = atomic_load(&rt->state[p]);
		if ((s & PG_BUSY) || mincore(fl_page_addr(rt, p), FL_PAGE_SIZE, &present) < 0)
			continue;
		if ((present & 1) != ((s & PG_WHERE) == PG_RESIDENT)) {
			if (bad < 5)
				fl_log_u64("page state check: mismatch at page ", p, (present & 1) ? " (mapped, state not resident)" : " (unmapped, state resident)");
			bad++;
		}
	}
	return bad;
}

/* Shutdown, at exit, exec, _exit or a fatal signal: from now on every record is written at
 * once; buffered records are flushed; stats.json is written. When the process is dying of a
 * signal (or the far store failed), the handlers first stop serving faults — the other
 * threads just wait for the kill — so the counts and the records agree exactly. After a
 * normal exit, faults still served (other libraries' destructors) rewrite stats.json. */
void fl_runtime_shutdown(const char *why)
{
	struct fl_runtime *rt = &fl_rt;
	struct fl_buf reason = { rt->exit_reason, 0, sizeof(rt->exit_reason) };
	if (atomic_load(&fl_rt_state) != FL_RT_READY || fl_runtime_in_vfork_child())
		return; /* not traced, or a vfork child sharing the parent's memory */
	fl_buf_str(&reason, why);
	if (rt->check_states)
		rt->state_mismatches = check_page_states(rt);
	/* the process is about to die: a fatal signal, a far store failure, or _exit (whose
	 * exit_group would otherwise kill handlers in the middle of rewriting stats.json) */
	if (strncmp(why, "signal", 6) == 0 || strncmp(why, "far store", 9) == 0 || strcmp(why, "_exit") == 0)
		atomic_store(&rt->stopping, true);
	atomic_store(&rt->final_mode, true);
	fl_streams_write_through(true);
	fl_handlers_flush(rt);
	fl_timeline_shutdown(rt); /* a last sample of every counter */
	fl_threads_flush_all();
	fl_sites_write(rt); /* per-site aggregates (live_objects.c) */
	fl_maps_snapshot(strcmp(why, "exec") == 0 ? "exec" : "exit");
	fl_rap_online_write(rt); /* ranges.rap */
	fl_frames_drain(); /* every record handed to the frame writer is in its file */
	fl_trace_write_stats(rt);
	fl_debug_marks_report(); /* debug build with FAULTLINE_DEBUG_MARKS=1: FL_ASSERT/FL_TESTCASE counts */
}

bool fl_runtime_in_vfork_child(void)
{
	return atomic_load(&fl_rt_state) == FL_RT_READY && fl_rt.pid != getpid();
}

/* Child of fork: settle pages that were in transition in the parent at the fork. */
static void settle_pages_after_fork(struct fl_runtime *rt)
{
	for (size_t p = 0; p < rt->va_high_pages; p++) {
		uint8_t s = atomic_load(&rt->state[p]);
		uint8_t where = s & PG_WHERE, keep = s & PG_NOACCESS;
		if (where == PG_RESIDENT)
			s |= PG_DIRTY; /* write protection is not inherited: writes are no longer seen */
		if (s & PG_BUSY) {
			unsigned char present = 0;
			mincore(fl_page_addr(rt, p), FL_PAGE_SIZE, &present);
			if (present & 1)
				s = PG_RESIDENT | PG_DIRTY | keep;
			else if (where == PG_RESIDENT) /* an eviction had unmapped it: content in the mirror */
				s = PG_SOFT | PG_DIRTY | keep;
			else
				s = (uint8_t)(where | keep | (s & PG_DIRTY));
		}
		atomic_store(&rt->state[p], (uint8_t)(s & ~PG_BUSY));
	}
}

/* Child of fork: the far store's copies as of the fork, then the read-ahead restarted on them. */
static int far_after_fork(struct fl_runtime *rt)
{
	if (fl_far_after_fork(rt) < 0)
		return -1;
	fl_prefetch_after_fork(rt);
	return 0;
}

static void child_cannot_start(void)
{
	fl_log("the runtime could not start in a forked child; it cannot run correctly");
	syscall(SYS_exit_group, FL_EXIT_RUNTIME_FAILURE);
}

void fl_runtime_fork_child(void)
{
	struct fl_runtime *rt = &fl_rt;
	sigset_t all, saved;
	if (atomic_load(&fl_rt_state) != FL_RT_READY)
		return;
	/* no program signal handler runs until the child's runtime serves faults (it could touch an
	 * evicted page, with no handler to serve it); the threads started here inherit the mask */
	sigfillset(&all);
	fl_sys_sigprocmask(SIG_BLOCK, &all, &saved);
	fl_thread_stacks_after_fork();
	fl_sys_close(rt->uffd);
	fl_sys_close(rt->faults_fd);
	fl_sys_close(rt->maps_fd);
	fl_sys_close(rt->stats_fd);
	fl_sys_close(rt->sites_fd);
	if (rt->allocs_zst_fd >= 0)
		fl_sys_close(rt->allocs_zst_fd);
	fl_stream_files_close();
	fl_threads_after_fork();
	fl_sample_registry_after_fork();
	fl_unwind_after_fork();
	fl_stacks_after_fork();
	fl_objects_after_fork(rt);
	fl_streams_after_fork();
	atomic_store(&rt->faults_failed, false);
	atomic_store(&rt->next_alloc_id, 1);
	atomic_store(&rt->stack_signals_sent, 0);
	atomic_store(&rt->stack_signals_failed, 0);
	atomic_store(&rt->contexts_written, 0);
	atomic_store(&rt->alloc_events, 0);
	for (unsigned i = 0; i < rt->nhandlers; i++) {
		atomic_store(&rt->handlers[i].tid, 0); /* no handler threads in this process until they start */
		memset(&rt->handlers[i].stats, 0, sizeof(rt->handlers[i].stats));
		memset(&rt->handlers[i].flushed, 0, sizeof(rt->handlers[i].flushed));
		rt->handlers[i].nrecords = 0;
		rt->handlers[i].last_write_errno = 0;
	}
	memset(&rt->evict, 0, sizeof(rt->evict));
	atomic_store(&rt->next_seq, 0);
	atomic_store(&rt->final_mode, false);
	fl_streams_write_through(false);
	atomic_store(&rt->stopping, false);
	atomic_store(&rt->exhausted_reported, false);
	atomic_store(&rt->peak_heap_bytes, atomic_load(&rt->heap_bytes));
	pthread_mutex_init(&rt->va_lock, NULL);
	rt->start_ns = fl_now_ns();
	rt->thrash_warned = false;
	rt->pid = getpid();
	settle_pages_after_fork(rt);
	/* the region registered before any thread of the child starts: a thread's start-up in libc
	 * may read the heap (handler.c, serve_until_first_handler), and a read of an evicted page of
	 * an unregistered region would map a page of zeros over its content */
	if (connect_region(rt) < 0)
		child_cannot_start();
	fl_evict_rebuild_after_fork(rt);
	fl_rap_online_after_fork(rt);
	fl_probe_after_fork(rt);
	if (far_after_fork(rt) < 0 || fl_trace_open(rt) < 0 || fl_handlers_start(rt) < 0 || fl_probe_start(rt) < 0)
		child_cannot_start();
	fl_timeline_after_fork(rt);
	fl_maps_snapshot("start");
	fl_sys_sigprocmask(SIG_SETMASK, &saved, NULL);
}
