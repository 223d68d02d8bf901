/* fault_sample.c: each application thread's perf group — the PMU context of its faults and,
 * for the fault handlers, the registers it faulted with — read without a signal or a syscall.
 *
 * Why. A fault's stack and counters used to be taken by the faulting thread itself, in a
 * signal sent by the handler: on this kind of VM the signal (send, delivery, sigreturn, an
 * extra context switch) and the counter read() cost 30-50 % of a fault (bench row 1).
 * The kernel can hand both over for free: a software page-fault event sampled at every fault
 * (sample_period 1) fires exactly once per userfaultfd fault, in the faulting thread, *before*
 * the message is queued (docs/design.md, measured facts), and its sample carries the thread id, the
 * faulting address, the thread's user registers (for a fault inside a system call: those of
 * the call, so the stack is the caller's) and the values of the whole group (PERF_SAMPLE_READ:
 * the --pmu events are its members). The handler that reads the message finds the sample in
 * the thread's ring, unwinds the stack from those registers while the thread still sleeps in
 * its fault (remote_unwind.c), and only then installs the page and wakes the thread.
 *
 * Per thread: the group is opened by the thread itself on its first fault context (the signal
 * path of fault_context.c, which remains the fallback for every fault without a usable sample:
 * a thread's first fault, a ring that overflowed, kernel faults where perf_event_paranoid
 * excludes the kernel, a machine without perf). Its ring (FL_SAMPLE_RING_PAGES) is registered
 * in a table by tid, which handlers probe without locks; a handler owns a ring while it reads
 * it (`busy`), and the exiting thread waits for that before unmapping it. Page faults of the
 * thread outside the region also leave samples; they are skipped when the ring is read.
 *
 * Virtual time: the group always counts the thread's task-clock (a --pmu event, or an extra
 * member when the --pmu events lack it), so every sample says how much CPU time the thread had
 * used at the fault: the fault record's thread_time_ns, the program's own time axis, at no cost
 * per fault. The sample's time (PERF_SAMPLE_TIME on CLOCK_MONOTONIC, the runtime's clock) is when
 * the thread faulted: the fault record's wait_ns is from then to the handler reading the message
 * (where the kernel refuses use_clockid, samples go without a time and wait_ns stays 0). */
#include "context.h"
#include "pmu.h"
#include "fault_sample.h"
#include "diag.h"
#include "faultline/env.h"

#include <asm/perf_regs.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define FL_SAMPLE_RING_PAGES 16          /* data pages of a thread's ring: ~300 samples */
#define REGISTRY_SLOTS 8192              /* tid -> thread, open addressing */
#define REGISTRY_PROBES 64
#define TOMBSTONE (-1)

/* The general-purpose registers sampled, in the order perf writes them (bit order). */
static const int sampled_regs[FL_SAMPLE_NREGS] = {
	PERF_REG_X86_AX, PERF_REG_X86_BX, PERF_REG_X86_CX, PERF_REG_X86_DX, PERF_REG_X86_SI,
	PERF_REG_X86_DI, PERF_REG_X86_BP, PERF_REG_X86_SP, PERF_REG_X86_IP, PERF_REG_X86_R8,
	PERF_REG_X86_R9, PERF_REG_X86_R10, PERF_REG_X86_R11, PERF_REG_X86_R12, PERF_REG_X86_R13,
	PERF_REG_X86_R14, PERF_REG_X86_R15,
};

struct registry_slot {
	_Atomic int32_t tid;                 /* 0 = never used, TOMBSTONE = freed */
	struct fl_thread *thread;
};

static struct registry_slot *registry;
static bool sampling;                    /* this machine lets us sample page faults */
static bool sampling_kernel;             /* ... including faults inside system calls */
static bool sampling_time;               /* ... with the fault's time (CLOCK_MONOTONIC) */

static uint64_t regs_mask(void)
{
	uint64_t mask = 0;
	for (int i = 0; i < FL_SAMPLE_NREGS; i++)
		mask |= 1ULL << sampled_regs[i];
	return mask;
}

