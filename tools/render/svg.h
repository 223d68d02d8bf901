/* svg.h: the little an SVG writer needs — text escaped for XML (any byte string in, well-formed
 * UTF-8 XML out), compact numbers, the document header, text fitted to a width, and colours.
 *
 * Everything writes to a stdio stream; errors surface through ferror() of that stream, which the
 * caller checks once at the end (as the verbs do with their output). Used by the flame graph and
 * the heatmap writers. */
#ifndef FAULTLINE_TOOLS_SVG_H
#define FAULTLINE_TOOLS_SVG_H

#include <stddef.h>
#include <stdio.h>

/* The largest canvas edge browsers draw (Chrome stops at 32,767 px; async-profiler #418). */
#define SVG_MAX_EDGE 32767

/* Average advance of one character of the sans-serif fonts used, as a fraction of the font size
 * (Verdana's, as flamegraph.pl assumes: 0.59). Only used to decide how much text fits. */
#define SVG_CHAR_WIDTH 0.59

/* Writes TEXT (LEN bytes, or up to the NUL when LEN is (size_t)-1) escaped for XML character
 * data and attribute values: & < > " ' become entities, control characters and bytes that are
 * not valid UTF-8 become '?', so the output is always well-formed. */
void svg_escape(FILE *out, const char *text, size_t len);

/* Formats V with at most DECIMALS (0..6) decimals, trailing zeros and point removed ("12",
 * "12.5", "-0.25"); into buf (at least 32 bytes). Returns buf. */
const char *svg_num(char *buf, double v, int decimals);

/* How many bytes of TEXT to show in WIDTH pixels at FONT_SIZE, and whether to end with "..":
 * returns the number of bytes of TEXT to keep (never splitting a UTF-8 sequence) and sets
 * *ellipsis when the text was cut. Returns 0 when not even two characters and ".." fit. */
size_t svg_fit_text(const char *text, double width, double font_size, int *ellipsis);

/* The XML declaration and the opening <svg> element of a WIDTH x HEIGHT document (pixels, with
 * the same viewBox), with the SVG and XLink namespaces. */
void svg_begin(FILE *out, unsigned width, unsigned height);

/* Closes the document. */
void svg_end(FILE *out);

/* The colour of hue H (degrees, any value: taken modulo 360), saturation S and lightness L (0..1)
 * as "#rrggbb" into buf. The one HSL to RGB conversion of the tools (flame graph, heatmap). */
void svg_color_hsl(double h, double s, double l, char buf[8]);

#endif
