/* diff_output.c: the diff's table, CSV and JSON (see diff_render.h). The CSV and JSON carry the same
 * fields: function, file, line, a, b, delta (B - A), relative_percent (delta / A x 100; empty / null
 * for a row new in B), binary. The table shows them with thousands separators and "new" / "gone". */
#include "diff_render.h"

#include <inttypes.h>
#include <string.h>

#include "cli.h"
#include "text_out.h"

static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	return slash && slash[1] ? slash + 1 : path;
}

static size_t shown(const struct diff *d, const struct diff_labels *l)
{
	return l->top && l->top < d->nrows ? l->top : d->nrows;
}

static void print_csv(const struct diff *d, const struct diff_labels *l, FILE *out)
{
	fputs(DIFF_CSV_HEADER "\n", out);
	for (size_t i = 0; i < shown(d, l); i++) {
		const struct diff_row *r = &d->rows[i];
		double pct;
		csv_out_field(r->function, out);
		putc(',', out);
		if (r->file)
			csv_out_field(r->file, out);
		putc(',', out);
		if (r->line)
			fprintf(out, "%u", r->line);
		fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRId64 ",", r->a, r->b, diff_delta(r));
		if (diff_relative_percent(r, &pct))
			fprintf(out, "%.2f", pct);
		putc(',', out);
		if (r->binary)
			csv_out_field(r->binary, out);
		putc('\n', out);
	}
}

static void print_json(const struct diff *d, const struct diff_labels *l, FILE *out)
{
	fputs("{\"a\": ", out);
	json_out_string(l->dir_a, out);
	fputs(", \"b\": ", out);
	json_out_string(l->dir_b, out);
	fprintf(out, ", \"by\": \"%s\", \"kind\": \"%s\", \"total_a\": %" PRIu64 ", \"total_b\": %" PRIu64 ", \"rows\": [",
		l->by, l->kind, d->total_a, d->total_b);
	for (size_t i = 0; i < shown(d, l); i++) {
		const struct diff_row *r = &d->rows[i];
		double pct;
		fputs(i ? ",\n  {\"function\": " : "\n  {\"function\": ", out);
		json_out_string(r->function, out);
		fputs(", \"file\": ", out);
		json_out_string(r->file, out);
		if (r->line)
			fprintf(out, ", \"line\": %u", r->line);
		else
			fputs(", \"line\": null", out);
		fprintf(out, ", \"a\": %" PRIu64 ", \"b\": %" PRIu64 ", \"delta\": %" PRId64 ", \"relative_percent\": ", r->a, r->b,
			diff_delta(r));
		if (diff_relative_percent(r, &pct))
			fprintf(out, "%.2f", pct);
		else
			fputs("null", out);
		fputs(", \"binary\": ", out);
		json_out_string(r->binary, out);
		putc('}', out);
	}
	fputs(shown(d, l) ? "\n]}\n" : "]}\n", out);
}

/* Prints TEXT with control characters as '?', cut to MAX bytes with "..". */
static void put_cell(const char *text, size_t max, int width, FILE *out)
{
	char buf[256];
	size_t n = 0;

	for (const unsigned char *p = (const unsigned char *)text; *p && n < sizeof(buf) - 1; p++)
		buf[n++] = *p < 0x20 || *p == 0x7f ? '?' : (char)*p;
	buf[n] = '\0';
	if (n > max && max > 2)
		strcpy(buf + max - 2, "..");
	fprintf(out, "%-*s", width, buf);
}

static void print_table(const struct diff *d, const struct diff_labels *l, FILE *out)
{
	char a[32], b[32], c[32], loc[512];
	int64_t total_delta = (int64_t)d->total_b - (int64_t)d->total_a;

	fprintf(out, "# faultline diff by %s, faults of kind %s\n# A: %s: %s faults\n", l->by, l->kind, l->dir_a,
		cli_format_count(d->total_a, a, sizeof(a)));
	fprintf(out, "# B: %s: %s faults (%s%s)\n", l->dir_b, cli_format_count(d->total_b, b, sizeof(b)),
		total_delta >= 0 ? "+" : "-", cli_format_count((uint64_t)(total_delta >= 0 ? total_delta : -total_delta), c, sizeof(c)));
	fprintf(out, "# rows: %zu of %zu shown, by |B - A|; matched by function and file:line\n#\n", shown(d, l), d->nrows);
	if (d->nrows == 0) {
		fputs("# no fault in either recording matches the selection\n", out);
		return;
	}
	fprintf(out, "# %12s %12s %13s %9s  %-40s %s\n", "A", "B", "delta", "relative", "function", "file:line (else binary)");
	for (size_t i = 0; i < shown(d, l); i++) {
		const struct diff_row *r = &d->rows[i];
		int64_t delta = diff_delta(r);
		double pct;
		char rel[32];
		if (diff_relative_percent(r, &pct))
			snprintf(rel, sizeof(rel), r->b == 0 ? "gone" : "%+.1f%%", pct);
		else
			snprintf(rel, sizeof(rel), "new");
		snprintf(c, sizeof(c), "%s", delta >= 0 ? "+" : "-");
		cli_format_count((uint64_t)(delta >= 0 ? delta : -delta), c + 1, sizeof(c) - 1);
		fprintf(out, "  %12s %12s %13s %9s  ", cli_format_count(r->a, a, sizeof(a)), cli_format_count(r->b, b, sizeof(b)),
			c, rel);
		put_cell(r->function, 40, 40, out);
		if (r->file)
			snprintf(loc, sizeof(loc), " %s:%u", base_name(r->file), r->line);
		else
			snprintf(loc, sizeof(loc), " %s", r->binary ? base_name(r->binary) : "-");
		put_cell(loc, sizeof(loc), 0, out);
		putc('\n', out);
	}
	if (d->nrows == 1 && strcmp(d->rows[0].function, CALLSITE_NO_STACK) == 0 && strcmp(l->by, "alloc") != 0) {
		fputs("# no selected fault has a stack in either recording (e.g. record -s 0, or sweep without --stacks):\n"
		      "# compare them with --by alloc (allocation sites are kept without fault stacks)\n", out);
		return;
	}
	for (size_t i = 0; i < d->nrows && strcmp(l->by, "alloc") != 0; i++) {
		const struct diff_row *r = &d->rows[i];
		if (strcmp(r->function, CALLSITE_NO_STACK) != 0)
			continue;
		/* one side all <no stack>, the other with stacks: every row is "gone" or "new" */
		bool a_bare = d->total_a && r->a == d->total_a && r->b < d->total_b;
		bool b_bare = d->total_b && r->b == d->total_b && r->a < d->total_a;
		if (a_bare || b_bare)
			fprintf(out, "# %s has no fault stacks (e.g. record -s 0, or sweep without --stacks): its faults are the "
				"one <no stack> row and the other's callsites show as %s;\n"
				"# compare them with --by alloc (allocation sites are kept without fault stacks)\n",
				a_bare ? "A" : "B", a_bare ? "new" : "gone");
	}
}

int diff_print(const struct diff *d, const struct diff_labels *l, enum diff_format format, FILE *out)
{
	if (format == DIFF_FORMAT_CSV)
		print_csv(d, l, out);
	else if (format == DIFF_FORMAT_JSON)
		print_json(d, l, out);
	else
		print_table(d, l, out);
	return 0;
}
