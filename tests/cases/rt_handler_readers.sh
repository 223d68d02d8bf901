#!/usr/bin/env bash
# rt_handler_readers: with two handlers, the runtime measures whether one handler reading the
# userfaultfd costs less than both, and switches between them while the program runs
# (runtime/readers.c); no fault is lost or doubled across the switches. bench/csr_scatter (two
# threads scatter a graph's edges, ~2.6 MiB heap, ~70,000 faults) at -L 1M with -c 2:
#   - exit 0 and the checksum of the native run;
#   - stats.json says at least one choice was made after measuring (readers_chose_one +
#     readers_chose_all >= 1): the windows ran, with their switches to one reader and back;
#   - the trace and stats.json agree (check_stats: every fault recorded once), within the budget.
# Which choice wins is a matter of cost and load, so it is not checked here: bench row T3 gives
# the CPU per fault.
. "$(dirname "$0")/../lib.sh"
need_faultline

build_bench csr_scatter

run_native csr "$WORK/csr_scatter" 14 16 2
want=$(bench_checksum "$WORK/csr.native")
[ -n "$want" ] || fail "no checksum in the native output: $(cat "$WORK/csr.native")"

expect_record scatter -L 1M -M 256M -c 2 -- "$WORK/csr_scatter" 14 16 2
got=$(bench_checksum "$WORK/scatter.out")
[ "$got" = "$want" ] || { show_err scatter; fail "checksum '$got', natively $want (a lost or corrupted page)"; }
echo "ok checksum $got as natively"
one=$(stat_of scatter readers_chose_one)
all=$(stat_of scatter readers_chose_all)
check_ge "choices of how many handlers read (one $one, all $all)" $((one + all)) 1
check_ge "refaults" "$(stat_of scatter faults_refault)" 1
check_stats scatter --local $((1 * MIB)) --max $((256 * MIB))
summary scatter
