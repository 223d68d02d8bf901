/* test_flamegraph.c: the flame graph tree (tools/analyze/flame_tree.c), its folded output and its
 * SVG (tools/render/flamegraph.c), and the SVG helpers (tools/render/svg.c), on synthetic stacks:
 *   - folded lines: one per distinct stack, root first, sorted, counts summing to the total;
 *     ';' and control characters in names replaced so every line splits back into its frames;
 *   - SVG: well-formed XML (a small checker here: balanced tags, quoted attributes, known
 *     entities, CDATA), hostile names escaped, invalid UTF-8 replaced; a frame's width is its
 *     count × (width − 2·xpad) / total within 0.01 px; no frame narrower than the minimum width;
 *     narrow siblings merged into "[N more < W px]"; --inverted puts the root on top; the canvas
 *     stays below 32,767 px for a 3,000-deep stack;
 *   - top-N and reversed trees keep the total;
 *   - size and speed: 100,000 distinct stacks (a tree of over 10^6 nodes) give an SVG of at most
 *     2 MB at the default minimum width, written in well under a second (times printed); 1,000
 *     deep stacks up to 2 px wide each make the minimum width rise to stay within max_frames and
 *     the size budget. */
#include "flamegraph.h"
#include "svg.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------ output capture */

struct capture {
	char *buf;
	size_t len;
	FILE *f;
};

static void cap_open(struct capture *c)
{
	c->buf = NULL;
	c->len = 0;
	c->f = open_memstream(&c->buf, &c->len);
	if (!c->f) {
		perror("open_memstream");
		exit(2);
	}
}

static void cap_close(struct capture *c)
{
	fclose(c->f);
	c->f = NULL;
}

/* ------------------------------------------------------------------ a small XML checker */

