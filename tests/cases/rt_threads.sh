#!/usr/bin/env bash
# rt_threads: 4 threads, each filling and twice verifying its own malloc'd buffer, all faulting at
# the same time (tests/planted/threads.c), with the default number of handler threads, -c 1 and -c 2.
# Same checks as rt_fill: exit 0, same checksum as natively, first-touch faults between pages and
# pages + 2 % + 2048, refaults and evictions under -L, at most one fault per page per pass,
# peak_resident_bytes <= -L, records_dropped = 0.
# Default: the issue's 4 x 64 MiB with -L 32; FAULTLINE_TEST_LONG=1: 4 x 256 MiB, -L 128.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted threads

threads=4
if [ "$LONG" = 1 ]; then size=256 local=128; else size=64 local=32; fi
max=1024
pages=$((threads * size * MIB / PAGE))
allow=$(first_touch_allowance "$pages")

run_native threads "$PLANTED/threads" "$threads" "$size"

for handlers in default 1 2; do
	name=threads-c$handlers
	opts=(-L "$local" -M "$max")
	[ "$handlers" = default ] || opts+=(-c "$handlers")
	expect_record "$name" "${opts[@]}" -- "$PLANTED/threads" "$threads" "$size"
	same_output "$name" threads
	summary "$name"
	check_stats "$name" --local $((local * MIB)) --max $((max * MIB)) --procs 1
	check_first_touch "$name" "$pages"
	check_ge "$name faults_refault" "$(stat_of "$name" faults_refault)" 1
	check_ge "$name evictions" "$(stat_of "$name" evictions)" 1
	check_le "$name faults_total" "$(stat_of "$name" faults_total)" $((3 * pages + allow))
done
