/* heatmap.c: the address × time heatmap (heatmap.h).
 *
 * Follow heatmap_write_svg top to bottom: build the axis (distinct pages → runs → ranges → rows),
 * count faults into the row × column grid, then draw: background and title, cells row by row,
 * range boundaries, allocation outlines, axes, legend. */
#include "heatmap.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <faultline/trace.h>

#include "cli.h"
#include "svg.h"

struct hm_fault {
	uint64_t time_ns;
	uint64_t page;
	uint8_t kind;
};

struct hm_alloc {
	uint64_t start_ns, end_ns, addr, size, faults;
	char *label;
};

struct hm_hot {
	uint64_t lo, hi;   /* bytes, [lo, hi) */
	double percent;
	char *label;
};

/* An address range of the axis: pages [first, last], drawn as rows [row, row + nrows). */
struct hm_range {
	uint64_t first, last;
	unsigned row, nrows;
};

struct grid {
	unsigned rows, cols;
	uint32_t *ft, *rf, *other; /* rows × cols */
};

/* The distinct pages faulted: an open-addressing set (UINT64_MAX: an empty slot) and the list of
 * its members, in the order first seen. */
struct page_set {
	uint64_t *slots;
	size_t nslots;
	uint64_t *pages;
	size_t npages, cap;
};

/* What heatmap_layout decided: the axes and the grid the faults are counted into. */
struct layout {
	bool done;
	struct heatmap_options o;  /* with every default filled in */
	struct hm_range *ranges;
	size_t nranges;
	unsigned nrows;
	uint64_t ppr, end_ns, ns_per_col, touched;
	struct grid g;
	uint64_t max;              /* faults in the fullest cell */
};

struct heatmap {
	uint32_t page_size;
	unsigned page_shift;
	struct hm_fault *faults;   /* held by heatmap_add_fault (the one-pass use) */
	size_t nheld, cap;
	size_t nfaults;            /* every fault noted, held or not */
	uint64_t last_ns;          /* the latest fault time noted */
	struct page_set pages;
	struct hm_alloc *allocs;
	size_t nallocs, acap;
	struct hm_hot hot[HEATMAP_MAX_HOT];
	size_t nhot;
	struct layout lay;
};


struct heatmap *heatmap_new(uint32_t page_size)
{
	struct heatmap *hm = calloc(1, sizeof(*hm));

	if (!hm)
		return NULL;
	if (page_size == 0 || (page_size & (page_size - 1)))
		page_size = 4096;
	hm->page_size = page_size;
	while ((1u << hm->page_shift) < page_size)
		hm->page_shift++;
	return hm;
}

void heatmap_free(struct heatmap *hm)
{
	if (!hm)
		return;
	for (size_t i = 0; i < hm->nallocs; i++)
		free(hm->allocs[i].label);
	for (size_t i = 0; i < hm->nhot; i++)
		free(hm->hot[i].label);
	free(hm->allocs);
	free(hm->faults);
	free(hm->pages.slots);
	free(hm->pages.pages);
	free(hm->lay.ranges);
	free(hm->lay.g.ft);
	free(hm->lay.g.rf);
	free(hm->lay.g.other);
	free(hm);
}

/* The slot of PAGE in an open-addressing table of NSLOTS (a power of two): where it is, or the
 * empty slot (UINT64_MAX) where it goes. */
static size_t probe_slot(const uint64_t *slots, size_t nslots, uint64_t page)
{
	size_t s = (size_t)((page * 0x9e3779b97f4a7c15ull) >> 20) & (nslots - 1);
	while (slots[s] != UINT64_MAX && slots[s] != page)
		s = (s + 1) & (nslots - 1);
	return s;
}

/* Adds PAGE to the set (once). 0, or -1 (ENOMEM). */
static int page_set_add(struct page_set *ps, uint64_t page)
{
	if (ps->npages + 1 > ps->nslots / 2) { /* grow: at most half full */
		size_t nslots = ps->nslots ? ps->nslots * 2 : 1024;
		uint64_t *slots = malloc(nslots * sizeof(*slots));
		if (!slots)
			return -1;
		memset(slots, 0xff, nslots * sizeof(*slots));
		for (size_t i = 0; i < ps->npages; i++)
			slots[probe_slot(slots, nslots, ps->pages[i])] = ps->pages[i];
		free(ps->slots);
		ps->slots = slots;
		ps->nslots = nslots;
	}
	size_t s = probe_slot(ps->slots, ps->nslots, page);
	if (ps->slots[s] == page)
		return 0;
	if (ps->npages == ps->cap) {
		size_t cap = ps->cap ? ps->cap * 2 : 1024;
		uint64_t *p = realloc(ps->pages, cap * sizeof(*p));
		if (!p)
			return -1;
		ps->pages = p;
		ps->cap = cap;
	}
	ps->slots[s] = page;
	ps->pages[ps->npages++] = page;
	return 0;
}

static bool page_in_set(const struct page_set *ps, uint64_t page)
{
	return ps->nslots && ps->slots[probe_slot(ps->slots, ps->nslots, page)] == page;
}

int heatmap_note_fault(struct heatmap *hm, uint64_t time_ns, uint64_t addr)
{
	if (page_set_add(&hm->pages, addr >> hm->page_shift) < 0)
		return -1;
	hm->nfaults++;
	if (time_ns > hm->last_ns)
		hm->last_ns = time_ns;
	return 0;
}

