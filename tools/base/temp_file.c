/* temp_file.c: removes the temporary file being written when SIGINT, SIGTERM or SIGHUP ends the
 * process (temp_file.h). The handler only unlinks and re-raises the signal with its default
 * action, so the exit status still says which signal it was.
 *
 * The path lives in one of two buffers and the handler reads it through an atomic pointer, so a
 * signal handled on another thread (export's progress thread) while a new path is being copied
 * sees the old path or the new one, never a mix. The three signals block one another while the
 * handler runs: the first one decides the exit status. */
#include "temp_file.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

static char paths[2][4096];
static _Atomic(const char *) guarded; /* NULL: nothing to remove */
static bool installed;
static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP };

static void on_stop_signal(int sig)
{
	const char *path = atomic_load(&guarded);
	if (path)
		unlink(path);
	signal(sig, SIG_DFL);
	raise(sig);
}

int temp_file_guard(const char *path)
{
	size_t n = strlen(path);
	const char *current = atomic_load(&guarded);
	char *spare = current == paths[0] ? paths[1] : paths[0];

	if (n >= sizeof(paths[0])) {
		atomic_store(&guarded, NULL);
		return -1;
	}
	memcpy(spare, path, n + 1);
	atomic_store(&guarded, spare);
	if (!installed) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_stop_signal;
		sigemptyset(&sa.sa_mask);
		for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++)
			sigaddset(&sa.sa_mask, stop_signals[i]);
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
	atomic_store(&guarded, NULL);
}
