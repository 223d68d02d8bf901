/* html_model.c: the bucketed, bounded model behind report.html (html_model.h): accumulation one
 * fault at a time, then the bounds and the names. */
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc_lifetimes.h"
#include "html_model.h"
#include "mrc.h"
#include "sweep.h"
#include "timeline.h"
#include "timeline_steps.h"

#define SITE_UNALLOCATED (HTML_NONE - 1)  /* the fault hit no recorded object */
#define SITE_NO_STACK (HTML_NONE - 2)     /* its object's allocation has no stack */
#define LOC_UNKNOWN (HTML_NONE - 3)       /* not computed yet (site_loc_of_stack) */
#define STACK_OTHER UINT32_MAX            /* the "[other stacks]" group's stack key */

/* ------------------------------------------------------------------ names */

/* The index of NAME (cut to HTML_MAX_NAME - 1 bytes), added when new; past HTML_MAX_NAME_BYTES
 * every new name is "[name not kept]". HTML_NONE when out of memory. */
static uint32_t names_intern(struct html_names *t, const char *name)
{
	char cut[HTML_MAX_NAME];
	size_t written = 3; /* quotes and comma */

	snprintf(cut, sizeof(cut), "%s", name);
	size_t len = strlen(cut);
	uint32_t i = string_set_find(&t->set, cut, len);
	if (i != STRING_SET_NONE)
		return i;
	for (const char *c = cut; *c; c++) /* as json_out_string_html escapes it, at most */
		written += (unsigned char)*c < 0x20 || *c == '<' || *c == '>' || *c == '&' || *c == '"' || *c == '\\' ? 6 : 1;
	if (t->bytes + written > HTML_MAX_NAME_BYTES && strcmp(cut, "[name not kept]") != 0)
		return names_intern(t, "[name not kept]");
	if ((i = string_set_add(&t->set, cut, len, NULL)) == STRING_SET_NONE)
		return HTML_NONE;
	t->bytes += written;
	return i;
}

/* ------------------------------------------------------------------ accumulation */

/* While faults arrive, the cells are kept under HTML_STREAM_CELLS (merged as the finish would
 * merge them), so the model's memory does not grow with the faults. */
#define HTML_STREAM_CELLS 130000 /* under 2^17: the cell map keeps 2^18 slots */
static int bound_cells(struct html_model *m, size_t limit);