int heatmap_add_fault(struct heatmap *hm, uint64_t time_ns, uint64_t addr, unsigned kind)
{
	if (hm->nheld == hm->cap) {
		size_t cap = hm->cap ? hm->cap * 2 : 4096;
		struct hm_fault *f = realloc(hm->faults, cap * sizeof(*f));
		if (!f)
			return -1;
		hm->faults = f;
		hm->cap = cap;
	}
	if (heatmap_note_fault(hm, time_ns, addr) < 0)
		return -1;
	hm->faults[hm->nheld++] = (struct hm_fault){ time_ns, addr >> hm->page_shift, (uint8_t)kind };
	return 0;
}

int heatmap_add_alloc(struct heatmap *hm, uint64_t start_ns, uint64_t end_ns, uint64_t addr, uint64_t size,
		      uint64_t faults, const char *label)
{
	if (size == 0)
		return 0;
	if (hm->nallocs == hm->acap) {
		size_t cap = hm->acap ? hm->acap * 2 : 64;
		struct hm_alloc *a = realloc(hm->allocs, cap * sizeof(*a));
		if (!a)
			return -1;
		hm->allocs = a;
		hm->acap = cap;
	}
	hm->allocs[hm->nallocs] = (struct hm_alloc){ start_ns, end_ns < start_ns ? start_ns : end_ns, addr, size,
						     faults, NULL };
	if (label && !(hm->allocs[hm->nallocs].label = strdup(label)))
		return -1;
	hm->nallocs++;
	return 0;
}

int heatmap_add_hot_range(struct heatmap *hm, uint64_t lo, uint64_t hi, double percent, const char *label)
{
	if (hi <= lo || hm->nhot == HEATMAP_MAX_HOT)
		return 0;
	hm->hot[hm->nhot] = (struct hm_hot){ lo, hi, percent, NULL };
	if (label && !(hm->hot[hm->nhot].label = strdup(label)))
		return -1;
	hm->nhot++;
	return 0;
}

void heatmap_options_init(struct heatmap_options *o)
{
	memset(o, 0, sizeof(*o));
	o->plot_width = 840;
	o->plot_height = 512;
	o->max_ranges = 24;
	o->max_allocs = 400;
}

/* ------------------------------------------------------------------ the address axis */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* A copy of the distinct pages of the faults (unsorted). NULL on ENOMEM. */
static uint64_t *distinct_pages(const struct heatmap *hm, size_t *n)
{
	uint64_t *out = malloc((hm->pages.npages + 1) * sizeof(*out));
	if (!out)
		return NULL;
	if (hm->pages.npages)
		memcpy(out, hm->pages.pages, hm->pages.npages * sizeof(*out));
	*n = hm->pages.npages;
	return out;
}

/* The ranges of the axis for the faults' pages: at most MAX_RANGES, rows assigned with every row
 * PAGES_PER_ROW pages. Returns the number of ranges (0 on ENOMEM, errno set). */
static size_t build_ranges(const struct heatmap *hm, unsigned max_ranges, unsigned max_rows, struct hm_range **out,
			   uint64_t *pages_per_row, unsigned *nrows, uint64_t *touched)
{
	size_t n = 0;
	uint64_t *pages = distinct_pages(hm, &n), *gaps, threshold = 0, total = 0, ppr;
	struct hm_range *r;
	size_t nr = 0, ngaps;
	unsigned row = 0;

	if (!pages)
		return 0;
	qsort(pages, n, sizeof(*pages), cmp_u64);
	*touched = n;
	/* Gaps between consecutive runs of pages; join across the smallest ones when too many runs. */
	gaps = malloc((n + 1) * sizeof(*gaps));
	if (!gaps) {
		free(pages);
		return 0;
	}
	ngaps = 0;
	for (size_t i = 1; i < n; i++) {
		if (pages[i] != pages[i - 1] + 1)
			gaps[ngaps++] = pages[i] - pages[i - 1] - 1;
	}
	if (ngaps + 1 > max_ranges) {
		qsort(gaps, ngaps, sizeof(*gaps), cmp_u64);
		threshold = gaps[ngaps - max_ranges]; /* joining every gap up to this leaves < max_ranges runs */
	} else {
		threshold = 0;
	}
	r = malloc((n ? n : 1) * sizeof(*r));
	if (!r) {
		free(gaps);
		free(pages);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		bool join = nr > 0 && (pages[i] == r[nr - 1].last + 1 ||
				       (threshold > 0 && pages[i] - r[nr - 1].last - 1 <= threshold));
		if (join) {
			r[nr - 1].last = pages[i];
		} else {
			r[nr++] = (struct hm_range){ pages[i], pages[i], 0, 0 };
		}
	}
	free(gaps);
	free(pages);
	/* Rows: pages per row so that every range fits with at least one row each. */
	for (size_t i = 0; i < nr; i++)
		total += r[i].last - r[i].first + 1;
	if (max_rows <= nr)
		max_rows = (unsigned)nr + 1;
	ppr = (total + (max_rows - nr) - 1) / (max_rows - nr);
	if (ppr == 0)
		ppr = 1;
	for (size_t i = 0; i < nr; i++) {
		uint64_t pages_in = r[i].last - r[i].first + 1;
		r[i].row = row;
		r[i].nrows = (unsigned)((pages_in + ppr - 1) / ppr);
		row += r[i].nrows;
	}
	*out = r;
	*pages_per_row = ppr;
	*nrows = row;
	return nr;
}

