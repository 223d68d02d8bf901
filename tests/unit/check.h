/* tests/unit/check.h: the one harness of the unit tests (tests/unit/test_*.c). Include it once, in
 * the test's .c file:
 *     CHECK(cond, fmt, ...)    counts a check; on failure prints "file:line: FAIL: message" to stderr
 *                              and goes on;
 *     REQUIRE(cond, fmt, ...)  the same, but a failure ends the test at once (exit 1), for checks
 *                              whose failure would make every later one meaningless;
 *     check_print_ok = true    also prints "ok message" to stdout for each passing check;
 *     return check_summary("test_x");   prints "test_x: N checks, N failures", returns the exit status.
 * Tests run under tests/run.sh: exit 0 = pass. */
#ifndef FAULTLINE_TESTS_CHECK_H
#define FAULTLINE_TESTS_CHECK_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned checks, failures;
static bool check_print_ok;

/* One check (CHECK, or a helper's own file and line); returns ok. */
static inline bool check_at(bool ok, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static inline bool check_at(bool ok, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	checks++;
	if (ok && !check_print_ok)
		return true;
	FILE *out = ok ? stdout : stderr;
	fflush(stdout); /* keeps "ok" and "FAIL" lines in order in a shared log */
	if (ok)
		fputs("ok ", out);
	else
		fprintf(out, "%s:%d: FAIL: ", file, line);
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	fputc('\n', out);
	failures += !ok;
	return ok;
}

#define CHECK(cond, ...) ((void)check_at(!!(cond), __FILE__, __LINE__, __VA_ARGS__))
#define REQUIRE(cond, ...)                                                      \
	do {                                                                    \
		if (!check_at(!!(cond), __FILE__, __LINE__, __VA_ARGS__)) {     \
			fflush(NULL);                                           \
			exit(1);                                                \
		}                                                               \
	} while (0)

static inline int check_summary(const char *test)
{
	printf("%s: %u checks, %u failures\n", test, checks, failures);
	return failures ? 1 : 0;
}

#endif
