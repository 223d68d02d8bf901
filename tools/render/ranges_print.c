/* ranges_print.c: the output formats of hot ranges (ranges_print in ranges.h).
 *
 * text  per process: '#' lines naming the process, the source of the counts and the tree's
 *       parameters and error bound, then a table, one line per range, as a tree: in address
 *       order, each range before the ranges nested in it, whose start is indented two spaces
 *       per level (rank: the range's place by exclusive faults)
 *           rank start end size faults lower upper pct excl% trace
 *       (trace: fault records inside the range, "-" without attribution), each followed by
 *       indented "site" lines (faults, allocations, hull of the allocations, name, stack id, the
 *       allocation with most faults), an "outside" line for faults outside every allocation,
 *       and "map" lines (mappings overlapping the range in the maps snapshots in force during
 *       its faults). With --tree the process's tree follows, as rap_dump prints it.
 * csv   one header line, then one row per range (RFC 4180 quoting):
 *           pid,process,source,rank,start,end,bytes,faults,lower,upper,percent,excl,
 *           excl_percent,trace,nodes,depth,top_site,top_site_faults,sites,unattributed,mappings,
 *           node_start,node_end,parent,level
 *       start/end are 0x hex (the clipped range; node_start/node_end the tree node); trace is
 *       empty without attribution; mappings are ';'-separated; parent is the rank of the range
 *       holding this one (empty for an outermost one).
 * json  one object: {"recording", "eps", "phi", "kinds", "processes": [{..., "ranges": [...],
 *       "tree": [...] with --tree}], "warnings": [...]}; addresses both as "0x..." strings
 *       (start, end) and as numbers (start_addr, end_addr); ranges in rank order, each with
 *       "parent" (a rank or null), "level", "node_start" and "node_end". */
#include <inttypes.h>
#include <string.h>

#include "cli.h"
#include "text_out.h"
#include "ranges.h"

/* ---------------------------------------------------------------- text */

static void put_printable(const char *text, FILE *out)
{
	for (const unsigned char *p = (const unsigned char *)text; *p; p++)
		putc(*p < 0x20 || *p == 0x7f ? '?' : *p, out);
}

static void text_process_header(const struct ranges_proc *rp, const struct ranges_options *o, const char *dir,
				FILE *out)
{
	const struct fl_process *proc = rp->proc;
	const struct rap_stats *st = &rp->stats;
	char a[32], b[32], c[32], d[32], kinds[96], quoted[512];

	fputs("# ranges of ", out);
	put_printable(dir, out);
	fprintf(out, ", process %s:", proc->name);
	if (proc->ncmdline == 0) {
		putc(' ', out);
		put_printable(*proc->exe ? proc->exe : "?", out);
	}
	for (size_t i = 0; i < proc->ncmdline && i < 16; i++) {
		putc(' ', out);
		put_printable(cli_shell_quote(proc->cmdline[i], quoted, sizeof(quoted)), out);
	}
	if (proc->ncmdline > 16)
		fputs(" ...", out);
	fprintf(out, "\n# source: %s: %s faults counted", rp->source_text, cli_format_count(st->n, a, sizeof(a)));
	if (rp->source == RANGES_SOURCE_ONLINE)
		fprintf(out, "; the trace holds %s fault records", cli_format_count(rp->trace_faults, b, sizeof(b)));
	fprintf(out, "\n# eps %.4f (now %.4f), phi %.4f, kind %s; tree of %s nodes (%s); every estimate is at "
		"most %s below the true count\n", st->eps, st->eps_now, o->phi,
		ranges_kinds_name(o->kinds, kinds, sizeof(kinds)), cli_format_count(st->nodes, c, sizeof(c)),
		cli_format_size(st->nodes * st->bytes_per_node, d, sizeof(d)),
		cli_format_count(rp->error_bound, b, sizeof(b)));
}

