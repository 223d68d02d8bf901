#!/usr/bin/env bash
# rt_realloc: the malloc family's edge cases and a realloc storm (tests/planted/realloc_storm.c) in
# a small local memory: calloc zeroing after reuse, reallocarray, posix_memalign / aligned_alloc /
# memalign / valloc / pvalloc alignment, malloc_usable_size, free(NULL), realloc(NULL, n), malloc(0),
# overflowing sizes failing with ENOMEM, and every realloc keeping its prefix. The program checks all
# of it; the case checks exit 0, output identical to the native run, evictions (-L is far below the
# working set), and the recording's invariants (check_stats).
# Default 600 operations of up to 16 MiB with -L 8 (about 100,000 faults); FAULTLINE_TEST_LONG=1: 2500
# of up to 48 MiB with -L 24 (about 35 s here).
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted realloc_storm

if [ "$LONG" = 1 ]; then iterations=2500 biggest=48 local=24; else iterations=600 biggest=16 local=8; fi
max=1024

run_native realloc "$PLANTED/realloc_storm" "$iterations" "$biggest"
expect_record realloc -L "$local" -M "$max" -- "$PLANTED/realloc_storm" "$iterations" "$biggest"
same_output realloc realloc
summary realloc
check_stats realloc --local $((local * MIB)) --max $((max * MIB)) --procs 1
check_ge "realloc evictions" "$(stat_of realloc evictions)" 1
check_ge "realloc faults_refault" "$(stat_of realloc faults_refault)" 1
