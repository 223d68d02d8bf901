#!/usr/bin/env bash
# rt_fill_ahead: record --fill-ahead N, fresh pages zero-filled ahead of a first-touch write.
#   - off by default: meta.json fill_ahead_pages 0, stats.json filled_ahead_pages 0, one first-touch
#     fault per page of tests/planted/fill (the exact count, as rt_fill checks it);
#   - fill 64 MiB at -L 16M with --fill-ahead 16: the same output as natively (every word is
#     checked by the program, so a page filled with zeros over data would show), the cap holds and
#     the trace agrees with stats.json (check_stats); most pages came in without a fault (filled >=
#     3/4 of the pages, first-touch faults <= 1/4, no concurrent fault: a fill is done before the
#     faulting page's install wakes the thread), and first touches + pages filled ahead count
#     every page (>= pages, <= pages + the allocator's allowance); the read passes still refault;
#   - tests/planted/fill_gap 16 at -L 4M: pages filled ahead are evicted before the program writes
#     them; the faults that bring them back (zeros) are their first touches, not refaults: stats.json
#     filled_ahead_unused >= 32, and first-touch faults + pages filled - those = the first-touch
#     faults of the same run without --fill-ahead (within 4 pages: a fill that ran past A's end into
#     the memory after it would add 62), the same output;
#   - tests/planted/zero_fill 32 at -L 8M (zeros written over a buffer, then read back twice): the
#     read passes' faults (refaults + soft faults) within 1 % of the same run without
#     --fill-ahead and filled_ahead_unused = 0: a page the program zeroed is no unused page;
#   - report's header says how many pages were filled ahead and how many of them were evicted
#     unused, the numbers of stats.json (and says nothing without), record's summary line the
#     same; diff warns that its two recordings were made with different --fill-ahead;
#   - random writes are no forward walk: fill_gap's 2,000 random page writes into a fresh 32 MiB
#     buffer fill nothing (the first-touch sum above would be off by thousands);
#   - every run with the state checker (FAULTLINE_CHECK_STATES=1): no page's state disagrees with
#     the page table at exit;
#   - --fill-ahead with --mrc is refused (filled pages would be invisible to the curve);
#   - bench/bigbuf (buffers replaced and rewritten) and bench/extsort (two threads) under
#     --fill-ahead 64 at a tight -L: the native checksum, the cap, a consistent trace;
#   - bad values (65, a word) are refused with exit 2 and a message naming the option.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted fill
need_planted fill_gap
need_planted zero_fill
export FAULTLINE_CHECK_STATES=1

size=64 local=16 max=512
pages=$((size * MIB / PAGE))
allow=$(first_touch_allowance "$pages")
run_native fill "$PLANTED/fill" "$size"

name=fill-off
expect_record "$name" -L "$local" -M "$max" -- "$PLANTED/fill" "$size"
same_output "$name" fill
check_eq "$name meta fill_ahead_pages" "$(meta_of "$name" fill_ahead_pages)" 0
check_eq "$name filled_ahead_pages" "$(stat_of "$name" filled_ahead_pages)" 0
check_first_touch "$name" "$pages"

name=fill-ahead
expect_record "$name" -L "$local" -M "$max" --fill-ahead 16 -- "$PLANTED/fill" "$size"
same_output "$name" fill
summary "$name"
check_stats "$name" --local $((local * MIB)) --max $((max * MIB)) --procs 1
check_eq "$name meta fill_ahead_pages" "$(meta_of "$name" fill_ahead_pages)" 16
filled=$(stat_of "$name" filled_ahead_pages)
first=$(stat_of "$name" faults_first_touch)
check_ge "$name filled_ahead_pages" "$filled" $((pages * 3 / 4))
check_le "$name faults_first_touch" "$first" $((pages / 4))
check_ge "$name first touches + pages filled ahead" $((first + filled)) "$pages"
check_le "$name first touches + pages filled ahead" $((first + filled)) $((pages + allow))
check_ge "$name faults_refault" "$(stat_of "$name" faults_refault)" 1
check_eq "$name faults_concurrent" "$(stat_of "$name" faults_concurrent)" 0
check_eq "$name page_state_mismatches" "$(stat_of "$name" page_state_mismatches)" 0

# pair NAME LIMIT_MiB PROGRAM ARGS...: NAME-0 and NAME-64, PROGRAM recorded at -L LIMIT without and
# with --fill-ahead 64, each checked against the native run NAME.
pair() {
	local base=$1 mib=$2 k name; shift 2
	run_native "$base" "$@"
	for k in 0 64; do
		name=$base-$k
		expect_record "$name" -L "${mib}M" -M "$max" --fill-ahead "$k" -- "$@"
		same_output "$name" "$base"
		check_stats "$name" --local $((mib * MIB)) --max $((max * MIB)) --procs 1
		check_eq "$name page_state_mismatches" "$(stat_of "$name" page_state_mismatches)" 0
		summary "$name"
	done
}

