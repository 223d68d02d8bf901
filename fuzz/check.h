/* check.h: the harnesses' CHECK(cond, fmt, ...) — a broken promise of the code under test is
 * reported like a crash: one line naming the check, then abort(), which libFuzzer and the replay
 * driver treat as a finding.
 *
 * The line goes to a copy of stderr taken before main: libFuzzer's -close_fd_mask=2 (which
 * scripts/fuzz.sh uses to silence the warnings `dump` prints for every corrupt input) closes
 * stderr itself but must not swallow the report. */
#ifndef FAULTLINE_FUZZ_CHECK_H
#define FAULTLINE_FUZZ_CHECK_H

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int check_report_fd = STDERR_FILENO;

__attribute__((constructor)) static void check_keep_stderr(void)
{
	int fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 100);
	if (fd >= 0)
		check_report_fd = fd;
}

__attribute__((noreturn, format(printf, 4, 5)))
static void check_failed(const char *file, int line, const char *cond, const char *fmt, ...)
{
	char message[2048];
	va_list ap;
	int n = snprintf(message, sizeof(message), "%s:%d: check failed: %s: ", file, line, cond);

	if (n < 0 || (size_t)n >= sizeof(message))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(message + n, sizeof(message) - (size_t)n, fmt, ap);
	va_end(ap);
	dprintf(check_report_fd, "%s\n", message);
	abort();
}

#define CHECK(cond, ...) do { \
	if (!(cond)) \
		check_failed(__FILE__, __LINE__, #cond, __VA_ARGS__); \
} while (0)

/* FUZZ_STRICT=1 adds the checks of known, open findings (fuzz/findings/README.md): that every
 * reason and warning the code under test writes is one line of printable text. Off by default, so
 * that fuzzing goes on past them. */
static int check_strict(void)
{
	static int strict = -1;
	if (strict < 0) {
		const char *v = getenv("FUZZ_STRICT");
		strict = v && v[0] == '1';
	}
	return strict;
}

/* TEXT (a reason or warning meant for a terminal, WHAT names it): NUL-terminated, which the
 * sanitizers check by the walk; under FUZZ_STRICT also one line without control characters. */
static size_t check_text_line(const char *what, const char *text)
{
	size_t len = 0;
	for (const unsigned char *p = (const unsigned char *)text; *p; p++, len++) {
		if (check_strict())
			CHECK(*p >= 0x20 || *p == '\t', "%s holds control character 0x%02x: %s", what, *p, text);
	}
	return len;
}

#endif
