/* test_heatmap.c: the heatmap's text is true (issue: an object never freed was shown ending at
 * 18446744073.7 s, UINT64_MAX ns; most of the address axis had no label).
 * A heatmap of 4096 pages faulted in address order over one second, with one object freed at
 * 0.5 s and one never freed (end UINT64_MAX): the tooltips say "0.25-0.5 s" and "to exit", no
 * time past the recording's end appears, and addresses are labelled down the whole axis. */
#include "check.h"
#include "heatmap.h"

#include <inttypes.h>
#include <stdint.h>
#include <string.h>

int main(void)
{
	const uint64_t base = 0x7f0000000000ULL, pages = 4096;
	struct heatmap *hm = heatmap_new(4096);
	struct heatmap_options o;
	struct heatmap_stats st;
	char *svg = NULL;
	size_t len = 0;

	REQUIRE(hm != NULL, "heatmap_new");
	int added = 0;
	for (uint64_t p = 0; p < pages; p++)
		added |= heatmap_add_fault(hm, p * 1000000000ULL / pages, base + p * 4096, 1);
	REQUIRE(added == 0, "add %" PRIu64 " faults", pages);
	REQUIRE(heatmap_add_alloc(hm, 250000000, 500000000, base, 2048 * 4096, 2048, "freed") == 0, "add alloc");
	REQUIRE(heatmap_add_alloc(hm, 250000000, UINT64_MAX, base + 2048 * 4096, 2048 * 4096, 2048, "kept") == 0,
		"add a never-freed alloc");
	heatmap_options_init(&o);
	FILE *out = open_memstream(&svg, &len);
	REQUIRE(out != NULL, "open_memstream");
	REQUIRE(heatmap_write_svg(hm, &o, out, &st) == 0, "heatmap_write_svg");
	fclose(out);

	CHECK(strstr(svg, "18446744073") == NULL, "no time of 18446744073 s (UINT64_MAX ns) in the picture");
	CHECK(strstr(svg, "kept: 8 MiB at 0x7f0000800000, 0.25 s to exit") != NULL, "the never-freed object lives 'to exit'");
	CHECK(strstr(svg, "freed: 8 MiB at 0x7f0000000000, 0.25-0.5 s") != NULL, "the freed object ends at 0.5 s");
	size_t labels = 0;
	for (const char *p = svg; (p = strstr(p, ">0x7f")) != NULL; p++)
		labels++;
	CHECK(labels >= 8, "%zu address labels down a 512 px axis (want >= 8)", labels);
	free(svg);
	heatmap_free(hm);
	return check_summary("test_heatmap");
}