int html_model_init(struct html_model *m, const struct fl_recording *rec, struct callsite_table *callsites,
		    struct vf_namer *namer, const struct fault_clock *clock, unsigned kinds, uint32_t pid)
{
	memset(m, 0, sizeof(*m));
	m->pid = pid;
	m->origin_ns = UINT64_MAX;
	for (size_t p = 0; p < rec->nprocs; p++)
		if (!pid || rec->procs[p].pid == pid) {
			m->nselected++;
			if (rec->procs[p].offset_ns < m->origin_ns)
				m->origin_ns = rec->procs[p].offset_ns;
		}
	if (!pid || clock->axis != FL_TIME_WALL || m->origin_ns == UINT64_MAX)
		m->origin_ns = 0;
	m->sweep_knee = SIZE_MAX;
	m->rec = rec;
	m->callsites = callsites;
	m->namer = namer;
	m->clock = clock;
	m->kinds = kinds;
	m->page_size = rec->nprocs && rec->procs[0].page_size ? rec->procs[0].page_size : 4096;
	m->page_step = 1;
	m->col_ns = 1024;
	m->site_loc_of_stack = calloc(rec->nprocs ? rec->nprocs : 1, sizeof(*m->site_loc_of_stack));
	if (!m->site_loc_of_stack) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

static uint64_t cell_key(unsigned row, unsigned col, unsigned kind)
{
	return (uint64_t)row << 20 | (uint64_t)col << 4 | kind;
}

/* Re-buckets every cell after the grid changed: OLD_FIRST/OLD_STEP the old rows (pages),
 * COL_SHIFT halvings of the columns; GROUP_OF remaps groups when not NULL. */
static int rekey_cells(struct html_model *m, uint64_t old_first, uint64_t old_step, unsigned col_shift,
		       const uint32_t *group_of)
{
	struct report_map next = REPORT_MAP_INIT;
	const struct report_map_slot *slot;

	for (size_t i = 0; (slot = report_map_next(&m->cell_map, &i)) != NULL;) {
		uint64_t row = slot->a >> 20, col = (slot->a >> 4) & 0xffff, kind = slot->a & 0xf;
		uint64_t page = old_first + row * old_step;
		uint64_t group = group_of ? group_of[slot->b] : slot->b;
		uint64_t *c = report_map_add(&next, cell_key((unsigned)((page - m->first_page) / m->page_step),
							    (unsigned)(col >> col_shift), (unsigned)kind), group, NULL);
		if (!c) {
			report_map_free(&next);
			return -1;
		}
		*c += slot->value;
	}
	report_map_free(&m->cell_map);
	m->cell_map = next;
	return 0;
}

/* Widens the rows until PAGE fits in HTML_ROWS of them. */
static int fit_page(struct html_model *m, uint64_t page)
{
	uint64_t old_first = m->first_page, old_step = m->page_step;

	if (!m->any) {
		m->any = true;
		m->first_page = m->min_page = m->max_page = page;
		return 0;
	}
	if (page < m->min_page)
		m->min_page = page;
	if (page > m->max_page)
		m->max_page = page;
	if (m->min_page >= m->first_page && (m->max_page - m->first_page) / m->page_step < HTML_ROWS)
		return 0;
	do {
		m->page_step *= 2;
		m->first_page = m->min_page / m->page_step * m->page_step;
	} while ((m->max_page - m->first_page) / m->page_step >= HTML_ROWS);
	return rekey_cells(m, old_first, old_step, 0, NULL);
}

/* Widens the columns until T_NS fits in HTML_COLS of them. */
static int fit_time(struct html_model *m, uint64_t t_ns)
{
	unsigned shift = 0;

	while (t_ns / m->col_ns >= HTML_COLS) {
		m->col_ns *= 2;
		shift++;
	}
	return shift ? rekey_cells(m, m->first_page, m->page_step, shift, NULL) : 0;
}

/* The callsite of the allocation site with stack STACK_ID in process P (memoized per stack). */
static uint32_t site_loc(struct html_model *m, size_t p, uint32_t stack_id, uint64_t time_ns)
{
	const struct fl_process *proc = &m->rec->procs[p];
	const struct fl_stack *s = stack_id ? fl_process_stack(proc, stack_id) : NULL;
	size_t si;

	if (!s)
		return SITE_NO_STACK;
	si = (size_t)(s - proc->stacks);
	if (!m->site_loc_of_stack[p]) {
		if (!(m->site_loc_of_stack[p] = malloc((proc->nstacks + 1) * sizeof(uint32_t))))
			return HTML_NONE;
		for (size_t i = 0; i <= proc->nstacks; i++)
			m->site_loc_of_stack[p][i] = LOC_UNKNOWN;
	}
	if (m->site_loc_of_stack[p][si] == LOC_UNKNOWN) {
		uint32_t loc = callsite_of_stack_at(m->callsites, p, s, time_ns);
		m->site_loc_of_stack[p][si] = loc == FL_NONE ? SITE_NO_STACK : loc;
	}
	return m->site_loc_of_stack[p][si];
}

/* The group of (process P, fault stack SI + 1, SITE, TID), made when new. */
static uint32_t group_of(struct html_model *m, size_t p, uint64_t stack_key, uint32_t site, uint32_t tid)
{
	bool added;
	uint64_t *g = report_map_add(&m->group_map, (uint64_t)p << 32 | stack_key, (uint64_t)site << 32 | tid, &added);

	if (!g)
		return HTML_NONE;
	if (added) {
		if (m->ngroups == m->groups_cap) {
			size_t cap = m->groups_cap ? m->groups_cap * 2 : 256;
			struct html_group *groups = realloc(m->groups, cap * sizeof(*groups));
			if (!groups)
				return HTML_NONE;
			m->groups = groups;
			m->groups_cap = cap;
		}
		/* stack: the process's stack index + 1 (0: none) until html_model_finish names it */
		m->groups[m->ngroups] = (struct html_group){ (uint32_t)p, (uint32_t)stack_key, HTML_NONE, HTML_NONE, site,
							     tid, 0 };
		*g = ++m->ngroups;
	}
	return (uint32_t)(*g - 1);
}

int html_model_add_fault(struct html_model *m, const struct fl_process *proc, const struct fl_fault *f)
{
	unsigned kind = f->rec.kind;
	size_t p = (size_t)(proc - m->rec->procs);
	const struct fl_stack *s;
	uint32_t site, g;
	uint64_t t, page, *c;

	if (kind > FL_FAULT_KIND_MAX || !(m->kinds & (1u << kind)))
		return 0;
	m->faults[kind]++;
	if (!fault_clock_time(m->clock, proc, f, &t)) {
		m->untimed++;
		return 0;
	}
	t = t > m->origin_ns ? t - m->origin_ns : 0;
	if (t > m->max_time_ns)
		m->max_time_ns = t;
	page = f->rec.addr / m->page_size;
	if (fit_page(m, page) < 0 || fit_time(m, t) < 0)
		goto nomem;
	s = fl_fault_stack(proc, f);
	if (f->rec.obj_stack_id)
		site = site_loc(m, p, f->rec.obj_stack_id, f->rec.time_ns);
	else if (f->alloc != FL_NONE)
		site = site_loc(m, p, proc->allocs[f->alloc].stack_id, proc->allocs[f->alloc].time_ns);
	else
		site = f->rec.obj_addr ? SITE_NO_STACK : SITE_UNALLOCATED;
	if (site == HTML_NONE)
		goto nomem;
	g = group_of(m, p, s ? (uint64_t)(s - proc->stacks) + 1 : 0, site, f->rec.tid);
	if (g == HTML_NONE)
		goto nomem;
	m->groups[g].faults++;
	c = report_map_add(&m->cell_map, cell_key((unsigned)((page - m->first_page) / m->page_step),
						  (unsigned)(t / m->col_ns), kind), g, NULL);
	if (!c)
		goto nomem;
	(*c)++;
	if (m->cell_map.count > HTML_STREAM_CELLS && bound_cells(m, HTML_MAX_CELLS) < 0)
		goto nomem;
	if (f->alloc != FL_NONE && kind != FL_FAULT_ACCESS_SAMPLE) {
		if (!(c = report_map_add(&m->object_map, p, f->alloc, NULL)))
			goto nomem;
		(*c)++;
	}
	return 0;
nomem:
	errno = ENOMEM;
	return -1;
}

/* A timeline sample's position on the axis: the fault clock's (wall: since the origin;
 * virtual: the process's task-clock), UINT64_MAX when it has none (no task-clock). */
static uint64_t sample_axis_ns(const struct html_model *m, const struct fl_process *proc,
			       const struct fl_timeline_record *r)
{
	if (m->clock->axis == FL_TIME_VIRTUAL)
		return (r->valid >> FL_TL_TASK_CLOCK) & 1u ? r->values[FL_TL_TASK_CLOCK] : UINT64_MAX;
	return proc->offset_ns + r->time_ns > m->origin_ns ? proc->offset_ns + r->time_ns - m->origin_ns : 0;
}

/* Merges the N steps of counter C in S (contiguous: each starts where the one before ended) into
 * at most HTML_MAX_POINTS, in runs of equal length. */
static void merge_steps(struct html_series *s, const struct timeline_step *steps, size_t n)
{
	size_t run = (n + HTML_MAX_POINTS - 1) / HTML_MAX_POINTS;

	s->n = 0;
	for (size_t i = 0; i < n; i += run) {
		size_t end = i + run < n ? i + run : n;
		double weighted = 0, top = 0;
		for (size_t j = i; j < end; j++) {
			weighted += steps[j].value * (double)(steps[j].x1 - steps[j].x0);
			if (steps[j].value > top)
				top = steps[j].value;
		}
		s->x0[s->n] = steps[i].x0;
		s->x1[s->n] = steps[end - 1].x1;
		if (s->gauge)
			s->value[s->n] = top;
		else
			s->value[s->n] = s->x1[s->n] > s->x0[s->n] ? weighted / (double)(s->x1[s->n] - s->x0[s->n]) : 0;
		s->n++;
	}
}

int html_model_add_timeline(struct html_model *m, const struct fl_process *proc, const struct fl_timeline *tl)
{
	struct fl_timeline_record *recs = malloc((tl->nrecs ? tl->nrecs : 1) * sizeof(*recs));
	uint64_t *x = malloc((tl->nrecs ? tl->nrecs : 1) * sizeof(*x));
	struct timeline_step *steps = malloc((tl->nrecs ? tl->nrecs : 1) * sizeof(*steps));
	size_t n = 0;
	int rc = -1;

	if (!recs || !x || !steps)
		goto out;
	for (size_t i = 0; i < tl->nrecs; i++) { /* the process's samples, placed on the axis */
		const struct fl_timeline_record *r = &tl->recs[i];
		if (r->tid != 0)
			continue;
		recs[n] = *r;
		x[n++] = sample_axis_ns(m, proc, r);
	}
	for (unsigned c = 0; c < FL_TL_COUNTERS; c++) {
		size_t nsteps = timeline_steps(recs, x, n, c, steps);
		struct html_series *s, *grown;
		bool nonzero = false;
		for (size_t i = 0; i < nsteps && !nonzero; i++)
			nonzero = steps[i].a || steps[i].b;
		if (!nonzero)
			continue; /* a counter that stayed 0 (e.g. soft faults without soft pages) */
		if (m->nseries == HTML_MAX_SERIES) {
			m->series_dropped++;
			continue;
		}
		if (!(grown = realloc(m->series, (m->nseries + 1) * sizeof(*grown))))
			goto out;
		m->series = grown;
		s = &m->series[m->nseries++];
		s->pid = proc->pid;
		s->counter = c;
		s->gauge = fl_timeline_counter_is_gauge(c);
		s->first = steps[0].a;
		s->last = steps[nsteps - 1].b;
		merge_steps(s, steps, nsteps);
	}
	rc = 0;
out:
	free(recs);
	free(x);
	free(steps);
	if (rc < 0)
		errno = ENOMEM;
	return rc;
}

void html_model_add_hot_range(struct html_model *m, uint64_t lo, uint64_t hi, double pct, const char *label)
{
	if (m->nhot == HTML_MAX_HOT)
		return;
	m->hot[m->nhot] = (struct html_hot){ lo, hi, pct, "" };
	snprintf(m->hot[m->nhot].label, sizeof(m->hot[m->nhot].label), "%s", label ? label : "");
	m->nhot++;
}

int html_model_add_sweep(struct html_model *m)
{
	struct sweep_point *points = NULL;
	char dir_copy[4096], base_copy[4096], path[4096 + 300];
	const char *parent, *base;
	size_t n = 0;
	DIR *d;
	struct dirent *e;

	/* POSIX dirname and basename may write into their argument: each gets its own copy */
	snprintf(dir_copy, sizeof(dir_copy), "%s", m->rec->dir);
	snprintf(base_copy, sizeof(base_copy), "%s", m->rec->dir);
	parent = dirname(dir_copy);
	base = basename(base_copy);
	snprintf(path, sizeof(path), "%s/sweep.csv", parent);
	if (!sweep_point_bytes(base) || access(path, F_OK) != 0 || !(d = opendir(parent)))
		return 0; /* not one size of a sweep */
	if (!(points = calloc(HTML_MAX_MRC, sizeof(*points)))) {
		closedir(d);
		errno = ENOMEM;
		return -1;
	}
	while ((e = readdir(d)) != NULL && n < HTML_MAX_MRC) {
		char err[256];
		uint64_t bytes = sweep_point_bytes(e->d_name);
		size_t len = strlen(e->d_name);
		if (!bytes || len >= sizeof(points[n].name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", parent, e->d_name);
		if (sweep_point_load(&points[n], path, err, sizeof(err)) < 0)
			continue; /* a size whose run failed: not on the curve, as not in the sweep's table */
		points[n].local_bytes = bytes;
		memcpy(points[n].name, e->d_name, len + 1);
		n++;
	}
	closedir(d);
	sweep_sort(points, n);
	m->sweep_knee = sweep_knee(points, n);
	for (size_t i = 0; i < n; i++)
		m->sweep[m->nsweep++] = (struct html_sweep_point){ points[i].local_bytes, points[i].faults_total,
								   points[i].refault, strcmp(points[i].name, base) == 0 };
	free(points);
	return 0;
}

int html_model_add_mrc(struct html_model *m)
{
	struct mrc_model mm;
	char err[256];
	uint64_t *sizes;
	size_t n;

	if (mrc_build(m->rec, &mm, err, sizeof(err)) < 0)
		return 0; /* no process recorded with --mrc (or out of memory): no curve */
	sizes = mrc_sizes(&mm, NULL, 0, &n);
	if (!sizes) {
		mrc_free(&mm);
		errno = ENOMEM;
		return -1;
	}
	/* the selected process's images first: the curve is theirs (mrc_free still frees them all) */
	struct mrc_model view = mm;
	view.nprocs = 0;
	view.peak_bytes = 0;
	for (size_t i = 0; i < mm.nprocs; i++) {
		struct mrc_process keep = mm.procs[i];
		if (m->pid && keep.pid != m->pid)
			continue;
		mm.procs[i] = mm.procs[view.nprocs];
		mm.procs[view.nprocs++] = keep;
		if (keep.peak_bytes > view.peak_bytes)
			view.peak_bytes = keep.peak_bytes;
	}
	m->mrc_peak_bytes = view.peak_bytes;
	for (size_t i = 0; i < n && m->nmrc < HTML_MAX_MRC && view.nprocs; i++) {
		struct mrc_row r = mrc_predict(&view, sizes[i], MRC_POLICY_CLOCK);
		if (r.predicted != r.predicted) /* NaN: out of memory */
			continue;
		m->mrc[m->nmrc++] = (struct html_mrc_point){ sizes[i], r.predicted, r.lower, r.upper };
	}
	free(sizes);
	mrc_free(&mm);
	return 0;
}

/* ------------------------------------------------------------------ bounds */

static int by_faults_desc(const void *a, const void *b, void *ctx)
{
	const struct html_group *g = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	if (g[x].faults != g[y].faults)
		return g[x].faults < g[y].faults ? 1 : -1;
	return x < y ? -1 : x > y;
}

/* Keeps the HTML_MAX_GROUPS - 1 groups with the most faults; the rest become one group. */
static int bound_groups(struct html_model *m)
{
	uint32_t *order, *remap;
	struct html_group *kept;
	size_t keep = HTML_MAX_GROUPS - 1;

	if (m->ngroups <= HTML_MAX_GROUPS)
		return 0;
	order = malloc(m->ngroups * sizeof(*order));
	remap = malloc(m->ngroups * sizeof(*remap));
	kept = malloc(HTML_MAX_GROUPS * sizeof(*kept));
	if (!order || !remap || !kept)
		goto nomem;
	for (size_t i = 0; i < m->ngroups; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, m->ngroups, sizeof(*order), by_faults_desc, m->groups);
	kept[keep] = (struct html_group){ HTML_NONE, STACK_OTHER, HTML_NONE, HTML_NONE, HTML_NONE, HTML_NONE, 0 };
	for (size_t i = 0; i < m->ngroups; i++) {
		size_t g = order[i];
		remap[g] = (uint32_t)(i < keep ? i : keep);
		if (i < keep)
			kept[i] = m->groups[g];
		else
			kept[keep].faults += m->groups[g].faults;
	}
	m->merged_groups = m->ngroups - keep;
	if (rekey_cells(m, m->first_page, m->page_step, 0, remap) < 0)
		goto nomem;
	free(m->groups);
	m->groups = kept;
	m->ngroups = m->groups_cap = HTML_MAX_GROUPS;
	free(order);
	free(remap);
	return 0;
nomem:
	free(order);
	free(remap);
	free(kept);
	return -1;
}

/* Halves the columns, then the rows, in turn, until at most LIMIT cells are left. */
static int bound_cells(struct html_model *m, size_t limit)
{
	while (m->cell_map.count > limit) {
		uint64_t old_first = m->first_page, old_step = m->page_step;
		bool rows_left = (m->max_page - m->first_page) / m->page_step >= 1; /* more than one row */
		bool cols_left = m->max_time_ns / m->col_ns >= 1;                   /* more than one column */
		if (!rows_left && !cols_left)
			break; /* one cell per (kind, group): HTML_MAX_GROUPS bounds them */
		if (cols_left && (m->coarsened % 2 == 0 || !rows_left)) {
			m->col_ns *= 2;
			if (rekey_cells(m, old_first, old_step, 1, NULL) < 0)
				return -1;
		} else {
			m->page_step *= 2;
			m->first_page = m->min_page / m->page_step * m->page_step;
			if (rekey_cells(m, old_first, old_step, 0, NULL) < 0)
				return -1;
		}
		m->coarsened++;
	}
	return 0;
}

static int by_cell(const void *a, const void *b)
{
	const struct html_cell *x = a, *y = b;
	if (x->row != y->row)
		return x->row < y->row ? -1 : 1;
	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return x->group < y->group ? -1 : x->group > y->group;
}

/* ------------------------------------------------------------------ names */

/* Index of VALUE in *TABLE (N entries), appended when missing; lookups through MAP. */
static uint32_t table_index(struct report_map *map, uint64_t a, uint64_t b, size_t *n, bool *added)
{
	uint64_t *slot = report_map_add(map, a, b, added);
	if (!slot)
		return HTML_NONE;
	if (*added)
		*slot = ++*n;
	return (uint32_t)(*slot - 1);
}

static void *grow_to(void *array, size_t n, size_t size)
{
	return realloc(array, (n ? n : 1) * size);
}

static uint32_t loc_name(struct html_model *m, uint32_t loc, bool with_line)
{
	const struct callsite_loc *l = callsite_loc(m->callsites, loc);
	char buf[HTML_MAX_NAME];
	const char *file;

	if (!l)
		return names_intern(&m->names, "?");
	file = l->file ? strrchr(l->file, '/') : NULL;
	file = file ? file + 1 : l->file;
	if (with_line && file && l->line)
		snprintf(buf, sizeof(buf), "%s %s:%u", l->function, file, l->line);
	else if (with_line && l->binary && !l->symbolized)
		snprintf(buf, sizeof(buf), "%s", l->function);
	else
		snprintf(buf, sizeof(buf), "%s", l->function);
	return names_intern(&m->names, buf);
}

/* The stack of group G as name indexes, root first (deduplicated by (process, stack)). */
static int name_stack(struct html_model *m, struct html_group *g, struct report_map *stack_ids)
{
	const struct fl_process *proc = g->stack == STACK_OTHER ? NULL : &m->rec->procs[g->proc];
	const struct fl_stack *s = proc && g->stack ? &proc->stacks[g->stack - 1] : NULL;
	const struct vf_frame *vf = NULL;
	size_t n = 0, first = 0;
	bool added;
	uint32_t id = table_index(stack_ids, (uint64_t)g->proc, g->stack, &m->nstacks, &added);
	uint32_t *frames;

	if (id == HTML_NONE)
		return -1;
	g->stack = id;
	if (!added)
		return 0;
	if (!(m->stacks = grow_to(m->stacks, m->nstacks, sizeof(*m->stacks))) ||
	    !(m->stack_len = grow_to(m->stack_len, m->nstacks, sizeof(*m->stack_len))))
		return -1;
	m->stacks[id] = NULL;
	m->stack_len[id] = 0;
	if (s && vf_stack_frames(m->namer, proc, s, true, &vf, &n) < 0)
		return -1;
	if (n > HTML_MAX_FRAMES)
		first = n - HTML_MAX_FRAMES; /* the innermost frames are kept: where the fault was taken */
	if (!(frames = malloc(((n - first) + 2) * sizeof(*frames))))
		return -1;
	m->stacks[id] = frames;
	if (m->nselected > 1 && proc) { /* several images selected: each stack under its image's name */
		const char *slash = proc->exe ? strrchr(proc->exe, '/') : NULL;
		frames[m->stack_len[id]++] = names_intern(&m->names, slash ? slash + 1 : *proc->exe ? proc->exe : proc->name);
	}
	if (!proc)
		frames[m->stack_len[id]++] = names_intern(&m->names, "[other stacks]");
	else if (n == 0)
		frames[m->stack_len[id]++] = names_intern(&m->names, s ? "[faultline runtime]" : "[no stack]");
	for (size_t i = first; i < n; i++) {
		char buf[HTML_MAX_NAME];
		snprintf(buf, sizeof(buf), "%s", vf[i].function);
		frames[m->stack_len[id]++] = names_intern(&m->names, buf);
	}
	for (size_t i = 0; i < m->stack_len[id]; i++)
		if (frames[i] == HTML_NONE)
			return -1;
	return 0;
}

/* Callsite, function, site, thread and process of group G. */
static int name_group(struct html_model *m, struct html_group *g, struct report_map *maps)
{
	struct report_map *callsite_ids = &maps[0], *function_ids = &maps[1], *site_ids = &maps[2],
			  *thread_ids = &maps[3], *proc_ids = &maps[4];
	const struct fl_process *proc = g->stack == STACK_OTHER ? NULL : &m->rec->procs[g->proc];
	const struct fl_stack *s = proc && g->stack ? &proc->stacks[g->stack - 1] : NULL;
	uint32_t loc = s ? callsite_of_stack(m->callsites, g->proc, s) : FL_NONE;
	uint32_t fn = loc != FL_NONE ? callsite_function_of(m->callsites, loc) : FL_NONE;
	uint32_t idx, name;
	bool added;

	/* callsite */
	idx = table_index(callsite_ids, 1, proc ? loc : HTML_NONE - 1, &m->ncallsites, &added);
	if (idx == HTML_NONE)
		return -1;
	if (added) {
		if (!(m->callsite_names = grow_to(m->callsite_names, m->ncallsites, sizeof(uint32_t))))
			return -1;
		name = !proc ? names_intern(&m->names, "[other stacks]")
		       : loc != FL_NONE ? loc_name(m, loc, true)
					: names_intern(&m->names, s ? "[faultline runtime]" : "[no stack]");
		if ((m->callsite_names[idx] = name) == HTML_NONE)
			return -1;
	}
	g->callsite = idx;
	/* function */
	idx = table_index(function_ids, 2, proc ? fn : HTML_NONE - 1, &m->nfunctions, &added);
	if (idx == HTML_NONE)
		return -1;
	if (added) {
		if (!(m->function_names = grow_to(m->function_names, m->nfunctions, sizeof(uint32_t))))
			return -1;
		name = !proc ? names_intern(&m->names, "[other stacks]")
		       : fn != FL_NONE ? loc_name(m, fn, false)
				       : names_intern(&m->names, s ? "[faultline runtime]" : "[no stack]");
		if ((m->function_names[idx] = name) == HTML_NONE)
			return -1;
	}
	g->function = idx;
	/* allocation site */
	idx = table_index(site_ids, 3, g->site, &m->nsites, &added);
	if (idx == HTML_NONE)
		return -1;
	if (added) {
		if (!(m->sites = grow_to(m->sites, m->nsites, sizeof(*m->sites))))
			return -1;
		memset(&m->sites[idx], 0, sizeof(m->sites[idx]));
		name = g->site == HTML_NONE	    ? names_intern(&m->names, "[other stacks]")
		       : g->site == SITE_UNALLOCATED ? names_intern(&m->names, "<unallocated>")
		       : g->site == SITE_NO_STACK    ? names_intern(&m->names, "<allocation without stack>")
						     : loc_name(m, g->site, true);
		if ((m->sites[idx].name = name) == HTML_NONE)
			return -1;
	}
	g->site = idx;
	/* thread */
	idx = table_index(thread_ids, proc ? proc->pid : 0, g->thread, &m->nthreads, &added);
	if (idx == HTML_NONE)
		return -1;
	if (added) {
		if (!(m->threads = grow_to(m->threads, m->nthreads, sizeof(*m->threads))))
			return -1;
		m->threads[idx] = (struct html_thread){ proc ? proc->pid : 0, proc ? g->thread : 0 };
	}
	g->thread = idx;
	/* process */
	idx = table_index(proc_ids, 5, proc ? g->proc : HTML_NONE, &m->nprocs, &added);
	if (idx == HTML_NONE)
		return -1;
	if (added) {
		char label[HTML_MAX_NAME];
		const char *slash = proc && proc->exe ? strrchr(proc->exe, '/') : NULL;
		if (!(m->procs = grow_to(m->procs, m->nprocs, sizeof(uint32_t))) ||
		    !(m->proc_names = grow_to(m->proc_names, m->nprocs, sizeof(uint32_t))))
			return -1;
		m->procs[idx] = proc ? g->proc : HTML_NONE;
		if (proc)
			snprintf(label, sizeof(label), "pid %s %s", proc->name, slash ? slash + 1 : proc->exe ? proc->exe : "");
		else
			snprintf(label, sizeof(label), "[other stacks]");
		if ((m->proc_names[idx] = names_intern(&m->names, label)) == HTML_NONE)
			return -1;
	}
	g->proc = idx;
	return 0;
}

/* The whole-run counts of the sites files of the selected process(es), summed per named site row. */
static void site_counts(struct html_model *m, struct report_map *site_ids)
{
	for (size_t p = 0; p < m->rec->nprocs; p++) {
		const struct fl_process *proc = &m->rec->procs[p];
		if (m->pid && proc->pid != m->pid)
			continue;
		for (size_t i = 0; i < proc->nsites; i++) {
			const struct fl_site_record *r = &proc->sites[i];
			const struct fl_stack *s = fl_process_stack(proc, r->stack_id);
			uint32_t loc = s ? callsite_of_stack(m->callsites, p, s) : FL_NONE;
			uint64_t *row = loc != FL_NONE ? report_map_find(site_ids, 3, loc) : NULL;
			struct html_site *site;
			if (!row)
				continue;
			site = &m->sites[*row - 1];
			site->has_counts = true;
			site->allocs += r->allocs;
			site->bytes += r->bytes;
			site->objects_faulted += r->objects_faulted;
			site->faults += r->faults;
		}
	}
}

/* PROC's time T_NS (since its start) on the wall axis of the page. */
static uint64_t since_origin(const struct html_model *m, const struct fl_process *proc, uint64_t t_ns)
{
	return proc->offset_ns + t_ns > m->origin_ns ? proc->offset_ns + t_ns - m->origin_ns : 0;
}

/* The HTML_MAX_OBJECTS objects with the most faults of each site row (wall axis only: an object
 * has no virtual time). */
static int collect_objects(struct html_model *m, struct report_map *site_ids)
{
	const struct report_map_slot *slot;
	uint64_t **ends;
	size_t *per_site = calloc(m->nsites ? m->nsites : 1, sizeof(*per_site));
	int rc = -1;

	ends = calloc(m->rec->nprocs ? m->rec->nprocs : 1, sizeof(*ends));
	if (!per_site || !ends)
		goto out;
	if (m->clock->axis != FL_TIME_WALL) {
		rc = 0;
		goto out;
	}
	for (size_t i = 0; (slot = report_map_next(&m->object_map, &i)) != NULL;) {
		const struct fl_process *proc = &m->rec->procs[slot->a];
		const struct fl_alloc_record *a = &proc->allocs[slot->b];
		uint32_t loc = site_loc(m, slot->a, a->stack_id, a->time_ns);
		uint64_t *row = report_map_find(site_ids, 3, loc);
		struct html_object o;
		size_t s, j, first = 0;
		if (!row)
			continue; /* its site's faults were folded into "[other stacks]" */
		s = *row - 1;
		if (!ends[slot->a] && !(ends[slot->a] = fl_alloc_end_times(proc)))
			goto out;
		o = (struct html_object){ (uint32_t)s, proc->pid, a->addr, a->size, since_origin(m, proc, a->time_ns),
					  ends[slot->a][slot->b] == UINT64_MAX ? UINT64_MAX
									: since_origin(m, proc, ends[slot->a][slot->b]),
					  slot->value };
		/* the site's objects are kept in m->objects in insertion order; a full site replaces its
		 * object with the fewest faults */
		if (per_site[s] < HTML_MAX_OBJECTS && m->nobjects < HTML_MAX_OBJECTS_TOTAL) {
			struct html_object *grown = realloc(m->objects, (m->nobjects + 1) * sizeof(*grown));
			if (!grown)
				goto out;
			m->objects = grown;
			m->objects[m->nobjects++] = o;
			per_site[s]++;
			continue;
		}
		for (j = 0, first = SIZE_MAX; j < m->nobjects; j++)
			if (m->objects[j].site == s && (first == SIZE_MAX || m->objects[j].faults < m->objects[first].faults))
				first = j;
		if (first != SIZE_MAX && m->objects[first].faults < o.faults)
			m->objects[first] = o;
	}
	rc = 0;
out:
	for (size_t p = 0; ends && p < m->rec->nprocs; p++)
		free(ends[p]);
	free(ends);
	free(per_site);
	return rc;
}

int html_model_finish(struct html_model *m)
{
	struct report_map stack_ids = REPORT_MAP_INIT, maps[5] = { REPORT_MAP_INIT, REPORT_MAP_INIT, REPORT_MAP_INIT,
								    REPORT_MAP_INIT, REPORT_MAP_INIT };
	const struct report_map_slot *slot;
	int rc = -1;

	if (bound_groups(m) < 0 || bound_cells(m, HTML_MAX_CELLS) < 0)
		goto out;
	m->addr0 = m->first_page * m->page_size;
	m->row_bytes = m->page_step * m->page_size;
	m->rows = m->any ? (unsigned)((m->max_page - m->first_page) / m->page_step + 1) : 0;
	m->cols = m->any ? (unsigned)(m->max_time_ns / m->col_ns + 1) : 0;
	if (!(m->cells = malloc((m->cell_map.count ? m->cell_map.count : 1) * sizeof(*m->cells))))
		goto out;
	for (size_t i = 0; (slot = report_map_next(&m->cell_map, &i)) != NULL;)
		m->cells[m->ncells++] = (struct html_cell){ (uint16_t)(slot->a >> 20), (uint16_t)((slot->a >> 4) & 0xffff),
							    (uint8_t)(slot->a & 0xf), (uint32_t)slot->b, slot->value };
	qsort(m->cells, m->ncells, sizeof(*m->cells), by_cell);
	for (size_t g = 0; g < m->ngroups; g++) {
		uint32_t stack_key = m->groups[g].stack;
		if (name_group(m, &m->groups[g], maps) < 0)
			goto out;
		m->groups[g].stack = stack_key; /* name_stack reads the original key */
		struct html_group probe = m->groups[g];
		probe.proc = m->procs[probe.proc];
		if (name_stack(m, &probe, &stack_ids) < 0)
			goto out;
		m->groups[g].stack = probe.stack;
	}
	site_counts(m, &maps[2]);
	if (collect_objects(m, &maps[2]) < 0)
		goto out;
	rc = 0;
out:
	report_map_free(&stack_ids);
	for (size_t i = 0; i < 5; i++)
		report_map_free(&maps[i]);
	report_map_free(&m->cell_map);
	report_map_free(&m->group_map);
	report_map_free(&m->object_map);
	if (rc < 0)
		errno = ENOMEM;
	return rc;
}

uint64_t html_model_end_ns(const struct html_model *m)
{
	return (uint64_t)m->cols * m->col_ns;
}

void html_model_free(struct html_model *m)
{
	report_map_free(&m->cell_map);
	report_map_free(&m->group_map);
	report_map_free(&m->object_map);
	for (size_t p = 0; m->site_loc_of_stack && p < m->rec->nprocs; p++)
		free(m->site_loc_of_stack[p]);
	free(m->site_loc_of_stack);
	free(m->groups);
	free(m->cells);
	string_set_free(&m->names.set);
	for (size_t i = 0; i < m->nstacks; i++)
		free(m->stacks[i]);
	free(m->stacks);
	free(m->stack_len);
	free(m->callsite_names);
	free(m->function_names);
	free(m->sites);
	free(m->threads);
	free(m->procs);
	free(m->proc_names);
	free(m->objects);
	free(m->series);
}
