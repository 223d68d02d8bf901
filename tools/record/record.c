/* record.c: `faultline record [options] [--] CMD [ARGS...]` — runs a command with the
 * far-memory runtime preloaded and leaves its trace in an output directory.
 *
 * Read top to bottom, this file follows one run:
 *   1. options        record_parse_args: every option in every spelling, checked values
 *   2. checks         the command exists and can carry LD_PRELOAD (not static, not
 *                     set-user-ID), the runtime library exists, userfaultfd can be opened
 *   3. output dir     default name, refuse a non-empty one unless --force, mkdir -p
 *   4. environment    the FAULTLINE_* contract of inc/faultline/env.h and LD_PRELOAD
 *   5. run            fork + execvp, forward SIGINT/SIGTERM/SIGHUP/SIGQUIT, wait, exit
 *                     with the child's status (128+N when killed by signal N)
 *   6. summary        read back every DIR/<pid>/stats.json and print one screen on stderr
 * `record` never writes to stdout while recording: the traced program owns it. */
#include "record.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <faultline/record_schema.h>

#include "cli.h"
#include "far_cleanup.h"
#include "far_spec.h"
#include "record_binaries.h"
#include "faultline/env.h"
#include "faultline/pmu_events.h"
#include "faultline/trace.h"
#include "stats_json.h"
#include "viz_files.h"

#define RECORD_PAGE_BYTES 4096
#define RECORD_MAX_SAMPLE 1000000000u
#define RECORD_SCRIPT_DEPTH 4  /* #! interpreters followed, as the kernel does */
#define RECORD_RUNTIME_LIB "libfaultline.so"
#define RECORD_TIMELINE_MS 20  /* --timeline default: 50 samples a second */

/* ---------------------------------------------------------------------------------------
 * 1. Options
 * ------------------------------------------------------------------------------------- */

void record_usage(void)
{
	fputs("usage: faultline record [options] [--] CMD [ARGS...]\n"
	      "\n"
	      "Runs CMD with faultline's far-memory runtime: its heap lives in a region of -M bytes\n"
	      "of which at most -L stay in local memory; every page fault is traced with its stack.\n"
	      "The trace goes to DIR/<pid>/ for each traced process. Exits with CMD's status\n"
	      "(70 when CMD exited 0 but the runtime did not start, so nothing was traced).\n"
	      "\n"
	      "options (values as '-L 64M', '-L64M', '-L=64M', '--local 64M' or '--local=64M'):\n"
	      "  -L, --local SIZE       local memory; beyond it pages are evicted to the far store\n"
	      "                         (default: unlimited; 0 or 'unlimited' = no eviction;\n"
	      "                         else at least 1M)\n"
	      "  -M, --max SIZE         size of the region that holds the heap (default: this\n"
	      "                         machine's RAM; 2M to 32T); bounds the program's peak heap\n"
	      "  -c, --handlers N       fault handler threads (default 0: the runtime picks)\n"
	      "      --policy P         eviction policy: clock (default) or fifo\n"
	      "  -o, --output DIR       output directory; %p = pid of record, %h = host name\n"
	      "                         (default: faultline-<command>-<pid>)\n"
	      "      --force            reuse a non-empty output directory: its old per-process\n"
	      "                         subdirectories (named by pid) and the files visualize made\n"
	      "                         from them are removed, nothing else\n"
	      "  -s, --sample N         record a stack for 1 fault in N (default 1: every fault)\n"
	      "      --stack-depth N    frames kept per stack (default 64; 0 = no stacks)\n"
	      "      --pmu EVENTS       comma-separated perf events read with each fault\n"
	      "      --alloc-log MODE   allocation events logged: sampled (default: about one per\n"
	      "                         --alloc-sample-bytes allocated per thread, every allocation\n"
	      "                         of >= 1 page, and their frees) or full (every event, zstd-\n"
	      "                         compressed in allocs.zst). Either way every fault names the\n"
	      "                         object it hit and its allocation site, and the sites file\n"
	      "                         holds exact per-site counts\n"
	      "      --alloc-sample-bytes SIZE  mean bytes between sampled allocations (default 512K)\n"
	      "      --alloc-sample N   accepted for compatibility; no effect (each allocation site's\n"
	      "                         stack is taken once)\n"
	      "      --far SPEC         where evicted pages go: mem (default: this process's memory),\n"
	      "                         file:PATH (a file in directory PATH or PATH's directory,\n"
	      "                         removed even after SIGKILL; or a block device), or\n"
	      "                         memcached:HOST:PORT[,HOST:PORT...] (consistent hashing)\n"
	      "      --keep-far PATH    file store: keep each process's file as PATH.<pid>.<n>\n"
	      "      --far-latency USEC emulated latency added to every far request\n"
	      "      --far-bandwidth MBPS emulated bandwidth of the far store (MB/s, 10^6 bytes)\n"
	      "      --prefetch N       on a refault, read the next N evicted pages ahead into local\n"
	      "                         memory (counted in -L) without mapping them (default 0)\n"
	      "      --timeline MS      sample counters every MS milliseconds into the trace's\n"
	      "                         timeline (default 20; 0 = off): per thread task-clock,\n"
	      "                         page-faults, context-switches (and instructions, cycles\n"
	      "                         where the machine counts them), per process the runtime's\n"
	      "                         resident and soft pages, far reads and writes, evictions,\n"
	      "                         write-backs and faults by kind\n"
	      "      --timeline-every N also sample the runtime's counters every N faults\n"
	      "                         (default 0 = off)\n"
	      "      --mrc              sample reuse distances for `faultline mrc` (a miss-ratio\n"
	      "                         curve from one run): 1 page in 2, chosen by a hash of its\n"
	      "                         number, is unmapped on trial again after each touch, once\n"
	      "                         the program touched about 32 other pages; at most 2048\n"
	      "                         pages, or 1/16 of -L when that is fewer (beyond, the rate\n"
	      "                         drops: fixed-size SHARDS, so large programs are sampled\n"
	      "                         sparsely; without -L is best). At 1 page in N it costs\n"
	      "                         about 1/N of a record at a -L too small for the program's\n"
	      "                         working set\n"
	      "      --mrc-rate N       --mrc, sampling 1 page in N to start with (default 2)\n"
	      "      --mrc-gap N        --mrc, re-arming a touched page once about N other pages\n"
	      "                         were touched (default 32): larger is cheaper, and misses\n"
	      "                         reuses nearer than N pages (or M pages when 1 page in M\n"
	      "                         is sampled, M > N)\n"
	      "      --sample-accesses  sample accesses to resident memory at any -L: probes unmap\n"
	      "                         a resident page on trial for 5 ms; a touch within that\n"
	      "                         window is an access sample, a fault record of kind\n"
	      "                         'access' with its stack (report --kind access), never\n"
	      "                         counted with the other faults. New probes take uniformly\n"
	      "                         chosen pages; a touched page is probed again (up to 8\n"
	      "                         times), so samples per MiB rank memory by access frequency\n"
	      "      --sample-accesses-rate N  probes per second (default 500; at most N samples/s)\n"
	      "      --archive          keep a copy of every mapped binary (and its separate debug\n"
	      "                         file) in DIR/.build-id, by build-id, so the recording can be\n"
	      "                         reported after a rebuild or on another machine. Without it,\n"
	      "                         DIR/binaries still records each binary's build-id, size and\n"
	      "                         mtime: a binary changed since is shown as binary+0xOFFSET\n"
	      "  -q, --quiet            no banner and no summary\n"
	      "  -h, --help             show this help\n"
	      "\n"
	      "SIZE is a number with an optional binary unit B, K, M, G, T (also KiB, MiB, ...);\n"
	      "a bare number is in MiB. Sizes are rounded up to 4 KiB.\n"
	      "\n"
	      "environment: FAULTLINE_LIB overrides the runtime library (default: libfaultline.so\n"
	      "next to the faultline binary, else ../lib/faultline/libfaultline.so from it).\n"
	      "\n"
	      "example: faultline record -L 64M -M 1G -- ./prog --input data.txt\n"
	      "         faultline report faultline-prog-1234\n",
	      stdout);
}

static void record_defaults(struct record_options *o)
{
	memset(o, 0, sizeof(*o));
	o->policy = "clock";
	o->sample = 1;
	o->stack_depth = 64;
	o->alloc_sample = 0;   /* 0 = follow -s */
	o->far = "mem";
	o->timeline_ms = RECORD_TIMELINE_MS;
	o->mrc_gap = FL_PROBE_MRC_GAP_DEFAULT;
	snprintf(o->far_spec, sizeof(o->far_spec), "mem");
}

