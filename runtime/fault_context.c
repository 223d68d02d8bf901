/* fault_context.c: the faulting thread's side of a fault — its call stack and PMU values,
 * taken by the thread itself in a signal handler. This is the fallback: most faults get both
 * from their perf sample, taken by the handler while the thread sleeps (fault_sample.c,
 * remote_unwind.c: no signal, no system call). A fault comes here when it has no usable
 * sample: the thread's first fault (its perf group is opened here), a ring that overflowed,
 * faults inside system calls where perf_event_paranoid excludes the kernel, a machine
 * without perf sampling, a stack the handler could not unwind.
 *
 * Protocol, per such fault (fault.c): the handler installs the page without waking the
 * thread (UFFDIO_COPY_MODE_DONTWAKE), queues the stack signal to it with the fault's seq
 * (rt_tgsigqueueinfo), then wakes it. The signal ends the thread's wait; for a fault in user
 * mode its handler runs before the faulting instruction re-executes, with that instruction's
 * registers in the ucontext; for a fault inside a system call the kernel retries the copy (a
 * non-fatal signal does not abort it) and the handler runs when the call returns, so the
 * stack is that of the call's caller. Either way the instruction finds its page and no second
 * message comes: nothing is counted twice. The handler unwinds with libunwind's DWARF unwinder
 * (correct without frame pointers, exact faulting PC as frame 0) and writes a context record
 * {seq, stack_id, pmu} to its own stream; the fault record itself is written by the fault
 * handler regardless, so a thread that exits before its signal arrives loses only a stack.
 * Never surfacing to the program: SA_RESTART, errno saved, the signal kept unblocked (the shim
 * filters it out of the program's signal masks), the handler never allocates. */
#include "fault_context.h"
#include "context.h"
#include "alloc_log.h"
#include "stacks.h"
#include "stream.h"
#include "thread_slot.h"
#include "fault_sample.h"
#include "diag.h"

#include <errno.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

/* Set by the shim's system call wrappers while they release a deferred stack signal. */
__thread int fl_stack_deferred;

/* Frames the unwinder walks through before the interrupted one: this handler, the
 * signal trampoline, and a few to spare. */
#define HANDLER_FRAMES 8

static void on_stack_signal(int sig, siginfo_t *si, void *ucv)
{
	struct fl_runtime *rt = &fl_rt;
	int saved_errno = errno;
	ucontext_t *uc = ucv;
	uint64_t pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	void *raw[FL_MAX_STACK_DEPTH + HANDLER_FRAMES];
	uint64_t frames[FL_MAX_STACK_DEPTH];
	struct fl_fault_context ctx;
	struct fl_thread *t;
	unsigned n = 0;
	uint16_t flags = FL_STACK_EXACT_PC;
	int got, start = -1;

	int saved_in_runtime = fl_in_runtime_call;
	(void)sig;
	fl_in_runtime_call = 1; /* libunwind's own mmap calls stay out of the region */
	if (si->si_code != SI_QUEUE || si->si_pid != rt->pid || !(t = fl_thread_self())) {
		fl_in_runtime_call = saved_in_runtime;
		errno = saved_errno;
		return;
	}
	/* counters first: the unwinder may itself fault on the region (the loader's lists live in
	 * the heap), and that fault's context must not read earlier counters than this one */
	memset(&ctx, 0, sizeof(ctx));
	ctx.npmu = fl_sample_read_counters(t, ctx.pmu); /* opens the thread's group the first time */
	got = unw_backtrace(raw, (int)(rt->stack_depth + HANDLER_FRAMES));
	for (int i = 0; i < got && i < HANDLER_FRAMES; i++)
		if ((uint64_t)(uintptr_t)raw[i] == pc) {
			start = i;
			break;
		}
	if (start >= 0) {
		/* delivered when the shim's system call wrapper unblocked it (a fault inside the
		 * call): start at the wrapper's caller, a return address */
		int last_own = -1;
		for (int i = start; i < got && i < start + HANDLER_FRAMES; i++)
			if ((uintptr_t)raw[i] >= rt->own_text_start && (uintptr_t)raw[i] < rt->own_text_end)
				last_own = i;
		if (last_own >= 0) {
			start = last_own + 1;
			flags &= (uint16_t)~FL_STACK_EXACT_PC;
		}
	}
	if (start < 0) { /* the unwinder did not see through the signal frame: the PC alone */
		frames[n++] = pc;
		flags |= FL_STACK_TRUNCATED;
	} else {
		for (int i = start; i < got && n < rt->stack_depth; i++)
			frames[n++] = (uint64_t)(uintptr_t)raw[i];
		if (got == (int)(rt->stack_depth + HANDLER_FRAMES) || (unsigned)(got - start) > rt->stack_depth)
			flags |= FL_STACK_TRUNCATED;
	}
	uint64_t value = (uint64_t)(uintptr_t)si->si_value.sival_ptr;
	/* the signal carries the seq's low 32 bits: the fault is the latest one numbered with them
	 * (it was served moments ago; a signal 2^32 faults late is long past FL_LATE_STACK_MS) */
	uint64_t latest = atomic_load_explicit(&rt->next_seq, memory_order_relaxed);
	ctx.seq = latest - (uint32_t)((uint32_t)latest - (uint32_t)value);
	/* a signal taken long after it was sent, outside the shim's deferred system call window,
	 * was blocked where the shim cannot see it (a raw rt_sigprocmask): its stack would be the
	 * one of wherever the thread finally took it, so it gets none */
	uint32_t sent_ms = (uint32_t)(value >> 32), now_ms = (uint32_t)(fl_now_ns() / 1000000);
	if (!fl_stack_deferred && now_ms - sent_ms > FL_LATE_STACK_MS) {
		n = 0;
		atomic_fetch_add_explicit(&rt->late_stacks, 1, memory_order_relaxed);
	}
	ctx.tid = (uint32_t)t->tid;
	ctx.stack_id = n ? fl_stack_intern(&t->fault_stacks, frames, n, flags, false) : 0;
	fl_stream_append(&t->contexts, &ctx, sizeof(ctx), NULL, 0);
	atomic_fetch_add_explicit(&rt->contexts_written, 1, memory_order_relaxed);
	fl_in_runtime_call = saved_in_runtime;
	errno = saved_errno;
}

