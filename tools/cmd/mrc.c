/* mrc.c: `faultline mrc` — predicted refaults for every local-memory size, from one recording made
 * with `record --mrc` (a miss-ratio curve: analyze/mrc.c builds it, render/mrc_output.c prints it).
 * Exit 0, 1 when the recording is missing, corrupt or has no --mrc data, 2 on a usage error. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mrc.h"
#include "mrc_output.h"
#include "recording_arg.h"
#include "trace_reader.h"

#define MRC_MAX_AT 64

struct mrc_cmd {
	const char *dir;
	enum mrc_format format;
	enum mrc_policy policy;
	uint64_t at[MRC_MAX_AT];
	size_t nat;
};

static void mrc_usage(FILE *out)
{
	fputs("usage: faultline mrc [DIR] [--policy clock|fifo|lru] [--format table|csv|json] [--at SIZE]...\n"
	      "\n"
	      "Predicts how many refaults the recorded program would take at each local-memory size (-L),\n"
	      "from one run recorded with `faultline record --mrc` (at any -L, best without one): the\n"
	      "runtime followed a spatial sample of the pages (1 in 2 to start with, at most 2048 pages,\n"
	      "by a hash of the page number: SHARDS) and saw each re-touch. The runtime's own eviction policy is replayed on\n"
	      "those accesses with local memory scaled down by the sampling rate (a miniature\n"
	      "simulation), each simulated refault standing for 1/rate; with --policy lru a reuse\n"
	      "refaults when more distinct pages were touched since the page's previous use than -L\n"
	      "holds (reuse distances). Rows: every power of two from 1 MiB to the first at or above\n"
	      "the peak of local memory, the peak and its half, quarter and eighth, and each --at\n"
	      "size (whole MiB shown without decimals, others with two). lower and upper\n"
	      "bound the prediction at about 95 % for the sampling error (not for the model's).\n"
	      "\n"
	      "  DIR                  the recording (default: the newest faultline-* directory here)\n"
	      "      --policy P       the replacement predicted: clock (default, as record's default),\n"
	      "                       fifo (record --policy fifo) or lru\n"
	      "      --format FMT     table (default), csv (local_bytes,predicted_refaults,lower,upper)\n"
	      "                       or json\n"
	      "      --at SIZE        also predict at this size (repeatable; 64 = MiB, 512K, 2G)\n"
	      "  -h, --help           this help\n"
	      "\n"
	      "Exit status 1 when the recording is missing or corrupt or was not made with --mrc.\n", out);
}

enum { OPT_FORMAT, OPT_AT, OPT_POLICY };

static int mrc_option(void *ctx, int id, const char *value, char *err, size_t errlen)
{
	static const char *const formats[] = { "table", "csv", "json" };
	struct mrc_cmd *c = ctx;
	uint64_t bytes;
	int choice;

	if (id == OPT_POLICY) {
		if (mrc_policy_parse(value, &c->policy) < 0) {
			snprintf(err, errlen, "unknown policy '%s' (clock, fifo or lru)", value);
			return -1;
		}
		return 0;
	}
	if (id == OPT_FORMAT) {
		if ((choice = cli_pick(value, formats, 3, err, errlen)) < 0)
			return -1;
		c->format = (enum mrc_format)choice;
		return 0;
	}
	if (cli_parse_size(value, 1048576, &bytes, err, errlen) < 0)
		return -1;
	if (bytes < 4096) {
		snprintf(err, errlen, "'%s' is less than one page", value);
		return -1;
	}
	if (c->nat == MRC_MAX_AT) {
		snprintf(err, errlen, "at most %d --at sizes", MRC_MAX_AT);
		return -1;
	}
	c->at[c->nat++] = bytes;
	return 0;
}

int cmd_mrc(int argc, char **argv)
{
	static const struct cli_opt opts[] = {
		{ NULL, "--format", CLI_VALUE, OPT_FORMAT },
		{ NULL, "--at", CLI_VALUE, OPT_AT },
		{ NULL, "--policy", CLI_VALUE, OPT_POLICY },
	};
	struct mrc_cmd c;
	memset(&c, 0, sizeof(c));
	struct cli_verb verb = { "mrc", mrc_usage, opts, sizeof(opts) / sizeof(opts[0]), mrc_option, NULL, &c.dir, &c };
	struct fl_recording *rec;
	struct mrc_model model;
	char newest[4096], err[1024];
	int rc = cli_parse_verb(&verb, argc, argv);

	if (rc != 0)
		return rc < 0 ? 0 : rc;
	c.dir = recording_arg_dir("mrc", c.dir, newest, sizeof(newest));
	if (!c.dir)
		return 1;
	/* a line on a terminal while it works (the phases, with their time), erased before any output */
	struct report_progress progress;
	if (!(rec = recording_arg_open("mrc", c.dir, &progress))) /* mrc_build walks the fault streams */
		return 1;
	report_progress_phase(&progress, "gathering the sampled accesses", 0);
	if (mrc_build(rec, &model, err, sizeof(err)) < 0) {
		report_progress_stop(&progress);
		cli_error("mrc: %s", err);
		fl_recording_close(rec);
		return 1;
	}
	report_progress_phase(&progress, "simulating each size", 0);
	size_t nsizes = 0;
	uint64_t *sizes = mrc_sizes(&model, c.at, c.nat, &nsizes);
	struct mrc_row *rows = sizes ? calloc(nsizes + 1, sizeof(*rows)) : NULL;
	rc = 1;
	if (!rows) {
		report_progress_stop(&progress);
		cli_error("mrc: out of memory");
		goto out;
	}
	for (size_t i = 0; i < nsizes; i++) {
		rows[i] = mrc_predict(&model, sizes[i], c.policy);
		if (isnan(rows[i].predicted)) {
			report_progress_stop(&progress);
			cli_error("mrc: out of memory (simulating %s at %llu bytes)", mrc_policy_name(c.policy),
				  (unsigned long long)sizes[i]);
			goto out;
		}
	}
	report_progress_stop(&progress);
	if (mrc_print(&model, c.policy, rows, nsizes, c.dir, c.format, stdout) < 0)
		cli_error("mrc: writing the output: %s", strerror(errno));
	else
		rc = 0;
out:
	report_progress_stop(&progress);
	free(rows);
	free(sizes);
	mrc_free(&model);
	fl_recording_close(rec);
	return rc;
}
