/* trace_load_maps.c: loads a process's maps file: the /proc/self/maps snapshots the runtime took,
 * each after a line "# maps TIME REASON", parsed (trace/maps.c) and put in time order. */
#include "trace_load_maps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <limits.h>
#include <stdbool.h>


/* Where maps.c's diagnostics go: the recording's warnings. */
static void maps_diag_to_warning(void *ctx, const char *message)
{
	fl_load_warning(ctx, "%s", message);
}

/* Parses "# maps TIME REASON" (the line without its newline) into *time and *reason (malloc'd).
 * Returns 0, 1 when the line is no snapshot header at all, -1 when it is a malformed one. */
static int parse_maps_header(const char *line, size_t len, uint64_t *time, char **reason)
{
	static const char prefix[] = "# maps ";
	size_t at = sizeof(prefix) - 1, digits = 0;
	uint64_t t = 0;

	if (len < at || memcmp(line, prefix, at) != 0)
		return 1;
	while (at < len && line[at] >= '0' && line[at] <= '9') {
		unsigned d = (unsigned)(line[at++] - '0');
		if (t > (UINT64_MAX - d) / 10)
			return -1;
		t = t * 10 + d;
		digits++;
	}
	if (digits == 0 || at >= len || line[at] != ' ')
		return -1;
	at++;
	if (at >= len || len - at > 63)
		return -1;
	for (size_t i = at; i < len; i++) {
		if (line[i] <= ' ' || line[i] > '~')
			return -1;
	}
	*reason = strndup(line + at, len - at);
	if (!*reason)
		return -1;
	*time = t;
	return 0;
}

/* Parses the snapshot whose text is [text, text + len), starting at OFFSET of the file. */
static int add_snapshot(struct loader *ld, const char *text, size_t len, size_t offset)
{
	struct fl_process *proc = ld->proc;
	struct fl_maps_snapshot *s = &proc->maps[proc->nmaps - 1];
	char source[PATH_MAX + 64];

	snprintf(source, sizeof(source), "%s (snapshot at offset %zu)", ld->path, offset);
	s->maps = maps_parse(text, len, source, maps_diag_to_warning, ld->rec);
	if (!s->maps)
		return fl_load_nomem(ld, "a maps snapshot");
	return 0;
}

/* The process directory of MAPS_PATH (".../maps") holds a stacks file with a stack in it. */
static bool has_stacks(const char *maps_path)
{
	char path[PATH_MAX];
	const char *slash = strrchr(maps_path, '/');
	struct stat st;
	int dir_len = slash ? (int)(slash - maps_path) : 0;

	if ((size_t)snprintf(path, sizeof(path), "%.*s/%s", dir_len, maps_path, FL_FILE_NAME_STACKS) >= sizeof(path))
		return false;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size > sizeof(struct fl_file_header);
}

/* The first snapshot lists the process's executable (meta.json exe); one that does not is another
 * process's file (copied from another recording): its names would be wrong, said once. */
static void warn_foreign(struct loader *ld, const char *text, size_t len)
{
	const struct fl_process *proc = ld->proc;
	size_t exe_len = proc->exe ? strlen(proc->exe) : 0;
	if (exe_len == 0 || proc->exe[0] != '/')
		return;
	const char *first = memchr(text, '\n', len);
	if (!first)
		return;
	const char *next = memmem(first, len - (size_t)(first - text), "\n# maps ", 9);
	size_t span = next ? (size_t)(next - first) : len - (size_t)(first - text);
	if (span > 1 && !memmem(first, span, proc->exe, exe_len)) /* (an empty first snapshot: a cut file) */
		fl_load_warning(ld->rec, "%s: its first snapshot does not map the process's executable %s: not this "
				"process's maps (copied from another recording?); code addresses may be named wrong",
				ld->path, proc->exe);
}

int fl_load_maps(struct loader *ld)
{
	struct fl_process *proc = ld->proc;
	struct mapped_file file;
	size_t cap = 0, at = 0, section = 0, section_offset = 0;

	if (fl_load_set_path(ld, FL_FILE_NAME_MAPS) < 0)
		return -1;
	int rc = fl_load_map(ld, &file);
	if (rc < 0)
		return rc;
	if (rc == 0 || file.len == 0) {
		/* the runtime writes a snapshot at start: with stacks recorded, the file was lost or cut */
		if (has_stacks(ld->path))
			fl_load_warning(ld->rec, "%s: %s: no memory maps, so code addresses are shown as numbers, "
				    "not functions", ld->path, rc == 0 ? "missing" : "empty");
		if (rc > 0)
			fl_load_unmap(&file);
		return 0;
	}
	const char *text = (const char *)file.data;
	size_t len = file.len;
	while (at < len) {
		const char *nl = memchr(text + at, '\n', len - at);
		if (!nl) {
			proc->maybe_cut = true;
			fl_load_warning(ld->rec, "%s: truncated at offset %zu (a last line without its newline ignored; "
				    "%zu complete snapshots)", ld->path, at, proc->nmaps);
			break;
		}
		size_t line_len = (size_t)(nl - (text + at));
		uint64_t time;
		char *reason = NULL;
		int header = parse_maps_header(text + at, line_len, &time, &reason);
		if (header < 0 || (header == 1 && proc->nmaps == 0)) {
			/* damaged: the snapshots before stay, stacks are named by them or shown as addresses */
			fl_load_warning(ld->rec, "%s: damaged at offset %zu (%s; want \"# maps TIME REASON\"): %zu complete "
				    "snapshot%s kept, later mappings unknown", ld->path, at, header < 0 ? "a malformed "
				    "snapshot line" : "text before the first snapshot line", proc->nmaps, proc->nmaps == 1 ? "" : "s");
			break;
		}
		if (header == 0) {
			if (proc->nmaps && add_snapshot(ld, text + section, at - section, section_offset) < 0) {
				free(reason);
				fl_load_unmap(&file);
				return -1;
			}
			if (proc->nmaps == cap) {
				size_t grown_cap = cap ? cap * 2 : 4;
				struct fl_maps_snapshot *grown = realloc(proc->maps, grown_cap * sizeof(*grown));
				if (!grown) {
					free(reason);
					fl_load_unmap(&file);
					return fl_load_nomem(ld, "maps snapshots");
				}
				proc->maps = grown;
				cap = grown_cap;
			}
			proc->maps[proc->nmaps++] = (struct fl_maps_snapshot){ time, reason, NULL };
			section = (size_t)(nl - text) + 1;
			section_offset = at;
		}
		at = (size_t)(nl - text) + 1;
	}
	if (proc->nmaps && add_snapshot(ld, text + section, at - section, section_offset) < 0) {
		fl_load_unmap(&file);
		return -1;
	}
	warn_foreign(ld, text, len);
	fl_load_unmap(&file);
	/* Insertion sort by time: snapshots are few and normally in order already. */
	for (size_t i = 1; i < proc->nmaps; i++) {
		struct fl_maps_snapshot s = proc->maps[i];
		size_t j = i;
		for (; j > 0 && proc->maps[j - 1].time_ns > s.time_ns; j--)
			proc->maps[j] = proc->maps[j - 1];
		proc->maps[j] = s;
	}
	return 0;
}

