/* test_symbolize.c: maps parsing and in-process symbolization, checked against the truth.
 *
 * The test writes small C (and, if g++ exists, C++) programs, builds them with gcc (fork + execvp, no
 * shell) as PIE, non-PIE, stripped variants with separate debug files (.gnu_debuglink and the
 * build-id tree) and a dlopen'ed shared library in a directory whose name contains a space, runs
 * them, and reads back what they print: return addresses taken with __builtin_return_address(0) in
 * noinline functions, called from known __LINE__s (directly, and through an always_inline helper),
 * plus function addresses, and the /proc/self/maps they saw. Each address is symbolized from the
 * saved maps and compared with the printed lines and with `addr2line -f -i -C -a -e BIN`.
 * Then: malformed maps lines, missing/replaced/deleted binaries (fallback label, one warning each),
 * and a throughput comparison against addr2line on a generated large program and on python3.
 * Set FAULTLINE_KEEP_TMP=1 to keep the temporary directory. */
#include "maps.h"
#include "symbolize.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static char tmpdir[PATH_MAX];

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *tmp_path(const char *name)
{
	static char buf[32][PATH_MAX]; /* a ring: callers use a path before 32 more are made */
	static int next;
	char *p = buf[next++ % 32];
	if (snprintf(p, PATH_MAX, "%s/%s", tmpdir, name) >= PATH_MAX)
		abort();
	return p;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		fprintf(stderr, "writing %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

static char *read_whole(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	size_t got;
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			char *bigger = realloc(buf, 2 * cap + 1);
			if (!bigger) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = bigger;
			cap *= 2;
		}
	}
	fclose(f);
	if (buf) {
		buf[n] = '\0';
		if (len)
			*len = n;
	}
	return buf;
}

/* Starts ARGV without a shell: stdin from IN_PATH (or /dev/null), stdout to OUT_PATH (or /dev/null),
 * stderr inherited. Returns the pid, or -1. */
static pid_t start(char *const argv[], const char *in_path, const char *out_path)
{
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "fork: %s\n", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		int in = open(in_path ? in_path : "/dev/null", O_RDONLY);
		int out = out_path ? open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644) : open("/dev/null", O_WRONLY);
		if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0)
			_exit(126);
		execvp(argv[0], argv);
		fprintf(stderr, "execvp(%s): %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	return pid;
}

/* Waits for PID (started with ARGV); returns its exit status, or -1. */
static int finish(pid_t pid, char *const argv[])
{
	int status;
	if (pid < 0)
		return -1;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "command failed (status %#x):", status);
		for (int i = 0; argv[i]; i++)
			fprintf(stderr, " %s", argv[i]);
		fputc('\n', stderr);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int run(char *const argv[], const char *in_path, const char *out_path)
{
	return finish(start(argv, in_path, out_path), argv);
}

static void must_run(char *const argv[], const char *in_path, const char *out_path)
{
	if (run(argv, in_path, out_path) != 0) {
		fprintf(stderr, "FATAL: cannot continue\n");
		exit(1);
	}
}

