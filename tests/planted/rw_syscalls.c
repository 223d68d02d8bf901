/* rw_syscalls.c: system calls that copy to or from heap pages the kernel finds non-resident (evicted,
 * or never touched). Under userfaultfd these are kernel-mode faults: they must be served like any
 * other, never fail with EFAULT and never return wrong data.
 *
 *   A: N MiB filled with a pattern (under a small -L, its first pages are evicted by the time it's done)
 *   write(A) to a temporary file, read() it back into B (never touched), pread() again into B after B
 *   was evicted, pwritev()/preadv() with uneven, page-crossing iovecs in reverse order into C, and the
 *   same data through a pipe and a socketpair with a writer thread, into D.
 *
 * usage: rw_syscalls [N_MiB [DIR]]   (defaults 64, $TMPDIR or /tmp). The file is unlinked at once.
 * Partial counts are handled as POSIX allows (continue where the call stopped); EFAULT, EINTR or an
 * early end of file are failures. Prints a checksum line, the same in every correct run. */
#include "planted.h"
#include <pthread.h>
#include <sys/socket.h>
#include <sys/uio.h>

#define SEED 0x5c5cULL

static void io_fail(const char *call, ssize_t got, size_t done, size_t total)
{
	if (got == 0)
		die("%s: unexpected end of data after %zu of %zu bytes", call, done, total);
	die_errno("%s after %zu of %zu bytes", call, done, total);
}

static void write_all(int fd, const void *buf, size_t n, const char *what)
{
	for (size_t done = 0; done < n;) {
		ssize_t k = write(fd, (const char *)buf + done, n - done);
		if (k <= 0)
			io_fail(what, k, done, n);
		done += k;
	}
}

static void read_all(int fd, void *buf, size_t n, const char *what)
{
	for (size_t done = 0; done < n;) {
		ssize_t k = read(fd, (char *)buf + done, n - done);
		if (k <= 0)
			io_fail(what, k, done, n);
		done += k;
	}
}

static void pread_all(int fd, void *buf, size_t n, off_t off, const char *what)
{
	for (size_t done = 0; done < n;) {
		ssize_t k = pread(fd, (char *)buf + done, n - done, off + done);
		if (k <= 0)
			io_fail(what, k, done, n);
		done += k;
	}
}

/* Splits [0, n) into pieces of uneven sizes that start and end mid-page. */
#define PIECES 7
static void split(size_t n, size_t cut[PIECES + 1])
{
	static const unsigned frac[PIECES] = { 3, 11, 5, 17, 7, 2, 13 }; /* sixtieths, roughly */
	cut[0] = 0;
	for (int i = 1; i < PIECES; i++)
		cut[i] = cut[i - 1] + n * frac[i - 1] / 60 + 123;
	cut[PIECES] = n;
}

/* Writes buf's pieces to the file in reverse order (last piece first), then reads them back into
 * out with the same layout, each call transferring as much as it can (iovec bookkeeping for partial
 * counts included). */
static void vector_roundtrip(int fd, const uint8_t *buf, uint8_t *out, size_t n)
{
	size_t cut[PIECES + 1];
	struct iovec iov[PIECES];
	split(n, cut);
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < PIECES; i++) {
			int piece = PIECES - 1 - i;
			iov[i].iov_base = (uint8_t *)(pass ? out : buf) + cut[piece];
			iov[i].iov_len = cut[piece + 1] - cut[piece];
		}
		struct iovec *v = iov;
		int cnt = PIECES;
		size_t done = 0;
		while (cnt > 0) {
			ssize_t k = pass ? preadv(fd, v, cnt, done) : pwritev(fd, v, cnt, done);
			if (k <= 0)
				io_fail(pass ? "preadv" : "pwritev", k, done, n);
			done += k;
			while (cnt > 0 && (size_t)k >= v->iov_len) {
				k -= v->iov_len;
				v++;
				cnt--;
			}
			if (cnt > 0) {
				v->iov_base = (uint8_t *)v->iov_base + k;
				v->iov_len -= k;
			}
		}
	}
}

struct stream_writer {
	int fd;
	const uint8_t *buf;
	size_t n;
};

