/* record_binaries.c: after the program ends, `record` writes DIR/binaries — the identity (build-id,
 * size, mtime: binary_id.h) of every file its processes mapped — and with --archive keeps a copy of
 * each binary (and of its separate debug file under /usr/lib/debug/.build-id, when there is one)
 * in DIR/.build-id/xx/rest[.debug], perf's build-id cache layout, so that the recording can be
 * reported after the binaries were rebuilt, or on another machine.
 *
 * Why here, in record after the run, and not in the runtime at each maps snapshot: reading ELF
 * notes and stat'ing every library costs the traced process nothing this way, and no extra code
 * runs inside it (the runtime stays allocation-free and small). The price is a window: a binary
 * rebuilt *during* the run would be read as its new self. That case is detected and left out (the
 * symbolizer's inode check still applies to it): a file whose inode is not the one the maps line
 * named, or whose mtime is after the recording started, is not given an identity.
 *
 * The paths come from the maps snapshots (DIR/PID/maps: "# maps ..." header lines, then
 * /proc/PID/maps text): every mapping naming a file, deduplicated. */
#include "record_binaries.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "binary_id.h"
#include "cli.h"
#include "fd_copy.h"
#include "temp_file.h"

#define DEBUG_ROOT "/usr/lib/debug"

struct mapped_file {
	char *path;
	uint64_t inode;   /* as the maps line named it */
};

struct binaries_pass {
	struct mapped_file *files;
	size_t n, cap;
};

static int add_file(struct binaries_pass *p, const char *path, uint64_t inode)
{
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->files[i].path, path) == 0)
			return 0;
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		struct mapped_file *grown = realloc(p->files, cap * sizeof(*grown));
		if (!grown)
			return -1;
		p->files = grown, p->cap = cap;
	}
	if (!(p->files[p->n].path = strdup(path)))
		return -1;
	p->files[p->n++].inode = inode;
	return 0;
}

/* One maps line: START-END PERMS PGOFF MAJ:MIN INODE [PATH]. Files only, " (deleted)" ones left out
 * (the file at that path is another one). */
static int scan_line(struct binaries_pass *p, const char *line)
{
	unsigned long long inode;
	int at = 0;
	if (line[0] == '#' || sscanf(line, "%*x-%*x %*4s %*x %*x:%*x %llu %n", &inode, &at) != 1 || at == 0)
		return 0;
	const char *path = line + at;
	while (*path == ' ')
		path++;
	size_t len = strcspn(path, "\n");
	if (path[0] != '/' || inode == 0 || (len >= 10 && strncmp(path + len - 10, " (deleted)", 10) == 0))
		return 0;
	char name[4096];
	if (len >= sizeof(name))
		return 0;
	memcpy(name, path, len);
	name[len] = '\0';
	return add_file(p, name, inode);
}

static int scan_maps(struct binaries_pass *p, const char *path)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	int rc = 0;
	if (!f)
		return errno == ENOENT ? 0 : -1;
	while (rc == 0 && getline(&line, &cap, f) >= 0)
		rc = scan_line(p, line);
	free(line);
	fclose(f);
	return rc;
}

/* Copies SRC to DST (through DST.tmp, renamed). Returns 0 or -1 with err. */
static int copy_file(const char *src, const char *dst, char *err, size_t errlen)
{
	struct temp_file t;
	int in = open(src, O_RDONLY | O_CLOEXEC), out = -1;
	int r;
	if (in < 0) {
		snprintf(err, errlen, "open(\"%s\"): %s", src, strerror(errno));
		return -1;
	}
	if (temp_file_begin(&t, dst, ".tmp", false, err, errlen) < 0) {
		close(in);
		return -1;
	}
	out = open(t.tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0444);
	if (out < 0) {
		snprintf(err, errlen, "open(\"%s\", O_CREAT): %s", t.tmp, strerror(errno));
		close(in);
		return -1;
	}
	r = fd_copy(in, out, NULL, NULL);
	int error = errno;
	close(in);
	if (close(out) != 0 && r == 0)
		r = -1, error = errno;
	if (r < 0) {
		temp_file_discard(&t);
	} else if (temp_file_commit(&t, TEMP_FILE_REPLACE, err, errlen) < 0) {
		r = -1;
		error = errno;
	}
	if (r < 0) {
		snprintf(err, errlen, "copying %s to %s: %s", src, t.tmp, strerror(error));
		return -1;
	}
	return 0;
}

