#!/usr/bin/env bash
# probe_mrc: record --mrc and faultline mrc (issue 15's miss-ratio curve from one run) on a program
# whose LRU curve has a closed form (tests/planted/mrc_loops: arrays of 10/20/30/40 % of 64 MiB,
# each swept 4 times: with C pages of memory, an array of S > C pages refaults S x 3 times).
#   - the --mrc run exits 0 with the native output; stats.json consistent; no refault without -L;
#   - `mrc --format csv`: the header local_bytes,predicted_refaults,lower,upper and a row for every
#     power of two from 1 MiB to the peak; lower <= predicted <= upper;
#   - at 8, 16 and 32 MiB (1/8, 1/4, 1/2 of the peak) the prediction is within 10 % of the closed
#     form and of the refaults of real `record -L` runs (within 1 % of all reuses where those are ~0);
#   - --policy fifo at 16 MiB within 10 % of a real `record -L 16 --policy fifo`; JSON names the policy;
#   - the recording streamed (the default) and held (FAULTLINE_READ_HELD=1) give the same csv;
#   - usage errors: exit 2; a recording made without --mrc: exit 1 with a reason;
#   - the access samples go without stacks unless --mrc-stacks (record's summary says which), first
#     touches keep theirs.
# The runs above are made with --mrc-budget 0 (every sampled reuse seen, at 1 page in 8 throughout).
# At the default cost budget (4000 trial unmaps per second of the program's own CPU time,
# runtime/probe.c): the budget lowered the rate; the arms (what it counts) stay within three times
# its allowance (without it they are ~20x that); `mrc` says so; at 8, 16 and 32 MiB the prediction is
# within 10 % of record -L's refaults (or 1 % of all reuses) or, where the band is wider than that,
# the measurement lies inside the band.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted mrc_loops

total=64 loops=4
run_native loops "$PLANTED/mrc_loops" "$total" "$loops"

name=loops-mrc
# 1 page in 8 of ~16,400 pages is about the default cap of 2048 sampled pages: the cap is raised so
# that the rate stays 1 in 8 throughout (probe_mrc_sqlite checks the defaults)
export FAULTLINE_PROBE_MRC_MAX=4096
expect_record "$name" -M 1G --mrc-rate 8 --mrc-budget 0 -- "$PLANTED/mrc_loops" "$total" "$loops"
same_output "$name" loops
check_stats "$name" --max $((1024 * MIB)) --procs 1
check_eq "$name faults_refault" "$(stat_of "$name" faults_refault)" 0

"$FAULTLINE" mrc "$WORK/$name" --format csv >"$WORK/mrc.csv" 2>"$WORK/mrc.err" || fail "mrc exited $?: $(cat "$WORK/mrc.err")"
"$FAULTLINE" mrc "$WORK/$name" >"$WORK/mrc.txt" 2>&1 || fail "mrc (table) exited $?"
FAULTLINE_READ_HELD=1 "$FAULTLINE" mrc "$WORK/$name" --format csv >"$WORK/mrc-held.csv" 2>&1 || fail "mrc (held) exited $?"
cmp -s "$WORK/mrc.csv" "$WORK/mrc-held.csv" || fail "mrc: streamed and held csv differ: $(diff "$WORK/mrc.csv" "$WORK/mrc-held.csv" | head -4)"
echo "ok mrc: streamed = held"
"$FAULTLINE" mrc "$WORK/$name" --format json | "$PY" -c 'import json,sys; d=json.load(sys.stdin); assert d["rows"] and d["sampling_rate"] > 0' ||
	fail "mrc --format json is not the expected JSON"

declare -A measured
for mib in 8 16 32; do
	expect_record "loops-L$mib" -M 1G -L "$mib" -- "$PLANTED/mrc_loops" "$total" "$loops"
	same_output "loops-L$mib" loops
	measured[$mib]=$(stat_of "loops-L$mib" faults_refault)
done

"$PY" - "$WORK/mrc.csv" "$WORK/loops.native" "$loops" "${measured[8]}" "${measured[16]}" "${measured[32]}" <<'PYEOF' || fail "mrc prediction"
import csv, re, sys
lines = open(sys.argv[1]).read().splitlines()
if lines[0] != "local_bytes,predicted_refaults,lower,upper":
    sys.exit("CSV header is %r" % lines[0])