static bool have_program(const char *name)
{
	char *argv[] = { (char *)name, "--version", NULL };
	pid_t pid = fork();
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);
		dup2(devnull, 1);
		dup2(devnull, 2);
		execvp(name, argv);
		_exit(127);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static void remove_tmpdir(void) /* atexit: also after a fatal error */
{
	if (getenv("FAULTLINE_KEEP_TMP"))
		fprintf(stderr, "kept %s\n", tmpdir);
	else if (tmpdir[0])
		nftw(tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ------------------------------------------------------------------------------------------------
 * Warnings collected from the modules. */

struct diag_log {
	int count;
	char last[1024];
	char all[8192];
};

static void collect_diag(void *ctx, const char *message)
{
	struct diag_log *log = ctx;
	log->count++;
	snprintf(log->last, sizeof log->last, "%s", message);
	size_t used = strlen(log->all);
	snprintf(log->all + used, sizeof log->all - used, "%s\n", message);
}

/* ------------------------------------------------------------------------------------------------
 * Part 1: the maps parser. */

static void test_maps_parser(void)
{
	const char *text =
		"00400000-00452000 r-xp 00000000 fe:00 173521                             /usr/bin/dbus-daemon\n"
		"00651000-00652000 r--p 00051000 08:02 173521      /usr/bin/dbus-daemon\n"
		"00e03000-00e24000 rw-p 00000000 00:00 0                                  [heap]\n"
		"7f0000000000-7f0000001000 r-xp 00001000 fe:00 42   /tmp/dir with spaces/lib x.so (deleted)\n"
		"7f0000001000-7f0000002000 rw-p 00000000 00:00 0 \n"
		"7f0000002000-7f0000003000 rw-s 00000000 00:05 77  /dev/zero (deleted)\n"
		"7f0000003000-7f0000004000 r--p 00000000 fe:00 43   /tmp/new\\012line\n"
		"7f0000004000-7f0000005000 rw-p 00000000 00:00 0  [anon:jemalloc pages]\n"
		"7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0                          [stack]\n"
		"7ffc000fe000-7ffc00100000 r-xp 00000000 00:00 0                          [vdso]\n"
		"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n"
		/* malformed: */
		"garbage\n"                                                       /* line 12 */
		"00500000-00400000 r-xp 00000000 fe:00 1 /bad/order\n"            /* 13 */
		"00600000-00601000 rwzp 00000000 fe:00 1 /bad/perms\n"            /* 14 */
		"00600000-00601000 r-xp 0000zz00 fe:00 1 /bad/offset\n"           /* 15 */
		"00600000-00601000 r-xp 00000000 fe00 1 /bad/dev\n"               /* 16 */
		"00600000-00601000 r-xp 00000000 fe:00 -1 /bad/inode\n"           /* 17 */
		"00600000-00601000 r-xp 00000000 fe:00 99999999999999999999 /x\n" /* 18: inode overflow */
		"11112222333344445-11112222333344446 r-xp 0 0:0 0\n"              /* 19: 17 hex digits */
		"\n"                                                              /* 20: empty line */
		"00401000-00402000 r-xp 00001000 fe:00 173521 /overlap\n"         /* 21: overlaps line 1 */
		"00600000-00601000 r-xp 00000000 fe:00 5"; /* 22: no trailing newline, inode without path */
	struct diag_log log = { 0 };
	struct maps *m = maps_parse(text, strlen(text), "saved/maps", collect_diag, &log);
	CHECK(m != NULL, "parse returned NULL");
	if (!m)
		return;
	CHECK(m->count == 11, "count %zu", m->count);
	CHECK(m->malformed == 11, "malformed %u", m->malformed);
	CHECK(log.count == 11, "%d diagnostics:\n%s", log.count, log.all);
	for (int line = 12; line <= 22; line++) {
		char want[64];
		snprintf(want, sizeof want, "saved/maps:%d: ", line);
		CHECK(strstr(log.all, want) != NULL, "no diagnostic for line %d:\n%s", line, log.all);
	}
	CHECK(strstr(log.all, "overlaps line 1") != NULL, "%s", log.all);

	const struct maps_entry *e = maps_find(m, 0x400000);
	CHECK(e && strcmp(e->path, "/usr/bin/dbus-daemon") == 0 && e->kind == MAPS_FILE && e->inode == 173521 &&
		      e->dev_major == 0xfe && e->dev_minor == 0 &&
		      e->prot == (MAPS_PROT_READ | MAPS_PROT_EXEC) && !e->deleted && e->line == 1,
	      "first entry wrong");
	CHECK(maps_find(m, 0x451fff) == e, "last byte of mapping");
	CHECK(maps_find(m, 0x452000) == NULL, "end is exclusive");
	CHECK(maps_find(m, 0x3fffff) == NULL, "below first");
	CHECK(maps_find(m, 0) == NULL, "zero");
	e = maps_find(m, 0x651234);
	CHECK(e && e->pgoff == 0x51000 && e->dev_major == 8 && e->dev_minor == 2, "second entry");
	e = maps_find(m, 0xe03000);
	CHECK(e && e->kind == MAPS_PSEUDO && strcmp(e->path, "[heap]") == 0, "heap");
	e = maps_find(m, 0x7f0000000800);
	CHECK(e && e->deleted && strcmp(e->path, "/tmp/dir with spaces/lib x.so") == 0 && e->pgoff == 0x1000,
	      "deleted path with spaces: '%s'", e ? e->path : "(none)");
	e = maps_find(m, 0x7f0000001000);
	CHECK(e && e->kind == MAPS_ANON && e->path[0] == '\0' && e->prot == (MAPS_PROT_READ | MAPS_PROT_WRITE),
	      "anonymous");
	e = maps_find(m, 0x7f0000002000);
	CHECK(e && e->deleted && (e->prot & MAPS_SHARED) && strcmp(e->path, "/dev/zero") == 0, "shared");
	e = maps_find(m, 0x7f0000003000);
	CHECK(e && strcmp(e->path, "/tmp/new\nline") == 0, "escaped newline");
	e = maps_find(m, 0x7f0000004fff);
	CHECK(e && e->kind == MAPS_PSEUDO && strcmp(e->path, "[anon:jemalloc pages]") == 0, "named anon");
	e = maps_find(m, 0x7ffc000fe010);
	CHECK(e && strcmp(e->path, "[vdso]") == 0, "vdso");
	e = maps_find(m, 0xffffffffff600000ull);
	CHECK(e && strcmp(e->path, "[vsyscall]") == 0 && e->prot == MAPS_PROT_EXEC, "vsyscall");
	CHECK(maps_find(m, 0xfffffffffffffffful) == NULL, "top of address space");
	for (size_t i = 1; i < m->count; i++)
		CHECK(m->entries[i - 1].end <= m->entries[i].start, "not sorted/disjoint at %zu", i);
	maps_free(m);

	/* Empty input, a missing file, and a real /proc/self/maps. */
	m = maps_parse("", 0, NULL, collect_diag, &log);
	CHECK(m && m->count == 0 && m->malformed == 0, "empty");
	maps_free(m);
	log.count = 0;
	errno = 0;
	m = maps_load("/nonexistent/maps", collect_diag, &log);
	CHECK(m == NULL && errno == ENOENT && log.count == 1 && strstr(log.last, "/nonexistent/maps"),
	      "missing file: %s", log.last);
	log.count = 0;
	m = maps_load("/proc/self/maps", collect_diag, &log);
	CHECK(m && m->count > 5 && m->malformed == 0 && log.count == 0, "own maps: %s", log.last);
	if (m) {
		const struct maps_entry *self = maps_find(m, (uint64_t)(uintptr_t)&test_maps_parser);
		CHECK(self && self->kind == MAPS_FILE && (self->prot & MAPS_PROT_EXEC), "own text mapping");
		int local;
		const struct maps_entry *stack = maps_find(m, (uint64_t)(uintptr_t)&local);
		CHECK(stack != NULL, "own stack"); /* "[stack]", or anonymous under valgrind */
	}
	maps_free(m);
	printf("maps parser: ok\n");
}

/* ------------------------------------------------------------------------------------------------
 * Part 2: programs with known callsites. Each prints lines
 *     ret|pc ADDRESS FUNC@FILE:LINE [FUNC@FILE:LINE ...]
 * (innermost frame first; LINE '?' when only addr2line knows it) and saves its maps to argv[1]. */

static const char prog_source[] =
	"#include <dlfcn.h>\n"
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"#include <sys/auxv.h>\n"
	"volatile int sink;\n"
	"int line_direct, line_helper, line_outer;\n"
	"__attribute__((noinline, noipa)) void *where(void) { return __builtin_return_address(0); }\n"
	"__attribute__((noinline, noclone)) void *direct(void)\n"
	"{\n"
	"\tvoid *ra = where(); line_direct = __LINE__;\n"
	"\tsink++;\n"
	"\treturn ra;\n"
	"}\n"
	"static inline __attribute__((always_inline)) void *helper(void)\n"
	"{\n"
	"\tvoid *ra = where(); line_helper = __LINE__;\n"
	"\tsink += 2;\n"
	"\treturn ra;\n"
	"}\n"
	"__attribute__((noinline, noclone)) void *outer(void)\n"
	"{\n"
	"\tvoid *ra = helper(); line_outer = __LINE__;\n"
	"\tsink += 3;\n"
	"\treturn ra;\n"
	"}\n"
	"static void save_maps(const char *path)\n"
	"{\n"
	"\tFILE *in = fopen(\"/proc/self/maps\", \"r\"), *out = fopen(path, \"w\");\n"
	"\tif (!in || !out) exit(2);\n"
	"\tint c;\n"
	"\twhile ((c = fgetc(in)) != EOF) fputc(c, out);\n"
	"\tif (fclose(out) != 0) exit(2);\n"
	"\tfclose(in);\n"
	"}\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\tvoid *ra_direct = direct(), *ra_outer = outer();\n"
	"\tprintf(\"ret %p direct@prog.c:%d\\n\", ra_direct, line_direct);\n"
	"\tprintf(\"ret %p helper@prog.c:%d outer@prog.c:%d\\n\", ra_outer, line_helper, line_outer);\n"
	"\tprintf(\"pc %p direct@prog.c:?\\n\", (void *)direct);\n"
	"\tprintf(\"pc %p where@prog.c:?\\n\", (void *)where);\n"
	"\tvoid *handles[4] = { 0 };\n"
	"\tfor (int i = 2; i < argc; i++) {\n"
	"\t\thandles[i - 2] = dlopen(argv[i], RTLD_NOW);\n"
	"\t\tif (!handles[i - 2]) { fprintf(stderr, \"%s\\n\", dlerror()); return 3; }\n"
	"\t\tvoid (*entry)(void) = (void (*)(void))dlsym(handles[i - 2], \"lib_entry\");\n"
	"\t\tif (!entry) return 4;\n"
	"\t\tentry();\n"
	"\t}\n"
	"\tvoid *libc = dlopen(\"libc.so.6\", RTLD_NOW | RTLD_NOLOAD);\n"
	"\tprintf(\"libc %p getpid\\n\", libc ? dlsym(libc, \"getpid\") : NULL);\n"
	"\tprintf(\"vdso %p\\n\", (void *)(getauxval(AT_SYSINFO_EHDR) + 0x10));\n"
	"\tfflush(stdout);\n"
	"\tsave_maps(argv[1]);\n"
	"\treturn 0;\n"
	"}\n";

static const char lib_source[] =
	"#include <stdio.h>\n"
	"volatile int lib_sink;\n"
	"static int l_direct, l_helper, l_outer;\n"
	"__attribute__((noinline, noipa)) void *lib_where(void) { return __builtin_return_address(0); }\n"
	"__attribute__((noinline, noclone)) void *lib_direct(void)\n"
	"{\n"
	"\tvoid *ra = lib_where(); l_direct = __LINE__;\n"
	"\tlib_sink++;\n"
	"\treturn ra;\n"
	"}\n"
	"static inline __attribute__((always_inline)) void *lib_helper(int x)\n"
	"{\n"
	"\tvoid *ra = lib_where(); l_helper = __LINE__;\n"
	"\tlib_sink += x;\n"
	"\treturn ra;\n"
	"}\n"
	"__attribute__((noinline, noclone)) void *lib_outer(void)\n"
	"{\n"
	"\tvoid *ra = lib_helper(2); l_outer = __LINE__;\n"
	"\tlib_sink += 3;\n"
	"\treturn ra;\n"
	"}\n"
	"void lib_entry(void)\n"
	"{\n"
	"\tvoid *a = lib_direct(), *b = lib_outer();\n"
	"\tprintf(\"ret %p lib_direct@lib.c:%d\\n\", a, l_direct);\n"
	"\tprintf(\"ret %p lib_helper@lib.c:%d lib_outer@lib.c:%d\\n\", b, l_helper, l_outer);\n"
	"\tprintf(\"pc %p lib_outer@lib.c:?\\n\", (void *)lib_outer);\n"
	"}\n";

static const char cxx_source[] =
	"#include <cstdio>\n"
	"namespace ns {\n"
	"volatile int sink;\n"
	"int l_poke, l_twice;\n"
	"__attribute__((noinline, noipa)) void *where() { return __builtin_return_address(0); }\n"
	"template <typename T> static inline __attribute__((always_inline)) void *twice(T x)\n"
	"{\n"
	"\tvoid *ra = where(); l_twice = __LINE__;\n"
	"\tsink += (int)x;\n"
	"\treturn ra;\n"
	"}\n"
	"struct Widget {\n"
	"\t__attribute__((noinline)) void *poke(int v);\n"
	"};\n"
	"void *Widget::poke(int v)\n"
	"{\n"
	"\tvoid *ra = twice<int>(v); l_poke = __LINE__;\n"
	"\tsink += 1;\n"
	"\treturn ra;\n"
	"}\n"
	"}\n"
	"extern \"C\" void lib_entry(void)\n"
	"{\n"
	"\tns::Widget w;\n"
	"\tvoid *ra = w.poke(3);\n"
	"\tstd::printf(\"ret %p twice<int>@cxx.cc:%d ns::Widget::poke(int)@cxx.cc:%d\\n\", ra, ns::l_twice,"
	" ns::l_poke);\n"
	"}\n";

/* One expected frame. */
struct want_frame {
	char function[128];
	char file[64];
	int line; /* -1: unknown, check with addr2line only */
};

struct probe {
	bool is_return;
	uint64_t addr;
	int nframes;
	struct want_frame frames[4];
};

struct run_output {
	struct probe probes[32];
	int nprobes;
	uint64_t libc_getpid;
	uint64_t vdso_addr;
};

static void parse_run_output(const char *text, struct run_output *out)
{
	memset(out, 0, sizeof *out);
	const char *line = text;
	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char buf[1024];
		snprintf(buf, sizeof buf, "%.*s", (int)len, line);
		char *save = NULL, *kind = strtok_r(buf, " ", &save), *addr = strtok_r(NULL, " ", &save);
		if (kind && addr) {
			uint64_t a = strtoull(addr, NULL, 16);
			if (strcmp(kind, "libc") == 0) {
				out->libc_getpid = a;
			} else if (strcmp(kind, "vdso") == 0) {
				out->vdso_addr = a;
			} else if (out->nprobes < 32) {
				struct probe *p = &out->probes[out->nprobes++];
				p->is_return = strcmp(kind, "ret") == 0;
				p->addr = a;
				char *tok;
				while ((tok = strtok_r(NULL, " ", &save)) && p->nframes < 4) {
					struct want_frame *f = &p->frames[p->nframes++];
					char *at = strrchr(tok, '@'), *colon = at ? strrchr(at, ':') : NULL;
					if (!at || !colon) {
						p->nframes--;
						continue;
					}
					snprintf(f->function, sizeof f->function, "%.*s", (int)(at - tok), tok);
					snprintf(f->file, sizeof f->file, "%.*s", (int)(colon - at - 1), at + 1);
					f->line = colon[1] == '?' ? -1 : atoi(colon + 1);
				}
			}
		}
		line = nl ? nl + 1 : line + len;
	}
}

static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	return slash ? slash + 1 : path;
}

