/* flamegraph.c: a flame tree's folded output and its interactive SVG (flamegraph.h); the tree itself
 * is analyze/flame_tree.c's.
 *
 * Drawing. With scale = drawable width / total, a node is drawn when its width total * scale is at
 * least the minimum width and its depth fits the canvas; since a child is never wider than its
 * parent, the drawn nodes form a subtree. Children of a drawn node that are too narrow are summed,
 * and drawn as one merged frame when the sum is wide enough. If the frames counted that way exceed
 * max_frames, the minimum width grows by 1/8 until they do not. */
#include "flamegraph.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "flamegraph_js.h"
#include "svg.h"

/* Formats a node's best location, "file:line" or "file", into buf; NULL when it has none. */
static const char *node_loc(const struct flame *f, const struct flame_node *n, char *buf, size_t len)
{
	if (n->loc_file == FLAME_NONE)
		return NULL;
	if (n->loc_line)
		snprintf(buf, len, "%s:%u", f->locs.set.strings[n->loc_file], n->loc_line);
	else
		snprintf(buf, len, "%s", f->locs.set.strings[n->loc_file]);
	return buf;
}

/* ------------------------------------------------------------------ folded output */

/* Writes NAME as a folded frame: ';' → ':', control characters → '?'. */
static void put_folded_name(const char *name, FILE *out)
{
	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		if (*p == ';')
			putc(':', out);
		else if (*p < 0x20 || *p == 0x7f)
			putc('?', out);
		else
			putc(*p, out);
	}
}

static size_t write_folded(const struct flame *f, bool diff, FILE *out);

size_t flame_write_folded(const struct flame *f, FILE *out)
{
	return write_folded(f, false, out);
}

size_t flame_write_folded_diff(const struct flame *f, FILE *out)
{
	return write_folded(f, true, out);
}

static size_t write_folded(const struct flame *f, bool diff, FILE *out)
{
	struct flame_sorted_children sc;
	uint32_t *path, *pos;
	size_t depth = 0, lines = 0;

	if (f->nnodes <= 1)
		return 0;
	if (flame_sort_children(f, &sc) < 0)
		return 0;
	path = malloc((f->max_depth + 2) * sizeof(*path));
	pos = malloc((f->max_depth + 2) * sizeof(*pos));
	if (!path || !pos) {
		free(path);
		free(pos);
		flame_sorted_children_free(&sc);
		return 0;
	}
	/* Depth-first, children in name order: path[1..depth] is the current stack. */
	path[0] = 0;
	pos[0] = sc.first[0];
	for (;;) {
		uint32_t node = path[depth];
		if (pos[depth] < sc.first[node + 1]) {
			uint32_t child = sc.kids[pos[depth]++];
			path[++depth] = child;
			pos[depth] = sc.first[child];
			if (f->nodes[child].self || (diff && f->nodes[child].base_self)) {
				for (size_t i = 1; i <= depth; i++) {
					if (i > 1)
						putc(';', out);
					put_folded_name(f->names.set.strings[f->nodes[path[i]].name], out);
				}
				if (diff)
					fprintf(out, " %" PRIu64, f->nodes[child].base_self);
				fprintf(out, " %" PRIu64 "\n", f->nodes[child].self);
				lines++;
			}
			continue;
		}
		if (depth == 0)
			break;
		depth--;
	}
	free(path);
	free(pos);
	flame_sorted_children_free(&sc);
	return lines;
}

/* ------------------------------------------------------------------ colours */

void flame_color(const char *name, enum flame_class cls, char buf[8])
{
	uint64_t h = flame_name_hash(name);
	double v1 = (double)(h & 0xffff) / 65535.0, v2 = (double)((h >> 16) & 0xffff) / 65535.0;
	double v3 = (double)((h >> 32) & 0xffff) / 65535.0;

	switch (cls) {
	case FLAME_CLASS_CODE:      /* green → teal → cyan */
		svg_color_hsl(110 + 80 * v1, 0.45 + 0.25 * v2, 0.52 + 0.12 * v3, buf);
		break;
	case FLAME_CLASS_LIBRARY:   /* blue → violet, softer */
		svg_color_hsl(210 + 50 * v1, 0.35 + 0.25 * v2, 0.66 + 0.10 * v3, buf);
		break;
	default:                    /* grey */
		svg_color_hsl(0, 0, 0.72 + 0.06 * v3, buf);
		break;
	}
}

