/* record_options.c: `faultline record`'s options: every option in every spelling, checked values,
 * the help text (record_parse_args, record_usage; record.h). */
#include "record_options.h"

#define RECORD_PAGE_BYTES 4096
#define RECORD_MAX_SAMPLE 1000000000u
#define RECORD_TIMELINE_MS 20  /* --timeline default: 50 samples a second */

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cli.h"
#include "far_spec.h"
#include "faultline/env.h"
#include "faultline/pmu_events.h"

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
	      "                         (default: faultline-<command>-<pid>), created with any\n"
	      "                         missing parent directories\n"
	      "      --force            reuse a non-empty output directory: an earlier recording's\n"
	      "                         per-process subdirectories (named by pid, holding its\n"
	      "                         meta.json and only its files) and the files visualize made\n"
	      "                         from it are removed, nothing else\n"
	      "  -s, --sample N         record a stack for 1 fault in N (default 1: every fault; 0:\n"
	      "                         no fault stacks and so no PMU values, allocation sites kept)\n"
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
	      "      --fill-ahead N     on a first-touch write that walks forward over fresh memory,\n"
	      "                         zero-fill up to N more pages of the allocation at once (at\n"
	      "                         most 64 and 1/16 of -L; default 0 = off): fewer faults, but\n"
	      "                         those pages have no fault record and no stack (stats.json\n"
	      "                         filled_ahead_pages)\n"
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
	      "                         sparsely; without -L is best); and its cost is held to\n"
	      "                         the budget below (beyond, the rate drops too)\n"
	      "      --mrc-rate N       --mrc, sampling 1 page in N to start with (default 2)\n"
	      "      --mrc-gap N        --mrc, re-arming a touched page once about N other pages\n"
	      "                         were touched (default 32): larger is cheaper, and misses\n"
	      "                         reuses nearer than N pages (or M pages when 1 page in M\n"
	      "                         is sampled, M > N)\n"
	      "      --mrc-budget N     --mrc, at most about N trial unmaps of sample pages (each\n"
	      "                         a move, and a fault at the next touch) per second of the\n"
	      "                         program's own CPU time, but never fewer than 32 pages\n"
	      "                         (default 4000: about 0.4 s of CPU a second of the program's\n"
	      "                         here; small programs pay more, for the floor's pages);\n"
	      "                         0 = no bound, every touch of the sample is seen\n"
	      "      --mrc-stacks       --mrc, the sample's re-touches (access samples) take their\n"
	      "                         stacks too, as faults do; without it they go without (the\n"
	      "                         curve needs only their page and time)\n"
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
	      "  -q, --quiet            no banner, no summary, no runtime notes (errors are said)\n"
	      "  -h, --help             show this help\n"
	      "\n"
	      "SIZE is a number (decimals allowed) with an optional binary unit B, K, M, G, T (also\n"
	      "KB, KiB, MB, MiB, ...: all binary);\n"
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
	o->mrc_budget = FL_PROBE_MRC_BUDGET_DEFAULT;
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
	return parse_unsigned(v, 0, RECORD_MAX_SAMPLE, &o->sample, err, errlen);
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
int check_pmu(const char *v, bool probe, char *err, size_t errlen)
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

static int apply_fill_ahead(struct record_options *o, const char *v, char *err, size_t errlen)
{
	return parse_unsigned(v, 0, 64, &o->fill_ahead, err, errlen);
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

static int apply_mrc_budget(struct record_options *o, const char *v, char *err, size_t errlen)
{
	return parse_unsigned(v, 0, 100000000, &o->mrc_budget, err, errlen);
}

static int apply_sample_accesses_rate(struct record_options *o, const char *v, char *err, size_t errlen)
{
	return parse_unsigned(v, 1, 1000000, &o->sample_accesses, err, errlen);
}

/* The options, and what each does with its value. */
enum { OPT_HELP = 100, OPT_QUIET, OPT_FORCE, OPT_MRC, OPT_MRC_STACKS, OPT_SAMPLE_ACCESSES, OPT_ARCHIVE };

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
	{ NULL, "--fill-ahead", apply_fill_ahead },
	{ NULL, "--timeline", apply_timeline },
	{ NULL, "--timeline-every", apply_timeline_every },
	{ NULL, "--mrc-rate", apply_mrc_rate },
	{ NULL, "--mrc-gap", apply_mrc_gap },
	{ NULL, "--mrc-budget", apply_mrc_budget },
	{ NULL, "--sample-accesses-rate", apply_sample_accesses_rate },
};
#define RECORD_NVALUED (sizeof(record_value_options) / sizeof(record_value_options[0]))

/* The parser's table: the flags, then the valued options (id = index in record_value_options). */
#define RECORD_NFLAGS 7
static struct cli_opt record_opts[RECORD_NFLAGS + RECORD_NVALUED] = {
	{ "-h", "--help", CLI_FLAG, OPT_HELP },
	{ "-q", "--quiet", CLI_FLAG, OPT_QUIET },
	{ NULL, "--force", CLI_FLAG, OPT_FORCE },
	{ NULL, "--mrc", CLI_FLAG, OPT_MRC },
	{ NULL, "--mrc-stacks", CLI_FLAG, OPT_MRC_STACKS },
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
	case OPT_MRC_STACKS: o->mrc_stacks = true; return 0;
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
	if (o->fill_ahead && o->mrc) {
		snprintf(err, errlen, "--fill-ahead and --mrc cannot go together: pages filled ahead have no fault, so the "
			 "miss-ratio curve would never see them");
		return -1;
	}
	if (o->mrc_stacks && !o->mrc) {
		snprintf(err, errlen, "--mrc-stacks gives stacks to the access samples of --mrc: it needs --mrc");
		return -1;
	}
	if (o->keep_far && strncmp(o->far, "file:", 5) != 0) {
		snprintf(err, errlen, "--keep-far keeps the file store's files: it needs --far file:DIR (the far store is %s)",
			 o->far);
		return -1;
	}
	return record_check_sizes(o, err, errlen);
}

