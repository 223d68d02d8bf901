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