/* The range holding PAGE (which must be in one), by binary search. */
static const struct hm_range *find_range(const struct hm_range *r, size_t n, uint64_t page)
{
	size_t lo = 0, hi = n;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (r[mid].first <= page)
			lo = mid;
		else
			hi = mid;
	}
	return &r[lo];
}

/* ------------------------------------------------------------------ colours */

#define LEVELS 8
#define MIN_OUTLINE_PX 3.0  /* allocations drawn at least this tall on the address axis */

/* Colour of a cell: LEVEL 1..LEVELS (count, log scale), SHARE 0..4 (refault share in quarters),
 * or grey when only soft/concurrent faults (share < 0). */
static void cell_color(int level, int share, char buf[8])
{
	double l = 0.88 - 0.56 * (level - 1) / (LEVELS - 1);

	if (share < 0) {
		unsigned v = (unsigned)lround((0.85 - 0.5 * (level - 1) / (LEVELS - 1)) * 255);
		snprintf(buf, 8, "#%02x%02x%02x", v, v, v);
		return;
	}
	svg_color_hsl(215 + 40 * share, 0.80, l, buf); /* 215 blue, 255, 295 purple, 335, 375 = 15 orange */
}

static int cell_level(uint64_t n, uint64_t max)
{
	int level;
	if (n == 0)
		return 0;
	if (max <= 1)
		return LEVELS;
	level = 1 + (int)floor((LEVELS - 1) * log((double)n) / log((double)max) + 1e-9);
	return level > LEVELS ? LEVELS : level;
}

static int cell_share(uint64_t ft, uint64_t rf)
{
	if (ft + rf == 0)
		return -1;
	return (int)lround(4.0 * (double)rf / (double)(ft + rf));
}

/* ------------------------------------------------------------------ drawing */

#define LEFT 150    /* room for hex addresses */
#define TOP 64
#define BOTTOM 64
#define LEGEND 340      /* its widest line: a hot range, "H9 0x7f0000000000-0x7f0000000000 99.99%" */
#define AXIS_LABEL_PX 48 /* address labels down a tall range */

static void put_time(FILE *out, double seconds)
{
	char buf[32];
	double a = fabs(seconds);
	int decimals = a == 0 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : a >= 0.1 ? 3 : a >= 0.01 ? 4 : 6;
	fprintf(out, "%s", svg_num(buf, seconds, decimals));
}

/* A duration for people: "547 µs", "12.3 ms", "1.25 s". */
static void put_duration(FILE *out, uint64_t ns)
{
	char buf[32];
	if (ns < 1000000)
		fprintf(out, "%s µs", svg_num(buf, ns / 1e3, ns < 10000 ? 2 : 0));
	else if (ns < 1000000000)
		fprintf(out, "%s ms", svg_num(buf, ns / 1e6, ns < 10000000 ? 2 : 1));
	else
		fprintf(out, "%s s", svg_num(buf, ns / 1e9, 2));
}

