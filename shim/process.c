/* process.c: the traced process's life — the runtime starts in the shim's constructor and is
 * shut down (records flushed, stats.json written) at exit, at _exit and before exec. After
 * an exec the new image starts its own runtime (the environment carries FAULTLINE_*). */
#include "shim.h"
#include "../runtime/runtime_api.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

__attribute__((constructor(101))) static void shim_constructor(void) { fl_shim_start(); }

__attribute__((destructor(101))) static void shim_destructor(void) { fl_runtime_shutdown("exit"); }

FL_EXPORT void _exit(int status)
{
	fl_runtime_shutdown("_exit");
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

FL_EXPORT void _Exit(int status) __attribute__((alias("_exit")));

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execvpe_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);

FL_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	fl_runtime_shutdown("exec");
	return (int)syscall(SYS_execve, path, argv, envp);
}

FL_EXPORT int execv(const char *path, char *const argv[]) { return execve(path, argv, environ); }

FL_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	execvpe_fn real = (execvpe_fn)dlsym(RTLD_NEXT, "execvpe");
	fl_runtime_shutdown("exec");
	return real(file, argv, envp);
}

FL_EXPORT int execvp(const char *file, char *const argv[]) { return execvpe(file, argv, environ); }

FL_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	fexecve_fn real = (fexecve_fn)dlsym(RTLD_NEXT, "fexecve");
	fl_runtime_shutdown("exec");
	return real(fd, argv, envp);
}

/* execl, execlp, execle: collect the variable arguments into an argv on the stack. */
static size_t count_args(const char *arg0, va_list ap)
{
	size_t n = 1;
	va_list copy;
	va_copy(copy, ap);
	if (arg0)
		while (va_arg(copy, const char *))
			n++;
	va_end(copy);
	return n;
}

static void collect_args(char **argv, size_t n, const char *arg0, va_list *ap)
{
	argv[0] = (char *)arg0;
	for (size_t i = 1; i < n; i++)
		argv[i] = va_arg(*ap, char *);
	if (arg0 && n)
		(void)va_arg(*ap, char *); /* the terminating NULL */
	argv[n] = NULL;
}

/* Runs exec_fn with the argument list that follows arg0 (and, for execle, the environment
 * after its NULL). */
enum exec_kind { EXEC_PATH, EXEC_SEARCH, EXEC_ENV };

static int exec_list(enum exec_kind kind, const char *file, const char *arg0, va_list ap)
{
	size_t n = count_args(arg0, ap);
	char *argv[n + 1];
	char *const *envp = environ;
	va_list args; /* a va_list parameter is an array turned pointer here: &ap is no va_list * */
	va_copy(args, ap);
	collect_args(argv, n, arg0, &args);
	if (kind == EXEC_ENV)
		envp = va_arg(args, char *const *);
	va_end(args);
	if (kind == EXEC_SEARCH)
		return execvpe(file, argv, envp);
	return execve(file, argv, envp);
}

FL_EXPORT int execl(const char *path, const char *arg0, ...)
{
	va_list ap;
	va_start(ap, arg0);
	int r = exec_list(EXEC_PATH, path, arg0, ap);
	va_end(ap);
	return r;
}

FL_EXPORT int execlp(const char *file, const char *arg0, ...)
{
	va_list ap;
	va_start(ap, arg0);
	int r = exec_list(EXEC_SEARCH, file, arg0, ap);
	va_end(ap);
	return r;
}

FL_EXPORT int execle(const char *path, const char *arg0, ...)
{
	va_list ap;
	va_start(ap, arg0);
	int r = exec_list(EXEC_ENV, path, arg0, ap);
	va_end(ap);
	return r;
}