/* addr2line's view of one address: frames innermost first. */
struct a2l_frame {
	char function[256];
	char file[PATH_MAX];
	unsigned line;
};

/* Runs `addr2line -f -i -C -a -e BINARY` on ADDRS (link-time); fills FRAMES[i] (up to 8) and
 * COUNTS[i]. Returns 0 on success. */
static int addr2line_frames(const char *binary, const uint64_t *addrs, int n, struct a2l_frame (*frames)[8],
			    int *counts)
{
	const char *in_path = tmp_path("a2l.in"), *out_path = tmp_path("a2l.out");
	FILE *in = fopen(in_path, "w");
	if (!in)
		return -1;
	for (int i = 0; i < n; i++)
		fprintf(in, "0x%" PRIx64 "\n", addrs[i]);
	fclose(in);
	char *argv[] = { "addr2line", "-f", "-i", "-C", "-a", "-e", (char *)binary, NULL };
	if (run(argv, in_path, out_path) != 0)
		return -1;
	char *text = read_whole(out_path, NULL);
	if (!text)
		return -1;
	int idx = -1;
	bool want_function = true; /* lines alternate: function, then "file:line" */
	char *save = NULL;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (l[0] == '0' && l[1] == 'x') { /* -a: the address starts each block */
			if (++idx >= n)
				break;
			counts[idx] = 0;
			want_function = true;
			continue;
		}
		if (idx < 0)
			continue;
		int k = counts[idx];
		struct a2l_frame *f = &frames[idx][k < 8 ? k : 7];
		if (want_function) {
			if (k < 8)
				snprintf(f->function, sizeof f->function, "%s", l);
			want_function = false;
			continue;
		}
		want_function = true;
		counts[idx]++;
		if (k >= 8)
			continue;
		char *disc = strstr(l, " (discriminator"); /* "file:line (discriminator N)" */
		if (disc)
			*disc = '\0';
		char *colon = strrchr(l, ':');
		f->line = 0;
		if (colon) {
			*colon = '\0';
			f->line = colon[1] == '?' ? 0 : (unsigned)strtoul(colon + 1, NULL, 10);
		}
		symbolize_tidy_path(l, f->file, sizeof f->file); /* addr2line shares libbfd's doubled paths */
	}
	free(text);
	return idx + 1 == n ? 0 : -1;
}

/* How our frames compare with addr2line's (our NULL function or file = its "??"). */
enum a2l_verdict {
	A2L_SAME,      /* identical frames */
	A2L_ALIAS,     /* same files and lines, a function under another name: addr2line renames a
			  DWARF function after the ELF symbol at its start, which may be an alias
			  (__GI_malloc for malloc) */
	A2L_NO_DWARF,  /* no line info here: addr2line adds what its symbol scan finds (the preceding
			  symbol even beyond its st_size; the STT_FILE name as file) */
	A2L_DIFFERENT,
};

static enum a2l_verdict compare_with_addr2line(const struct sym_result *r, const struct a2l_frame *frames, int count,
					       char *why, size_t why_size)
{
	int ours = r->nframes ? (int)r->nframes : 1;
	bool renamed = false;
	snprintf(why, why_size, "%d frames vs addr2line's %d", ours, count);
	if (ours == count) {
		for (int k = 0; k < count; k++) {
			const struct sym_frame *f = r->nframes ? &r->frames[k] : NULL;
			const char *fn = f && f->function ? f->function : "??";
			const char *file = f && f->file ? f->file : "??";
			unsigned line = f ? f->line : 0;
			/* addr2line names an inlined C++ frame whose DIE has no linkage name after the
			 * symbol around the address (the outermost function); we keep the DWARF name
			 * (see dwarf_frames in symbolize.c): not a difference. */
			bool cxx_inline = k < count - 1 && strcmp(frames[k].function, frames[count - 1].function) == 0 &&
					  strchr(frames[k].function, '(') && !strchr(fn, '(');
			bool same_name = strcmp(fn, frames[k].function) == 0 || cxx_inline;
			snprintf(why, why_size, "frame %d: ours %s %s:%u, addr2line %s %s:%u", k, fn, file, line,
				 frames[k].function, frames[k].file, frames[k].line);
			if (strcmp(file, frames[k].file) != 0 || line != frames[k].line)
				goto no_match;
			if (!same_name) {
				if (strcmp(fn, "??") == 0 || strcmp(frames[k].function, "??") == 0)
					goto no_match;
				renamed = true;
			}
		}
		return renamed ? A2L_ALIAS : A2L_SAME;
	}
no_match:
	if (count == 1 && frames[0].line == 0 && r->source != SYM_SOURCE_DEBUG &&
	    (r->nframes == 0 || strcmp(r->frames[0].function, frames[0].function) == 0))
		return A2L_NO_DWARF;
	return A2L_DIFFERENT;
}

