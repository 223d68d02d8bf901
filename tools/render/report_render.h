/* report_render.h: the report's outputs (render stage): the table, CSV and JSON of a built report
 * (report_output.c) and its hot address ranges (report_ranges.c). Below: analyze/report.h. */
#ifndef FAULTLINE_REPORT_RENDER_H
#define FAULTLINE_REPORT_RENDER_H

#include <stdio.h>

#include "report.h"

/* report_ranges.c: computes r->ranges when they are to be shown (a failure is a warning), prints
 * them as the table's last section or as JSON fields ("ranges", "ranges_source"), frees them. */
void report_ranges_compute(struct report *r);
void report_ranges_print_table(const struct report *r, FILE *out);
void report_ranges_print_json(const struct report *r, FILE *out);
void report_ranges_free(struct report *r);

/* report_output.c: the header lines ("# ...") above the table. */
void report_print_header(const struct report *r, FILE *out);

/* report_output.c: the report in r->o->format; 0, or 1 when writing failed. */
int report_print(struct report *r, FILE *out);

#endif