/* ------------------------------------------------------------------ SVG */

void flame_svg_options_init(struct flame_svg_options *o)
{
	memset(o, 0, sizeof(*o));
	o->countname = "faults";
	o->width = 1200;
	o->frame_height = 16;
	o->font_size = 12;
	o->min_width = 1;
	o->max_frames = 12000;
	o->max_bytes = 1900000;
}

#define XPAD 10
#define MATCH_COLOR "rgb(230,0,230)"

/* Everything the drawing pass needs. */
struct draw {
	const struct flame *f;
	struct flame_sorted_children sc;
	FILE *out;
	double scale;               /* pixels per count */
	double drawable;            /* width available to frames */
	double min_px;
	unsigned max_depth;         /* deepest level that fits the canvas */
	unsigned fh, height, ypad1, ypad2;
	double fs;
	bool inverted;
	bool differential;          /* colour by growth over the baseline */
	uint32_t node;              /* the node draw_frame draws (FLAME_NONE: a merged frame) */
	uint64_t max_delta;         /* differential: the largest |total - base_total| of a node */
	const char *countname;
	struct flame_svg_stats *st;
	char loc[4096];             /* a node's file:line, formatted (not on the recursion's stack) */
};

/* Bytes a frame costs in the SVG, about: markup and numbers, its name twice (tooltip and label),
 * its location; a merged frame names up to three others. */
#define FRAME_BYTES 150
#define MERGED_FRAME_BYTES 400

/* Frames drawn at threshold MIN_PX (nodes and merged frames), given each node's narrow-children sum
 * in the scratch array NARROW; *BYTES gets their estimated size. */
static size_t count_frames(const struct flame *f, double scale, double min_px, unsigned max_depth,
			   uint64_t *narrow, size_t *bytes)
{
	size_t frames = 1;

	*bytes = FRAME_BYTES;
	memset(narrow, 0, (size_t)f->nnodes * sizeof(*narrow));
	for (uint32_t i = 1; i < f->nnodes; i++) {
		const struct flame_node *n = &f->nodes[i];
		const struct flame_node *p = &f->nodes[n->parent];
		bool parent_drawn = n->parent == 0 || (p->total * scale >= min_px && p->depth <= max_depth);
		if (!parent_drawn || n->depth > max_depth)
			continue;
		if (n->total * scale >= min_px) {
			frames++;
			*bytes += FRAME_BYTES + 2 * (size_t)f->names.lens[n->name] +
				  (n->loc_file != FLAME_NONE ? f->locs.lens[n->loc_file] + 8 : 0);
		} else {
			narrow[n->parent] += n->total;
		}
	}
	for (uint32_t i = 0; i < f->nnodes; i++) {
		if (narrow[i] && narrow[i] * scale >= min_px) {
			frames++;
			*bytes += MERGED_FRAME_BYTES;
		}
	}
	return frames;
}

static unsigned frame_y(const struct draw *d, unsigned depth)
{
	if (d->inverted)
		return d->ypad1 + depth * d->fh;
	return d->height - d->ypad2 - (depth + 1) * d->fh;
}

static void put_count(FILE *out, uint64_t n)
{
	char buf[32];
	fputs(cli_format_count(n, buf, sizeof(buf)), out);
}

static void put_percent(FILE *out, uint64_t n, uint64_t total)
{
	if (n == total)
		fputs("100%", out);
	else
		fprintf(out, "%.2f%%", total ? 100.0 * (double)n / (double)total : 0.0);
}

/* One frame: <g><title>..</title><rect/><text/></g>. TITLE_EXTRA (may be NULL) is written after the
 * first title line, already escaped. */
/* A differential frame's colour, as flamegraph.pl colours difffolded.pl's output: red for growth
 * over the baseline, blue for shrinkage, the deeper the larger the change against the largest; white
 * for none. */
