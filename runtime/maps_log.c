/* maps_log.c: snapshots of /proc/self/maps, so faulting PCs can be symbolized later — at
 * start, after every dlopen, before exec and at exit. Each snapshot is read whole into a
 * scratch buffer (raw mmap) and appended with one write(2) after its header line
 * "# maps <time_ns> <reason>", so snapshots never interleave. */
#include "context.h"
#include "remote_unwind.h"
#include "diag.h"

#include <string.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

static pthread_mutex_t snapshot_lock = PTHREAD_MUTEX_INITIALIZER;
static char *scratch;
static size_t scratch_cap;

static bool grow(size_t want)
{
	size_t cap = scratch_cap ? scratch_cap : 1 << 20;
	while (cap < want)
		cap *= 2;
	if (cap == scratch_cap)
		return true;
	char *p = fl_sys_mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return false;
	if (scratch) {
		for (size_t i = 0; i < scratch_cap; i++)
			p[i] = scratch[i];
		fl_sys_munmap(scratch, scratch_cap);
	}
	scratch = p, scratch_cap = cap;
	return true;
}

static void take_snapshot(struct fl_runtime *rt, const char *reason)
{
	struct fl_buf head = { NULL, 0, 0 };
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !grow(1 << 20)) {
		if (fd >= 0)
			fl_sys_close(fd);
		return;
	}
	head = (struct fl_buf){ scratch, 0, 200 };
	fl_buf_str(&head, "# maps ");
	fl_buf_u64(&head, fl_now_ns() - rt->start_ns);
	fl_buf_str(&head, " ");
	fl_buf_str(&head, reason);
	fl_buf_str(&head, "\n");
	size_t len = head.len;
	for (;;) { /* a buffer filled to the end may not hold all of the file yet: grow it */
		len += fl_sys_read_all(fd, scratch + len, scratch_cap - len);
		if (len < scratch_cap || !grow(2 * scratch_cap))
			break;
	}
	fl_sys_close(fd);
	size_t written;
	if (fl_write_all(rt->maps_fd, scratch, len, &written) != 0)
		fl_side_dropped(len - written);
}

void fl_maps_snapshot(const char *reason)
{
	struct fl_runtime *rt = &fl_rt;
	bool exiting = reason[0] == 'e' && reason[1] == 'x'; /* exit, exec: may run in a signal handler */
	if (rt->maps_fd < 0)
		return;
	if (exiting ? pthread_mutex_trylock(&snapshot_lock) != 0 : pthread_mutex_lock(&snapshot_lock) != 0)
		return;
	take_snapshot(rt, reason);
	pthread_mutex_unlock(&snapshot_lock);
	if (strcmp(reason, "dlopen") == 0)
		fl_unwind_refresh_objects(); /* the handlers' unwinder learns the new library */
}
