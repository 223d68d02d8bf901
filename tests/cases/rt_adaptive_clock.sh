#!/usr/bin/env bash
# rt_adaptive_clock: the clock takes trial unmaps only while pages rescued from the soft pool are
# rescued again more often than pages are rescued at all (locality); otherwise it evicts unreferenced
# pages straight to the far store, but for a sample that keeps taking trials (runtime/evict.c, "the
# adaptive clock").
#   - bench/csr_scatter (two threads scatter 2^14 x 16 edges into a CSR by atomic fetch-add: random
#     writes over ~5 MiB) at -L 1M, default policy and --policy fifo: both outputs (an order-free
#     checksum) as natively; the clock chose direct eviction at least once and at least as often as
#     trials, took evictions of kind clock-direct (as many events as stats.json's
#     evict_clock_direct), swept directly, and its soft faults + refaults are at most 5 % above
#     fifo's (the clock of before took 23 % more at 2^15 and -L 1.5M: 334,803 faults against
#     272,395); the far copies of pages written after they came back were dropped in batches
#     (far_mirror_drops > 0; the checksums say no live copy was);
#   - tests/planted/cyclic_scan at -L 2M (a working set larger than -L, scanned again and again) under
#     the default policy: output as natively, and trial unmaps still happen (clock_sweeps_trial > 0).
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted cyclic_scan

csr=$WORK/csr_scatter
build_bench csr_scatter


run_native csr "$csr" 14 16 2
want=$(bench_checksum "$WORK/csr.native")
[ -n "$want" ] || fail "no checksum in the native output"

expect_record clock -L 1M -M 64M -- "$csr" 14 16 2
expect_record fifo -L 1M -M 64M --policy fifo -- "$csr" 14 16 2
for name in clock fifo; do
	got=$(bench_checksum "$WORK/$name.out")
	[ "$got" = "$want" ] || fail "$name: checksum $got, natively $want (a lost or corrupted page)"
	echo "ok $name: checksum $got as natively"
done

check_ge "clock: measured, chose direct eviction" "$(stat_of clock clock_chose_direct)" 1
check_le "clock: measured, kept trial unmaps" "$(stat_of clock clock_chose_trial)" "$(stat_of clock clock_chose_direct)"
check_ge "clock: pages evicted without a trial" "$(stat_of clock evict_clock_direct)" 1
clock_faults=$(($(stat_of clock faults_refault) + $(stat_of clock faults_soft)))
fifo_faults=$(($(stat_of fifo faults_refault) + $(stat_of fifo faults_soft)))
check_le "clock soft faults + refaults" "$clock_faults" $((fifo_faults * 105 / 100))

"$FAULTLINE" export --sqlite "$WORK/clock.db" "$WORK/clock" 2>"$WORK/export.err" || fail "export failed: $(cat "$WORK/export.err")"
check_eq "clock: clock-direct eviction events = stats.json evict_clock_direct" \
	"$("$PY" -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT COUNT(*) FROM evictions WHERE decision = '"'clock-direct'"'").fetchone()[0])' "$WORK/clock.db")" \
	"$(stat_of clock evict_clock_direct)"
check_ge "clock: sweeps that evicted directly" "$(stat_of clock clock_sweeps_direct)" 1
# pages written after they came back: their far copies (mirror pages) were dropped in batches
check_ge "clock: stale far copies dropped in batches" "$(stat_of clock far_mirror_drops)" 1

run_native scan "$PLANTED/cyclic_scan" 1024 4
expect_record scan -L 2M -- "$PLANTED/cyclic_scan" 1024 4
same_output scan scan
check_ge "scan: clock sweeps with trial unmaps" "$(stat_of scan clock_sweeps_trial)" 1