static void diff_color(const struct draw *d, const struct flame_node *n, char buf[8])
{
	uint64_t delta = n->total > n->base_total ? n->total - n->base_total : n->base_total - n->total;
	int pale = d->max_delta ? (int)(210.0 * (double)(d->max_delta - delta) / (double)d->max_delta + 0.5) : 210;

	if (n->total == n->base_total)
		snprintf(buf, 8, "#ffffff");
	else if (n->total > n->base_total)
		snprintf(buf, 8, "#ff%02x%02x", pale, pale);
	else
		snprintf(buf, 8, "#%02x%02xff", pale, pale);
}

/* The tooltip line of a differential frame: "&#10;A 1,234, B 2,345 (+1,111, +90.03%)". */
static void diff_extra(const struct flame_node *n, char *buf, size_t len)
{
	char a[32], b[32], dl[32];
	uint64_t delta = n->total > n->base_total ? n->total - n->base_total : n->base_total - n->total;
	int used = snprintf(buf, len, "&#10;A %s, B %s (%s%s", cli_format_count(n->base_total, a, sizeof(a)),
			    cli_format_count(n->total, b, sizeof(b)), n->total >= n->base_total ? "+" : "-",
			    cli_format_count(delta, dl, sizeof(dl)));
	if (used > 0 && (size_t)used < len) {
		if (n->base_total)
			snprintf(buf + used, len - (size_t)used, ", %s%.2f%%)", n->total >= n->base_total ? "+" : "-",
				 100.0 * (double)delta / (double)n->base_total);
		else
			snprintf(buf + used, len - (size_t)used, ", new)");
	}
}

static void draw_frame(struct draw *d, const char *name, enum flame_class cls, uint64_t count, uint64_t self,
		       bool has_kids, const char *loc, const char *extra, double x, double w, unsigned depth)
{
	FILE *out = d->out;
	char nx[32], nw[32], nt[32], color[8];
	uint64_t total = d->f->nodes[0].total;
	int ellipsis;
	size_t keep;

	fputs("<g><title>", out);
	svg_escape(out, name, (size_t)-1);
	fputs(" (", out);
	put_count(out, count);
	fprintf(out, " %s, ", d->countname);
	put_percent(out, count, total);
	fputs(")", out);
	if (has_kids && self) {
		fputs("&#10;self ", out);
		put_count(out, self);
		fprintf(out, " %s", d->countname);
	}
	if (loc) {
		fputs("&#10;", out);
		svg_escape(out, loc, (size_t)-1);
	}
	if (extra)
		fputs(extra, out);
	if (d->differential && d->node != FLAME_NONE)
		diff_color(d, &d->f->nodes[d->node], color);
	else
		flame_color(name, cls, color);
	fprintf(out, "</title><rect x=\"%s\" y=\"%u\" width=\"%s\" height=\"%u\" fill=\"%s\"/>", svg_num(nx, x, 2),
		frame_y(d, depth), svg_num(nw, w, 2), d->fh - 1, color);
	keep = svg_fit_text(name, w - 3, d->fs, &ellipsis);
	if (keep) {
		fprintf(out, "<text x=\"%s\" y=\"%u\">", svg_num(nt, x + 3, 2), frame_y(d, depth) + d->fh - 5);
		svg_escape(out, name, keep);
		if (ellipsis)
			fputs("..", out);
		fputs("</text>", out);
	}
	fputs("</g>\n", out);
	d->st->frames++;
	if (depth > d->st->depth)
		d->st->depth = depth;
}

