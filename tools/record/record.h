/* record.h: `faultline record`: the verb, and (through record_options.h and record_env.h) the
 * pieces of it that sweep and the tests call without running anything: argument parsing,
 * LD_PRELOAD composition. */
#ifndef FAULTLINE_TOOLS_RECORD_H
#define FAULTLINE_TOOLS_RECORD_H

#include "record_env.h"
#include "record_options.h"

/* The `record` verb. */
int cmd_record(int argc, char **argv);

#endif
