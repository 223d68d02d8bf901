/* sweep.h: the model behind `faultline sweep` — one point per local-memory size (its recording's
 * fault counts and far traffic, summed over the recording's processes, and the run's times), the
 * sizes of --auto, the -L list, and the knee of the refault curve. No printing, no running. */
#ifndef FAULTLINE_TOOLS_SWEEP_H
#define FAULTLINE_TOOLS_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The runtime's smallest -L (runtime/context.h FL_MIN_LOCAL_PAGES): smaller sizes are refused. */
#define SWEEP_MIN_LOCAL_BYTES ((uint64_t)1 << 20)

/* At most this many sizes in one sweep. */
#define SWEEP_MAX_POINTS 64

/* --auto: the unlimited run's peak, then halved this many times (1/2 .. 1/16). */
#define SWEEP_AUTO_HALVINGS 4

struct sweep_point {
	uint64_t local_bytes;       /* -L; 0: unlimited */
	char name[64];              /* subdirectory of the sweep's output: "L-8M", "unlimited" */
	/* from the recording's stats.json files, summed over its processes */
	uint64_t faults_total, first_touch, refault, soft;
	uint64_t far_read_bytes, far_write_bytes;   /* far_read_pages / far_write_pages x page size */
	uint64_t peak_resident_bytes;               /* the largest process's peak_resident_bytes */
	size_t processes, processes_without_stats;
	/* from the run itself */
	double wall_s;              /* fork of `faultline record` to its exit */
	double cpu_s;               /* user + system CPU of record and everything it waited for
	                             * (the program, its runtime threads): wait4's rusage */
	int exit_status;            /* record's (the program's) */
};

/* Parses "-L LIST": sizes separated by commas ("8M,16M,64M"; a bare number is MiB, as for record),
 * each at least SWEEP_MIN_LOCAL_BYTES, at most SWEEP_MAX_POINTS. Fills sizes (rounded up to 4 KiB) and *n. 0, or -1 with a
 * reason in err. */
int sweep_parse_list(const char *list, uint64_t *sizes, size_t *n, char *err, size_t errlen);

/* The --auto sizes from a peak: the smallest -L that holds the peak with the runtime's eviction
 * reserve free (no refault), then peak/2, ..., peak/16, each rounded up to 4 KiB; those below
 * SWEEP_MIN_LOCAL_BYTES become it, once (the runtime's floor), and not at all when the size before
 * is within a quarter of it (1040K, then 1M). Returns how many were written
 * (1 .. SWEEP_AUTO_HALVINGS + 1). */
size_t sweep_auto_sizes(uint64_t peak_bytes, uint64_t *sizes);

/* The name of a size's subdirectory: "L-8M" when a whole number of MiB, else "L-1234K"; "unlimited"
 * for 0. */
void sweep_point_name(uint64_t local_bytes, char *buf, size_t len);

/* The inverse: the -L of a limited size's name ("L-8M", "L-1234K"); 0 for any other name
 * ("unlimited", "L-8G", "x"). */
uint64_t sweep_point_bytes(const char *name);

/* Reads the stats.json of every process subdirectory of DIR into P's counters. 0, or -1 with a
 * reason in err (DIR unreadable, a stats.json malformed, or no process subdirectory). A process
 * without stats.json (killed) is counted in processes_without_stats, its counts unknown. */
int sweep_point_load(struct sweep_point *p, const char *dir, char *err, size_t errlen);

/* Sorts points by local_bytes, largest first, unlimited (0) before all. */
void sweep_sort(struct sweep_point *points, size_t n);

/* The knee of the refault curve: among POINTS (sorted by sweep_sort), the index of the smallest
 * limited size whose refaults are still within 10 % of the curve's range above its minimum
 * (refault <= min + 0.1 x (max - min)): below it, shrinking local memory costs refaults. SIZE_MAX
 * when fewer than two limited points, or when every point has the same refaults (a flat curve). */
size_t sweep_knee(const struct sweep_point *points, size_t n);

#endif