static bool is_task_clock(uint32_t type, uint64_t config)
{
	return type == PERF_TYPE_SOFTWARE && config == PERF_COUNT_SW_TASK_CLOCK;
}

/* A member of the sampled group: the kernel refuses members on another clock than the leader's. */
static void member_clock(const struct fl_sampler *s, struct perf_event_attr *attr)
{
	if (s->sampled && sampling_time) {
		attr->use_clockid = 1;
		attr->clockid = CLOCK_MONOTONIC;
	}
}

/* Adds task-clock to a sampled group whose --pmu events lack it (its values come with every
 * sample: the fault's virtual time). */
static void add_task_clock(struct fl_runtime *rt, struct fl_sampler *s, unsigned opened)
{
	struct perf_event_attr attr;
	s->task_clock_slot = -1;
	s->extra_task_clock = false;
	if (!s->sampled)
		return;
	for (unsigned i = 0; i < opened; i++)
		if (is_task_clock(rt->pmu_type[i], rt->pmu_config[i])) {
			s->task_clock_slot = (int)(1 + i);
			return;
		}
	if (opened < rt->pmu_count)
		return; /* a --pmu member failed: the group's layout is not what the readers expect */
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.read_format = PERF_FORMAT_GROUP;
	attr.exclude_hv = 1;
	member_clock(s, &attr);
	int fd = fl_perf_event_open(0, &attr, s->leader_fd);
	if (fd < 0)
		return;
	s->member_fds[s->nmembers++] = fd;
	s->extra_task_clock = true;
	s->task_clock_slot = (int)(1 + opened);
}

static void sampler_attr(struct perf_event_attr *attr, bool kernel, bool with_time)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_PAGE_FAULTS;
	attr->sample_period = 1;
	attr->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_ADDR | PERF_SAMPLE_READ | PERF_SAMPLE_REGS_USER;
	if (with_time) {
		attr->sample_type |= PERF_SAMPLE_TIME;
		attr->use_clockid = 1;
		attr->clockid = CLOCK_MONOTONIC;
	}
	attr->read_format = PERF_FORMAT_GROUP;
	attr->sample_regs_user = regs_mask();
	attr->exclude_kernel = !kernel;
	attr->exclude_hv = 1;
}

/* Which kind of sampling this machine allows, probed once (an event on the calling thread). */
int fl_sample_setup(struct fl_runtime *rt)
{
	struct perf_event_attr attr;
	registry = fl_sys_reserve(REGISTRY_SLOTS * sizeof(*registry), "mmap(sampler registry)");
	if (!registry)
		return 0; /* stacks and counters come through the signal path */
	const char *source = getenv(FL_ENV_STACK_SOURCE);
	if (source && strcmp(source, "signal") == 0)
		return 0; /* every stack through the signal path (fault_context.c) */
	/* no fault stacks (record --stack-depth 0 or -s 0, sweep's default), so no fault context
	 * (fault.c takes a fault's PMU values with its stack): nothing would read a sample, and the
	 * kernel writing one at every page fault costs 1-1.5 us each */
	if (rt->stack_depth == 0 || rt->sample == 0)
		return 0;
	for (int with_time = 1; with_time >= 0 && !sampling; with_time--)
		for (int kernel = 1; kernel >= 0 && !sampling; kernel--) {
			sampler_attr(&attr, kernel, with_time);
			int fd = fl_perf_event_open(0, &attr, -1);
			if (fd >= 0) {
				fl_sys_close(fd);
				sampling = true;
				sampling_kernel = kernel;
				sampling_time = with_time;
			}
		}
	return 0;
}

static struct registry_slot *registry_find(int32_t tid)
{
	uint32_t h = (uint32_t)tid * 2654435761u;
	for (unsigned probe = 0; probe < REGISTRY_PROBES; probe++) {
		struct registry_slot *s = &registry[(h + probe) % REGISTRY_SLOTS];
		int32_t seen = atomic_load_explicit(&s->tid, memory_order_acquire);
		if (seen == tid)
			return s;
		if (seen == 0)
			return NULL;
	}
	return NULL;
}

