/* fds.c: the program's close, close_range, closefrom, dup2 and dup3, sparing the runtime's
 * descriptors (runtime/fds.c keeps them in the upper half of the fd limit and marks them).
 *
 * A program may close descriptors it never opened: closefrom(3) or a loop up to the fd limit in
 * a daemon, close_range before an exec. Closing the runtime's userfaultfd would leave every later
 * fault unserved, so a close of a marked descriptor succeeds without closing anything (each is
 * close-on-exec: an exec still drops it), and close_range and closefrom close the ranges between
 * marked ones. A dup2 or dup3 onto a marked descriptor cannot be honoured without taking it from
 * the runtime: it fails with EBUSY (as dup2 may on Linux), said once on stderr. */
#include "shim.h"
#include "../runtime/runtime_api.h"

#include <dlfcn.h>
#include <errno.h>
#include <linux/close_range.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef int (*close_fn)(int);
typedef int (*dup2_fn)(int, int);
typedef int (*dup3_fn)(int, int, int);

static void *next_symbol(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

FL_EXPORT int close(int fd)
{
	static _Atomic(close_fn) real;
	if (fl_fd_is_runtime(fd))
		return 0;
	close_fn f = atomic_load_explicit(&real, memory_order_relaxed);
	if (!f) {
		f = (close_fn)next_symbol("close");
		if (!f)
			return (int)syscall(SYS_close, fd);
		atomic_store_explicit(&real, f, memory_order_relaxed);
	}
	return f(fd);
}

/* close_range over [first, last] less the runtime's descriptors: the system call on each gap. */
static int close_range_sparing(unsigned first, unsigned last, unsigned flags)
{
	if (flags & CLOSE_RANGE_CLOEXEC) /* only marks close-on-exec, which the runtime's are */
		return (int)syscall(SYS_close_range, first, last, flags);
	unsigned high = (unsigned)fl_fd_high(); /* no marked descriptor at or above it */
	unsigned from = first;
	for (unsigned fd = first; fd <= last && fd < high; fd++) {
		if (!fl_fd_is_runtime((int)fd))
			continue;
		if (fd > from && syscall(SYS_close_range, from, fd - 1, flags) < 0)
			return -1;
		flags &= ~(unsigned)CLOSE_RANGE_UNSHARE; /* the table is the process's own after the first */
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
	return close_range_sparing(first, last, (unsigned)flags);
}

FL_EXPORT void closefrom(int lowfd)
{
	close_range_sparing(lowfd < 0 ? 0 : (unsigned)lowfd, ~0u, 0);
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
	static _Atomic(dup3_fn) real;
	if (fl_fd_is_runtime(newfd) && oldfd != newfd)
		return refuse_runtime_target(newfd);
	dup3_fn f = atomic_load_explicit(&real, memory_order_relaxed);
	if (!f) {
		f = (dup3_fn)next_symbol("dup3");
		if (!f)
			return (int)syscall(SYS_dup3, oldfd, newfd, flags);
		atomic_store_explicit(&real, f, memory_order_relaxed);
	}
	return f(oldfd, newfd, flags);
}

FL_EXPORT int dup2(int oldfd, int newfd)
{
	static _Atomic(dup2_fn) real;
	if (fl_fd_is_runtime(newfd) && oldfd != newfd)
		return refuse_runtime_target(newfd);
	dup2_fn f = atomic_load_explicit(&real, memory_order_relaxed);
	if (!f) {
		f = (dup2_fn)next_symbol("dup2");
		if (!f)
			return (int)syscall(SYS_dup2, oldfd, newfd);
		atomic_store_explicit(&real, f, memory_order_relaxed);
	}
	return f(oldfd, newfd);
}
