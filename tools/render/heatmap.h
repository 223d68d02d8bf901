/* heatmap.h: an address × time heatmap of page faults as SVG, with a compressed address axis
 * (Heimdallr's: only the address ranges that were touched are drawn, the gaps between them are
 * removed and marked by a grey line) and allocation lifetimes drawn as outlines.
 *
 * Axis. The distinct faulted pages, sorted, make runs of consecutive pages; while there are more
 * runs than max_ranges, the runs separated by the smallest gaps are joined (so a few isolated
 * pages near a big range do not each get a band). Each range gets rows in proportion to its pages
 * (at least one), every row covering the same number of pages, so no row ever spans a removed gap.
 *
 * Cells. Time (x, seconds since the recording started) is cut into equal columns; a cell is one
 * row × one column and is drawn only when a fault fell into it — so cells appear only in touched
 * address ranges. Colour: lightness by faults in the cell (log scale, 8 steps), hue by the share
 * of refaults among first-touch + refault faults: blue = all first-touch, orange = all refault,
 * purple between; grey = only soft/concurrent faults. Adjacent cells of one colour in a row are
 * drawn as one rectangle with a tooltip summing them.
 *
 * Allocation outlines: [alloc, free) × [address, address + size), for the objects that took the
 * most faults and are at least 3 px tall on the address axis (smaller ones would only smear lines
 * over the cells), one outline per axis range the object spans.
 *
 * The SVG is plain (no script). For tools and tests it says what it drew: each row is a
 * <g class="row" data-lo="0x..." data-hi="0x..."> holding its cells, and <g id="cells"> carries
 * data-x0 (pixel x of time 0), data-ns-per-px (time per pixel) so a cell's time span is
 * recoverable from its x and width.
 *
 * Hot address ranges (heatmap_add_hot_range; `faultline visualize` adds RAP's, ranges.h): each is
 * marked where it meets the drawn rows, by a translucent band over the plot and a bracket on the
 * left edge labelled "H<rank>", and listed in the legend (rank, hex start-end, percent). Each mark
 * is a <g class="hot-range" data-rank data-lo data-hi data-range-lo data-range-hi data-percent>:
 * data-lo/data-hi the part drawn (inside rows that hold faults; one element per axis range the hot
 * range meets), data-range-lo/-hi the whole hot range. */
#ifndef FAULTLINE_TOOLS_HEATMAP_H
#define FAULTLINE_TOOLS_HEATMAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct heatmap;

/* A new heatmap over pages of PAGE_SIZE bytes (a power of two); NULL on ENOMEM. */
struct heatmap *heatmap_new(uint32_t page_size);
void heatmap_free(struct heatmap *hm);

/* One fault at TIME_NS (recording time) of KIND (enum fl_fault_kind), held until the SVG is
 * written. Returns 0 or -1 (ENOMEM). */
int heatmap_add_fault(struct heatmap *hm, uint64_t time_ns, uint64_t addr, unsigned kind);


/* One allocation live over [START_NS, END_NS) holding [ADDR, ADDR + SIZE), which took FAULTS
 * faults; LABEL (copied; may be NULL) names it in its tooltip. Returns 0 or -1 (ENOMEM). */
int heatmap_add_alloc(struct heatmap *hm, uint64_t start_ns, uint64_t end_ns, uint64_t addr, uint64_t size,
		      uint64_t faults, const char *label);

/* A hot address range [LO, HI) (bytes) holding PERCENT of the faults, marked in the order added
 * (ranks 1, 2, ...; at most HEATMAP_MAX_HOT). LABEL (copied; may be NULL) goes in its tooltip.
 * Returns 0, or -1 (ENOMEM). */
#define HEATMAP_MAX_HOT 16
int heatmap_add_hot_range(struct heatmap *hm, uint64_t lo, uint64_t hi, double percent, const char *label);

struct heatmap_options {
	const char *title;      /* NULL: "Page faults by address and time" */
	const char *subtitle;   /* NULL: none */
	unsigned plot_width;    /* pixels of the cell area; 0: 840 */
	unsigned plot_height;   /* 0: 512 */
	unsigned columns;       /* time columns; 0: plot_width / 3 */
	unsigned rows;          /* address rows at most; 0: plot_height / 2 */
	unsigned max_ranges;    /* address ranges at most; 0: 24 */
	size_t max_allocs;      /* outlines drawn at most (those with the most faults); 0: 400 */
	uint64_t end_ns;        /* right end of the time axis; 0: the last fault or allocation event */
	double hot_phi;         /* φ of the hot ranges, named in the legend; 0: not named */
	const char *time_label; /* the time axis's title, before " (s)" (<text id="time-axis">); NULL:
	                         * "time since the recording started" */
};

struct heatmap_stats {
	size_t faults;
	size_t ranges;          /* address ranges on the axis */
	unsigned rows, columns;
	size_t cells;           /* non-empty cells */
	size_t rects;           /* rectangles drawn for them */
	size_t allocs_drawn;
	uint64_t pages_per_row, ns_per_column;
	uint64_t touched_pages;
	size_t hot_marks;       /* hot-range elements drawn */
};

/* Faults walked twice instead of held (memory: the distinct pages and the grid, not the faults):
 * heatmap_note_fault for every fault, then heatmap_layout (after the allocations and with the
 * options heatmap_write_svg will get), then heatmap_count_fault for the same faults again, then
 * heatmap_write_svg. heatmap_note_fault returns 0 or -1 (ENOMEM); heatmap_layout 0, or -1 with
 * errno (ENOMEM); heatmap_count_fault ignores a fault whose page was not noted. */
int heatmap_note_fault(struct heatmap *hm, uint64_t time_ns, uint64_t addr);
int heatmap_layout(struct heatmap *hm, const struct heatmap_options *opts);
void heatmap_count_fault(struct heatmap *hm, uint64_t time_ns, uint64_t addr, unsigned kind);

void heatmap_options_init(struct heatmap_options *opts);

/* Writes the SVG (an empty plot saying "no faults" when none were added). Returns 0, or -1 with
 * errno (ENOMEM); check ferror(out). STATS may be NULL. */
int heatmap_write_svg(struct heatmap *hm, const struct heatmap_options *opts, FILE *out, struct heatmap_stats *stats);

#endif
