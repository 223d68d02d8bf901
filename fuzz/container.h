/* container.h: the fuzzing input format for a whole recording — one byte string that a harness
 * turns into a recording directory (fuzz_trace_reader.c), that fuzz/pack.py makes from a real
 * recording and that fuzz/unpack turns back into a directory for `faultline dump`.
 *
 *     input   := section*
 *     section := tag:u8  length:u16 (little-endian)  bytes[length]
 *
 * A length past the end of the input takes what is left. The tag's low 4 bits say what the bytes
 * are, bits 4-5 which process directory (slot 0..3) they belong to; bits 6-7 are ignored:
 *     0 meta.json  1 stats.json  2 faults  3 contexts  4 stacks  5 allocs  6 maps  7 ranges.rap
 *     8 the slot's directory name (default "1", "2", "3", "4"; '/' and NUL are dropped, at most
 *       31 characters; an empty name, "." or ".." falls back to the default)
 *     9 a stray file at the top of the recording (a name that is no process directory)
 *    10-15 ignored
 * A file exists when at least one of its sections does (an empty section makes an empty file);
 * several sections of one file are concatenated in input order, so files larger than 64 KiB and
 * splices of two recordings stay expressible. Two slots with the same name share the directory.
 *
 * Everything is written below one base directory the caller owns, and removed again by
 * container_clear; nothing outside it is touched. Header-only: static inline functions. */
#ifndef FAULTLINE_FUZZ_CONTAINER_H
#define FAULTLINE_FUZZ_CONTAINER_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CONTAINER_SLOTS 4
#define CONTAINER_FILES 8          /* tags 0..7 name a file of the process directory */
#define CONTAINER_TAG_DIRNAME 8
#define CONTAINER_TAG_STRAY 9
#define CONTAINER_NAME_MAX 31

static const char *const container_file_names[CONTAINER_FILES] = {
	"meta.json", "stats.json", "faults", "contexts", "stacks", "allocs", "maps", "ranges.rap",
};

/* Walks the sections of DATA: calls fn(tag, bytes, length, ctx) for each; stops when fn returns
 * non-zero (and returns that value). */
static inline int container_walk(const uint8_t *data, size_t size,
			  int (*fn)(unsigned tag, const uint8_t *bytes, size_t len, void *ctx), void *ctx)
{
	size_t at = 0;

	while (at < size) {
		unsigned tag = data[at++];
		size_t len = 0;
		if (at < size)
			len = data[at++];
		if (at < size)
			len |= (size_t)data[at++] << 8;
		if (len > size - at)
			len = size - at;
		int rc = fn(tag, data + at, len, ctx);
		if (rc)
			return rc;
		at += len;
	}
	return 0;
}

struct container_state {
	const char *base;
	char names[CONTAINER_SLOTS][CONTAINER_NAME_MAX + 1];
	int fds[CONTAINER_SLOTS][CONTAINER_FILES];
	int stray_fd;
	int failed;                /* errno of the first failed system call, 0 if none */
};

static inline int container_take_name(unsigned tag, const uint8_t *bytes, size_t len, void *ctx)
{
	struct container_state *st = ctx;
	unsigned slot = (tag >> 4) & 3;
	size_t n = 0;

	if ((tag & 15) != CONTAINER_TAG_DIRNAME)
		return 0;
	for (size_t i = 0; i < len && n < CONTAINER_NAME_MAX; i++) {
		if (bytes[i] != '/' && bytes[i] != '\0')
			st->names[slot][n++] = (char)bytes[i];
	}
	st->names[slot][n] = '\0';
	if (n == 0 || strcmp(st->names[slot], ".") == 0 || strcmp(st->names[slot], "..") == 0)
		snprintf(st->names[slot], sizeof(st->names[slot]), "%u", slot + 1);
	return 0;
}

