/* report_mix.c: workloads with known callsites for `faultline report` and `faultline export`.
 *
 *   report_mix scan MIB           scan_sequential writes one word per page of a fresh MIB buffer in
 *                                 address order, then touch_random writes one word on as many pages of
 *                                 a second fresh MIB buffer, picked at random (xorshift, fixed seed):
 *                                 a sequential and a random callsite for the locality scores
 *   report_mix read FILE          read_into read()s FILE into a fresh (never touched) buffer: the
 *                                 faults happen inside the read system call, their callsite is the
 *                                 read() line of read_into
 *   report_mix dlopen LIB MIB     dlopen()s LIB and calls its `lib_touch(buf, bytes)` on a fresh MIB
 *                                 buffer: faults inside a library loaded after the program started
 *   report_mix stacks MIB N       N page writes cycling over a MIB buffer, each through one of 8192
 *                                 distinct call paths (walk_a / walk_b, 13 levels, chosen by the page
 *                                 index): under -L < MIB, N faults with ~10^4 distinct stacks
 *
 * Each mode prints one line with a checksum, the same in every run (PIE or not). */
#include "planted.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>

#define STACK_LEVELS 13

/* Each line below that touches memory is a callsite the tests look for by its text. */
__attribute__((noinline)) static uint64_t scan_sequential(uint64_t *buf, size_t pages)
{
	for (size_t i = 0; i < pages; i++)
		buf[i * WORDS_PER_PAGE] = i + 1; /* sequential-scan callsite */
	return pages;
}

__attribute__((noinline)) static uint64_t touch_random(uint64_t *buf, size_t pages)
{
	uint64_t state = 0x9e3779b97f4a7c15ULL, sum = 0;
	for (size_t i = 0; i < pages; i++) {
		size_t page = rng_next(&state) % pages;
		buf[page * WORDS_PER_PAGE] = i; /* random-access callsite */
		sum += page;
	}
	return sum;
}

static int mode_scan(size_t mib)
{
	size_t pages = mib * MiB / PAGE_SIZE_BYTES;
	uint64_t *a = malloc(mib * MiB), *b = malloc(mib * MiB);
	if (!a || !b)
		die_errno("malloc(%zu MiB) twice", mib);
	uint64_t sum = scan_sequential(a, pages);
	sum += touch_random(b, pages);
	printf("scan %zu MiB checksum %016llx\n", mib, (unsigned long long)sum);
	free(a);
	free(b);
	return 0;
}

__attribute__((noinline)) static size_t read_into(int fd, uint8_t *buf, size_t size)
{
	size_t done = 0;
	while (done < size) {
		ssize_t n = read(fd, buf + done, size - done); /* read() callsite */
		if (n < 0)
			die_errno("read");
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return done;
}

static int mode_read(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		die_errno("open/fstat %s", path);
	uint8_t *buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		die_errno("malloc(%lld)", (long long)st.st_size);
	size_t got = read_into(fd, buf, (size_t)st.st_size);
	uint64_t sum = 0;
	for (size_t i = 0; i < got; i += PAGE_SIZE_BYTES)
		sum = sum * 31 + buf[i];
	close(fd);
	printf("read %zu bytes checksum %016llx\n", got, (unsigned long long)sum);
	free(buf);
	return 0;
}

static int mode_dlopen(const char *lib, size_t mib)
{
	void *handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!handle)
		die("dlopen(%s): %s", lib, dlerror());
	uint64_t (*lib_touch)(uint8_t *, size_t) = (uint64_t (*)(uint8_t *, size_t))dlsym(handle, "lib_touch");
	if (!lib_touch)
		die("dlsym(lib_touch): %s", dlerror());
	uint8_t *buf = malloc(mib * MiB);
	if (!buf)
		die_errno("malloc(%zu MiB)", mib);
	uint64_t sum = lib_touch(buf, mib * MiB);
	printf("dlopen %zu MiB checksum %016llx\n", mib, (unsigned long long)sum);
	free(buf);
	dlclose(handle);
	return 0;
}

/* 2^STACK_LEVELS call paths: bit k of BITS picks walk_a or walk_b at level k. The empty asm after
 * each call keeps it from being a tail call, so every level stays on the stack. */
__attribute__((noinline)) static void walk_b(uint8_t *page, unsigned bits, int depth);

__attribute__((noinline)) static void walk_a(uint8_t *page, unsigned bits, int depth)
{
	if (depth == 0) {
		page[0] = (uint8_t)bits; /* stacks leaf a */
		return;
	}
	if (bits & 1)
		walk_a(page, bits >> 1, depth - 1);
	else
		walk_b(page, bits >> 1, depth - 1);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void walk_b(uint8_t *page, unsigned bits, int depth)
{
	if (depth == 0) {
		page[1] = (uint8_t)bits; /* stacks leaf b */
		return;
	}
	if (bits & 1)
		walk_a(page, bits >> 1, depth - 1);
	else
		walk_b(page, bits >> 1, depth - 1);
	__asm__ volatile("" ::: "memory");
}

static int mode_stacks(size_t mib, size_t n)
{
	size_t pages = mib * MiB / PAGE_SIZE_BYTES;
	uint8_t *buf = malloc(mib * MiB);
	if (!buf)
		die_errno("malloc(%zu MiB)", mib);
	uint64_t sum = 0;
	for (size_t i = 0; i < n; i++) {
		size_t page = i % pages;
		walk_a(buf + page * PAGE_SIZE_BYTES, (unsigned)(page * 2654435761u) >> 7, STACK_LEVELS);
		sum += buf[page * PAGE_SIZE_BYTES];
	}
	printf("stacks %zu MiB %zu writes checksum %016llx\n", mib, n, (unsigned long long)sum);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	if (strcmp(mode, "scan") == 0)
		return mode_scan(arg_ulong(argc, argv, 2, 16));
	if (strcmp(mode, "read") == 0 && argc > 2)
		return mode_read(argv[2]);
	if (strcmp(mode, "dlopen") == 0 && argc > 2)
		return mode_dlopen(argv[2], arg_ulong(argc, argv, 3, 4));
	if (strcmp(mode, "stacks") == 0)
		return mode_stacks(arg_ulong(argc, argv, 2, 64), arg_ulong(argc, argv, 3, 1000000));
	fprintf(stderr, "usage: report_mix scan MIB | read FILE | dlopen LIB MIB | stacks MIB N\n");
	return 2;
}
