/* far_file.c: the file far store (record --far file:PATH) — evicted pages in a file or on a
 * block device, written and read through io_uring.
 *
 * PATH is a directory, a file name (its directory is used), or a block device. Each generation
 * of far copies (far_store.c: a fork freezes one, each side then writes a new one) is one file,
 * page i at offset i * 4096 (sparse: the file is sized to -M and only written pages take disk
 * space). A file is created with O_TMPFILE in the directory, or created and unlinked at once
 * where O_TMPFILE is refused, so nothing is left behind even after SIGKILL; with
 * FAULTLINE_FAR_KEEP (record --keep-far KEEP) files are named KEEP.<pid>.<n> and kept. A block
 * device (opened O_EXCL: one process at a time) holds the first generation of the process that
 * opened it; later generations are files in $TMPDIR (or /tmp).
 *
 * O_DIRECT where the file system takes it (the page cache would otherwise hold a second copy of
 * the far data; buffers are page-aligned mirror or bounce pages), buffered I/O otherwise.
 *
 * I/O: one ring per process, shared by the handler threads and the prefetch thread. Submitting
 * takes sq_lock; completions are reaped by whichever waiter holds cq_lock, which marks each
 * request done (its user_data points at the waiter's on-stack request), so concurrent waiters
 * never steal each other's completions and never sleep on a completion already reaped.
 * Write-back batches (far_store.c collects the pages of one eviction round) go out as one
 * submission, consecutive pages coalesced into one write. FAULTLINE_FAR_IO=psync uses
 * pread/pwrite instead, and a "-buffered" suffix ("uring-buffered", "psync-buffered") turns
 * O_DIRECT off, for comparison (notes: buffered io_uring writes at QD1 are slower than
 * pwrite here, since they are handed to io-wq workers). No SQPOLL: no spare CPU on 2 vCPUs.
 *
 * Measured (scripts/bench_far.sh, refault 64 MiB under -L 16, ext4 on virtio, load ~9 on 2 vCPUs;
 * time inside the backend): O_DIRECT reads 106-178 us/page (the disk), write-back 25-49 us/page
 * with io_uring against 11-23 us/page with pwrite (allocating O_DIRECT writes into a sparse file go
 * to io-wq workers that serialize on the inode); buffered: reads 3.6-4.2 us (io_uring) vs 1.8-3.2
 * (pread), write-back 2.3-3.6 vs 2.1-2.2 us/page. io_uring stays the default (batches of reads for
 * read-ahead go out at once); FAULTLINE_FAR_IO=psync is the faster choice for write-heavy runs here. */
#include "far_store.h"
#include "fds.h"
#include "context.h"
#include "pages.h"
#include "diag.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "faultline/env.h"

#define RING_ENTRIES 256

struct file_req {
	int res;
	_Atomic bool done;
};

struct file_store {
	struct io_uring ring;
	bool psync;                          /* FAULTLINE_FAR_IO=psync[-buffered] */
	bool buffered;                       /* FAULTLINE_FAR_IO=...-buffered: no O_DIRECT */
	pthread_mutex_t sq_lock, cq_lock;
	char dir[PATH_MAX];                  /* where generation files are created */
	char blockdev[PATH_MAX];             /* "" = none */
	bool blockdev_used;
	unsigned files_created;
	bool direct[FL_FAR_MAX_GENS + 1];    /* O_DIRECT on that generation */
	char names[FL_FAR_MAX_GENS + 1][160];
	char detail[200];
};

static struct file_store *state_of(struct fl_runtime *rt) { return rt->farst.backend; }

/* ---- io_uring with a shared ring ---- */

static void reap(struct file_store *fs)
{
	struct io_uring_cqe *cqe;
	while (io_uring_peek_cqe(&fs->ring, &cqe) == 0) {
		struct file_req *r = (struct file_req *)(uintptr_t)cqe->user_data;
		r->res = cqe->res;
		atomic_store_explicit(&r->done, true, memory_order_release);
		io_uring_cqe_seen(&fs->ring, cqe);
	}
}

static bool all_done(struct file_req *reqs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!atomic_load_explicit(&reqs[i].done, memory_order_acquire))
			return false;
	return true;
}

