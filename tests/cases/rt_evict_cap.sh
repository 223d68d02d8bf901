#!/usr/bin/env bash
# rt_evict_cap: the hard cap under the evictor thread (runtime/evict.c). 1, 4 and 16 threads fill
# and twice verify their own buffers (tests/planted/threads.c: every word checked, same checksum as
# natively) in 64 MiB in all at -L 16, so at least 75 % of what is written is evicted, while the
# evictor refills its reserve of free pages concurrently with the faults. Per run: exit 0, output
# identical to the native run, peak_resident_bytes <= -L and records_dropped = 0 (check_stats),
# the evictor ran and pages were moved (UFFDIO_MOVE) into the mirror, and with
# FAULTLINE_CHECK_STATES=1 no page's state disagrees with the kernel's page table at exit. The CPU
# split in stats.json: the handlers' and the evictor's CPU time are each part of the process's (the
# evictor's is 0 without the thread), and the handlers', having served faults, is not 0.
# One more run with --policy fifo (4 threads) and one with the evictor off (inline eviction only).
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted threads

total=64 local=16 max=1024
[ "$LONG" = 1 ] && total=256 local=32
pages=$((total * MIB / PAGE))

export FAULTLINE_CHECK_STATES=1
for run in 1 4 16 4-fifo 4-inline; do
	threads=${run%%-*}
	size=$((total / threads))
	name=cap-$run
	opts=(-L "$local" -M "$max")
	[ "$run" = 4-fifo ] && opts+=(--policy fifo)
	run_native "native-$threads" "$PLANTED/threads" "$threads" "$size"
	if [ "$run" = 4-inline ]; then
		FAULTLINE_EVICT_INLINE=1 expect_record "$name" "${opts[@]}" -- "$PLANTED/threads" "$threads" "$size"
	else
		expect_record "$name" "${opts[@]}" -- "$PLANTED/threads" "$threads" "$size"
	fi
	same_output "$name" "native-$threads"
	summary "$name"
	check_stats "$name" --local $((local * MIB)) --max $((max * MIB)) --procs 1
	check_first_touch "$name" "$pages"
	check_ge "$name evictions (>= 75 % of the pages written)" "$(stat_of "$name" evictions)" $((pages * 3 / 4))
	check_eq "$name page_state_mismatches" "$(stat_of "$name" page_state_mismatches)" 0
	check_ge "$name evict_moved" "$(stat_of "$name" evict_moved)" 1
	cpu=$(stat_of "$name" cpu_ns) handler_cpu=$(stat_of "$name" handler_cpu_ns) evictor_cpu=$(stat_of "$name" evictor_cpu_ns)
	check_ge "$name handler_cpu_ns" "$handler_cpu" 1
	check_ge "$name cpu_ns >= handler_cpu_ns + evictor_cpu_ns" "$cpu" $((handler_cpu + evictor_cpu))
	if [ "$run" = 4-inline ]; then
		check_eq "$name evictor_rounds (evictor off)" "$(stat_of "$name" evictor_rounds)" 0
		check_eq "$name evictor_cpu_ns (evictor off)" "$evictor_cpu" 0
	else
		check_ge "$name evictor_rounds" "$(stat_of "$name" evictor_rounds)" 1
		check_ge "$name evictor_cpu_ns" "$evictor_cpu" 1
	fi
done
