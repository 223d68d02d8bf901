/* env.c: reading the runtime's part of the FAULTLINE_* environment (inc/faultline/env.h):
 * numbers, with one message for a malformed value. */
#include "env.h"
#include "diag.h"

#include <errno.h>
#include <stdlib.h>

uint64_t fl_env_u64(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);
	char *end;
	if (!v || !*v)
		return dflt;
	errno = 0;
	unsigned long long x = strtoull(v, &end, 10);
	if (errno || *end) {
		char msg[256];
		struct fl_buf b = { msg, 0, sizeof(msg) };
		fl_buf_str(&b, "ignoring malformed ");
		fl_buf_str(&b, name);
		fl_buf_str(&b, "=");
		fl_buf_str(&b, v);
		fl_log(msg);
		return dflt;
	}
	return x;
}