static void wait_all(struct file_store *fs, struct file_req *reqs, size_t n)
{
	while (!all_done(reqs, n)) {
		pthread_mutex_lock(&fs->cq_lock);
		reap(fs);
		if (!all_done(reqs, n)) {
			struct io_uring_cqe *cqe;
			int r = io_uring_wait_cqe(&fs->ring, &cqe); /* returns once any completion is there */
			if (r < 0 && r != -EINTR && r != -EAGAIN)
				fl_log_errno("io_uring_wait_cqe (far store file)", -r);
			reap(fs);
		}
		pthread_mutex_unlock(&fs->cq_lock);
	}
}

/* One batch of n <= FL_EVICT_BATCH reads or writes; 0 or an errno (a short transfer is EIO). */
static int uring_batch(struct file_store *fs, bool write, const int *fd, const uint64_t *off,
		       char *const *buf, const size_t *len, size_t n, size_t *failed)
{
	struct file_req reqs[FL_EVICT_BATCH];
	size_t queued = 0;
	int err = 0;
	pthread_mutex_lock(&fs->sq_lock);
	for (size_t i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&fs->ring);
		if (!sqe) {
			int r = io_uring_submit(&fs->ring);
			sqe = r >= 0 ? io_uring_get_sqe(&fs->ring) : NULL;
			if (!sqe) {
				err = r < 0 ? -r : EBUSY;
				break;
			}
		}
		reqs[i].res = 0;
		atomic_init(&reqs[i].done, false);
		if (write)
			io_uring_prep_write(sqe, fd[i], buf[i], (unsigned)len[i], off[i]);
		else
			io_uring_prep_read(sqe, fd[i], buf[i], (unsigned)len[i], off[i]);
		io_uring_sqe_set_data(sqe, &reqs[i]);
		queued++;
	}
	int r = queued ? io_uring_submit(&fs->ring) : 0;
	pthread_mutex_unlock(&fs->sq_lock);
	if (r < 0) {
		/* nothing of the last submission went in: the kernel never completes it */
		fl_log_errno("io_uring_submit (far store file)", -r);
		return -r;
	}
	wait_all(fs, reqs, queued);
	for (size_t i = 0; i < queued && !err; i++) {
		if (reqs[i].res < 0)
			err = -reqs[i].res;
		else if ((size_t)reqs[i].res != len[i])
			err = EIO;
		if (err)
			*failed = i;
	}
	return err;
}

static int psync_batch(bool write, const int *fd, const uint64_t *off, char *const *buf, const size_t *len,
		       size_t n, size_t *failed)
{
	for (size_t i = 0; i < n; i++) {
		size_t done = 0;
		while (done < len[i]) {
			ssize_t r = write ? fl_sys_pwrite(fd[i], buf[i] + done, len[i] - done, (off_t)(off[i] + done))
					  : fl_sys_pread(fd[i], buf[i] + done, len[i] - done, (off_t)(off[i] + done));
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				*failed = i;
				return r < 0 ? errno : EIO;
			}
			done += (size_t)r;
		}
	}
	return 0;
}

/* Reads or writes pages[i] (generation gens[i], or gen for all when gens == NULL) at
 * buf[i]; consecutive pages of one generation with consecutive buffers become one request. */
static int file_io(struct fl_runtime *rt, bool write, unsigned gen, const size_t *pages, const uint8_t *gens,
		   char *const *buf, size_t n)
{
	struct file_store *fs = state_of(rt);
	int fd[FL_EVICT_BATCH];
	uint64_t off[FL_EVICT_BATCH];
	char *b[FL_EVICT_BATCH];
	size_t len[FL_EVICT_BATCH], first[FL_EVICT_BATCH], k = 0, failed = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned g = gens ? gens[i] : gen;
		int f = rt->farst.gens[g].fd;
		if (k && fd[k - 1] == f && off[k - 1] + len[k - 1] == pages[i] * FL_PAGE_SIZE &&
		    b[k - 1] + len[k - 1] == buf[i]) {
			len[k - 1] += FL_PAGE_SIZE;
			continue;
		}
		fd[k] = f, off[k] = pages[i] * FL_PAGE_SIZE, b[k] = buf[i], len[k] = FL_PAGE_SIZE, first[k] = i;
		k++;
	}
	int err = fs->psync ? psync_batch(write, fd, off, b, len, k, &failed)
			    : uring_batch(fs, write, fd, off, b, len, k, &failed);
	if (err && fl_far_first_failure(rt)) {
		char msg[512];
		struct fl_buf m = { msg, 0, sizeof(msg) };
		size_t page = pages[first[failed]];
		unsigned g = gens ? gens[first[failed]] : gen;
		fl_buf_str(&m, "far store file: ");
		fl_buf_str(&m, write ? "writing page " : "reading page ");
		fl_buf_u64(&m, page);
		fl_buf_str(&m, " (address ");
		fl_buf_hex(&m, (uint64_t)(uintptr_t)fl_page_addr(rt, page));
		fl_buf_str(&m, write ? ") to " : ") from ");
		fl_buf_str(&m, fs->names[g]);
		fl_buf_str(&m, " failed");
		fl_log_errno(msg, err);
	}
	return err;
}

