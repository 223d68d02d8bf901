/* sweep_render.h: what `faultline sweep` prints and writes (render stage, sweep_output.c): the table
 * for people, the CSV (stdout with --format csv, and sweep.csv), and the SVG plot of refaults
 * against local memory with the knee marked. Below: analyze/sweep.h. */
#ifndef FAULTLINE_SWEEP_RENDER_H
#define FAULTLINE_SWEEP_RENDER_H

#include <stdio.h>

#include "sweep.h"

/* The CSV columns, in order. */
#define SWEEP_CSV_HEADER "local_bytes,faults_total,first_touch,refault,soft,far_read_bytes,far_write_bytes,wall_s"

/* One line per point (as sorted), after the header; KNEE is sweep_knee's answer. Check ferror(out). */
void sweep_print_csv(const struct sweep_point *points, size_t n, FILE *out);
void sweep_print_table(const struct sweep_point *points, size_t n, size_t knee, const char *dir, FILE *out);

/* The plot: refaults (y, linear) against -L (x, log2 scale) of the limited points, the knee as a
 * dashed vertical line labelled with its size; TITLE names the command. Check ferror(out). */
void sweep_write_svg(const struct sweep_point *points, size_t n, size_t knee, const char *title, FILE *out);

#endif