/* mkdir -p of DIR/.build-id/xx. */
static int make_archive_dir(const char *dir, const char *name, char *err, size_t errlen)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, BINARY_ARCHIVE_DIR);
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		goto fail;
	snprintf(path, sizeof(path), "%s/%.*s", dir, (int)(strrchr(name, '/') - name), name);
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		goto fail;
	return 0;
fail:
	snprintf(err, errlen, "mkdir(\"%s\"): %s", path, strerror(errno));
	return -1;
}

/* Keeps B (and its separate debug file) in the archive; sets b->archived. */
static int archive_binary(const char *dir, struct binary_id *b, char *err, size_t errlen)
{
	char name[512], dst[4096], debug[4200], hex[2 * BINARY_ID_MAX_BUILD_ID + 1];
	if (binary_id_archive_name(b, name, sizeof(name)) < 0)
		return 0; /* no build-id: nothing to find it by */
	if (make_archive_dir(dir, name, err, errlen) < 0)
		return -1;
	snprintf(dst, sizeof(dst), "%s/%s", dir, name);
	if (access(dst, F_OK) != 0 && copy_file(b->path, dst, err, errlen) < 0)
		return -1;
	binary_id_hex(b->build_id + 1, b->build_id_len - 1, hex);
	snprintf(debug, sizeof(debug), "%s/.build-id/%02x/%s.debug", DEBUG_ROOT, b->build_id[0], hex);
	if (access(debug, R_OK) == 0) {
		snprintf(dst, sizeof(dst), "%s/%s.debug", dir, name);
		if (access(dst, F_OK) != 0 && copy_file(debug, dst, err, errlen) < 0)
			return -1;
	}
	return (b->archived = strdup(name)) ? 0 : -1;
}

static int64_t realtime_ns_of(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

int record_binaries(const char *dir, bool archive, const struct timespec *started, bool quiet)
{
	struct binaries_pass p = { 0 };
	struct binary_id *ids = NULL;
	size_t nids = 0;
	char err[4400], path[4096];
	int rc = -1;
	DIR *d = opendir(dir);
	if (!d) {
		cli_error("record: binaries: opendir(\"%s\"): %s", dir, strerror(errno));
		return -1;
	}
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue; /* process directories are named PID or PID.N */
		snprintf(path, sizeof(path), "%s/%s/maps", dir, e->d_name);
		if (scan_maps(&p, path) < 0) {
			cli_error("record: binaries: reading %s: %s", path, strerror(errno ? errno : ENOMEM));
			goto out;
		}
	}
	if (p.n && !(ids = calloc(p.n, sizeof(*ids)))) {
		cli_error("record: binaries: out of memory");
		goto out;
	}
	for (size_t i = 0; i < p.n; i++) {
		struct binary_id *b = &ids[nids];
		if (binary_id_read(p.files[i].path, b, err, sizeof(err)) < 0)
			continue; /* gone already: the symbolizer will say so */
		if (b->inode != p.files[i].inode || b->mtime_ns > realtime_ns_of(started)) {
			if (!quiet)
				cli_error("record: %s changed while the program ran; its identity is not recorded",
					  p.files[i].path);
			continue;
		}
		if (!(b->path = strdup(p.files[i].path))) {
			cli_error("record: binaries: out of memory");
			goto out;
		}
		nids++;
		if (archive && archive_binary(dir, b, err, sizeof(err)) < 0) {
			cli_error("record: --archive: %s", err);
			goto out;
		}
	}
	if (binary_ids_write(dir, ids, nids, err, sizeof(err)) < 0) {
		cli_error("record: %s", err);
		goto out;
	}
	rc = 0;
out:
	closedir(d);
	binary_ids_free(ids, nids);
	for (size_t i = 0; i < p.n; i++)
		free(p.files[i].path);
	free(p.files);
	return rc;
}
