/* trace_file.c: creating the process's trace directory and its files — by name, or binary with
 * the trace's file header (inc/faultline/trace.h). Files are created with O_EXCL | O_NOFOLLOW:
 * nothing is clobbered or followed. trace_writer.c opens the trace's files with these, timeline.c
 * its own. */
#include "trace_file.h"
#include "fds.h"
#include "context.h"
#include "diag.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int fl_trace_create_file(const struct fl_runtime *rt, const char *name, int extra_flags)
{
	char path[PATH_MAX];
	struct fl_buf b = { path, 0, sizeof(path) };
	fl_buf_str(&b, rt->dir);
	fl_buf_str(&b, "/");
	fl_buf_str(&b, name);
	int fd = fl_fd_keep(open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | extra_flags, 0644));
	if (fd < 0)
		fl_log_errno(path, errno);
	return fd;
}

/* Creates DIR/<pid> (or DIR/<pid>.N when this pid already has one, after an exec). */
int fl_trace_make_dir(struct fl_runtime *rt, const char *top)
{
	for (unsigned n = 0; n < 1000; n++) {
		struct fl_buf b = { rt->dir, 0, sizeof(rt->dir) };
		fl_buf_str(&b, top);
		fl_buf_str(&b, "/");
		fl_buf_u64(&b, (uint64_t)getpid());
		if (n) {
			fl_buf_str(&b, ".");
			fl_buf_u64(&b, n);
		}
		if (mkdir(rt->dir, 0755) == 0)
			return 0;
		if (errno != EEXIST) {
			fl_log_errno(rt->dir, errno);
			return -1;
		}
	}
	return -1;
}

/* Creates a binary trace file and writes its header; returns the descriptor or -1. */
int fl_trace_open_binary(struct fl_runtime *rt, const char *name, uint32_t kind, uint32_t record_size,
			 int append)
{
	struct fl_file_header hdr;
	memset(&hdr, 0, sizeof(hdr));
	hdr.magic = FL_TRACE_MAGIC;
	hdr.version = FL_TRACE_VERSION;
	hdr.kind = kind;
	hdr.header_size = sizeof(hdr);
	hdr.record_size = record_size;
	hdr.pid = (uint32_t)getpid();
	hdr.page_size = FL_PAGE_SIZE;
	hdr.start_ns = rt->start_ns;
	hdr.region_start = (uint64_t)(uintptr_t)rt->region;
	hdr.region_size = rt->region_pages * FL_PAGE_SIZE;
	int fd = fl_trace_create_file(rt, name, O_EXCL | append);
	if (fd < 0)
		return -1;
	int err = fl_write_all(fd, &hdr, sizeof(hdr), NULL);
	if (err) {
		fl_log_errno(name, err);
		fl_sys_close(fd);
		return -1;
	}
	return fd;
}

/* A binary file opened like the others: created, O_APPEND (the trace's record files, and the
 * timeline's). */
int fl_trace_open_file(struct fl_runtime *rt, const char *name, uint32_t kind, uint32_t record_size)
{
	return fl_trace_open_binary(rt, name, kind, record_size, O_APPEND);
}
