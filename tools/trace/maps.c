/* maps.c: parses a saved /proc/PID/maps into a sorted table and finds the mapping of an address.
 *
 * One pass over the text: each line is parsed field by field with explicit checks (no sscanf, whose
 * "%lx" accepts signs, spaces and overflow silently). Paths are copied into one buffer owned by the
 * table, so a table is two allocations and maps_free releases both. */
#include "maps.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DELETED_SUFFIX " (deleted)"

/* What the table owns besides the public part: the path buffer. */
struct maps_owned {
	struct maps pub;
	char *paths;
};

static void maps_report(maps_diag_fn diag, void *ctx, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void maps_report(maps_diag_fn diag, void *ctx, const char *fmt, ...)
{
	char message[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(message, sizeof message, fmt, ap);
	va_end(ap);
	if (diag)
		diag(ctx, message);
	else
		fprintf(stderr, "faultline: %s\n", message);
}

/* A cursor over one line: [pos, end). */
struct line_cursor {
	const char *pos;
	const char *end;
};

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Reads 1..16 hex digits followed by DELIM (consumed). Returns false on anything else. */
static bool read_hex(struct line_cursor *cur, char delim, uint64_t *out)
{
	uint64_t value = 0;
	int digits = 0;
	while (cur->pos < cur->end && hex_digit(*cur->pos) >= 0) {
		if (++digits > 16)
			return false;
		value = value << 4 | (uint64_t)hex_digit(*cur->pos++);
	}
	if (digits == 0 || cur->pos >= cur->end || *cur->pos != delim)
		return false;
	cur->pos++;
	*out = value;
	return true;
}

/* Reads a decimal number (no sign, no overflow) ended by a space or the end of the line. */
static bool read_decimal(struct line_cursor *cur, uint64_t *out)
{
	uint64_t value = 0;
	int digits = 0;
	while (cur->pos < cur->end && *cur->pos >= '0' && *cur->pos <= '9') {
		unsigned d = (unsigned)(*cur->pos++ - '0');
		if (value > (UINT64_MAX - d) / 10)
			return false;
		value = value * 10 + d;
		digits++;
	}
	if (digits == 0 || (cur->pos < cur->end && *cur->pos != ' '))
		return false;
	*out = value;
	return true;
}

static bool read_perms(struct line_cursor *cur, unsigned *prot)
{
	static const char allowed[4][2] = { { 'r', '-' }, { 'w', '-' }, { 'x', '-' }, { 'p', 's' } };
	static const unsigned bit[4] = { MAPS_PROT_READ, MAPS_PROT_WRITE, MAPS_PROT_EXEC, MAPS_SHARED };
	if (cur->end - cur->pos < 5 || cur->pos[4] != ' ')
		return false;
	*prot = 0;
	for (int i = 0; i < 4; i++) {
		char c = cur->pos[i];
		if (c != allowed[i][0] && c != allowed[i][1])
			return false;
		if (c == allowed[i][0] && i < 3)
			*prot |= bit[i];
		if (i == 3 && c == 's')
			*prot |= bit[i];
	}
	cur->pos += 5;
	return true;
}

/* Copies the path [src, src_end) to DST undoing the kernel's "\012" escape of '\n'; returns length. */
static size_t copy_path(char *dst, const char *src, const char *src_end)
{
	size_t n = 0;
	while (src < src_end) {
		if (src_end - src >= 4 && memcmp(src, "\\012", 4) == 0) {
			dst[n++] = '\n';
			src += 4;
		} else {
			dst[n++] = *src++;
		}
	}
	dst[n] = '\0';
	return n;
}

static enum maps_kind path_kind(const char *path)
{
	if (path[0] == '\0')
		return MAPS_ANON;
	if (path[0] == '/')
		return MAPS_FILE;
	return MAPS_PSEUDO;
}

/* Parses one line (without its newline) into E; its path goes to *PATH_SPACE, which advances.
 * Returns NULL on success, else the reason it is malformed. */
static const char *parse_line(const char *line, const char *line_end, struct maps_entry *e,
			      char **path_space)
{
	struct line_cursor cur = { line, line_end };
	uint64_t major, minor;
	if (!read_hex(&cur, '-', &e->start))
		return "bad start address (want hex followed by '-')";
	if (!read_hex(&cur, ' ', &e->end))
		return "bad end address";
	if (e->start >= e->end)
		return "start address is not below end address";
	if (!read_perms(&cur, &e->prot))
		return "bad permissions (want 4 characters like r-xp)";
	if (!read_hex(&cur, ' ', &e->pgoff))
		return "bad file offset";
	if (!read_hex(&cur, ':', &major) || !read_hex(&cur, ' ', &minor) || major > UINT32_MAX ||
	    minor > UINT32_MAX)
		return "bad device (want MAJOR:MINOR in hex)";
	e->dev_major = (uint32_t)major;
	e->dev_minor = (uint32_t)minor;
	if (!read_decimal(&cur, &e->inode))
		return "bad inode";
	while (cur.pos < cur.end && *cur.pos == ' ')
		cur.pos++;

	char *path = *path_space;
	size_t n = copy_path(path, cur.pos, cur.end);
	size_t suffix = strlen(DELETED_SUFFIX);
	e->deleted = n > suffix && strcmp(path + n - suffix, DELETED_SUFFIX) == 0;
	if (e->deleted) {
		n -= suffix;
		path[n] = '\0';
	}
	e->path = path;
	e->kind = path_kind(path);
	if (e->kind == MAPS_ANON && e->inode != 0)
		return "inode without a path";
	*path_space += n + 1;
	return NULL;
}

static int entry_compare(const void *a, const void *b)
{
	const struct maps_entry *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* Sorts the entries and drops any that overlaps its predecessor (reported; the kernel never emits
 * overlapping lines, so one of them is corrupt and we cannot tell which: keep the lower one). */
static void sort_and_check(struct maps *m, const char *source, maps_diag_fn diag, void *ctx)
{
	qsort(m->entries, m->count, sizeof m->entries[0], entry_compare);
	size_t kept = 0;
	for (size_t i = 0; i < m->count; i++) {
		struct maps_entry *e = &m->entries[i];
		if (kept > 0 && e->start < m->entries[kept - 1].end) {
			maps_report(diag, ctx, "%s:%u: mapping %#llx-%#llx overlaps line %u; skipped", source,
				    e->line, (unsigned long long)e->start, (unsigned long long)e->end,
				    m->entries[kept - 1].line);
			m->malformed++;
			continue;
		}
		m->entries[kept++] = *e;
	}
	m->count = kept;
}

struct maps *maps_parse(const char *text, size_t len, const char *source, maps_diag_fn diag, void *diag_ctx)
{
	if (!source)
		source = "maps";
	size_t lines = 0;
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	lines += len > 0 && text[len - 1] != '\n';

	struct maps_owned *owned = calloc(1, sizeof *owned);
	struct maps_entry *entries = calloc(lines ? lines : 1, sizeof *entries);
	char *paths = malloc(len + 1);
	if (!owned || !entries || !paths) {
		free(owned);
		free(entries);
		free(paths);
		errno = ENOMEM;
		return NULL;
	}
	owned->paths = paths;
	struct maps *m = &owned->pub;
	m->entries = entries;

	char *path_space = paths;
	const char *pos = text, *end = text + len;
	unsigned line_no = 0;
	while (pos < end) {
		const char *nl = memchr(pos, '\n', (size_t)(end - pos));
		const char *line_end = nl ? nl : end;
		line_no++;
		if (line_end == pos) { /* an empty line: tolerated only as the last one */
			if (nl && nl + 1 < end) {
				maps_report(diag, diag_ctx, "%s:%u: empty line; skipped", source, line_no);
				m->malformed++;
			}
		} else if (memchr(pos, '\0', (size_t)(line_end - pos))) {
			maps_report(diag, diag_ctx, "%s:%u: NUL byte in line; skipped", source, line_no);
			m->malformed++;
		} else {
			struct maps_entry *e = &m->entries[m->count];
			char *saved_space = path_space;
			const char *why = parse_line(pos, line_end, e, &path_space);
			if (why) {
				path_space = saved_space;
				maps_report(diag, diag_ctx, "%s:%u: %s; skipped", source, line_no, why);
				m->malformed++;
			} else {
				e->line = line_no;
				m->count++;
			}
		}
		pos = nl ? nl + 1 : end;
	}
	assert(m->count <= lines && (size_t)(path_space - paths) <= len + 1);
	sort_and_check(m, source, diag, diag_ctx);
	return m;
}

/* Reads the whole file at PATH (procfs files report size 0, so read until EOF). */
static char *read_file(const char *path, size_t *len_out, maps_diag_fn diag, void *ctx)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int saved = errno;
		maps_report(diag, ctx, "open(\"%s\", O_RDONLY): %s", path, strerror(saved));
		errno = saved;
		return NULL;
	}
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	while (buf) {
		if (len == cap) {
			char *bigger = realloc(buf, cap * 2);
			if (!bigger)
				break;
			buf = bigger;
			cap *= 2;
		}
		ssize_t got = read(fd, buf + len, cap - len);
		if (got == 0) {
			close(fd);
			*len_out = len;
			return buf;
		}
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int saved = errno;
			maps_report(diag, ctx, "read(\"%s\"): %s", path, strerror(saved));
			free(buf);
			close(fd);
			errno = saved;
			return NULL;
		}
		len += (size_t)got;
	}
	free(buf);
	close(fd);
	maps_report(diag, ctx, "reading \"%s\": out of memory", path);
	errno = ENOMEM;
	return NULL;
}

struct maps *maps_load(const char *path, maps_diag_fn diag, void *diag_ctx)
{
	size_t len;
	char *text = read_file(path, &len, diag, diag_ctx);
	if (!text)
		return NULL;
	struct maps *m = maps_parse(text, len, path, diag, diag_ctx);
	int saved = errno;
	free(text);
	errno = saved;
	return m;
}

const struct maps_entry *maps_find(const struct maps *m, uint64_t addr)
{
	size_t lo = 0, hi = m->count; /* invariant: every entry before lo starts at or below addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->entries[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct maps_entry *e = &m->entries[lo - 1];
	return addr < e->end ? e : NULL;
}

void maps_free(struct maps *m)
{
	if (!m)
		return;
	struct maps_owned *owned = (struct maps_owned *)m;
	free(owned->paths);
	free(m->entries);
	free(owned);
}
