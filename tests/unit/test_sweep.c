/* test_sweep.c: unit tests of the sweep's model (tools/analyze/sweep.c): the -L list, the --auto
 * sizes (halvings, the runtime's 1 MiB floor), the order of points and the knee of the refault curve,
 * on hand-made points whose knee is known. */
#include <stdint.h>
#include <string.h>

#include "cli.h"
#include "sweep.h"

#include "check.h"

#define MiB CLI_MIB

static void list(void)
{
	uint64_t sizes[SWEEP_MAX_POINTS] = { 0 };
	size_t n = 0;
	char err[256] = "";

	CHECK(sweep_parse_list("8M,16,1.5G,1025K", sizes, &n, err, sizeof(err)) == 0 && n == 4 && sizes[0] == 8 * MiB &&
	      sizes[1] == 16 * MiB && sizes[2] == 1536 * MiB && sizes[3] == 1028 * 1024,
	      "8M,16,1.5G,1025K: n %zu, %llu %llu %llu %llu (%s)", n, (unsigned long long)sizes[0],
	      (unsigned long long)sizes[1], (unsigned long long)sizes[2], (unsigned long long)sizes[3], err);
	CHECK(sweep_parse_list("8M,,16M", sizes, &n, err, sizeof(err)) < 0 && strstr(err, "commas"), "empty item: %s", err);
	CHECK(sweep_parse_list("8M,", sizes, &n, err, sizeof(err)) < 0, "trailing comma: %s", err);
	CHECK(sweep_parse_list("512K", sizes, &n, err, sizeof(err)) < 0 && strstr(err, "1 MiB"), "below 1 MiB: %s", err);
	CHECK(sweep_parse_list("x", sizes, &n, err, sizeof(err)) < 0 && strstr(err, "'x'"), "bad size: %s", err);
	char many[SWEEP_MAX_POINTS * 8 + 16] = "", item[16];
	for (int i = 0; i <= SWEEP_MAX_POINTS; i++) {
		snprintf(item, sizeof(item), i ? ",%dM" : "%dM", i + 2);
		strcat(many, item);
	}
	CHECK(sweep_parse_list(many, sizes, &n, err, sizeof(err)) < 0 && strstr(err, "more than"), "too many: %s", err);
	CHECK(sweep_parse_list("2M,4M,2048K", sizes, &n, err, sizeof(err)) < 0 && strstr(err, "'2048K': the same size twice"),
	      "the same size twice: %s", err);
}

static void auto_sizes(void)
{
	uint64_t sizes[SWEEP_AUTO_HALVINGS + 1] = { 0 };
	size_t n = sweep_auto_sizes(64 * MiB + 100, sizes);

	/* 16,385 pages of peak: with the reserve of 1/16 of -L (1,092 pages at 17,477), 17,477 pages */
	CHECK(n == 5 && sizes[0] == 17477 * 4096ull && sizes[1] == 32 * MiB + 4096 && sizes[4] == 4 * MiB + 4096,
	      "64 MiB + 100: %zu sizes, %llu .. %llu", n, (unsigned long long)sizes[0], (unsigned long long)sizes[n - 1]);
	n = sweep_auto_sizes(4 * MiB, sizes);
	CHECK(n == 3 && sizes[0] == (1024 + 68) * 4096ull && sizes[1] == 2 * MiB && sizes[2] == MiB,
	      "4 MiB: the reserve on top, the 1 MiB floor once (%zu sizes, first %llu)", n, (unsigned long long)sizes[0]);
	n = sweep_auto_sizes(8320 * 1024, sizes); /* peak/8 is 1040K, peak/16 would be the 1 MiB floor */
	CHECK(n == 4 && sizes[3] == 1040 * 1024, "8320 KiB: the floor next to 1040K not added (%zu sizes, last %llu)", n,
	      (unsigned long long)sizes[n - 1]);
	n = sweep_auto_sizes(4096, sizes);
	CHECK(n == 1 && sizes[0] == MiB, "a page: only the floor (%zu)", n); /* 1 + 16 pages of reserve, below it */
}

static struct sweep_point point(uint64_t local, uint64_t refault)
{
	struct sweep_point p;
	memset(&p, 0, sizeof(p));
	p.local_bytes = local;
	p.refault = refault;
	return p;
}

static void knee(void)
{
	/* refaults fall steeply until 24 MiB, then flatten: the knee is 24 MiB */
	struct sweep_point pts[] = { point(8 * MiB, 10000), point(32 * MiB, 120), point(0, 0), point(16 * MiB, 6000),
				     point(24 * MiB, 900), point(64 * MiB, 100) };
	size_t n = sizeof(pts) / sizeof(pts[0]);

	sweep_sort(pts, n);
	CHECK(pts[0].local_bytes == 0 && pts[1].local_bytes == 64 * MiB && pts[n - 1].local_bytes == 8 * MiB,
	      "sorted: unlimited first, then largest first");
	size_t k = sweep_knee(pts, n);
	CHECK(k < n && pts[k].local_bytes == 24 * MiB, "knee at 24 MiB (index %zu: %llu)", k,
	      k < n ? (unsigned long long)pts[k].local_bytes : 0ULL);
	/* a step: none below N, all above */
	struct sweep_point step[] = { point(8 * MiB, 0), point(6 * MiB, 0), point(3 * MiB, 3072), point(2 * MiB, 3072) };
	k = sweep_knee(step, 4);
	CHECK(k == 1, "step curve: knee at 6 MiB (index %zu)", k);
	struct sweep_point flat[] = { point(8 * MiB, 5), point(4 * MiB, 5) };
	CHECK(sweep_knee(flat, 2) == SIZE_MAX, "flat curve: no knee");
	struct sweep_point one[] = { point(0, 0), point(4 * MiB, 5) };
	CHECK(sweep_knee(one, 2) == SIZE_MAX, "one limited point: no knee");
}

static void names(void)
{
	char buf[64];
	sweep_point_name(8 * MiB, buf, sizeof(buf));
	CHECK(strcmp(buf, "L-8M") == 0, "8 MiB: %s", buf);
	sweep_point_name(MiB + 4096, buf, sizeof(buf));
	CHECK(strcmp(buf, "L-1028K") == 0, "1 MiB + 4 KiB: %s", buf);
	sweep_point_name(0, buf, sizeof(buf));
	CHECK(strcmp(buf, "unlimited") == 0, "0: %s", buf);
	/* the inverse, on every form sweep_point_name writes and on names it never writes */
	static const uint64_t sizes[] = { 8 * MiB, MiB + 4096, 1024 * MiB, 3 * 4096 };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		sweep_point_name(sizes[i], buf, sizeof(buf));
		CHECK(sweep_point_bytes(buf) == sizes[i], "%s read back as %llu", buf,
		      (unsigned long long)sweep_point_bytes(buf));
	}
	static const char *const others[] = { "unlimited", "L-", "L-8", "L-8G", "L-8MB", "L--8M", "x-8M", "L-99999999999999999999M", "" };
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		CHECK(sweep_point_bytes(others[i]) == 0, "'%s' is not a size's name", others[i]);
}

int main(void)
{
	list();
	auto_sizes();
	knee();
	names();
	return check_summary("test_sweep");
}
