/* fatal.c: the runtime's fatal stop (fatal.h): one thread logs, flushes through the shutdown the
 * runtime registered, and exits the process group's program with FL_EXIT_RUNTIME_FAILURE. */
#include "fatal.h"
#include "diag.h"

#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "faultline/env.h"

static void (*_Atomic registered_shutdown)(const char *reason);

void fl_fatal_on_stop(void (*shutdown)(const char *reason))
{
	atomic_store(&registered_shutdown, shutdown);
}

void fl_fatal_stop(const char *why)
{
	static _Atomic int stopping;
	if (atomic_exchange(&stopping, 1)) /* another thread is stopping the program: wait for it */
		for (;;)
			pause();
	fl_log(why);
	void (*shutdown)(const char *) = atomic_load(&registered_shutdown);
	if (shutdown)
		shutdown("far store failure");
	syscall(SYS_exit_group, FL_EXIT_RUNTIME_FAILURE);
	__builtin_unreachable();
}