/* A "nice" tick step (1, 2 or 5 × 10^k) giving about TARGET ticks over SPAN. */
static double nice_step(double span, int target)
{
	double raw = span / target, mag = pow(10, floor(log10(raw))), f = raw / mag;
	return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

static void draw_cells(FILE *out, const struct heatmap *hm, const struct grid *g, const struct hm_range *ranges,
		       size_t nranges, uint64_t ppr, uint64_t ns_per_col, double row_h, double col_w,
		       uint64_t max, bool titles, struct heatmap_stats *st)
{
	char b1[32], b2[32], b3[32], b4[32], color[8], prev_color[8];

	fprintf(out, "<g id=\"cells\" data-x0=\"%d\" data-ns-per-px=\"%s\" data-page-size=\"%u\">\n", LEFT,
		svg_num(b1, ns_per_col / col_w, 3), hm->page_size);
	for (size_t ri = 0; ri < nranges; ri++) {
		const struct hm_range *r = &ranges[ri];
		for (unsigned k = 0; k < r->nrows; k++) {
			unsigned row = r->row + k;
			uint64_t lo = (r->first + k * ppr) << 0, hi = lo + ppr;
			uint64_t row_faults = 0, row_ft = 0, row_rf = 0;
			bool opened = false;
			unsigned c = 0;

			if (hi > r->last + 1)
				hi = r->last + 1;
			for (unsigned j = 0; j < g->cols; j++) {
				size_t i = (size_t)row * g->cols + j;
				row_ft += g->ft[i];
				row_rf += g->rf[i];
				row_faults += g->ft[i] + g->rf[i] + g->other[i];
			}
			if (row_faults == 0)
				continue;
			fprintf(out, "<g class=\"row\" data-lo=\"0x%" PRIx64 "\" data-hi=\"0x%" PRIx64 "\">",
				lo << hm->page_shift, hi << hm->page_shift);
			fprintf(out, "<title>0x%" PRIx64 "-0x%" PRIx64 ": %" PRIu64 " faults (%" PRIu64 " first-touch, %"
				PRIu64 " refault)</title>", lo << hm->page_shift, hi << hm->page_shift, row_faults, row_ft,
				row_rf);
			opened = true;
			/* Runs of cells of one colour. */
			while (c < g->cols) {
				size_t i = (size_t)row * g->cols + c;
				uint64_t n = (uint64_t)g->ft[i] + g->rf[i] + g->other[i], run_ft = 0, run_rf = 0, run_n = 0;
				unsigned start = c;
				if (n == 0) {
					c++;
					continue;
				}
				cell_color(cell_level(n, max), cell_share(g->ft[i], g->rf[i]), prev_color);
				while (c < g->cols) {
					size_t k2 = (size_t)row * g->cols + c;
					uint64_t n2 = (uint64_t)g->ft[k2] + g->rf[k2] + g->other[k2];
					if (n2 == 0)
						break;
					cell_color(cell_level(n2, max), cell_share(g->ft[k2], g->rf[k2]), color);
					if (strcmp(color, prev_color) != 0)
						break;
					run_ft += g->ft[k2];
					run_rf += g->rf[k2];
					run_n += n2;
					st->cells++;
					c++;
				}
				fprintf(out, "<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" fill=\"%s\">",
					svg_num(b1, LEFT + start * col_w, 2), svg_num(b2, TOP + row * row_h, 2),
					svg_num(b3, (c - start) * col_w, 2), svg_num(b4, row_h, 2), prev_color);
				if (titles) {
					fputs("<title>", out);
					put_time(out, start * (double)ns_per_col / 1e9);
					fputs("-", out);
					put_time(out, c * (double)ns_per_col / 1e9);
					fprintf(out, " s: %" PRIu64 " faults (%" PRIu64 " first-touch, %" PRIu64 " refault)</title>",
						run_n, run_ft, run_rf);
				}
				fputs("</rect>", out);
				st->rects++;
			}
			if (opened)
				fputs("</g>\n", out);
		}
	}
	fputs("</g>\n", out);
}

static void draw_allocs(FILE *out, const struct heatmap *hm, const struct hm_range *ranges, size_t nranges,
			uint64_t ppr, double row_h, double ns_per_px, uint64_t end_ns, size_t max_allocs,
			struct heatmap_stats *st)
{
	struct hm_alloc **order = malloc((hm->nallocs + 1) * sizeof(*order));
	char b1[32], b2[32], b3[32], b4[32], size_buf[32];
	size_t n = 0;

	if (!order)
		return;
	for (size_t i = 0; i < hm->nallocs; i++) {
		if (hm->allocs[i].faults > 0)
			order[n++] = &hm->allocs[i];
	}
	/* The allocations that took the most faults (selection by repeated max: max_allocs is small). */
	for (size_t k = 0; k < n && k < max_allocs; k++) {
		size_t best = k;
		for (size_t i = k + 1; i < n; i++) {
			if (order[i]->faults > order[best]->faults)
				best = i;
		}
		struct hm_alloc *t = order[k];
		order[k] = order[best];
		order[best] = t;
	}
	if (n > max_allocs)
		n = max_allocs;
	fputs("<g id=\"allocs\" fill=\"none\" stroke=\"#138a36\" stroke-width=\"1.2\">\n", out);
	for (size_t k = 0; k < n; k++) {
		const struct hm_alloc *a = order[k];
		uint64_t first = a->addr >> hm->page_shift, last = (a->addr + a->size - 1) >> hm->page_shift;
		uint64_t t1 = a->end_ns > end_ns ? end_ns : a->end_ns;
		double x0 = LEFT + a->start_ns / ns_per_px, x1 = LEFT + t1 / ns_per_px;
		bool drawn = false;

		if (x1 - x0 < 1)
			x1 = x0 + 1;
		for (size_t ri = 0; ri < nranges; ri++) {
			const struct hm_range *r = &ranges[ri];
			uint64_t lo = first > r->first ? first : r->first, hi = last < r->last ? last : r->last;
			double y0, y1;
			if (lo > hi)
				continue;
			y0 = TOP + (r->row + (double)(lo - r->first) / ppr) * row_h;
			y1 = TOP + (r->row + (double)(hi + 1 - r->first) / ppr) * row_h;
			/* An object thinner than MIN_OUTLINE_PX would be a smear of lines over the cells
			 * (thousands of small objects share a row): its row's tooltip is enough. */
			if (y1 - y0 < MIN_OUTLINE_PX)
				continue;
			fprintf(out, "<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\"><title>", svg_num(b1, x0, 2),
				svg_num(b2, y0, 2), svg_num(b3, x1 - x0, 2), svg_num(b4, y1 - y0, 2));
			svg_escape(out, a->label ? a->label : "allocation", (size_t)-1);
			fprintf(out, ": %s at 0x%" PRIx64 ", ", cli_format_size(a->size, size_buf, sizeof(size_buf)), a->addr);
			put_time(out, a->start_ns / 1e9);
			if (a->end_ns == UINT64_MAX) { /* never freed: live until the process ended */
				fputs(" s to exit", out);
			} else {
				fputs("-", out);
				put_time(out, a->end_ns / 1e9);
				fputs(" s", out);
			}
			fprintf(out, ", %" PRIu64 " faults</title></rect>\n", a->faults);
			drawn = true;
		}
		st->allocs_drawn += drawn;
	}
	fputs("</g>\n", out);
	free(order);
}

/* ------------------------------------------------------------------ hot ranges */

#define HOT_FILL "#ffb000"
#define HOT_STROKE "#d26a00"
#define HOT_X 24      /* the brackets' spine, left of the address labels (and right of the axis title) */

/* The hot ranges where they meet the drawn rows: per axis range met, a band over the plot and a
 * bracket on the left edge; the label "H<rank>" at the tallest part. ROW_FAULTS: faults per row. */
static void draw_hot(FILE *out, const struct heatmap *hm, const struct hm_range *ranges, size_t nranges,
		     const uint64_t *row_faults, uint64_t ppr, double row_h, unsigned plot_w, struct heatmap_stats *st)
{
	char b1[32], b2[32], b3[32], size_buf[32];

	fputs("<g id=\"hot-ranges\">\n", out);
	for (size_t h = 0; h < hm->nhot; h++) {
		const struct hm_hot *hot = &hm->hot[h];
		uint64_t first = hot->lo >> hm->page_shift, last = (hot->hi - 1) >> hm->page_shift;
		double best_h = -1, label_y = 0;

		for (size_t ri = 0; ri < nranges; ri++) {
			const struct hm_range *r = &ranges[ri];
			uint64_t a = first > r->first ? first : r->first, b = last < r->last ? last : r->last;
			double y0, y1;
			if (a > b)
				continue;
			/* Only rows that hold faults are drawn: move both ends into such rows. */
			uint64_t ra = (a - r->first) / ppr, rb = (b - r->first) / ppr, ra0 = ra, rb0 = rb;
			while (ra <= rb && !row_faults[r->row + ra])
				ra++;
			while (rb > ra && !row_faults[r->row + rb])
				rb--;
			if (ra > rb)
				continue;
			if (ra != ra0)
				a = r->first + ra * ppr;
			if (rb != rb0)
				b = r->first + (rb + 1) * ppr - 1;
			y0 = TOP + (r->row + (double)(a - r->first) / ppr) * row_h;
			y1 = TOP + (r->row + (double)(b + 1 - r->first) / ppr) * row_h;
			if (y1 - y0 < 2) { /* at least 2 px, centred on the range */
				double mid = (y0 + y1) / 2;
				y0 = mid - 1;
				y1 = mid + 1;
			}
			fprintf(out, "<g class=\"hot-range\" data-rank=\"%zu\" data-lo=\"0x%" PRIx64 "\" data-hi=\"0x%" PRIx64
				"\" data-range-lo=\"0x%" PRIx64 "\" data-range-hi=\"0x%" PRIx64 "\" data-percent=\"%.2f\">",
				h + 1, a << hm->page_shift, (b + 1) << hm->page_shift, hot->lo, hot->hi, hot->percent);
			fprintf(out, "<title>hot range H%zu: 0x%" PRIx64 "-0x%" PRIx64 " (%s), %.2f%% of the faults", h + 1,
				hot->lo, hot->hi, cli_format_size(hot->hi - hot->lo, size_buf, sizeof(size_buf)), hot->percent);
			if (hot->label) {
				fputs(": ", out);
				svg_escape(out, hot->label, (size_t)-1);
			}
			fputs("</title>", out);
			fprintf(out, "<rect x=\"%d\" y=\"%s\" width=\"%u\" height=\"%s\" fill=\"" HOT_FILL "\" fill-opacity=\"0.13\""
				" stroke=\"" HOT_STROKE "\" stroke-opacity=\"0.7\" stroke-dasharray=\"3 2\" pointer-events=\"none\"/>",
				LEFT, svg_num(b1, y0, 2), plot_w, svg_num(b2, y1 - y0, 2));
			fprintf(out, "<path d=\"M%d %sH%dV%sH%d\" fill=\"none\" stroke=\"" HOT_STROKE "\" stroke-width=\"2\"/>",
				HOT_X + 6, svg_num(b1, y0 + 0.5, 2), HOT_X, svg_num(b2, y1 - 0.5, 2), HOT_X + 6);
			fputs("</g>\n", out);
			st->hot_marks++;
			if (y1 - y0 > best_h) {
				best_h = y1 - y0;
				label_y = (y0 + y1) / 2;
			}
		}
		if (best_h >= 0)
			fprintf(out, "<text class=\"hot-range-label\" x=\"%d\" y=\"%s\" font-size=\"9\" fill=\"" HOT_STROKE
				"\" font-weight=\"bold\">H%zu</text>\n", HOT_X + 8, svg_num(b3, label_y + 3, 2), h + 1);
	}
	fputs("</g>\n", out);
}

static void draw_axes(FILE *out, const struct heatmap *hm, const struct hm_range *ranges, size_t nranges,
		      double row_h, uint64_t ppr, unsigned plot_w, unsigned plot_h, uint64_t end_ns, const char *time_label)
{
	char b1[32], b2[32];
	double last_label_y = -100, step, span = end_ns / 1e9;

	/* Range boundaries (removed gaps) and address labels. */
	fputs("<g id=\"yaxis\" font-size=\"10\" text-anchor=\"end\">\n", out);
	for (size_t ri = 0; ri < nranges; ri++) {
		const struct hm_range *r = &ranges[ri];
		double y = TOP + r->row * row_h;
		if (ri > 0) {
			uint64_t gap = (r->first - ranges[ri - 1].last - 1) << hm->page_shift;
			char gap_buf[32];
			fprintf(out, "<line x1=\"%d\" x2=\"%u\" y1=\"%s\" y2=\"%s\" stroke=\"#888\" stroke-dasharray=\"4 2\">"
				"<title>gap of %s not drawn</title></line>\n", LEFT - 4, LEFT + plot_w, svg_num(b1, y, 2),
				svg_num(b2, y, 2), cli_format_size(gap, gap_buf, sizeof(gap_buf)));
		}
		/* the range's first address, then one label every AXIS_LABEL_PX down the range */
		for (unsigned k = 0; k * AXIS_LABEL_PX < r->nrows * row_h; k++) {
			double ly = y + k * AXIS_LABEL_PX;
			if (ly - last_label_y < 12 || ly + 9 > y + r->nrows * row_h + 1)
				continue;
			uint64_t page = r->first + (uint64_t)((ly - y) / row_h * ppr);
			fprintf(out, "<text x=\"%d\" y=\"%s\">0x%" PRIx64 "</text>\n", LEFT - 6, svg_num(b1, ly + 9, 2),
				page << hm->page_shift);
			last_label_y = ly;
		}
	}
	fputs("</g>\n", out);
	fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%u\" height=\"%u\" fill=\"none\" stroke=\"#444\"/>\n", LEFT, TOP,
		plot_w, plot_h);
	/* Time ticks. */
	fputs("<g id=\"xaxis\" font-size=\"10\" text-anchor=\"middle\">\n", out);
	if (span > 0) {
		step = nice_step(span, 8);
		for (int i = 0; i * step <= span * 1.0000001; i++) {
			double x = LEFT + plot_w * (i * step) / span;
			fprintf(out, "<line x1=\"%s\" x2=\"%s\" y1=\"%u\" y2=\"%u\" stroke=\"#444\"/>", svg_num(b1, x, 2),
				svg_num(b2, x, 2), TOP + plot_h, TOP + plot_h + 4);
			fprintf(out, "<text x=\"%s\" y=\"%u\">", svg_num(b1, x, 2), TOP + plot_h + 16);
			put_time(out, i * step);
			fputs("</text>\n", out);
		}
	}
	fputs("</g>\n", out);
	fprintf(out, "<text id=\"time-axis\" x=\"%s\" y=\"%u\" text-anchor=\"middle\">",
		svg_num(b1, LEFT + plot_w / 2.0, 1), TOP + plot_h + 36);
	svg_escape(out, time_label ? time_label : "time since the recording started", (size_t)-1);
	fputs(" (s)</text>\n", out);
	fprintf(out, "<text transform=\"translate(14,%s) rotate(-90)\" text-anchor=\"middle\">"
		"address (touched ranges only; dashed lines mark removed gaps)</text>\n", svg_num(b1, TOP + plot_h / 2.0, 1));
}

