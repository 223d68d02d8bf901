/* ranges_cmd.c: `faultline ranges` — the hot address ranges of a recording's faults, with their
 * estimated fault counts and guaranteed bounds, the allocation sites and mappings inside them,
 * and optionally the whole RAP tree. The work is ranges.c's (ranges.h); this file parses options,
 * opens the recording (streamed when it has the common clean shape: memory does not grow with the
 * faults) and prints. Exit 0, 1 on an unreadable recording, 2 on a usage error. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ranges.h"
#include "trace_reader.h"
#include "recording_arg.h"

struct ranges_cmd {
	const char *dir;
	struct ranges_options o;
	enum ranges_format format;
	bool tree;
};

static void ranges_usage(FILE *out)
{
	fputs("usage: faultline ranges [DIR] [--eps E] [--phi P] [--kind KIND] [--pid PID] [--tree]\n"
	      "                        [--format text|csv|json] [--from-trace] [--no-merge]\n"
	      "                        [--no-symbols] [--sites N]\n"
	      "\n"
	      "Prints the hot address ranges of the recorded faults (page granularity): a range is hot\n"
	      "when at least PHI of the faults fall inside it and not inside a smaller hot range. For\n"
	      "each: start, end, the estimated faults with a guaranteed lower and upper bound on the\n"
	      "true count, the percent of all faults, the exclusive percent (without the hot ranges\n"
	      "nested inside), the fault records inside it, the allocation sites whose allocations\n"
	      "took those faults (named as at the allocations' time: a site allocating before and\n"
	      "after its code was remapped is two sites), and the mappings it overlaps while its\n"
	      "faults happened (every maps snapshot of that time, each mapping once).\n"
	      "\n"
	      "Counts come from the runtime's online RAP tree, DIR/PID/ranges.rap, when it is present\n"
	      "and valid (it counts every fault, whatever --sample did to stacks); otherwise, or with\n"
	      "--from-trace or a --kind other than all, from a tree built from the fault records. The\n"
	      "header of each process says which.\n"
	      "\n"
	      "  DIR                  the recording (default: the newest faultline-* directory here)\n"
	      "      --eps E          error fraction of trees built from the trace (default 0.01,\n"
	      "                       at least 1e-5);\n"
	      "                       the online tree keeps the runtime's (FAULTLINE_RAP_EPS)\n"
	      "      --phi P          hot threshold, a fraction of the faults (default 0.05)\n"
	      "      --kind KIND      all (default: every fault), first-touch, refault, soft,\n"
	      "                       concurrent, access (record --mrc's or --sample-accesses'\n"
	      "                       samples, never in all), or a comma-separated list (reads the\n"
	      "                       fault records)\n"
	      "      --pid PID        only this process (all its exec images)\n"
	      "      --tree           also print the tree, one node per line, indented by depth\n"
	      "      --format F       text (default), csv (one row per range) or json\n"
	      "      --from-trace     ignore ranges.rap: rebuild the tree from the fault records\n"
	      "      --no-merge       one range per tree node (default: touching hot nodes are joined)\n"
	      "      --no-symbols     name allocation sites by binary+offset, without debug info\n"
	      "      --sites N        allocation sites listed per range (default 3)\n"
	      "  -h, --help           this help\n", out);
}

/* VALUE as a number in (min_excl, max_incl]; -1 with a reason in err. */
/* The smallest --eps: the trace's trees (48-bit addresses, 4 KiB granules, branching 4, the
 * library's default budget) then need about 2^26 nodes, the most lib/rap.c can index. */
#define RANGES_EPS_MIN 1e-5

static int parse_fraction(const char *value, double min_excl, double max_incl, double *out, char *err, size_t errlen)
{
	char *end;
	errno = 0;
	double v = strtod(value, &end);
	if (errno || end == value || *end || !(v > min_excl && v <= max_incl)) {
		snprintf(err, errlen, "'%s' is not a number in (%g, %g]", value, min_excl, max_incl);
		return -1;
	}
	*out = v;
	return 0;
}

enum { OPT_TREE, OPT_FROM_TRACE, OPT_NO_MERGE, OPT_NO_SYMBOLS, OPT_EPS, OPT_PHI, OPT_KIND, OPT_PID, OPT_SITES,
       OPT_FORMAT };