/* Thread: writes the buffer into the stream in chunks of varying sizes. */
static void *stream_write(void *arg)
{
	struct stream_writer *w = arg;
	static const size_t chunks[] = { 1, 4095, 65536, 12345, 1 << 20, 300000, 4097 };
	size_t done = 0;
	for (unsigned i = 0; done < w->n; i++) {
		size_t want = chunks[i % 7];
		if (want > w->n - done)
			want = w->n - done;
		write_all(w->fd, w->buf + done, want, "stream write");
		done += want;
	}
	return NULL;
}

/* Copies src to dst through a pipe or a socketpair: a thread writes, this thread reads (read sizes
 * vary too, and the kernel returns whatever is available). */
static void stream_copy(const uint8_t *src, uint8_t *dst, size_t n, int use_socket)
{
	int fds[2];
	if (use_socket ? socketpair(AF_UNIX, SOCK_STREAM, 0, fds) : pipe(fds))
		die_errno("%s", use_socket ? "socketpair" : "pipe");
	struct stream_writer w = { .fd = fds[1], .buf = src, .n = n };
	pthread_t thread;
	int err = pthread_create(&thread, NULL, stream_write, &w);
	if (err)
		die_errno_at(err, "pthread_create");
	static const size_t reads[] = { 7, 1 << 20, 4096, 100000, 3 << 20, 65535 };
	for (size_t done = 0, i = 0; done < n; i++) {
		size_t want = reads[i % 6];
		if (want > n - done)
			want = n - done;
		ssize_t k = read(fds[0], dst + done, want);
		if (k <= 0)
			io_fail(use_socket ? "socket read" : "pipe read", k, done, n);
		done += k;
	}
	err = pthread_join(thread, NULL);
	if (err)
		die_errno_at(err, "pthread_join");
	close(fds[0]);
	close(fds[1]);
}

static uint8_t *alloc(size_t n)
{
	uint8_t *p = malloc(n);
	if (!p)
		die_errno("malloc(%zu)", n);
	return p;
}

int main(int argc, char **argv)
{
	size_t mib = arg_ulong(argc, argv, 1, 64), n = mib * MiB, nwords = n / sizeof(uint64_t);
	const char *dir = argc > 2 ? argv[2] : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char path[4096];
	snprintf(path, sizeof(path), "%s/rw_syscalls.XXXXXX", dir);
	int fd = mkstemp(path);
	if (fd < 0)
		die_errno("mkstemp(%s)", path);
	unlink(path);

	uint8_t *a = alloc(n), *b = alloc(n), *c = alloc(n), *d = alloc(n);
	fill_words((uint64_t *)a, nwords, SEED);

	write_all(fd, a, n, "write(A) to the file");
	if (lseek(fd, 0, SEEK_SET) != 0)
		die_errno("lseek");
	read_all(fd, b, n, "read() into B (never touched)");
	uint64_t sum = verify_words((uint64_t *)b, nwords, SEED, "B after read() into untouched pages");
	verify_words((uint64_t *)a, nwords, SEED, "A after write()"); /* also pushes B out */
	memset(b, 0, n);
	verify_words((uint64_t *)a, nwords, SEED, "A (again, evicting B)");
	pread_all(fd, b, n, 0, "pread() into B (evicted)");
	verify_words((uint64_t *)b, nwords, SEED, "B after pread() into evicted pages");

	if (ftruncate(fd, 0))
		die_errno("ftruncate");
	vector_roundtrip(fd, a, c, n);
	verify_words((uint64_t *)c, nwords, SEED, "C after pwritev()/preadv() in reverse order");

	stream_copy(a, d, n, 0);
	verify_words((uint64_t *)d, nwords, SEED, "D after a pipe copy into untouched pages");
	memset(d, 0, n);
	verify_words((uint64_t *)c, nwords, SEED, "C (again, evicting D)");
	stream_copy(b, d, n, 1);
	verify_words((uint64_t *)d, nwords, SEED, "D after a socketpair copy into evicted pages");

	close(fd);
	printf("rw_syscalls %zu MiB checksum %016llx\n", mib, (unsigned long long)sum);
	free(a);
	free(b);
	free(c);
	free(d);
	return 0;
}
