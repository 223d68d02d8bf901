/* diff.c: `faultline diff A B` — did my change help? The faults of two recordings side by side per
 * callsite, function or allocation site (analyze/diff.c, over report_build of each), as a table, CSV
 * or JSON (render/diff_output.c), and a differential flame graph (render/diff_flame.c).
 *
 * Exit status: 0; 1 when a recording cannot be read, memory runs out or an output cannot be written;
 * 2 on a usage error. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "diff.h"
#include "diff_render.h"
#include "flamegraph.h"
#include "report.h"
#include "stats_json.h"
#include "faultline/record_schema.h"

static void diff_usage(FILE *out)
{
	fputs("usage: faultline diff A B [options]\n"
	      "\n"
	      "Compares the faults of two recordings (before and after a change: another -L, eviction policy,\n"
	      "data layout or program version). Per callsite (as faultline report names it), function or\n"
	      "allocation site: faults in A and in B, delta = B - A and relative = delta / A, sorted by |delta|.\n"
	      "Rows are matched by function and file:line, never by address, so rebuilt binaries compare.\n"
	      "\n"
	      "  A, B                 the two recordings (directories written by faultline record)\n"
	      "      --by KEY         rows: callsite (default), function, alloc (allocation site)\n"
	      "      --kind KIND      all (default), first-touch, refault, soft, concurrent\n"
	      "      --top N          rows shown (default 20; 0: every row)\n"
	      "      --format FMT     table (default), csv, json; csv has the columns\n"
	      "                       " DIFF_CSV_HEADER "\n"
	      "                       (relative_percent is empty for a row new in B)\n"
	      "      --flame FILE     also write a differential flame graph SVG: B's stacks, widths B's faults,\n"
	      "                       red where B has more faults than A, blue where fewer (as flamegraph.pl\n"
	      "                       colours difffolded.pl's output), the tooltips with A, B and the delta\n"
	      "      --folded FILE    also write the stacks in difffolded.pl's format: \"a;b;c A B\"\n"
	      "      --skip REGEX     also skip frames matching it when choosing callsites (as report; repeatable)\n"
	      "      --no-skip        drop the default skip list\n"
	      "  -h, --help           this help\n"
	      "\n"
	      "example: faultline diff faultline-prog-before faultline-prog-after --kind refault --flame diff.svg\n", out);
}

#define usage_error(...) cli_usage_error("diff", __VA_ARGS__)

static const char *const by_names[] = { "callsite", "function", "alloc" };
static const char *const kind_names[] = { "all", "first-touch", "refault", "soft", "concurrent" };
static const char *const format_names[] = { "table", "csv", "json" };
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

enum { OPT_BY, OPT_KIND, OPT_TOP, OPT_FORMAT, OPT_FLAME, OPT_FOLDED, OPT_SKIP, OPT_NO_SKIP };

struct diff_options {
	const char *dirs[2];
	size_t ndirs;
	int by, kind;
	uint64_t top;
	enum diff_format format;
	const char *flame, *folded;
	struct report_options ro;  /* what each side's report_build is given */
};

static int diff_option(void *ctx, int id, const char *value, char *err, size_t errlen)
{
	struct diff_options *o = ctx;
	uint64_t number;
	int choice;

	switch (id) {
	case OPT_BY:
		if ((choice = cli_pick(value, by_names, COUNT(by_names), err, errlen)) < 0)
			return -1;
		o->by = choice;
		return 0;
	case OPT_KIND:
		if ((choice = cli_pick(value, kind_names, COUNT(kind_names), err, errlen)) < 0)
			return -1;
		o->kind = choice;
		return 0;
	case OPT_FORMAT:
		if ((choice = cli_pick(value, format_names, COUNT(format_names), err, errlen)) < 0)
			return -1;
		o->format = (enum diff_format)choice;
		return 0;
	case OPT_TOP:
		if (cli_parse_uint(value, 0, UINT32_MAX, &number, err, errlen) < 0)
			return -1;
		o->top = number;
		return 0;
	case OPT_FLAME: o->flame = value; return 0;
	case OPT_FOLDED: o->folded = value; return 0;
	case OPT_NO_SKIP: o->ro.default_skip = false; return 0;
	default: /* OPT_SKIP */
		return cli_append_value(&o->ro.skip, &o->ro.nskip, value, err, errlen);
	}
}

static int diff_operand(void *ctx, const char *arg, char *err, size_t errlen)
{
	struct diff_options *o = ctx;

	if (o->ndirs == 2) {
		snprintf(err, errlen, "unexpected argument '%s': diff compares two recordings, A and B", arg);
		return -1;
	}
	o->dirs[o->ndirs++] = arg;
	return 0;
}