rows = {int(r["local_bytes"]): r for r in csv.DictReader(lines)}
MiB = 1 << 20
for size in (1, 2, 4, 8, 16, 32, 64):
    if size * MiB not in rows:
        sys.exit("no row for %d MiB (rows: %s)" % (size, sorted(rows)))
for r in rows.values():
    if not int(r["lower"]) <= int(r["predicted_refaults"]) <= int(r["upper"]):
        sys.exit("row %s: not lower <= predicted <= upper" % r)
pages = [int(p) for p in re.search(r"pages=([0-9,]+)", open(sys.argv[2]).read()).group(1).split(",")]
loops = int(sys.argv[3])
reuses = sum(pages) * (loops - 1)
measured = dict(zip((8, 16, 32), (int(v) for v in sys.argv[4:7])))
bad = []
for size in (8, 16, 32):
    closed = sum(p * (loops - 1) for p in pages if p > size * 256)
    pred = int(rows[size * MiB]["predicted_refaults"])
    for what, want in (("closed form", closed), ("record -L", measured[size])):
        tolerance = max(0.10 * want, 0.01 * reuses)
        ok = abs(pred - want) <= tolerance
        print("%s -L %2d MiB: predicted %6d, %-11s %6d (error %+.1f %%)" % ("ok" if ok else "BAD", size, pred, what, want,
              100.0 * (pred - want) / want if want else 0.0))
        if not ok:
            bad.append("%d MiB vs %s" % (size, what))
if bad:
    sys.exit("prediction off by more than 10 %: " + ", ".join(bad))
PYEOF

# --policy fifo: the fifo simulation against a real fifo run (the loops refault alike under both)
expect_record loops-fifo16 -M 1G -L 16 --policy fifo -- "$PLANTED/mrc_loops" "$total" "$loops"
fifo_measured=$(stat_of loops-fifo16 faults_refault)
fifo_pred=$("$FAULTLINE" mrc "$WORK/$name" --policy fifo --format csv --at 16M | awk -F, -v s=$((16 * MIB)) '$1 == s {print $2}')
"$PY" -c 'import sys; p, m = int(sys.argv[1]), int(sys.argv[2]); sys.exit(0 if abs(p - m) <= 0.10 * m else 1)' \
	"${fifo_pred:-0}" "$fifo_measured" || fail "mrc --policy fifo at 16 MiB: predicted ${fifo_pred:-none}, record -L 16 --policy fifo $fifo_measured"
echo "ok mrc --policy fifo at 16 MiB: predicted $fifo_pred, measured $fifo_measured"
"$FAULTLINE" mrc "$WORK/$name" --format json | "$PY" -c 'import json,sys; assert json.load(sys.stdin)["policy"] == "clock"' ||
	fail "mrc --format json does not name the default policy clock"
# --mrc-gap: a page is re-armed once about N other pages were touched (N x rate accesses to other
# sampled pages; meta.json says N), so a larger gap sees fewer re-touches (a loop's page is reused
# after its array's other pages, at most 40 % of 64 MiB: ~820 sampled pages at 1 in 8, so a gap
# of 32768 pages, 4096 sampled accesses, sees next to none)
check_eq "$name meta mrc_gap_pages (default)" "$(meta_of "$name" mrc_gap_pages)" 32
grep -q '^# reuses nearer than 0\.1[0-9] MiB (record --mrc-gap, or 1 / rate pages) are not seen' "$WORK/mrc.txt" ||
	fail "mrc's table does not say below which size reuses are not seen (32 x 4 KiB = 0.12 MiB): $(grep '^# reuses' "$WORK/mrc.txt")"
expect_record loops-gap -M 1G --mrc-rate 8 --mrc-gap 32768 --mrc-budget 0 -- "$PLANTED/mrc_loops" "$total" "$loops"
check_eq "loops-gap meta mrc_gap_pages" "$(meta_of loops-gap mrc_gap_pages)" 32768
check_ge "access samples with gap 32 pages (default) >= 10 x those with gap 32768" "$(stat_of "$name" access_samples)" $(( $(stat_of loops-gap access_samples) * 10 ))
# with -L the sample is capped at 1/16 of it (armed pages are local memory): mrc says so, and says
# when the sample is small; the run without -L above says neither
# every row's size label differs (the peak's fractions next to the powers of two: 7.96 and 8 MiB)
labels=$(awk '/^ *[0-9.]+ [MG]iB / { print $1, $2 }' "$WORK/mrc.txt")
[ -n "$labels" ] && [ "$(sort <<<"$labels" | uniq -d)" = "" ] ||
	fail "mrc's rows share a size label: $(sort <<<"$labels" | uniq -d | tr '\n' ' ')"
