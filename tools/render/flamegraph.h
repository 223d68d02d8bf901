/* flamegraph.h: a flame graph's two outputs (render stage, flamegraph.c), of the tree of call stacks
 * weighted by counts that analyze/flame_tree.h builds (included here for the callers that do both):
 * folded stacks (Brendan Gregg's format, one "root;...;leaf COUNT" line per distinct stack, read by
 * flamegraph.pl, inferno and speedscope) and a self-contained interactive SVG in the style of
 * flamegraph.pl, written here in C (no Perl, no script, nothing fetched).
 *
 * The SVG. flamegraph.pl's layout (root at the bottom, or at the top with `inverted`: an icicle
 * graph), siblings in name order, width proportional to total. Frames narrower than the minimum
 * width are not drawn one by one: the narrow children of a frame are merged into one frame
 * "[N more < W px]" when together they are wide enough, else left out (the parent's tooltip
 * still counts them). When even that leaves more frames than max_frames, or more than max_bytes
 * of them by estimate, the minimum width is raised until it does not (said in the subtitle), which
 * bounds the file size whatever the input: a 10^6-node tree still makes an SVG under 2 MB. The canvas stays under SVG_MAX_EDGE
 * pixels in both directions (deeper frames are cut, and the subtitle says so).
 *
 * Interaction (inline JavaScript, works from a file:// URL): a tooltip per frame
 * ("name (1,234 faults, 5.67%)", self count, file:line), the details line on hover with the
 * percentage of the zoomed frame, click to zoom (the frame becomes the full width, its ancestors
 * are shown faded at full width), "Reset Zoom", "Search" by regular expression (Ctrl-F; Ctrl-I or
 * the "ic" button toggles case; Esc resets) highlighting matches and printing "Matched: P%" of the
 * total counted once per stack, and URL parameters ?s=REGEX and ?f=NAME (zoom to the first frame
 * with that name) applied on load. */
#ifndef FAULTLINE_TOOLS_FLAMEGRAPH_H
#define FAULTLINE_TOOLS_FLAMEGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "flame_tree.h"

/* Writes one "a;b;c COUNT" line per distinct stack (a node with a self count), sorted by names
 * from the root, so the output is the same for the same input. In names, ';' becomes ':' and
 * control characters '?', so every line splits back into the frames added. Returns the number of
 * lines written; check ferror(out). */
size_t flame_write_folded(const struct flame *flame, FILE *out);

/* difffolded.pl's format: one "a;b;c A B" line per distinct stack that has a count in A (the
 * baseline, flame_add_base) or B (flame_add), in the order of flame_write_folded. */
size_t flame_write_folded_diff(const struct flame *flame, FILE *out);

struct flame_svg_options {
	const char *title;      /* NULL: "Flame Graph", or "Icicle Graph" when inverted */
	const char *subtitle;   /* NULL: none (notes about merged or cut frames are added to it) */
	const char *countname;  /* NULL: "faults" (plural; "N faults" in tooltips) */
	unsigned width;         /* 0: 1200; at most SVG_MAX_EDGE */
	unsigned frame_height;  /* 0: 16 */
	double font_size;       /* 0: 12 */
	double min_width;       /* pixels, or percent of the width when min_width_percent;
				   0: 1 px. Never below 1 px: no sub-pixel frame is drawn */
	bool min_width_percent;
	size_t max_frames;      /* 0: 12,000 */
	size_t max_bytes;       /* estimated size of the frames at most; 0: 1.9 MB (so the file,
				   script included, stays under 2 MB) */
	bool inverted;          /* icicle: root at the top */
	bool differential;      /* colours by B - A as flamegraph.pl does for difffolded.pl's output: red
				   grew, blue shrank, white unchanged, the deeper the larger the change; the
				   tooltips add "A n -> B m (+d, +p%)" */
};

/* What flame_write_svg drew. */
struct flame_svg_stats {
	size_t frames;          /* frames drawn (root and merged frames included) */
	size_t merged;          /* "[N more]" frames among them */
	size_t hidden_nodes;    /* tree nodes not drawn (too narrow or too deep) */
	double min_width_px;    /* the minimum width used (raised above the option by max_frames) */
	unsigned depth;         /* deepest level drawn (root = 0) */
	bool depth_cut;         /* levels below depth were not drawn (canvas height limit) */
	unsigned width, height; /* of the canvas */
};

/* Fills OPTS with the defaults. */
void flame_svg_options_init(struct flame_svg_options *opts);

/* Writes the SVG. Returns 0, or -1 with errno (ENOMEM); check ferror(out) for write errors.
 * STATS may be NULL. */
int flame_write_svg(const struct flame *flame, const struct flame_svg_options *opts, FILE *out,
		    struct flame_svg_stats *stats);

/* The colour of a frame: "#rrggbb" into buf (8 bytes), a function of the name and class only,
 * so a function has the same colour in every graph. */
void flame_color(const char *name, enum flame_class cls, char buf[8]);

#endif