static int parse_unsigned(const char *text, uint64_t min, uint64_t max, unsigned *out,
			  char *err, size_t errlen)
{
	uint64_t value;

	if (cli_parse_uint(text, min, max, &value, err, errlen) < 0)
		return -1;
	*out = (unsigned)value;
	return 0;
}

static int apply_local(struct record_options *o, const char *v, char *err, size_t errlen)
{
	if (strcasecmp(v, "unlimited") == 0) {
		o->local_bytes = 0;
		return 0;
	}
	return cli_parse_size(v, CLI_MIB, &o->local_bytes, err, errlen);
}

static int apply_max(struct record_options *o, const char *v, char *err, size_t errlen)
{
	if (cli_parse_size(v, CLI_MIB, &o->max_bytes, err, errlen) < 0)
		return -1;
	if (o->max_bytes == 0) {
		snprintf(err, errlen, "the region size must be larger than 0");
		return -1;
	}
	o->max_given = true;
	return 0;
}

static int apply_handlers(struct record_options *o, const char *v, char *err, size_t errlen)
{
	return parse_unsigned(v, 0, RECORD_MAX_HANDLERS, &o->handlers, err, errlen);
}

static int apply_policy(struct record_options *o, const char *v, char *err, size_t errlen)
{
	if (strcmp(v, "clock") != 0 && strcmp(v, "fifo") != 0) {
		snprintf(err, errlen, "unknown policy '%s' (use clock or fifo)", v);
		return -1;
	}
	o->policy = v;
	return 0;
}

static int apply_output(struct record_options *o, const char *v, char *err, size_t errlen)
{
	if (*v == '\0') {
		snprintf(err, errlen, "empty directory name");
		return -1;
	}
	o->output = v;
	return 0;
}

static int apply_sample(struct record_options *o, const char *v, char *err, size_t errlen)
{
	return parse_unsigned(v, 1, RECORD_MAX_SAMPLE, &o->sample, err, errlen);
}

static int apply_stack_depth(struct record_options *o, const char *v, char *err, size_t errlen)
{
	return parse_unsigned(v, 0, RECORD_MAX_STACK_DEPTH, &o->stack_depth, err, errlen);
}

/* Can this machine count the event for the calling thread? (Its hardware counters may be
 * absent, as in many VMs, or perf_event_paranoid may forbid them.) */
static bool pmu_event_available(const struct fl_pmu_event *e)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = e->type;
	attr.config = e->config;
	attr.exclude_hv = 1;
	int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* Every --pmu name must be an event faultline knows (checked while parsing) and this machine
 * can count (checked after parsing, like --far: the parser makes no system call); "none"
 * turns the PMU context off. A typo used to be only a warning from the runtime. */
static int check_pmu(const char *v, bool probe, char *err, size_t errlen)
{
	for (const char *p = v; strcmp(v, "none") != 0 && *p;) {
		size_t len = strcspn(p, ",");
		const struct fl_pmu_event *e = fl_pmu_event_find(p, len);
		if (!e || (probe && !pmu_event_available(e))) {
			size_t used = (size_t)snprintf(err, errlen, "'%.*s' is %s; events%s:", (int)len, p,
						       e ? "not available on this machine" : "not a known event",
						       probe ? " here" : "");
			for (size_t i = 0; i < FL_PMU_EVENT_COUNT && used < errlen; i++)
				if (!probe || pmu_event_available(&fl_pmu_events[i]))
					used += (size_t)snprintf(err + used, errlen - used, " %s", fl_pmu_events[i].name);
			return -1;
		}
		p += len + (p[len] == ',');
	}
	return 0;
}

static int apply_pmu(struct record_options *o, const char *v, char *err, size_t errlen)
{
	if (*v == '\0' || strpbrk(v, " \t\n") != NULL) {
		snprintf(err, errlen, "expected comma-separated event names without spaces, "
			 "e.g. task-clock,page-faults");
		return -1;
	}
	if (check_pmu(v, false, err, errlen) < 0)
		return -1;
	o->pmu = v;
	return 0;
}

static int apply_alloc_sample(struct record_options *o, const char *v, char *err, size_t errlen)
{
	return parse_unsigned(v, 1, RECORD_MAX_SAMPLE, &o->alloc_sample, err, errlen);
}

static int apply_alloc_log(struct record_options *o, const char *v, char *err, size_t errlen)
{
	if (strcmp(v, "sampled") != 0 && strcmp(v, "full") != 0) {
		snprintf(err, errlen, "'%s' is not an allocation log mode (sampled or full)", v);
		return -1;
	}
	o->alloc_log = v;
	return 0;
}

static int apply_alloc_sample_bytes(struct record_options *o, const char *v, char *err, size_t errlen)
{
	uint64_t bytes;
	if (cli_parse_size(v, 1, &bytes, err, errlen) < 0)
		return -1;
	if (bytes == 0) {
		snprintf(err, errlen, "must be at least 1 byte");
		return -1;
	}
	o->alloc_sample_bytes = bytes;
	return 0;
}

static int apply_far(struct record_options *o, const char *v, char *err, size_t errlen)
{
	if (far_spec_syntax(v, err, errlen) < 0)
		return -1;
	o->far = v;
	return 0;
}

static int apply_keep_far(struct record_options *o, const char *v, char *err, size_t errlen)
{
	if (*v == '\0') {
		snprintf(err, errlen, "empty path");
		return -1;
	}
	o->keep_far = v;
	return 0;
}

static int apply_far_latency(struct record_options *o, const char *v, char *err, size_t errlen)
{
	uint64_t usec;
	if (cli_parse_uint(v, 0, 10000000, &usec, err, errlen) < 0)
		return -1;
	o->far_latency_ns = usec * 1000;
	return 0;
}

static int apply_far_bandwidth(struct record_options *o, const char *v, char *err, size_t errlen)
{
	uint64_t mbps;
	if (cli_parse_uint(v, 0, 100000000, &mbps, err, errlen) < 0)
		return -1;
	o->far_bandwidth = mbps * 1000000;
	return 0;
}

static int apply_prefetch(struct record_options *o, const char *v, char *err, size_t errlen)
{
	return parse_unsigned(v, 0, 64, &o->prefetch, err, errlen);
}

static int apply_timeline(struct record_options *o, const char *v, char *err, size_t errlen)
{
	return parse_unsigned(v, 0, 60000, &o->timeline_ms, err, errlen);
}

static int apply_timeline_every(struct record_options *o, const char *v, char *err, size_t errlen)
{
	return parse_unsigned(v, 0, 1000000000, &o->timeline_every, err, errlen);
}

static int apply_mrc_rate(struct record_options *o, const char *v, char *err, size_t errlen)
{
	return parse_unsigned(v, 1, 1u << 20, &o->mrc, err, errlen);
}

static int apply_mrc_gap(struct record_options *o, const char *v, char *err, size_t errlen)
{
	return parse_unsigned(v, 1, 1u << 20, &o->mrc_gap, err, errlen);
}

static int apply_sample_accesses_rate(struct record_options *o, const char *v, char *err, size_t errlen)
{
	return parse_unsigned(v, 1, 1000000, &o->sample_accesses, err, errlen);
}

/* The options, and what each does with its value. */
enum { OPT_HELP = 100, OPT_QUIET, OPT_FORCE, OPT_MRC, OPT_SAMPLE_ACCESSES, OPT_ARCHIVE };

static const struct record_value_option {
	const char *short_name, *long_name;
	int (*apply)(struct record_options *o, const char *value, char *err, size_t errlen);
} record_value_options[] = {
	{ "-L", "--local", apply_local },
	{ "-M", "--max", apply_max },
	{ "-c", "--handlers", apply_handlers },
	{ NULL, "--policy", apply_policy },
	{ "-o", "--output", apply_output },
	{ "-s", "--sample", apply_sample },
	{ NULL, "--stack-depth", apply_stack_depth },
	{ NULL, "--pmu", apply_pmu },
	{ NULL, "--alloc-sample", apply_alloc_sample },
	{ NULL, "--alloc-log", apply_alloc_log },
	{ NULL, "--alloc-sample-bytes", apply_alloc_sample_bytes },
	{ NULL, "--far", apply_far },
	{ NULL, "--keep-far", apply_keep_far },
	{ NULL, "--far-latency", apply_far_latency },
	{ NULL, "--far-bandwidth", apply_far_bandwidth },
	{ NULL, "--prefetch", apply_prefetch },
	{ NULL, "--timeline", apply_timeline },
	{ NULL, "--timeline-every", apply_timeline_every },
	{ NULL, "--mrc-rate", apply_mrc_rate },
	{ NULL, "--mrc-gap", apply_mrc_gap },
	{ NULL, "--sample-accesses-rate", apply_sample_accesses_rate },
};
#define RECORD_NVALUED (sizeof(record_value_options) / sizeof(record_value_options[0]))