/* The merged frame for the narrow children of NODE: "[N more < W px]", listing the largest few. */
static void draw_merged(struct draw *d, uint32_t node, uint64_t sum, size_t nnarrow, double x)
{
	const struct flame *f = d->f;
	char name[96], wbuf[32], extra[1024];
	uint32_t top[3] = { FLAME_NONE, FLAME_NONE, FLAME_NONE };
	size_t len = 0;

	for (uint32_t k = d->sc.first[node]; k < d->sc.first[node + 1]; k++) {
		uint32_t c = d->sc.kids[k];
		if (f->nodes[c].total * d->scale >= d->min_px)
			continue;
		for (int j = 0; j < 3; j++) {
			if (top[j] == FLAME_NONE || f->nodes[c].total > f->nodes[top[j]].total) {
				memmove(&top[j + 1], &top[j], (size_t)(2 - j) * sizeof(top[0]));
				top[j] = c;
				break;
			}
		}
	}
	snprintf(name, sizeof(name), "[%zu more < %s px]", nnarrow, svg_num(wbuf, d->min_px, 1));
	/* The extra tooltip lines name the largest merged frames; escaped into a memory stream. */
	{
		FILE *mem = fmemopen(extra, sizeof(extra), "w");
		if (mem) {
			fputs("&#10;largest:", mem);
			for (int j = 0; j < 3 && top[j] != FLAME_NONE; j++) {
				const char *name = f->names.set.strings[f->nodes[top[j]].name];
				fputs(j ? ", " : " ", mem);
				svg_escape(mem, name, strnlen(name, 200)); /* at most 200 bytes, never past its end */
				fputs(" (", mem);
				put_count(mem, f->nodes[top[j]].total);
				fputs(")", mem);
			}
			fflush(mem);
			len = (size_t)ftell(mem);
			fclose(mem);
		}
		extra[len < sizeof(extra) ? len : sizeof(extra) - 1] = '\0';
		/* A cut in the middle of an entity would break the XML: drop a trailing partial one. */
		{
			char *amp = strrchr(extra, '&');
			if (amp && !strchr(amp, ';'))
				*amp = '\0';
		}
	}
	draw_frame(d, name, FLAME_CLASS_PSEUDO, sum, 0, false, NULL, extra, x, sum * d->scale,
		   f->nodes[node].depth + 1);
	d->st->merged++;
}

/* Draws NODE at X (its subtree below it), children in name order from its left edge, then the
 * merged frame of its narrow children. */
static void draw_subtree(struct draw *d, uint32_t node, double x)
{
	const struct flame *f = d->f;
	const struct flame_node *n = &f->nodes[node];
	uint64_t narrow = 0;
	size_t nnarrow = 0;
	bool has_kids = d->sc.first[node + 1] > d->sc.first[node];
	double cx = x;

	char extra[160];

	if (d->differential)
		diff_extra(n, extra, sizeof(extra));
	/* The root spans the graph even when nothing was counted (an empty graph, not a 0 px frame). */
	d->node = node;
	draw_frame(d, f->names.set.strings[n->name], node ? (enum flame_class)f->names.cls[n->name] : FLAME_CLASS_PSEUDO,
		   n->total, n->self, has_kids, node_loc(f, n, d->loc, sizeof(d->loc)), d->differential ? extra : NULL, x,
		   node == 0 && n->total == 0 ? d->drawable : n->total * d->scale, n->depth);
	d->node = FLAME_NONE;
	if (n->depth >= d->max_depth) {
		if (has_kids)
			d->st->depth_cut = true;
		return;
	}
	for (uint32_t k = d->sc.first[node]; k < d->sc.first[node + 1]; k++) {
		uint32_t c = d->sc.kids[k];
		if (f->nodes[c].total * d->scale < d->min_px) {
			narrow += f->nodes[c].total;
			nnarrow++;
			continue;
		}
		draw_subtree(d, c, cx);
		cx += f->nodes[c].total * d->scale;
	}
	if (narrow && narrow * d->scale >= d->min_px)
		draw_merged(d, node, narrow, nnarrow, cx);
}