static void text_range(const struct ranges_range *r, size_t rank, FILE *out)
{
	char size[32], e[32], l[32], u[32], t[32], f[32], hull[32];
	fprintf(out, "%4zu  %*s0x%016" PRIx64 "  0x%016" PRIx64 "  %10s  %11s  %11s  %11s  %6.2f  %6.2f  %11s\n",
		rank, (int)(2 * r->level), "", r->lo, r->hi, cli_format_size(r->hi - r->lo, size, sizeof(size)),
		cli_format_count(r->est, e, sizeof(e)), cli_format_count(r->lower, l, sizeof(l)),
		cli_format_count(r->upper, u, sizeof(u)), r->pct, r->excl_pct,
		r->has_trace ? cli_format_count(r->trace, t, sizeof(t)) : "-");
	for (size_t i = 0; i < r->nsites; i++) {
		const struct ranges_site *s = &r->sites[i];
		fprintf(out, "        site    %s faults in %u allocation%s 0x%" PRIx64 "-0x%" PRIx64 " (%s)  ",
			cli_format_count(s->faults, f, sizeof(f)), s->allocs, s->allocs == 1 ? "" : "s", s->lo,
			s->hi, cli_format_size(s->hi - s->lo, hull, sizeof(hull)));
		put_printable(s->name, out);
		fprintf(out, "  [stack %u, alloc #%u]\n", s->stack_id, s->alloc_id);
	}
	if (r->sites_total > r->nsites)
		fprintf(out, "        site    ... %zu more site%s\n", r->sites_total - r->nsites,
			r->sites_total - r->nsites == 1 ? "" : "s");
	if (r->unattributed)
		fprintf(out, "        outside %s faults outside every live allocation\n",
			cli_format_count(r->unattributed, f, sizeof(f)));
	for (size_t i = 0; i < r->nmaps; i++) {
		const struct ranges_map *m = &r->maps[i];
		fprintf(out, "        map     0x%" PRIx64 "-0x%" PRIx64 " %s ", m->start, m->end, m->perms);
		put_printable(m->name, out);
		putc('\n', out);
	}
	if (r->maps_total > r->nmaps)
		fprintf(out, "        map     ... %zu more mapping%s\n", r->maps_total - r->nmaps,
			r->maps_total - r->nmaps == 1 ? "" : "s");
}

static int print_text(const struct ranges_result *res, const struct ranges_options *o, const char *dir,
		      bool tree, FILE *out)
{
	for (size_t p = 0; p < res->nprocs; p++) {
		const struct ranges_proc *rp = &res->procs[p];
		if (p)
			putc('\n', out);
		text_process_header(rp, o, dir, out);
		if (rp->nranges == 0) {
			fputs(rp->stats.n ? "# no range holds phi of the faults\n" : "# no faults\n", out);
		} else {
			fputs("# as a tree: a nested range is indented under the range holding it; start-end: the pages\n"
			      "# that faulted inside the tree node, within the region; faults and pct include the nested\n"
			      "# ranges, excl% leaves them out\n", out);
			fprintf(out, "%4s  %-18s  %-18s  %10s  %11s  %11s  %11s  %6s  %6s  %11s\n", "rank", "start",
				"end", "size", "faults", "lower", "upper", "pct", "excl%", "trace");
			for (size_t k = 0; k < rp->nranges; k++) {
				size_t i = rp->tree_order ? rp->tree_order[k] : k;
				text_range(&rp->ranges[i], i + 1, out);
			}
		}
		if (tree) {
			fprintf(out, "# tree of process %s\n", rp->proc->name);
			if (rap_dump(rp->tree, out, o->phi, RAP_DUMP_TREE) < 0)
				return -1;
		}
	}
	return 0;
}

/* ---------------------------------------------------------------- CSV */

