/* test_temp_file.c: tools/base/temp_file.c — a guarded temporary file is removed when SIGINT,
 * SIGTERM or SIGHUP ends the process (export and visualize write through one), and the process
 * still dies of that signal; a released file, and one whose signal the parent ignored, stay. Each
 * case runs in a forked child that creates the file, guards it and raises the signal. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "temp_file.h"

#include "check.h"

enum how { GUARDED, RELEASED, IGNORED };

/* Forks a child that creates PATH, guards it (and releases it, or ignores SIG first) and raises
 * SIG; returns the child's wait status. */
static int run_child(const char *path, int sig, enum how how)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (how == IGNORED)
			signal(sig, SIG_IGN);
		FILE *f = fopen(path, "w");
		if (!f)
			_exit(90);
		fputs("partial", f);
		fclose(f);
		if (temp_file_guard(path) < 0)
			_exit(91);
		if (how == RELEASED)
			temp_file_release();
		raise(sig);
		_exit(0);
	}
	int status = 0;
	REQUIRE(pid > 0 && waitpid(pid, &status, 0) == pid, "fork and wait");
	return status;
}

int main(void)
{
	char dir[] = "/tmp/fl-test-temp-file-XXXXXX", path[256];
	REQUIRE(mkdtemp(dir) != NULL, "mkdtemp");
	snprintf(path, sizeof(path), "%s/out.db.tmp.1", dir);
	check_print_ok = true;

	const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		int st = run_child(path, sigs[i], GUARDED);
		CHECK(WIFSIGNALED(st) && WTERMSIG(st) == sigs[i], "signal %s: the child dies of it (status 0x%x)",
		      strsignal(sigs[i]), st);
		CHECK(access(path, F_OK) != 0, "signal %s: the guarded file is removed", strsignal(sigs[i]));
		unlink(path);
	}
	int st = run_child(path, SIGINT, RELEASED);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGINT && access(path, F_OK) == 0,
	      "released before SIGINT: the child dies of it, the file stays");
	unlink(path);
	st = run_child(path, SIGHUP, IGNORED);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0 && access(path, F_OK) == 0,
	      "SIGHUP ignored by the parent (nohup): still ignored, the file stays (status 0x%x)", st);
	unlink(path);
	char long_path[5000];
	memset(long_path, 'x', sizeof(long_path) - 1);
	long_path[sizeof(long_path) - 1] = '\0';
	CHECK(temp_file_guard(long_path) < 0, "a path longer than the guard holds is refused");
	rmdir(dir);
	return check_summary("test_temp_file");
}
