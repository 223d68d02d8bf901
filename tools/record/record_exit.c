/* record_exit.c: `record` keeps how the traced command ended in the recording (DIR/exit), so that
 * report can say whether the run it shows finished or crashed, and which processes outlived it (a
 * trace without stats.json is then unfinished, not cut by a kill). Written under a temporary name
 * and renamed. */
#include "record_exit.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "record_internal.h"
#include "temp_file.h"
#include "faultline/trace.h"

/* "running PID" for each traced process that still runs: it outlived the command (a daemon, a
 * background child), and a trace of it without stats.json is unfinished, not cut by a kill. By
 * pid, from its first image's directory (PID; later images are PID.N): the process may be between
 * an exec and its next image's directory. */
static void write_outlived(FILE *f, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	if (!d)
		return;
	while ((e = readdir(d)) != NULL)
		if (is_process_dir_name(e->d_name) && !strchr(e->d_name, '.') && process_dir_running(e->d_name))
			fprintf(f, "running %s\n", e->d_name);
	closedir(d);
}

int record_exit_write(const char *dir, int status)
{
	char path[PATH_MAX], err[512];
	struct temp_file t;
	if (!WIFEXITED(status) && !WIFSIGNALED(status))
		return 0; /* stopped or continued: record waits for an end, so not expected */
	snprintf(path, sizeof(path), "%s/%s", dir, FL_FILE_NAME_EXIT);
	if (temp_file_begin(&t, path, ".tmp", false, err, sizeof(err)) < 0) {
		cli_error("WARNING: how the command ended is not kept in the recording: %s", err);
		return -1;
	}
	FILE *f = fopen(t.tmp, "we");
	if (!f) {
		cli_error("WARNING: how the command ended is not kept in the recording: fopen(\"%s\"): %s", t.tmp,
			  strerror(errno));
		return -1;
	}
	if (WIFEXITED(status))
		fprintf(f, "exit %d\n", WEXITSTATUS(status));
	else
		fprintf(f, "signal %d\n", WTERMSIG(status));
	write_outlived(f, dir);
	int failed = ferror(f);
	if (fclose(f) != 0 || failed) {
		int e = errno;
		temp_file_discard(&t);
		cli_error("WARNING: how the command ended is not kept in the recording: writing \"%s\": %s", t.tmp,
			  strerror(e));
		return -1;
	}
	if (temp_file_commit(&t, TEMP_FILE_REPLACE, err, sizeof(err)) < 0) {
		cli_error("WARNING: how the command ended is not kept in the recording: %s", err);
		return -1;
	}
	return 0;
}