enum expect_mode {
	EXPECT_FULL,  /* DWARF: every frame with file and line */
	EXPECT_NAMES, /* symbol table only: one frame, the outermost function, no file */
};

/* Runs BINARY (with libraries LIBS), symbolizes what it printed and checks it. */
static void check_program(const char *label, const char *binary, const char *const *libs, int nlibs,
			  enum expect_mode mode, const char *debug_root, bool compare_addr2line)
{
	const char *maps_path = tmp_path("run.maps"), *out_path = tmp_path("run.out");
	char *argv[8] = { (char *)binary, (char *)maps_path };
	for (int i = 0; i < nlibs; i++)
		argv[2 + i] = (char *)libs[i];
	must_run(argv, NULL, out_path);
	char *text = read_whole(out_path, NULL);
	struct run_output out;
	parse_run_output(text ? text : "", &out);
	free(text);
	CHECK(out.nprobes >= 4 + 3 * (nlibs > 0), "%s: only %d probes", label, out.nprobes);

	struct diag_log log = { 0 };
	struct maps *m = maps_load(maps_path, collect_diag, &log);
	CHECK(m && m->malformed == 0, "%s: maps: %s", label, log.last);
	struct symbolizer *sym = symbolizer_new();
	symbolizer_set_diag(sym, collect_diag, &log);
	if (debug_root)
		symbolizer_set_debug_root(sym, debug_root);

	int checked_frames = 0, compared = 0;
	for (int i = 0; i < out.nprobes; i++) {
		const struct probe *p = &out.probes[i];
		const struct sym_result *r = symbolizer_lookup(sym, m, p->addr, p->is_return);
		CHECK(r != NULL, "%s: lookup failed", label);
		if (!r)
			continue;
		bool in_main = strcmp(p->frames[0].file, "prog.c") == 0;
		enum expect_mode want = in_main ? mode : EXPECT_FULL; /* libraries are never stripped */
		if (want == EXPECT_NAMES) {
			const struct want_frame *outermost = &p->frames[p->nframes - 1];
			CHECK(r->source == SYM_SOURCE_SYMTAB && r->nframes == 1 && r->frames[0].file == NULL &&
				      strcmp(r->frames[0].function, outermost->function) == 0,
			      "%s: %s: got source %d, %u frames, %s", label, r->label, r->source, r->nframes,
			      r->nframes ? r->frames[0].function : "-");
			checked_frames++;
			continue;
		}
		CHECK(r->source == SYM_SOURCE_DEBUG && r->nframes == (unsigned)p->nframes,
		      "%s: %s (0x%" PRIx64 "): source %d, %u frames, want %d frames (first %s)", label, r->label, p->addr,
		      r->source, r->nframes, p->nframes, r->nframes ? r->frames[0].function : "-");
		for (int k = 0; k < p->nframes && k < (int)r->nframes; k++) {
			const struct sym_frame *f = &r->frames[k];
			const struct want_frame *w = &p->frames[k];
			CHECK(f->function && strcmp(f->function, w->function) == 0, "%s: frame %d function %s, want %s",
			      label, k, f->function ? f->function : "(null)", w->function);
			CHECK(f->file && strcmp(base_name(f->file), w->file) == 0, "%s: frame %d file %s, want %s", label,
			      k, f->file ? f->file : "(null)", w->file);
			CHECK(w->line < 0 || f->line == (unsigned)w->line, "%s: frame %d (%s) line %u, want %d", label, k,
			      w->function, f->line, w->line);
			checked_frames++;
		}
		/* the same PC again: the cached result */
		CHECK(symbolizer_lookup(sym, m, p->addr, p->is_return) == r, "%s: not cached", label);
		if (compare_addr2line && r->link_addr) {
			struct a2l_frame frames[1][8];
			int count = 0;
			memset(frames, 0, sizeof frames);
			char why[1024];
			CHECK(addr2line_frames(r->binary, &r->link_addr, 1, frames, &count) == 0, "addr2line on %s",
			      r->binary);
			CHECK(compare_with_addr2line(r, frames[0], count, why, sizeof why) == A2L_SAME, "%s: %s: %s", label,
			      r->label, why);
			compared++;
		}
	}

	/* libc (its DWARF sits in /usr/lib/debug/.build-id when libc6-dbg is installed), vDSO, nothing. */
	const struct sym_result *r = symbolizer_lookup(sym, m, out.libc_getpid, false);
	CHECK(r && r->binary && strcmp(base_name(r->binary), "libc.so.6") == 0 && r->nframes >= 1 &&
		      strstr(r->frames[r->nframes - 1].function, "getpid"),
	      "%s: libc getpid: %s", label, r ? r->label : "NULL");
	if (r && debug_root == NULL)
		printf("  %s: libc getpid -> %s %s:%u (source %s)\n", label, r->nframes ? r->frames[0].function : "-",
		       r->nframes && r->frames[0].file ? r->frames[0].file : "-", r->nframes ? r->frames[0].line : 0,
		       r->source == SYM_SOURCE_DEBUG ? "DWARF (separate debug file)" : "symbol table");
	r = symbolizer_lookup(sym, m, out.vdso_addr, false);
	CHECK(r && r->binary && strcmp(r->binary, "[vdso]") == 0 && strcmp(r->label, "[vdso]+0x10") == 0 &&
		      r->source == SYM_SOURCE_NONE,
	      "%s: vdso: %s", label, r ? r->label : "NULL");
	r = symbolizer_lookup(sym, m, 0x10, false);
	CHECK(r && r->binary == NULL && strcmp(r->label, "0x10") == 0 && r->nframes == 0, "%s: unmapped", label);
	CHECK(log.count == 0, "%s: unexpected warnings:\n%s", label, log.all);

	struct sym_stats st;
	symbolizer_get_stats(sym, &st);
	printf("  %-28s %2d probes, %2d frames checked, %2d compared with addr2line; %u binaries, %u with DWARF\n",
	       label, out.nprobes, checked_frames, compared, st.binaries, st.with_debug);
	symbolizer_free(sym);
	maps_free(m);
}