/* The highest real-time signal nobody handles (glibc keeps the first ones for itself). */
static int pick_signal(void)
{
	for (int sig = SIGRTMAX - 1; sig > SIGRTMIN + 2; sig--) {
		struct sigaction cur;
		if (fl_sys_sigaction(sig, NULL, &cur) == 0 && !(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_DFL)
			return sig;
	}
	return 0;
}

int fl_fault_context_setup(struct fl_runtime *rt)
{
	struct sigaction sa;
	rt->stack_signal = 0;
	if (rt->stack_depth == 0 || rt->sample == 0) /* no fault stacks (record --stack-depth 0, -s 0) */
		return 0;
	int sig = pick_signal();
	if (!sig) {
		fl_log("no free real-time signal: faults are recorded without stacks");
		return 0;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_stack_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (fl_sys_sigaction(sig, &sa, NULL) < 0) {
		fl_log_errno("sigaction(stack signal)", errno);
		return 0;
	}
	rt->stack_signal = sig;
	return 0;
}

bool fl_fault_context_request(struct fl_runtime *rt, uint32_t tid, uint32_t seq)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	si.si_signo = rt->stack_signal;
	si.si_code = SI_QUEUE;
	si.si_pid = rt->pid;
	si.si_uid = rt->uid;
	/* seq, and the time it was sent (ms, low 32 bits) for the lateness check */
	si.si_value.sival_ptr = (void *)(uintptr_t)(((uint64_t)(uint32_t)(fl_now_ns() / 1000000) << 32) | seq);
	if (syscall(SYS_rt_tgsigqueueinfo, rt->pid, tid, rt->stack_signal, &si) == 0) {
		atomic_fetch_add_explicit(&rt->stack_signals_sent, 1, memory_order_relaxed);
		return true;
	}
	atomic_fetch_add_explicit(&rt->stack_signals_failed, 1, memory_order_relaxed);
	return false;
}

int fl_fault_context_signal(void) { return fl_rt.stack_signal; }

/* The program installs a handler for the stack signal: it wins, and stacks that cannot come
 * from a sample are not taken from now on. */
void fl_fault_context_give_up_signal(void)
{
	int sig = fl_rt.stack_signal;
	if (!sig)
		return;
	fl_rt.stack_signal = 0;
	fl_log_u64("the program installs a handler for signal ", (uint64_t)sig,
		   ", which faultline uses for stacks: faults without a perf sample are recorded without stacks "
		   "from now on");
}

void fl_fault_context_keep_unblocked(void *set)
{
	if (fl_rt.stack_signal)
		sigdelset((sigset_t *)set, fl_rt.stack_signal);
}
