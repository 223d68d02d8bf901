/* record_outdir.c: `faultline record`'s output directory: its default name, refusing a non-empty
 * one unless --force (which removes only an earlier recording's process directories, its exit
 * file and visualize's files), mkdir -p, held locked for the run, checked writable and short
 * enough for the files in it. */
#include "record_options.h"
#include "record_internal.h"

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "binary_id.h"
#include "cli.h"
#include "faultline/pmu_events.h"
#include "faultline/trace.h"
#include "viz_files.h"

/* ---------------------------------------------------------------------------------------
 * 3. Output directory
 * ------------------------------------------------------------------------------------- */

/* Expands %p (pid of record), %h (host name) and %% in an -o pattern. */
static int expand_output_pattern(const char *pattern, char *out, size_t len)
{
	char host[256];
	size_t used = 0;

	for (const char *p = pattern; *p; p++) {
		char piece[300];

		if (p[0] == '%' && p[1] == 'p') {
			snprintf(piece, sizeof(piece), "%ld", (long)getpid());
			p++;
		} else if (p[0] == '%' && p[1] == 'h') {
			if (gethostname(host, sizeof(host)) < 0)
				snprintf(host, sizeof(host), "localhost");
			host[sizeof(host) - 1] = '\0';
			snprintf(piece, sizeof(piece), "%s", host);
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			snprintf(piece, sizeof(piece), "%%");
			p++;
		} else {
			snprintf(piece, sizeof(piece), "%c", *p);
		}
		if (used + strlen(piece) >= len)
			return -1;
		memcpy(out + used, piece, strlen(piece) + 1);
		used += strlen(piece);
	}
	return used == 0 ? -1 : 0;
}

int output_dir_name(const struct record_options *o, char *out, size_t len)
{
	const char *base = strrchr(o->command[0], '/');
	int n;

	if (o->output != NULL) {
		if (expand_output_pattern(o->output, out, len) < 0) {
			cli_error("--output '%s': name too long", o->output);
			return -1;
		}
		return 0;
	}
	base = base != NULL ? base + 1 : o->command[0];
	n = snprintf(out, len, "faultline-%s-%ld", *base ? base : "cmd", (long)getpid());
	if (n < 0 || (size_t)n >= len) {
		cli_error("output directory name for '%s' is too long; give -o", o->command[0]);
		return -1;
	}
	return 0;
}

/* A process directory: "<pid>", or "<pid>.<n>" for a later exec image of the same pid. */
int is_process_dir_name(const char *name)
{
	int digits = 0, dots = 0;

	for (; *name; name++) {
		if (*name == '.' && digits && !dots)
			dots = 1, digits = 0;
		else if (*name >= '0' && *name <= '9')
			digits++;
		else
			return 0;
	}
	return digits > 0;
}