echo "ok mrc's $(wc -l <<<"$labels") rows have distinct size labels"
if grep -q '^# recorded with -L\|^# only [0-9]* sampled pages' "$WORK/mrc.txt"; then
	fail "mrc of a run without -L and ~820 sampled pages warns: $(grep '^# recorded\|^# only' "$WORK/mrc.txt")"
fi
expect_record loops-mrcL -M 1G -L 4 --mrc -- "$PLANTED/mrc_loops" 16 1
check_eq "loops-mrcL meta mrc_max_pages (-L 4 MiB / 16)" "$(meta_of loops-mrcL mrc_max_pages)" 64
"$FAULTLINE" mrc "$WORK/loops-mrcL" >"$WORK/mrcL.txt" 2>&1 || fail "mrc loops-mrcL: $(cat "$WORK/mrcL.txt")"
grep -q '^# recorded with -L 4.0 MiB: the sample was capped at 1/16 of it' "$WORK/mrcL.txt" ||
	fail "mrc of a --mrc run with -L 4 does not say its sample was capped: $(sed -n 1,10p "$WORK/mrcL.txt")"
grep -q '^# only [0-9]* sampled pages' "$WORK/mrcL.txt" ||
	fail "mrc of a sample of <= 64 pages does not say it is small: $(sed -n 1,10p "$WORK/mrcL.txt")"
echo "ok loops-mrcL: mrc says the sample was capped by -L and is small"
# record's summary counts the access samples apart from the faults; with --mrc-stacks their stacks
# are among its stacks, without it they have none (the dump shows stack=- on every access line)
"$FAULTLINE" record -o "$WORK/loops-sum" --force -M 1G --mrc --mrc-budget 0 --mrc-stacks -- "$PLANTED/mrc_loops" 16 3 >/dev/null 2>"$WORK/loops-sum.err" ||
	fail "loops-sum: record failed: $(cat "$WORK/loops-sum.err")"
line=$(grep '^  stacks ' "$WORK/loops-sum.err" | tr -d ,)
want_f=$(stat_of loops-sum faults_total) want_a=$(stat_of loops-sum access_samples)
[[ $line =~ for\ ([0-9]+)\ faults\ and\ ([0-9]+)\ access\ samples ]] || fail "loops-sum: summary line '$line' does not name the access samples"
got_f=${BASH_REMATCH[1]} got_a=${BASH_REMATCH[2]}   # (check_eq's own matching overwrites BASH_REMATCH)
check_eq "loops-sum: faults in the summary's stacks line (stats.json faults_total)" "$got_f" "$want_f"
check_eq "loops-sum: access samples in the summary's stacks line (stats.json access_samples)" "$got_a" "$want_a"
"$FAULTLINE" dump "$WORK/loops-sum" | awk '$5 == "access"' >"$WORK/loops-sum.access" || fail "dump loops-sum"
check_ge "loops-sum (--mrc-stacks): access samples with a stack" "$(grep -vc ' stack=-$' "$WORK/loops-sum.access")" $((want_a * 9 / 10))
"$FAULTLINE" record -o "$WORK/loops-nostack" --force -M 1G --mrc --mrc-budget 0 -- "$PLANTED/mrc_loops" 16 3 >/dev/null 2>"$WORK/loops-nostack.err" ||
	fail "loops-nostack: record failed: $(cat "$WORK/loops-nostack.err")"
grep -q '^  stacks .* access samples of --mrc go without: --mrc-stacks' "$WORK/loops-nostack.err" ||
	fail "loops-nostack: the summary does not say the access samples have no stacks: $(grep '^  stacks' "$WORK/loops-nostack.err")"
