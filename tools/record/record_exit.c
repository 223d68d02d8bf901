/* record_exit.c: `record` keeps how the traced command ended in the recording (DIR/exit), so that
 * report can say whether the run it shows finished or crashed. One line, written under a temporary
 * name and renamed. */
#include "record_exit.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "cli.h"
#include "temp_file.h"
#include "faultline/trace.h"

int record_exit_write(const char *dir, int status)
{
	char path[4096], err[512];
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
