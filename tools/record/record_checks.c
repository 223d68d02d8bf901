/* record_checks.c: what `faultline record` checks before starting anything: the command exists and
 * can carry LD_PRELOAD (not static, not set-user-ID), the runtime library exists, userfaultfd can
 * be opened. */
#include "record_options.h"
#include "record_internal.h"

#define RECORD_SCRIPT_DEPTH 4  /* #! interpreters followed, as the kernel does */
#define RECORD_RUNTIME_LIB "libfaultline.so"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cli.h"
#include "faultline/pmu_events.h"

/* ---------------------------------------------------------------------------------------
 * 2. Checks before starting anything
 * ------------------------------------------------------------------------------------- */

/* 0 if path is a regular file we may execute; else -1 with errno (EISDIR for a directory). */
static int executable_file(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -1;
	if (S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		errno = EACCES;
		return -1;
	}
	return access(path, X_OK);
}

/* Finds name as execvp would: as given when it holds a '/', else along PATH. On failure
 * errno is ENOENT, or EACCES/EISDIR when only something not executable was found. */
int find_command(const char *name, char *path, size_t len)
{
	const char *search = getenv("PATH"), *dir;
	int found_unusable = 0;

	if (strchr(name, '/') != NULL) {
		if ((size_t)snprintf(path, len, "%s", name) >= len) {
			errno = ENAMETOOLONG;
			return -1;
		}
		return executable_file(path);
	}
	if (search == NULL)
		search = "/bin:/usr/bin";
	for (dir = search;; dir++) {
		const char *colon = strchrnul(dir, ':');
		int dir_len = (int)(colon - dir);
		int n = dir_len == 0 ? snprintf(path, len, "%s", name)
				     : snprintf(path, len, "%.*s/%s", dir_len, dir, name);

		if (n > 0 && (size_t)n < len) {
			if (executable_file(path) == 0)
				return 0;
			if (errno == EACCES || errno == EISDIR)
				found_unusable = 1;
		}
		if (*colon == '\0')
			break;
		dir = colon;
	}
	errno = found_unusable ? EACCES : ENOENT;
	return -1;
}

/* What kind of executable a file is, as far as LD_PRELOAD is concerned. */
enum exec_kind {
	EXEC_DYNAMIC,   /* ELF for this machine with an interpreter: the loader reads LD_PRELOAD */
	EXEC_STATIC,    /* ELF without PT_INTERP: no loader, LD_PRELOAD is never read */
	EXEC_FOREIGN,   /* ELF of another class or machine: our library cannot load into it */
	EXEC_SCRIPT,    /* "#!interpreter": what matters is the interpreter */
	EXEC_UNKNOWN,   /* unreadable or anything else: let exec decide */
};

#if defined(__x86_64__)
#define RECORD_ELF_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define RECORD_ELF_MACHINE EM_AARCH64
#else
#error "faultline runs on x86-64 (and aarch64) only"
#endif

static enum exec_kind classify_elf(int fd, const Elf64_Ehdr *eh)
{
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_machine != RECORD_ELF_MACHINE)
		return EXEC_FOREIGN;
	if (eh->e_phentsize != sizeof(Elf64_Phdr))
		return EXEC_UNKNOWN;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr ph;
		off_t at = (off_t)(eh->e_phoff + (uint64_t)i * sizeof(ph));

		if (pread(fd, &ph, sizeof(ph), at) != (ssize_t)sizeof(ph))
			return EXEC_UNKNOWN;
		if (ph.p_type == PT_INTERP)
			return EXEC_DYNAMIC;
	}
	return EXEC_STATIC;
}

/* Copies the interpreter path of a "#!" line (head holds n bytes) into interp. */
static enum exec_kind classify_script(const char *head, size_t n, char *interp, size_t len)
{
	size_t i = 2, start, end;