pair gap 4 "$PLANTED/fill_gap" 16
exact=$(stat_of gap-0 faults_first_touch)
unused=$(stat_of gap-64 filled_ahead_unused)
check_ge "gap-64 filled_ahead_unused" "$unused" 32
counted=$(( $(stat_of gap-64 faults_first_touch) + $(stat_of gap-64 filled_ahead_pages) - unused ))
check_ge "gap-64 first touches + filled - unused" "$counted" $((exact - 4))
check_le "gap-64 first touches + filled - unused" "$counted" $((exact + 4))

pair zero 8 "$PLANTED/zero_fill" 32
back() { echo $(( $(stat_of "$1" faults_refault) + $(stat_of "$1" faults_soft) )); }
check_eq "zero-64 filled_ahead_unused" "$(stat_of zero-64 filled_ahead_unused)" 0
check_ge "zero-64 refaults + soft faults" "$(back zero-64)" $(( $(back zero-0) * 99 / 100 ))
check_le "zero-64 refaults + soft faults" "$(back zero-64)" $(( $(back zero-0) * 101 / 100 ))
for k in 0 64; do
	"$FAULTLINE" report "$WORK/zero-$k" >"$WORK/zero-$k.report" 2>&1 || fail "report of zero-$k failed: $(cat "$WORK/zero-$k.report")"
done
# fill_counts FILE PATTERN: the two numbers (pages filled, of them evicted unused) of FILE's line
# matching PATTERN, thousands separators dropped
fill_counts() { grep -m1 -E "$2" "$1" | tr -d , | grep -oE '[0-9]+ (fresh )?pages zero-filled|[0-9]+ of them' | grep -oE '^[0-9]+' | tr '\n' ' '; }
for name in zero-64 gap-64; do   # gap-64 has pages evicted unused, zero-64 none
	"$FAULTLINE" report "$WORK/$name" >"$WORK/$name.report" 2>&1 || fail "report of $name failed: $(cat "$WORK/$name.report")"
	want_counts="$(stat_of $name filled_ahead_pages) $(stat_of $name filled_ahead_unused) "
	got=$(fill_counts "$WORK/$name.report" '^# fill-ahead: ')
	[ "$got" = "$want_counts" ] || fail "$name: report's fill-ahead line says '$got', stats.json '$want_counts'"
done
"$FAULTLINE" record -o "$WORK/zero-sum" --force -L 8M -M "$max" --fill-ahead 64 -- "$PLANTED/zero_fill" 32 >/dev/null 2>"$WORK/zero-sum.err" ||
	{ show_err zero-sum; fail "record of zero-sum failed"; }
want_counts="$(stat_of zero-sum filled_ahead_pages) $(stat_of zero-sum filled_ahead_unused) "
got=$(fill_counts "$WORK/zero-sum.err" '^  fill-ahead ')
[ "$got" = "$want_counts" ] || fail "record's summary says '$got', stats.json '$want_counts': $(grep 'fill-ahead' "$WORK/zero-sum.err")"
! grep -q '^# fill-ahead:' "$WORK/zero-0.report" || fail "report: a fill-ahead line without --fill-ahead"
"$FAULTLINE" diff "$WORK/zero-0" "$WORK/zero-64" >/dev/null 2>"$WORK/diff.err" || fail "diff failed: $(cat "$WORK/diff.err")"
grep -q 'with --fill-ahead 0, .* with 64' "$WORK/diff.err" || fail "diff: no --fill-ahead warning: $(cat "$WORK/diff.err")"
echo "ok report's header and diff's warning name the fill-ahead"

build_bench bigbuf
build_bench extsort
for run in "bigbuf 2 12 256 768" "extsort 1 4 256"; do
	read -r prog mib args <<<"$run"
	run_native "$prog" "$WORK/$prog" $args
	want=$(bench_checksum "$WORK/$prog.native")
	[ -n "$want" ] || fail "$prog: no checksum in the native output"
	name=$prog-ahead
	expect_record "$name" -L "${mib}M" -M 256M --fill-ahead 64 -- "$WORK/$prog" $args
	got=$(bench_checksum "$WORK/$name.out")
	[ "$got" = "$want" ] || { show_err "$name"; fail "$name: checksum '$got', natively $want"; }
	echo "ok $name: checksum $got as natively"
	check_stats "$name" --local $((mib * MIB)) --max $((256 * MIB))
	check_eq "$name page_state_mismatches" "$(stat_of "$name" page_state_mismatches)" 0
	check_ge "$name filled_ahead_pages" "$(stat_of "$name" filled_ahead_pages)" 1
	summary "$name"
done

run_record mrc-ahead --fill-ahead 16 --mrc -- /bin/true
check_eq "--fill-ahead with --mrc: exit status" "$RC" 2
grep -q -- "--mrc" "$WORK/mrc-ahead.err" || { show_err mrc-ahead; fail "--fill-ahead with --mrc: the message does not say why"; }
echo "ok --fill-ahead with --mrc refused"

for bad in 65 many; do
	run_record "bad-$bad" --fill-ahead "$bad" -- /bin/true
	check_eq "--fill-ahead $bad: exit status" "$RC" 2
	grep -q -- "--fill-ahead" "$WORK/bad-$bad.err" || { show_err "bad-$bad"; fail "--fill-ahead $bad: the message does not name the option"; }
	echo "ok --fill-ahead $bad refused"
done
