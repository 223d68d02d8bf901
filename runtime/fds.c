/* fds.c: keeps the runtime's long-lived file descriptors (the userfaultfd, the trace's files,
 * eventfds, pidfds, perf events, far-store files and sockets) out of the program's way.
 *
 * The runtime lives inside the program, so its descriptors share the program's table. A program
 * that closes every descriptor from 3 up (closefrom(3), as daemons do), that dup2s onto a fixed
 * number, or that starts with stdin or stdout closed (the runtime's first descriptor then takes
 * number 0) would close or replace the userfaultfd under the handlers: every fault after that
 * goes unserved, and evicted pages could read back as zeros. So each such descriptor is moved to
 * a number in the upper half of the soft RLIMIT_NOFILE, from 4096 at most (fcntl F_DUPFD_CLOEXEC:
 * the lowest free one there), away from the numbers programs pick, and marked in a bitmap. The shim consults the
 * bitmap (shim/fds.c): the program's close of a marked descriptor succeeds without closing it,
 * close_range and closefrom skip marked ones, and a dup2 onto one is refused. The runtime closes
 * its own through fl_sys_close (sys.c), which clears the mark.
 *
 * Even a moment below the floor is in the program's way: open(2) returns the lowest free number,
 * and a runtime thread that holds number 3 while the program opens a file gives the program 4
 * (close(0); open("/dev/null") is how daemons reopen stdin). A runtime thread that makes
 * descriptors while the program runs and needs them alone (the timeline's sampler: a perf group
 * per thread of the program) gives itself a table of its own, fl_fd_table_private; its numbers are
 * then neither moved nor marked. Below sys.c: raw system calls here. */
#include "fds.h"

#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define FD_MARK_BITS (1u << 21)          /* descriptors below 2 M can be marked (256 KiB reserved) */
#define FD_FLOOR_MAX 4096                /* kept descriptors start at most here */

static _Atomic(_Atomic uint64_t *) marks;  /* one bit per descriptor number, made on first use */
static _Atomic int floor_fd;             /* 0 until computed */
static _Atomic int high_fd;              /* one past the highest number ever marked */
static __thread bool table_private;      /* this thread has a table of its own (fl_fd_table_private) */

/* The lowest number a kept descriptor is moved to. */
static int fd_floor(void)
{
	int f = atomic_load_explicit(&floor_fd, memory_order_relaxed);
	if (f)
		return f;
	struct rlimit lim;
	uint64_t soft = getrlimit(RLIMIT_NOFILE, &lim) == 0 ? (uint64_t)lim.rlim_cur : 1024;
	if (soft > FD_MARK_BITS)
		soft = FD_MARK_BITS;
	f = (int)(soft / 2);
	if (f > FD_FLOOR_MAX) /* the kernel's table grows to the highest descriptor, and every fork copies it */
		f = FD_FLOOR_MAX;
	if (f < 3)
		f = 3;
	atomic_store_explicit(&floor_fd, f, memory_order_relaxed);
	return f;
}

static _Atomic uint64_t *mark_words(void)
{
	_Atomic uint64_t *m = atomic_load_explicit(&marks, memory_order_acquire);
	if (m)
		return m;
	void *mem = (void *)syscall(SYS_mmap, NULL, FD_MARK_BITS / 8, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (mem == MAP_FAILED)
		return NULL; /* no marks: the descriptors are still moved up, only not guarded */
	_Atomic uint64_t *made = mem;
	_Atomic uint64_t *expected = NULL;
	if (!atomic_compare_exchange_strong(&marks, &expected, made)) {
		syscall(SYS_munmap, mem, FD_MARK_BITS / 8);
		return expected;
	}
	return made;
}

static void mark(int fd)
{
	_Atomic uint64_t *m = fd >= 0 && (unsigned)fd < FD_MARK_BITS ? mark_words() : NULL;
	if (!m)
		return;
	atomic_fetch_or_explicit(&m[fd / 64], 1ull << (fd % 64), memory_order_release);
	int high = atomic_load_explicit(&high_fd, memory_order_relaxed);
	while (high <= fd && !atomic_compare_exchange_weak(&high_fd, &high, fd + 1))
		;
}

int fl_fd_keep(int fd)
{
	if (fd < 0 || table_private)
		return fd;
	int floor = fd_floor();
	if (fd < floor) {
		int moved = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, floor);
		if (moved >= 0) {
			syscall(SYS_close, fd);
			fd = moved;
		}
	}
	mark(fd);
	return fd;
}

int fl_fd_high(void)
{
	return atomic_load_explicit(&high_fd, memory_order_acquire);
}

void fl_fd_forget(int fd)
{
	if (table_private) /* the number is this thread's own: a mark of that number is another's */
		return;
	_Atomic uint64_t *m = atomic_load_explicit(&marks, memory_order_acquire);
	if (m && fd >= 0 && (unsigned)fd < FD_MARK_BITS) /* nothing marked yet: nothing to map */
		atomic_fetch_and_explicit(&m[fd / 64], ~(1ull << (fd % 64)), memory_order_release);
}

bool fl_fd_is_runtime(int fd)
{
	_Atomic uint64_t *m = atomic_load_explicit(&marks, memory_order_acquire);
	if (!m || fd < 0 || (unsigned)fd >= FD_MARK_BITS)
		return false;
	return atomic_load_explicit(&m[fd / 64], memory_order_acquire) & (1ull << (fd % 64));
}

int fl_fd_table_private(int keep)
{
	if (syscall(SYS_unshare, CLONE_FILES) < 0)
		return -1;
	table_private = true;
	/* the copy holds the program's descriptors too: closed at once, or a pipe's reader would wait
	 * for its end of file until this thread ends (close_range: Linux 5.9, older than the moves
	 * of pages the runtime needs) */
	if (keep > 0)
		syscall(SYS_close_range, 0, (unsigned)keep - 1, 0);
	syscall(SYS_close_range, keep < 0 ? 0 : (unsigned)keep + 1, ~0u, 0);
	return 0;
}
