#!/usr/bin/env bash
# probe_access: record --sample-accesses without a memory limit (issue 16). tests/planted/access_hotcold
# first touches an 8 MiB hot array and a 512 MiB cold one (each from its own allocation site), then for
# 5 s makes 95 % of its accesses to the hot array and 5 % to the cold one.
#   - exit 0, output as natively; stats.json consistent (records = faults + access samples);
#   - 0 refaults, first touches as without sampling (one per page + allocator allowance), and
#     access samples taken (stats.json access_samples = records of kind access);
#   - `report --by alloc --kind access`: at the default rate (500 probes/s), the hot array's site has
#     >= 5x the cold array's access samples per MiB (a probe of a cold page is touched within its 5 ms
#     window about 1 time in 10, a hot page's at once and again, up to 8 times: 74-190x in 16 runs; the
#     ratio rests on ~30 distinct hot pages probed, so it is steady); the default report (every
#     fault) has no access sample in it;
#   - visualize writes faults-access.folded, summing to the access samples.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted access_hotcold

hot=8 cold=512 seconds=5
pages=$(((hot + cold) * MIB / PAGE))
run_native hotcold "$PLANTED/access_hotcold" "$hot" "$cold" 1

name=hotcold-sampled
expect_record "$name" -M 2G --sample-accesses -- "$PLANTED/access_hotcold" "$hot" "$cold" "$seconds"
same_output "$name" hotcold
check_stats "$name" --max $((2048 * MIB)) --procs 1
check_eq "$name faults_refault" "$(stat_of "$name" faults_refault)" 0
check_first_touch "$name" "$pages"
samples=$(stat_of "$name" access_samples)
check_ge "$name access_samples" "$samples" 1

csv=$WORK/$name.access.csv
"$FAULTLINE" report "$WORK/$name" --by alloc --kind access --format csv --top 0 >"$csv" 2>"$WORK/$name.report.err" ||
	fail "$name: report --by alloc --kind access exited $?: $(cat "$WORK/$name.report.err")"
"$PY" - "$csv" "$samples" <<'PYEOF' || fail "$name: access samples per MiB (report --by alloc --kind access)"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
total = sum(int(r["faults"]) for r in rows)
if total != int(sys.argv[2]):
    sys.exit("report counts %d access samples, stats.json %s" % (total, sys.argv[2]))
site = {r["function"]: r for r in rows}
for f in ("alloc_hot_array", "alloc_cold_array"):
    if f not in site:
        sys.exit("no row for %s in %s" % (f, [r["function"] for r in rows]))
per_mib = {f: int(site[f]["faults"]) / (int(site[f]["alloc_bytes"]) / 1048576) for f in site if site[f]["alloc_bytes"]}
hot, cold = per_mib["alloc_hot_array"], per_mib["alloc_cold_array"]
print("ok access samples per MiB: hot %.2f, cold %.3f (%.1fx; %d samples)" % (hot, cold, hot / cold if cold else float("inf"), total))
if hot < 5 * cold:
    sys.exit("hot array %.2f access samples per MiB < 5 x cold array %.3f" % (hot, cold))
PYEOF

# the default report is about the faults: no access sample in its rows
all_csv=$WORK/$name.all.csv
"$FAULTLINE" report "$WORK/$name" --format csv --top 0 >"$all_csv" 2>/dev/null || fail "$name: report exited $?"
check_eq "$name report rows' faults (default kind: all)" \
	"$("$PY" -c 'import csv,sys; print(sum(int(r["faults"]) for r in csv.DictReader(open(sys.argv[1]))))' "$all_csv")" \
	"$(stat_of "$name" faults_total)"

# ranges from the trace: all = the faults (as the online tree), access = the samples alone
for k in all access; do
	"$FAULTLINE" ranges "$WORK/$name" --from-trace --kind "$k" --format json >"$WORK/ranges.$k.json" 2>"$WORK/ranges.err" ||
		fail "$name: ranges --kind $k exited $?: $(cat "$WORK/ranges.err")"
done
tree_faults() { "$PY" -c 'import json,sys; print(sum(p["faults"] for p in json.load(open(sys.argv[1]))["processes"]))' "$1"; }
check_eq "$name ranges --kind all: faults in its tree" "$(tree_faults "$WORK/ranges.all.json")" "$(stat_of "$name" faults_total)"
check_eq "$name ranges --kind access: samples in its tree" "$(tree_faults "$WORK/ranges.access.json")" "$samples"

"$FAULTLINE" visualize "$WORK/$name" -o "$WORK/viz" >"$WORK/viz.out" 2>&1 || fail "$name: visualize exited $?: $(tail -3 "$WORK/viz.out")"
[ -s "$WORK/viz/heatmap.svg" ] || fail "$name: visualize wrote no heatmap.svg"
check_eq "$name faults-access.folded total" \
	"$(awk '{s += $NF} END {print s + 0}' "$WORK/viz/faults-access.folded")" "$samples"
echo "PASS"