/* The parser's table: the flags, then the valued options (id = index in record_value_options). */
#define RECORD_NFLAGS 6
static struct cli_opt record_opts[RECORD_NFLAGS + RECORD_NVALUED] = {
	{ "-h", "--help", CLI_FLAG, OPT_HELP },
	{ "-q", "--quiet", CLI_FLAG, OPT_QUIET },
	{ NULL, "--force", CLI_FLAG, OPT_FORCE },
	{ NULL, "--mrc", CLI_FLAG, OPT_MRC },
	{ NULL, "--sample-accesses", CLI_FLAG, OPT_SAMPLE_ACCESSES },
	{ NULL, "--archive", CLI_FLAG, OPT_ARCHIVE },
};

static int record_option(void *ctx, int id, const char *value, char *err, size_t errlen)
{
	struct record_options *o = ctx;

	switch (id) {
	case OPT_HELP: o->help = true; return 1; /* stop: the usage is all that is wanted */
	case OPT_QUIET: o->quiet = true; return 0;
	case OPT_FORCE: o->force = true; return 0;
	case OPT_MRC: if (!o->mrc) o->mrc = FL_PROBE_MRC_RATE_DEFAULT; return 0;
	case OPT_SAMPLE_ACCESSES: if (!o->sample_accesses) o->sample_accesses = 500; return 0;
	case OPT_ARCHIVE: o->archive = true; return 0;
	default: return record_value_options[id].apply(o, value, err, errlen);
	}
}

/* Rounds *bytes up to a whole page; -1 if that overflows. */
static int round_up_page(uint64_t *bytes)
{
	if (*bytes > UINT64_MAX - (RECORD_PAGE_BYTES - 1))
		return -1;
	*bytes = (*bytes + RECORD_PAGE_BYTES - 1) & ~(uint64_t)(RECORD_PAGE_BYTES - 1);
	return 0;
}

static int machine_ram_bytes(uint64_t *out, char *err, size_t errlen)
{
	long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);

	if (pages <= 0 || page_size <= 0) {
		snprintf(err, errlen, "cannot tell this machine's RAM (sysconf: %s); give -M",
			 strerror(errno));
		return -1;
	}
	*out = (uint64_t)pages * (uint64_t)page_size;
	return 0;
}

/* Fills the -M default, rounds both sizes and checks -L <= -M <= the address space. */
static int record_check_sizes(struct record_options *o, char *err, size_t errlen)
{
	char local[32], max[32];

	if (!o->max_given && machine_ram_bytes(&o->max_bytes, err, errlen) < 0)
		return -1;
	if (round_up_page(&o->max_bytes) < 0 || o->max_bytes > RECORD_MAX_REGION_BYTES) {
		snprintf(err, errlen, "-M/--max: at most %s (the region and its far-store mirror must fit "
			 "in the address space)", cli_format_size(RECORD_MAX_REGION_BYTES, max, sizeof(max)));
		return -1;
	}
	if (o->max_bytes < RECORD_MIN_REGION_BYTES) {
		snprintf(err, errlen, "-M/--max: at least %s (the allocator's first extent)",
			 cli_format_size(RECORD_MIN_REGION_BYTES, max, sizeof(max)));
		return -1;
	}
	if (o->local_bytes && o->local_bytes < RECORD_MIN_LOCAL_BYTES) {
		snprintf(err, errlen, "-L/--local: at least %s (or 0 / 'unlimited': no eviction)",
			 cli_format_size(RECORD_MIN_LOCAL_BYTES, local, sizeof(local)));
		return -1;
	}
	if (round_up_page(&o->local_bytes) < 0 || o->local_bytes > o->max_bytes) {
		snprintf(err, errlen, "-L %s is larger than -M %s%s: local memory cannot exceed the region",
			 o->local_bytes > o->max_bytes ? cli_format_size(o->local_bytes, local, sizeof(local))
						       : "(too large)",
			 cli_format_size(o->max_bytes, max, sizeof(max)),
			 o->max_given ? "" : " (default: this machine's RAM)");
		return -1;
	}
	return 0;
}

int record_parse_args(int argc, char **argv, struct record_options *o, char *err, size_t errlen)
{
	struct cli_verb verb = { "record", NULL, record_opts, sizeof(record_opts) / sizeof(record_opts[0]), record_option,
				 NULL, NULL, o };
	int i;

	for (size_t k = 0; k < RECORD_NVALUED; k++)
		record_opts[RECORD_NFLAGS + k] = (struct cli_opt){ record_value_options[k].short_name, record_value_options[k].long_name,
						       CLI_VALUE, (int)k };
	record_defaults(o);
	if (cli_parse_options(&verb, argc, argv, &i, err, errlen) != 0)
		return -1;
	if (o->help)
		return 0;
	if (i >= argc || argv[i][0] == '\0') {
		snprintf(err, errlen, i >= argc ? "no command given: faultline record [options] [--] CMD [ARGS...]"
						 : "empty command name");
		return -1;
	}
	o->command = &argv[i];
	o->command_argc = argc - i;
	if (o->timeline_every && !o->timeline_ms) {
		snprintf(err, errlen, "--timeline-every needs the timeline on (--timeline 0 turns it off)");
		return -1;
	}
	return record_check_sizes(o, err, errlen);
}

/* ---------------------------------------------------------------------------------------
 * 2. Checks before starting anything
 * ------------------------------------------------------------------------------------- */

/* 0 if path is a regular file we may execute; else -1 with errno (EISDIR for a directory). */
static int executable_file(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -1;
	if (S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		errno = EACCES;
		return -1;
	}
	return access(path, X_OK);
}

/* Finds name as execvp would: as given when it holds a '/', else along PATH. On failure
 * errno is ENOENT, or EACCES/EISDIR when only something not executable was found. */
static int find_command(const char *name, char *path, size_t len)
{
	const char *search = getenv("PATH"), *dir;
	int found_unusable = 0;

	if (strchr(name, '/') != NULL) {
		if ((size_t)snprintf(path, len, "%s", name) >= len) {
			errno = ENAMETOOLONG;
			return -1;
		}
		return executable_file(path);
	}
	if (search == NULL)
		search = "/bin:/usr/bin";
	for (dir = search;; dir++) {
		const char *colon = strchrnul(dir, ':');
		int dir_len = (int)(colon - dir);
		int n = dir_len == 0 ? snprintf(path, len, "%s", name)
				     : snprintf(path, len, "%.*s/%s", dir_len, dir, name);

		if (n > 0 && (size_t)n < len) {
			if (executable_file(path) == 0)
				return 0;
			if (errno == EACCES || errno == EISDIR)
				found_unusable = 1;
		}
		if (*colon == '\0')
			break;
		dir = colon;
	}
	errno = found_unusable ? EACCES : ENOENT;
	return -1;
}

/* What kind of executable a file is, as far as LD_PRELOAD is concerned. */
enum exec_kind {
	EXEC_DYNAMIC,   /* ELF for this machine with an interpreter: the loader reads LD_PRELOAD */
	EXEC_STATIC,    /* ELF without PT_INTERP: no loader, LD_PRELOAD is never read */
	EXEC_FOREIGN,   /* ELF of another class or machine: our library cannot load into it */
	EXEC_SCRIPT,    /* "#!interpreter": what matters is the interpreter */
	EXEC_UNKNOWN,   /* unreadable or anything else: let exec decide */
};

#if defined(__x86_64__)
#define RECORD_ELF_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define RECORD_ELF_MACHINE EM_AARCH64
#else
#error "faultline runs on x86-64 (and aarch64) only"
#endif

static enum exec_kind classify_elf(int fd, const Elf64_Ehdr *eh)
{
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_machine != RECORD_ELF_MACHINE)
		return EXEC_FOREIGN;
	if (eh->e_phentsize != sizeof(Elf64_Phdr))
		return EXEC_UNKNOWN;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr ph;
		off_t at = (off_t)(eh->e_phoff + (uint64_t)i * sizeof(ph));

		if (pread(fd, &ph, sizeof(ph), at) != (ssize_t)sizeof(ph))
			return EXEC_UNKNOWN;
		if (ph.p_type == PT_INTERP)
			return EXEC_DYNAMIC;
	}
	return EXEC_STATIC;
}

/* Copies the interpreter path of a "#!" line (head holds n bytes) into interp. */
static enum exec_kind classify_script(const char *head, size_t n, char *interp, size_t len)
{
	size_t i = 2, start, end;

	while (i < n && (head[i] == ' ' || head[i] == '\t'))
		i++;
	start = i;
	while (i < n && head[i] != ' ' && head[i] != '\t' && head[i] != '\n' && head[i] != '\0')
		i++;
	end = i;
	if (end == start || end - start >= len)
		return EXEC_UNKNOWN;
	memcpy(interp, head + start, end - start);
	interp[end - start] = '\0';
	return EXEC_SCRIPT;
}

