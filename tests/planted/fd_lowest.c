/* fd_lowest.c: a single-threaded program that relies on open(2) returning the lowest free
 * descriptor, as POSIX promises (the daemon idiom close(0); open("/dev/null") depends on it).
 *
 * The runtime's own threads (the timeline's sampler, the fault handlers) run beside the program
 * in the same descriptor table. A descriptor one of them held for a moment below the program's
 * lowest free number made the program's open return the next one.
 *
 *   note the number N the first open("/dev/null") returns, close it
 *   for MS milliseconds: touch a fresh page of the heap (a fault, served by a handler), then
 *   open("/dev/null") and close it again and again; every open must return N
 *
 * usage: fd_lowest [MS]   (default 300). Prints "lowest N, others 0" and exits 0 when
 * every open returned N; otherwise prints the numbers seen and exits 1. */
#include "planted.h"
#include <fcntl.h>
#include <time.h>

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	unsigned long ms = arg_ulong(argc, argv, 1, 300);
	int lowest = open("/dev/null", O_RDONLY);
	if (lowest < 0)
		die_errno_at(errno, "open(/dev/null)");
	close(lowest);
	size_t npages = 4096, touched = 0;
	char *heap = malloc(npages * 4096);
	if (!heap)
		die_errno_at(errno, "malloc");
	unsigned long opens = 0, others = 0; /* opens: how many were tried (on a failure) */
	int other = -1;
	uint64_t end = now_ms() + ms;
	while (now_ms() < end) {
		if (touched < npages)
			heap[touched++ * 4096] = 1;
		for (int i = 0; i < 200; i++) {
			int fd = open("/dev/null", O_RDONLY);
			if (fd < 0)
				die_errno_at(errno, "open(/dev/null)");
			opens++;
			if (fd != lowest)
				others++, other = fd;
			close(fd);
		}
	}
	printf("lowest %d, others %lu", lowest, others);
	if (others)
		printf(" of %lu opens (one was %d)", opens, other);
	printf("\n");
	free(heap);
	return others ? 1 : 0;
}
