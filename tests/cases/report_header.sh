#!/usr/bin/env bash
# report_header: the numbers and names the verbs print are true.
#   - a recording without -L says "-L unlimited" (it said "-L 0 B"), one with -L says its size;
#   - "report built in T s" counts reading the recording too: T >= the reading time R plus the
#     build time B it prints beside it (it printed only the build: 7 s for a 90 s report).
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted fill

expect_record unlimited -M 256 -- "$PLANTED/fill" 8
expect_record limited -L 4 -M 256 -- "$PLANTED/fill" 8
for name in unlimited limited; do
	"$FAULTLINE" report "$WORK/$name" >"$WORK/$name.report" 2>"$WORK/$name.report.err" ||
		fail "$name: report failed: $(cat "$WORK/$name.report.err")"
done
grep -q '^# limits: *-L unlimited, -M 256 MiB$' "$WORK/unlimited.report" ||
	fail "unlimited: header says $(grep '^# limits' "$WORK/unlimited.report")"
echo "ok unlimited: $(grep '^# limits' "$WORK/unlimited.report")"
grep -q '^# limits: *-L 4 MiB, -M 256 MiB$' "$WORK/limited.report" ||
	fail "limited: header says $(grep '^# limits' "$WORK/limited.report")"
echo "ok limited: $(grep '^# limits' "$WORK/limited.report")"

line=$(grep -o 'report built in [0-9.]* s (reading the recording [0-9.]* s, aggregating and symbolizing [0-9.]* s)' \
	"$WORK/limited.report") || fail "no 'report built in' line with its parts: $(grep symbolized "$WORK/limited.report")"
read -r total reading building < <(echo "$line" | grep -o '[0-9][0-9.]*' | tr '\n' ' ')
awk -v t="$total" -v r="$reading" -v b="$building" 'BEGIN { exit !(t + 0.011 >= r + b) }' ||
	fail "report built in $total s, less than reading $reading s + building $building s"
echo "ok: $line"

# record's summary counts the faults that have a stack, as the trace holds them (it counted
# contexts, stacks dropped for lateness included); here under FAULTLINE_STACK_SOURCE=signal with a
# thread that blocks the stack signal through the raw system call, so some stacks come late
need_planted rel_sigblock
FAULTLINE_STACK_SOURCE=signal "$FAULTLINE" record -o "$WORK/sum" --force -L 4 -M 256 -- "$PLANTED/rel_sigblock" \
	>"$WORK/sum.out" 2>"$WORK/sum.err" || fail "record of rel_sigblock failed: $(tail -5 "$WORK/sum.err")"
said=$(sed -n 's/^ *stacks *\([0-9,]*\) of \([0-9,]*\) faults.*/\1 \2/p' "$WORK/sum.err" | tr -d ,)
[ -n "$said" ] || fail "no stacks line in record's summary: $(cat "$WORK/sum.err")"
"$FAULTLINE" dump "$WORK/sum" >"$WORK/sum.dump" 2>/dev/null || fail "dump failed"
with=$(grep -v '^#' "$WORK/sum.dump" | grep -vc ' stack=-$')
total=$(grep -cv '^#' "$WORK/sum.dump")
check_eq "summary: faults with a stack" "${said% *}" "$with"
check_eq "summary: faults" "${said#* }" "$total"

# an export that cannot write its file names that file and its directory (checked before any work), not
# the temporary file next to it
"$FAULTLINE" export --sqlite "$WORK/no-such-dir/x.sqlite" "$WORK/limited" 2>"$WORK/export.err" &&
	fail "export into a missing directory succeeded"
grep -q "$WORK/no-such-dir/x.sqlite: cannot write in $WORK/no-such-dir/: " "$WORK/export.err" || fail "export error: $(cat "$WORK/export.err")"
grep -q '\.tmp\.' "$WORK/export.err" && fail "export error names the temporary file: $(cat "$WORK/export.err")"
echo "ok export error: $(cat "$WORK/export.err")"

# report --by alloc --format json: each row's "stack" is its allocation's stack (it was the most
# common faulting stack), the faulting one is "fault_stack", and labels name known functions
need_planted st_allocsites
# fifo: every pass faults every page again, exactly (under clock a page the hand has not passed
# since its fault keeps its reference bit and may outlive a pass: 6,143 faults on A once, not 6,144)
expect_record sites -L 4 -M 256 --policy fifo -- "$PLANTED/st_allocsites" 8
"$FAULTLINE" report --by alloc --format json "$WORK/sites" >"$WORK/sites.json" 2>/dev/null || fail "report --by alloc failed"
"$PY" - "$WORK/sites.json" <<'PYEOF' || fail "report --by alloc JSON"
import json, sys
rows = json.load(open(sys.argv[1]))
want = {"alloc_a": "touch_pages", "alloc_b": "touch_pages"}
seen = {}
for r in rows:
    cs = [f for f in r["stack"] if f["callsite"]]
    if not cs or cs[0]["function"] not in want:
        continue
    fault_cs = [f for f in r["fault_stack"] if f["callsite"]]
    assert fault_cs and fault_cs[0]["function"] == want[cs[0]["function"]], (cs, fault_cs)
    assert cs[0]["label"].startswith(cs[0]["function"] + " ") and "st_allocsites.c:" in cs[0]["label"], cs[0]
    seen[cs[0]["function"]] = r["faults"]
assert set(seen) == set(want), seen
assert seen["alloc_a"] == 3 * seen["alloc_b"], seen
print("ok by alloc JSON: stack = allocation stack, fault_stack = faulting stack, labels name functions:", seen)
PYEOF
