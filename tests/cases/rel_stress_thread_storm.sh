#!/usr/bin/env bash
# rel_stress_thread_storm: 20,000 short-lived threads over one run (fltrace crashed beyond 10,000),
# 16 at a time, every fourth one detached (tests/planted/rel_thread_storm.c). Each mallocs five
# blocks (24 B .. 64 KiB), fills and verifies them, frees them, and checks and rewrites its page of
# a shared 16 MiB buffer (last written by the thread 4096 indices before it) under -L 4, so threads
# also refault pages evicted long after their writers exited. Checks: exit 0, output (a checksum
# over every thread) as natively, check_stats, evictions and refaults. Then 2,000 threads 200 at a
# time: the slot pool grows by chunks of 64, and no record is dropped.
# make test and FAULTLINE_TEST_LONG=1 alike: 20,000 threads (~100,000 faults, ~20 s here).
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted rel_thread_storm
threads=20000 shared=16 local=4 max=1024

run_native storm "$PLANTED/rel_thread_storm" "$threads" "$shared"
expect_record storm -L "$local" -M "$max" -- "$PLANTED/rel_thread_storm" "$threads" "$shared"
same_output storm storm
summary storm
check_stats storm --local $((local * MIB)) --max $((max * MIB)) --procs 1
check_ge "storm evictions" "$(stat_of storm evictions)" 1
check_ge "storm faults_refault" "$(stat_of storm faults_refault)" 1

# 200 threads alive at once: the slot pool grows past its first chunks of 64 (reserved as needed;
# the whole pool at once took 740 MiB of address space), and no thread's records are dropped
run_native wide "$PLANTED/rel_thread_storm" 2000 "$shared" 200
expect_record wide -L "$local" -M "$max" -- "$PLANTED/rel_thread_storm" 2000 "$shared" 200
same_output wide wide
check_stats wide --local $((local * MIB)) --max $((max * MIB)) --procs 1
check_eq "wide: records dropped" "$(stat_of wide records_dropped)" 0