static int file_write(struct fl_runtime *rt, unsigned gen, const size_t *pages, char *const *src, size_t n)
{
	return file_io(rt, true, gen, pages, NULL, src, n);
}

static int file_read(struct fl_runtime *rt, const size_t *pages, const uint8_t *gens, char *const *dst, size_t n)
{
	return file_io(rt, false, 0, pages, gens, dst, n);
}

/* ---- generations: files ---- */

/* O_DIRECT first; buffered where the file system refuses it. */
static int open_direct_or_not(struct file_store *fs, unsigned gen, const char *path, int flags, mode_t mode)
{
	int fd = fs->buffered ? -1 : open(path, flags | O_DIRECT, mode);
	fs->direct[gen] = fd >= 0;
	if (fd < 0 && (errno == EINVAL || fs->buffered))
		fd = open(path, flags, mode);
	return fl_fd_keep(fd);
}

static int create_file(struct fl_runtime *rt, unsigned gen)
{
	struct file_store *fs = state_of(rt);
	struct fl_buf name = { fs->names[gen], 0, sizeof(fs->names[gen]) };
	unsigned n = fs->files_created++;
	int fd;
	if (rt->farst.keep[0]) {
		fl_buf_str(&name, rt->farst.keep);
		fl_buf_str(&name, ".");
		fl_buf_u64(&name, (uint64_t)getpid());
		fl_buf_str(&name, ".");
		fl_buf_u64(&name, n);
		fd = open_direct_or_not(fs, gen, fs->names[gen], O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	} else {
		fd = open_direct_or_not(fs, gen, fs->dir, O_RDWR | O_TMPFILE | O_CLOEXEC, 0600);
		if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
			/* no O_TMPFILE here: create a unique name and unlink it at once */
			for (unsigned tries = 0; tries < 100 && fd < 0; tries++) {
				name.len = 0;
				fl_buf_str(&name, fs->dir);
				fl_buf_str(&name, "/.faultline-far.");
				fl_buf_u64(&name, (uint64_t)getpid());
				fl_buf_str(&name, ".");
				fl_buf_u64(&name, n * 100 + tries);
				fd = open_direct_or_not(fs, gen, fs->names[gen], O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
				if (fd >= 0)
					unlink(fs->names[gen]);
				else if (errno != EEXIST)
					break;
			}
		}
		name.len = 0;
		fl_buf_str(&name, "an unnamed file in ");
		fl_buf_str(&name, fs->dir);
	}
	if (fd < 0) {
		fl_log_errno(fs->names[gen], errno);
		return errno;
	}
	if (ftruncate(fd, (off_t)(rt->region_pages * FL_PAGE_SIZE)) < 0) {
		int err = errno;
		fl_log_errno("ftruncate(far store file to -M bytes)", err);
		fl_sys_close(fd);
		return err;
	}
	rt->farst.gens[gen].fd = fd;
	return 0;
}

static int open_blockdev(struct fl_runtime *rt, unsigned gen)
{
	struct file_store *fs = state_of(rt);
	uint64_t bytes = 0;
	int fd = open_direct_or_not(fs, gen, fs->blockdev, O_RDWR | O_EXCL | O_CLOEXEC, 0);
	if (fd < 0) {
		int err = errno;
		fl_log_errno(fs->blockdev, err);
		return err;
	}
	if (ioctl(fd, BLKGETSIZE64, &bytes) < 0 || bytes < rt->region_pages * FL_PAGE_SIZE) {
		fl_log_u64("far store file: the block device is smaller than -M (bytes: ", bytes, ")");
		fl_sys_close(fd);
		return ENOSPC;
	}
	struct fl_buf name = { fs->names[gen], 0, sizeof(fs->names[gen]) };
	fl_buf_str(&name, fs->blockdev);
	rt->farst.gens[gen].fd = fd;
	return 0;
}

static int file_new_gen(struct fl_runtime *rt, unsigned gen)
{
	struct file_store *fs = state_of(rt);
	if (fs->blockdev[0] && !fs->blockdev_used) {
		fs->blockdev_used = true; /* inherited by children: only this process uses it */
		return open_blockdev(rt, gen);
	}
	return create_file(rt, gen);
}

static void file_drop_gen(struct fl_runtime *rt, unsigned gen)
{
	fl_sys_close(rt->farst.gens[gen].fd);
	rt->farst.gens[gen].fd = -1;
}

/* ---- start, fork ---- */

static int ring_setup(struct file_store *fs)
{
	pthread_mutex_init(&fs->sq_lock, NULL);
	pthread_mutex_init(&fs->cq_lock, NULL);
	if (fs->psync)
		return 0;
	int r = io_uring_queue_init(RING_ENTRIES, &fs->ring, 0);
	if (r < 0) {
		fl_log_errno("io_uring_queue_init (far store file)", -r);
		return -1;
	}
	return 0;
}

static int file_open(struct fl_runtime *rt, const char *spec)
{
	const char *path = spec + strlen("file");
	const char *io = getenv(FL_ENV_FAR_IO);
	struct stat st;
	struct file_store *fs = fl_sys_reserve(sizeof(*fs), "mmap(far store file state)");
	if (!fs)
		return -1;
	rt->farst.backend = fs;
	if (*path != ':' || !path[1]) {
		fl_log("far store file: expected file:PATH");
		return -1;
	}
	path++;
	fs->psync = io && strncmp(io, "psync", 5) == 0;
	fs->buffered = io && strstr(io, "buffered") != NULL;
	struct fl_buf dir = { fs->dir, 0, sizeof(fs->dir) };
	if (stat(path, &st) == 0 && S_ISBLK(st.st_mode)) {
		struct fl_buf dev = { fs->blockdev, 0, sizeof(fs->blockdev) };
		const char *tmp = getenv("TMPDIR");
		fl_buf_str(&dev, path);
		fl_buf_str(&dir, tmp && *tmp ? tmp : "/tmp");
	} else if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		fl_buf_str(&dir, path);
	} else {
		const char *slash = strrchr(path, '/');
		if (!slash)
			fl_buf_str(&dir, ".");
		else if (slash == path)
			fl_buf_str(&dir, "/");
		else
			for (const char *c = path; c < slash && dir.len + 1 < dir.cap; c++)
				fs->dir[dir.len++] = *c, fs->dir[dir.len] = '\0';
	}
	if (ring_setup(fs) < 0)
		return -1;
	/* the first generation now: a bad PATH shows at start, not at the first eviction */
	rt->farst.gens[0].live = true;
	rt->farst.ngens = 1;
	rt->farst.cur = 0;
	if (file_new_gen(rt, 0) != 0)
		return -1;
	return 0;
}