static int print_csv(const struct ranges_result *res, FILE *out)
{
	fputs("pid,process,source,rank,start,end,bytes,faults,lower,upper,percent,excl,excl_percent,trace,"
	      "nodes,depth,top_site,top_site_faults,sites,unattributed,mappings,node_start,node_end,parent,level\n", out);
	for (size_t p = 0; p < res->nprocs; p++) {
		const struct ranges_proc *rp = &res->procs[p];
		for (size_t i = 0; i < rp->nranges; i++) {
			const struct ranges_range *r = &rp->ranges[i];
			fprintf(out, "%u,%s,%s,%zu,0x%016" PRIx64 ",0x%016" PRIx64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
				",%" PRIu64 ",%.4f,%" PRIu64 ",%.4f,", rp->proc->pid, rp->proc->name,
				rp->source == RANGES_SOURCE_ONLINE ? "online" : "trace", i + 1, r->lo, r->hi,
				r->hi - r->lo, r->est, r->lower, r->upper, r->pct, r->excl, r->excl_pct);
			if (r->has_trace)
				fprintf(out, "%" PRIu64, r->trace);
			fprintf(out, ",%u,%u,", r->nodes, r->depth);
			csv_out_field(r->nsites ? r->sites[0].name : "", out);
			fprintf(out, ",%" PRIu64 ",%zu,%" PRIu64 ",", r->nsites ? r->sites[0].faults : 0, r->sites_total,
				r->unattributed);
			size_t len = 0;
			for (size_t k = 0; k < r->nmaps; k++)
				len += strlen(r->maps[k].name) + 1;
			char joined[len + 1];
			joined[0] = '\0';
			for (size_t k = 0; k < r->nmaps; k++) {
				if (k)
					strcat(joined, ";");
				strcat(joined, r->maps[k].name);
			}
			csv_out_field(joined, out);
			fprintf(out, ",0x%016" PRIx64 ",0x%016" PRIx64 ",", r->node_lo, r->node_hi);
			if (r->parent != RANGES_NO_PARENT)
				fprintf(out, "%zu", r->parent + 1);
			fprintf(out, ",%u\n", r->level);
		}
	}
	return 0;
}

/* ---------------------------------------------------------------- JSON */

static void json_hex(const char *key, uint64_t v, FILE *out)
{
	fprintf(out, "\"%s\": \"0x%016" PRIx64 "\"", key, v);
}

static void json_range(const struct ranges_range *r, size_t rank, FILE *out)
{
	fprintf(out, "        {\"rank\": %zu, ", rank);
	json_hex("start", r->lo, out);
	fputs(", ", out);
	json_hex("end", r->hi, out);
	fprintf(out, ", \"start_addr\": %" PRIu64 ", \"end_addr\": %" PRIu64 ", \"bytes\": %" PRIu64
		", \"faults\": %" PRIu64 ", \"lower\": %" PRIu64 ", \"upper\": %" PRIu64 ", \"percent\": %.4f"
		", \"excl\": %" PRIu64 ", \"excl_percent\": %.4f, \"nodes\": %u, \"depth\": %u, \"trace\": ",
		r->lo, r->hi, r->hi - r->lo, r->est, r->lower, r->upper, r->pct, r->excl, r->excl_pct, r->nodes,
		r->depth);
	if (r->has_trace)
		fprintf(out, "%" PRIu64, r->trace);
	else
		fputs("null", out);
	fputs(", ", out);
	json_hex("node_start", r->node_lo, out);
	fputs(", ", out);
	json_hex("node_end", r->node_hi, out);
	if (r->parent != RANGES_NO_PARENT)
		fprintf(out, ", \"parent\": %zu", r->parent + 1);
	else
		fputs(", \"parent\": null", out);
	fprintf(out, ", \"level\": %u", r->level);
	fprintf(out, ", \"unattributed\": %" PRIu64 ",\n         \"sites\": [", r->unattributed);
	for (size_t i = 0; i < r->nsites; i++) {
		const struct ranges_site *s = &r->sites[i];
		fprintf(out, "%s{\"stack_id\": %u, \"faults\": %" PRIu64 ", \"allocs\": %u, ", i ? ", " : "",
			s->stack_id, s->faults, s->allocs);
		json_hex("start", s->lo, out);
		fputs(", ", out);
		json_hex("end", s->hi, out);
		fprintf(out, ", \"alloc_id\": %u, ", s->alloc_id);
		json_hex("pc", s->pc, out);
		fputs(", \"name\": ", out);
		json_out_string(s->name, out);
		putc('}', out);
	}
	fprintf(out, "], \"sites_total\": %zu,\n         \"mappings\": [", r->sites_total);
	for (size_t i = 0; i < r->nmaps; i++) {
		const struct ranges_map *m = &r->maps[i];
		fputs(i ? ", {" : "{", out);
		json_hex("start", m->start, out);
		fputs(", ", out);
		json_hex("end", m->end, out);
		fprintf(out, ", \"perms\": \"%s\", \"name\": ", m->perms);
		json_out_string(m->name, out);
		putc('}', out);
	}
	fprintf(out, "], \"mappings_total\": %zu}", r->maps_total);
}

