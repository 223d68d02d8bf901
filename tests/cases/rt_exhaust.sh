#!/usr/bin/env bash
# rt_exhaust: running out of the region (tests/planted/exhaust.c with -M 32). The program checks that
# malloc returns NULL with ENOMEM and anonymous mmap MAP_FAILED with ENOMEM, that it did not crash,
# that what it already holds is intact, that after freeing everything the same amount can be had
# again (three rounds: -M bounds the peak, not the total), and that mmap/munmap of -M/2 succeeds ten
# times in a row. Modes malloc, mmap, churn each run alone, then all three in one process.
#
# The stderr message. Decision: the runtime must say, on stderr, that the region is exhausted and
# name -M, at least once in a run whose program hit the limit, and at most once per failed request
# (the program prints "failed requests N"; no flood of one line per retry or per page); a run that
# never hits the limit (churn) must print no such line. A matching line contains "region" and
# "exhaust" (any case) and the literal "-M".
# Also: peak_heap_bytes <= -M and peak_resident_bytes <= -L (check_stats).
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted exhaust

max=32 local=8
for mode in malloc mmap churn all; do
	name=exhaust-$mode
	expect_record "$name" -L "$local" -M "$max" -- "$PLANTED/exhaust" "$mode" "$max"
	cat "$WORK/$name.out"
	failed=$(sed -n 's/^failed requests \([0-9]*\)$/\1/p' "$WORK/$name.out")
	is_int "$failed" || fail "$name: no 'failed requests N' line in the program's output"
	lines=$(grep -i 'region' "$WORK/$name.err" | grep -i 'exhaust' | grep -c -e '-M')
	if [ "$failed" -gt 0 ]; then
		[ "$lines" -ge 1 ] || { show_err "$name"; fail "$name: no stderr line saying the region is exhausted and naming -M"; }
	fi
	check_le "$name: stderr lines about the exhausted region (failed requests $failed)" "$lines" "$failed"
	summary "$name"
	check_stats "$name" --local $((local * MIB)) --max $((max * MIB)) --procs 1
done
grep -i 'region' "$WORK/exhaust-malloc.err" | grep -i 'exhaust' | grep -m1 -e '-M' | sed 's/^/# message: /'