static int ranges_option(void *ctx, int id, const char *value, char *err, size_t errlen)
{
	static const char *const formats[] = { "text", "csv", "json" };
	static const enum ranges_format format_of[] = { RANGES_TEXT, RANGES_CSV, RANGES_JSON };
	struct ranges_cmd *c = ctx;
	uint64_t number;
	int choice;

	switch (id) {
	case OPT_TREE: c->tree = true; return 0;
	case OPT_FROM_TRACE: c->o.from_trace = true; return 0;
	case OPT_NO_MERGE: c->o.coalesce = false; return 0;
	case OPT_NO_SYMBOLS: c->o.symbolize = false; return 0;
	case OPT_EPS:
		if (parse_fraction(value, 0, 0.5, &c->o.eps, err, errlen) < 0)
			return -1;
		if (c->o.eps < RANGES_EPS_MIN) { /* the tree would need more nodes than it can index */
			snprintf(err, errlen, "'%s': below %g, a tree would need more nodes than it can have", value,
				 RANGES_EPS_MIN);
			return -1;
		}
		return 0;
	case OPT_PHI: return parse_fraction(value, 0, 1, &c->o.phi, err, errlen);
	case OPT_KIND: return ranges_parse_kinds(value, &c->o.kinds, err, errlen);
	case OPT_PID:
		return cli_parse_pid(value, &c->o.pid, err, errlen);
	case OPT_SITES:
		if (cli_parse_uint(value, 0, 1000, &number, err, errlen) < 0)
			return -1;
		c->o.max_sites = (unsigned)number;
		return 0;
	default: /* OPT_FORMAT */
		if ((choice = cli_pick(value, formats, 3, err, errlen)) < 0)
			return -1;
		c->format = format_of[choice];
		return 0;
	}
}

/* Parses argv; returns -1 to exit 0 (help shown), 0 to go on, or CLI_EXIT_USAGE. */
static int ranges_parse(int argc, char **argv, struct ranges_cmd *c)
{
	static const struct cli_opt opts[] = {
		{ NULL, "--tree", CLI_FLAG, OPT_TREE },
		{ NULL, "--from-trace", CLI_FLAG, OPT_FROM_TRACE },
		{ NULL, "--no-merge", CLI_FLAG, OPT_NO_MERGE },
		{ NULL, "--no-symbols", CLI_FLAG, OPT_NO_SYMBOLS },
		{ NULL, "--eps", CLI_VALUE, OPT_EPS },
		{ NULL, "--phi", CLI_VALUE, OPT_PHI },
		{ NULL, "--kind", CLI_VALUE, OPT_KIND },
		{ NULL, "--pid", CLI_VALUE, OPT_PID },
		{ NULL, "--sites", CLI_VALUE, OPT_SITES },
		{ NULL, "--format", CLI_VALUE, OPT_FORMAT },
	};
	struct cli_verb verb = { "ranges", ranges_usage, opts, sizeof(opts) / sizeof(opts[0]), ranges_option, NULL,
				 &c->dir, c };
	int rc;

	memset(c, 0, sizeof(*c));
	ranges_options_init(&c->o);
	c->format = RANGES_TEXT;
	if ((rc = cli_parse_verb(&verb, argc, argv)) != 0)
		return rc;
	if (c->tree && c->format == RANGES_CSV) {
		return cli_usage_error("ranges", "--tree is for the text and json formats (csv has one row per range)");
	}
	return 0;
}

int cmd_ranges(int argc, char **argv)
{
	struct ranges_cmd c;
	struct fl_recording *rec;
	struct ranges_result res;
	char newest[4096], err[1024];
	int rc = ranges_parse(argc, argv, &c);

	if (rc != 0)
		return rc < 0 ? 0 : rc;
	c.dir = recording_arg_dir("ranges", c.dir, newest, sizeof(newest));
	if (!c.dir)
		return 1;
	/* a line on a terminal while it works (the phases, with their time), erased before any output */
	struct report_progress progress;
	if (!(rec = recording_arg_open("ranges", c.dir, &progress))) /* ranges_compute walks the fault streams */
		return 1;
	report_progress_phase(&progress, "counting ranges", 0);
	int computed = ranges_compute(rec, &c.o, &res, err, sizeof(err));
	report_progress_stop(&progress);
	if (computed < 0) {
		cli_error("ranges: %s", err);
		fl_recording_close(rec);
		return 1;
	}
	for (size_t i = 0; i < res.nwarnings; i++)
		cli_error("warning: %s", res.warnings[i]);
	rc = 0;
	if (ranges_print(&res, &c.o, c.dir, c.format, c.tree, stdout) < 0) {
		cli_error("ranges: writing the output: %s", strerror(errno));
		rc = 1;
	}
	ranges_result_free(&res);
	fl_recording_close(rec);
	return rc;
}
