/* dlopen_split.c: one allocation site on both sides of a dlopen, for `faultline ranges`.
 * Allocates 64 blocks of 256 KiB from grab() and fills them, loading libz with dlopen after the
 * 32nd (the runtime takes a maps snapshot then: it renames nothing of this program), then reads
 * every block 3 times. Under -L 4M every pass faults: one hot range whose allocation site is
 * grab, with all 64 blocks (a snapshot that does not rename a stack's frames must not split its
 * site in two).
 * Prints "dlopen_split blocks=64 checksum=X". */
#include "planted.h"

#include <dlfcn.h>

#define BLOCKS 64
#define BLOCK_BYTES (256u << 10)

__attribute__((noinline)) static char *grab(size_t n)
{
	char *p = malloc(n);
	if (!p)
		die_errno("malloc(%zu)", n);
	return p;
}

int main(void)
{
	static char *blocks[BLOCKS];
	for (int i = 0; i < BLOCKS; i++) {
		if (i == BLOCKS / 2 && !dlopen("libz.so.1", RTLD_NOW))
			die("dlopen(libz.so.1): %s", dlerror());
		blocks[i] = grab(BLOCK_BYTES);
		memset(blocks[i], i, BLOCK_BYTES);
	}
	unsigned long sum = 0;
	for (int r = 0; r < 3; r++)
		for (int i = 0; i < BLOCKS; i++)
			for (size_t k = 0; k < BLOCK_BYTES; k += 4096)
				sum = sum * 31 + (unsigned char)blocks[i][k];
	printf("dlopen_split blocks=%d checksum=%lx\n", BLOCKS, sum);
	return 0;
}