/* Returns NULL when TEXT is well-formed (for what our writers emit), else what is wrong. */
static const char *xml_check(const char *s, size_t *where)
{
	static char why[256];
	const char *p = s, *stack[256];
	size_t stack_len[256];
	int depth = 0, roots = 0;

	while (*p) {
		if (*p == '<') {
			if (strncmp(p, "<?", 2) == 0) {
				const char *e = strstr(p, "?>");
				if (!e)
					goto bad_pi;
				p = e + 2;
				continue;
			}
			if (strncmp(p, "<![CDATA[", 9) == 0) {
				const char *e = strstr(p, "]]>");
				if (!e || depth == 0)
					goto bad_cdata;
				p = e + 3;
				continue;
			}
			if (strncmp(p, "<!--", 4) == 0) {
				const char *e = strstr(p, "-->");
				if (!e)
					goto bad_comment;
				p = e + 3;
				continue;
			}
			if (p[1] == '/') {
				const char *name = p + 2;
				size_t n = strcspn(name, " >");
				if (depth == 0 || n != stack_len[depth - 1] || strncmp(name, stack[depth - 1], n) != 0) {
					snprintf(why, sizeof(why), "closing tag </%.*s> does not match <%.*s>", (int)n, name,
						 depth ? (int)stack_len[depth - 1] : 0, depth ? stack[depth - 1] : "");
					goto fail;
				}
				depth--;
				p = name + n;
				if (*p != '>')
					goto bad_tag;
				p++;
				continue;
			}
			/* Start tag: name, then attributes name="value" (no '<' or raw '&' inside). */
			{
				const char *name = p + 1;
				size_t n = strcspn(name, " />\n");
				if (n == 0)
					goto bad_tag;
				p = name + n;
				for (;;) {
					while (*p == ' ' || *p == '\n')
						p++;
					if (*p == '>' || (p[0] == '/' && p[1] == '>'))
						break;
					while (*p && *p != '=' && *p != '>' && *p != ' ')
						p++;
					if (*p != '=' || (p[1] != '"' && p[1] != '\''))
						goto bad_attr;
					{
						char q = p[1];
						p += 2;
						while (*p && *p != q) {
							if (*p == '<')
								goto bad_attr;
							if (*p == '&' && !(strncmp(p, "&amp;", 5) == 0 || strncmp(p, "&lt;", 4) == 0 ||
									   strncmp(p, "&gt;", 4) == 0 || strncmp(p, "&quot;", 6) == 0 ||
									   strncmp(p, "&#", 2) == 0))
								goto bad_attr;
							p++;
						}
						if (!*p)
							goto bad_attr;
						p++;
					}
				}
				if (*p == '/') {
					p += 2;
					if (depth == 0)
						roots++;
					continue;
				}
				if (depth == 256)
					goto bad_tag;
				if (depth == 0)
					roots++;
				stack[depth] = name;
				stack_len[depth++] = n;
				p++;
				continue;
			}
		}
		if (*p == '&') {
			if (!(strncmp(p, "&amp;", 5) == 0 || strncmp(p, "&lt;", 4) == 0 || strncmp(p, "&gt;", 4) == 0 ||
			      strncmp(p, "&quot;", 6) == 0 || strncmp(p, "&#39;", 5) == 0 || strncmp(p, "&#10;", 5) == 0))
				goto bad_entity;
		}
		if (*p == '>' && depth > 0 && p > s && p[-1] == ']' && p[-2] == ']')
			goto bad_cdata;
		if ((unsigned char)*p < 0x20 && *p != '\n' && *p != '\t' && *p != '\r') {
			snprintf(why, sizeof(why), "control character 0x%02x", (unsigned char)*p);
			goto fail;
		}
		p++;
	}
	if (depth != 0) {
		snprintf(why, sizeof(why), "%d unclosed elements, innermost <%.*s>", depth, (int)stack_len[depth - 1],
			 stack[depth - 1]);
		goto fail;
	}
	if (roots != 1) {
		snprintf(why, sizeof(why), "%d root elements", roots);
		goto fail;
	}
	return NULL;
bad_pi:
	snprintf(why, sizeof(why), "unterminated <?");
	goto fail;
bad_cdata:
	snprintf(why, sizeof(why), "bad CDATA");
	goto fail;
bad_comment:
	snprintf(why, sizeof(why), "unterminated comment");
	goto fail;
bad_tag:
	snprintf(why, sizeof(why), "bad tag");
	goto fail;
bad_attr:
	snprintf(why, sizeof(why), "bad attribute");
	goto fail;
bad_entity:
	snprintf(why, sizeof(why), "bad entity '%.8s'", p);
fail:
	*where = (size_t)(p - s);
	return why;
}

static void check_xml(const char *what, const char *svg)
{
	size_t where = 0;
	const char *why = xml_check(svg, &where);
	CHECK(why == NULL, "%s: not well-formed at byte %zu: %s: ...%.60s", what, where, why ? why : "",
	      svg + (where > 20 ? where - 20 : 0));
}

/* ------------------------------------------------------------------ reading frames back */

struct drawn {
	char name[256];
	double x, w, y;
	unsigned long long count;
};

/* Parses every <g><title>NAME (N faults, ...)...</title><rect x=".." y=".." width=".."/> frame. */
static size_t parse_frames(const char *svg, struct drawn *out, size_t max)
{
	const char *p = strstr(svg, "<g id=\"frames\">");
	size_t n = 0;

	while (p && (p = strstr(p, "<g><title>")) != NULL && n < max) {
		const char *t = p + 10, *paren, *rect, *end = strstr(t, "</title>");
		struct drawn *d = &out[n];
		size_t len;
		if (!end)
			break;
		/* The name ends at the last " (" before the first line's end. */
		paren = NULL;
		for (const char *q = t; q < end && strncmp(q, "&#10;", 5) != 0; q++)
			if (q[0] == ' ' && q[1] == '(' && q[2] >= '0' && q[2] <= '9')
				paren = q;
		if (!paren)
			paren = end;
		len = (size_t)(paren - t) < sizeof(d->name) - 1 ? (size_t)(paren - t) : sizeof(d->name) - 1;
		memcpy(d->name, t, len);
		d->name[len] = '\0';
		d->count = 0;
		if (paren < end) {
			const char *c = paren + 2;
			while ((*c >= '0' && *c <= '9') || *c == ',') {
				if (*c != ',')
					d->count = d->count * 10 + (unsigned long long)(*c - '0');
				c++;
			}
		}
		rect = strstr(end, "<rect x=\"");
		if (!rect || sscanf(rect, "<rect x=\"%lf\" y=\"%lf\" width=\"%lf\"", &d->x, &d->y, &d->w) != 3)
			break;
		n++;
		p = rect;
	}
	return n;
}