static enum exec_kind classify_executable(const char *path, char *interp, size_t len)
{
	char head[256];
	Elf64_Ehdr eh;
	enum exec_kind kind = EXEC_UNKNOWN;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return EXEC_UNKNOWN;
	n = pread(fd, head, sizeof(head), 0);
	if (n >= (ssize_t)sizeof(eh) && memcmp(head, ELFMAG, SELFMAG) == 0) {
		memcpy(&eh, head, sizeof(eh));
		kind = classify_elf(fd, &eh);
	} else if (n >= 2 && head[0] == '#' && head[1] == '!') {
		kind = classify_script(head, (size_t)n, interp, len);
	}
	close(fd);
	return kind;
}

/* Why exec'ing path would change credentials, so that the loader runs in secure mode and
 * ignores LD_PRELOAD (set-user-ID/-group-ID to someone else, file capabilities); NULL
 * when it would not. A set-user-ID file owned by the caller changes nothing. */
static const char *secure_exec_reason(const char *path)
{
	struct stat st;
	struct statvfs fs;
	uid_t euid = geteuid();
	gid_t egid = getegid();

	if (stat(path, &st) < 0)
		return NULL;
	if (statvfs(path, &fs) == 0 && (fs.f_flag & ST_NOSUID))
		return NULL;
	if (st.st_mode & S_ISUID)
		euid = st.st_uid;
	if ((st.st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP))
		egid = st.st_gid;
	if (euid != getuid())
		return "is set-user-ID, and the loader ignores LD_PRELOAD for such programs";
	if (egid != getgid())
		return "is set-group-ID, and the loader ignores LD_PRELOAD for such programs";
	if (geteuid() != 0 && getxattr(path, "security.capability", NULL, 0) > 0)
		return "has file capabilities, and the loader ignores LD_PRELOAD for such programs";
	return NULL;
}

/* Refuses (with one clear line) a command LD_PRELOAD cannot reach; follows #! lines. */
static int check_traceable(const char *path, const char *shown)
{
	char interp[PATH_MAX], current[PATH_MAX], subject[PATH_MAX + 32] = "it";
	const char *reason = NULL;

	snprintf(current, sizeof(current), "%s", path);
	for (int depth = 0; depth < RECORD_SCRIPT_DEPTH; depth++) {
		if (depth > 0 && (size_t)snprintf(subject, sizeof(subject), "its interpreter '%s'", current) >=
				 sizeof(subject))
			return 0;
		switch (classify_executable(current, interp, sizeof(interp))) {
		case EXEC_SCRIPT:
			snprintf(current, sizeof(current), "%s", interp);
			continue;
		case EXEC_STATIC:
			reason = "is statically linked, so LD_PRELOAD cannot load faultline's runtime into it";
			break;
		case EXEC_FOREIGN:
			reason = "is not a 64-bit program for this machine (faultline's runtime is)";
			break;
		case EXEC_DYNAMIC:
		case EXEC_UNKNOWN:
			reason = secure_exec_reason(current);
			break;
		}
		if (reason != NULL)
			cli_error("cannot trace '%s': %s %s", shown, subject, reason);
		return reason != NULL ? -1 : 0;
	}
	return 0;
}

/* Where the runtime library is looked for, relative to the directory of this binary: next to it
 * (the build tree: build/faultline, build/libfaultline.so), then where `make install` and the
 * Debian package put it (PREFIX/bin/faultline, PREFIX/lib/faultline/libfaultline.so). */
static const char *const runtime_library_places[] = { "", "/../lib/faultline" };
#define RUNTIME_LIBRARY_PLACES (sizeof(runtime_library_places) / sizeof(runtime_library_places[0]))

/* Finds the runtime library: $FAULTLINE_LIB, else the first of runtime_library_places that holds
 * libfaultline.so; path gets its real path (no "..": it is shown and goes into LD_PRELOAD). */
static int find_runtime_library(char *path, size_t len)
{
	const char *override = getenv("FAULTLINE_LIB");
	char exe[PATH_MAX], candidate[PATH_MAX], *slash;
	ssize_t n;

	if (override != NULL && *override != '\0') {
		if (realpath(override, path) == NULL) {
			cli_error("FAULTLINE_LIB=%s: %s", override, strerror(errno));
			return -1;
		}
	} else {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n < 0) {
			cli_error("readlink /proc/self/exe: %s", strerror(errno));
			return -1;
		}
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash != NULL)
			*slash = '\0';
		for (size_t k = 0; k < RUNTIME_LIBRARY_PLACES; k++) {
			if ((size_t)snprintf(candidate, sizeof(candidate), "%s%s/%s", exe, runtime_library_places[k],
					     RECORD_RUNTIME_LIB) >= sizeof(candidate)) {
				cli_error("path of the runtime library too long: %s%s/%s", exe,
					  runtime_library_places[k], RECORD_RUNTIME_LIB);
				return -1;
			}
			if (access(candidate, R_OK) == 0)
				break;
			if (k + 1 == RUNTIME_LIBRARY_PLACES) {
				cli_error("runtime library %s/%s: not found next to %s/faultline nor in %s%s "
					  "(build it with make, or set FAULTLINE_LIB)",
					  exe, RECORD_RUNTIME_LIB, exe, exe, runtime_library_places[k]);
				return -1;
			}
		}
		if (realpath(candidate, path) == NULL) {
			cli_error("runtime library %s: realpath: %s", candidate, strerror(errno));
			return -1;
		}
		if (strlen(path) >= len) {
			cli_error("path of the runtime library too long: %s", path);
			return -1;
		}
	}
	if (access(path, R_OK) < 0) {
		cli_error("runtime library %s: %s (build it with make, or set FAULTLINE_LIB)", path,
			  strerror(errno));
		return -1;
	}
	if (strpbrk(path, ": ") != NULL) {
		cli_error("runtime library path '%s' contains ':' or a space, which LD_PRELOAD cannot "
			  "carry; move it or set FAULTLINE_LIB", path);
		return -1;
	}
	return 0;
}

/* The runtime needs a userfaultfd that handles kernel-mode faults too. */
static int check_userfaultfd(void)
{
	int fd = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC), device_errno;

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	device_errno = errno;
	fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	cli_error("userfaultfd is not available (open /dev/userfaultfd: %s; userfaultfd(2): %s)",
		  strerror(device_errno), strerror(errno));
	cli_error("faultline needs root, read-write access to /dev/userfaultfd, or "
		  "'sysctl vm.unprivileged_userfaultfd=1'");
	return -1;
}

/* ---------------------------------------------------------------------------------------
 * 3. Output directory
 * ------------------------------------------------------------------------------------- */

/* Expands %p (pid of record), %h (host name) and %% in an -o pattern. */
static int expand_output_pattern(const char *pattern, char *out, size_t len)
{
	char host[256];
	size_t used = 0;

	for (const char *p = pattern; *p; p++) {
		char piece[300];

		if (p[0] == '%' && p[1] == 'p') {
			snprintf(piece, sizeof(piece), "%ld", (long)getpid());
			p++;
		} else if (p[0] == '%' && p[1] == 'h') {
			if (gethostname(host, sizeof(host)) < 0)
				snprintf(host, sizeof(host), "localhost");
			host[sizeof(host) - 1] = '\0';
			snprintf(piece, sizeof(piece), "%s", host);
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			snprintf(piece, sizeof(piece), "%%");
			p++;
		} else {
			snprintf(piece, sizeof(piece), "%c", *p);
		}
		if (used + strlen(piece) >= len)
			return -1;
		memcpy(out + used, piece, strlen(piece) + 1);
		used += strlen(piece);
	}
	return used == 0 ? -1 : 0;
}

static int output_dir_name(const struct record_options *o, char *out, size_t len)
{
	const char *base = strrchr(o->command[0], '/');
	int n;

	if (o->output != NULL) {
		if (expand_output_pattern(o->output, out, len) < 0) {
			cli_error("--output '%s': name too long", o->output);
			return -1;
		}
		return 0;
	}
	base = base != NULL ? base + 1 : o->command[0];
	n = snprintf(out, len, "faultline-%s-%ld", *base ? base : "cmd", (long)getpid());
	if (n < 0 || (size_t)n >= len) {
		cli_error("output directory name for '%s' is too long; give -o", o->command[0]);
		return -1;
	}
	return 0;
}

/* A process directory: "<pid>", or "<pid>.<n>" for a later exec image of the same pid. */
static int is_process_dir_name(const char *name)
{
	int digits = 0, dots = 0;

	for (; *name; name++) {
		if (*name == '.' && digits && !dots)
			dots = 1, digits = 0;
		else if (*name >= '0' && *name <= '9')
			digits++;
		else
			return 0;
	}
	return digits > 0;
}

