#!/usr/bin/env bash
# probe_mrc_random: record --mrc at its default cost budget on a random-access program, where every
# touch of a sampled page is a fault: bench/graph_bfs 16 32 1 (a CSR graph of 2^16 nodes and 2^21
# edges built from an edge list, then a BFS: random reads over ~9 MiB). Without the budget its
# --mrc run costs ~100x a plain record; the budget (runtime/probe.c) takes the sample down to its
# floor of about 32 pages.
#   - the --mrc run exits 0 with the native output; meta.json mrc_budget 4000; the budget lowered
#     the rate (mrc_budget_cuts >= 1) and kept at least 32 sampled pages (mrc_pages);
#   - `faultline mrc` says the budget lowered the rate;
#   - at 1/2, 1/4 and 1/8 of the peak the prediction is within 10 % of a real `record -L`'s
#     refaults or, where the printed band is wider than that, the measurement lies inside the band.
. "$(dirname "$0")/../lib.sh"
need_faultline

graph=$WORK/graph_bfs
build_bench graph_bfs -lm
args=(16 32 1)
same_checksum() {
	local got; got=$(bench_checksum "$WORK/$1.out")
	[ -n "$got" ] && [ "$got" = "$(bench_checksum "$WORK/graph.native")" ] || fail "$1: checksum '$got', natively '$(bench_checksum "$WORK/graph.native")'"
	echo "ok $1: checksum $got as natively"
}

run_native graph "$graph" "${args[@]}"
expect_record graph-mrc -M 1G --mrc -- "$graph" "${args[@]}"
same_checksum graph-mrc
check_eq "graph-mrc meta mrc_budget (default)" "$(meta_of graph-mrc mrc_budget)" 4000
check_ge "graph-mrc: the budget lowered the rate (mrc_budget_cuts)" "$(stat_of graph-mrc mrc_budget_cuts)" 1
check_ge "graph-mrc: sampled pages kept (the budget's floor)" "$(stat_of graph-mrc mrc_pages)" 32
"$FAULTLINE" mrc "$WORK/graph-mrc" >"$WORK/mrc.txt" 2>&1 || fail "mrc: $(cat "$WORK/mrc.txt")"
grep -q '^# the cost budget (record --mrc-budget 4000: ' "$WORK/mrc.txt" ||
	fail "mrc of a budget-cut run does not say so: $(sed -n 1,12p "$WORK/mrc.txt")"

peak=$(stat_of graph-mrc peak_resident_bytes)
items=() at=()
for d in 2 4 8; do
	s=$(( (peak / d + 4095) / 4096 * 4096 ))
	at+=(--at "${s}B")
	expect_record "graph-L$d" -M 1G -L "${s}B" -- "$graph" "${args[@]}"
	same_checksum "graph-L$d"
	items+=("1/$d of the peak=$s:$(stat_of "graph-L$d" faults_refault)")
done
"$FAULTLINE" mrc "$WORK/graph-mrc" --format csv "${at[@]}" >"$WORK/mrc.csv" 2>"$WORK/mrc.err" || fail "mrc --format csv: $(cat "$WORK/mrc.err")"
"$PY" -m mrc_band "$WORK/mrc.csv" 0 "${items[@]}" || fail "mrc prediction"
echo "PASS"
