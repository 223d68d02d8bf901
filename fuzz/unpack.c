/* unpack.c: turns a fuzzing input of fuzz_trace_reader (fuzz/container.h) back into a recording
 * directory, to look at a crash or a seed with `faultline dump`:
 *
 *     build/fuzz/unpack INPUT DIR        (DIR is created; it must not exist)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "container.h"

int main(int argc, char **argv)
{
	FILE *f;
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (argc != 3) {
		fprintf(stderr, "usage: %s INPUT DIR\n", argv[0]);
		return 2;
	}
	f = fopen(argv[1], "rb");
	if (!f) {
		fprintf(stderr, "unpack: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	do {
		if (len == cap) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap);
			if (!buf) {
				fprintf(stderr, "unpack: out of memory\n");
				return 1;
			}
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	fclose(f);
	if (mkdir(argv[2], 0755) < 0) {
		fprintf(stderr, "unpack: mkdir %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	if (container_unpack(buf, len, argv[2]) < 0) {
		fprintf(stderr, "unpack: writing below %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	free(buf);
	return 0;
}