static void draw_legend(FILE *out, const struct heatmap *hm, unsigned x, unsigned y_end, double hot_phi,
			uint64_t max, uint64_t ppr, uint32_t page_size, uint64_t ns_per_col)
{
	char color[8], b1[32];
	static const char *const names[3] = { "first-touch", "mixed", "refault" };
	static const int shares[3] = { 0, 2, 4 };
	unsigned y = TOP;

	fprintf(out, "<g id=\"legend\" font-size=\"11\">\n<text x=\"%u\" y=\"%u\" font-weight=\"bold\">faults per cell</text>\n",
		x, y);
	y += 10;
	for (int k = 0; k < 3; k++) {
		for (int level = 1; level <= LEVELS; level++) {
			cell_color(level, shares[k], color);
			fprintf(out, "<rect x=\"%u\" y=\"%u\" width=\"14\" height=\"12\" fill=\"%s\"/>", x + (level - 1) * 14,
				y, color);
		}
		fprintf(out, "<text x=\"%u\" y=\"%u\">%s</text>\n", x + LEVELS * 14 + 6, y + 10, names[k]);
		y += 16;
	}
	for (int level = 1; level <= LEVELS; level++) {
		cell_color(level, -1, color);
		fprintf(out, "<rect x=\"%u\" y=\"%u\" width=\"14\" height=\"12\" fill=\"%s\"/>", x + (level - 1) * 14, y,
			color);
	}
	fprintf(out, "<text x=\"%u\" y=\"%u\">soft/concurrent/access</text>\n", x + LEVELS * 14 + 6, y + 10);
	y += 28;
	fprintf(out, "<text x=\"%u\" y=\"%u\">1</text><text x=\"%u\" y=\"%u\" text-anchor=\"end\">%" PRIu64
		"</text><text x=\"%u\" y=\"%u\" fill=\"#555\">(log scale)</text>\n",
		x, y - 4, x + LEVELS * 14, y - 4, max, x + LEVELS * 14 + 6, y - 4);
	y += 16;
	fprintf(out, "<rect x=\"%u\" y=\"%u\" width=\"28\" height=\"12\" fill=\"none\" stroke=\"#138a36\" stroke-width=\"1.2\"/>"
		"<text x=\"%u\" y=\"%u\">allocation lifetime</text>\n", x, y, x + 34, y + 10);
	y += 20;
	fprintf(out, "<line x1=\"%u\" x2=\"%u\" y1=\"%u\" y2=\"%u\" stroke=\"#888\" stroke-dasharray=\"4 2\"/>"
		"<text x=\"%u\" y=\"%u\">removed address gap</text>\n", x, x + 28, y + 6, y + 6, x + 34, y + 10);
	y += 28;
	fprintf(out, "<text x=\"%u\" y=\"%u\">cell: %s × ", x, y, cli_format_size(ppr * page_size, b1, sizeof(b1)));
	put_duration(out, ns_per_col);
	fputs("</text>\n", out);
	if (hm->nhot) {
		y += 22;
		fprintf(out, "<rect x=\"%u\" y=\"%u\" width=\"28\" height=\"12\" fill=\"" HOT_FILL "\" fill-opacity=\"0.13\""
			" stroke=\"" HOT_STROKE "\" stroke-opacity=\"0.7\" stroke-dasharray=\"3 2\"/><path d=\"M%u %uH%uV%uH%u\""
			" fill=\"none\" stroke=\"" HOT_STROKE "\" stroke-width=\"2\"/><text x=\"%u\" y=\"%u\">hot address range",
			x, y, x + 6, y + 1, x + 1, y + 11, x + 6, x + 34, y + 10);
		if (hot_phi > 0)
			fprintf(out, " (RAP, φ %s)", svg_num(b1, hot_phi, 3));
		fputs("</text>\n", out);
		y += 14;
		for (size_t h = 0; h < hm->nhot && y + 14 <= y_end; h++) {
			y += 13;
			fprintf(out, "<text class=\"hot-range-legend\" x=\"%u\" y=\"%u\" font-size=\"9\">"
				"<tspan fill=\"" HOT_STROKE "\" font-weight=\"bold\">H%zu</tspan> 0x%" PRIx64 "-0x%" PRIx64 " %.2f%%</text>\n",
				x, y, h + 1, hm->hot[h].lo, hm->hot[h].hi, hm->hot[h].percent);
		}
	}
	fputs("</g>\n", out);
}

