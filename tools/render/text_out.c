/* text_out.c: JSON strings and CSV fields (text_out.h): escaping and UTF-8 validation in one place. */
#include "text_out.h"

#include <stdbool.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when it is not one. */
static int utf8_length(const unsigned char *s)
{
	int n = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3 : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
	if (n == 2 && s[0] < 0xc2)
		return 0;
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	}
	return n;
}

static void json_string(const char *text, bool in_html, FILE *out)
{
	const unsigned char *s = (const unsigned char *)text;

	if (!text) {
		fputs("null", out);
		return;
	}
	putc('"', out);
	while (*s) {
		int n = utf8_length(s);
		if (*s == '"' || *s == '\\')
			fprintf(out, "\\%c", *s);
		else if (*s < 0x20 || *s == 0x7f || (in_html && (*s == '<' || *s == '>' || *s == '&')))
			fprintf(out, "\\u%04x", *s);
		else if (n == 0)
			fputs("\\ufffd", out);
		else
			fwrite(s, 1, (size_t)n, out);
		s += n ? n : 1;
	}
	putc('"', out);
}

void json_out_string(const char *text, FILE *out)
{
	json_string(text, false, out);
}

void json_out_string_html(const char *text, FILE *out)
{
	json_string(text, true, out);
}

void csv_out_field(const char *s, FILE *out)
{
	if (!strpbrk(s, ",\"\r\n") && s[0] != ' ' && (s[0] == '\0' || s[strlen(s) - 1] != ' ')) {
		fputs(s, out);
		return;
	}
	putc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			putc('"', out);
		putc(*s, out);
	}
	putc('"', out);
}