static void write_style_and_script(const struct draw *d, unsigned width)
{
	FILE *out = d->out;
	char fs[32], fs_title[32];

	fprintf(out,
		"<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
		"<stop stop-color=\"#f6f7f9\" offset=\"5%%\"/><stop stop-color=\"#e4ece8\" offset=\"95%%\"/>"
		"</linearGradient></defs>\n"
		"<style type=\"text/css\">\n"
		"text { font-family: Verdana, 'DejaVu Sans', sans-serif; font-size: %spx; fill: #000; }\n"
		"#title { text-anchor: middle; font-size: %spx; }\n"
		"#subtitle { text-anchor: middle; fill: #555; }\n"
		"#frames > g > text { pointer-events: none; }\n"
		"#frames > g:hover > rect { stroke: #000; stroke-width: 0.5; }\n"
		"#frames > g { cursor: pointer; }\n"
		".hide { display: none; }\n"
		".parent { opacity: 0.5; }\n"
		"#unzoom, #search, #ignorecase { cursor: pointer; }\n"
		"#search, #ignorecase { opacity: 0.3; }\n"
		"#search.show, #ignorecase.show { opacity: 1; }\n"
		"#search:hover, #ignorecase:hover, #unzoom:hover { fill: #a00; opacity: 1; }\n"
		"</style>\n",
		svg_num(fs, d->fs, 1), svg_num(fs_title, d->fs + 5, 1));
	fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n"
		"var cfg = { countname: '%s', fontsize: %s, fontwidth: %.2f, xpad: %d, width: %u, frameheight: %u, "
		"total: %" PRIu64 ", inverted: %s, matchcolor: '%s' };\n",
		d->countname, svg_num(fs, d->fs, 1), SVG_CHAR_WIDTH, XPAD, width, d->fh, d->f->nodes[0].total,
		d->inverted ? "true" : "false", MATCH_COLOR);
	fputs(flamegraph_js, out);
	fputs("]]></script>\n", out);
}

/* A countname goes into a JavaScript string and XML: keep it to letters, digits, '-', '_', ' '. */
static const char *safe_countname(const char *name)
{
	if (!name || !*name)
		return "faults";
	for (const char *p = name; *p; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      *p == '-' || *p == '_' || *p == ' '))
			return "faults";
	}
	return name;
}

int flame_write_svg(const struct flame *f, const struct flame_svg_options *opts, FILE *out,
		    struct flame_svg_stats *stats)
{
	struct flame_svg_options o;
	struct flame_svg_stats local_stats;
	struct draw d;
	uint64_t *narrow;
	char subtitle[1024], buf[32], buf2[32];
	const char *title;
	unsigned width, levels, text_y;
	size_t max_frames, max_bytes;
	double drawable;

	flame_svg_options_init(&o);
	if (opts)
		o = *opts;
	width = o.width ? o.width : 1200;
	if (width > SVG_MAX_EDGE)
		width = SVG_MAX_EDGE;
	if (width < 200)
		width = 200;
	memset(&d, 0, sizeof(d));
	d.f = f;
	d.out = out;
	d.st = stats ? stats : &local_stats;
	memset(d.st, 0, sizeof(*d.st));
	d.fh = o.frame_height ? o.frame_height : 16;
	if (d.fh < 4)
		d.fh = 4;
	if (d.fh > 64)
		d.fh = 64;
	d.fs = o.font_size > 0 ? o.font_size : 12;
	d.inverted = o.inverted;
	d.node = FLAME_NONE;
	d.differential = o.differential;
	for (uint32_t i = 1; d.differential && i < f->nnodes; i++) {
		const struct flame_node *n = &f->nodes[i];
		uint64_t delta = n->total > n->base_total ? n->total - n->base_total : n->base_total - n->total;
		if (delta > d.max_delta)
			d.max_delta = delta;
	}
	d.countname = safe_countname(o.countname);
	title = o.title ? o.title : o.inverted ? "Icicle Graph" : "Flame Graph";
	drawable = width - 2 * XPAD;
	d.scale = f->nodes[0].total ? drawable / (double)f->nodes[0].total : 0;
	d.drawable = drawable;
	d.min_px = o.min_width > 0 ? (o.min_width_percent ? drawable * o.min_width / 100 : o.min_width) : 1;
	if (d.min_px < 1)
		d.min_px = 1;
	max_frames = o.max_frames ? o.max_frames : 12000;
	max_bytes = o.max_bytes ? o.max_bytes : 1900000;

	/* Vertical layout: title (and subtitle) above, details line below. */
	d.ypad1 = (unsigned)(d.fs * 3) + (unsigned)(d.fs * 2); /* title + subtitle line */
	d.ypad2 = (unsigned)(d.fs * 2 + 10);
	levels = (SVG_MAX_EDGE - d.ypad1 - d.ypad2) / d.fh;
	d.max_depth = levels - 1;

