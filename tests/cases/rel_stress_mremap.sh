#!/usr/bin/env bash
# rel_stress_mremap: random churn of the program's own anonymous mappings under -L 4
# (tests/planted/rel_mremap_churn.c): mmap, mremap grow (may move) / shrink / move onto written
# pages (MREMAP_FIXED), munmap of heads, tails, middles and wholes, MAP_FIXED over live pages,
# MADV_DONTNEED, rewrites and full checks, against a model of every page's content (moved pages
# keep their data; unmapped, replaced or discarded ones read back as zeros, never a stale far
# copy). Up to 8192 pages (32 MiB) live, so pages are evicted between operations. Three seeds.
# Checks per seed: exit 0, output (operation counts and a checksum of the final state) as natively,
# check_stats, evictions.
# 4,000 operations per seed in make test (~60,000 faults each); 12,000 with FAULTLINE_TEST_LONG=1
# (~180,000 each).
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted rel_mremap_churn
local=4 max=1024 pages=8192
if [ "$LONG" = 1 ]; then ops=12000; else ops=4000; fi

for seed in 1 2 3; do
	name=mremap-$seed
	run_native "$name" "$PLANTED/rel_mremap_churn" "$ops" "$pages" "$seed"
	expect_record "$name" -L "$local" -M "$max" -- "$PLANTED/rel_mremap_churn" "$ops" "$pages" "$seed"
	same_output "$name" "$name"
	summary "$name"
	check_stats "$name" --local $((local * MIB)) --max $((max * MIB)) --procs 1
	check_ge "$name evictions" "$(stat_of "$name" evictions)" 1
done
