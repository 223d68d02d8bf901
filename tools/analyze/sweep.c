/* sweep.c: the sweep's model (see sweep.h): sizes, per-size counts from stats.json, the knee. */
#include "sweep.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <faultline/evict_sizes.h>
#include <faultline/record_schema.h>

#include "cli.h"
#include "stats_json.h"

#define PAGE 4096ULL

static uint64_t round_page(uint64_t bytes)
{
	return bytes / PAGE * PAGE + (bytes % PAGE ? PAGE : 0);
}

int sweep_parse_list(const char *list, uint64_t *sizes, size_t *n, char *err, size_t errlen)
{
	char item[64], why[256];
	const char *p = list;

	*n = 0;
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		uint64_t size;
		if (len == 0 || len >= sizeof(item)) {
			snprintf(err, errlen, "'%s': expected sizes separated by commas, such as 8M,16M,64M", list);
			return -1;
		}
		memcpy(item, p, len);
		item[len] = '\0';
		if (cli_parse_size(item, CLI_MIB, &size, why, sizeof(why)) < 0) {
			snprintf(err, errlen, "'%s': %s", item, why);
			return -1;
		}
		if (size < SWEEP_MIN_LOCAL_BYTES) {
			snprintf(err, errlen, "'%s': the runtime's smallest -L is 1 MiB (--auto adds an unlimited run)", item);
			return -1;
		}
		if (*n == SWEEP_MAX_POINTS) {
			snprintf(err, errlen, "more than %d sizes", SWEEP_MAX_POINTS);
			return -1;
		}
		for (size_t k = 0; k < *n; k++)
			if (sizes[k] == round_page(size)) {
				snprintf(err, errlen, "'%s': the same size twice in the list", item);
				return -1;
			}
		sizes[(*n)++] = round_page(size);
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

/* The smallest -L that holds PEAK_BYTES resident with the runtime's eviction reserve still free
 * (evict_sizes.h): the evictor starts before local memory is full, so -L at the peak itself
 * already evicts and refaults. */
static uint64_t fitting_size(uint64_t peak_bytes)
{
	uint64_t peak_pages = round_page(peak_bytes) / 4096, pages = peak_pages;
	for (int i = 0; i < 8; i++) /* the reserve grows with -L: a few rounds settle it */
		pages = peak_pages + fl_evict_reserve_high(pages);
	return pages * 4096;
}

size_t sweep_auto_sizes(uint64_t peak_bytes, uint64_t *sizes)
{
	size_t n = 0;

	for (size_t i = 0; i <= SWEEP_AUTO_HALVINGS; i++) {
		uint64_t size = i == 0 ? fitting_size(peak_bytes) : round_page(peak_bytes >> i);
		if (size < SWEEP_MIN_LOCAL_BYTES)
			size = SWEEP_MIN_LOCAL_BYTES;
		/* the floor may land next to the size before it (1040K, then 1M): one run, not two */
		if (n == 0 || sizes[n - 1] - size >= sizes[n - 1] / 4)
			sizes[n++] = size;
	}
	return n;
}

void sweep_point_name(uint64_t local_bytes, char *buf, size_t len)
{
	if (local_bytes == 0)
		snprintf(buf, len, "unlimited");
	else if (local_bytes % CLI_MIB == 0)
		snprintf(buf, len, "L-%lluM", (unsigned long long)(local_bytes / CLI_MIB));
	else
		snprintf(buf, len, "L-%lluK", (unsigned long long)(local_bytes / CLI_KIB));
}

uint64_t sweep_point_bytes(const char *name)
{
	char *end;
	unsigned long long n;

	if (strncmp(name, "L-", 2) != 0 || name[2] < '0' || name[2] > '9')
		return 0;
	errno = 0;
	n = strtoull(name + 2, &end, 10);
	if (errno || n > (UINT64_MAX >> 20))
		return 0;
	if (strcmp(end, "M") == 0)
		return (uint64_t)n * CLI_MIB;
	if (strcmp(end, "K") == 0)
		return (uint64_t)n * CLI_KIB;
	return 0;
}

/* Process subdirectories are named PID or PID.N (trace_reader.h). */
static bool is_process_name(const char *name)
{
	const char *p = name;

	if (*p < '0' || *p > '9')
		return false;
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return *p == '\0';
}

static uint64_t stat_or_zero(const struct flat_json *stats, const char *key)
{
	uint64_t value;
	return stats_json_uint(stats, key, &value) == 0 ? value : 0;
}

static int add_process(struct sweep_point *p, const char *path, char *err, size_t errlen)
{
	struct flat_json stats = { 0 };
	uint64_t page_size = PAGE;

	p->processes++;
	if (access(path, F_OK) != 0) {
		p->processes_without_stats++;
		return 0;
	}
	if (stats_json_load(path, &stats, err, errlen) < 0)
		return -1;
	p->faults_total += stat_or_zero(&stats, FL_STATS_FAULTS_TOTAL);
	p->first_touch += stat_or_zero(&stats, FL_STATS_FAULTS_FIRST_TOUCH);
	p->refault += stat_or_zero(&stats, FL_STATS_FAULTS_REFAULT);
	p->soft += stat_or_zero(&stats, FL_STATS_FAULTS_SOFT);
	p->far_read_bytes += stat_or_zero(&stats, FL_STATS_FAR_READ_PAGES) * page_size;
	p->far_write_bytes += stat_or_zero(&stats, FL_STATS_FAR_WRITE_PAGES) * page_size;
	uint64_t peak = stat_or_zero(&stats, FL_STATS_PEAK_RESIDENT);
	if (peak > p->peak_resident_bytes)
		p->peak_resident_bytes = peak;
	stats_json_free(&stats);
	return 0;
}

int sweep_point_load(struct sweep_point *p, const char *dir, char *err, size_t errlen)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int rc = 0;

	if (!d) {
		snprintf(err, errlen, "opendir %s: %s", dir, strerror(errno));
		return -1;
	}
	p->faults_total = p->first_touch = p->refault = p->soft = 0;
	p->far_read_bytes = p->far_write_bytes = p->peak_resident_bytes = 0;
	p->processes = p->processes_without_stats = 0;
	while (rc == 0 && (e = readdir(d)) != NULL) {
		char path[4096];
		if (!is_process_name(e->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s/stats.json", dir, e->d_name);
		rc = add_process(p, path, err, errlen);
	}
	closedir(d);
	if (rc == 0 && p->processes == 0) {
		snprintf(err, errlen, "%s: no process directory (did the program start?)", dir);
		rc = -1;
	}
	return rc;
}

static int larger_first(const void *a, const void *b)
{
	const struct sweep_point *x = a, *y = b;
	uint64_t kx = x->local_bytes ? x->local_bytes : UINT64_MAX, ky = y->local_bytes ? y->local_bytes : UINT64_MAX;
	return kx > ky ? -1 : kx < ky;
}

void sweep_sort(struct sweep_point *points, size_t n)
{
	qsort(points, n, sizeof(*points), larger_first);
}

size_t sweep_knee(const struct sweep_point *points, size_t n)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	size_t limited = 0, knee = SIZE_MAX;

	for (size_t i = 0; i < n; i++) {
		if (points[i].local_bytes == 0)
			continue;
		limited++;
		lo = points[i].refault < lo ? points[i].refault : lo;
		hi = points[i].refault > hi ? points[i].refault : hi;
	}
	if (limited < 2 || lo == hi)
		return SIZE_MAX;
	double threshold = (double)lo + 0.1 * (double)(hi - lo);
	for (size_t i = 0; i < n; i++) { /* largest first: the last one under the threshold */
		if (points[i].local_bytes && (double)points[i].refault <= threshold)
			knee = i;
		else if (points[i].local_bytes && knee != SIZE_MAX)
			break;
	}
	return knee;
}