static void build_programs(bool have_cxx)
{
	write_file(tmp_path("prog.c"), prog_source);
	write_file(tmp_path("lib.c"), lib_source);
	if (mkdir(tmp_path("sp ace"), 0755) != 0 && errno != EEXIST) {
		perror("mkdir");
		exit(1);
	}
	char *pie[] = { "gcc", "-O2", "-g", "-fPIE", "-pie", "-o", (char *)tmp_path("prog_pie"),
			(char *)tmp_path("prog.c"), "-ldl", NULL };
	char *nopie[] = { "gcc", "-O2", "-g", "-fno-pie", "-no-pie", "-o", (char *)tmp_path("prog_nopie"),
			  (char *)tmp_path("prog.c"), "-ldl", NULL };
	char *dyn[] = { "gcc", "-O2", "-g", "-fPIE", "-pie", "-rdynamic", "-o", (char *)tmp_path("prog_dynsym"),
			(char *)tmp_path("prog.c"), "-ldl", NULL };
	char *lib[] = { "gcc", "-O2", "-g", "-fPIC", "-shared", "-o", (char *)tmp_path("sp ace/libfl test.so"),
			(char *)tmp_path("lib.c"), NULL };
	must_run(pie, NULL, NULL);
	must_run(nopie, NULL, NULL);
	must_run(dyn, NULL, NULL);
	must_run(lib, NULL, NULL);
	if (have_cxx) {
		write_file(tmp_path("cxx.cc"), cxx_source);
		char *cxx[] = { "g++", "-O2", "-g", "-fPIC", "-shared", "-o", (char *)tmp_path("libcxx.so"),
				(char *)tmp_path("cxx.cc"), NULL };
		must_run(cxx, NULL, NULL);
	}
	/* Stripped variants of the PIE program. */
	char *copy1[] = { "cp", (char *)tmp_path("prog_pie"), (char *)tmp_path("prog_debuglink"), NULL };
	char *copy2[] = { "cp", (char *)tmp_path("prog_pie"), (char *)tmp_path("prog_buildid"), NULL };
	char *copy3[] = { "cp", (char *)tmp_path("prog_pie"), (char *)tmp_path("prog_symtab"), NULL };
	must_run(copy1, NULL, NULL);
	must_run(copy2, NULL, NULL);
	must_run(copy3, NULL, NULL);
	char *keep_debug[] = { "objcopy", "--only-keep-debug", (char *)tmp_path("prog_pie"),
			       (char *)tmp_path("prog_debuglink.debug"), NULL };
	char *strip1[] = { "strip", "-g", (char *)tmp_path("prog_debuglink"), NULL };
	char *link[] = { "objcopy", "--add-gnu-debuglink=prog_debuglink.debug", (char *)tmp_path("prog_debuglink"),
			 NULL };
	char *strip2[] = { "strip", "-g", (char *)tmp_path("prog_buildid"), NULL };
	char *strip3[] = { "strip", "-g", (char *)tmp_path("prog_symtab"), NULL };
	char *strip4[] = { "strip", "--strip-all", (char *)tmp_path("prog_dynsym"), NULL };
	must_run(keep_debug, NULL, NULL);
	must_run(strip1, NULL, NULL);
	/* objcopy looks for the debug file relative to the current directory: run it from tmpdir. */
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof cwd) || chdir(tmpdir) != 0) {
		perror("chdir");
		exit(1);
	}
	must_run(link, NULL, NULL);
	if (chdir(cwd) != 0) {
		perror("chdir");
		exit(1);
	}
	must_run(strip2, NULL, NULL);
	must_run(strip3, NULL, NULL);
	must_run(strip4, NULL, NULL);
}

/* Reads the build-id note of an ELF file with <elf.h> (independently of the module). */
static size_t read_build_id(const char *path, uint8_t *id)
{
	size_t len;
	char *data = read_whole(path, &len);
	size_t found = 0;
	if (!data || len < sizeof(Elf64_Ehdr))
		goto out;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)data;
	for (int i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(data + eh->e_phoff) + i;
		if (ph->p_type != PT_NOTE)
			continue;
		size_t off = ph->p_offset, end = ph->p_offset + ph->p_filesz;
		while (off + sizeof(Elf64_Nhdr) <= end) {
			const Elf64_Nhdr *n = (const Elf64_Nhdr *)(data + off);
			size_t name_at = off + sizeof *n, desc_at = name_at + ((n->n_namesz + 3) & ~3u);
			if (n->n_type == NT_GNU_BUILD_ID && n->n_descsz <= 64) {
				memcpy(id, data + desc_at, n->n_descsz);
				found = n->n_descsz;
				goto out;
			}
			off = desc_at + ((n->n_descsz + 3) & ~3u);
		}
	}
out:
	free(data);
	return found;
}

static void test_programs(void)
{
	bool have_cxx = have_program("g++");
	build_programs(have_cxx);
	const char *libs[2] = { tmp_path("sp ace/libfl test.so"), NULL };
	int nlibs = 1;
	if (have_cxx)
		libs[nlibs++] = tmp_path("libcxx.so");
	else
		printf("  (g++ not found: C++ demangling not tested)\n");
	char lib0[PATH_MAX], lib1[PATH_MAX];
	snprintf(lib0, sizeof lib0, "%s", libs[0]);
	if (nlibs > 1)
		snprintf(lib1, sizeof lib1, "%s", libs[1]);
	const char *libv[2] = { lib0, lib1 };
	char bin[PATH_MAX];

	snprintf(bin, sizeof bin, "%s", tmp_path("prog_pie"));
	check_program("PIE + dlopen", bin, libv, nlibs, EXPECT_FULL, NULL, true);
	snprintf(bin, sizeof bin, "%s", tmp_path("prog_nopie"));
	check_program("non-PIE + dlopen", bin, libv, nlibs, EXPECT_FULL, NULL, true);
	snprintf(bin, sizeof bin, "%s", tmp_path("prog_debuglink"));
	check_program("stripped, .gnu_debuglink", bin, libv, nlibs, EXPECT_FULL, NULL, true);

	/* The build-id tree: DEBUG_ROOT/.build-id/xx/rest.debug (a private root, so addr2line cannot
	 * find it: the printed lines are the reference). */
	uint8_t id[64];
	size_t id_len = read_build_id(tmp_path("prog_buildid"), id);
	CHECK(id_len >= 2, "no build-id in prog_buildid");
	if (id_len >= 2) {
		char dir[PATH_MAX], file[PATH_MAX], root[PATH_MAX];
		snprintf(root, sizeof root, "%s", tmp_path("debugroot"));
		if (snprintf(dir, sizeof dir, "%s/.build-id", root) >= (int)sizeof dir)
			abort();
		mkdir(root, 0755);
		mkdir(dir, 0755);
		snprintf(dir + strlen(dir), sizeof dir - strlen(dir), "/%02x", id[0]);
		mkdir(dir, 0755);
		int n = snprintf(file, sizeof file, "%s/", dir);
		for (size_t i = 1; i < id_len; i++)
			n += snprintf(file + n, sizeof file - (size_t)n, "%02x", id[i]);
		snprintf(file + n, sizeof file - (size_t)n, ".debug");
		char *keep[] = { "objcopy", "--only-keep-debug", (char *)tmp_path("prog_pie"), file, NULL };
		must_run(keep, NULL, NULL);
		snprintf(bin, sizeof bin, "%s", tmp_path("prog_buildid"));
		check_program("stripped, build-id tree", bin, libv, nlibs, EXPECT_FULL, root, false);
	}
	snprintf(bin, sizeof bin, "%s", tmp_path("prog_symtab"));
	check_program("no DWARF, .symtab", bin, libv, nlibs, EXPECT_NAMES, NULL, false);
	snprintf(bin, sizeof bin, "%s", tmp_path("prog_dynsym"));
	check_program("strip --strip-all, .dynsym", bin, libv, nlibs, EXPECT_NAMES, NULL, false);
}

/* ------------------------------------------------------------------------------------------------
 * Part 3: binaries that are gone or not the ones recorded. */

