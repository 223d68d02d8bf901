#!/usr/bin/env bash
# rt_fill: one big malloc filled in order, then read twice (tests/planted/fill.c), under a local limit
# a quarter of its size (CLOCK, the default, and FIFO), and without a limit.
#   - exit 0 and the same checksum as natively (the program checks every word itself);
#   - first-touch faults: at least one per page, at most pages + 2 % + 2048 (allocator metadata);
#   - the two read passes must refault (evicted pages come back), and evictions happen;
#   - no more than one fault per page per pass: faults_total <= 3 * pages + the same allowance;
#   - peak_resident_bytes <= -L, records_dropped = 0 (check_stats);
#   - without -L: no eviction, no refault, and the whole buffer was resident at once.
# Default: the issue's 256 MiB with -L 64 (about 196,000 faults per limited run); FAULTLINE_TEST_LONG=1:
# 1 GiB with -L 256.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted fill

if [ "$LONG" = 1 ]; then size=1024 local=256; else size=256 local=64; fi
max=2048
pages=$((size * MIB / PAGE))
allow=$(first_touch_allowance "$pages")

run_native fill "$PLANTED/fill" "$size"

for policy in default fifo; do
	name=fill-$policy
	opts=(-L "$local" -M "$max")
	[ "$policy" = default ] || opts+=(--policy "$policy")
	expect_record "$name" "${opts[@]}" -- "$PLANTED/fill" "$size"
	same_output "$name" fill
	summary "$name"
	check_stats "$name" --local $((local * MIB)) --max $((max * MIB)) --procs 1
	check_first_touch "$name" "$pages"
	check_ge "$name faults_refault" "$(stat_of "$name" faults_refault)" 1
	check_ge "$name evictions" "$(stat_of "$name" evictions)" 1
	check_le "$name faults_total" "$(stat_of "$name" faults_total)" $((3 * pages + allow))
	check_ge "$name peak_heap_bytes" "$(stat_of "$name" peak_heap_bytes)" $((size * MIB))
done

name=fill-unlimited
expect_record "$name" -M "$max" -- "$PLANTED/fill" "$size"
same_output "$name" fill
summary "$name"
check_stats "$name" --max $((max * MIB)) --procs 1
check_first_touch "$name" "$pages"
check_eq "$name evictions" "$(stat_of "$name" evictions)" 0
check_eq "$name faults_refault" "$(stat_of "$name" faults_refault)" 0
check_ge "$name peak_resident_bytes" "$(stat_of "$name" peak_resident_bytes)" $((size * MIB))