int process_dir_running(const char *name)
{
	char *end;
	long pid = strtol(name, &end, 10);

	if (!is_process_dir_name(name) || pid <= 0 || pid > INT_MAX)
		return 0;
	return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

static int is_dot_entry(const char *name)
{
	return strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
}

/* dir/name for messages: a path too long is shown cut short with "...". */
static const char *path_for_message(char *buf, size_t len, const char *dir, const char *name)
{
	if ((size_t)snprintf(buf, len, "%s/%s", dir, name) >= len && len > 4)
		memcpy(buf + len - 4, "...", 4);
	return buf;
}

#define RECORD_REMOVE_MAX_DEPTH 16

/* Removes the directory `name` under parent_fd with everything in it, never following
 * symbolic links (a link is removed, not its target). shown names it in messages. */
static int remove_tree_at(int parent_fd, const char *name, const char *shown, int depth)
{
	int fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), rc = 0;
	struct dirent *entry;
	DIR *dir;

	if (fd < 0 || depth > RECORD_REMOVE_MAX_DEPTH) {
		cli_error("cannot remove %s: %s", shown, fd < 0 ? strerror(errno) : "nested too deeply");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	dir = fdopendir(fd);
	if (dir == NULL) {
		cli_error("cannot remove %s: fdopendir: %s", shown, strerror(errno));
		close(fd);
		return -1;
	}
	while (rc == 0 && (entry = readdir(dir)) != NULL) {
		char child[PATH_MAX];
		struct stat st;

		if (is_dot_entry(entry->d_name))
			continue;
		path_for_message(child, sizeof(child), shown, entry->d_name);
		if (fstatat(fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			cli_error("cannot remove %s: fstatat: %s", child, strerror(errno));
			rc = -1;
		} else if (S_ISDIR(st.st_mode)) {
			rc = remove_tree_at(fd, entry->d_name, child, depth + 1);
		} else if (unlinkat(fd, entry->d_name, 0) < 0) {
			cli_error("cannot remove %s: unlinkat: %s", child, strerror(errno));
			rc = -1;
		}
	}
	closedir(dir);
	if (rc == 0 && unlinkat(parent_fd, name, AT_REMOVEDIR) < 0) {
		cli_error("cannot remove %s: unlinkat: %s", shown, strerror(errno));
		rc = -1;
	}
	return rc;
}

/* Whether NAME under DIR_FD is a regular file itself (not a link to one). */
static bool is_regular_at(int dir_fd, const char *name)
{
	struct stat st;
	return fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

/* The files a process directory of a recording holds (trace.h), and rap_online.c's temporary. */
static bool is_recording_file_name(const char *name)
{
	static const char *const names[] = {
		FL_FILE_NAME_META, FL_FILE_NAME_STATS, FL_FILE_NAME_FAULTS, FL_FILE_NAME_CONTEXTS,
		FL_FILE_NAME_STACKS, FL_FILE_NAME_ALLOCS, FL_FILE_NAME_ALLOCS_ZSTD, FL_FILE_NAME_SITES,
		FL_FILE_NAME_MAPS, FL_FILE_NAME_RAP, FL_FILE_NAME_RAP ".tmp", FL_FILE_NAME_EVICTIONS,
		FL_FILE_NAME_TIMELINE, FL_FILE_NAME_FAR_KEYS,
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return false;
}

/* Whether the directory NAME under DIR_FD is a process directory of an earlier recording, all of
 * it faultline's: a process-directory name (all digits, or <pid>.<n>), a directory (not a link)
 * holding a meta.json or stats.json, and nothing but regular files of a recording's names. A
 * user's folder named like a year (empty, or with a note in it, or a meta.json among other files)
 * is not one, nor a planted link. */
static bool is_old_process_dir(int dir_fd, const char *name)
{
	struct stat st;
	if (!is_process_dir_name(name) || fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
		return false;
	int fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	if (!dir) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	bool ours = true, described = false;
	struct dirent *entry;
	while (ours && (entry = readdir(dir)) != NULL) {
		if (is_dot_entry(entry->d_name))
			continue;
		ours = is_recording_file_name(entry->d_name) && is_regular_at(dirfd(dir), entry->d_name);
		described = described || strcmp(entry->d_name, FL_FILE_NAME_META) == 0 ||
			    strcmp(entry->d_name, FL_FILE_NAME_STATS) == 0;
	}
	closedir(dir);
	return ours && described;
}

/* An existing output directory: refuse it when it holds anything, unless force. With force remove
 * only what an earlier recording made: its process directories (is_old_process_dir) and, when
 * there was a recording (a process directory or record's binaries file), visualize's files.
 * Anything else stays: `-o DIR --force` over a folder of one's own keeps its files. */
static int reuse_output_dir(const char *path, bool force, bool quiet)
{
	DIR *dir = opendir(path);
	struct dirent *entry;
	unsigned removed = 0, derived = 0;
	int rc = 0, nonempty = 0;
	bool recording = false;

	if (dir == NULL) {
		cli_error("cannot open output directory %s: %s", path, strerror(errno));
		return -1;
	}
	while ((entry = readdir(dir)) != NULL && !(nonempty && (!force || recording))) {
		if (is_dot_entry(entry->d_name))
			continue;
		nonempty = 1;
		recording = recording || is_old_process_dir(dirfd(dir), entry->d_name) ||
			    (strcmp(entry->d_name, BINARY_IDS_FILE) == 0 && is_regular_at(dirfd(dir), entry->d_name));
	}
	if (nonempty && !force) {
		closedir(dir);
		cli_error("output directory '%s' exists and is not empty; give another with -o, or "
			  "--force to reuse it (removes its old per-process subdirectories and visualize's files)", path);
		return -1;
	}
	rewinddir(dir);
	while (rc == 0 && (entry = readdir(dir)) != NULL) {
		char shown[PATH_MAX];

		if (is_dot_entry(entry->d_name))
			continue;
		if (recording && strcmp(entry->d_name, FL_FILE_NAME_EXIT) == 0 && is_regular_at(dirfd(dir), entry->d_name)) {
			unlinkat(dirfd(dir), entry->d_name, 0); /* how the old run ended: this run writes its own */
			continue;
		}
		if (recording && viz_is_output_name(entry->d_name) && is_regular_at(dirfd(dir), entry->d_name)) {
			if (unlinkat(dirfd(dir), entry->d_name, 0) == 0)
				derived++;
			continue;
		}
		if (!is_old_process_dir(dirfd(dir), entry->d_name))
			continue;
		path_for_message(shown, sizeof(shown), path, entry->d_name);
		rc = remove_tree_at(dirfd(dir), entry->d_name, shown, 0);
		removed += rc == 0;
	}
	closedir(dir);
	if (removed > 0 && !quiet)
		cli_error("--force: removed %u old process director%s from %s", removed,
			  removed == 1 ? "y" : "ies", path);
	if (derived > 0 && !quiet)
		cli_error("--force: removed %u file%s visualize made from the old trace", derived, derived == 1 ? "" : "s");
	return rc;
}

/* mkdir -p path. */
static int make_dirs(const char *path)
{
	char partial[PATH_MAX];
	size_t len = strlen(path);

	if (len >= sizeof(partial)) {
		cli_error("output directory name too long: %s", path);
		return -1;
	}
	memcpy(partial, path, len + 1);
	for (size_t i = 1; i <= len; i++) {
		if (partial[i] != '/' && partial[i] != '\0')
			continue;
		partial[i] = '\0';
		if (mkdir(partial, 0777) < 0 && errno != EEXIST) {
			cli_error("cannot create output directory: mkdir %s: %s", partial, strerror(errno));
			return -1;
		}
		partial[i] = path[i];
	}
	return 0;
}

/* The files the runtime and record write under the output directory need this much more than its
 * own path: "/<pid>.<image>/" and the longest file name with its ".tmp" (or, with --archive,
 * ".build-id/xx/<38 hex digits>.debug"). */
#define OUTPUT_PATH_SLACK 80

/* Holds the output directory for the whole run (flock on it, released when record exits), so a
 * second record given the same -o meanwhile is refused instead of writing into this recording. */
static int lock_output_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		cli_error("cannot open output directory %s: %s", path, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int err = errno;
		close(fd);
		if (err != EWOULDBLOCK)
			return 0; /* a file system without locks (some NFS mounts): the run goes on unguarded */
		cli_error("output directory %s is being written by another faultline record; give another with -o", path);
		return -1;
	}
	return 0; /* fd stays open (close-on-exec) until record exits */
}

/* A file can be created in the directory (a read-only file system, or no inode left, shows here
 * and not in the traced program's runtime, which would let it run untraced). */
static int check_writable(const char *path)
{
	char probe[PATH_MAX];
	if ((size_t)snprintf(probe, sizeof(probe), "%s/.faultline-check.%ld", path, (long)getpid()) >= sizeof(probe)) {
		cli_error("output directory path too long: %s", path);
		return -1;
	}
	int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		cli_error("output directory %s: no file can be created in it: %s", path, strerror(errno));
		return -1;
	}
	close(fd);
	unlink(probe);
	return 0;
}

/* Makes the output directory ready and writes its absolute path into absolute. */
static int check_path_length(size_t len)
{
	if (len + OUTPUT_PATH_SLACK < PATH_MAX)
		return 0;
	cli_error("output directory path too long: %zu bytes, and the files in it need up to %d more "
		  "(PATH_MAX %d): give a shorter -o", len, OUTPUT_PATH_SLACK, PATH_MAX);
	return -1;
}

int prepare_output_dir(const char *path, const struct record_options *o, char *absolute)
{
	struct stat st;
	char cwd[PATH_MAX];

	/* before anything is made: the path as it will be, relative to the working directory */
	if (check_path_length(strlen(path) + (path[0] == '/' || !getcwd(cwd, sizeof(cwd)) ? 0 : strlen(cwd) + 1)) < 0)
		return -1;
	if (stat(path, &st) == 0) {
		if (!S_ISDIR(st.st_mode)) {
			cli_error("output path '%s' exists and is not a directory", path);
			return -1;
		}
	} else if (errno != ENOENT) {
		cli_error("output directory: stat: %s: %s", strerror(errno), path);
		return -1;
	} else if (make_dirs(path) < 0) {
		return -1;
	}
	/* locked before it is found empty: of two records given the same -o at once, one is refused */
	if (lock_output_dir(path) < 0 || reuse_output_dir(path, o->force, o->quiet) < 0 || check_writable(path) < 0)
		return -1;
	if (realpath(path, absolute) == NULL) {
		cli_error("output directory: realpath: %s: %s", strerror(errno), path);
		return -1;
	}
	return check_path_length(strlen(absolute)); /* through symbolic links it may be longer */
}
