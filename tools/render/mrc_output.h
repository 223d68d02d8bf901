/* mrc_output.h: prints a miss-ratio curve (analyze/mrc.h) as a table, CSV or JSON. */
#ifndef FAULTLINE_MRC_OUTPUT_H
#define FAULTLINE_MRC_OUTPUT_H

#include <stdio.h>

#include "mrc.h"

enum mrc_format { MRC_TABLE, MRC_CSV, MRC_JSON };

/* rows: nrows predictions (mrc_predict) in ascending local_bytes. -1 on a write error. */
int mrc_print(const struct mrc_model *m, enum mrc_policy policy, const struct mrc_row *rows, size_t nrows,
	      const char *dir, enum mrc_format format, FILE *out);

#endif