static const struct drawn *find_drawn(const struct drawn *d, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(d[i].name, name) == 0)
			return &d[i];
	return NULL;
}

/* ------------------------------------------------------------------ helpers */

static void add(struct flame *f, uint64_t count, ...)
{
	struct flame_frame frames[64];
	size_t n = 0;
	va_list ap;
	const char *name;

	va_start(ap, count);
	while ((name = va_arg(ap, const char *)) != NULL && n < 64) {
		frames[n] = (struct flame_frame){ name, "src.c", (unsigned)(n + 10), FLAME_CLASS_CODE };
		n++;
	}
	va_end(ap);
	if (flame_add(f, frames, n, count) < 0) {
		perror("flame_add");
		exit(2);
	}
}

static char *folded(const struct flame *f, size_t *lines)
{
	struct capture c;
	cap_open(&c);
	*lines = flame_write_folded(f, c.f);
	cap_close(&c);
	return c.buf;
}

static char *svg_of(const struct flame *f, const struct flame_svg_options *o, struct flame_svg_stats *st)
{
	struct capture c;
	cap_open(&c);
	CHECK(flame_write_svg(f, o, c.f, st) == 0, "flame_write_svg failed: %s", strerror(errno));
	cap_close(&c);
	return c.buf;
}

/* ------------------------------------------------------------------ tests */

