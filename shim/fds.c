/* fds.c: the program's close, close_range, closefrom, dup2 and dup3, sparing the runtime's
 * descriptors (runtime/fds.c keeps them in the upper half of the fd limit and marks them).
 *
 * A program may close descriptors it never opened: closefrom(3) or a loop up to the fd limit in
 * a daemon, close_range before an exec. Closing the runtime's userfaultfd would leave every later
 * fault unserved, so a close of a marked descriptor succeeds without closing anything (each is
 * close-on-exec: an exec still drops it), and close_range and closefrom close the ranges between
 * marked ones. A dup2 or dup3 onto a marked descriptor cannot be honoured without taking it from
 * the runtime: it fails with EBUSY (as dup2 may on Linux), said once on stderr.
 *
 * Libraries the runtime uses may open descriptors of their own: libunwind opens a pipe to check
 * that an address is readable (a byte written from it, then read back). A pipe2 or pipe made on
 * the runtime's behalf (a runtime thread, or a program thread inside the runtime) is moved out of
 * the way and marked like the runtime's own, or a program's closefrom(3) and a reopen would have
 * libunwind read a byte from the program's file and write one into another. */
#include "shim.h"
#include "../runtime/runtime_api.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <linux/close_range.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef int (*close_fn)(int);
typedef int (*dup2_fn)(int, int);
typedef int (*dup3_fn)(int, int, int);
typedef int (*pipe2_fn)(int *, int);

/* The next definition of NAME after ours (libc's), looked up once into *SLOT; NULL when there is
 * none (the wrapper then makes the system call itself). */
static void *next_cached(_Atomic(void *) *slot, const char *name)
{
	void *f = atomic_load_explicit(slot, memory_order_relaxed);
	if (!f) {
		f = dlsym(RTLD_NEXT, name);
		atomic_store_explicit(slot, f, memory_order_relaxed);
	}
	return f;
}

/* After a call that closed or replaced descriptor 2 (TOUCHED): the runtime's copy of stderr
 * follows (runtime.c). Returns RC, the call's result. */
static int stderr_followed(int rc, bool touched)
{
	if (touched && atomic_load(&fl_rt_state) == FL_RT_READY)
		fl_runtime_stderr_moved();
	return rc;
}

FL_EXPORT int close(int fd)
{
	static _Atomic(void *) real;
	if (fl_fd_is_runtime(fd))
		return 0;
	close_fn f = (close_fn)next_cached(&real, "close");
	return stderr_followed(f ? f(fd) : (int)syscall(SYS_close, fd), fd == 2);
}

/* close_range over [first, last] less the runtime's descriptors: the system call on each gap. */
static int close_range_sparing(unsigned first, unsigned last, unsigned flags)
{
	if (flags & CLOSE_RANGE_CLOEXEC) /* only marks close-on-exec, which the runtime's are */
		return (int)syscall(SYS_close_range, first, last, flags);
	if (flags & CLOSE_RANGE_UNSHARE) { /* the table made the process's own once, before the gaps */
		if (unshare(CLONE_FILES) < 0)
			return -1;
		flags &= ~(unsigned)CLOSE_RANGE_UNSHARE;
	}
	unsigned high = (unsigned)fl_fd_high(); /* no marked descriptor at or above it */
	unsigned from = first;
	for (unsigned fd = first; fd <= last && fd < high; fd++) {
		if (!fl_fd_is_runtime((int)fd))
			continue;
		if (fd > from && syscall(SYS_close_range, from, fd - 1, flags) < 0)
			return -1;
		from = fd + 1;
	}
	if (from > last)
		return 0;
	return (int)syscall(SYS_close_range, from, last, flags);
}

FL_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	if (first > last) {
		errno = EINVAL;
		return -1;
	}
	return stderr_followed(close_range_sparing(first, last, (unsigned)flags),
			       first <= 2 && last >= 2 && !(flags & CLOSE_RANGE_CLOEXEC));
}

/* As glibc's: where close_range is refused (a kernel before 5.9, a seccomp filter), each open
 * descriptor from LOWFD is closed, /proc/self/fd listing them (up to the fd limit without it). */
FL_EXPORT void closefrom(int lowfd)
{
	unsigned low = lowfd < 0 ? 0 : (unsigned)lowfd;
	if (close_range_sparing(low, ~0u, 0) == 0)
		return;
	DIR *d = opendir("/proc/self/fd");
	if (d) {
		int own = dirfd(d);
		struct dirent *e;
		while ((e = readdir(d)) != NULL) {
			long fd = strtol(e->d_name, NULL, 10);
			if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && fd >= (long)low && fd != own)
				close((int)fd);
		}
		closedir(d);
		return;
	}
	struct rlimit lim;
	long top = getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < (1ul << 21) ? (long)lim.rlim_cur : 1l << 21;
	for (long fd = low; fd < top; fd++)
		close((int)fd);
}

static int keep_if_runtime(int rc, int fds[2])
{
	if (rc == 0 && (fl_internal_thread || fl_in_runtime_call)) {
		fds[0] = fl_fd_keep(fds[0]);
		fds[1] = fl_fd_keep(fds[1]);
	}
	return rc;
}

FL_EXPORT int pipe2(int fds[2], int flags)
{
	static _Atomic(void *) real;
	pipe2_fn f = (pipe2_fn)next_cached(&real, "pipe2");
	return keep_if_runtime(f ? f(fds, flags) : (int)syscall(SYS_pipe2, fds, flags), fds);
}

FL_EXPORT int pipe(int fds[2])
{
	return pipe2(fds, 0);
}

static int refuse_runtime_target(int newfd)
{
	static _Atomic bool said;
	if (!atomic_exchange(&said, true))
		fl_log_u64("the program's dup2 onto descriptor ", (uint64_t)newfd,
			   ", which the runtime holds, fails with EBUSY (the runtime keeps its descriptors in the upper half of the fd limit)");
	errno = EBUSY;
	return -1;
}

FL_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	static _Atomic(void *) real;
	if (fl_fd_is_runtime(newfd) && oldfd != newfd)
		return refuse_runtime_target(newfd);
	dup3_fn f = (dup3_fn)next_cached(&real, "dup3");
	int rc = f ? f(oldfd, newfd, flags) : (int)syscall(SYS_dup3, oldfd, newfd, flags);
	return stderr_followed(rc, rc == 2);
}

FL_EXPORT int dup2(int oldfd, int newfd)
{
	static _Atomic(void *) real;
	if (fl_fd_is_runtime(newfd) && oldfd != newfd)
		return refuse_runtime_target(newfd);
	dup2_fn f = (dup2_fn)next_cached(&real, "dup2");
	int rc = f ? f(oldfd, newfd) : (int)syscall(SYS_dup2, oldfd, newfd);
	return stderr_followed(rc, rc == 2);
}