/* 0 to run, -1 after --help, CLI_EXIT_USAGE after the message. */
static int diff_parse(int argc, char **argv, struct diff_options *o)
{
	static const struct cli_opt opts[] = {
		{ NULL, "--by", CLI_VALUE, OPT_BY },
		{ NULL, "--kind", CLI_VALUE, OPT_KIND },
		{ NULL, "--top", CLI_VALUE, OPT_TOP },
		{ NULL, "--format", CLI_VALUE, OPT_FORMAT },
		{ NULL, "--flame", CLI_VALUE, OPT_FLAME },
		{ NULL, "--folded", CLI_VALUE, OPT_FOLDED },
		{ NULL, "--skip", CLI_VALUE, OPT_SKIP },
		{ NULL, "--no-skip", CLI_FLAG, OPT_NO_SKIP },
	};
	struct cli_verb verb = { "diff", diff_usage, opts, COUNT(opts), diff_option, diff_operand, NULL, o };
	struct callsite_skip check;
	char err[512];
	int rc;

	memset(o, 0, sizeof(*o));
	o->top = 20;
	o->ro.default_skip = true;
	rc = cli_parse_verb(&verb, argc, argv);
	if (rc == 0 && o->ndirs != 2)
		rc = usage_error("give two recordings: faultline diff A B");
	if (rc == 0 && callsite_skip_init(&check, o->ro.default_skip, o->ro.skip, o->ro.nskip, err, sizeof(err)) < 0)
		rc = usage_error("%s", err);
	else if (rc == 0)
		callsite_skip_free(&check);
	o->ro.by = o->by == 0 ? REPORT_BY_CALLSITE : o->by == 1 ? REPORT_BY_FUNCTION : REPORT_BY_ALLOC;
	o->ro.kind = (unsigned)o->kind;
	o->ro.to_ns = UINT64_MAX;
	o->ro.format = REPORT_FORMAT_CSV;
	return rc;
}

/* ----------------------------------------------------------------- one side */

static void collect_warning(void *ctx, const char *message)
{
	report_warn(ctx, "%s", message);
}

#define SIDE_HOLD (-2) /* a streamed side must be built again on the held recording */

/* Opens DIR (streamed when STREAM and the recording and options allow) and builds its report into
 * R. 0, 1 after the message, or SIDE_HOLD. */
static int side_open_once(struct report *r, const struct report_options *ro, const char *dir, bool stream)
{
	char err[1024];

	memset(r, 0, sizeof(*r));
	r->o = ro;
	report_progress_start(&r->progress, "diff", true); /* on a terminal: a line while it reads and counts */
	report_progress_phase(&r->progress, "reading the recording", 0);
	r->streamed = stream && !ro->locality && ro->time_axis == FL_TIME_WALL && fl_recording_open_stream(dir, &r->rec) == 0;
	if (!r->streamed && fl_recording_open(dir, &r->rec, err, sizeof(err)) < 0) {
		report_progress_stop(&r->progress);
		cli_error("diff: %s", err);
		return 1;
	}
	if (r->rec->nwarnings)
		report_progress_stop(&r->progress); /* the warnings' lines are not to be erased */
	for (size_t i = 0; i < r->rec->nwarnings; i++)
		cli_error("diff: warning: %s", r->rec->warnings[i]);
	if (fault_clock_init(&r->clock, r->rec, ro->time_axis) < 0) {
		report_progress_stop(&r->progress);
		cli_error("diff: out of memory");
		return 1;
	}
	if (callsite_skip_init(&r->skip, ro->default_skip, ro->skip, ro->nskip, err, sizeof(err)) < 0 ||
	    !(r->callsites = callsite_table_new(r->rec, &r->skip, collect_warning, &r->warnings)) ||
	    report_build(r, err, sizeof(err)) < 0) {
		if (r->streamed && (r->hold || r->stream_error[0]))
			return SIDE_HOLD;
		report_progress_stop(&r->progress);
		cli_error("diff: %s: %s", dir, r->callsites ? err : "out of memory");
		return 1;
	}
	report_progress_stop(&r->progress);
	for (size_t i = 0; i < r->warnings.count; i++)
		cli_error("diff: warning: %s", r->warnings.lines[i]);
	return 0;
}

static void side_close(struct report *r)
{
	report_progress_stop(&r->progress);
	report_build_free(r);
	callsite_table_free(r->callsites);
	callsite_skip_free(&r->skip);
	fault_clock_free(&r->clock);
	fl_recording_close(r->rec);
	report_warnings_free(&r->warnings);
}

