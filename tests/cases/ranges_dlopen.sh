#!/usr/bin/env bash
# ranges_dlopen: a maps snapshot that renames nothing does not split an allocation site
# (tests/planted/dlopen_split: 64 blocks of 256 KiB from grab(), libz dlopen'ed after the 32nd, so
# the runtime takes a "dlopen" maps snapshot between the blocks' allocations). Sites are named as
# at their allocations' time (maps_time checks a real rename); here the name is the same on both
# sides, so `ranges` lists grab once per range, with the blocks of both sides (it listed it
# twice, 32 and 31 blocks, with the faults split between them):
#   - the recording has the dlopen snapshot (the premise);
#   - in every range grab is listed once (sites are stacks: other stacks may share a name);
#   - the range holding grab's blocks lists it with more than 32 allocations (both sides).
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted dlopen_split

run_native ds "$PLANTED/dlopen_split"
expect_record ds -L 4 -M 1024 -- "$PLANTED/dlopen_split"
same_output ds ds
grep -q '^# maps [0-9]* dlopen' "$WORK"/ds/*/maps || fail "no dlopen maps snapshot in the recording (the test's premise)"
"$FAULTLINE" ranges "$WORK/ds" --format json --sites 100 >"$WORK/ranges.json" 2>"$WORK/ranges.err" ||
	fail "ranges: $(cat "$WORK/ranges.err")"
"$PY" - "$WORK/ranges.json" <<'PYEOF' || fail "ranges split an allocation site at a maps snapshot that renamed nothing"
import collections, json, sys
d = json.load(open(sys.argv[1]))
bad, grab = [], 0
for p in d["processes"]:
    for r in p["ranges"]:
        names = collections.Counter(s["name"] for s in r["sites"])
        bad += ["range %d: %s x%d" % (r["rank"], n, c) for n, c in names.items() if c > 1 and n.startswith("grab ")]
        grab = max([grab] + [s["allocs"] for s in r["sites"] if s["name"].startswith("grab dlopen_split.c:")])
print("grab listed twice in a range: %s; grab's most allocations in one range: %d" % (bad or "none", grab))
sys.exit(1 if bad or grab <= 32 else 0)
PYEOF
echo "ok ranges: grab is one site across the dlopen snapshot"
echo "PASS"
