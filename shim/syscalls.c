/* syscalls.c: system calls that the stack signal must not disturb.
 *
 * A fault inside a system call (copying to or from heap memory that is not resident) gets
 * its stack signal like any other fault, and the kernel completes the copy. But many calls
 * look at pending signals as they go: a pipe, socket or character-device read or write then
 * returns a short count, and poll, ppoll, select and pselect return EINTR (they are never
 * restarted, SA_RESTART or not). The program must see neither. So while such a call runs on
 * region memory, the stack signal is blocked (raw rt_sigprocmask, outside the shim's own mask
 * filter): a blocked signal is not "pending" for the kernel, the call runs undisturbed, and
 * the signal's handler runs right after the call returns — with the caller's stack, which is
 * the stack a fault inside a system call should have. Calls on memory outside the region pay
 * nothing. Calls libc makes internally (stdio's reads) do not pass through here; stdio
 * copes with short counts itself. */
#include "shim.h"
#include "../runtime/runtime_api.h"

#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/syscall.h>
#include <errno.h>
#include <unistd.h>

struct blocked {
	sigset_t old;
	bool active;
};

static bool touches_region(const void *p)
{
	return p && atomic_load_explicit(&fl_rt_state, memory_order_relaxed) == FL_RT_READY && fl_in_region(p);
}

static bool iov_touches_region(const struct iovec *iov, int n)
{
	if (touches_region(iov))
		return true;
	for (int i = 0; iov && i < n; i++)
		if (touches_region(iov[i].iov_base))
			return true;
	return false;
}

static bool msg_touches_region(const struct msghdr *m)
{
	return m && (touches_region(m) || touches_region(m->msg_name) || touches_region(m->msg_control) ||
		     iov_touches_region(m->msg_iov, (int)m->msg_iovlen));
}

static void block_stack_signal_if(struct blocked *b, bool needed)
{
	sigset_t set;
	b->active = needed && fl_fault_context_signal() && atomic_load(&fl_rt_state) == FL_RT_READY;
	if (!b->active)
		return;
	sigemptyset(&set);
	sigaddset(&set, fl_fault_context_signal());
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &set, &b->old, _NSIG / 8);
}

static void unblock_stack_signal(struct blocked *b)
{
	if (!b->active)
		return;
	fl_stack_deferred = 1; /* the deferred signals are taken right here, with the caller's stack */
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &b->old, NULL, _NSIG / 8);
	fl_stack_deferred = 0;
}

static void *next(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

typedef ssize_t (*rw_fn)(int, void *, size_t);
typedef ssize_t (*prw_fn)(int, void *, size_t, off_t);
typedef ssize_t (*rwv_fn)(int, const struct iovec *, int);
typedef ssize_t (*sr_fn)(int, void *, size_t, int);
typedef ssize_t (*srto_fn)(int, void *, size_t, int, void *, void *);
typedef ssize_t (*msg_fn)(int, void *, int);

/* Ends a guarded call: unblocks, keeping the call's errno. */
static void finish(struct blocked *b)
{
	int saved = errno;
	unblock_stack_signal(b);
	errno = saved;
}

static ssize_t guarded_rw(const char *name, rw_fn *real, int fd, void *buf, size_t n)
{
	struct blocked b;
	if (!*real)
		*real = (rw_fn)next(name);
	block_stack_signal_if(&b, touches_region(buf));
	ssize_t r = (*real)(fd, buf, n);
	finish(&b);
	return r;
}

static ssize_t guarded_prw(const char *name, prw_fn *real, int fd, void *buf, size_t n, off_t off)
{
	struct blocked b;
	if (!*real)
		*real = (prw_fn)next(name);
	block_stack_signal_if(&b, touches_region(buf));
	ssize_t r = (*real)(fd, buf, n, off);
	finish(&b);
	return r;
}

static ssize_t guarded_rwv(const char *name, rwv_fn *real, int fd, const struct iovec *iov, int n)
{
	struct blocked b;
	if (!*real)
		*real = (rwv_fn)next(name);
	block_stack_signal_if(&b, iov_touches_region(iov, n));
	ssize_t r = (*real)(fd, iov, n);
	finish(&b);
	return r;
}

static ssize_t guarded_sr(const char *name, sr_fn *real, int fd, void *buf, size_t n, int flags)
{
	struct blocked b;
	if (!*real)
		*real = (sr_fn)next(name);
	block_stack_signal_if(&b, touches_region(buf));
	ssize_t r = (*real)(fd, buf, n, flags);
	finish(&b);
	return r;
}

static ssize_t guarded_srto(const char *name, srto_fn *real, int fd, void *buf, size_t n, int flags, void *addr,
			    void *len)
{
	struct blocked b;
	if (!*real)
		*real = (srto_fn)next(name);
	block_stack_signal_if(&b, touches_region(buf) || touches_region(addr));
	ssize_t r = (*real)(fd, buf, n, flags, addr, len);
	finish(&b);
	return r;
}

static ssize_t guarded_msg(const char *name, msg_fn *real, int fd, const struct msghdr *m, int flags)
{
	struct blocked b;
	if (!*real)
		*real = (msg_fn)next(name);
	block_stack_signal_if(&b, msg_touches_region(m));
	ssize_t r = (*real)(fd, (void *)m, flags);
	finish(&b);
	return r;
}

static rw_fn real_read, real_write;
static prw_fn real_pread, real_pwrite;
static rwv_fn real_readv, real_writev;
static sr_fn real_recv, real_send;
static srto_fn real_recvfrom, real_sendto;
static msg_fn real_recvmsg, real_sendmsg;

FL_EXPORT ssize_t read(int fd, void *buf, size_t n) { return guarded_rw("read", &real_read, fd, buf, n); }

FL_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	return guarded_rw("write", &real_write, fd, (void *)buf, n);
}