static bool registry_add(struct fl_thread *t)
{
	uint32_t h = (uint32_t)t->tid * 2654435761u;
	struct registry_slot *same = registry_find(t->tid);
	if (same) { /* a thread that ended left its entry, and the kernel reused its tid */
		same->thread = t;
		return true;
	}
	for (unsigned probe = 0; probe < REGISTRY_PROBES; probe++) {
		struct registry_slot *s = &registry[(h + probe) % REGISTRY_SLOTS];
		int32_t seen = atomic_load_explicit(&s->tid, memory_order_acquire);
		if (seen != 0 && seen != TOMBSTONE)
			continue;
		/* only this thread writes slots of its tid; other threads claim by CAS */
		s->thread = t;
		if (atomic_compare_exchange_strong(&s->tid, &seen, t->tid))
			return true;
	}
	return false;
}

/* Opens the thread's group: the sampled page-fault leader (when the machine allows) with the
 * --pmu events as members, or the --pmu events alone. Called by the thread itself, in the
 * stack signal's handler or in normal code: system calls only. */
static void open_group(struct fl_runtime *rt, struct fl_thread *t)
{
	struct fl_sampler *s = &t->sampler;
	struct perf_event_attr attr;
	int leader = -1;

	s->leader_fd = -1;
	s->nmembers = 0;
	s->ring = NULL;
	atomic_store(&s->busy, 0);
	if (sampling && registry) {
		sampler_attr(&attr, sampling_kernel, sampling_time);
		leader = fl_perf_event_open(0, &attr, -1);
		if (leader >= 0) {
			size_t len = (1 + FL_SAMPLE_RING_PAGES) * FL_PAGE_SIZE;
			void *ring = fl_sys_mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, leader, 0);
			if (ring == MAP_FAILED) { /* locked-memory limit (perf_event_mlock_kb) */
				fl_sys_close(leader);
				leader = -1;
			} else {
				s->ring = ring;
				s->sampled = true;
			}
		}
	}
	s->leader_fd = leader;
	s->task_clock_slot = -1;
	s->extra_task_clock = false;
	unsigned opened = 0;
	for (unsigned i = 0; i < rt->pmu_count; i++) {
		fl_pmu_attr(rt, i, &attr);
		if (s->leader_fd >= 0)
			member_clock(s, &attr);
		int fd = fl_perf_event_open(0, &attr, s->leader_fd >= 0 ? s->leader_fd : -1);
		if (fd < 0)
			break;
		if (s->leader_fd < 0) {
			s->leader_fd = fd; /* no sampler: the first --pmu event leads */
			s->sampled = false;
		} else {
			s->member_fds[s->nmembers++] = fd;
		}
		opened++;
	}
	add_task_clock(rt, s, opened);
	if (s->ring && !registry_add(t)) {
		fl_sys_munmap(s->ring, (1 + FL_SAMPLE_RING_PAGES) * FL_PAGE_SIZE);
		s->ring = NULL;
	}
}

void fl_sample_thread_start(struct fl_thread *t)
{
	if (t->sampler.tried)
		return;
	t->sampler.tried = true;
	open_group(&fl_rt, t);
}

static void close_group(struct fl_sampler *s, bool unmap)
{
	if (s->ring && unmap)
		fl_sys_munmap(s->ring, (1 + FL_SAMPLE_RING_PAGES) * FL_PAGE_SIZE);
	s->ring = NULL;
	for (unsigned i = 0; i < s->nmembers; i++)
		fl_sys_close(s->member_fds[i]);
	if (s->leader_fd >= 0)
		fl_sys_close(s->leader_fd);
	s->leader_fd = -1;
	s->nmembers = 0;
	s->tried = false;
	s->sampled = false;
	s->task_clock_slot = -1;
	s->extra_task_clock = false;
}

/* At thread exit: leave the table, wait until no handler reads the ring, release it. */
void fl_sample_thread_stop(struct fl_thread *t)
{
	struct fl_sampler *s = &t->sampler;
	if (s->ring && registry) {
		struct registry_slot *slot = registry_find(t->tid);
		if (slot && slot->thread == t)
			atomic_store_explicit(&slot->tid, TOMBSTONE, memory_order_release);
		while (atomic_load_explicit(&s->busy, memory_order_acquire))
			sched_yield();
	}
	close_group(s, true);
}

