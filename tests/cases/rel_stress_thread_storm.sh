#!/usr/bin/env bash
# rel_stress_thread_storm: 20,000 short-lived threads over one run (fltrace crashed beyond 10,000),
# 16 at a time, every fourth one detached (tests/planted/rel_thread_storm.c). Each mallocs five
# blocks (24 B .. 64 KiB), fills and verifies them, frees them, and checks and rewrites its page of
# a shared 16 MiB buffer (last written by the thread 4096 indices before it) under -L 4, so threads
# also refault pages evicted long after their writers exited. Checks: exit 0, output (a checksum
# over every thread) as natively, check_stats, evictions and refaults.
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