	while (i < n && (head[i] == ' ' || head[i] == '\t'))
		i++;
	start = i;
	while (i < n && head[i] != ' ' && head[i] != '\t' && head[i] != '\n' && head[i] != '\0')
		i++;
	end = i;
	if (end == start || end - start >= len)
		return EXEC_UNKNOWN;
	memcpy(interp, head + start, end - start);
	interp[end - start] = '\0';
	return EXEC_SCRIPT;
}

static enum exec_kind classify_executable(const char *path, char *interp, size_t len)
{
	char head[256];
	Elf64_Ehdr eh;
	enum exec_kind kind = EXEC_UNKNOWN;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return EXEC_UNKNOWN;
	n = pread(fd, head, sizeof(head), 0);
	if (n >= (ssize_t)sizeof(eh) && memcmp(head, ELFMAG, SELFMAG) == 0) {
		memcpy(&eh, head, sizeof(eh));
		kind = classify_elf(fd, &eh);
	} else if (n >= 2 && head[0] == '#' && head[1] == '!') {
		kind = classify_script(head, (size_t)n, interp, len);
	}
	close(fd);
	return kind;
}

/* Why exec'ing path would change credentials, so that the loader runs in secure mode and
 * ignores LD_PRELOAD (set-user-ID/-group-ID to someone else, file capabilities); NULL
 * when it would not. A set-user-ID file owned by the caller changes nothing. */
static const char *secure_exec_reason(const char *path)
{
	struct stat st;
	struct statvfs fs;
	uid_t euid = geteuid();
	gid_t egid = getegid();

	if (stat(path, &st) < 0)
		return NULL;
	if (statvfs(path, &fs) == 0 && (fs.f_flag & ST_NOSUID))
		return NULL;
	if (st.st_mode & S_ISUID)
		euid = st.st_uid;
	if ((st.st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP))
		egid = st.st_gid;
	if (euid != getuid())
		return "is set-user-ID, and the loader ignores LD_PRELOAD for such programs";
	if (egid != getgid())
		return "is set-group-ID, and the loader ignores LD_PRELOAD for such programs";
	if (geteuid() != 0 && getxattr(path, "security.capability", NULL, 0) > 0)
		return "has file capabilities, and the loader ignores LD_PRELOAD for such programs";
	return NULL;
}

int check_interpreters(const char *path, const char *shown)
{
	char interp[PATH_MAX], current[PATH_MAX];

	snprintf(current, sizeof(current), "%s", path);
	for (int depth = 0; depth < RECORD_SCRIPT_DEPTH; depth++) {
		if (classify_executable(current, interp, sizeof(interp)) != EXEC_SCRIPT)
			return 0;
		if (access(interp, X_OK) < 0) {
			int error = errno;
			cli_error("cannot run '%s': bad interpreter '%s': %s", shown, interp, strerror(error));
			return error == ENOENT || error == ENOTDIR ? 127 : 126;
		}
		snprintf(current, sizeof(current), "%s", interp);
	}
	return 0;
}

/* Refuses (with one clear line) a command LD_PRELOAD cannot reach; follows #! lines. */
int check_traceable(const char *path, const char *shown)
{
	char interp[PATH_MAX], current[PATH_MAX], subject[PATH_MAX + 32] = "it";
	const char *reason = NULL;

	snprintf(current, sizeof(current), "%s", path);
	for (int depth = 0; depth < RECORD_SCRIPT_DEPTH; depth++) {
		if (depth > 0 && (size_t)snprintf(subject, sizeof(subject), "its interpreter '%s'", current) >=
				 sizeof(subject))
			return 0;
		switch (classify_executable(current, interp, sizeof(interp))) {
		case EXEC_SCRIPT:
			snprintf(current, sizeof(current), "%s", interp);
			continue;
		case EXEC_STATIC:
			reason = "is statically linked, so LD_PRELOAD cannot load faultline's runtime into it";
			break;
		case EXEC_FOREIGN:
			reason = "is not a 64-bit program for this machine (faultline's runtime is)";
			break;
		case EXEC_DYNAMIC:
		case EXEC_UNKNOWN:
			reason = secure_exec_reason(current);
			break;
		}
		if (reason != NULL)
			cli_error("cannot trace '%s': %s %s", shown, subject, reason);
		return reason != NULL ? -1 : 0;
	}
	return 0;
}

