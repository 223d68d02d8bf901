/* html_report.h: report.html, one self-contained page (no network, no external script or font)
 * from the bounded model of analyze/html_model.h: the report's header, linked tables, flame
 * graphs by kind, the heatmap over the counter timeline, the miss-ratio curve. The page's script
 * and style are the files of tools/render/html (.js, .css, .html), embedded at build time (the Makefile turns them
 * into the generated header html_assets.h). */
#ifndef FAULTLINE_TOOLS_HTML_REPORT_H
#define FAULTLINE_TOOLS_HTML_REPORT_H

#include <stdio.h>

#include "html_model.h"

struct html_report_options {
	const char *title;          /* the page's title */
	const char *header;         /* the report's header lines ("# ..."), shown as they are */
	const char *time_label;     /* the time axis, as words */
};

/* Writes the page to OUT. 0, or -1 when writing failed (errno). */
int html_report_write(const struct html_model *m, const struct html_report_options *o, FILE *out);

/* The largest page html_report_write can write for any recording (bytes): the bounds of
 * html_model.h times the widest each record can be, plus the embedded script and style. */
size_t html_report_max_bytes(void);

#endif
