/* sys.h: the runtime's system calls, straight to the kernel.
 *
 * libfaultline.so exports the shim's interposers (read, write, mmap, sigaction, ...), and a
 * plain call from inside the library binds to them, not to libc. The runtime must never enter
 * them: they are the program's view of the world (guards for the stack signal, region
 * bookkeeping), and a program that interposes the same names itself must see no call from
 * us. So every call the runtime makes that the shim (or a program) may interpose goes through
 * these wrappers. They return what the system call returns, with errno set as libc would. */
#ifndef FL_SYS_H
#define FL_SYS_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct iovec;
struct msghdr;
struct pollfd;

void *fl_sys_mmap(void *addr, size_t len, int prot, int flags, int fd, long off);
int fl_sys_munmap(void *addr, size_t len);
int fl_sys_madvise(void *addr, size_t len, int advice);
int fl_sys_mprotect(void *addr, size_t len, int prot);
void *fl_sys_mremap(void *old, size_t oldsz, size_t newsz, int flags, void *newaddr);
void *fl_sys_reserve(size_t bytes, const char *what); /* MAP_NORESERVE memory; NULL + message */

int fl_sys_close(int fd);
ssize_t fl_sys_read(int fd, void *buf, size_t n);
ssize_t fl_sys_write(int fd, const void *buf, size_t n);
size_t fl_sys_read_all(int fd, char *buf, size_t cap);   /* until EOF or full; bytes read */
ssize_t fl_sys_pread(int fd, void *buf, size_t n, off_t off);
ssize_t fl_sys_pwrite(int fd, const void *buf, size_t n, off_t off);
ssize_t fl_sys_recv(int fd, void *buf, size_t n, int flags);
ssize_t fl_sys_send(int fd, const void *buf, size_t n, int flags);
ssize_t fl_sys_sendmsg(int fd, const struct msghdr *m, int flags);
int fl_sys_poll(struct pollfd *fds, unsigned long n, int timeout_ms);
/* A private futex on WORD: sleeps while it holds EXPECTED, until DEADLINE_NS (CLOCK_MONOTONIC,
 * as fl_now_ns), a wake or a signal; wakes every sleeper. */
void fl_sys_futex_wait_until(_Atomic int *word, int expected, uint64_t deadline_ns);
void fl_sys_futex_wake_all(_Atomic int *word);
uint64_t fl_sys_thread_cpu_ns(void); /* the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID); 0 on error */
uint64_t fl_sys_cpu_ns_of(int tid);  /* thread tid's CPU time (the whole process's for -1); 0 on error
                                         or when the thread is gone */

/* Blocks every signal libc lets a thread block (glibc's sigfillset leaves out the two it uses
 * internally, so setuid() and thread cancellation in the program keep working). */
int fl_sys_block_all_signals(void);
int fl_sys_sigprocmask(int how, const sigset_t *set, sigset_t *old);
/* libc's sigaction (it sets up the return trampoline), never the shim's. */
int fl_sys_sigaction(int sig, const struct sigaction *act, struct sigaction *old);

/* import_patch.c: points the imports of `symbol` by loaded objects whose path contains
 * `library` at `replacement`; returns how many entries were rewritten */
unsigned fl_import_redirect(const char *library, const char *symbol, void *replacement);

#endif