/* Forgets what is known of the slot's stack (under `busy`: a handler may be reading it) and
 * records whose it is now: `thread_pointer` 0 when the thread ends. */
static void stack_knowledge_reset(struct fl_sampler *s, uint64_t thread_pointer, bool main_thread)
{
	int expect = 0;
	while (!atomic_compare_exchange_weak(&s->busy, &expect, 1)) {
		expect = 0;
		sched_yield();
	}
	s->stack_lo = s->stack_hi = 0;
	s->mapping_lo = s->mapping_hi = 0;
	s->mapping_looked_up = thread_pointer == 0;
	s->thread_pointer = thread_pointer;
	s->main_thread = main_thread;
	atomic_store_explicit(&s->busy, 0, memory_order_release);
}

/* When the thread ends (its pthread key destructor): the pages of its stack known to be
 * readable are forgotten, since the stack may be unmapped once the thread is gone. */
void fl_sample_thread_ended(struct fl_thread *t)
{
	stack_knowledge_reset(&t->sampler, 0, false);
}

/* When a thread takes the slot (fl_thread_self, on the thread): its thread pointer, by which
 * the unwinder finds its stack mapping. No system call, no allocation. */
void fl_sample_thread_begins(struct fl_thread *t)
{
	stack_knowledge_reset(&t->sampler, (uint64_t)(uintptr_t)pthread_self(), t->tid == fl_rt.pid);
}

/* In a forked child: the events belong to the parent's threads. Their fds and rings are
 * dropped (the parent keeps its own), and the child's threads open groups of their own. */
void fl_sample_after_fork(struct fl_thread *t)
{
	close_group(&t->sampler, true);
}

void fl_sample_registry_after_fork(void)
{
	if (registry)
		fl_sys_madvise(registry, REGISTRY_SLOTS * sizeof(*registry), MADV_DONTNEED);
}

/* The thread's counter values now (the --pmu events, in their order): one read(2). */
unsigned fl_sample_read_counters(struct fl_thread *t, uint64_t *values)
{
	struct fl_sampler *s = &t->sampler;
	uint64_t buf[3 + FL_PMU_MAX];
	fl_sample_thread_start(t);
	if (s->leader_fd < 0)
		return 0;
	ssize_t r = fl_sys_read(s->leader_fd, buf, sizeof(buf));
	if (r < (ssize_t)sizeof(uint64_t) || buf[0] > 2 + FL_PMU_MAX)
		return 0;
	unsigned first = s->sampled ? 1 : 0; /* the sampler's own count is not a --pmu event */
	uint64_t end = buf[0] - (s->extra_task_clock ? 1 : 0); /* nor the extra task-clock */
	unsigned n = 0;
	for (uint64_t i = first; i < end && n < FL_PMU_MAX; i++)
		values[n++] = buf[1 + i];
	return n;
}

/* Copies a ring record that may wrap around the end of the data area. */
static const void *ring_record(const char *data, size_t size, uint64_t at, size_t len, void *scratch)
{
	size_t off = at % size;
	if (off + len <= size)
		return data + off;
	memcpy(scratch, data + off, size - off);
	memcpy((char *)scratch + (size - off), data, len - (size - off));
	return scratch;
}

/* Parses one PERF_RECORD_SAMPLE (layout fixed by sampler_attr and the group of S); false if it
 * is not ours. */