static inline int container_write_all(int fd, const uint8_t *bytes, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, bytes, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		bytes += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Opens (creating) the file for TAG, making its slot's directory first. */
static inline int container_fd(struct container_state *st, unsigned tag)
{
	char path[4096];
	unsigned slot = (tag >> 4) & 3, file = tag & 15;

	if (file == CONTAINER_TAG_STRAY) {
		if (st->stray_fd < 0) {
			snprintf(path, sizeof(path), "%s/stray-file", st->base);
			st->stray_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
		}
		return st->stray_fd;
	}
	if (st->fds[slot][file] >= 0)
		return st->fds[slot][file];
	snprintf(path, sizeof(path), "%s/%s", st->base, st->names[slot]);
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return -1;
	snprintf(path, sizeof(path), "%s/%s/%s", st->base, st->names[slot], container_file_names[file]);
	/* Two slots with one name: the second continues the first's file. */
	for (unsigned s = 0; s < CONTAINER_SLOTS; s++) {
		if (s != slot && strcmp(st->names[s], st->names[slot]) == 0 && st->fds[s][file] >= 0)
			return st->fds[slot][file] = dup(st->fds[s][file]);
	}
	st->fds[slot][file] = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	return st->fds[slot][file];
}

static inline int container_take_file(unsigned tag, const uint8_t *bytes, size_t len, void *ctx)
{
	struct container_state *st = ctx;
	unsigned file = tag & 15;

	if (file >= CONTAINER_FILES && file != CONTAINER_TAG_STRAY)
		return 0;
	tag &= 0x3f;
	int fd = container_fd(st, tag);
	if (fd < 0 || container_write_all(fd, bytes, len) < 0) {
		if (!st->failed)
			st->failed = errno ? errno : EIO;
	}
	return 0;
}

/* Writes the recording held in DATA below BASE (an existing, empty directory). Returns 0, or -1
 * with errno when a file could not be written (a full tmpfs, say). */
static inline int container_unpack(const uint8_t *data, size_t size, const char *base)
{
	struct container_state st;

	memset(&st, 0, sizeof(st));
	st.base = base;
	st.stray_fd = -1;
	for (unsigned s = 0; s < CONTAINER_SLOTS; s++) {
		snprintf(st.names[s], sizeof(st.names[s]), "%u", s + 1);
		for (unsigned f = 0; f < CONTAINER_FILES; f++)
			st.fds[s][f] = -1;
	}
	container_walk(data, size, container_take_name, &st);
	container_walk(data, size, container_take_file, &st);
	for (unsigned s = 0; s < CONTAINER_SLOTS; s++) {
		for (unsigned f = 0; f < CONTAINER_FILES; f++) {
			if (st.fds[s][f] >= 0)
				close(st.fds[s][f]);
		}
	}
	if (st.stray_fd >= 0)
		close(st.stray_fd);
	if (st.failed) {
		errno = st.failed;
		return -1;
	}
	return 0;
}

/* Removes everything below BASE (two levels: what container_unpack writes), keeping BASE. Never
 * follows a symbolic link. Returns 0, or -1 when something could not be removed. */
static inline int container_clear(const char *base)
{
	int rc = 0, top = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = top >= 0 ? fdopendir(top) : NULL;
	struct dirent *e;

	if (!d) {
		if (top >= 0)
			close(top);
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (unlinkat(top, e->d_name, 0) == 0)
			continue;
		int sub = openat(top, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		DIR *sd = sub >= 0 ? fdopendir(sub) : NULL;
		struct dirent *se;
		if (!sd) {
			if (sub >= 0)
				close(sub);
			rc = -1;
			continue;
		}
		while ((se = readdir(sd)) != NULL) {
			if (strcmp(se->d_name, ".") != 0 && strcmp(se->d_name, "..") != 0 &&
			    unlinkat(sub, se->d_name, 0) < 0)
				rc = -1;
		}
		closedir(sd);
		if (unlinkat(top, e->d_name, AT_REMOVEDIR) < 0)
			rc = -1;
	}
	closedir(d);
	return rc;
}

#endif
