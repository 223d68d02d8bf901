/* signals.c: keeps the trace when the program dies of a signal.
 *
 * For every signal whose default action ends the process, while the program's disposition is
 * the default, the shim installs a handler of its own in its place: it flushes the records and
 * writes stats.json, then restores the default action and sends the signal again, so the
 * process dies exactly as it would have (same status, core dump if any). The program never
 * sees the difference: sigaction() and signal() report SIG_DFL (with the mask and flags it
 * set) for these signals, and a handler the program installs replaces ours as usual.
 * SIGKILL cannot be caught: what the handlers wrote until then (they flush every 100 ms when
 * idle) stays readable.
 *
 * Signals come in bursts: `timeout`, a batch scheduler or a terminal signal the whole process
 * group, and `record` forwards what it gets, so the program often takes the same signal twice.
 * The first one to arrive does the shutdown; one that arrives meanwhile (on another thread:
 * process-directed signals go to any thread that does not block them) waits for it instead of
 * killing the process halfway through writing its trace. The handler keeps standing in until
 * the shutdown is done, then restores the default action and sends the signal again. An
 * asynchronous signal (kill, a terminal) that lands while its thread is inside a record append
 * (holding that stream's lock, which the shutdown must take) is deferred to the append's end
 * (runtime/stream.c), so the shutdown never waits for a lock its own thread holds.
 *
 * The runtime's stack signal (fault_context.c) must reach a faulting thread promptly, so the
 * shim removes it from every mask the program sets (sigprocmask, pthread_sigmask, the masks
 * of its handlers). If the program installs a handler for that very signal, the program wins
 * and faults are recorded without stacks from then on.
 *
 * The runtime's own two signals (that stack signal, and the one that wakes the fault handlers,
 * handler.c) keep the runtime's handlers when the program sets them to SIG_DFL or SIG_IGN, as
 * git does in every child between fork and exec, and `env --default-signal` or a daemon does for
 * every signal: the runtime's next wake-up would otherwise kill the process, or be lost. What the
 * program set is kept for it to read back. A handler of the program's own for the handlers'
 * signal is kept that way too, and never runs (it would run on a fault handler's thread), with a
 * message. */
#include "shim.h"
#include "../runtime/runtime_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static const int fatal_signals[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGUSR1, SIGSEGV, SIGUSR2, SIGPIPE,
	SIGALRM, SIGTERM, SIGSTKFLT, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGIO, SIGPWR, SIGSYS,
};

/* Per signal: true while our handler stands in for the program's SIG_DFL, with what it set. */
static _Atomic bool standing_in[NSIG];
static struct sigaction program_default[NSIG];

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

static int real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	static sigaction_fn real;
	if (!real)
		real = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
	return real(sig, act, old);
}

static bool is_fatal(int sig)
{
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++)
		if (fatal_signals[i] == sig)
			return true;
	return false;
}

/* Signals the kernel raises for the instruction that runs (a fault, a trap): they cannot wait
 * for the end of an append, the instruction would raise them again. */
static bool is_synchronous(int sig, const siginfo_t *info)
{
	bool from_instruction = sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGTRAP ||
				sig == SIGSYS;
	return from_instruction && info && info->si_code > 0;
}

/* The thread doing the shutdown: 0 until a fatal signal arrives. */
static _Atomic pid_t dying_thread;

static void on_fatal_signal(int sig, siginfo_t *info, void *uc)
{
	char why[32];
	struct fl_buf b = { why, 0, sizeof(why) };
	pid_t self = (pid_t)syscall(SYS_gettid), expected = 0;
	(void)uc;
	if (fl_runtime_in_vfork_child()) {
		/* a vfork child shares the traced process's memory, not its signal actions: it dies as it
		 * would have, and claims nothing (a claim it took would make the parent's own fatal signal
		 * wait for ever for a shutdown that never comes) */
		struct sigaction dfl = { .sa_handler = SIG_DFL };
		real_sigaction(sig, &dfl, NULL);
		syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
		return;
	}
	if (fl_fatal_defer && !is_synchronous(sig, info)) {
		fl_fatal_pending = sig; /* raised again when the append ends (stream.c) */
		return;
	}
	if (!atomic_compare_exchange_strong(&dying_thread, &expected, self)) {
		/* another thread is writing the trace and will end the process: wait for it. A
		 * synchronous signal of this very thread (the shutdown itself faulted) dies now. */
		if (expected != self)
			for (;;)
				pause();
		struct sigaction dfl = { .sa_handler = SIG_DFL };
		real_sigaction(sig, &dfl, NULL);
		return;
	}
	fl_buf_str(&b, "signal ");
	fl_buf_u64(&b, (uint64_t)sig);
	fl_runtime_shutdown(why);
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	real_sigaction(sig, &dfl, NULL);
	atomic_store(&standing_in[sig], false);
	/* blocked by the handler's mask until it returns, then delivered with the default action */
	syscall(SYS_tgkill, getpid(), self, sig);
	/* a fault-generated signal (SIGSEGV on an access) fires again when we return */
}

static int stand_in(int sig, const struct sigaction *program_act)
{
	struct sigaction ours;
	memset(&ours, 0, sizeof(ours));
	ours.sa_sigaction = on_fatal_signal;
	ours.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&ours.sa_mask);
	if (program_act)
		program_default[sig] = *program_act;
	else
		memset(&program_default[sig], 0, sizeof(program_default[sig]));
	program_default[sig].sa_handler = SIG_DFL;
	int r = real_sigaction(sig, &ours, NULL);
	if (r == 0)
		atomic_store(&standing_in[sig], true);
	return r;
}

