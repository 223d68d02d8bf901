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
 *     uffd pages=N handler_cpu=H faulter_cpu=F variant=V ns_per_fault=X [second_served=S]
 *          [samples=N lost=L]
 * A 256-page warm-up (not printed) runs first so that the handler's code and stack are hot.
 *
 * VARIANT adds, one at a time, the two kernel-side costs that faultline's design carries and
 * the minimal handler does not (bench rows 1e, 1f), so the gap between faultline and the floor
 * can be split into what the kernel charges for them and what faultline's own code costs:
 *   reader  a second handler thread, pinned to the other CPU, blocked in read() on the same
 *           userfaultfd: the kernel's wait there is not exclusive, so every message wakes it too
 *           (faultline runs one handler per CPU), and it answers the messages it wins, from the
 *           other CPU, as faultline's handlers do (second_served= says how many);
 *   perf    the faulting thread has a software page-fault event sampled at every fault (TID,
 *           ADDR, READ of the group, user registers, ring of 16 pages) with a task-clock counter
 *           in its group: faultline's per-thread sampler (runtime/fault_sample.c), whose sample
 *           carries each fault's registers for its stack, and the task-clock its virtual time.
 *           The handler walks and consumes the ring after each fault, as faultline's does, so
 *           every sample is written (samples= and lost= say so);
 *   both    the two together: faultline's kernel-side floor (bench row 1g). */
#include "bench.h"
#include "bench_uffd.h"

#include <fcntl.h>
#include <asm/perf_regs.h>
#include <linux/perf_event.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static char zero_page[BENCH_PAGE] __attribute__((aligned(BENCH_PAGE)));

static int open_uffd(void)
{
	int fd = bench_uffd_open(0, 0);
	if (fd < 0)
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
	_Atomic uint64_t served;   /* messages this handler answered */
};

/* VARIANT perf: the faulting thread's sampler ring, read by the handler after each fault (the
 * records walked and consumed, as faultline's handler does), and what it found. */
#define SAMPLER_RING_PAGES 16
static struct perf_event_mmap_page *sampler_ring;
static _Atomic int sampler_ring_busy;          /* with two handlers: one reads the ring at a time */
static _Atomic uint64_t samples_seen, samples_lost;

/* The general-purpose registers faultline samples (runtime/fault_sample.c: sampled_regs). */
static uint64_t sampled_regs_mask(void)
{
	static const int regs[] = {
		PERF_REG_X86_AX, PERF_REG_X86_BX, PERF_REG_X86_CX, PERF_REG_X86_DX, PERF_REG_X86_SI,
		PERF_REG_X86_DI, PERF_REG_X86_BP, PERF_REG_X86_SP, PERF_REG_X86_IP, PERF_REG_X86_R8,
		PERF_REG_X86_R9, PERF_REG_X86_R10, PERF_REG_X86_R11, PERF_REG_X86_R12, PERF_REG_X86_R13,
		PERF_REG_X86_R14, PERF_REG_X86_R15,
	};
	uint64_t mask = 0;
	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		mask |= 1ULL << regs[i];
	return mask;
}

/* VARIANT perf: the faulting thread's page-fault sampler and task-clock, opened as faultline's
 * runtime/fault_sample.c opens them (faults inside system calls too where allowed). */
static void open_fault_sampler(void)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_PAGE_FAULTS;
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_READ | PERF_SAMPLE_REGS_USER;
	attr.use_clockid = 1; /* the fault's time on CLOCK_MONOTONIC, as the runtime asks */
	attr.clockid = CLOCK_MONOTONIC;
	attr.read_format = PERF_FORMAT_GROUP;
	attr.sample_regs_user = sampled_regs_mask();
	attr.exclude_hv = 1;
	int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && errno == EACCES) { /* perf_event_paranoid excludes the kernel: user faults only */
		attr.exclude_kernel = 1;
		fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	}
	bool timed = true;
	if (fd < 0 && errno == EINVAL) { /* no use_clockid: samples without a time, as the runtime falls back */
		attr.sample_type &= ~(uint64_t)PERF_SAMPLE_TIME;
		attr.use_clockid = 0;
		timed = false;
		fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	}
	if (fd < 0)
		bench_die_errno("perf_event_open(software page-faults, sample_period 1, this thread)");
	void *ring = mmap(NULL, (1 + SAMPLER_RING_PAGES) * BENCH_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (ring == MAP_FAILED)
		bench_die_errno("mmap(sampler ring, %d pages)", 1 + SAMPLER_RING_PAGES);
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.read_format = PERF_FORMAT_GROUP;
	attr.exclude_hv = 1;
	attr.use_clockid = timed; /* a group's members share its leader's clock */
	attr.clockid = CLOCK_MONOTONIC;
	if (syscall(SYS_perf_event_open, &attr, 0, -1, fd, PERF_FLAG_FD_CLOEXEC) < 0)
		bench_die_errno("perf_event_open(task-clock, in the sampler's group)");
	sampler_ring = ring;
}

