/* far_spec.h: `faultline record --far SPEC` — checking a far-store spec before anything starts,
 * and describing the far store of a recording for record's summary. */
#ifndef FAULTLINE_TOOLS_FAR_SPEC_H
#define FAULTLINE_TOOLS_FAR_SPEC_H

#include <stddef.h>

struct flat_json;

/* Only the form of spec (for option parsing: no file system or network access); 0 or -1. */
int far_spec_syntax(const char *spec, char *err, size_t errlen);

/* Checks spec (mem, file:PATH, memcached:HOST:PORT[,HOST:PORT...]) and writes the spec the
 * runtime gets into out: file paths made absolute, memcached host names resolved to numeric
 * addresses (the runtime resolves nothing: it must not allocate) after each server answered.
 * Returns 0, or -1 with a one-line reason in err. */
int far_spec_check(const char *spec, char *out, size_t outlen, char *err, size_t errlen);

/* One line describing a process's far store from its meta.json: spec, detail, emulation. */
void far_spec_describe(const struct flat_json *meta, char *out, size_t len);

#endif
