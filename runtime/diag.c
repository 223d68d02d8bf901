/* diag.c: async-signal-safe message formatting and output (see diag.h). */
#include "diag.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <sys/syscall.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>

void fl_buf_str(struct fl_buf *b, const char *s)
{
	while (*s && b->len + 1 < b->cap)
		b->p[b->len++] = *s++;
	if (b->cap)
		b->p[b->len] = '\0';
}

void fl_buf_u64(struct fl_buf *b, uint64_t v)
{
	char tmp[24];
	int i = sizeof(tmp) - 1;
	tmp[i] = '\0';
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	fl_buf_str(b, tmp + i);
}

void fl_buf_i64(struct fl_buf *b, int64_t v)
{
	if (v < 0) {
		fl_buf_str(b, "-");
		fl_buf_u64(b, (uint64_t)0 - (uint64_t)v);
	} else {
		fl_buf_u64(b, (uint64_t)v);
	}
}

void fl_buf_hex(struct fl_buf *b, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[20];
	int i = sizeof(tmp) - 1;
	tmp[i] = '\0';
	do {
		tmp[--i] = digits[v & 15];
		v >>= 4;
	} while (v);
	fl_buf_str(b, "0x");
	fl_buf_str(b, tmp + i);
}

void fl_buf_json_str(struct fl_buf *b, const char *s)
{
	static const char digits[] = "0123456789abcdef";
	char esc[7];
	fl_buf_str(b, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			esc[0] = '\\', esc[1] = (char)c, esc[2] = '\0';
			fl_buf_str(b, esc);
		} else if (c < 0x20) {
			memcpy(esc, "\\u00", 4);
			esc[4] = digits[c >> 4], esc[5] = digits[c & 15], esc[6] = '\0';
			fl_buf_str(b, esc);
		} else {
			esc[0] = (char)c, esc[1] = '\0';
			fl_buf_str(b, esc);
		}
	}
	fl_buf_str(b, "\"");
}

void fl_buf_json_key(struct fl_buf *b, const char *key)
{
	fl_buf_str(b, ",\n  \"");
	fl_buf_str(b, key);
	fl_buf_str(b, "\": ");
}

void fl_buf_json_key_u64(struct fl_buf *b, const char *key, uint64_t v)
{
	fl_buf_json_key(b, key);
	fl_buf_u64(b, v);
}

void fl_buf_json_key_str(struct fl_buf *b, const char *key, const char *v)
{
	fl_buf_json_key(b, key);
	fl_buf_json_str(b, v);
}

int fl_write_all(int fd, const void *buf, size_t len, size_t *written)
{
	const char *p = buf;
	size_t done = 0;
	int err = 0;
	while (done < len) {
		/* the raw system call (never the shim's write); diag.c stands below sys.c */
		ssize_t w = syscall(SYS_write, fd, p + done, len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			err = w < 0 ? errno : EIO;
			break;
		}
		done += (size_t)w;
	}
	if (written)
		*written = done;
	return err;
}

/* Where the runtime's messages go: its own copy of the program's stderr (runtime.c, which keeps
 * it following the program's), so that a program that closes descriptor 2 and opens a file,
 * which gets that number, never finds them in its file. 2 until the copy is made; -1 (nowhere)
 * when there was no stderr at start. */
static int log_fd = 2;

void fl_log_to(int fd)
{
	log_fd = fd;
}

static void write_all_stderr(const char *s, size_t n)
{
	int saved = errno;
	if (log_fd >= 0)
		fl_write_all(log_fd, s, n, NULL);
	errno = saved;
}

void fl_log(const char *msg)
{
	char tmp[512];
	struct fl_buf b = { tmp, 0, sizeof(tmp) };
	fl_buf_str(&b, "faultline: ");
	fl_buf_str(&b, msg);
	fl_buf_str(&b, "\n");
	write_all_stderr(tmp, b.len);
}

