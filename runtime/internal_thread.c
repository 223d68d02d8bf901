/* internal_thread.c: the flag and the start-up of the runtime's own threads (internal_thread.h). */
#include "internal_thread.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

__thread int fl_internal_thread;

int fl_internal_thread_enter(const char *name)
{
	sigset_t all;
	fl_internal_thread = 1;
	prctl(PR_SET_NAME, name, 0, 0, 0); /* a name only: a failure changes nothing else */
	sigfillset(&all);
	return (int)syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, NULL, _NSIG / 8);
}
