/* st_sysread.c: page faults taken inside read(): the kernel copies into heap pages that are not
 * resident. Their stacks must start at the program function that called read() (frame 0 its return
 * address; the runtime's own wrapper frames stripped), and read() must behave exactly as without
 * faultline (a short count only where the file type allows one).
 *
 * usage: st_sysread MIB DIR
 *   1. fill: one malloc of MIB MiB, every byte written (under -L < MIB its first pages are evicted);
 *   2. read_from_pipe: 64 KiB put in a pipe from static memory, read() into the start of the buffer
 *      (evicted pages), looping over short counts as a pipe allows;
 *   3. read_from_file: 256 KiB written to an unlinked file in DIR from static memory, read() back in
 *      one call into the next part of the buffer (evicted): must be a full read;
 *   4. read_from_zero: read() of 1 MiB from /dev/zero into a fresh malloc (never touched): one call,
 *      must be a full read (a character device returns short counts when a signal is pending);
 *   5. read_from_zero again into evicted pages of the first buffer (offset 4 MiB), full read;
 * then verifies every byte read (outside the windows). Prints on stdout (st_common.h) a range and a
 * window per step: range pipe/file/zero_fresh/zero_evicted, window pipe/file/zero_fresh/zero_evicted,
 * then "sysread ok". Exits 1 at the first wrong count, errno or byte. */
#include "planted.h"
#include "st_common.h"
#include <fcntl.h>

#define PIPE_BYTES (64 * 1024)
#define FILE_BYTES (256 * 1024)
#define ZERO_BYTES (1024 * 1024)

static uint8_t source[FILE_BYTES]; /* static: the data's source is never region memory */

ST_FRAME size_t read_from_pipe(int fd, uint8_t *dst, size_t n)
{
	size_t done = 0, calls = 0;
	while (done < n) {
		ssize_t k = read(fd, dst + done, n - done);
		if (k <= 0)
			die_errno("read(pipe) returned %zd after %zu of %zu bytes", k, done, n);
		done += (size_t)k;
		calls++;
	}
	ST_KEEP(calls);
	return calls;
}

ST_FRAME ssize_t read_from_file(int fd, uint8_t *dst, size_t n)
{
	ssize_t k = read(fd, dst, n);
	ST_KEEP(k);
	return k;
}

ST_FRAME ssize_t read_from_zero(int fd, uint8_t *dst, size_t n)
{
	ssize_t k = read(fd, dst, n);
	ST_KEEP(k);
	return k;
}

static void write_all(int fd, const void *p, size_t n, const char *what)
{
	for (size_t done = 0; done < n;) {
		ssize_t k = write(fd, (const char *)p + done, n - done);
		if (k <= 0)
			die_errno("write(%s) after %zu of %zu bytes", what, done, n);
		done += (size_t)k;
	}
}

static void expect_full(ssize_t got, size_t want, const char *what)
{
	if (got < 0)
		die_errno("%s", what);
	if ((size_t)got != want)
		die("%s: read() returned %zd, want the full %zu bytes", what, got, want);
}

int main(int argc, char **argv)
{
	size_t mib = arg_ulong(argc, argv, 1, 16);
	const char *dir = argc > 2 ? argv[2] : "/tmp";
	size_t bytes = mib * MiB;
	uint64_t t0, t1;
	int p[2];

	if (bytes < 8 * MiB)
		die("MIB must be at least 8");
	fill_bytes(source, sizeof(source), 0x51);
	uint8_t *buf = malloc(bytes);
	if (!buf)
		die_errno("malloc(%zu MiB)", mib);
	memset(buf, 0xee, bytes); /* every page touched; under -L the first ones are evicted */

	/* 2. pipe: the 64 KiB fit in an empty pipe, so one thread can write, then read */
	if (pipe(p) < 0)
		die_errno("pipe");
	write_all(p[1], source, PIPE_BYTES, "pipe");
	uint8_t *pipe_dst = buf;
	st_range("pipe", pipe_dst, PIPE_BYTES);
	t0 = st_now_ns();
	size_t calls = read_from_pipe(p[0], pipe_dst, PIPE_BYTES);
	t1 = st_now_ns();
	st_window("pipe", t0, t1);
	close(p[0]);
	close(p[1]);

	/* 3. a regular file */
	char path[4096];
	snprintf(path, sizeof(path), "%s/st_sysread.XXXXXX", dir);
	int fd = mkstemp(path);
	if (fd < 0)
		die_errno("mkstemp(%s)", path);
	unlink(path);
	write_all(fd, source, FILE_BYTES, "file");
	if (lseek(fd, 0, SEEK_SET) != 0)
		die_errno("lseek");
	uint8_t *file_dst = buf + PIPE_BYTES + 2 * PAGE_SIZE_BYTES;
	st_range("file", file_dst, FILE_BYTES);
	t0 = st_now_ns();
	ssize_t k = read_from_file(fd, file_dst, FILE_BYTES);
	t1 = st_now_ns();
	st_window("file", t0, t1);
	expect_full(k, FILE_BYTES, "read(regular file)");
	close(fd);

	/* 4. /dev/zero into fresh heap */
	int zfd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	if (zfd < 0)
		die_errno("open(/dev/zero)");
	uint8_t *fresh = malloc(ZERO_BYTES);
	if (!fresh)
		die_errno("malloc(1 MiB)");
	st_range("zero_fresh", fresh, ZERO_BYTES);
	t0 = st_now_ns();
	k = read_from_zero(zfd, fresh, ZERO_BYTES);
	t1 = st_now_ns();
	st_window("zero_fresh", t0, t1);
	expect_full(k, ZERO_BYTES, "read(/dev/zero) into fresh heap");

	/* 5. /dev/zero into evicted heap */
	uint8_t *evicted = buf + 4 * MiB;
	st_range("zero_evicted", evicted, ZERO_BYTES);
	t0 = st_now_ns();
	k = read_from_zero(zfd, evicted, ZERO_BYTES);
	t1 = st_now_ns();
	st_window("zero_evicted", t0, t1);
	expect_full(k, ZERO_BYTES, "read(/dev/zero) into evicted heap");
	close(zfd);

	verify_bytes(pipe_dst, PIPE_BYTES, 0x51, "data read from the pipe");
	verify_bytes(file_dst, FILE_BYTES, 0x51, "data read from the file");
	size_t nz = first_nonzero(fresh, ZERO_BYTES);
	if (nz != ZERO_BYTES)
		die("fresh buffer: byte %zu is %#x after reading /dev/zero", nz, fresh[nz]);
	nz = first_nonzero(evicted, ZERO_BYTES);
	if (nz != ZERO_BYTES)
		die("evicted buffer: byte %zu is %#x after reading /dev/zero", nz, evicted[nz]);
	for (size_t i = PIPE_BYTES; i < PIPE_BYTES + 2 * PAGE_SIZE_BYTES; i++)
		if (buf[i] != 0xee)
			die("byte %zu between the pipe and file destinations changed to %#x", i, buf[i]);
	printf("sysread ok (pipe read in %zu call%s)\n", calls, calls == 1 ? "" : "s");
	free(fresh);
	free(buf);
	return 0;
}
