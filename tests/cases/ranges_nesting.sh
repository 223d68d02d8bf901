#!/usr/bin/env bash
# ranges_nesting: hot ranges nest or are disjoint, with the touching innermost nodes joined (the
# default) as without (--no-merge). Two adjacent buffers faulted at random (tests/planted/
# exit_faulting.c: 64 MiB, then 32 MiB) give the online tree hot nodes on both sides of a boundary;
# a joined run of innermost nodes once ran past the end of the hot node holding its first, so it
# overlapped that node and still nested under it (its rows summed to more than 100 %). Checked on
# the JSON: every range lies inside its parent's node, siblings do not overlap, the top-level
# ranges' faults sum to at most the process's.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted exit_faulting

expect_record adj -L 16 -M 512 -- "$PLANTED/exit_faulting" 32 600
for merge in "" --no-merge; do
	"$FAULTLINE" ranges "$WORK/adj" $merge --format json >"$WORK/ranges$merge.json" 2>"$WORK/ranges$merge.err" ||
		fail "ranges $merge exited $?: $(cat "$WORK/ranges$merge.err")"
	"$PY" - "$WORK/ranges$merge.json" "ranges $merge" <<'PY' || fail "ranges ${merge:-(joined)}: ranges do not nest"
import json, sys
doc = json.load(open(sys.argv[1]))
bad = 0
for p in doc["processes"]:
    rs = {r["rank"]: r for r in p["ranges"]}
    node = lambda r: (int(r["node_start"], 16), int(r["node_end"], 16))
    children = {}
    for r in rs.values():
        children.setdefault(r["parent"], []).append(r)
        if r["parent"] is not None:
            (lo, hi), (plo, phi) = node(r), node(rs[r["parent"]])
            if not (plo <= lo and hi <= phi):
                print(f"{sys.argv[2]}: range {r['rank']} {r['node_start']}-{r['node_end']} is not inside its parent "
                      f"{rs[r['parent']]['rank']} {rs[r['parent']]['node_start']}-{rs[r['parent']]['node_end']}")
                bad += 1
    for sibs in children.values():
        sibs = sorted(sibs, key=lambda r: node(r)[0])
        for a, b in zip(sibs, sibs[1:]):
            if node(b)[0] < node(a)[1]:
                print(f"{sys.argv[2]}: ranges {a['rank']} and {b['rank']} overlap ({a['node_start']}-{a['node_end']}, "
                      f"{b['node_start']}-{b['node_end']})")
                bad += 1
    top = sum(r["faults"] for r in children.get(None, []))
    if top > p["faults"]:
        print(f"{sys.argv[2]}: the top-level ranges count {top} faults, the process {p['faults']}")
        bad += 1
    print(f"{sys.argv[2]}: {len(rs)} ranges, {len(children.get(None, []))} at the top")
sys.exit(1 if bad else 0)
PY
done
echo "ok ranges nest, joined or not"
