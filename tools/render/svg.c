/* svg.c: XML escaping, compact numbers, fitted text and the document frame (svg.h). */
#include "svg.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Length of the valid UTF-8 sequence starting at S (at most N bytes), or 0 when it is not one
 * (overlong forms, surrogates and code points above U+10FFFF are refused, as XML wants). */
static size_t utf8_sequence(const unsigned char *s, size_t n)
{
	uint32_t cp;
	size_t len;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
		return 0;
	return len;
}

void svg_escape(FILE *out, const char *text, size_t len)
{
	const unsigned char *s = (const unsigned char *)text;

	if (len == (size_t)-1)
		len = strlen(text);
	for (size_t i = 0; i < len;) {
		unsigned char c = s[i];
		size_t n;

		switch (c) {
		case '&': fputs("&amp;", out); i++; continue;
		case '<': fputs("&lt;", out); i++; continue;
		case '>': fputs("&gt;", out); i++; continue;
		case '"': fputs("&quot;", out); i++; continue;
		case '\'': fputs("&#39;", out); i++; continue;
		case '\n': fputs("&#10;", out); i++; continue;
		default: break;
		}
		if (c < 0x20 || c == 0x7f) {
			putc('?', out);
			i++;
			continue;
		}
		n = utf8_sequence(s + i, len - i);
		if (n == 0) {
			putc('?', out);
			i++;
			continue;
		}
		fwrite(s + i, 1, n, out);
		i += n;
	}
}

const char *svg_num(char *buf, double v, int decimals)
{
	char *dot, *end;

	if (decimals < 0)
		decimals = 0;
	if (decimals > 6)
		decimals = 6;
	if (!isfinite(v))
		v = 0;
	snprintf(buf, 32, "%.*f", decimals, v);
	dot = strchr(buf, '.');
	if (dot) {
		end = buf + strlen(buf) - 1;
		while (end > dot && *end == '0')
			*end-- = '\0';
		if (end == dot)
			*end = '\0';
	}
	if (strcmp(buf, "-0") == 0)
		strcpy(buf, "0");
	return buf;
}

size_t svg_fit_text(const char *text, double width, double font_size, int *ellipsis)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t chars_fit, nchars = 0, keep = 0, len = strlen(text);

	*ellipsis = 0;
	if (width <= 0 || font_size <= 0)
		return 0;
	chars_fit = (size_t)floor(width / (font_size * SVG_CHAR_WIDTH));
	if (chars_fit < 3)
		return 0;
	/* Count characters (UTF-8 lead bytes) to see whether all of it fits. */
	for (size_t i = 0; i < len; i++)
		nchars += (s[i] & 0xc0) != 0x80;
	if (nchars <= chars_fit)
		return len;
	/* Keep chars_fit - 2 characters, then "..". */
	nchars = 0;
	while (keep < len) {
		size_t next = keep + 1;
		while (next < len && (s[next] & 0xc0) == 0x80)
			next++;
		if (nchars + 1 > chars_fit - 2)
			break;
		nchars++;
		keep = next;
	}
	*ellipsis = 1;
	return keep;
}

void svg_begin(FILE *out, unsigned width, unsigned height)
{
	fprintf(out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" "
		"xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n",
		width, height, width, height);
}

void svg_end(FILE *out)
{
	fputs("</svg>\n", out);
}

void svg_color_hsl(double h, double s, double l, char buf[8])
{
	double c = (1 - fabs(2 * l - 1)) * s, hp = fmod(h, 360) / 60, x = c * (1 - fabs(fmod(hp, 2) - 1));
	double r = 0, g = 0, b = 0, m = l - c / 2;

	if (hp < 1)
		r = c, g = x;
	else if (hp < 2)
		r = x, g = c;
	else if (hp < 3)
		g = c, b = x;
	else if (hp < 4)
		g = x, b = c;
	else if (hp < 5)
		r = x, b = c;
	else
		r = c, b = x;
	snprintf(buf, 8, "#%02x%02x%02x", (unsigned)lround((r + m) * 255), (unsigned)lround((g + m) * 255),
		 (unsigned)lround((b + m) * 255));
}
