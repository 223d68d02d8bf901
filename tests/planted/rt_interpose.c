/* rt_interpose.c: a program that interposes the system call wrappers faultline's shim also
 * interposes (read, write, pread, pwrite, poll, recv, send, sendmsg, sigaction, sigprocmask,
 * pthread_sigmask) and counts every call that does not come from its own code. Linked with
 * -rdynamic, its definitions come first in symbol lookup, before libfaultline.so's: so a call
 * the runtime made through such a name (instead of going straight to the kernel) lands here,
 * from a handler thread or from one of the program's threads, with a return address outside
 * this executable.
 *
 * usage: rt_interpose [MiB (64)] [THREADS (2)]
 * Each of THREADS threads and main fill MiB/(THREADS+1) of heap with a pattern and check it
 * twice (faults, refaults under a small -L), main also makes a known number of calls of its own
 * to each wrapper. Prints
 *   interpose own=N foreign=F foreign_names=...
 * and exits 1 if the data is wrong or an own call was not seen. F must be 0 under faultline. */
#include "planted.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/socket.h>

extern char __executable_start[], etext[];

enum { W_READ, W_WRITE, W_PREAD, W_PWRITE, W_POLL, W_RECV, W_SEND, W_SENDMSG, W_SIGACTION, W_SIGPROCMASK,
       W_PTHREAD_SIGMASK, W_COUNT };
static const char *const names[W_COUNT] = { "read", "write", "pread", "pwrite", "poll", "recv", "send", "sendmsg",
					     "sigaction", "sigprocmask", "pthread_sigmask" };
static _Atomic unsigned long own[W_COUNT], foreign[W_COUNT];

static void *next(int which)
{
	static void *resolved[W_COUNT];
	if (!resolved[which])
		resolved[which] = dlsym(RTLD_NEXT, names[which]);
	return resolved[which];
}

static void count(int which, const void *ret)
{
	if ((const char *)ret >= __executable_start && (const char *)ret < etext)
		atomic_fetch_add(&own[which], 1);
	else
		atomic_fetch_add(&foreign[which], 1);
}

#define CALLER __builtin_return_address(0)

ssize_t read(int fd, void *b, size_t n)
{
	count(W_READ, CALLER);
	return ((ssize_t(*)(int, void *, size_t))next(W_READ))(fd, b, n);
}

ssize_t write(int fd, const void *b, size_t n)
{
	count(W_WRITE, CALLER);
	return ((ssize_t(*)(int, const void *, size_t))next(W_WRITE))(fd, b, n);
}

ssize_t pread(int fd, void *b, size_t n, off_t off)
{
	count(W_PREAD, CALLER);
	return ((ssize_t(*)(int, void *, size_t, off_t))next(W_PREAD))(fd, b, n, off);
}

ssize_t pwrite(int fd, const void *b, size_t n, off_t off)
{
	count(W_PWRITE, CALLER);
	return ((ssize_t(*)(int, const void *, size_t, off_t))next(W_PWRITE))(fd, b, n, off);
}

int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	count(W_POLL, CALLER);
	return ((int (*)(struct pollfd *, nfds_t, int))next(W_POLL))(fds, n, timeout);
}

ssize_t recv(int fd, void *b, size_t n, int flags)
{
	count(W_RECV, CALLER);
	return ((ssize_t(*)(int, void *, size_t, int))next(W_RECV))(fd, b, n, flags);
}

ssize_t send(int fd, const void *b, size_t n, int flags)
{
	count(W_SEND, CALLER);
	return ((ssize_t(*)(int, const void *, size_t, int))next(W_SEND))(fd, b, n, flags);
}

ssize_t sendmsg(int fd, const struct msghdr *m, int flags)
{
	count(W_SENDMSG, CALLER);
	return ((ssize_t(*)(int, const struct msghdr *, int))next(W_SENDMSG))(fd, m, flags);
}

int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	count(W_SIGACTION, CALLER);
	return ((int (*)(int, const struct sigaction *, struct sigaction *))next(W_SIGACTION))(sig, act, old);
}

