#!/usr/bin/env bash
# rt_fork: fork without exec (tests/planted/fork_verify.c). The parent fills N MiB with -L = N/4, so
# about three quarters of the pages are evicted at the fork. The child must see exactly the parent's
# memory as of the fork (evicted pages included) and not the parent's later writes; the parent must
# not see the child's writes; a grandchild forked by the child must see the child's memory. The
# program checks the data in all three processes and exits 0 only if all three passed.
# The case checks: exit 0, output as natively, one process directory per process (3) each with a
# complete stats.json and trace (check_stats: pid = directory, records_dropped = 0,
# peak_resident_bytes <= -L in every process), and evictions in the parent's run.
# Default 48 MiB with -L 12 (about 135,000 faults over the three processes); FAULTLINE_TEST_LONG=1:
# 128 MiB with -L 32.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted fork_verify

if [ "$LONG" = 1 ]; then size=128 local=32; else size=48 local=12; fi
max=1024

run_native fork "$PLANTED/fork_verify" "$size"
expect_record fork -L "$local" -M "$max" -- "$PLANTED/fork_verify" "$size"
same_output fork fork
summary fork
check_stats fork --local $((local * MIB)) --max $((max * MIB)) --procs 3
check_ge "fork evictions (all processes)" "$(stat_of fork evictions)" 1
check_ge "fork faults_refault (all processes)" "$(stat_of fork faults_refault)" 1