void fl_log_errno(const char *what, int err)
{
	char tmp[512];
	struct fl_buf b = { tmp, 0, sizeof(tmp) };
	const char *desc = strerrordesc_np(err);
	fl_buf_str(&b, "faultline: ");
	fl_buf_str(&b, what);
	fl_buf_str(&b, " failed: ");
	fl_buf_str(&b, desc ? desc : "unknown error");
	fl_buf_str(&b, "\n");
	write_all_stderr(tmp, b.len);
}

void fl_log_u64(const char *before, uint64_t v, const char *after)
{
	char tmp[512];
	struct fl_buf b = { tmp, 0, sizeof(tmp) };
	fl_buf_str(&b, "faultline: ");
	fl_buf_str(&b, before);
	fl_buf_u64(&b, v);
	fl_buf_str(&b, after);
	fl_buf_str(&b, "\n");
	write_all_stderr(tmp, b.len);
}

void fl_invariant_broken(const char *cond, const char *file, int line)
{
	char msg[512];
	struct fl_buf b = { msg, 0, sizeof(msg) };
	fl_buf_str(&b, "invariant broken at ");
	fl_buf_str(&b, file);
	fl_buf_str(&b, ":");
	fl_buf_u64(&b, (uint64_t)line);
	fl_buf_str(&b, ": ");
	fl_buf_str(&b, cond);
	fl_log(msg);
	abort();
}

/* ---- debug marks (diag.h: FL_ASSERT, FL_TESTCASE) ---- */

#define MARK_SLOTS 256

struct mark {
	const char *_Atomic cond; /* the key: the string literal of one site */
	const char *kind, *file;
	_Atomic int line;         /* set after cond: 0 until the slot's site is complete */
	_Atomic uint64_t count;
};
static struct mark marks[MARK_SLOTS];
static _Atomic uint64_t marks_overflow;

void fl_debug_mark(const char *kind, const char *cond, const char *file, int line)
{
	size_t start = ((uintptr_t)cond >> 3) % MARK_SLOTS;
	for (size_t i = 0; i < MARK_SLOTS; i++) {
		struct mark *m = &marks[(start + i) % MARK_SLOTS];
		const char *cur = atomic_load_explicit(&m->cond, memory_order_acquire);
		if (!cur) {
			const char *none = NULL;
			if (atomic_compare_exchange_strong(&m->cond, &none, cond)) {
				m->kind = kind;
				m->file = file;
				atomic_store_explicit(&m->line, line, memory_order_release);
				cur = cond;
			} else {
				cur = none;
			}
		}
		if (cur == cond) {
			atomic_fetch_add_explicit(&m->count, 1, memory_order_relaxed);
			return;
		}
	}
	atomic_fetch_add_explicit(&marks_overflow, 1, memory_order_relaxed);
}

static int marks_wanted;

void fl_debug_marks_setup(void)
{
	const char *want = getenv("FAULTLINE_DEBUG_MARKS");
	marks_wanted = want && strcmp(want, "1") == 0;
}

void fl_debug_marks_report(void)
{
	if (!marks_wanted)
		return;
	for (size_t i = 0; i < MARK_SLOTS; i++) {
		struct mark *m = &marks[i];
		int line = atomic_load_explicit(&m->line, memory_order_acquire);
		if (!line)
			continue;
		char text[512];
		struct fl_buf b = { text, 0, sizeof(text) };
		fl_buf_str(&b, "faultline: mark ");
		fl_buf_str(&b, m->kind);
		fl_buf_str(&b, " ");
		fl_buf_str(&b, m->file);
		fl_buf_str(&b, ":");
		fl_buf_u64(&b, (uint64_t)line);
		fl_buf_str(&b, " ");
		fl_buf_str(&b, atomic_load(&m->cond));
		fl_buf_str(&b, ": ");
		fl_buf_u64(&b, atomic_load_explicit(&m->count, memory_order_relaxed));
		fl_buf_str(&b, "\n");
		fl_write_all(2, b.p, b.len, NULL);
	}
	if (atomic_load(&marks_overflow))
		fl_log_u64("marks beyond the table (not listed): ", atomic_load(&marks_overflow), " passes");
}