struct json_tree {
	FILE *out;
	bool first;
};

static int json_node(const struct rap_node_info *v, void *ctx)
{
	struct json_tree *t = ctx;
	fprintf(t->out, "%s\n        {\"start\": \"0x%016" PRIx64 "\", \"end\": \"0x%016" PRIx64 "\", \"own\": %" PRIu64
		", \"sub\": %" PRIu64 ", \"depth\": %u}", t->first ? "" : ",", v->lo, v->hi, v->own, v->sub, v->depth);
	t->first = false;
	return 0;
}

static void json_process(const struct ranges_proc *rp, bool tree, FILE *out)
{
	const struct rap_stats *st = &rp->stats;
	fprintf(out, "    {\"pid\": %u, \"process\": ", rp->proc->pid);
	json_out_string(rp->proc->name, out);
	fputs(", \"dir\": ", out);
	json_out_string(rp->proc->dir, out);
	fprintf(out, ", \"source\": \"%s\", \"source_text\": ", rp->source == RANGES_SOURCE_ONLINE ? "online" : "trace");
	json_out_string(rp->source_text, out);
	fprintf(out, ",\n     \"faults\": %" PRIu64 ", \"trace_faults\": %" PRIu64 ", \"eps\": %.6f, \"eps_now\": %.6f"
		", \"error_bound\": %" PRIu64 ", \"nodes\": %zu, \"node_capacity\": %zu, \"bytes_per_node\": %zu"
		", \"memory_bytes\": %zu, \"branch\": %u, \"depth\": %u, \"trees\": %u,\n     \"ranges\": [",
		st->n, rp->trace_faults, st->eps, st->eps_now, rp->error_bound, st->nodes, st->node_capacity,
		st->bytes_per_node, st->memory_bytes, st->branch, st->depth, st->trees);
	for (size_t i = 0; i < rp->nranges; i++) {
		fputs(i ? ",\n" : "\n", out);
		json_range(&rp->ranges[i], i + 1, out);
	}
	fputs(rp->nranges ? "\n     ]" : "]", out);
	if (tree) {
		struct json_tree t = { out, true };
		fputs(",\n     \"tree\": [", out);
		rap_walk(rp->tree, json_node, &t);
		fputs("\n     ]", out);
	}
	fputs("}", out);
}

static int print_json(const struct ranges_result *res, const struct ranges_options *o, const char *dir,
		      bool tree, FILE *out)
{
	char kinds[96];
	fputs("{\"recording\": ", out);
	json_out_string(dir, out);
	fprintf(out, ", \"eps\": %.6f, \"phi\": %.6f, \"kinds\": \"%s\",\n \"processes\": [\n", o->eps, o->phi,
		ranges_kinds_name(o->kinds, kinds, sizeof(kinds)));
	for (size_t p = 0; p < res->nprocs; p++) {
		if (p)
			fputs(",\n", out);
		json_process(&res->procs[p], tree, out);
	}
	fputs("\n ],\n \"warnings\": [", out);
	for (size_t i = 0; i < res->nwarnings; i++) {
		if (i)
			fputs(", ", out);
		json_out_string(res->warnings[i], out);
	}
	fputs("]}\n", out);
	return 0;
}

int ranges_print(const struct ranges_result *res, const struct ranges_options *o, const char *dir,
		 enum ranges_format format, bool tree, FILE *out)
{
	int rc;
	switch (format) {
	case RANGES_CSV:
		rc = print_csv(res, out);
		break;
	case RANGES_JSON:
		rc = print_json(res, o, dir, tree, out);
		break;
	default:
		rc = print_text(res, o, dir, tree, out);
		break;
	}
	if (fflush(out) != 0 || ferror(out))
		rc = -1;
	return rc;
}