"$FAULTLINE" dump "$WORK/loops-nostack" | awk '$5 == "access"' >"$WORK/loops-nostack.access" || fail "dump loops-nostack"
check_ge "loops-nostack: access samples" "$(wc -l <"$WORK/loops-nostack.access")" 100
check_eq "loops-nostack: access samples with a stack" "$(grep -vc ' stack=-$' "$WORK/loops-nostack.access")" 0
check_eq "loops-nostack: meta.json mrc_stacks" "$(meta_of loops-nostack mrc_stacks)" 0
check_eq "loops-sum (--mrc-stacks): meta.json mrc_stacks" "$(meta_of loops-sum mrc_stacks)" 1
check_ge "loops-nostack: faults with a stack (first touches keep theirs)" "$("$FAULTLINE" dump "$WORK/loops-nostack" | awk '$5 == "first-touch"' | grep -vc ' stack=-$')" 1
rc=0; "$FAULTLINE" mrc "$WORK/$name" --policy arc >/dev/null 2>&1 || rc=$?
check_eq "mrc --policy arc exit status" "$rc" 2

rc=0; "$FAULTLINE" mrc "$WORK/$name" --format svg >/dev/null 2>&1 || rc=$?
check_eq "mrc --format svg exit status" "$rc" 2
# the default cost budget
unset FAULTLINE_PROBE_MRC_MAX
expect_record loops-budget -M 1G --mrc -- "$PLANTED/mrc_loops" "$total" "$loops"
same_output loops-budget loops
check_eq "loops-budget meta mrc_budget (default)" "$(meta_of loops-budget mrc_budget)" 4000
check_ge "loops-budget: the budget lowered the rate (mrc_budget_cuts)" "$(stat_of loops-budget mrc_budget_cuts)" 1
# (a margin for arms made by the handlers while the prober waits for the CPU on a busy machine)
allowance=$(awk -v c="$(stat_of loops-budget mrc_program_cpu_ns)" 'BEGIN { printf "%d", 4000 * (c / 1e9 + 0.05) }')
check_le "loops-budget: arms within three times the allowance of $allowance (+1024)" \
	"$(stat_of loops-budget probe_armed)" $((3 * allowance + 1024))
"$FAULTLINE" mrc "$WORK/loops-budget" >"$WORK/mrc-budget.txt" 2>&1 || fail "mrc loops-budget: $(cat "$WORK/mrc-budget.txt")"
grep -q '^# the cost budget (record --mrc-budget 4000: ' "$WORK/mrc-budget.txt" ||
	fail "mrc of a budget-cut run does not say so: $(sed -n 1,12p "$WORK/mrc-budget.txt")"
check_eq "mrc header: the rate lowered as often as stats.json says (mrc_budget_cuts)" \
	"$(grep -o 'lowered the rate [0-9]* times' "$WORK/mrc-budget.txt" | grep -o '[0-9]*')" "$(stat_of loops-budget mrc_budget_cuts)"
if grep -q '^# the cost budget' "$WORK/mrc.txt"; then fail "mrc of a --mrc-budget 0 run names a budget"; fi
"$FAULTLINE" mrc "$WORK/loops-budget" --format csv >"$WORK/mrc-budget.csv" 2>&1 || fail "mrc --format csv loops-budget"
reuses=$("$PY" -c 'import re,sys; p=[int(x) for x in re.search(r"pages=([0-9,]+)", open(sys.argv[1]).read()).group(1).split(",")]; print(sum(p) * (int(sys.argv[2]) - 1))' \
	"$WORK/loops.native" "$loops")
"$PY" -m mrc_band "$WORK/mrc-budget.csv" $((reuses / 100)) "budget, -L 8 MiB=$((8 * MIB)):${measured[8]}" \
	"budget, -L 16 MiB=$((16 * MIB)):${measured[16]}" "budget, -L 32 MiB=$((32 * MIB)):${measured[32]}" ||
	fail "mrc prediction of the budget-cut run"

rc=0; "$FAULTLINE" mrc "$WORK/loops-L8" >/dev/null 2>"$WORK/nomrc.err" || rc=$?
check_eq "mrc of a recording without --mrc: exit status" "$rc" 1
grep -q "not recorded with --mrc" "$WORK/nomrc.err" || fail "mrc without --mrc data: no reason given ($(cat "$WORK/nomrc.err"))"
echo "PASS"
