#!/usr/bin/env bash
# report_sampled: with stacks for 1 fault in N (record -s N), `report --by callsite|function` ranks
# the faults without a stack last and gives every other row its share of the faults *with* a stack,
# an estimate of its share of all faults; before, the "<no stack>" row held ~90 % at -s 10 and every
# real callsite looked ten times smaller than it is. On tests/planted/threads (3 workers fill and
# verify their own 16 MiB from the function `work`) at -s 10 and, for comparison, -s 1:
#   - the header says "stacks sampled: 1 fault in 10" with the counts; the last row is <no stack>
#     with no percentage (CSV: empty, JSON: null); the other rows' percentages sum to 100;
#   - with --top 2 that row is still shown, third;
#   - the shares of verify_words (the read passes, 2/3 of the faults) and pattern_word (the fill,
#     1/3) at -s 10 are within 5 points of theirs at -s 1, where every fault has a stack (the
#     estimate is right, not only renormalized);
#   - at -s 1 nothing changes: no such header line, <no stack> (if any) ranked by its faults;
#   - visualize's flame graph says in its subtitle that stacks were sampled (and not at -s 1);
#   - export --pprof names them "[no stack]" and its comment says how to leave them out (checked
#     with go tool pprof where installed).
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted threads

expect_record s10 -L 16 -M 512 -s 10 -- "$PLANTED/threads" 3 16
expect_record s1 -L 16 -M 512 -s 1 -- "$PLANTED/threads" 3 16
for name in s10 s1; do
	for by in callsite function; do
		"$FAULTLINE" report "$WORK/$name" --by "$by" --format csv --top 0 >"$WORK/$name-$by.csv" 2>"$WORK/$name-$by.err" ||
			fail "report $name --by $by: $(cat "$WORK/$name-$by.err")"
	done
	"$FAULTLINE" report "$WORK/$name" >"$WORK/$name.txt" 2>&1 || fail "report $name: $(cat "$WORK/$name.txt")"
	"$FAULTLINE" report "$WORK/$name" --top 2 --format json >"$WORK/$name-top2.json" 2>"$WORK/$name.err" ||
		fail "report $name --top 2 --format json: $(cat "$WORK/$name.err")"
done
grep -q '^# stacks sampled:  1 fault in 10 (record -s)' "$WORK/s10.txt" || fail "s10: no 'stacks sampled' header line: $(sed -n 1,16p "$WORK/s10.txt")"
echo "ok s10: $(grep '^# stacks sampled' "$WORK/s10.txt")"
if grep -q '^# stacks sampled' "$WORK/s1.txt"; then fail "s1: a 'stacks sampled' line at -s 1"; fi
echo "ok s1: no 'stacks sampled' line"

# visualize: the flame graph's subtitle says why "[no stack]" is so wide
"$FAULTLINE" visualize "$WORK/s10" -o "$WORK/viz10" >/dev/null 2>"$WORK/viz10.err" || fail "visualize s10: $(cat "$WORK/viz10.err")"
grep -q 'stacks for 1 fault in 10: the others are under \[no stack\]' "$WORK/viz10/flamegraph.svg" ||
	fail "visualize s10: the flame graph does not say that stacks were sampled"
"$FAULTLINE" visualize "$WORK/s1" -o "$WORK/viz1" >/dev/null 2>"$WORK/viz1.err" || fail "visualize s1: $(cat "$WORK/viz1.err")"
if grep -q 'stacks for 1 fault in' "$WORK/viz1/flamegraph.svg"; then fail "visualize s1: a sampling note at -s 1"; fi
echo "ok visualize: the flame graph's subtitle names the sampling at -s 10, not at -s 1"

# export --pprof: the faults without a stack are at "[no stack]" (pprof drops <...> from names, so
# "<no stack>" read as "<unknown>"), and the profile's comment says how to leave them out
"$FAULTLINE" export --pprof "$WORK/s10.pb.gz" "$WORK/s10" 2>"$WORK/pprof.err" || fail "export --pprof: $(cat "$WORK/pprof.err")"
if command -v go >/dev/null 2>&1 && HOME=${HOME:-$WORK} GOCACHE=$WORK/gocache go tool pprof -h >/dev/null 2>&1; then
	export HOME=${HOME:-$WORK} GOCACHE=$WORK/gocache
	go tool pprof -symbolize=none -comments "$WORK/s10.pb.gz" 2>/dev/null | grep -q 'stacks for 1 fault in 10 (record -s)' ||
		fail "pprof -comments: no note on the sampling"
	go tool pprof -symbolize=none -top -nodecount=3 "$WORK/s10.pb.gz" >"$WORK/pprof.top" 2>&1 || fail "pprof -top: $(cat "$WORK/pprof.top")"
	grep -q ' \[no stack\]$' "$WORK/pprof.top" || fail "pprof -top: no [no stack] row: $(cat "$WORK/pprof.top")"
	go tool pprof -symbolize=none -top -nodecount=1 -ignore '\[no stack\]' -relative_percentages "$WORK/s10.pb.gz" \
		>"$WORK/pprof.rel" 2>&1 || fail "pprof -ignore: $(cat "$WORK/pprof.rel")"
	top=$(awk '$6 == "verify_words" || $6 == "pattern_word" { sub("%", "", $2); print int($2 + 0.5); exit }' "$WORK/pprof.rel")
	check_ge "pprof -ignore '[no stack]' -relative_percentages: the top function's share, in %" "${top:-0}" 60
	echo "ok pprof: [no stack] named, the comment says how to leave it out"