int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	count(W_SIGPROCMASK, CALLER);
	return ((int (*)(int, const sigset_t *, sigset_t *))next(W_SIGPROCMASK))(how, set, old);
}

int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	count(W_PTHREAD_SIGMASK, CALLER);
	return ((int (*)(int, const sigset_t *, sigset_t *))next(W_PTHREAD_SIGMASK))(how, set, old);
}

struct work {
	uint64_t *buf;
	size_t words;
	uint64_t seed;
};

static void *fill_and_check(void *arg)
{
	struct work *w = arg;
	fill_words(w->buf, w->words, w->seed);
	verify_words(w->buf, w->words, w->seed, "pass 1");
	verify_words(w->buf, w->words, w->seed, "pass 2");
	return NULL;
}

/* One call of the program's own to each wrapper (counted as own: the caller is this file). */
static void own_calls(void)
{
	char c;
	int sv[2];
	struct pollfd p = { .fd = 0, .events = 0 };
	struct sigaction sa;
	sigset_t set;
	int fd = open("/dev/zero", O_RDONLY);
	if (fd < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		die_errno("open(/dev/zero) or socketpair");
	if (read(fd, &c, 1) != 1 || pread(fd, &c, 1, 0) != 1)
		die_errno("read(/dev/zero)");
	if (send(sv[0], "x", 1, 0) != 1 || recv(sv[1], &c, 1, 0) != 1 || write(sv[0], "y", 1) != 1)
		die_errno("send/recv/write on a socketpair");
	struct iovec iov = { &c, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (sendmsg(sv[0], &m, 0) != 1)
		die_errno("sendmsg");
	if (poll(&p, 1, 0) < 0)
		die_errno("poll");
	if (sigaction(SIGUSR1, NULL, &sa) < 0 || sigprocmask(SIG_BLOCK, NULL, &set) < 0 ||
	    pthread_sigmask(SIG_BLOCK, NULL, &set) != 0)
		die_errno("sigaction/sigprocmask/pthread_sigmask");
	int tmp = open("/dev/null", O_WRONLY);
	if (tmp < 0 || pwrite(tmp, "z", 1, 0) != 1)
		die_errno("pwrite(/dev/null)");
	close(tmp), close(fd), close(sv[0]), close(sv[1]);
}

int main(int argc, char **argv)
{
	size_t mib = arg_ulong(argc, argv, 1, 64), nthreads = arg_ulong(argc, argv, 2, 2);
	size_t words = mib * MiB / sizeof(uint64_t) / (nthreads + 1);
	pthread_t tids[64];
	struct work w[65];
	if (nthreads > 64)
		die("at most 64 threads");
	for (size_t i = 0; i <= nthreads; i++) {
		w[i] = (struct work){ malloc(words * sizeof(uint64_t)), words, 0x1e7 + i };
		if (!w[i].buf)
			die_errno("malloc");
	}
	for (size_t i = 0; i < nthreads; i++)
		if (pthread_create(&tids[i], NULL, fill_and_check, &w[i + 1]) != 0)
			die("pthread_create failed");
	fill_and_check(&w[0]);
	for (size_t i = 0; i < nthreads; i++)
		pthread_join(tids[i], NULL);
	own_calls();

	unsigned long own_total = 0, foreign_total = 0;
	char list[512] = "";
	size_t used = 0;
	for (int i = 0; i < W_COUNT; i++) {
		own_total += own[i];
		foreign_total += foreign[i];
		if (foreign[i] && used < sizeof(list))
			used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s:%lu", used ? "," : "", names[i],
						 foreign[i]);
		if (own[i] < 1)
			die("the program's own %s() call was not seen by its interposer", names[i]);
	}
	/* printf's own write goes through libc's internal alias, not this interposer */
	printf("interpose own=%lu foreign=%lu foreign_names=%s\n", own_total, foreign_total, used ? list : "-");
	for (size_t i = 0; i <= nthreads; i++)
		free(w[i].buf);
	return 0;
}