/* The cell of a fault at TIME_NS on PAGE (which must be on the axis); false after the axis's end
 * (an explicit end_ns). */
static bool cell_of(const struct layout *lay, uint64_t time_ns, uint64_t page, size_t *cell)
{
	const struct hm_range *r = find_range(lay->ranges, lay->nranges, page);
	unsigned row = r->row + (unsigned)((page - r->first) / lay->ppr);
	uint64_t col = time_ns / lay->ns_per_col;
	if (col >= lay->g.cols)
		return false;
	*cell = (size_t)row * lay->g.cols + col;
	return true;
}

static void count_in_cell(struct layout *lay, uint64_t time_ns, uint64_t page, unsigned kind)
{
	struct grid *g = &lay->g;
	size_t cell;
	if (!cell_of(lay, time_ns, page, &cell))
		return;
	if (kind == FL_FAULT_FIRST_TOUCH)
		g->ft[cell]++;
	else if (kind == FL_FAULT_REFAULT)
		g->rf[cell]++;
	else
		g->other[cell]++;
	if ((uint64_t)g->ft[cell] + g->rf[cell] + g->other[cell] > lay->max)
		lay->max = (uint64_t)g->ft[cell] + g->rf[cell] + g->other[cell];
}

void heatmap_count_fault(struct heatmap *hm, uint64_t time_ns, uint64_t addr, unsigned kind)
{
	uint64_t page = addr >> hm->page_shift;
	if (hm->lay.done && hm->lay.nranges && page_in_set(&hm->pages, page))
		count_in_cell(&hm->lay, time_ns, page, kind);
}