static int is_dot_entry(const char *name)
{
	return strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
}

/* dir/name for messages: a path too long is shown cut short with "...". */
static const char *path_for_message(char *buf, size_t len, const char *dir, const char *name)
{
	if ((size_t)snprintf(buf, len, "%s/%s", dir, name) >= len && len > 4)
		memcpy(buf + len - 4, "...", 4);
	return buf;
}

#define RECORD_REMOVE_MAX_DEPTH 16

/* Removes the directory `name` under parent_fd with everything in it, never following
 * symbolic links (a link is removed, not its target). shown names it in messages. */
static int remove_tree_at(int parent_fd, const char *name, const char *shown, int depth)
{
	int fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), rc = 0;
	struct dirent *entry;
	DIR *dir;

	if (fd < 0 || depth > RECORD_REMOVE_MAX_DEPTH) {
		cli_error("cannot remove %s: %s", shown, fd < 0 ? strerror(errno) : "nested too deeply");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	dir = fdopendir(fd);
	if (dir == NULL) {
		cli_error("cannot remove %s: fdopendir: %s", shown, strerror(errno));
		close(fd);
		return -1;
	}
	while (rc == 0 && (entry = readdir(dir)) != NULL) {
		char child[PATH_MAX];
		struct stat st;

		if (is_dot_entry(entry->d_name))
			continue;
		path_for_message(child, sizeof(child), shown, entry->d_name);
		if (fstatat(fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			cli_error("cannot remove %s: fstatat: %s", child, strerror(errno));
			rc = -1;
		} else if (S_ISDIR(st.st_mode)) {
			rc = remove_tree_at(fd, entry->d_name, child, depth + 1);
		} else if (unlinkat(fd, entry->d_name, 0) < 0) {
			cli_error("cannot remove %s: unlinkat: %s", child, strerror(errno));
			rc = -1;
		}
	}
	closedir(dir);
	if (rc == 0 && unlinkat(parent_fd, name, AT_REMOVEDIR) < 0) {
		cli_error("cannot remove %s: unlinkat: %s", shown, strerror(errno));
		rc = -1;
	}
	return rc;
}

/* An existing output directory: refuse it when it holds anything, unless force; with force remove
 * only the old per-process directories (all-digit names) and visualize's files in it. */
static int reuse_output_dir(const char *path, bool force, bool quiet)
{
	DIR *dir = opendir(path);
	struct dirent *entry;
	unsigned removed = 0, derived = 0;
	int rc = 0, nonempty = 0;

	if (dir == NULL) {
		cli_error("cannot open output directory %s: %s", path, strerror(errno));
		return -1;
	}
	while (rc == 0 && (entry = readdir(dir)) != NULL) {
		char shown[PATH_MAX];
		struct stat st;

		if (is_dot_entry(entry->d_name))
			continue;
		nonempty = 1;
		if (!force)
			break;
		if (viz_is_output_name(entry->d_name) &&
		    fstatat(dirfd(dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)) {
			if (unlinkat(dirfd(dir), entry->d_name, 0) == 0)
				derived++;
			continue;
		}
		if (!is_process_dir_name(entry->d_name) ||
		    fstatat(dirfd(dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
			continue;
		path_for_message(shown, sizeof(shown), path, entry->d_name);
		rc = remove_tree_at(dirfd(dir), entry->d_name, shown, 0);
		removed += rc == 0;
	}
	closedir(dir);
	if (nonempty && !force) {
		cli_error("output directory '%s' exists and is not empty; give another with -o, or "
			  "--force to reuse it (removes its old per-process subdirectories and visualize's files)", path);
		return -1;
	}
	if (removed > 0 && !quiet)
		cli_error("--force: removed %u old process director%s from %s", removed,
			  removed == 1 ? "y" : "ies", path);
	if (derived > 0 && !quiet)
		cli_error("--force: removed %u file%s visualize made from the old trace", derived, derived == 1 ? "" : "s");
	return rc;
}

/* mkdir -p path. */
static int make_dirs(const char *path)
{
	char partial[PATH_MAX];
	size_t len = strlen(path);

	if (len >= sizeof(partial)) {
		cli_error("output directory name too long: %s", path);
		return -1;
	}
	memcpy(partial, path, len + 1);
	for (size_t i = 1; i <= len; i++) {
		if (partial[i] != '/' && partial[i] != '\0')
			continue;
		partial[i] = '\0';
		if (mkdir(partial, 0777) < 0 && errno != EEXIST) {
			cli_error("cannot create output directory: mkdir %s: %s", partial, strerror(errno));
			return -1;
		}
		partial[i] = path[i];
	}
	return 0;
}

/* Makes the output directory ready and writes its absolute path into absolute. */
static int prepare_output_dir(const char *path, const struct record_options *o, char *absolute)
{
	struct stat st;

	if (stat(path, &st) == 0) {
		if (!S_ISDIR(st.st_mode)) {
			cli_error("output path '%s' exists and is not a directory", path);
			return -1;
		}
		if (reuse_output_dir(path, o->force, o->quiet) < 0)
			return -1;
	} else if (errno != ENOENT) {
		cli_error("output directory: stat %s: %s", path, strerror(errno));
		return -1;
	} else if (make_dirs(path) < 0) {
		return -1;
	}
	if (realpath(path, absolute) == NULL) {
		cli_error("output directory: realpath %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------------------------------
 * 4. The child's environment (inc/faultline/env.h)
 * ------------------------------------------------------------------------------------- */

#define CHILD_ENV_MAX 32 /* at least the child_env_add calls of child_env_build (22 today) */

/* Variables set in the child just before exec; values owned here. */
struct child_env {
	const char *names[CHILD_ENV_MAX];
	char *values[CHILD_ENV_MAX];
	size_t count;
	const char *unset;          /* a variable to remove, or NULL */
};

static int child_env_add(struct child_env *env, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int child_env_add(struct child_env *env, const char *name, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (env->count == CHILD_ENV_MAX)
		return -1;
	va_start(ap, fmt);
	n = vasprintf(&env->values[env->count], fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	env->names[env->count++] = name;
	return 0;
}

static void child_env_free(struct child_env *env)
{
	for (size_t i = 0; i < env->count; i++)
		free(env->values[i]);
	env->count = 0;
}

/* True when the ':'/' '-separated list holds item. */
static int list_contains(const char *list, const char *item)
{
	size_t len = strlen(item);

	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ": ");

		if (n == len && strncmp(p, item, len) == 0)
			return 1;
		p += n;
		if (*p)
			p++;
	}
	return 0;
}

char *record_ld_preload(const char *existing, const char *library)
{
	char *value;

	if (existing == NULL || *existing == '\0')
		return strdup(library);
	if (list_contains(existing, library))
		return strdup(existing);
	if (asprintf(&value, "%s:%s", existing, library) < 0)
		return NULL;
	return value;
}

static int child_env_build(const struct record_options *o, const char *dir, const char *library,
			   struct child_env *env)
{
	char *preload = record_ld_preload(getenv("LD_PRELOAD"), library);
	int rc = 0;

	memset(env, 0, sizeof(*env));
	if (preload == NULL)
		return -1;
	rc |= child_env_add(env, "LD_PRELOAD", "%s", preload);
	free(preload);
	rc |= child_env_add(env, FL_ENV_DIR, "%s", dir);
	rc |= child_env_add(env, FL_ENV_LOCAL_BYTES, "%llu", (unsigned long long)o->local_bytes);
	rc |= child_env_add(env, FL_ENV_MAX_BYTES, "%llu", (unsigned long long)o->max_bytes);
	rc |= child_env_add(env, FL_ENV_HANDLERS, "%u", o->handlers);
	rc |= child_env_add(env, FL_ENV_POLICY, "%s", o->policy);
	rc |= child_env_add(env, FL_ENV_STACK_DEPTH, "%u", o->stack_depth);
	rc |= child_env_add(env, FL_ENV_SAMPLE, "%u", o->sample);
	rc |= child_env_add(env, FL_ENV_ALLOC_SAMPLE, "%u", o->alloc_sample ? o->alloc_sample : o->sample);
	rc |= child_env_add(env, FL_ENV_ALLOC_LOG, "%s", o->alloc_log ? o->alloc_log : "sampled");
	if (o->alloc_sample_bytes)
		rc |= child_env_add(env, FL_ENV_ALLOC_SAMPLE_BYTES, "%llu", (unsigned long long)o->alloc_sample_bytes);
	rc |= child_env_add(env, FL_ENV_FAR, "%s", o->far_spec);
	rc |= child_env_add(env, FL_ENV_FAR_KEEP, "%s", o->keep_far ? o->keep_far : "");
	rc |= child_env_add(env, FL_ENV_FAR_LATENCY_NS, "%llu", (unsigned long long)o->far_latency_ns);
	rc |= child_env_add(env, FL_ENV_FAR_BANDWIDTH, "%llu", (unsigned long long)o->far_bandwidth);
	rc |= child_env_add(env, FL_ENV_PREFETCH, "%u", o->prefetch);
	rc |= child_env_add(env, FL_ENV_TIMELINE_MS, "%u", o->timeline_ms);
	rc |= child_env_add(env, FL_ENV_TIMELINE_EVERY, "%u", o->timeline_every);
	rc |= child_env_add(env, FL_ENV_PROBE_MRC, "%u", o->mrc);
	rc |= child_env_add(env, FL_ENV_PROBE_MRC_GAP, "%u", o->mrc_gap);
	rc |= child_env_add(env, FL_ENV_PROBE_ACCESS, "%u", o->sample_accesses);
	if (o->pmu != NULL)
		rc |= child_env_add(env, FL_ENV_PMU, "%s", o->pmu);
	else
		env->unset = FL_ENV_PMU;   /* settings come from options, not from a stale environment */
	if (rc != 0) {
		child_env_free(env);
		return -1;
	}
	return 0;
}

/* In the child: installs the environment. */
static int child_env_apply(const struct child_env *env)
{
	for (size_t i = 0; i < env->count; i++) {
		if (setenv(env->names[i], env->values[i], 1) < 0)
			return -1;
	}
	if (env->unset != NULL && unsetenv(env->unset) < 0)
		return -1;
	return 0;
}

/* ---------------------------------------------------------------------------------------
 * 5. Running the command
 * ------------------------------------------------------------------------------------- */

/* The signals record forwards to the child; record itself takes them with sigwaitinfo,
 * so they never kill it while it waits. SIGCHLD is in the same set to wake the wait. */
static void forwarded_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGQUIT);
	sigaddset(set, SIGCHLD);
}

/* Exit status of a shell for a command that could not be executed. */
static int exec_failure_status(int error)
{
	return error == ENOENT || error == ENOTDIR ? 127 : 126;
}

/* In the child: restore what record changed, install the environment, exec. Reports
 * errno through report_fd (close-on-exec, so a successful exec closes it silently). */
static void __attribute__((noreturn))
child_exec(const struct record_options *o, const struct child_env *env, const sigset_t *old_mask,
	   const struct sigaction *old_sigchld, int report_fd, pid_t record_pid)
{
	int error;

	/* the program dies with record: a record killed with SIGKILL leaves no orphan recording on */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != record_pid)
		_exit(128 + SIGKILL);
	sigaction(SIGCHLD, old_sigchld, NULL);
	sigprocmask(SIG_SETMASK, old_mask, NULL);
	if (child_env_apply(env) == 0)
		execvp(o->command[0], o->command);
	error = errno;
	while (write(report_fd, &error, sizeof(error)) < 0 && errno == EINTR)
		;
	_exit(exec_failure_status(error));
}

static double monotonic_seconds(void);

/* Waits for the child; forwards the signals record receives from other processes.
 * Terminal-generated signals (si_code SI_KERNEL) already reached the child, which is in
 * record's foreground process group, so they are not sent twice. However the signal came,
 * record waits for the program's runtime to finish its trace (the runtime's handler writes
 * every buffered record and stats.json before the program dies), as `perf record` finishes its
 * file on Ctrl-C. A stop signal again, a second or more after the first (a second Ctrl-C, not
 * the burst of copies that `timeout` or a scheduler sends to the whole group), cuts that short:
 * the program is killed with SIGKILL and its trace keeps what was written until then. */
static int wait_forwarding_signals(pid_t pid, const sigset_t *signals, int *status)
{
	double first_signal = 0;
	bool killed = false;
	for (;;) {
		siginfo_t info;
		pid_t done = waitpid(pid, status, WNOHANG);
		int sig;

		if (done == pid)
			return 0;
		if (done < 0 && errno != EINTR) {
			cli_error("waitpid %ld: %s", (long)pid, strerror(errno));
			return -1;
		}
		sig = sigwaitinfo(signals, &info);
		if (sig < 0 && errno != EINTR) {
			cli_error("sigwaitinfo: %s", strerror(errno));
			return -1;
		}
		if (sig <= 0 || sig == SIGCHLD)
			continue;
		double now = monotonic_seconds();
		if (first_signal == 0) {
			first_signal = now;
		} else if (now - first_signal >= 1.0 && !killed) {
			cli_error("%s again: killing the program (SIGKILL); its trace keeps what was written until now",
				  strsignal(sig));
			kill(pid, SIGKILL);
			killed = true;
			continue;
		}
		if (info.si_code != SI_KERNEL)
			kill(pid, sig);
	}
}

/* Reads the exec report: 0 when exec succeeded, else the child's errno (child reaped). */
static int read_exec_report(int fd, pid_t pid)
{
	int error = 0, status;
	ssize_t n;

	do
		n = read(fd, &error, sizeof(error));
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(error))
		return 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return error;
}

static double monotonic_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The outcome of running the command. */
struct record_run {
	int status;        /* wait status */
	double seconds;    /* wall time from fork to exit */
};

/* Forks, execs and waits. Returns 0 with *run filled, or the exit status to give up with
 * (127/126 when exec failed, 1 on a system error) after saying why. Forwarded signals stay
 * blocked afterwards, so a late Ctrl-C cannot cut the summary short. */
static int run_command(const struct record_options *o, const struct child_env *env,
		       struct record_run *run)
{
	struct sigaction default_sigchld = { .sa_handler = SIG_DFL }, old_sigchld;
	sigset_t signals, old_mask;
	int report[2], error;
	pid_t pid;

	if (pipe2(report, O_CLOEXEC) < 0) {
		cli_error("pipe2: %s", strerror(errno));
		return 1;
	}
	forwarded_signals(&signals);
	sigprocmask(SIG_BLOCK, &signals, &old_mask);
	sigaction(SIGCHLD, &default_sigchld, &old_sigchld);   /* SIG_IGN would auto-reap */
	fflush(NULL);
	run->seconds = monotonic_seconds();
	pid_t record_pid = getpid();
	pid = fork();
	if (pid == 0) {
		close(report[0]);
		child_exec(o, env, &old_mask, &old_sigchld, report[1], record_pid);
	}
	close(report[1]);
	if (pid < 0) {
		cli_error("fork: %s", strerror(errno));
		close(report[0]);
		return 1;
	}
	error = read_exec_report(report[0], pid);
	close(report[0]);
	if (error != 0) {
		cli_error("cannot run '%s': %s", o->command[0], strerror(error));
		return exec_failure_status(error);
	}
	if (wait_forwarding_signals(pid, &signals, &run->status) < 0)
		return 1;
	run->seconds = monotonic_seconds() - run->seconds;
	return 0;
}

static int exit_status_of(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

/* ---------------------------------------------------------------------------------------
 * 6. Summary from DIR/<pid>/stats.json
 * ------------------------------------------------------------------------------------- */

/* Totals over every traced process. */
struct record_totals {
	unsigned processes;      /* DIR/<pid>/ directories */
	unsigned with_stats;     /* ... of which had a readable stats.json */
	uint64_t faults, first_touch, refault, soft, concurrent;
	uint64_t evictions, writebacks;
	uint64_t peak_resident, peak_heap;   /* max over processes */
	uint64_t written, dropped;
	uint64_t contexts, late_stacks, sampled_stacks, side_dropped, alloc_events;
	uint64_t access_samples; /* record --mrc / --sample-accesses: records with stacks, not faults */
	char pmu[160];           /* PMU events of the first process, as its meta.json says */
	uint64_t far_reads, far_read_pages, far_writes, far_write_pages, far_delay_ns;
	uint64_t prefetched, prefetch_hits, prefetch_unused;
	char far[512];           /* the far store of the first process (meta.json) */
};

/* The stats.json counters the summary adds up, and where each goes. */
#define STATS_SUM(key, field) { key, offsetof(struct record_totals, field), 0 }
#define STATS_MAX(key, field) { key, offsetof(struct record_totals, field), 1 }
static const struct stats_counter {
	const char *key;
	size_t offset;
	int take_max;
} stats_counters[] = {
	STATS_SUM(FL_STATS_FAULTS_TOTAL, faults),
	STATS_SUM(FL_STATS_FAULTS_FIRST_TOUCH, first_touch),
	STATS_SUM(FL_STATS_FAULTS_REFAULT, refault),
	STATS_SUM(FL_STATS_FAULTS_SOFT, soft),
	STATS_SUM(FL_STATS_FAULTS_CONCURRENT, concurrent),
	STATS_SUM(FL_STATS_ACCESS_SAMPLES, access_samples),
	STATS_SUM(FL_STATS_EVICTIONS, evictions),
	STATS_SUM(FL_STATS_WRITEBACKS, writebacks),
	STATS_MAX(FL_STATS_PEAK_RESIDENT, peak_resident),
	STATS_MAX(FL_STATS_PEAK_HEAP, peak_heap),
	STATS_SUM(FL_STATS_RECORDS_WRITTEN, written),
	STATS_SUM(FL_STATS_RECORDS_DROPPED, dropped),
	STATS_SUM(FL_STATS_CONTEXTS_WRITTEN, contexts),
	STATS_SUM(FL_STATS_LATE_STACKS_DROPPED, late_stacks),
	STATS_SUM(FL_STATS_STACKS_FROM_SAMPLES, sampled_stacks),
	STATS_SUM(FL_STATS_SIDE_BYTES_DROPPED, side_dropped),
	STATS_SUM(FL_STATS_ALLOC_EVENTS, alloc_events),
	STATS_SUM(FL_STATS_FAR_READS, far_reads),
	STATS_SUM(FL_STATS_FAR_READ_PAGES, far_read_pages),
	STATS_SUM(FL_STATS_FAR_WRITES, far_writes),
	STATS_SUM(FL_STATS_FAR_WRITE_PAGES, far_write_pages),
	STATS_SUM(FL_STATS_FAR_DELAY_NS, far_delay_ns),
	STATS_SUM(FL_STATS_PREFETCHED_PAGES, prefetched),
	STATS_SUM(FL_STATS_PREFETCH_HITS, prefetch_hits),
	STATS_SUM(FL_STATS_PREFETCH_UNUSED, prefetch_unused),
};

/* Says why a process dropped records, when its runtime said so. */
static void report_dropped_reason(const struct flat_json *stats, const char *pid)
{
	const char *reason = stats_json_string(stats, FL_STATS_RECORDS_DROPPED_REASON);
	uint64_t dropped;

	if (stats_json_uint(stats, FL_STATS_RECORDS_DROPPED, &dropped) == 0 && dropped > 0 && reason != NULL &&
	    *reason != '\0')
		cli_error("pid %s dropped records: %s", pid, reason);
}

/* Which PMU events the runtime used, from meta.json: said once per recording. */
static void describe_pmu(struct record_totals *t, const char *dir, const char *pid)
{
	char path[PATH_MAX], err[PATH_MAX + 256];
	struct flat_json meta;
	const char *kind;
	char *const *events = NULL;
	size_t n = 0, used = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s/%s", dir, pid, FL_FILE_NAME_META) >= sizeof(path) ||
	    stats_json_load(path, &meta, err, sizeof(err)) < 0)
		return;
	kind = stats_json_string(&meta, FL_META_PMU_KIND);
	stats_json_strings(&meta, FL_META_PMU_EVENTS, &events, &n);
	if (kind != NULL && strcmp(kind, "software") == 0)
		used = (size_t)snprintf(t->pmu, sizeof(t->pmu), "software events (no hardware counters here): ");
	else if (kind != NULL && strcmp(kind, "hardware") == 0)
		used = (size_t)snprintf(t->pmu, sizeof(t->pmu), "hardware events: ");
	else
		snprintf(t->pmu, sizeof(t->pmu), "none");
	for (size_t i = 0; i < n && used < sizeof(t->pmu); i++)
		used += (size_t)snprintf(t->pmu + used, sizeof(t->pmu) - used, "%s%s", i ? "," : "", events[i]);
	far_spec_describe(&meta, t->far, sizeof(t->far));
	stats_json_free(&meta);
}

/* Adds one process's stats.json into totals; complains about what it cannot read. */
static void totals_add_process(struct record_totals *t, const char *dir, const char *pid, bool quiet)
{
	char path[PATH_MAX], err[PATH_MAX + 256], missing[512] = "";
	struct flat_json stats;

	t->processes++;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s/%s", dir, pid, FL_FILE_NAME_STATS) >= sizeof(path)) {
		cli_error("path too long: %s/%s/%s", dir, pid, FL_FILE_NAME_STATS);
		return;
	}
	if (access(path, F_OK) < 0 && errno == ENOENT) {
		if (!quiet)
			cli_error("no stats for pid %s (process killed?)", pid);
		return;
	}
	if (stats_json_load(path, &stats, err, sizeof(err)) < 0) {
		cli_error("%s", err);
		return;
	}
	t->with_stats++;
	for (size_t i = 0; i < sizeof(stats_counters) / sizeof(stats_counters[0]); i++) {
		const struct stats_counter *c = &stats_counters[i];
		uint64_t value, *field = (uint64_t *)((char *)t + c->offset);

		if (stats_json_uint(&stats, c->key, &value) < 0) {
			size_t used = strlen(missing);
			snprintf(missing + used, sizeof(missing) - used, "%s%s", used ? ", " : "", c->key);
			continue;
		}
		if (!c->take_max)
			*field += value;
		else if (value > *field)
			*field = value;
	}
	if (missing[0] != '\0')
		cli_error("%s: no counter (non-negative integer) for %s", path, missing);
	report_dropped_reason(&stats, pid);
	stats_json_free(&stats);
	if (t->pmu[0] == '\0')
		describe_pmu(t, dir, pid);
}

static int compare_pids(const void *a, const void *b)
{
	unsigned long x = strtoul(*(char *const *)a, NULL, 10), y = strtoul(*(char *const *)b, NULL, 10);

	return x < y ? -1 : x > y;
}

/* Reads every DIR/<pid>/stats.json, in pid order. */
static void totals_collect(struct record_totals *t, const char *dir, bool quiet)
{
	DIR *d = opendir(dir);
	struct dirent *entry;
	char **pids = NULL;
	size_t count = 0, cap = 0;

	memset(t, 0, sizeof(*t));
	if (d == NULL) {
		cli_error("cannot read %s: %s", dir, strerror(errno));
		return;
	}
	while ((entry = readdir(d)) != NULL) {
		struct stat st;

		if (!is_process_dir_name(entry->d_name) ||
		    fstatat(dirfd(d), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
			continue;
		if (count == cap) {
			char **grown = realloc(pids, (cap = cap ? cap * 2 : 16) * sizeof(*pids));
			if (grown == NULL)
				break;
			pids = grown;
		}
		pids[count] = strdup(entry->d_name);
		if (pids[count] != NULL)
			count++;
	}
	closedir(d);
	if (count > 1)
		qsort(pids, count, sizeof(*pids), compare_pids);
	for (size_t i = 0; i < count; i++) {
		totals_add_process(t, dir, pids[i], quiet);
		free(pids[i]);
	}
	free(pids);
}

static void describe_exit(const struct record_options *o, const struct record_run *run)
{
	int status = run->status;

	if (WIFSIGNALED(status))
		cli_error("'%s' was killed by signal %d (%s) after %.2f s", o->command[0], WTERMSIG(status),
			  strsignal(WTERMSIG(status)), run->seconds);
	else if (WEXITSTATUS(status) == FL_EXIT_RUNTIME_FAILURE)
		cli_error("'%s' exited with status %d after %.2f s (the status the faultline runtime uses "
			  "when it must stop a program: see its message above)", o->command[0],
			  FL_EXIT_RUNTIME_FAILURE, run->seconds);
	else
		cli_error("'%s' exited with status %d after %.2f s", o->command[0], WEXITSTATUS(status),
			  run->seconds);
}

static void print_totals(const struct record_totals *t, const struct record_options *o)
{
	char a[32], b[32], c[32], d[32], e[32];

	fprintf(stderr, "  processes traced  %u\n", t->processes);
	fprintf(stderr, "  faults            %s (first-touch %s, refault %s, soft %s, concurrent %s)\n",
		cli_format_count(t->faults, a, sizeof(a)), cli_format_count(t->first_touch, b, sizeof(b)),
		cli_format_count(t->refault, c, sizeof(c)), cli_format_count(t->soft, d, sizeof(d)),
		cli_format_count(t->concurrent, e, sizeof(e)));
	fprintf(stderr, "  evictions         %s (writebacks %s)\n",
		cli_format_count(t->evictions, a, sizeof(a)), cli_format_count(t->writebacks, b, sizeof(b)));
	if (o->local_bytes == 0)
		fprintf(stderr, "  peak resident     %s (local memory unlimited)\n",
			cli_format_size(t->peak_resident, a, sizeof(a)));
	else
		fprintf(stderr, "  peak resident     %s of %s local (-L)\n",
			cli_format_size(t->peak_resident, a, sizeof(a)),
			cli_format_size(o->local_bytes, b, sizeof(b)));
	fprintf(stderr, "  peak heap         %s of %s region (-M)\n",
		cli_format_size(t->peak_heap, a, sizeof(a)), cli_format_size(o->max_bytes, b, sizeof(b)));
	fprintf(stderr, "  records           %s written, %s dropped\n",
		cli_format_count(t->written, a, sizeof(a)), cli_format_count(t->dropped, b, sizeof(b)));
	/* a context whose stack was dropped (taken too late) holds no stack */
	uint64_t stacks = t->contexts >= t->late_stacks ? t->contexts - t->late_stacks : 0;
	char whose[96]; /* access samples (--mrc, --sample-accesses) have stacks too, and are not faults */
	if (t->access_samples)
		snprintf(whose, sizeof(whose), "for %s faults and %s access samples", cli_format_count(t->faults, b, sizeof(b)),
			 cli_format_count(t->access_samples, e, sizeof(e)));
	else
		snprintf(whose, sizeof(whose), "of %s faults", cli_format_count(t->faults, b, sizeof(b)));
	fprintf(stderr, "  stacks            %s %s (%s from perf samples); %s allocation events\n",
		cli_format_count(stacks, a, sizeof(a)), whose, cli_format_count(t->sampled_stacks, d, sizeof(d)),
		cli_format_count(t->alloc_events, c, sizeof(c)));
	if (t->pmu[0])
		fprintf(stderr, "  PMU context       %s\n", t->pmu);
	if (t->far[0])
		fprintf(stderr, "  far store         %s\n"
			"                    read %s pages in %s requests, wrote %s pages in %s batches; "
			"emulated delay %.1f ms\n",
			t->far, cli_format_count(t->far_read_pages, a, sizeof(a)), cli_format_count(t->far_reads, b, sizeof(b)),
			cli_format_count(t->far_write_pages, c, sizeof(c)), cli_format_count(t->far_writes, d, sizeof(d)),
			t->far_delay_ns / 1e6);
	if (t->prefetched || o->prefetch)
		fprintf(stderr, "  read-ahead        %s pages staged: %s hits, %s never used\n",
			cli_format_count(t->prefetched, a, sizeof(a)), cli_format_count(t->prefetch_hits, b, sizeof(b)),
			cli_format_count(t->prefetch_unused, c, sizeof(c)));
	if (t->side_dropped)
		cli_error("%s bytes of stacks, contexts or allocation records were lost (see records_dropped_reason "
			  "in stats.json)", cli_format_count(t->side_dropped, a, sizeof(a)));
}

/* The totals, after saying whether the trace is complete. */
static void print_totals_checked(const struct record_totals *t, const struct record_options *o,
				 const char *dir_shown)
{
	if (t->processes == 0) {
		cli_error("no process wrote a trace into %s: the trace is incomplete (did the runtime "
			  "start? see messages above)", dir_shown);
		return;
	}
	if (t->with_stats == 0) {
		cli_error("none of the %u traced processes left a readable stats.json: the trace is "
			  "incomplete", t->processes);
		return;
	}
	if (t->with_stats < t->processes)
		cli_error("%u of %u processes left no readable stats.json: the trace is incomplete",
			  t->processes - t->with_stats, t->processes);
	print_totals(t, o);
}

/* Says how the run went; returns how many processes wrote a trace. */
static unsigned print_summary(const struct record_options *o, const struct record_run *run,
			      const char *dir_shown, const char *dir)
{
	struct record_totals t;
	char count[32], quoted[PATH_MAX + 64];

	if (!o->quiet)
		describe_exit(o, run);
	totals_collect(&t, dir, o->quiet);
	if (!o->quiet)
		print_totals_checked(&t, o, dir_shown);
	if (t.dropped > 0)   /* even with -q: the trace is not what it claims to be */
		cli_error("WARNING: %s trace records were DROPPED: the trace is incomplete and fault "
			  "counts in reports are too low", cli_format_count(t.dropped, count, sizeof(count)));
	if (!o->quiet && t.processes > 0)
		fprintf(stderr, "next: faultline report %s\n",
			cli_shell_quote(dir_shown, quoted, sizeof(quoted)));
	return t.processes;
}

/* ---------------------------------------------------------------------------------------
 * The verb
 * ------------------------------------------------------------------------------------- */

/* Everything that must hold before anything is created or started. */
static int check_before_start(const struct record_options *o, char *library, size_t len)
{
	char path[PATH_MAX];

	if (find_command(o->command[0], path, sizeof(path)) < 0) {
		int error = errno;

		cli_error("cannot run '%s': %s", o->command[0], strerror(error));
		return exec_failure_status(error);
	}
	if (check_traceable(path, o->command[0]) < 0)
		return CLI_EXIT_USAGE;
	if (find_runtime_library(library, len) < 0 || check_userfaultfd() < 0)
		return CLI_EXIT_USAGE;
	return 0;
}

static void print_banner(const struct record_options *o, const char *dir_shown)
{
	char local[32], max[32], quoted[PATH_MAX + 64];

	if (o->quiet)
		return;
	cli_error("recording '%s' into %s (local %s, max %s, %s)", o->command[0],
		  cli_shell_quote(dir_shown, quoted, sizeof(quoted)),
		  o->local_bytes ? cli_format_size(o->local_bytes, local, sizeof(local)) : "unlimited",
		  cli_format_size(o->max_bytes, max, sizeof(max)), o->policy);
}

/* --far memcached: the items of the run are deleted from the servers (every process has exited). */
static void clean_far_store(const struct record_options *o, const char *dir)
{
	char err[512], line[1024], count[32];
	uint64_t deleted[FAR_CLEANUP_MAX_SERVERS], total = 0;
	unsigned servers;

	if (strncmp(o->far_spec, "memcached:", 10) != 0)
		return;
	if (far_cleanup_memcached(o->far_spec, dir, deleted, &servers, err, sizeof(err)) < 0) {
		cli_error("WARNING: the run's items could not all be deleted from memcached: %s (key prefixes "
			  "in %s/*/" FL_FILE_NAME_FAR_KEYS ")", err, dir);
		return;
	}
	size_t n = 0;
	for (unsigned i = 0; i < servers && n < sizeof(line); i++) {
		total += deleted[i];
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%" PRIu64, i ? ", " : "", deleted[i]);
	}
	if (!o->quiet && total)
		cli_error("deleted the run's %s items from memcached (per server, in --far order: %s)",
			  cli_format_count(total, count, sizeof(count)), line);
}

static int record_run_parsed(const struct record_options *o)
{
	char library[PATH_MAX], dir_shown[PATH_MAX], dir[PATH_MAX];
	struct child_env env;
	struct record_run run;
	int rc;

	rc = check_before_start(o, library, sizeof(library));
	if (rc != 0)
		return rc;
	if (output_dir_name(o, dir_shown, sizeof(dir_shown)) < 0 ||
	    prepare_output_dir(dir_shown, o, dir) < 0)
		return CLI_EXIT_USAGE;
	if (child_env_build(o, dir, library, &env) < 0) {
		cli_error("building the environment: %s (or more than %d variables)", strerror(ENOMEM), CHILD_ENV_MAX);
		return 1;
	}
	print_banner(o, dir_shown);
	struct timespec started;
	clock_gettime(CLOCK_REALTIME, &started);
	rc = run_command(o, &env, &run);
	child_env_free(&env);
	if (rc != 0)
		return rc;
	record_binaries(dir, o->archive, &started, o->quiet); /* says why when it fails */
	clean_far_store(o, dir);
	unsigned traced = print_summary(o, &run, dir_shown, dir);
	rc = exit_status_of(run.status);
	if (traced == 0 && o->quiet) /* without -q the summary said so */
		cli_error("no process wrote a trace into %s (the runtime did not start)", dir_shown);
	/* a program that ran untraced and exited 0 is no success of record's */
	return rc == 0 && traced == 0 ? RECORD_EXIT_UNTRACED : rc;
}

int cmd_record(int argc, char **argv)
{
	struct record_options o;
	char err[512];

	if (record_parse_args(argc, argv, &o, err, sizeof(err)) < 0) {
		return cli_usage_error("record", "%s", err);
	}
	if (o.help) {
		record_usage();
		return 0;
	}
	if (far_spec_check(o.far, o.far_spec, sizeof(o.far_spec), err, sizeof(err)) < 0) {
		cli_error("record: --far: %s", err); /* a path or server that cannot be used */
		return CLI_EXIT_USAGE;
	}
	if (o.pmu && check_pmu(o.pmu, true, err, sizeof(err)) < 0) {
		cli_error("record: --pmu: %s", err);
		return CLI_EXIT_USAGE;
	}
	return record_run_parsed(&o);
}