/* side_open_once, streamed first (memory that does not grow with the faults), then held if the
 * stream broke an assumption (report.c does the same). */
static int side_open(struct report *r, const struct report_options *ro, const char *dir)
{
	int rc = side_open_once(r, ro, dir, true);
	if (rc == SIDE_HOLD) {
		side_close(r);
		rc = side_open_once(r, ro, dir, false);
	}
	return rc;
}

/* record --fill-ahead on one side and not the other (or another N): its filled pages are no
 * faults, so first touches differ by design, not by the program. */
static uint64_t fill_ahead_of(const struct report *r)
{
	uint64_t n = 0;
	stats_json_uint(&r->rec->procs[0].meta, FL_META_FILL_AHEAD_PAGES, &n); /* absent: recorded before it existed */
	return n;
}

static void warn_fill_ahead(const struct report *a, const struct report *b, const struct diff_options *o)
{
	uint64_t na = fill_ahead_of(a), nb = fill_ahead_of(b);
	if (na != nb)
		cli_error("diff: warning: %s was recorded with --fill-ahead %" PRIu64 ", %s with %" PRIu64 ": pages filled "
			  "ahead are no faults, so first touches differ by that too", o->dirs[0], na, o->dirs[1], nb);
}

/* ----------------------------------------------------------------- outputs */

static int write_flame(const struct diff_options *o, struct report sides[2], const char *path, bool folded)
{
	struct flame *flame = flame_new();
	struct flame_svg_options so;
	char subtitle[512];
	FILE *f = NULL;
	int rc = 1;

	if (!flame || diff_flame_add(flame, &sides[0], o->ro.kind, true) < 0 ||
	    diff_flame_add(flame, &sides[1], o->ro.kind, false) < 0) {
		cli_error("diff: out of memory while building the flame graph");
		goto out;
	}
	if (!(f = fopen(path, "w"))) {
		cli_error("diff: fopen %s: %s", path, strerror(errno));
		goto out;
	}
	if (folded) {
		flame_write_folded_diff(flame, f);
	} else {
		flame_svg_options_init(&so);
		so.differential = true;
		so.title = "Differential Flame Graph";
		snprintf(subtitle, sizeof(subtitle), "B %s against A %s (%s faults): red grew, blue shrank", o->dirs[1],
			 o->dirs[0], kind_names[o->kind]);
		so.subtitle = subtitle;
		if (flame_write_svg(flame, &so, f, NULL) < 0) {
			cli_error("diff: out of memory while drawing %s", path);
			goto out;
		}
	}
	rc = 0;
out:
	if (f && (ferror(f) | fclose(f)) && rc == 0) {
		cli_error("diff: writing %s: %s", path, strerror(errno));
		rc = 1;
	}
	flame_free(flame);
	return rc;
}

int cmd_diff(int argc, char **argv)
{
	struct diff_options o;
	struct report sides[2];
	struct diff d = { 0 };
	int rc = diff_parse(argc, argv, &o);

	if (rc != 0) {
		free(o.ro.skip);
		return rc < 0 ? 0 : rc;
	}
	memset(sides, 0, sizeof(sides));
	if ((o.flame && cli_check_output_path("diff", o.flame)) || (o.folded && cli_check_output_path("diff", o.folded))) {
		free(o.ro.skip);
		return 1;
	}
	rc = side_open(&sides[0], &o.ro, o.dirs[0]);
	if (rc == 0)
		rc = side_open(&sides[1], &o.ro, o.dirs[1]);
	if (rc == 0)
		warn_fill_ahead(&sides[0], &sides[1], &o);
	if (rc == 0 && diff_build(&sides[0], &sides[1], &d) < 0) {
		cli_error("diff: out of memory");
		rc = 1;
	}
	if (rc == 0) {
		struct diff_labels l = { o.dirs[0], o.dirs[1], by_names[o.by], kind_names[o.kind], (size_t)o.top };
		diff_print(&d, &l, o.format, stdout);
		if (cli_finish_output("diff", stdout) != 0)
			rc = 1;
	}
	if (rc == 0 && o.flame)
		rc = write_flame(&o, sides, o.flame, false);
	if (rc == 0 && o.folded)
		rc = write_flame(&o, sides, o.folded, true);
	diff_free(&d);
	for (int i = 0; i < 2; i++) {
		if (sides[i].rec || sides[i].o)
			side_close(&sides[i]);
	}
	free(o.ro.skip);
	return rc;
}