int heatmap_layout(struct heatmap *hm, const struct heatmap_options *opts)
{
	struct layout *lay = &hm->lay;
	struct heatmap_options o;

	if (lay->done)
		return 0;
	heatmap_options_init(&o);
	if (opts)
		o = *opts;
	if (!o.plot_width)
		o.plot_width = 840;
	if (!o.plot_height)
		o.plot_height = 512;
	if (o.plot_width > 16000)
		o.plot_width = 16000;
	if (o.plot_height > 16000)
		o.plot_height = 16000;
	if (!o.columns)
		o.columns = o.plot_width / 3;
	if (o.columns > o.plot_width)
		o.columns = o.plot_width;
	if (!o.rows)
		o.rows = o.plot_height / 2;
	if (o.rows > o.plot_height)
		o.rows = o.plot_height;
	if (!o.max_ranges)
		o.max_ranges = 24;
	if (o.max_ranges > o.rows / 2)
		o.max_ranges = o.rows / 2 ? o.rows / 2 : 1;
	if (!o.max_allocs)
		o.max_allocs = 400;
	lay->o = o;

	uint64_t end_ns = hm->last_ns;
	if (o.end_ns)
		end_ns = o.end_ns;
	else
		for (size_t i = 0; i < hm->nallocs; i++)
			if (hm->allocs[i].faults && hm->allocs[i].end_ns > end_ns && hm->allocs[i].end_ns != UINT64_MAX)
				end_ns = hm->allocs[i].end_ns;
	end_ns += 1;
	lay->ns_per_col = (end_ns + o.columns - 1) / o.columns;
	if (lay->ns_per_col == 0)
		lay->ns_per_col = 1;
	lay->end_ns = lay->ns_per_col * o.columns; /* the axis ends where the last column does */
	lay->ppr = 1;

	if (hm->nfaults) {
		struct grid *g = &lay->g;
		lay->nranges = build_ranges(hm, o.max_ranges, o.rows, &lay->ranges, &lay->ppr, &lay->nrows, &lay->touched);
		if (lay->nranges == 0)
			goto nomem;
		g->rows = lay->nrows;
		g->cols = o.columns;
		g->ft = calloc((size_t)g->rows * g->cols, sizeof(uint32_t));
		g->rf = calloc((size_t)g->rows * g->cols, sizeof(uint32_t));
		g->other = calloc((size_t)g->rows * g->cols, sizeof(uint32_t));
		if (!g->ft || !g->rf || !g->other)
			goto nomem;
		for (size_t i = 0; i < hm->nheld; i++) /* the one-pass use: the faults held */
			count_in_cell(lay, hm->faults[i].time_ns, hm->faults[i].page, hm->faults[i].kind);
	}
	lay->done = true;
	return 0;
nomem:
	free(lay->ranges);
	free(lay->g.ft);
	free(lay->g.rf);
	free(lay->g.other);
	memset(lay, 0, sizeof(*lay));
	errno = ENOMEM;
	return -1;
}

