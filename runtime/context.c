/* context.c: the one instance of the runtime's context (context.h). Runtime.c fills it at start
 * and in a forked child; each subsystem keeps its part. */
#include "context.h"

struct fl_runtime fl_rt;
