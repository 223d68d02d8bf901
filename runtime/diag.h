/* diag.h: output and diagnostics that are safe on any thread, including fault handlers and signal
 * handlers: no malloc, no stdio, no locale. Messages are formatted into a stack buffer and
 * written to stderr with one write(2). */
#ifndef FL_DIAG_H
#define FL_DIAG_H

#include <stddef.h>
#include <stdint.h>

/* Append helpers over a fixed buffer; they never overflow and always NUL-terminate. */
struct fl_buf {
	char *p;
	size_t len, cap;
};
void fl_buf_str(struct fl_buf *b, const char *s);
void fl_buf_u64(struct fl_buf *b, uint64_t v);
void fl_buf_i64(struct fl_buf *b, int64_t v);
void fl_buf_hex(struct fl_buf *b, uint64_t v);
void fl_buf_json_str(struct fl_buf *b, const char *s); /* quoted and escaped */
/* A member of a flat JSON object written one a line (meta.json, stats.json: their keys are
 * faultline/record_schema.h's): ",\n  \"KEY\": " then the value; fl_buf_json_key leaves the value
 * to the caller. */
void fl_buf_json_key(struct fl_buf *b, const char *key);
void fl_buf_json_key_u64(struct fl_buf *b, const char *key, uint64_t v);
void fl_buf_json_key_str(struct fl_buf *b, const char *key, const char *v);

/* Writes all of buf to fd, retrying on EINTR and short writes; returns 0 or the errno.
 * *written (if not NULL) receives the bytes written before a failure. */
int fl_write_all(int fd, const void *buf, size_t len, size_t *written);

/* "faultline: <msg>\n" on stderr. fl_log_errno appends ": <call> failed: <strerror>". */
void fl_log(const char *msg);
void fl_log_errno(const char *what, int err);
void fl_log_u64(const char *before, uint64_t v, const char *after);

/* The runtime's invariants (pages.h, evict.c, region.c, ...), checked in the debug build
 * (make builds build/debug/libfaultline.so with -DFL_DEBUG; the test suite runs planted programs
 * with it): a broken one prints "faultline: invariant broken at FILE:LINE: COND" and aborts. In
 * the normal build the condition is not evaluated. */
#ifdef FL_DEBUG
#define FL_ASSERT(cond) ((cond) ? (void)0 : fl_invariant_broken(#cond, __FILE__, __LINE__))
#else
#define FL_ASSERT(cond) ((void)sizeof((cond) ? 1 : 0)) /* not evaluated; names stay used */
#endif
void fl_invariant_broken(const char *cond, const char *file, int line) __attribute__((noreturn));

#endif