static bool parse_sample(const struct perf_event_header *hdr, const struct fl_sampler *sampler,
			 struct fl_fault_sample *out)
{
	const uint64_t *w = (const uint64_t *)(hdr + 1);
	const uint64_t *end = (const uint64_t *)((const char *)hdr + hdr->size);
	if (w + 4 > end)
		return false;
	out->tid = (uint32_t)(w[0] >> 32);
	w++;
	out->time_ns = sampling_time ? *w++ : 0; /* perf's order: TID, TIME, ADDR, READ, REGS_USER */
	out->addr = *w++;
	uint64_t nr = *w++;
	if (nr > 2 + FL_PMU_MAX || w + nr + 1 > end)
		return false;
	/* without the sampler's own count, and without the extra task-clock */
	uint64_t npmu = nr > 0 ? nr - 1 - (sampler->extra_task_clock && nr > 1 ? 1 : 0) : 0;
	out->npmu = npmu > FL_PMU_MAX ? FL_PMU_MAX : (unsigned)npmu;
	for (uint64_t i = 0; i < out->npmu; i++)
		out->pmu[i] = w[1 + i];
	int slot = sampler->task_clock_slot;
	out->task_clock_ns = slot > 0 && (uint64_t)slot < nr ? w[slot] : 0;
	w += nr;
	uint64_t abi = *w++;
	if (abi == PERF_SAMPLE_REGS_ABI_NONE || w + FL_SAMPLE_NREGS > end)
		return false;
	memcpy(out->regs, w, sizeof(out->regs));
	out->in_kernel = (hdr->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
	return true;
}

/* Handler side: the sample of thread `tid`'s fault on the page at `page_addr`, taken from its
 * ring (everything older is consumed). False when there is none: the caller falls back. */
bool fl_sample_take(uint32_t tid, uint64_t page_addr, struct fl_fault_sample *out)
{
	struct registry_slot *slot;
	struct fl_thread *t;
	int expect = 0;
	bool found = false;
	uint64_t scratch[64];

	if (!registry || !(slot = registry_find((int32_t)tid)))
		return false;
	t = slot->thread;
	if (!t || !atomic_compare_exchange_strong(&t->sampler.busy, &expect, 1))
		return false;
	if (atomic_load_explicit(&slot->tid, memory_order_acquire) != (int32_t)tid || slot->thread != t ||
	    !t->sampler.ring) {
		atomic_store_explicit(&t->sampler.busy, 0, memory_order_release);
		return false;
	}
	struct perf_event_mmap_page *meta = t->sampler.ring;
	const char *data = (const char *)meta + FL_PAGE_SIZE;
	size_t size = FL_SAMPLE_RING_PAGES * FL_PAGE_SIZE;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail;
	while (tail < head) {
		struct perf_event_header hdr;
		memcpy(&hdr, ring_record(data, size, tail, sizeof(hdr), scratch), sizeof(hdr));
		if (hdr.size < sizeof(hdr) || hdr.size > sizeof(scratch) || tail + hdr.size > head)
			break;
		if (hdr.type == PERF_RECORD_SAMPLE) {
			const struct perf_event_header *rec = ring_record(data, size, tail, hdr.size, scratch);
			struct fl_fault_sample s;
			/* the fault's sample is the thread's last: it has slept in the fault since. A
			 * match followed by other samples belongs to an earlier fault on the page (or
			 * the thread has run on): none is taken */
			found = parse_sample(rec, &t->sampler, &s) && s.tid == tid && (s.addr & ~(FL_PAGE_SIZE - 1)) == page_addr;
			if (found)
				*out = s;
		}
		tail += hdr.size;
	}
	__atomic_store_n(&meta->data_tail, head, __ATOMIC_RELEASE);
	out->thread = t;
	if (!found)
		atomic_store_explicit(&t->sampler.busy, 0, memory_order_release);
	return found;
}

/* Ends fl_sample_take's ownership of the thread's ring (after the unwinder used it). */
void fl_sample_release(struct fl_fault_sample *s)
{
	FL_ASSERT(atomic_load(&s->thread->sampler.busy) == 1);
	atomic_store_explicit(&s->thread->sampler.busy, 0, memory_order_release);
}

/* Register number -> the sampled value, for the unwinder (perf's numbering). */
uint64_t fl_sample_reg(const struct fl_fault_sample *s, int perf_reg)
{
	for (int i = 0; i < FL_SAMPLE_NREGS; i++)
		if (sampled_regs[i] == perf_reg)
			return s->regs[i];
	return 0;
}
