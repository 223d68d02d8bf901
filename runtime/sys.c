/* sys.c: raw system call wrappers of the runtime (see sys.h for why they exist). */
#include "sys.h"
#include "internal_thread.h"
#include "diag.h"
#include "fds.h"

#include <dlfcn.h>
#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void *fl_sys_mmap(void *addr, size_t len, int prot, int flags, int fd, long off)
{
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

int fl_sys_munmap(void *addr, size_t len) { return (int)syscall(SYS_munmap, addr, len); }
int fl_sys_madvise(void *addr, size_t len, int advice) { return (int)syscall(SYS_madvise, addr, len, advice); }
int fl_sys_mprotect(void *addr, size_t len, int prot) { return (int)syscall(SYS_mprotect, addr, len, prot); }

void *fl_sys_mremap(void *old, size_t oldsz, size_t newsz, int flags, void *newaddr)
{
	return (void *)syscall(SYS_mremap, old, oldsz, newsz, flags, newaddr);
}

int fl_sys_close(int fd)
{
	fl_fd_forget(fd); /* a descriptor of the runtime's no more (fds.c) */
	return (int)syscall(SYS_close, fd);
}
ssize_t fl_sys_read(int fd, void *buf, size_t n) { return syscall(SYS_read, fd, buf, n); }
ssize_t fl_sys_write(int fd, const void *buf, size_t n) { return syscall(SYS_write, fd, buf, n); }
ssize_t fl_sys_pread(int fd, void *buf, size_t n, off_t off) { return syscall(SYS_pread64, fd, buf, n, off); }
ssize_t fl_sys_pwrite(int fd, const void *buf, size_t n, off_t off) { return syscall(SYS_pwrite64, fd, buf, n, off); }

ssize_t fl_sys_recv(int fd, void *buf, size_t n, int flags)
{
	return syscall(SYS_recvfrom, fd, buf, n, flags, NULL, NULL);
}

ssize_t fl_sys_send(int fd, const void *buf, size_t n, int flags)
{
	return syscall(SYS_sendto, fd, buf, n, flags, NULL, 0);
}

ssize_t fl_sys_sendmsg(int fd, const struct msghdr *m, int flags) { return syscall(SYS_sendmsg, fd, m, flags); }

int fl_sys_poll(struct pollfd *fds, unsigned long n, int timeout_ms)
{
	struct timespec ts = { timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L };
	return (int)syscall(SYS_ppoll, fds, n, timeout_ms < 0 ? NULL : &ts, NULL, _NSIG / 8);
}

static uint64_t clock_cpu_ns(clockid_t clock)
{
	struct timespec ts;
	if (syscall(SYS_clock_gettime, clock, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void fl_sys_futex_wait_until(_Atomic int *word, int expected, uint64_t deadline_ns)
{
	struct timespec at = { (time_t)(deadline_ns / 1000000000ull), (long)(deadline_ns % 1000000000ull) };
	/* FUTEX_WAIT_BITSET takes an absolute time, on CLOCK_MONOTONIC without FUTEX_CLOCK_REALTIME */
	syscall(SYS_futex, word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, expected, &at, NULL, FUTEX_BITSET_MATCH_ANY);
}

void fl_sys_futex_wake_all(_Atomic int *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 0x7fffffff, NULL, NULL, 0);
}

uint64_t fl_sys_thread_cpu_ns(void)
{
	return clock_cpu_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* The kernel's per-thread CPU clock by thread id, as pthread_getcpuclockid makes it (no pthread_t
 * needed, so a thread that has exited, or a parent's thread id in a forked child, reads as 0). */
uint64_t fl_sys_cpu_ns_of(int tid)
{
	if (tid == 0)
		return 0;
	return clock_cpu_ns(tid < 0 ? CLOCK_PROCESS_CPUTIME_ID : (clockid_t)((~(unsigned)tid << 3) | 6));
}

int fl_sys_block_all_signals(void)
{
	sigset_t all;
	sigfillset(&all);
	return (int)syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, NULL, _NSIG / 8);
}

int fl_sys_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	static int (*libc_sigaction)(int, const struct sigaction *, struct sigaction *);
	if (!libc_sigaction)
		libc_sigaction = (int (*)(int, const struct sigaction *, struct sigaction *))dlsym(RTLD_NEXT, "sigaction");
	if (!libc_sigaction) {
		errno = ENOSYS;
		return -1;
	}
	return libc_sigaction(sig, act, old);
}

/* sigprocmask for the libraries the runtime calls (import_patch.c): the runtime's own threads
 * block every signal for good, so a change of mask there changes nothing and costs nothing;
 * elsewhere the system call itself. */
int fl_sys_sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	if (fl_internal_thread) {
		if (old)
			sigfillset(old);
		return 0;
	}
	return (int)syscall(SYS_rt_sigprocmask, how, set, old, _NSIG / 8);
}

/* Reads until end of file, or until buf is full; returns the bytes read (a /proc file's whole
 * text, for the runtime's small readers). */
size_t fl_sys_read_all(int fd, char *buf, size_t cap)
{
	size_t len = 0;
	while (len < cap) {
		ssize_t r = fl_sys_read(fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	return len;
}

/* Anonymous memory of the runtime's own, reserved without commitment (MAP_NORESERVE: only the
 * pages touched are backed); NULL, with a message naming `what`, when it cannot be had. */
void *fl_sys_reserve(size_t bytes, const char *what)
{
	void *p = fl_sys_mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		fl_log_errno(what, errno);
		return NULL;
	}
	return p;
}