static void test_svg_helpers(void)
{
	struct capture c;
	char buf[32];
	int ell;
	size_t keep;

	cap_open(&c);
	svg_escape(c.f, "a<b>&\"c'\n\x01\xff\xc3\xa9\xed\xa0\x80z", (size_t)-1);
	cap_close(&c);
	CHECK(strcmp(c.buf, "a&lt;b&gt;&amp;&quot;c&#39;&#10;??\xc3\xa9???z") == 0, "svg_escape: got '%s'", c.buf);
	free(c.buf);
	CHECK(strcmp(svg_num(buf, 12.0, 2), "12") == 0, "svg_num 12: %s", buf);
	CHECK(strcmp(svg_num(buf, 12.5, 2), "12.5") == 0, "svg_num 12.5: %s", buf);
	CHECK(strcmp(svg_num(buf, -0.001, 2), "0") == 0, "svg_num -0.001: %s", buf);
	CHECK(strcmp(svg_num(buf, 1.006, 2), "1.01") == 0, "svg_num 1.006: %s", buf);
	keep = svg_fit_text("abcdefghij", 100, 12, &ell);
	CHECK(keep == 10 && !ell, "fit: all of it in 100 px (keep %zu)", keep);
	keep = svg_fit_text("abcdefghijklmnopqrstuvwxyz", 50, 12, &ell); /* 7 chars fit: 5 + ".." */
	CHECK(keep == 5 && ell, "fit: 5 + '..' in 50 px (keep %zu ell %d)", keep, ell);
	keep = svg_fit_text("abcdef", 20, 12, &ell);
	CHECK(keep == 0, "fit: nothing in 20 px (keep %zu)", keep);
	keep = svg_fit_text("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 40, 12, &ell);
	CHECK(keep == 6 && ell, "fit: UTF-8 kept whole (keep %zu)", keep);
}

static void test_folded(void)
{
	struct flame *f = flame_new();
	size_t lines;
	char *text;

	add(f, 5, "main", "a", "b", "c", "d", NULL);
	add(f, 3, "main", "a", "b", NULL);
	add(f, 2, "main", "e", NULL);
	add(f, 1, "main", "a", "b", "c", "d", NULL);
	add(f, 4, "[no stack]", NULL);
	add(f, 1, "main", "semi;colon", "ctl\tchar", NULL);
	CHECK(flame_total(f) == 16, "total %llu", (unsigned long long)flame_total(f));
	text = folded(f, &lines);
	CHECK(lines == 5, "5 distinct stacks, got %zu", lines);
	CHECK(strcmp(text, "[no stack] 4\n"
			   "main;a;b 3\n"
			   "main;a;b;c;d 6\n"
			   "main;e 2\n"
			   "main;semi:colon;ctl?char 1\n") == 0,
	      "folded output:\n%s", text);
	free(text);
	CHECK(flame_node_count(f) == 10, "nodes %zu", flame_node_count(f));
	CHECK(flame_depth(f) == 5, "depth %zu", flame_depth(f));
	CHECK(flame_add(f, NULL, 0, 1) < 0 && errno == EINVAL, "an empty stack is refused");

	/* Top 2 stacks + the rest in one frame; reversed; totals kept. */
	{
		struct flame *top = flame_top_stacks(f, 2, "[other stacks]"), *rev = flame_reversed(f);
		text = folded(top, &lines);
		CHECK(strcmp(text, "[no stack] 4\n[other stacks] 6\nmain;a;b;c;d 6\n") == 0, "top 2:\n%s", text);
		CHECK(flame_total(top) == 16, "top total %llu", (unsigned long long)flame_total(top));
		free(text);
		text = folded(rev, &lines);
		CHECK(strcmp(text, "[no stack] 4\nb;a;main 3\nctl?char;semi:colon;main 1\nd;c;b;a;main 6\ne;main 2\n") == 0,
		      "reversed:\n%s", text);
		CHECK(flame_total(rev) == 16, "reversed total");
		free(text);
		flame_free(top);
		flame_free(rev);
	}
	flame_free(f);
}

static void test_svg_small(void)
{
	struct flame *f = flame_new();
	struct flame_svg_options o;
	struct flame_svg_stats st;
	struct drawn d[64];
	const struct drawn *all, *dd, *e, *hostile;
	size_t n;
	char *svg;
	double full = 1200 - 20;

	add(f, 600, "main", "a", "b", "c", "d", NULL);
	add(f, 300, "main", "a", NULL);
	add(f, 99, "main", "e", NULL);
	add(f, 1, "main", "<script>&\"x\"</script>\xff", NULL);
	flame_svg_options_init(&o);
	svg = svg_of(f, &o, &st);
	check_xml("small SVG", svg);
	CHECK(strstr(svg, "<script>&") == NULL, "a hostile name is escaped");
	n = parse_frames(svg, d, 64);
	CHECK(n == st.frames, "parsed %zu frames, stats say %zu", n, st.frames);
	all = find_drawn(d, n, "all");
	dd = find_drawn(d, n, "d");
	e = find_drawn(d, n, "e");
	hostile = find_drawn(d, n, "&lt;script&gt;&amp;&quot;x&quot;&lt;/script&gt;?");
	CHECK(all && fabs(all->w - full) < 0.01 && all->count == 1000, "root: full width, 1000 faults");
	CHECK(dd && fabs(dd->w - 600 * full / 1000) < 0.01 && dd->count == 600, "d: %.2f px for 600 of 1000 (want %.2f)",
	      dd ? dd->w : -1, 600 * full / 1000);
	CHECK(e && fabs(e->w - 99 * full / 1000) < 0.01, "e: width proportional");
	CHECK(hostile && fabs(hostile->w - 1.18) < 0.01, "the 1-fault frame is 1.18 px, drawn (min width 1)");
	CHECK(strstr(svg, "d (600 faults, 60.00%)") != NULL, "tooltip 'd (600 faults, 60.00%%)'");
	CHECK(strstr(svg, "a (900 faults, 90.00%)&#10;self 300 faults&#10;src.c:11") != NULL, "tooltip with self and file:line");
	CHECK(strstr(svg, "all (1,000 faults, 100%)") != NULL, "root tooltip with thousands separator");
	CHECK(st.height < SVG_MAX_EDGE && st.width == 1200, "canvas %ux%u", st.width, st.height);
	/* Root at the bottom: deeper frames have smaller y; inverted: larger. */
	CHECK(dd && all && dd->y < all->y, "flame: d above the root");
	free(svg);
	o.inverted = true;
	svg = svg_of(f, &o, &st);
	check_xml("inverted SVG", svg);
	n = parse_frames(svg, d, 64);
	all = find_drawn(d, n, "all");
	dd = find_drawn(d, n, "d");
	CHECK(dd && all && dd->y > all->y, "icicle: d below the root");
	CHECK(strstr(svg, ">Icicle Graph<") != NULL, "icicle default title");
	free(svg);

	/* Min width 2 px: the 1.18 px frame is left out (alone it is too narrow to merge). */
	o.inverted = false;
	o.min_width = 2;
	o.title = "T <&> itle";
	svg = svg_of(f, &o, &st);
	check_xml("min width 2", svg);
	n = parse_frames(svg, d, 64);
	CHECK(find_drawn(d, n, "&lt;script&gt;&amp;&quot;x&quot;&lt;/script&gt;?") == NULL, "narrow frame left out");
	CHECK(strstr(svg, ">T &lt;&amp;&gt; itle<") != NULL, "title escaped");
	free(svg);
	flame_free(f);
}

/* Many narrow siblings: merged into one frame per parent, none drawn narrower than min width. */
/* Nothing counted: the root still spans the graph (no 0 px frame) and the XML is fine. */
static void test_empty(void)
{
	struct flame *f = flame_new();
	struct flame_svg_stats st;
	struct drawn d[4];
	char *svg = svg_of(f, NULL, &st);
	size_t n = parse_frames(svg, d, 4);

	check_xml("empty SVG", svg);
	CHECK(n == 1 && strcmp(d[0].name, "all") == 0 && fabs(d[0].w - 1180) < 0.01 && d[0].count == 0,
	      "empty graph: one full-width root frame of 0 faults");
	free(svg);
	flame_free(f);
}

static void test_merge(void)
{
	struct flame *f = flame_new();
	struct flame_svg_options o;
	struct flame_svg_stats st;
	static struct drawn d[4096];
	char name[32];
	size_t n, narrow = 0;
	const struct drawn *merged = NULL;
	char *svg;

	add(f, 100000, "main", "big", NULL);
	for (int i = 0; i < 3000; i++) {
		snprintf(name, sizeof(name), "tiny_%04d", i);
		add(f, 10, "main", "many", name, "leaf", NULL);
	}
	flame_svg_options_init(&o);
	svg = svg_of(f, &o, &st);
	check_xml("merge SVG", svg);
	n = parse_frames(svg, d, 4096);
	for (size_t i = 0; i < n; i++) {
		if (d[i].w < 1 - 1e-9)
			narrow++;
		if (strncmp(d[i].name, "[3000 more &lt; 1 px]", 21) == 0)
			merged = &d[i];
	}
	CHECK(narrow == 0, "%zu frames narrower than 1 px drawn", narrow);
	CHECK(merged != NULL && merged->count == 30000, "3000 tiny siblings merged into one frame of 30,000");
	CHECK(st.merged == 1 && st.frames == 5, "frames %zu (merged %zu), want 5 (all main big many [merged])",
	      st.frames, st.merged);
	CHECK(strstr(svg, "largest: tiny_") != NULL, "merged tooltip names the largest merged frames");
	free(svg);
	flame_free(f);
}

/* A 3,000-frame-deep stack: the canvas stays under 32,767 px and says it cut. */
static void test_deep(void)
{
	struct flame *f = flame_new();
	struct flame_frame *frames = calloc(3000, sizeof(*frames));
	struct flame_svg_stats st;
	char (*names)[16] = calloc(3000, 16);
	char *svg;

	for (int i = 0; i < 3000; i++) {
		snprintf(names[i], 16, "f%d", i);
		frames[i] = (struct flame_frame){ names[i], NULL, 0, FLAME_CLASS_LIBRARY };
	}
	CHECK(flame_add(f, frames, 3000, 7) == 0, "deep add");
	svg = svg_of(f, NULL, &st);
	check_xml("deep SVG", svg);
	CHECK(st.height <= SVG_MAX_EDGE && st.depth_cut, "height %u <= 32767, cut %d", st.height, st.depth_cut);
	CHECK(strstr(svg, "stacks deeper than") != NULL, "subtitle says the stack was cut");
	free(svg);
	free(frames);
	free(names);
	flame_free(f);
}

/* ------------------------------------------------------------------ size and speed */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

/* Zipf-like pick in [0, n): small values much more likely. */
static unsigned zipf(unsigned n)
{
	double u = (double)(rnd() >> 11) / 9007199254740992.0;
	unsigned v = (unsigned)floor(pow((double)n + 1, u)) - 1;
	return v < n ? v : n - 1;
}

/* NSTACKS distinct stacks shaped like real programs: a few entry chains, then a call tree whose
 * branching follows a Zipf law over a vocabulary of function names, depth 6..DEPTH; counts Zipf. */
static struct flame *synthetic(size_t nstacks, unsigned depth_max, size_t *frames_added)
{
	struct flame *f = flame_new();
	struct flame_frame frames[128];
	static char vocab[5000][40];
	size_t added = 0;

	for (int i = 0; i < 5000; i++)
		snprintf(vocab[i], sizeof(vocab[i]), "%s_%d", i % 3 ? "process_item" : "std::vector<int>::push_back", i);
	frames[0] = (struct flame_frame){ "_start", "start.S", 0, FLAME_CLASS_LIBRARY };
	frames[1] = (struct flame_frame){ "__libc_start_main", "libc.so.6", 0, FLAME_CLASS_LIBRARY };
	frames[2] = (struct flame_frame){ "main", "main.c", 12, FLAME_CLASS_CODE };
	for (size_t s = 0; s < nstacks; s++) {
		unsigned depth = 6 + (unsigned)(rnd() % (depth_max - 5));
		for (unsigned k = 3; k < depth; k++) {
			/* Shallow levels pick from few names, deep levels from many: a tree that widens. */
			unsigned choices = k < 6 ? 3 + k : 5000;
			frames[k] = (struct flame_frame){ vocab[zipf(choices)], "work.c", 100 + k, FLAME_CLASS_CODE };
		}
		/* Make the stack distinct whatever the random path: a unique leaf. */
		{
			static char leaf[32];
			snprintf(leaf, sizeof(leaf), "leaf_%zu", s);
			frames[depth] = (struct flame_frame){ leaf, "leaf.c", 1, FLAME_CLASS_CODE };
		}
		if (flame_add(f, frames, depth + 1, 1 + zipf(1000)) < 0) {
			perror("flame_add");
			exit(2);
		}
		added += depth + 1;
	}
	*frames_added = added;
	return f;
}

/* A thousand distinct 60-deep stacks, 0.3 to 9 px wide each: some 30,000 frames would be drawable
 * at 1 px, so the minimum width is raised (keeping the widest stacks) and the file stays small. */
static void test_budget(void)
{
	struct flame *f = flame_new();
	struct flame_frame frames[64];
	struct flame_svg_stats st;
	char (*names)[48] = calloc(1000 * 60, 48);
	size_t len;
	double t0, t1;
	char *svg;

	for (int s = 0; s < 1000; s++) {
		frames[0] = (struct flame_frame){ "main", "main.c", 3, FLAME_CLASS_CODE };
		for (int k = 1; k < 60; k++) {
			char *name = names[s * 60 + k];
			snprintf(name, 48, "unique_function_name_%d_at_depth_%d", s, k);
			frames[k] = (struct flame_frame){ name, "/usr/src/project/deep/file.c", (unsigned)k, FLAME_CLASS_CODE };
		}
		/* 0.3 .. 1.5 px each, and every 100th stack ~9 px */
		if (flame_add(f, frames, 60, s % 100 == 0 ? 30 : 1 + s % 5) < 0)
			exit(2);
	}
	t0 = now_s();
	svg = svg_of(f, NULL, &st);
	t1 = now_s();
	len = strlen(svg);
	printf("# budget: %zu nodes, SVG %.3f s, %zu bytes, %zu frames (%zu merged), min width raised to %.2f px\n",
	       flame_node_count(f), t1 - t0, len, st.frames, st.merged, st.min_width_px);
	check_xml("budget SVG", svg);
	CHECK(st.frames <= 12000, "%zu frames drawn, at most 12000", st.frames);
	CHECK(st.min_width_px > 1, "min width raised (%.2f)", st.min_width_px);
	CHECK(len <= 2u << 20, "SVG %zu bytes <= 2 MB", len);
	CHECK(strstr(svg, "<title>unique_function_name_100_at_depth_59 (30 faults") != NULL,
	      "the widest stacks are still drawn to their leaf");
	CHECK(strstr(svg, "px merged (budget:") != NULL, "the subtitle says frames were merged");
	free(svg);
	free(names);
	flame_free(f);
}

static void test_large(void)
{
	static const struct { size_t stacks; unsigned depth; } cases[] = { { 100000, 40 } };
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		size_t added, lines;
		double t0 = now_s(), t1, t2, t3;
		struct flame *f = synthetic(cases[c].stacks, cases[c].depth, &added);
		struct flame_svg_stats st;
		struct flame_svg_options o;
		char *svg, *fold;
		size_t svg_len;

		t1 = now_s();
		flame_svg_options_init(&o);
		svg = svg_of(f, &o, &st);
		t2 = now_s();
		svg_len = strlen(svg);
		fold = folded(f, &lines);
		t3 = now_s();
		printf("# %zu distinct stacks (%zu frames added, depth <= %u, %zu tree nodes): build %.3f s, "
		       "SVG %.3f s, %zu bytes, %zu frames drawn (%zu merged), min width %.2f px; folded %.3f s, %zu bytes\n",
		       cases[c].stacks, added, cases[c].depth, flame_node_count(f), t1 - t0, t2 - t1, svg_len, st.frames,
		       st.merged, st.min_width_px, t3 - t2, strlen(fold));
		CHECK(lines == cases[c].stacks, "%zu folded lines, want %zu", lines, cases[c].stacks);
		CHECK(flame_node_count(f) > 1000000, "over 10^6 nodes (%zu)", flame_node_count(f));
		CHECK(svg_len <= 2u << 20, "SVG %zu bytes <= 2 MB", svg_len);
		CHECK(st.height < SVG_MAX_EDGE, "canvas height %u", st.height);
		/* speed: measured in make bench, never asserted in a test */
		check_xml("large SVG", svg);
		{
			/* Nothing sub-pixel, and the frames' counts add up: each drawn frame's width matches. */
			static struct drawn d[20000];
			size_t n = parse_frames(svg, d, 20000), bad = 0, narrow = 0;
			double scale = 1180.0 / (double)flame_total(f);
			for (size_t i = 0; i < n; i++) {
				narrow += d[i].w < 1 - 1e-9;
				bad += fabs(d[i].w - d[i].count * scale) > 0.01;
			}
			CHECK(n == st.frames, "parsed %zu of %zu frames", n, st.frames);
			CHECK(narrow == 0, "%zu sub-pixel frames", narrow);
			CHECK(bad == 0, "%zu frames whose width is not count x scale", bad);
		}
		free(svg);
		free(fold);
		flame_free(f);
	}
}

int main(void)
{
	test_svg_helpers();
	test_folded();
	test_svg_small();
	test_merge();
	test_empty();
	test_deep();
	test_budget();
	test_large();
	return check_summary("test_flamegraph");
}
