/* text_out.h: the one writer of text fields in machine-readable outputs (report, ranges and every
 * other verb that writes JSON or CSV): JSON strings and CSV fields, escaped in one place. */
#ifndef FAULTLINE_TOOLS_TEXT_OUT_H
#define FAULTLINE_TOOLS_TEXT_OUT_H

#include <stdio.h>

/* Writes TEXT as a JSON string: null for NULL; '"' and '\\' escaped, control characters and DEL as
 * \u00XX, an invalid UTF-8 byte as \ufffd (so the output is always valid JSON in UTF-8). */
void json_out_string(const char *text, FILE *out);

/* The same, with '<', '>' and '&' also as \u00XX: safe inside an HTML <script> element. */
void json_out_string_html(const char *text, FILE *out);

/* Writes TEXT as one CSV field (RFC 4180): quoted, with '"' doubled, when it holds ',', '"', CR or
 * LF, or begins or ends with a space (which readers would strip); as it is otherwise. */
void csv_out_field(const char *text, FILE *out);

#endif
