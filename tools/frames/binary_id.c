/* binary_id.c: a mapped binary's identity (build-id, size, mtime) and DIR/binaries (binary_id.h).
 *
 * The build-id is read as perf reads it: the ELF header, its program headers, and in each PT_NOTE
 * segment the note named "GNU" of type NT_GNU_BUILD_ID. Only those few hundred bytes are read
 * (pread), not the whole file: `record` does this for every mapped library after each run. */
#include "binary_id.h"
#include "regular_file.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "temp_file.h"

#define MAX_NOTE_BYTES (64 * 1024)   /* a larger PT_NOTE is not one a linker wrote */
#define MAX_PHDRS 512

static bool read_exact(int fd, void *buf, size_t len, uint64_t at)
{
	size_t got = 0;
	while (got < len) {
		ssize_t r = pread(fd, (char *)buf + got, len - got, (off_t)(at + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		got += (size_t)r;
	}
	return true;
}

size_t binary_id_from_notes(const unsigned char *p, size_t len, size_t align, uint8_t id[BINARY_ID_MAX_BUILD_ID])
{
	size_t at = 0;
	while (len - at >= sizeof(Elf64_Nhdr)) {
		Elf64_Nhdr note;
		memcpy(&note, p + at, sizeof(note));
		size_t name_at = at + sizeof(note);
		size_t name_len = ((size_t)note.n_namesz + align - 1) & ~(align - 1);
		size_t desc_len = ((size_t)note.n_descsz + align - 1) & ~(align - 1);
		if (note.n_namesz > len || note.n_descsz > len || name_len > len - name_at ||
		    desc_len > len - name_at - name_len)
			return 0;
		if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 && memcmp(p + name_at, "GNU", 4) == 0 &&
		    note.n_descsz > 0 && note.n_descsz <= BINARY_ID_MAX_BUILD_ID) {
			memcpy(id, p + name_at + name_len, note.n_descsz);
			return note.n_descsz;
		}
		at = name_at + name_len + desc_len;
	}
	return 0;
}

/* The build-id of the ELF file open on fd, if it has one (64-bit ELF only). */
static void read_build_id(int fd, uint64_t file_size, struct binary_id *out)
{
	Elf64_Ehdr eh;
	if (!read_exact(fd, &eh, sizeof(eh), 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 ||
	    eh.e_phnum > MAX_PHDRS || eh.e_phoff > file_size)
		return;
	Elf64_Phdr ph[MAX_PHDRS];
	if (!read_exact(fd, ph, eh.e_phnum * sizeof(ph[0]), eh.e_phoff))
		return;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type != PT_NOTE || ph[i].p_filesz == 0 || ph[i].p_filesz > MAX_NOTE_BYTES ||
		    ph[i].p_offset > file_size || ph[i].p_filesz > file_size - ph[i].p_offset)
			continue;
		unsigned char *notes = malloc(ph[i].p_filesz);
		if (!notes)
			return;
		if (read_exact(fd, notes, ph[i].p_filesz, ph[i].p_offset))
			out->build_id_len = binary_id_from_notes(notes, ph[i].p_filesz, ph[i].p_align == 8 ? 8 : 4,
								 out->build_id);
		free(notes);
		if (out->build_id_len)
			return;
	}
}

int binary_id_read(const char *path, struct binary_id *out, char *err, size_t errlen)
{
	struct stat st;
	memset(out, 0, sizeof(*out));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "open(\"%s\", O_RDONLY): %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: %s", path, S_ISREG(st.st_mode) ? strerror(errno) : "not a regular file");
		close(fd);
		return -1;
	}
	out->size = (uint64_t)st.st_size;
	out->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	out->inode = (uint64_t)st.st_ino;
	read_build_id(fd, out->size, out);
	close(fd);
	return 0;
}

char *binary_id_hex(const uint8_t *id, size_t len, char *buf)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < len; i++) {
		buf[2 * i] = digits[id[i] >> 4];
		buf[2 * i + 1] = digits[id[i] & 15];
	}
	buf[2 * len] = '\0';
	return buf;
}

int binary_id_archive_name(const struct binary_id *id, char *buf, size_t len)
{
	char rest[2 * BINARY_ID_MAX_BUILD_ID + 1];
	if (id->build_id_len < 2)
		return -1;
	binary_id_hex(id->build_id + 1, id->build_id_len - 1, rest);
	int n = snprintf(buf, len, "%s/%02x/%s", BINARY_ARCHIVE_DIR, id->build_id[0], rest);
	return n > 0 && (size_t)n < len ? 0 : -1;
}

/* ---------------------------------------------------------------- the file */

static void put_escaped(const char *s, FILE *f)
{
	for (; *s; s++) {
		if (*s == '\n')
			fputs("\\n", f);
		else if (*s == '\\')
			fputs("\\\\", f);
		else
			putc(*s, f);
	}
}

