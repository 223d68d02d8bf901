/* uffd_floor.c: the floor for a userfaultfd fault served by a handler thread — the smallest
 * handler that can exist, to compare faultline's per-fault cost with.
 *
 * usage: uffd_floor PAGES HANDLER_CPU [FAULTER_CPU (0)] [REPS (1)] [VARIANT (plain)]
 *
 * One userfaultfd (from /dev/userfaultfd, else the syscall), no features. Each repetition maps a
 * fresh MAP_NORESERVE region of PAGES pages (no huge pages), registers it MISSING, and the main
 * thread, pinned to FAULTER_CPU, writes one byte to every page in address order. A handler
 * thread pinned to HANDLER_CPU blocks in read() for one message at a time and answers each with
 * UFFDIO_COPY of a zero page. The touch loop is timed with CLOCK_MONOTONIC; each repetition
 * prints
 *     uffd pages=N handler_cpu=H faulter_cpu=F ns_per_fault=X
 * A 256-page warm-up (not printed) runs first so that the handler's code and stack are hot.
 *
 * VARIANT adds, one at a time, the two kernel-side costs that faultline's design carries and
 * the minimal handler does not (bench rows 1e, 1f), so the gap between faultline and the floor
 * can be split into what the kernel charges for them and what faultline's own code costs:
 *   reader  a second handler thread, pinned to the other CPU, blocked in read() on the same
 *           userfaultfd: the kernel's wait there is not exclusive, so every message wakes it too
 *           (faultline runs one handler per CPU);
 *   perf    the faulting thread has a software page-fault event sampled at every fault (TID,
 *           ADDR, user registers, ring of 16 pages) and a task-clock counter: faultline's
 *           per-thread sampler (runtime/fault_sample.c), whose sample carries each fault's
 *           registers for its stack, and the task-clock its virtual time;
 *   both    the two together: faultline's kernel-side floor (bench row 1g). */
#include "bench.h"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef USERFAULTFD_IOC_NEW
#define USERFAULTFD_IOC_NEW _IO(0xAA, 0x00)
#endif

static char zero_page[BENCH_PAGE] __attribute__((aligned(BENCH_PAGE)));

static int open_uffd(void)
{
	int dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
	int fd = -1;
	if (dev >= 0) {
		fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC);
		close(dev);
	}
	if (fd < 0)
		fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
	if (fd < 0)
		bench_die_errno("userfaultfd (/dev/userfaultfd and the syscall)");
	struct uffdio_api api = { .api = UFFD_API, .features = 0 };
	if (ioctl(fd, UFFDIO_API, &api) < 0)
		bench_die_errno("ioctl(UFFDIO_API)");
	return fd;
}

static void pin_self(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	int err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (err)
		bench_die("pthread_setaffinity_np(cpu %d): %s", cpu, strerror(err));
}

struct handler_arg {
	int uffd;
	int cpu;
};

/* VARIANT perf: the faulting thread's page-fault sampler and task-clock, as faultline opens them. */
static void open_fault_sampler(void)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_PAGE_FAULTS;
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_ADDR | PERF_SAMPLE_READ | PERF_SAMPLE_REGS_USER;
	attr.read_format = PERF_FORMAT_GROUP;
	attr.sample_regs_user = 0xff01ffULL; /* ax bx cx dx si di bp sp ip (perf's 0-8), r8-r15 (16-23) */
	attr.exclude_hv = 1;
	int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd < 0)
		bench_die_errno("perf_event_open(page-fault sampler)");
	if (mmap(NULL, 17 * BENCH_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED)
		bench_die_errno("mmap(sampler ring)");
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	if (syscall(SYS_perf_event_open, &attr, 0, -1, fd, 0) < 0)
		bench_die_errno("perf_event_open(task-clock)");
}

