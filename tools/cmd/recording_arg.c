/* recording_arg.c: the DIR argument and the reader's warnings, for every verb (see the header). */
#include "recording_arg.h"
#include "cli.h"

const char *recording_arg_dir(const char *verb, const char *dir, char *buf, size_t len)
{
	char err[1024];
	if (dir)
		return dir;
	if (fl_recording_find_newest(NULL, buf, len, err, sizeof(err)) < 0) {
		cli_error("%s: %s", verb, err);
		return NULL;
	}
	cli_error("%s: reading the newest recording here, %s", verb, buf);
	return buf;
}

void recording_arg_warnings(const struct fl_recording *rec)
{
	for (size_t i = 0; i < rec->nwarnings; i++)
		cli_error("warning: %s", rec->warnings[i]);
	if (rec->warnings_suppressed)
		cli_error("warning: %zu more warnings not shown", rec->warnings_suppressed);
}

struct fl_recording *recording_arg_open(const char *verb, const char *dir, struct report_progress *progress)
{
	struct fl_recording *rec;
	char err[1024];
	report_progress_start(progress, verb, true);
	report_progress_phase(progress, "reading the recording", 0);
	if (fl_recording_open_stream(dir, &rec) != 0 && fl_recording_open(dir, &rec, err, sizeof(err)) < 0) {
		report_progress_stop(progress);
		cli_error("%s: %s", verb, err);
		return NULL;
	}
	if (rec->nwarnings || rec->warnings_suppressed)
		report_progress_stop(progress); /* the warnings' lines are not to be erased */
	recording_arg_warnings(rec);
	return rec;
}