else
	echo "# go tool pprof not available: the pprof checks are skipped"
fi

"$PY" - "$WORK" <<'PYEOF'
import csv, json, sys
from checks import check, errors
work = sys.argv[1]
def rows(name):
    return list(csv.DictReader(open(f"{work}/{name}.csv")))
def share(rs, function):
    return sum(float(r["percent"]) for r in rs if r["function"] == function)

for by in ("callsite", "function"):
    rs = rows(f"s10-{by}")
    last = rs[-1]
    check(last["function"] == "<no stack>" and last["percent"] == "",
          f"s10 --by {by}: last row {last['function']} with percent '{last['percent']}' (want <no stack>, empty)")
    others = [r for r in rs if r["function"] != "<no stack>"]
    total = sum(float(r["percent"]) for r in others)
    check(abs(total - 100.0) < 0.5, f"s10 --by {by}: the rows with a stack sum to {total:.2f} % (want 100)")
    nostack, withstack = int(last["faults"]), sum(int(r["faults"]) for r in others)
    check(nostack > 5 * withstack, f"s10 --by {by}: {nostack} faults without a stack, {withstack} with one (1 in 10)")
    ordered = [int(r["faults"]) for r in others]
    check(ordered == sorted(ordered, reverse=True), f"s10 --by {by}: the other rows by faults, descending")

import re
head = next(l for l in open(f"{work}/s10.txt") if l.startswith("# stacks sampled:"))
m = re.search(r"share of the ([\d,]+) faults with a stack; the ([\d,]+) without one", head)
rs = rows("s10-callsite")
withstack = sum(int(r["faults"]) for r in rs if r["function"] != "<no stack>")
nostack = sum(int(r["faults"]) for r in rs if r["function"] == "<no stack>")
check(m is not None and int(m.group(1).replace(",", "")) == withstack and int(m.group(2).replace(",", "")) == nostack,
      f"s10 header counts = the rows' ({withstack} with a stack, {nostack} without): {head.strip()}")

top = json.load(open(f"{work}/s10-top2.json"))
top = top["rows"] if isinstance(top, dict) else top
check(len(top) == 3 and top[2]["function"] == "<no stack>" and top[2]["percent"] is None,
      "s10 --top 2: three rows, the third <no stack> with percent null: "
      + str([(r["function"], r["percent"]) for r in top]))

for function, want in (("verify_words", 66.7), ("pattern_word", 33.3)):
    s10, s1 = share(rows("s10-function"), function), share(rows("s1-function"), function)
    check(abs(s1 - want) < 5 and abs(s10 - s1) < 5, f"{function}'s share: {s10:.1f} % at -s 10, {s1:.1f} % at -s 1")

rs = rows("s1-callsite")
total = sum(float(r["percent"]) for r in rs)
check(abs(total - 100.0) < 0.5, f"s1: every row has a percentage, summing to {total:.2f} %")
ordered = [int(r["faults"]) for r in rs]
check(ordered == sorted(ordered, reverse=True), "s1: every row, <no stack> included if any, ranked by its faults")
sys.exit(1 if errors else 0)
PYEOF

# the PMU columns per fault: at -s 10 a context's delta covers about 10 faults of its thread, so
# each row's page-faults per fault (every fault of the region is one page fault) is about what it
# is at -s 1, not 10 times it (before: 17.7 against 1.7 on sqlite3)
pgflt() {  # CSV FUNCTION: that row's page_faults_per_fault
	"$PY" -c 'import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["function"] == sys.argv[2]]
print(rows[0]["page_faults_per_fault"] if rows and rows[0]["page_faults_per_fault"] else "")' "$1" "$2"
}
for fn in verify_words pattern_word; do
	a=$(pgflt "$WORK/s10-function.csv" "$fn") b=$(pgflt "$WORK/s1-function.csv" "$fn")
	[ -n "$a" ] && [ -n "$b" ] || fail "$fn: no page_faults_per_fault (-s 10 '$a', -s 1 '$b')"
	"$PY" -c 'import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if b / 2 <= a <= b * 2 else 1)' "$a" "$b" ||
		fail "$fn: page faults per fault $a at -s 10, $b at -s 1: not within a factor of 2"
	echo "ok $fn: page faults per fault $a at -s 10, $b at -s 1"
done
grep -q '^# PMU per fault:   counter deltas between a thread.s sampled faults (record -s 10' "$WORK/s10.txt" ||
	fail "report at -s 10 does not say how its PMU columns are per fault: $(grep 'PMU per' "$WORK/s10.txt")"