	narrow = malloc((size_t)f->nnodes * sizeof(*narrow));
	if (!narrow || flame_sort_children(f, &d.sc) < 0) {
		free(narrow);
		errno = ENOMEM;
		return -1;
	}
	for (;;) {
		size_t bytes, frames = count_frames(f, d.scale, d.min_px, d.max_depth, narrow, &bytes);
		if ((frames <= max_frames && bytes <= max_bytes) || d.min_px > drawable)
			break;
		d.min_px *= 1.125;
	}
	free(narrow);
	d.st->min_width_px = d.min_px;

	/* The depth actually drawn decides the height. */
	{
		unsigned deepest = 0;
		for (uint32_t i = 1; i < f->nnodes; i++) {
			unsigned depth = f->nodes[i].depth;
			if (depth <= d.max_depth + 1 && depth > deepest && f->nodes[f->nodes[i].parent].total * d.scale >= d.min_px)
				deepest = depth; /* a node or its parent's merged frame is drawn at this depth */
		}
		if (deepest > d.max_depth)
			deepest = d.max_depth;
		d.height = (deepest + 1) * d.fh + d.ypad1 + d.ypad2;
	}
	d.st->width = width;
	d.st->height = d.height;

	subtitle[0] = '\0';
	if (o.subtitle)
		snprintf(subtitle, sizeof(subtitle), "%s", o.subtitle);
	if (d.min_px > (o.min_width_percent ? drawable * o.min_width / 100 : o.min_width) * 1.0001 && d.min_px > 1.0001) {
		size_t len = strlen(subtitle);
		snprintf(subtitle + len, sizeof(subtitle) - len, "%sframes narrower than %s px merged (budget: %zu frames, %zu KB)",
			 len ? "; " : "", svg_num(buf, d.min_px, 2), max_frames, max_bytes / 1000);
	}
	if (f->max_depth > d.max_depth) {
		size_t len = strlen(subtitle);
		snprintf(subtitle + len, sizeof(subtitle) - len, "%sstacks deeper than %u frames cut", len ? "; " : "",
			 d.max_depth);
	}

	svg_begin(out, width, d.height);
	write_style_and_script(&d, width);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"url(#background)\"/>\n", width, d.height);
	fprintf(out, "<text id=\"title\" x=\"%s\" y=\"%s\">", svg_num(buf, width / 2.0, 1), svg_num(buf2, d.fs * 2, 1));
	svg_escape(out, title, (size_t)-1);
	fputs("</text>\n", out);
	fprintf(out, "<text id=\"subtitle\" x=\"%s\" y=\"%s\">", svg_num(buf, width / 2.0, 1), svg_num(buf2, d.fs * 3.6, 1));
	svg_escape(out, *subtitle ? subtitle : " ", (size_t)-1);
	fputs("</text>\n", out);
	text_y = d.height - d.ypad2 / 2;
	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n", XPAD, text_y);
	fprintf(out, "<text id=\"unzoom\" class=\"hide\" x=\"%d\" y=\"%s\">Reset Zoom</text>\n", XPAD,
		svg_num(buf, d.fs * 2, 1));
	fprintf(out, "<text id=\"search\" x=\"%u\" y=\"%s\">Search</text>\n", width - XPAD - 100,
		svg_num(buf, d.fs * 2, 1));
	fprintf(out, "<text id=\"ignorecase\" x=\"%u\" y=\"%s\">ic</text>\n", width - XPAD - 16,
		svg_num(buf, d.fs * 2, 1));
	fprintf(out, "<text id=\"matched\" class=\"hide\" x=\"%u\" y=\"%u\" text-anchor=\"end\"> </text>\n",
		width - XPAD, text_y);
	fputs("<g id=\"frames\">\n", out);
	draw_subtree(&d, 0, XPAD);
	fputs("</g>\n", out);
	svg_end(out);
	d.st->hidden_nodes = f->nnodes - (d.st->frames - d.st->merged);
	flame_sorted_children_free(&d.sc);
	return 0;
}