/* Where the runtime library is looked for, relative to the directory of this binary: next to it
 * (the build tree: build/faultline, build/libfaultline.so), then where `make install` and the
 * Debian package put it (PREFIX/bin/faultline, PREFIX/lib/faultline/libfaultline.so). */
static const char *const runtime_library_places[] = { "", "/../lib/faultline" };
#define RUNTIME_LIBRARY_PLACES (sizeof(runtime_library_places) / sizeof(runtime_library_places[0]))

/* Finds the runtime library: $FAULTLINE_LIB, else the first of runtime_library_places that holds
 * libfaultline.so; path gets its real path (no "..": it is shown and goes into LD_PRELOAD). */
int find_runtime_library(char *path, size_t len)
{
	const char *override = getenv("FAULTLINE_LIB");
	char exe[PATH_MAX], candidate[PATH_MAX], *slash;
	ssize_t n;

	if (override != NULL && *override != '\0') {
		if (realpath(override, path) == NULL) {
			cli_error("FAULTLINE_LIB=%s: %s", override, strerror(errno));
			return -1;
		}
	} else {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n < 0) {
			cli_error("readlink /proc/self/exe: %s", strerror(errno));
			return -1;
		}
		exe[n] = '\0';
		const char *self = "faultline";
		slash = strrchr(exe, '/');
		if (slash != NULL) {
			*slash = '\0';
			self = slash + 1; /* the binary's own name (a copy may have another) */
		}
		for (size_t k = 0; k < RUNTIME_LIBRARY_PLACES; k++) {
			if ((size_t)snprintf(candidate, sizeof(candidate), "%s%s/%s", exe, runtime_library_places[k],
					     RECORD_RUNTIME_LIB) >= sizeof(candidate)) {
				cli_error("path of the runtime library too long: %s%s/%s", exe,
					  runtime_library_places[k], RECORD_RUNTIME_LIB);
				return -1;
			}
			if (access(candidate, R_OK) == 0)
				break;
			if (k + 1 == RUNTIME_LIBRARY_PLACES) {
				cli_error("runtime library %s/%s: not found next to %s/%s nor in %s%s "
					  "(build it with make, or set FAULTLINE_LIB)",
					  exe, RECORD_RUNTIME_LIB, exe, self, exe, runtime_library_places[k]);
				return -1;
			}
		}
		if (realpath(candidate, path) == NULL) {
			cli_error("runtime library %s: realpath: %s", candidate, strerror(errno));
			return -1;
		}
		if (strlen(path) >= len) {
			cli_error("path of the runtime library too long: %s", path);
			return -1;
		}
	}
	if (access(path, R_OK) < 0) {
		cli_error("runtime library %s: %s (build it with make, or set FAULTLINE_LIB)", path,
			  strerror(errno));
		return -1;
	}
	if (strpbrk(path, ": ") != NULL) {
		cli_error("runtime library path '%s' contains ':' or a space, which LD_PRELOAD cannot "
			  "carry; move it or set FAULTLINE_LIB", path);
		return -1;
	}
	return 0;
}

/* The runtime needs a userfaultfd that handles kernel-mode faults too. */
int check_userfaultfd(void)
{
	int fd = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC), device_errno;

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	device_errno = errno;
	fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	cli_error("userfaultfd is not available (open /dev/userfaultfd: %s; userfaultfd(2): %s)",
		  strerror(device_errno), strerror(errno));
	cli_error("faultline needs root, read-write access to /dev/userfaultfd, or "
		  "'sysctl vm.unprivileged_userfaultfd=1'");
	return -1;
}