/* Blocking read of one message, UFFDIO_COPY of the zero page, forever (exit ends it). */
static void *handler_main(void *p)
{
	struct handler_arg *a = p;
	pin_self(a->cpu);
	for (;;) {
		struct uffd_msg msg;
		ssize_t n = read(a->uffd, &msg, sizeof(msg));
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(msg))
			bench_die_errno("read(userfaultfd) = %zd", n);
		if (msg.event != UFFD_EVENT_PAGEFAULT)
			continue;
		struct uffdio_copy copy = {
			.dst = msg.arg.pagefault.address & ~(BENCH_PAGE - 1),
			.src = (uintptr_t)zero_page,
			.len = BENCH_PAGE,
		};
		if (ioctl(a->uffd, UFFDIO_COPY, &copy) < 0 && errno != EEXIST)
			bench_die_errno("ioctl(UFFDIO_COPY, %#llx)", (unsigned long long)copy.dst);
	}
	return NULL;
}

/* One repetition: map, register, touch every page once; returns ns per fault. */
static double touch_region(int uffd, size_t pages)
{
	size_t len = pages * BENCH_PAGE;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		bench_die_errno("mmap(%zu bytes)", len);
	madvise(p, len, MADV_NOHUGEPAGE);
	struct uffdio_register reg = {
		.range = { .start = (uintptr_t)p, .len = len },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};
	if (ioctl(uffd, UFFDIO_REGISTER, &reg) < 0)
		bench_die_errno("ioctl(UFFDIO_REGISTER, %zu bytes)", len);
	uint64_t t0 = bench_now_ns();
	for (size_t i = 0; i < pages; i++)
		((volatile char *)p)[i * BENCH_PAGE] = 1;
	uint64_t t1 = bench_now_ns();
	munmap(p, len);
	return (double)(t1 - t0) / (double)pages;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		bench_die("usage: uffd_floor PAGES HANDLER_CPU [FAULTER_CPU] [REPS]");
	size_t pages = bench_arg(argc, argv, 1, 16384);
	int handler_cpu = (int)bench_arg(argc, argv, 2, 0);
	int faulter_cpu = (int)bench_arg(argc, argv, 3, 0);
	unsigned reps = (unsigned)bench_arg(argc, argv, 4, 1);
	const char *variant = argc > 5 ? argv[5] : "plain";
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (handler_cpu >= ncpu || faulter_cpu >= ncpu)
		bench_die("cpu %d or %d does not exist (%ld online)", handler_cpu, faulter_cpu, ncpu);

	int uffd = open_uffd();
	pin_self(faulter_cpu);
	struct handler_arg arg = { uffd, handler_cpu };
	pthread_t th;
	int err = pthread_create(&th, NULL, handler_main, &arg);
	if (err)
		bench_die("pthread_create: %s", strerror(err));
	bool reader = strcmp(variant, "reader") == 0 || strcmp(variant, "both") == 0;
	bool perf = strcmp(variant, "perf") == 0 || strcmp(variant, "both") == 0;
	if (!reader && !perf && strcmp(variant, "plain") != 0)
		bench_die("unknown variant %s (plain, reader, perf, both)", variant);
	if (reader) {
		static struct handler_arg idle_reader;
		pthread_t idle;
		if (ncpu < 2)
			bench_die("variant reader needs 2 CPUs");
		idle_reader = (struct handler_arg){ uffd, handler_cpu == 0 ? 1 : 0 };
		err = pthread_create(&idle, NULL, handler_main, &idle_reader);
		if (err)
			bench_die("pthread_create(second reader): %s", strerror(err));
	}
	if (perf)
		open_fault_sampler();
	touch_region(uffd, 256);
	for (unsigned r = 0; r < reps; r++)
		printf("uffd pages=%zu handler_cpu=%d faulter_cpu=%d variant=%s ns_per_fault=%.1f\n", pages,
		       handler_cpu, faulter_cpu, variant, touch_region(uffd, pages));
	fflush(stdout);
	_exit(0); /* the handler thread is blocked in read(); exit takes it down */
}
