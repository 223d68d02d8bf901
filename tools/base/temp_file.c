/* temp_file.c: files written under a temporary name and renamed when complete, and the removal of
 * the temporary file being written when SIGINT, SIGTERM or SIGHUP ends the process (temp_file.h).
 *
 * The rename. Without replacing, renameat2(RENAME_NOREPLACE) refuses an existing final name
 * atomically; a file system without that flag gets link(2) and unlink(2), which refuse it too. A
 * failed rename removes the temporary file, so nothing is left either way.
 *
 * The signal handler only unlinks (and removes the verb's output directory when still empty) and
 * re-raises the signal with its default action, so the exit status still says which signal it was.
 *
 * The path lives in one of two buffers and the handler reads it through an atomic pointer, so a
 * signal handled on another thread (export's progress thread) while a new path is being copied
 * sees the old path or the new one, never a mix. The three signals block one another while the
 * handler runs: the first one decides the exit status. */
#include "temp_file.h"

#include <errno.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char paths[2][4096];
static _Atomic(const char *) guarded; /* NULL: nothing to remove */
static char guarded_dir_path[4096];
static _Atomic bool dir_guarded;      /* guarded_dir_path is removed too, when empty */
static bool installed;
static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP };

static void on_stop_signal(int sig)
{
	const char *path = atomic_load(&guarded);
	if (path)
		unlink(path);
	if (atomic_load(&dir_guarded))
		rmdir(guarded_dir_path);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install_handler(void);

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
	install_handler();
	return 0;
}

int temp_file_guard_dir(const char *dir)
{
	size_t n = strlen(dir);
	if (n >= sizeof(guarded_dir_path) || atomic_load(&dir_guarded))
		return -1;
	memcpy(guarded_dir_path, dir, n + 1);
	atomic_store(&dir_guarded, true);
	install_handler();
	return 0;
}

static void install_handler(void)
{
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
}

void temp_file_release(void)
{
	atomic_store(&guarded, NULL);
}

int temp_file_begin(struct temp_file *t, const char *path, const char *suffix, bool guard, char *err,
		    size_t errlen)
{
	t->guarded = false;
	if ((size_t)snprintf(t->tmp, sizeof(t->tmp), "%s%s", path, suffix) >= sizeof(t->tmp)) {
		snprintf(err, errlen, "%s: path too long", path);
		return -1;
	}
	snprintf(t->path, sizeof(t->path), "%s", path);
	unlink(t->tmp);
	if (guard)
		t->guarded = temp_file_guard(t->tmp) == 0;
	return 0;
}

/* Renames TMP to PATH without replacing an existing PATH: 0, or -1 with errno and the failing call. */
static int rename_no_replace(const char *tmp, const char *path, const char **call)
{
	*call = "renameat2";
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS) /* else a file system without RENAME_NOREPLACE */
		return -1;
	*call = "link";
	if (link(tmp, path) < 0)
		return -1;
	unlink(tmp);
	return 0;
}

int temp_file_check_target(const char *path, char *err, size_t errlen)
{
	struct stat st;
	if (lstat(path, &st) < 0 || S_ISREG(st.st_mode))
		return 0;
	const char *what = S_ISLNK(st.st_mode) ? "a symbolic link" : S_ISDIR(st.st_mode) ? "a directory" :
			   S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISSOCK(st.st_mode) ? "a socket" : "a device";
	snprintf(err, errlen, "%s: not a regular file (%s): refused, give the path of a file to write", path, what);
	errno = EINVAL;
	return -1;
}

int temp_file_commit(struct temp_file *t, enum temp_file_install how, char *err, size_t errlen)
{
	const char *call = "rename";
	if (how == TEMP_FILE_REPLACE && temp_file_check_target(t->path, err, errlen) < 0) {
		temp_file_discard(t);
		return -1;
	}
	int rc = how == TEMP_FILE_REPLACE ? rename(t->tmp, t->path) : rename_no_replace(t->tmp, t->path, &call);

	if (rc < 0) {
		int error = errno;
		snprintf(err, errlen, "%s(\"%s\", \"%s\"): %s", call, t->tmp, t->path, strerror(error));
		temp_file_discard(t);
		errno = error;
		return -1;
	}
	if (t->guarded)
		temp_file_release();
	t->guarded = false;
	return 0;
}

void temp_file_discard(struct temp_file *t)
{
	int error = errno;

	unlink(t->tmp);
	if (t->guarded)
		temp_file_release();
	t->guarded = false;
	errno = error;
}
