#!/usr/bin/env bash
# rel_stress_churn: 64 threads allocating (malloc, calloc), writing, verifying, reallocating and
# freeing blocks of random sizes from 8 B to 8 MiB (tests/planted/rel_churn.c), with at most
# 64 MiB live (the working set) and -L = 10 % of it (6552 KiB, a whole number of pages). Every
# block is checked in full before it is freed, reallocated or rewritten (the prefix kept by
# realloc too), calloc'd blocks must read zeros; the program exits 1 at the first wrong byte.
# Checks: exit 0, output as natively, check_stats (peak_resident_bytes <= -L, nothing dropped),
# evictions and refaults.
# 5 s in make test (~180,000 faults here); 20 s with FAULTLINE_TEST_LONG=1.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted rel_churn
threads=64 budget=64 max=1024
if [ "$LONG" = 1 ]; then secs=20; else secs=5; fi
local_kib=$((budget * 1024 / 10 / 4 * 4))   # 10 % of the working set, rounded down to pages

run_native churn "$PLANTED/rel_churn" "$threads" "$secs" "$budget"
expect_record churn -L "${local_kib}K" -M "$max" -- "$PLANTED/rel_churn" "$threads" "$secs" "$budget"
same_output churn churn
grep '^rel_churn:' "$WORK/churn.err" | sed 's/^/# /'
summary churn
check_stats churn --local $((local_kib * 1024)) --max $((max * MIB)) --procs 1
check_ge "churn evictions" "$(stat_of churn evictions)" 1
check_ge "churn faults_refault" "$(stat_of churn faults_refault)" 1
