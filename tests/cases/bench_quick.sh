#!/usr/bin/env bash
# bench_quick: `make bench-quick` (scripts/bench.sh --quick) runs and prints a well-formed table. Times
# are never checked (benchmarks assert nothing); the shape is:
#   - exit 0, and the table printed on stdout is the file written with -o;
#   - every row is present exactly once, in order: 1a 1b 1c 1d 1e 1f 1g H1 H2 2a 2b E1 E2 E3a E3b E4a E4b E5a E5b
#     3a 3b 3c 3d 4a 4b 4c 5 6 7a 7b 7c 8a 8b 8c T1 T2 T3 T4 TB1-TB5 TD1-TD5 TX1-TX5 SW1 SW2 9 10a 10b 10c 11a 11b S
#     M, each with 7 cells;
#   - the Baseline, faultline and Ratio cells are numbers ("12.3 µs (10.1–15.0)", "1.59× (1.32–3.03)",
#     "150 B") or a marker ("not built yet", "skipped: reason", "n/a ..."); a "failed: ..." cell
#     fails the test (a program failed or printed a wrong result under the bench);
#   - Runs is an integer; the rows that can always be measured here (1a 1b 1d H1 H2 3a-3d 4c 8a 8c)
#     have numbers in all three cells and at least 2 runs (the test asks for 2, BENCH_RUNS=2: it
#     checks the table, not the numbers) — unless the footer says the script's time
#     budget cut rows short (heavy load), when they may have fewer runs or "skipped: time budget";
#     row 2 and the kernel-swap rows TB4, TD4, TX4 are skipped in quick mode;
#   - the footer gives the load average at the start and at the end.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted fill
need_cmd gcc sqlite3

out=$WORK/bench.md
say "BENCH_RUNS=2 BENCH_WORK=$WORK/bench-work scripts/bench.sh --quick -o $out"
RC=0
BENCH_RUNS=2 BENCH_WORK=$WORK/bench-work FAULTLINE=$FAULTLINE "$ROOT/scripts/bench.sh" --quick -o "$out" \
	>"$WORK/bench.out" 2>"$WORK/bench.err" || RC=$?
if [ "$RC" -ne 0 ]; then
	tail -n 20 "$WORK/bench.err" >&2
	fail "scripts/bench.sh --quick exited $RC"
fi
echo "ok bench.sh --quick: exit status 0"
cat "$WORK/bench.out"
cmp -s "$WORK/bench.out" "$out" || fail "the table on stdout differs from $out"
echo "ok stdout = $out"

want=(1a 1b 1c 1d 1e 1f 1g H1 H2 2a 2b E1 E2 E3a E3b E4a E4b E5a E5b 3a 3b 3c 3d 4a 4b 4c 5 6 7a 7b 7c 8a 8b 8c T1 T2 T3 T4 TB1 TB2 TB3 TB4 TB5 TD1 TD2 TD3 TD4 TD5 TX1 TX2 TX3 TX4 TX5 SW1 SW2 9 10a 10b 10c 11a 11b S M)
always=" 1a 1b 1d H1 H2 3a 3b 3c 3d 4c 8a 8c "
# rows as: id, number of cells, baseline, faultline, ratio, runs (tab-separated)
awk -F' [|] ' '/^\| / { sub(/^\| /, ""); sub(/ \|$/, ""); printf "%s\t%d\t%s\t%s\t%s\t%s\n", $1, NF, $3, $4, $5, $6 }' \
	"$out" >"$WORK/rows.tsv"
got=$(cut -f1 "$WORK/rows.tsv" | grep -v '^#$' | tr '\n' ' ')
[ "$got" = "${want[*]} " ] || fail "rows: got '$got', want '${want[*]} '"
echo "ok all ${#want[@]} rows present, in order"

budget_hit=0
grep -q 'Time budget of .* reached' "$out" && { budget_hit=1; say "the time budget cut some rows short"; }
# a number (signed: a growth measured as a difference can come out below zero in one run),
# an optional × or unit (words, e.g. "µs", "k records/s"), an optional "(min–max)"
number='^-?[0-9]+(\.[0-9]+)?(×|( [^ ()0-9][^ ()]*)+)?( \(-?[0-9]+(\.[0-9]+)?–-?[0-9]+(\.[0-9]+)?\))?$'
marker='^(not built yet|skipped: .+|n/a( .*)?)$'
while IFS=$'\t' read -r id ncells base ours ratio runs; do
	[ "$id" = "#" ] && continue
	[ "$ncells" -eq 7 ] || fail "row $id has $ncells cells, want 7"
	[[ $runs =~ ^[0-9]+$ ]] || fail "row $id: Runs '$runs' is not an integer"
	for c in "$base" "$ours" "$ratio"; do
		[[ $c == failed* ]] && fail "row $id: a measurement failed: $c"
		[[ $c =~ $number || $c =~ $marker ]] || fail "row $id: cell '$c' is neither a number nor a marker"
	done
	if [[ $always == *" $id "* ]]; then
		for c in "$base" "$ours" "$ratio"; do
			[ "$budget_hit" = 1 ] && [ "$c" = "skipped: time budget" ] && continue
			[[ $c =~ $number ]] || fail "row $id: '$c' should be a number"
		done
		[ "$budget_hit" = 1 ] || [ "$runs" -ge 2 ] || fail "row $id: $runs runs, want >= 2"
	fi
	case $id in 2a | 2b) [[ $ours == skipped:* ]] || fail "row $id should be skipped in quick mode, got '$ours'" ;; esac
	case $id in TB4 | TD4 | TX4) [[ $base == skipped:* ]] || fail "row $id should be skipped in quick mode, got '$base'" ;; esac
done <"$WORK/rows.tsv"
echo "ok every cell is a number or a marker"

grep -qE '^Load average .* at start: [0-9.]+ [0-9.]+ [0-9.]+; at end: [0-9.]+ [0-9.]+ [0-9.]+\.' "$out" ||
	fail "footer with the load averages missing"
echo "ok footer with load averages"