static void test_fallbacks(void)
{
	struct diag_log log = { 0 };
	struct symbolizer *sym = symbolizer_new();
	symbolizer_set_diag(sym, collect_diag, &log);

	/* Missing file. */
	const char *missing = "7f0000000000-7f0000010000 r-xp 00002000 fe:00 1234 /nonexistent/dir/libgone.so\n";
	struct maps *m = maps_parse(missing, strlen(missing), "missing", collect_diag, &log);
	const struct sym_result *r1 = symbolizer_lookup(sym, m, 0x7f0000000100, false);
	const struct sym_result *r2 = symbolizer_lookup(sym, m, 0x7f0000000200, true);
	CHECK(r1 && strcmp(r1->label, "libgone.so+0x2100") == 0 && r1->nframes == 0 && r1->offset == 0x2100 &&
		      r1->source == SYM_SOURCE_NONE && strcmp(r1->binary, "/nonexistent/dir/libgone.so") == 0,
	      "missing: %s", r1 ? r1->label : "NULL");
	CHECK(r2 && strcmp(r2->label, "libgone.so+0x21ff") == 0, "missing, return address: %s", r2 ? r2->label : "NULL");
	CHECK(log.count == 1 && strstr(log.last, "libgone.so") && strstr(log.last, "No such file"),
	      "one warning for a missing binary, got %d: %s", log.count, log.all);
	maps_free(m);

	/* Replaced: run a copy, then put another file (new inode) at its path. */
	char copy[PATH_MAX], maps_path[PATH_MAX], out_path[PATH_MAX];
	snprintf(copy, sizeof copy, "%s", tmp_path("prog_replaced"));
	snprintf(maps_path, sizeof maps_path, "%s", tmp_path("replaced.maps"));
	snprintf(out_path, sizeof out_path, "%s", tmp_path("replaced.out"));
	char *cp[] = { "cp", (char *)tmp_path("prog_pie"), copy, NULL };
	must_run(cp, NULL, NULL);
	char *argv[] = { copy, maps_path, NULL };
	must_run(argv, NULL, out_path);
	char *text = read_whole(out_path, NULL);
	struct run_output out;
	parse_run_output(text ? text : "", &out);
	free(text);
	/* Replace it the way package managers do: write the new file, rename it over the old one (the
	 * old inode stays allocated meanwhile, so the new file cannot reuse its number). */
	char fresh[PATH_MAX];
	if (snprintf(fresh, sizeof fresh, "%s.new", copy) >= (int)sizeof fresh)
		abort();
	char *cp2[] = { "cp", (char *)tmp_path("prog_nopie"), fresh, NULL };
	must_run(cp2, NULL, NULL);
	CHECK(rename(fresh, copy) == 0, "rename: %s", strerror(errno));
	m = maps_load(maps_path, collect_diag, &log);
	log.count = 0;
	for (int i = 0; i < out.nprobes; i++) {
		const struct sym_result *r = symbolizer_lookup(sym, m, out.probes[i].addr, out.probes[i].is_return);
		CHECK(r && r->nframes == 0 && strncmp(r->label, "prog_replaced+0x", 16) == 0, "replaced: %s",
		      r ? r->label : "NULL");
	}
	CHECK(log.count == 1 && strstr(log.last, "replaced"), "one warning for a replaced binary, got %d: %s", log.count,
	      log.all);
	maps_free(m);

	/* Expected build-id differs from the file's (the recorder saw another build). */
	char pie_maps[PATH_MAX], pie[PATH_MAX];
	snprintf(pie, sizeof pie, "%s", tmp_path("prog_pie"));
	snprintf(pie_maps, sizeof pie_maps, "%s", tmp_path("pie.maps"));
	char *argv2[] = { pie, pie_maps, NULL };
	must_run(argv2, NULL, out_path);
	text = read_whole(out_path, NULL);
	parse_run_output(text ? text : "", &out);
	free(text);
	struct symbolizer *sym2 = symbolizer_new();
	symbolizer_set_diag(sym2, collect_diag, &log);
	const uint8_t bogus[20] = { 0xde, 0xad, 0xbe, 0xef };
	CHECK(symbolizer_expect_build_id(sym2, pie, bogus, sizeof bogus) == 0, "expect_build_id");
	m = maps_load(pie_maps, collect_diag, &log);
	log.count = 0;
	const struct sym_result *r = symbolizer_lookup(sym2, m, out.probes[0].addr, true);
	r = symbolizer_lookup(sym2, m, out.probes[1].addr, true);
	CHECK(r && r->nframes == 0 && strncmp(r->label, "prog_pie+0x", 11) == 0, "build-id mismatch: %s",
	      r ? r->label : "NULL");
	CHECK(log.count == 1 && strstr(log.last, "build-id") && strstr(log.last, "deadbeef"), "build-id warning: %s",
	      log.all);
	/* The right build-id passes. */
	uint8_t id[64];
	size_t id_len = read_build_id(pie, id);
	struct symbolizer *sym3 = symbolizer_new();
	symbolizer_set_diag(sym3, collect_diag, &log);
	symbolizer_expect_build_id(sym3, pie, id, id_len);
	log.count = 0;
	r = symbolizer_lookup(sym3, m, out.probes[0].addr, true);
	CHECK(r && r->source == SYM_SOURCE_DEBUG && log.count == 0, "matching build-id: %s %s", r ? r->label : "NULL",
	      log.all);
	symbolizer_free(sym3);
	symbolizer_free(sym2);
	maps_free(m);

	/* "(deleted)" on a line whose inode is not the file's now: someone else's file. */
	struct stat st;
	stat(pie, &st);
	char deleted[PATH_MAX + 128];
	snprintf(deleted, sizeof deleted, "555555554000-555555556000 r-xp 00000000 %02x:%02x %llu %s (deleted)\n",
		 major(st.st_dev), minor(st.st_dev), (unsigned long long)st.st_ino + 1, pie);
	m = maps_parse(deleted, strlen(deleted), "deleted", collect_diag, &log);
	log.count = 0;
	r = symbolizer_lookup(sym, m, 0x555555555123, false);
	CHECK(r && r->nframes == 0 && strcmp(r->label, "prog_pie+0x1123") == 0 && log.count == 1, "deleted: %s / %s",
	      r ? r->label : "NULL", log.all);
	maps_free(m);

	/* Memory that is not a file: the label carries the address (JIT code is told apart by it). */
	const char *anon = "10000-20000 r-xp 00000000 00:00 0 \n30000-40000 r-xp 00000000 00:00 0\n"
			   "50000-60000 rw-p 00000000 00:00 0   [heap]\n";
	m = maps_parse(anon, strlen(anon), "anon", collect_diag, &log);
	log.count = 0;
	r1 = symbolizer_lookup(sym, m, 0x10010, false);
	r2 = symbolizer_lookup(sym, m, 0x30010, false);
	const struct sym_result *r3 = symbolizer_lookup(sym, m, 0x50020, true);
	CHECK(r1 && strcmp(r1->label, "[anon]@0x10010") == 0 && strcmp(r1->binary, "[anon]") == 0 && r1->nframes == 0,
	      "anon: %s", r1 ? r1->label : "NULL");
	CHECK(r2 && strcmp(r2->label, "[anon]@0x30010") == 0 && r2 != r1, "anon 2: %s", r2 ? r2->label : "NULL");
	CHECK(r3 && strcmp(r3->label, "[heap]@0x5001f") == 0, "heap: %s", r3 ? r3->label : "NULL");
	CHECK(log.count == 0, "no warnings for memory that is not a file: %s", log.all);
	maps_free(m);

	/* A file that is not ELF, and a directory. */
	write_file(tmp_path("notelf"), "just text\n");
	char lines[2 * PATH_MAX + 256];
	snprintf(lines, sizeof lines,
		 "10000-20000 r-xp 00000000 00:00 1 %s\n20000-30000 r-xp 00000000 00:00 2 %s\n", tmp_path("notelf"),
		 tmpdir);
	m = maps_parse(lines, strlen(lines), "odd", collect_diag, &log);
	log.count = 0;
	r = symbolizer_lookup(sym, m, 0x10010, false);
	CHECK(r && r->nframes == 0 && strcmp(r->label, "notelf+0x10") == 0, "not ELF: %s", r ? r->label : "NULL");
	r = symbolizer_lookup(sym, m, 0x20010, false);
	CHECK(r && r->nframes == 0, "directory");
	CHECK(log.count == 2, "warnings for odd files: %s", log.all);
	maps_free(m);
	symbolizer_free(sym);
	printf("fallbacks (missing, replaced, build-id mismatch, deleted, not ELF): ok\n");
}

