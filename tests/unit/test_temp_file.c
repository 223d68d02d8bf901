/* test_temp_file.c: tools/base/temp_file.c — a guarded temporary file is removed when SIGINT,
 * SIGTERM or SIGHUP ends the process (export and visualize write through one), and the process
 * still dies of that signal; a released file, and one whose signal the parent ignored, stay. Each
 * case runs in a forked child that creates the file, guards it and raises the signal. And the
 * write-then-rename sequence: a committed file replaces its final name or, without replacing,
 * leaves an existing one and fails with EEXIST; a failed or discarded one leaves nothing. A guarded
 * output directory (visualize's -o, just created) is removed by the signal while empty, and kept
 * when a complete output is in it. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* Writes TEXT to the file PATH; 0 or -1. */
static int put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f) == 0 ? 0 : -1;
}

/* True when PATH holds exactly TEXT. */
static bool holds(const char *path, const char *text)
{
	char buf[64] = "";
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strcmp(buf, text) == 0;
}

/* Forks a child that creates the directory DIR (and a file in it when FILLED), guards it and
 * raises SIGINT; returns the child's wait status. */
static int run_dir_child(const char *dir, bool filled)
{
	pid_t pid = fork();
	if (pid == 0) {
		char file[512];
		if (mkdir(dir, 0755) < 0)
			_exit(90);
		snprintf(file, sizeof(file), "%s/flame.svg", dir);
		if (filled && put_file(file, "done") < 0)
			_exit(91);
		if (temp_file_guard_dir(dir) < 0)
			_exit(92);
		raise(SIGINT);
		_exit(0);
	}
	int status = 0;
	REQUIRE(pid > 0 && waitpid(pid, &status, 0) == pid, "fork and wait");
	return status;
}

static void test_dir(const char *base)
{
	char dir[256], file[512];
	snprintf(dir, sizeof(dir), "%s/viz", base);
	snprintf(file, sizeof(file), "%s/flame.svg", dir);
	int st = run_dir_child(dir, false);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGINT && access(dir, F_OK) != 0,
	      "an empty guarded output directory is removed by SIGINT (status 0x%x)", st);
	rmdir(dir);
	st = run_dir_child(dir, true);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGINT && holds(file, "done"),
	      "a guarded output directory with a complete output in it stays (status 0x%x)", st);
	unlink(file);
	rmdir(dir);
}

static void test_commit(const char *dir)
{
	struct temp_file t;
	char path[256], err[512];

	snprintf(path, sizeof(path), "%s/final", dir);
	REQUIRE(temp_file_begin(&t, path, ".tmp", false, err, sizeof(err)) == 0, "begin");
	CHECK(strstr(t.tmp, "/final.tmp") != NULL, "the temporary name is PATH.tmp (%s)", t.tmp);
	CHECK(put_file(t.tmp, "one") == 0 && temp_file_commit(&t, TEMP_FILE_NO_REPLACE, err, sizeof(err)) == 0 &&
		      holds(path, "one") && access(t.tmp, F_OK) != 0,
	      "commit without replacing a missing file: renamed");
	REQUIRE(temp_file_begin(&t, path, ".tmp.7", false, err, sizeof(err)) == 0, "begin");
	errno = 0;
	CHECK(put_file(t.tmp, "two") == 0 && temp_file_commit(&t, TEMP_FILE_NO_REPLACE, err, sizeof(err)) < 0 &&
		      errno == EEXIST && holds(path, "one") && access(t.tmp, F_OK) != 0 && strstr(err, "renameat2(") == err,
	      "commit without replacing an existing file: EEXIST, it stays, the temporary file is removed (%s)", err);
	REQUIRE(temp_file_begin(&t, path, ".tmp", false, err, sizeof(err)) == 0, "begin");
	CHECK(put_file(t.tmp, "three") == 0 && temp_file_commit(&t, TEMP_FILE_REPLACE, err, sizeof(err)) == 0 &&
		      holds(path, "three"),
	      "commit replacing: the file is replaced");
	REQUIRE(temp_file_begin(&t, path, ".tmp", false, err, sizeof(err)) == 0, "begin");
	CHECK(put_file(t.tmp, "four") == 0 && (temp_file_discard(&t), access(t.tmp, F_OK) != 0) && holds(path, "three"),
	      "discard: the temporary file goes, the final one stays");
	CHECK(put_file(t.tmp, "stale") == 0 && temp_file_begin(&t, path, ".tmp", false, err, sizeof(err)) == 0 &&
		      access(t.tmp, F_OK) != 0,
	      "begin removes a leftover temporary file");
	char long_path[5000];
	memset(long_path, 'x', sizeof(long_path) - 1);
	long_path[sizeof(long_path) - 1] = '\0';
	CHECK(temp_file_begin(&t, long_path, ".tmp", false, err, sizeof(err)) < 0,
	      "begin refuses a path too long");
	unlink(path);
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
	test_commit(dir);
	test_dir(dir);
	rmdir(dir);
	return check_summary("test_temp_file");
}
