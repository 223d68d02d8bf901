/* env.h: the FAULTLINE_* numbers of the environment (env.c), a leaf. */
#ifndef FL_ENV_H
#define FL_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

uint64_t fl_env_u64(const char *name, uint64_t dflt); /* a FAULTLINE_* number; dflt if unset or malformed */

#endif
