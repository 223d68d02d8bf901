/* temp_file.c: removes the temporary file being written when SIGINT, SIGTERM or SIGHUP ends the
 * process (temp_file.h). The handler only unlinks and re-raises the signal with its default
 * action, so the exit status still says which signal it was. */
#include "temp_file.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

static char guarded[4096];
static atomic_bool armed;
static bool installed;
static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP };

static void on_stop_signal(int sig)
{
	if (atomic_load(&armed))
		unlink(guarded);
	signal(sig, SIG_DFL);
	raise(sig);
}

int temp_file_guard(const char *path)
{
	size_t n = strlen(path);

	atomic_store(&armed, false);
	if (n >= sizeof(guarded))
		return -1;
	memcpy(guarded, path, n + 1);
	atomic_store(&armed, true);
	if (!installed) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_stop_signal;
		sigemptyset(&sa.sa_mask);
		for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++) {
			struct sigaction old;
			/* a signal ignored by whoever started us (nohup, a shell's background job) stays so */
			if (sigaction(stop_signals[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
				sigaction(stop_signals[i], &sa, NULL);
		}
		installed = true;
	}
	return 0;
}

void temp_file_release(void)
{
	atomic_store(&armed, false);
}
