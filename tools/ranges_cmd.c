/* ranges_cmd.c: `faultline ranges` — the hot address ranges of a recording's faults, with their
 * estimated fault counts and guaranteed bounds, the allocation sites and mappings inside them,
 * and optionally the whole RAP tree. The work is ranges.c's (ranges.h); this file parses options,
 * opens the recording and prints. Exit 0, 1 on an unreadable recording, 2 on a usage error. */
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
	      "took those faults, and the mappings it overlaps.\n"
	      "\n"
	      "Counts come from the runtime's online RAP tree, DIR/PID/ranges.rap, when it is present\n"
	      "and valid (it counts every fault, whatever --sample did to stacks); otherwise, or with\n"
	      "--from-trace or a --kind other than all, from a tree built from the fault records. The\n"
	      "header of each process says which.\n"
	      "\n"
	      "  DIR                  the recording (default: the newest faultline-* directory here)\n"
	      "      --eps E          error fraction of trees built from the trace (default 0.01);\n"
	      "                       the online tree keeps the runtime's (FAULTLINE_RAP_EPS)\n"
	      "      --phi P          hot threshold, a fraction of the faults (default 0.05)\n"
	      "      --kind KIND      all (default), first-touch, refault, soft, concurrent, or a\n"
	      "                       comma-separated list (reads the fault records)\n"
	      "      --pid PID        only this process (all its exec images)\n"
	      "      --tree           also print the tree, one node per line, indented by depth\n"
	      "      --format F       text (default), csv (one row per range) or json\n"
	      "      --from-trace     ignore ranges.rap: rebuild the tree from the fault records\n"
	      "      --no-merge       one range per tree node (default: touching hot nodes are joined)\n"
	      "      --no-symbols     name allocation sites by binary+offset, without debug info\n"
	      "      --sites N        allocation sites listed per range (default 3)\n"
	      "  -h, --help           this help\n", out);
}

static int parse_fraction_option(const char *name, const char *value, double min_excl, double max_incl, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(value, &end);
	if (errno || end == value || *end || !(v > min_excl && v <= max_incl)) {
		cli_error("ranges: %s: '%s' is not a number in (%g, %g]", name, value, min_excl, max_incl);
		return -1;
	}
	*out = v;
	return 0;
}

/* Parses argv; returns -1 to exit 0 (help shown), 0 to go on, or CLI_EXIT_USAGE. */
static int ranges_parse(int argc, char **argv, struct ranges_cmd *c)
{
	char err[256];
	bool options_done = false;

	memset(c, 0, sizeof(*c));
	ranges_options_init(&c->o);
	c->format = RANGES_TEXT;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *value;
		uint64_t number;
		int rc;

		if (options_done || arg[0] != '-' || arg[1] == '\0') {
			if (c->dir) {
				cli_error("ranges: one recording directory at most: '%s' and '%s' given", c->dir, arg);
				return CLI_EXIT_USAGE;
			}
			c->dir = arg;
			continue;
		}
		if (strcmp(arg, "--") == 0) {
			options_done = true;
			continue;
		}
		if (cli_is_flag(arg, "-h", "--help")) {
			ranges_usage(stdout);
			return -1;
		}
		if (cli_is_flag(arg, NULL, "--tree")) {
			c->tree = true;
			continue;
		}
		if (cli_is_flag(arg, NULL, "--from-trace")) {
			c->o.from_trace = true;
			continue;
		}
		if (cli_is_flag(arg, NULL, "--no-merge")) {
			c->o.coalesce = false;
			continue;
		}
		if (cli_is_flag(arg, NULL, "--no-symbols")) {
			c->o.symbolize = false;
			continue;
		}
		if ((rc = cli_option_value(argc, argv, &i, NULL, "--eps", &value, err, sizeof(err))) != 0) {
			if (rc < 0) {
				cli_error("ranges: --eps: %s", err);
				return CLI_EXIT_USAGE;
			}
			if (parse_fraction_option("--eps", value, 0, 0.5, &c->o.eps) < 0)
				return CLI_EXIT_USAGE;
			continue;
		}
		if ((rc = cli_option_value(argc, argv, &i, NULL, "--phi", &value, err, sizeof(err))) != 0) {
			if (rc < 0) {
				cli_error("ranges: --phi: %s", err);
				return CLI_EXIT_USAGE;
			}
			if (parse_fraction_option("--phi", value, 0, 1, &c->o.phi) < 0)
				return CLI_EXIT_USAGE;
			continue;
		}
		if ((rc = cli_option_value(argc, argv, &i, NULL, "--kind", &value, err, sizeof(err))) != 0) {
			if (rc < 0 || ranges_parse_kinds(value, &c->o.kinds, err, sizeof(err)) < 0) {
				cli_error("ranges: --kind: %s", err);
				return CLI_EXIT_USAGE;
			}
			continue;
		}
		if ((rc = cli_option_value(argc, argv, &i, NULL, "--pid", &value, err, sizeof(err))) != 0) {
			if (rc < 0 || cli_parse_uint(value, 1, INT32_MAX, &number, err, sizeof(err)) < 0) {
				cli_error("ranges: --pid: %s", err);
				return CLI_EXIT_USAGE;
			}
			c->o.pid = (uint32_t)number;
			continue;
		}
		if ((rc = cli_option_value(argc, argv, &i, NULL, "--sites", &value, err, sizeof(err))) != 0) {
			if (rc < 0 || cli_parse_uint(value, 0, 1000, &number, err, sizeof(err)) < 0) {
				cli_error("ranges: --sites: %s", err);
				return CLI_EXIT_USAGE;
			}
			c->o.max_sites = (unsigned)number;
			continue;
		}
		if ((rc = cli_option_value(argc, argv, &i, NULL, "--format", &value, err, sizeof(err))) != 0) {
			if (rc < 0) {
				cli_error("ranges: --format: %s", err);
				return CLI_EXIT_USAGE;
			}
			if (strcmp(value, "text") == 0)
				c->format = RANGES_TEXT;
			else if (strcmp(value, "csv") == 0)
				c->format = RANGES_CSV;
			else if (strcmp(value, "json") == 0)
				c->format = RANGES_JSON;
			else {
				cli_error("ranges: --format: '%s' is not text, csv or json", value);
				return CLI_EXIT_USAGE;
			}
			continue;
		}
		cli_error("ranges: unknown option '%s' (see faultline ranges --help)", arg);
		return CLI_EXIT_USAGE;
	}
	if (c->tree && c->format == RANGES_CSV) {
		cli_error("ranges: --tree is for the text and json formats (csv has one row per range)");
		return CLI_EXIT_USAGE;
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
	if (fl_recording_open(c.dir, &rec, err, sizeof(err)) < 0) {
		cli_error("ranges: %s", err);
		return 1;
	}
	recording_arg_warnings(rec);
	if (ranges_compute(rec, &c.o, &res, err, sizeof(err)) < 0) {
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