/* Called once the runtime is ready: stand in for every fatal signal left at its default. */
void fl_shim_signals_start(void)
{
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++) {
		struct sigaction cur;
		int sig = fatal_signals[i];
		if (real_sigaction(sig, NULL, &cur) == 0 && !(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_DFL)
			stand_in(sig, &cur);
	}
}

/* What the program set for the runtime's own signals (runtime_signal_set), to read back. */
static struct sigaction runtime_signal_view[NSIG];

static bool is_default_or_ignore(const struct sigaction *act)
{
	return !(act->sa_flags & SA_SIGINFO) && (act->sa_handler == SIG_DFL || act->sa_handler == SIG_IGN);
}

/* sigaction() for one of the runtime's signals: true when it was answered here (the runtime's
 * handler stays); false when the program's handler takes the stack signal (it wins). */
static bool runtime_signal_set(int sig, const struct sigaction *act, struct sigaction *old)
{
	bool stack = sig == fl_fault_context_signal(), wake = sig == fl_handler_signal();
	if (!stack && !wake)
		return false;
	if (act && stack && !is_default_or_ignore(act)) {
		fl_fault_context_give_up_signal();
		return false;
	}
	if (act && wake && !is_default_or_ignore(act)) {
		static _Atomic bool said;
		if (!atomic_exchange(&said, true))
			fl_log_u64("the program installs a handler for signal ", (uint64_t)sig,
				   ", which faultline uses to wake its fault handlers: the program's handler "
				   "will not run");
	}
	if (old)
		*old = runtime_signal_view[sig];
	if (act)
		runtime_signal_view[sig] = *act;
	return true;
}

/* The program's handlers must not block the stack signal while they run. */
static const struct sigaction *without_stack_signal(const struct sigaction *act, struct sigaction *copy)
{
	if (!act || !fl_fault_context_signal())
		return act;
	*copy = *act;
	fl_fault_context_keep_unblocked(&copy->sa_mask);
	return copy;
}

FL_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction filtered;
	/* a vfork child (a shell resetting its signals before exec) has signal actions of its own but
	 * shares our memory: what it sets must not change what the traced process is said to have */
	if (fl_runtime_in_vfork_child())
		return real_sigaction(sig, act, old);
	if (atomic_load(&fl_rt_state) == FL_RT_READY && sig > 0 && sig < NSIG) {
		if (runtime_signal_set(sig, act, old))
			return 0;
		act = without_stack_signal(act, &filtered);
	}
	if (sig <= 0 || sig >= NSIG || !is_fatal(sig) || atomic_load(&fl_rt_state) != FL_RT_READY)
		return real_sigaction(sig, act, old);
	bool was_standing_in = atomic_load(&standing_in[sig]);
	struct sigaction previous;
	if (real_sigaction(sig, NULL, &previous) < 0)
		return -1;
	if (act && !(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_DFL) {
		if (stand_in(sig, act) < 0)
			return -1;
	} else if (act) {
		if (real_sigaction(sig, act, NULL) < 0)
			return -1;
		atomic_store(&standing_in[sig], false);
	}
	if (old)
		*old = was_standing_in ? program_default[sig] : previous;
	return 0;
}

/* Signal masks: the stack signal stays deliverable whatever the program blocks, so a faulting
 * thread always gets to take its stack. */
typedef int (*sigmask_fn)(int, const sigset_t *, sigset_t *);

static int filtered_mask(const char *name, int how, const sigset_t *set, sigset_t *old)
{
	static sigmask_fn real_fns[2];
	int which = name[0] == 'p'; /* pthread_sigmask or sigprocmask */
	if (!real_fns[which])
		real_fns[which] = (sigmask_fn)dlsym(RTLD_NEXT, name);
	sigset_t copy;
	/* not for the runtime's own calls (libunwind saving and restoring the mask inside the
	 * stack signal's handler, where the signal must stay blocked) */
	if (set && how != SIG_UNBLOCK && fl_fault_context_signal() && !fl_in_runtime_call &&
	    atomic_load(&fl_rt_state) == FL_RT_READY) {
		copy = *set;
		fl_fault_context_keep_unblocked(&copy);
		set = &copy;
	}
	return real_fns[which](how, set, old);
}

FL_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	return filtered_mask("pthread_sigmask", how, set, old);
}

FL_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	return filtered_mask("sigprocmask", how, set, old);
}

/* A thread created with a signal mask in its attributes must not block the stack signal. */
FL_EXPORT int pthread_attr_setsigmask_np(pthread_attr_t *attr, const sigset_t *set)
{
	static int (*real)(pthread_attr_t *, const sigset_t *);
	sigset_t copy;
	if (!real)
		real = (int (*)(pthread_attr_t *, const sigset_t *))dlsym(RTLD_NEXT, "pthread_attr_setsigmask_np");
	if (set && fl_fault_context_signal() && atomic_load(&fl_rt_state) == FL_RT_READY) {
		copy = *set;
		fl_fault_context_keep_unblocked(&copy);
		set = &copy;
	}
	return real(attr, set);
}

FL_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	struct sigaction act, old;
	memset(&act, 0, sizeof(act));
	act.sa_handler = handler;
	act.sa_flags = SA_RESTART;
	sigemptyset(&act.sa_mask);
	if (sig > 0 && sig < NSIG)
		sigaddset(&act.sa_mask, sig);
	if (sigaction(sig, &act, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}