FL_EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	return guarded_prw("pread", &real_pread, fd, buf, n, off);
}

FL_EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	return guarded_prw("pwrite", &real_pwrite, fd, (void *)buf, n, off);
}

FL_EXPORT ssize_t pread64(int fd, void *buf, size_t n, off_t off) __attribute__((alias("pread")));
FL_EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off) __attribute__((alias("pwrite")));

FL_EXPORT ssize_t readv(int fd, const struct iovec *iov, int n) { return guarded_rwv("readv", &real_readv, fd, iov, n); }

FL_EXPORT ssize_t writev(int fd, const struct iovec *iov, int n)
{
	return guarded_rwv("writev", &real_writev, fd, iov, n);
}

FL_EXPORT ssize_t recv(int fd, void *buf, size_t n, int flags) { return guarded_sr("recv", &real_recv, fd, buf, n, flags); }

FL_EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
	return guarded_sr("send", &real_send, fd, (void *)buf, n, flags);
}

FL_EXPORT ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *from, socklen_t *len)
{
	return guarded_srto("recvfrom", &real_recvfrom, fd, buf, n, flags, from, len);
}

FL_EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *to, socklen_t len)
{
	return guarded_srto("sendto", &real_sendto, fd, (void *)buf, n, flags, (void *)to, (void *)(uintptr_t)len);
}

FL_EXPORT ssize_t recvmsg(int fd, struct msghdr *m, int flags) { return guarded_msg("recvmsg", &real_recvmsg, fd, m, flags); }

FL_EXPORT ssize_t sendmsg(int fd, const struct msghdr *m, int flags)
{
	return guarded_msg("sendmsg", &real_sendmsg, fd, m, flags);
}

FL_EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	static int (*real)(struct pollfd *, nfds_t, int);
	struct blocked b;
	if (!real)
		real = (int (*)(struct pollfd *, nfds_t, int))next("poll");
	block_stack_signal_if(&b, touches_region(fds));
	int r = real(fds, n, timeout);
	int saved = errno;
	unblock_stack_signal(&b);
	errno = saved;
	return r;
}

FL_EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts, const sigset_t *mask)
{
	static int (*real)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
	struct blocked b;
	sigset_t copy;
	if (!real)
		real = (int (*)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *))next("ppoll");
	block_stack_signal_if(&b, touches_region(fds) || touches_region(ts) || touches_region(mask));
	if (mask && b.active) { /* the call's own mask replaces ours while it waits */
		copy = *mask;
		sigaddset(&copy, fl_fault_context_signal());
		mask = &copy;
	}
	int r = real(fds, n, ts, mask);
	int saved = errno;
	unblock_stack_signal(&b);
	errno = saved;
	return r;
}

FL_EXPORT int select(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv)
{
	static int (*real)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
	struct blocked b;
	if (!real)
		real = (int (*)(int, fd_set *, fd_set *, fd_set *, struct timeval *))next("select");
	block_stack_signal_if(&b, touches_region(r) || touches_region(w) || touches_region(e) || touches_region(tv));
	int res = real(n, r, w, e, tv);
	int saved = errno;
	unblock_stack_signal(&b);
	errno = saved;
	return res;
}

FL_EXPORT int pselect(int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *ts, const sigset_t *mask)
{
	static int (*real)(int, fd_set *, fd_set *, fd_set *, const struct timespec *, const sigset_t *);
	struct blocked b;
	sigset_t copy;
	if (!real)
		real = (int (*)(int, fd_set *, fd_set *, fd_set *, const struct timespec *, const sigset_t *))next("pselect");
	block_stack_signal_if(&b, touches_region(r) || touches_region(w) || touches_region(e) || touches_region(ts) ||
				      touches_region(mask));
	if (mask && b.active) {
		copy = *mask;
		sigaddset(&copy, fl_fault_context_signal());
		mask = &copy;
	}
	int res = real(n, r, w, e, ts, mask);
	int saved = errno;
	unblock_stack_signal(&b);
	errno = saved;
	return res;
}

/* dlopen: the new library's addresses go into the maps log, so its PCs can be symbolized. */
FL_EXPORT void *dlopen(const char *file, int flags)
{
	static void *(*real)(const char *, int);
	if (!real)
		real = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
	void *h = real(file, flags);
	if (h && atomic_load(&fl_rt_state) == FL_RT_READY)
		fl_maps_snapshot("dlopen");
	return h;
}
