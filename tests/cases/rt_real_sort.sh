#!/usr/bin/env bash
# rt_real_sort: GNU sort (LC_ALL=C, two keys) of a generated file of ~25 MB (1,000,000 lines). Runs
# natively, recorded without -L, and recorded with -L = a quarter of the unlimited run's peak
# resident bytes (real_program in lib.sh): output identical to the native run, exit 0, evictions > 0,
# check_stats invariants. sort reads its input with read() into heap buffers (kernel-mode faults)
# and sorts with two threads on this machine.
# FAULTLINE_TEST_LONG=1: 3,000,000 lines (~77 MB).
. "$(dirname "$0")/../lib.sh"
need_cmd sort awk
if [ "$LONG" = 1 ]; then lines=3000000; else lines=1000000; fi

awk -v n="$lines" 'BEGIN { for (i = 1; i <= n; i++) printf "%08x %d line-%d\n", (i * 2654435761) % 4294967296, i % 977, i }' \
	>"$WORK/input.txt" || fail "generating the input failed"
export LC_ALL=C
real_program sort 2048 sort -k2,2n -k1,1 "$WORK/input.txt"