/* ------------------------------------------------------------------------------------------------
 * Part 4: throughput against addr2line. */

struct elf_layout {
	uint64_t text_lo, text_hi; /* link-time range of .text */
	struct {
		uint64_t offset, vaddr, filesz, memsz;
		unsigned flags;
	} loads[8];
	int nloads;
	bool pie;
};

static bool read_layout(const char *path, struct elf_layout *lay)
{
	size_t len;
	char *data = read_whole(path, &len);
	memset(lay, 0, sizeof *lay);
	if (!data || len < sizeof(Elf64_Ehdr) || memcmp(data, ELFMAG, SELFMAG) != 0) {
		free(data);
		return false;
	}
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)data;
	lay->pie = eh->e_type == ET_DYN;
	for (int i = 0; i < eh->e_phnum && lay->nloads < 8; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(data + eh->e_phoff) + i;
		if (ph->p_type == PT_LOAD) {
			lay->loads[lay->nloads].offset = ph->p_offset;
			lay->loads[lay->nloads].vaddr = ph->p_vaddr;
			lay->loads[lay->nloads].filesz = ph->p_filesz;
			lay->loads[lay->nloads].memsz = ph->p_memsz;
			lay->loads[lay->nloads].flags = ph->p_flags;
			lay->nloads++;
		}
	}
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(data + eh->e_shoff);
	const char *names = data + sh[eh->e_shstrndx].sh_offset;
	for (int i = 0; i < eh->e_shnum; i++)
		if (strcmp(names + sh[i].sh_name, ".text") == 0) {
			lay->text_lo = sh[i].sh_addr;
			lay->text_hi = sh[i].sh_addr + sh[i].sh_size;
		}
	free(data);
	return lay->text_hi > lay->text_lo && lay->nloads > 0;
}

/* The maps text the kernel would show for PATH loaded at BASE (PIE) or at its link address. */
static int fake_maps(const char *path, const struct elf_layout *lay, uint64_t base, char *buf, size_t size)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return -1;
	size_t n = 0;
	for (int i = 0; i < lay->nloads; i++) {
		uint64_t page = 4096, start = (lay->loads[i].vaddr & ~(page - 1)) + base;
		uint64_t end = (lay->loads[i].vaddr + lay->loads[i].filesz + page - 1) & ~(page - 1);
		unsigned f = lay->loads[i].flags;
		n += (size_t)snprintf(buf + n, size - n, "%" PRIx64 "-%" PRIx64 " %c%c%cp %08" PRIx64 " %02x:%02x %llu %s\n",
				      start, end + base, f & PF_R ? 'r' : '-', f & PF_W ? 'w' : '-', f & PF_X ? 'x' : '-',
				      lay->loads[i].offset & ~(page - 1), major(st.st_dev), minor(st.st_dev),
				      (unsigned long long)st.st_ino, path);
	}
	return 0;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng_next(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Symbolizes N distinct random PCs over BINARY's .text with the module and with addr2line; prints
 * both rates; checks agreement on every address (REQUIRE_EQUAL) or reports it. */
static void bench_binary(const char *label, const char *binary, int n, bool require_equal)
{
	struct elf_layout lay;
	if (!read_layout(binary, &lay)) {
		printf("  %s: %s unreadable, skipped\n", label, binary);
		return;
	}
	uint64_t base = lay.pie ? 0x555555554000ull : 0;
	static char maps_text[8192];
	if (fake_maps(binary, &lay, base, maps_text, sizeof maps_text) != 0)
		return;
	uint64_t *addrs = calloc((size_t)n, sizeof *addrs);
	/* distinct addresses: stride through .text, a random one in each step, then shuffled */
	uint64_t span = lay.text_hi - lay.text_lo, step = span / (uint64_t)n;
	for (int i = 0; i < n; i++)
		addrs[i] = lay.text_lo + (uint64_t)i * step + (step > 1 ? rng_next() % step : 0);
	for (int i = n - 1; i > 0; i--) {
		int j = (int)(rng_next() % (uint64_t)(i + 1));
		uint64_t t = addrs[i];
		addrs[i] = addrs[j];
		addrs[j] = t;
	}
	struct maps *m = maps_parse(maps_text, strlen(maps_text), "bench", NULL, NULL);
	struct symbolizer *sym = symbolizer_new();
	struct diag_log log = { 0 };
	symbolizer_set_diag(sym, collect_diag, &log);
	const struct sym_result **results = calloc((size_t)n, sizeof *results);
	double t0 = now_seconds();
	for (int i = 0; i < n; i++)
		results[i] = symbolizer_lookup(sym, m, addrs[i] + base, false);
	double t1 = now_seconds();
	for (int i = 0; i < n; i++) /* again: every lookup is a cache hit */
		CHECK(symbolizer_lookup(sym, m, addrs[i] + base, false) == results[i], "cache");
	double t2 = now_seconds();
	struct sym_stats st;
	symbolizer_get_stats(sym, &st);
	CHECK(st.distinct == (uint64_t)n && st.lookups == 2 * (uint64_t)n, "stats: %" PRIu64 " distinct", st.distinct);

	const char *in_path = tmp_path("bench.in"), *out_path = tmp_path("bench.out");
	FILE *in = fopen(in_path, "w");
	for (int i = 0; i < n; i++)
		fprintf(in, "0x%" PRIx64 "\n", addrs[i]);
	fclose(in);
	char *argv[] = { "addr2line", "-f", "-i", "-C", "-e", (char *)binary, NULL };
	double a0 = now_seconds();
	int rc = run(argv, in_path, out_path);
	double a1 = now_seconds();
	CHECK(rc == 0, "addr2line");

	/* agreement, address by address (addr2line again, with -a, so its output can be split) */
	struct a2l_frame(*frames)[8] = calloc((size_t)n, sizeof *frames);
	int *counts = calloc((size_t)n, sizeof *counts);
	int verdicts[4] = { 0 }, first_bad = -1;
	char why[1024] = "";
	if (addr2line_frames(binary, addrs, n, frames, counts) == 0) {
		for (int i = 0; i < n; i++) {
			char w[1024];
			int c = counts[i] > 8 ? 8 : counts[i];
			enum a2l_verdict v = !results[i]                ? A2L_DIFFERENT
					     : results[i]->nframes > 8 ? A2L_SAME /* deeper than we parse */
								       : compare_with_addr2line(results[i], frames[i], c, w, sizeof w);
			verdicts[v]++;
			if (v != A2L_DIFFERENT)
				continue;
			if (getenv("FAULTLINE_TEST_VERBOSE"))
				fprintf(stderr, "    differs: 0x%" PRIx64 ": %s\n", addrs[i], w);
			if (first_bad < 0) {
				first_bad = i;
				if (snprintf(why, sizeof why, "0x%" PRIx64 ": %s", addrs[i], w) >= (int)sizeof why)
					why[sizeof why - 1] = '\0';
			}
		}
	} else {
		verdicts[A2L_DIFFERENT] = n;
		snprintf(why, sizeof why, "addr2line output unreadable");
	}
	printf("  %s: %s, %d distinct PCs -> %" PRIu64 " frames (DWARF: %s)\n", label, binary, n, st.frames,
	       st.with_debug ? "yes" : "no");
	printf("    libbfd in-process:  %9.0f PCs/s (%.3f s, incl. open + DWARF load); cached: %.0f lookups/s\n",
	       n / (t1 - t0), t1 - t0, n / (t2 - t1));
	printf("    addr2line -f -i -C: %9.0f PCs/s (%.3f s, one process, addresses on stdin) -> in-process %.1fx faster\n",
	       n / (a1 - a0), a1 - a0, (a1 - a0) / (t1 - t0));
	printf("    vs addr2line: %d same frames, %d same but an alias name (addr2line prefers the ELF symbol), "
	       "%d without line info (addr2line guesses from symbols), %d different%s%s\n",
	       verdicts[A2L_SAME], verdicts[A2L_ALIAS], verdicts[A2L_NO_DWARF], verdicts[A2L_DIFFERENT],
	       first_bad >= 0 ? "; first: " : "", why);
	if (require_equal)
		CHECK(verdicts[A2L_SAME] + verdicts[A2L_NO_DWARF] == n, "%s: %d of %d differ from addr2line; first: %s",
		      label, n - verdicts[A2L_SAME] - verdicts[A2L_NO_DWARF], n, why);
	else
		CHECK(verdicts[A2L_DIFFERENT] <= n / 100, "%s: %d of %d differ from addr2line; first: %s", label,
		      verdicts[A2L_DIFFERENT], n, why);
	CHECK(log.count == 0, "%s: warnings: %s", label, log.all);
	free(frames);
	free(counts);
	free(results);
	free(addrs);
	symbolizer_free(sym);
	maps_free(m);
}

/* Part K of a program of NFUNC noinline functions (fn<i>, i ≡ K mod PARTS), each with an inlined
 * helper called twice; part 0 also holds main and the table that keeps them all. */
static void generate_part(const char *path, int nfunc, int part, int parts)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	fprintf(f, "extern volatile int g[64];\n");
	if (part == 0)
		fprintf(f, "volatile int g[64];\n");
	for (int i = part; i < nfunc; i += parts)
		fprintf(f,
			"static inline __attribute__((always_inline)) int in%d(int x)\n{\n\tint y = x * %d + g[x & 63];\n"
			"\tif (y & 1)\n\t\tg[(y >> 3) & 63] = y;\n\treturn y ^ %d;\n}\n"
			"__attribute__((noinline)) int fn%d(int x)\n{\n\tint s = in%d(x);\n\tif (s > %d)\n"
			"\t\ts -= in%d(s + 1);\n\treturn s + g[%d];\n}\n",
			i, i + 3, i, i, i, 1000 + i, i, i % 64);
	if (part == 0) {
		for (int i = 0; i < nfunc; i++)
			fprintf(f, "int fn%d(int);\n", i);
		fprintf(f, "typedef int (*fn_t)(int);\nfn_t table[] = {\n");
		for (int i = 0; i < nfunc; i++)
			fprintf(f, "\tfn%d,\n", i);
		fprintf(f, "};\nint main(int argc, char **argv)\n{\n\t(void)argv;\n\tint s = 0;\n"
			   "\tfor (unsigned i = 0; i < sizeof table / sizeof table[0]; i++)\n\t\ts += table[i](argc);\n"
			   "\treturn s & 1;\n}\n");
	}
	fclose(f);
}