int heatmap_write_svg(struct heatmap *hm, const struct heatmap_options *opts, FILE *out, struct heatmap_stats *stats)
{
	struct heatmap_stats local;
	struct heatmap_stats *st = stats ? stats : &local;
	unsigned width, height;
	double row_h, col_w;
	char b1[32];

	if (heatmap_layout(hm, opts) < 0)
		return -1;
	const struct heatmap_options o = hm->lay.o;
	const struct hm_range *ranges = hm->lay.ranges;
	const struct grid g = hm->lay.g;
	size_t nranges = hm->lay.nranges;
	unsigned nrows = hm->lay.nrows;
	uint64_t ppr = hm->lay.ppr, max = hm->lay.max, ns_per_col = hm->lay.ns_per_col, end_ns = hm->lay.end_ns;
	memset(st, 0, sizeof(*st));
	st->faults = hm->nfaults;
	st->touched_pages = hm->lay.touched;
	st->ranges = nranges;
	st->rows = nrows;
	st->columns = o.columns;
	st->pages_per_row = ppr;
	st->ns_per_column = ns_per_col;
	row_h = nrows ? (double)o.plot_height / nrows : o.plot_height;
	col_w = (double)o.plot_width / o.columns;
	width = LEFT + o.plot_width + 20 + LEGEND;
	height = TOP + o.plot_height + BOTTOM;

	svg_begin(out, width, height);
	fputs("<style type=\"text/css\">text { font-family: Verdana, 'DejaVu Sans', sans-serif; font-size: 12px; }"
	      " #cells rect:hover { stroke: #000; stroke-width: 0.5; } #allocs rect:hover { stroke-width: 2.5; }</style>\n",
	      out);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"#fcfcfc\"/>\n", width, height);
	fprintf(out, "<text x=\"%s\" y=\"24\" text-anchor=\"middle\" font-size=\"17\">", svg_num(b1, width / 2.0, 1));
	svg_escape(out, o.title ? o.title : "Page faults by address and time", (size_t)-1);
	fputs("</text>\n", out);
	if (o.subtitle) {
		fprintf(out, "<text x=\"%s\" y=\"44\" text-anchor=\"middle\" fill=\"#555\">", svg_num(b1, width / 2.0, 1));
		svg_escape(out, o.subtitle, (size_t)-1);
		fputs("</text>\n", out);
	}
	if (hm->nfaults == 0) {
		fprintf(out, "<text x=\"%s\" y=\"%u\" text-anchor=\"middle\">no faults</text>\n",
			svg_num(b1, LEFT + o.plot_width / 2.0, 1), TOP + o.plot_height / 2);
	} else {
		double ns_per_px = (double)ns_per_col / col_w;
		size_t cells_estimate = 0;
		for (size_t i = 0; i < (size_t)g.rows * g.cols; i++)
			cells_estimate += g.ft[i] || g.rf[i] || g.other[i];
		draw_cells(out, hm, &g, ranges, nranges, ppr, ns_per_col, row_h, col_w, max, cells_estimate <= 20000, st);
		draw_allocs(out, hm, ranges, nranges, ppr, row_h, ns_per_px, end_ns, o.max_allocs, st);
		if (hm->nhot) {
			uint64_t *row_faults = calloc(g.rows + 1, sizeof(*row_faults));
			if (!row_faults)
				goto nomem;
			for (size_t i = 0; i < (size_t)g.rows * g.cols; i++)
				row_faults[i / g.cols] += (uint64_t)g.ft[i] + g.rf[i] + g.other[i];
			draw_hot(out, hm, ranges, nranges, row_faults, ppr, row_h, o.plot_width, st);
			free(row_faults);
		}
	}
	draw_axes(out, hm, ranges, nranges, row_h, ppr, o.plot_width, o.plot_height, end_ns, o.time_label);
	draw_legend(out, hm, LEFT + o.plot_width + 20, TOP + o.plot_height + BOTTOM - 8, o.hot_phi, max, ppr,
		    hm->page_size, ns_per_col);
	svg_end(out);
	return 0;
nomem:
	errno = ENOMEM;
	return -1;
}
