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
void fl_log_to(int fd); /* where the runtime's messages go from now on (its own copy of stderr) */
void fl_log(const char *msg);
void fl_log_errno(const char *what, int err);
void fl_log_u64(const char *before, uint64_t v, const char *after);

/* The runtime's invariants, checked in the debug build (make builds build/debug/libfaultline.so
 * with -DFL_DEBUG; tests/cases/rt_debug_runtime.sh runs planted programs with it): the page-state
 * transitions (pages.h: a page is BUSY when unlocked, STAGED only with FAR, the local count never
 * goes below zero), the region's extents (region.c), a page installed by a fault (fault.c), a
 * sample's owner (fault_sample.c). A broken one prints "faultline: invariant broken at
 * FILE:LINE: COND" and aborts. In the normal build the condition is not evaluated.
 *
 * FL_TESTCASE(cond) marks a rare branch, as SQLite's testcase() does: in the debug build it
 * counts that cond was true there, so a test can see that the branch was reached at all. Every
 * FL_ASSERT is counted the same way (how often it was checked). With FAULTLINE_DEBUG_MARKS=1 the
 * debug runtime prints the counts at exit (fl_debug_marks_report), one line each:
 *     faultline: mark assert|testcase FILE:LINE COND: N
 * In the normal build neither is evaluated. */
#ifdef FL_DEBUG
#define FL_ASSERT(cond) \
	((cond) ? fl_debug_mark("assert", #cond, __FILE__, __LINE__) : fl_invariant_broken(#cond, __FILE__, __LINE__))
#define FL_TESTCASE(cond) ((cond) ? fl_debug_mark("testcase", #cond, __FILE__, __LINE__) : (void)0)
#else
#define FL_ASSERT(cond) ((void)sizeof((cond) ? 1 : 0)) /* not evaluated; names stay used */
#define FL_TESTCASE(cond) ((void)sizeof((cond) ? 1 : 0))
#endif
void fl_invariant_broken(const char *cond, const char *file, int line) __attribute__((noreturn));
/* Counts one pass of the mark COND at FILE:LINE (a fixed table, lock-free, no allocation: safe
 * on fault handlers); marks beyond the table's size are counted as one overflow. */
void fl_debug_mark(const char *kind, const char *cond, const char *file, int line);
/* Reads FAULTLINE_DEBUG_MARKS once, at the runtime's start: at exit the program's environment may
 * live in region memory (after setenv), which a runtime thread must never touch. */
void fl_debug_marks_setup(void);
/* Prints every mark's count on stderr when FAULTLINE_DEBUG_MARKS=1 (nothing in the normal build). */
void fl_debug_marks_report(void);

#endif
