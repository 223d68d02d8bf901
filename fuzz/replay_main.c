/* replay_main.c: runs a libFuzzer harness without libFuzzer, so that any compiler (gcc, with or
 * without sanitizers) can replay the seed corpus and every regression input in `make test`.
 *
 *     replay_NAME FILE|DIR...
 *
 * Each FILE, and each regular file directly inside each DIR (in name order), is read whole and
 * passed once to LLVMFuzzerTestOneInput. Prints "replayed N inputs" on stderr and exits 0; a
 * harness check or a sanitizer stops it on the first bad input, whose name was printed just
 * before ("replaying PATH" with FUZZ_REPLAY_VERBOSE=1, or in the crash report's last line). */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));
/* Present when built with a sanitizer: runs before a sanitizer report ends the process. */
void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

static const char *volatile current;   /* the input being replayed, for the crash report */

/* Names the input that was running; async-signal-safe (write only). */
static void name_current(void)
{
	const char *name = current;
	static const char prefix[] = "replay: the input that was running: ";
	if (!name)
		return;
	if (write(STDERR_FILENO, prefix, sizeof(prefix) - 1) < 0 || write(STDERR_FILENO, name, strlen(name)) < 0 ||
	    write(STDERR_FILENO, "\n", 1) < 0)
		return;
}

/* A harness check calls abort(): name the input, then die of the signal as before. */
static void on_abort(int sig)
{
	name_current();
	signal(sig, SIG_DFL);
	raise(sig);
}

static int replay_file(const char *path, int verbose)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;

	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (;;) {
		if (len == cap) {
			cap = cap ? cap * 2 : 65536;
			uint8_t *grown = realloc(buf, cap);
			if (!grown) {
				fprintf(stderr, "replay: %s: out of memory\n", path);
				free(buf);
				fclose(f);
				return -1;
			}
			buf = grown;
		}
		size_t n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	int failed = ferror(f);
	fclose(f);
	if (failed) {
		fprintf(stderr, "replay: %s: read error\n", path);
		free(buf);
		return -1;
	}
	if (verbose)
		fprintf(stderr, "replaying %s (%zu bytes)\n", path, len);
	current = path;
	/* A copy of exactly len bytes, so that ASan sees a read past the input's end. */
	uint8_t *exact = malloc(len ? len : 1);
	if (!exact) {
		free(buf);
		return -1;
	}
	memcpy(exact, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	current = NULL;
	return 0;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_dir(const char *dir, int verbose, unsigned long *count)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	if (!d) {
		fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			char **grown = realloc(names, cap * sizeof(*names));
			if (!grown)
				break;
			names = grown;
		}
		if (asprintf(&names[n], "%s/%s", dir, e->d_name) < 0)
			break;
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), compare_names);
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (rc == 0 && stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
			rc = replay_file(names[i], verbose);
			*count += rc == 0;
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	int verbose = getenv("FUZZ_REPLAY_VERBOSE") && strcmp(getenv("FUZZ_REPLAY_VERBOSE"), "1") == 0;
	unsigned long count = 0;

	signal(SIGABRT, on_abort);
	if (__sanitizer_set_death_callback)
		__sanitizer_set_death_callback(name_current);
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		struct stat st;
		int rc;
		if (stat(argv[i], &st) < 0) {
			fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
			return 1;
		}
		if (S_ISDIR(st.st_mode)) {
			rc = replay_dir(argv[i], verbose, &count);
		} else {
			rc = replay_file(argv[i], verbose);
			count += rc == 0;
		}
		if (rc < 0)
			return 1;
	}
	fprintf(stderr, "replayed %lu inputs\n", count);
	return 0;
}
