#!/usr/bin/env bash
# rt_thrash_programs: the bench programs that thrash like real ones (bench rows TB, TD, TX) compute
# the same result under eviction as natively. Each is built from bench/, run natively at a small
# size, then under record at a tight -L with the default policy (the adaptive clock) and with
# --policy fifo; for every run:
#   - exit 0 and the checksum the native run printed (each program also checks what it reads back:
#     bigbuf every sampled word, dict_sort the key order, extsort the merge order and every record's
#     contents, and dies naming the first wrong one);
#   - pages actually left and came back (evictions and refaults > 0), within the budget
#     (peak_resident_bytes <= -L), and stats.json consistent with the trace (check_stats: every
#     fault recorded once).
# Sizes: bigbuf 12 rounds of 256-768 KiB buffers in 20 slots (~11 MiB) at -L 2M; dict_sort 20,000
# entries (~3.4 MiB) at -L 1M; extsort 4 MiB in chunks of 256 KiB (two threads) at -L 1M.
. "$(dirname "$0")/../lib.sh"
need_faultline

for p in bigbuf dict_sort extsort; do
	build_bench "$p"
done


# run_program NAME LIMIT_MiB PROGRAM ARGS...: native, clock and fifo runs of PROGRAM, checked.
run_program() {
	local name=$1 mib=$2 prog=$3; shift 3
	run_native "$name" "$WORK/$prog" "$@"
	local want; want=$(bench_checksum "$WORK/$name.native")
	[ -n "$want" ] || fail "$name: no checksum in the native output: $(cat "$WORK/$name.native")"
	local policy run got
	for policy in clock fifo; do
		run=$name-$policy
		expect_record "$run" -L "${mib}M" -M 256M --policy "$policy" -- "$WORK/$prog" "$@"
		got=$(bench_checksum "$WORK/$run.out")
		[ "$got" = "$want" ] || { show_err "$run"; fail "$run: checksum '$got', natively $want (a lost or corrupted page)"; }
		echo "ok $run: checksum $got as natively"
		check_ge "$run: evictions" "$(stat_of "$run" evictions)" 1
		check_ge "$run: refaults" "$(stat_of "$run" faults_refault)" 1
		check_stats "$run" --local $((mib * MIB)) --max $((256 * MIB))
		summary "$run"
	done
}

run_program bigbuf 2 bigbuf 12 256 768
run_program dict 1 dict_sort 20000
run_program extsort 1 extsort 4 256