int binary_ids_write(const char *dir, const struct binary_id *ids, size_t n, char *err, size_t errlen)
{
	char path[4096], hex[2 * BINARY_ID_MAX_BUILD_ID + 1];
	struct temp_file t;
	snprintf(path, sizeof(path), "%s/%s", dir, BINARY_IDS_FILE);
	if (temp_file_begin(&t, path, ".tmp", false, err, errlen) < 0)
		return -1;
	FILE *f = fopen(t.tmp, "we");
	if (!f) {
		snprintf(err, errlen, "fopen(\"%s\", \"w\"): %s", t.tmp, strerror(errno));
		return -1;
	}
	fputs("# faultline binaries: build-id size mtime_ns archived path\n", f);
	for (size_t i = 0; i < n; i++) {
		const struct binary_id *b = &ids[i];
		fprintf(f, "%s\t%llu\t%lld\t", b->build_id_len ? binary_id_hex(b->build_id, b->build_id_len, hex) : "-",
			(unsigned long long)b->size, (long long)b->mtime_ns);
		put_escaped(b->archived ? b->archived : "-", f);
		putc('\t', f);
		put_escaped(b->path, f);
		putc('\n', f);
	}
	int failed = ferror(f);
	if (fclose(f) != 0 || failed) {
		snprintf(err, errlen, "writing %s: %s", t.tmp, strerror(failed ? EIO : errno));
		temp_file_discard(&t);
		return -1;
	}
	return temp_file_commit(&t, TEMP_FILE_REPLACE, err, errlen);
}

/* Undoes put_escaped in place. */
static void unescape(char *s)
{
	char *w = s;
	for (; *s; s++) {
		if (*s == '\\' && (s[1] == 'n' || s[1] == '\\'))
			*w++ = *++s == 'n' ? '\n' : '\\';
		else
			*w++ = *s;
	}
	*w = '\0';
}

static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Parses one line (without its newline) into b. Returns false when damaged. */
static bool parse_line(char *line, struct binary_id *b)
{
	char *field[5];
	memset(b, 0, sizeof(*b));
	for (int i = 0; i < 4; i++) {
		char *tab = strchr(line, '\t');
		if (!tab)
			return false;
		*tab = '\0';
		field[i] = line;
		line = tab + 1;
	}
	field[4] = line;
	if (strcmp(field[0], "-") != 0) {
		size_t len = strlen(field[0]);
		if (len % 2 || len == 0 || len > 2 * BINARY_ID_MAX_BUILD_ID)
			return false;
		for (size_t i = 0; i < len / 2; i++) {
			int hi = hex_digit(field[0][2 * i]), lo = hex_digit(field[0][2 * i + 1]);
			if (hi < 0 || lo < 0)
				return false;
			b->build_id[i] = (uint8_t)(hi << 4 | lo);
		}
		b->build_id_len = len / 2;
	}
	char *end;
	errno = 0;
	b->size = strtoull(field[1], &end, 10);
	if (errno || *end || end == field[1])
		return false;
	b->mtime_ns = strtoll(field[2], &end, 10);
	if (errno || *end || end == field[2] || field[4][0] != '/')
		return false;
	unescape(field[3]);
	unescape(field[4]);
	b->path = strdup(field[4]);
	if (!b->path)
		return false;
	b->archived = strcmp(field[3], "-") != 0 && !strstr(field[3], "..") ? strdup(field[3]) : NULL;
	return true;
}

int binary_ids_load(const char *dir, struct binary_id **out, size_t *n, unsigned *skipped, char *err,
		    size_t errlen)
{
	char path[4096];
	char *line = NULL;
	size_t cap = 0, count = 0, alloc = 0;
	struct binary_id *ids = NULL;
	*out = NULL, *n = 0, *skipped = 0;
	snprintf(path, sizeof(path), "%s/%s", dir, BINARY_IDS_FILE);
	FILE *f = regular_file_fopen(path, err, errlen); /* never blocks on a FIFO planted there */
	if (!f)
		return errno == ENOENT ? 0 : -1;
	ssize_t len;
	while ((len = getline(&line, &cap, f)) >= 0) {
		if (len && line[len - 1] == '\n')
			line[--len] = '\0';
		if (line[0] == '#' || len == 0)
			continue;
		if (count == alloc) {
			size_t ncap = alloc ? 2 * alloc : 16;
			struct binary_id *grown = realloc(ids, ncap * sizeof(*grown));
			if (!grown)
				goto oom;
			ids = grown, alloc = ncap;
		}
		if (parse_line(line, &ids[count]))
			count++;
		else
			(*skipped)++;
	}
	free(line);
	fclose(f);
	*out = ids, *n = count;
	return 0;
oom:
	free(line);
	fclose(f);
	binary_ids_free(ids, count);
	snprintf(err, errlen, "%s: out of memory", path);
	return -1;
}

void binary_ids_free(struct binary_id *ids, size_t n)
{
	for (size_t i = 0; ids && i < n; i++) {
		free(ids[i].path);
		free(ids[i].archived);
	}
	free(ids);
}