/* Builds the generated program from PARTS files compiled concurrently. */
static bool build_big_program(const char *bin, int nfunc, int parts)
{
	char srcs[8][PATH_MAX], objs[8][PATH_MAX];
	char *argvs[8][10];
	pid_t pids[8];
	for (int k = 0; k < parts; k++) {
		char name[32];
		snprintf(name, sizeof name, "big%d.c", k);
		snprintf(srcs[k], PATH_MAX, "%s", tmp_path(name));
		snprintf(name, sizeof name, "big%d.o", k);
		snprintf(objs[k], PATH_MAX, "%s", tmp_path(name));
		generate_part(srcs[k], nfunc, k, parts);
		char *argv[] = { "gcc", "-O2", "-g", "-fPIE", "-c", "-o", objs[k], srcs[k], NULL };
		memcpy(argvs[k], argv, sizeof argv);
		pids[k] = start(argvs[k], NULL, NULL);
	}
	bool ok = true;
	for (int k = 0; k < parts; k++)
		ok = finish(pids[k], argvs[k]) == 0 && ok;
	if (!ok)
		return false;
	char *link[16] = { "gcc", "-pie", "-o", (char *)bin };
	for (int k = 0; k < parts; k++)
		link[4 + k] = objs[k];
	return run(link, NULL, NULL) == 0;
}

static void test_throughput(void)
{
	/* make test checks agreement with addr2line on a small sample; the speed comparison at
	 * full size (a benchmark, minutes on a loaded machine) runs with FAULTLINE_TEST_LONG=1 */
	bool long_run = getenv("FAULTLINE_TEST_LONG") != NULL;
	int nfunc = long_run ? 30000 : 300, parts = 4, npcs = long_run ? 20000 : 1000;
	char bin[PATH_MAX];
	snprintf(bin, sizeof bin, "%s", tmp_path("big"));
	double c0 = now_seconds();
	bool built = build_big_program(bin, nfunc, parts);
	CHECK(built, "building the generated program");
	struct stat st;
	if (built && stat(bin, &st) == 0) {
		printf("throughput, generated program (%d functions + %d inlined, %.1f MB, built in %.1f s):\n", nfunc,
		       nfunc, st.st_size / 1e6, now_seconds() - c0);
		bench_binary("generated -O2 -g PIE", bin, npcs, true);
	}
	/* libc: large, real, DWARF in a separate (compressed) debug file when libc6-dbg is installed. */
	printf("throughput, installed binaries:\n");
	bench_binary("libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6", npcs, false);
	/* python3: stripped, no debug file here: names from .dynsym only. */
	bench_binary("python3 (stripped)", "/usr/bin/python3", npcs, false);
}

/* libbfd's DWARF 5 paths with their directory twice become the file's own path; others stay. */
static void test_tidy_path(void)
{
	static const char *const cases[][2] = {
		{ "./elf/./elf/dl-init.c", "./elf/dl-init.c" },
		{ "./nptl/./nptl/pthread_create.c", "./nptl/pthread_create.c" },
		{ "./a/b/./a/b/c.c", "./a/b/c.c" },
		{ "./a/./b/c.c", "./a/./b/c.c" },          /* another directory: kept */
		{ "/usr/src/./usr/src/x.c", "/usr/src/./usr/src/x.c" }, /* absolute: kept */
		{ "./elf/./elfx/y.c", "./elf/./elfx/y.c" },  /* a longer name, not the directory */
		{ "x.c", "x.c" },
		{ "", "" },
	};
	char out[64];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = symbolize_tidy_path(cases[i][0], out, sizeof(out));
		CHECK(strcmp(out, cases[i][1]) == 0 && n == strlen(cases[i][1]), "tidy '%s': '%s' (%zu), want '%s'",
		      cases[i][0], out, n, cases[i][1]);
	}
	CHECK(symbolize_tidy_path("./elf/./elf/dl-init.c", out, 4) >= 4, "a short buffer reports the length needed");
	printf("ok tidy paths\n");
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_tidy_path();
	snprintf(tmpdir, sizeof tmpdir, "/tmp/faultline-symtest-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	atexit(remove_tmpdir);
	if (!have_program("gcc") || !have_program("addr2line") || !have_program("objcopy")) {
		printf("SKIP: gcc, addr2line or objcopy missing\n");
		return 77;
	}
	test_maps_parser();
	printf("programs (symbolized from their saved maps, checked against __LINE__ and addr2line):\n");
	test_programs();
	test_fallbacks();
	test_throughput();
	return check_summary("test_symbolize");
}