static int file_after_fork(struct fl_runtime *rt)
{
	struct file_store *fs = state_of(rt);
	if (!fs->psync)
		io_uring_queue_exit(&fs->ring); /* the parent's ring: unmapped and closed here only */
	return ring_setup(fs);
}

static const char *file_detail(struct fl_runtime *rt)
{
	struct file_store *fs = state_of(rt);
	struct fl_buf b = { fs->detail, 0, sizeof(fs->detail) };
	int g = rt->farst.cur >= 0 ? rt->farst.cur : 0;
	fl_buf_str(&b, fs->names[g]);
	fl_buf_str(&b, fs->direct[g] ? ", O_DIRECT" : ", buffered (no O_DIRECT)");
	fl_buf_str(&b, fs->psync ? ", pread/pwrite" : ", io_uring");
	return fs->detail;
}

static void file_close(struct fl_runtime *rt) { (void)rt; }

const struct fl_far_store fl_far_file = {
	.name = "file",
	.mirror_is_far = false,
	.open = file_open,
	.put = fl_far_gen_put,
	.get = fl_far_gen_get,
	.get_many = fl_far_gen_get_many,
	.discard = fl_far_gen_discard,
	.after_fork = file_after_fork,
	.close = file_close,
	.new_gen = file_new_gen,
	.drop_gen = file_drop_gen,
	.write = file_write,
	.read = file_read,
	.detail = file_detail,
};