/* After a fault: walks the records the sampler wrote since the last call and consumes them (the
 * fault's sample is among them: it is written before the message is queued). */
static void consume_samples(void)
{
	struct perf_event_mmap_page *meta = sampler_ring;
	const char *data = (const char *)meta + BENCH_PAGE;
	const uint64_t size = SAMPLER_RING_PAGES * BENCH_PAGE;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE), tail = meta->data_tail;
	while (tail < head) {
		struct perf_event_header hdr;
		memcpy(&hdr, data + tail % size, sizeof(hdr)); /* records are 8-byte aligned: never split */
		if (hdr.size < sizeof(hdr))
			break;
		if (hdr.type == PERF_RECORD_SAMPLE) {
			samples_seen++;
		} else if (hdr.type == PERF_RECORD_LOST) {
			uint64_t lost[2]; /* id, lost */
			for (unsigned i = 0; i < 2; i++)
				memcpy(&lost[i], data + (tail + sizeof(hdr) + 8 * i) % size, 8);
			samples_lost += lost[1];
		}
		tail += hdr.size;
	}
	__atomic_store_n(&meta->data_tail, head, __ATOMIC_RELEASE);
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
		a->served++;
		int idle = 0;
		if (sampler_ring && atomic_compare_exchange_strong(&sampler_ring_busy, &idle, 1)) {
			consume_samples();
			atomic_store(&sampler_ring_busy, 0);
		}
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
		bench_die("usage: uffd_floor PAGES HANDLER_CPU [FAULTER_CPU] [REPS] [plain|reader|perf|both]");
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
	static struct handler_arg arg;
	arg.uffd = uffd;
	arg.cpu = handler_cpu;
	pthread_t th;
	int err = pthread_create(&th, NULL, handler_main, &arg);
	if (err)
		bench_die("pthread_create: %s", strerror(err));
	bool reader = strcmp(variant, "reader") == 0 || strcmp(variant, "both") == 0;
	bool perf = strcmp(variant, "perf") == 0 || strcmp(variant, "both") == 0;
	if (!reader && !perf && strcmp(variant, "plain") != 0)
		bench_die("unknown variant %s (plain, reader, perf, both)", variant);
	static struct handler_arg second = { .uffd = -1 };
	if (reader) {
		pthread_t th2;
		if (ncpu < 2)
			bench_die("variant %s needs 2 CPUs", variant);
		second.uffd = uffd;
		second.cpu = handler_cpu == 0 ? 1 : 0;
		err = pthread_create(&th2, NULL, handler_main, &second);
		if (err)
			bench_die("pthread_create(second reader): %s", strerror(err));
	}
	if (perf)
		open_fault_sampler();
	touch_region(uffd, 256);
	for (unsigned r = 0; r < reps; r++) {
		uint64_t served0 = second.served, seen0 = samples_seen, lost0 = samples_lost;
		double ns = touch_region(uffd, pages);
		printf("uffd pages=%zu handler_cpu=%d faulter_cpu=%d variant=%s ns_per_fault=%.1f", pages,
		       handler_cpu, faulter_cpu, variant, ns);
		if (reader) /* it also answers the messages it wins, from the other CPU, as faultline's do */
			printf(" second_served=%llu", (unsigned long long)(second.served - served0));
		if (perf)
			printf(" samples=%llu lost=%llu", (unsigned long long)(samples_seen - seen0),
			       (unsigned long long)(samples_lost - lost0));
		printf("\n");
	}
	fflush(stdout);
	_exit(0); /* the handler thread is blocked in read(); exit takes it down */
}
