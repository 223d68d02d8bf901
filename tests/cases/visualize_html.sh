#!/usr/bin/env bash
# visualize_html: report.html, the one linked page of faultline visualize.
#   - a real recording (tests/planted/html_phases: phase_one_fill writes buffer A, a pause,
#     phase_two_fill writes buffer B; --timeline) gives report.html, self-contained (no src= or
#     href= to anything, no url()), whose header is report's and whose counts are the recording's;
#   - in headless Chromium (tests/browser/check_html_report.py, real mouse events): no script or
#     console error; tables, flame graph and heatmap render; a click on the top callsite marks its
#     frames in the flame graph and grays the rest of the heatmap; a drag over phase 2's rectangle
#     (buffer B's addresses after the pause's middle) leaves only phase_two_fill's callsites; a
#     click on the top allocation site lists its objects' lifetimes; screenshots are taken;
#   - --no-html writes no report.html;
#   - an empty selection (--kind access, the recording having no access sample) gives a page that
#     says "No fault of the selected kinds (access)" in its text, an empty model, and in Chromium
#     no error, the message under the header and no heatmap, table or flame graph;
#   - one size of a sweep made with --mrc (faultline sweep -L 4M,8M,16M --mrc) has in its page the
#     curve `faultline mrc` prints and the sweep's measured refaults, its own size marked;
#   - a planted recording of 1 M faults (64 stacks x 4 threads x 4 objects, every kind) gives a
#     page of at most 5 MB, and the bound visualize -v states for any recording is at most 10 MB;
#   - --pid on a recording of three processes (far_forks 2 2, --mrc): each page holds report --pid's
#     faults, report --pid --by alloc's sites' run counts, no image root frame, an axis from the
#     process's start, and the three pages' miss-ratio curves add up to the recording's;
#   - the counter timeline on the wall axis and with --time virtual: steps that run forward and do
#     not overlap, rates that integrate to each counter's growth (1%), the first-touch counter
#     ending at report's first-touch count, and no page-faults step holding 90% of the faults.
# The browser part is skipped (the rest still runs) when Chromium cannot start: SKIP then, never
# a silent pass.
. "$(dirname "$0")/../lib.sh"

need_faultline
need_planted html_phases
need_planted mrc_loops far_forks
BROWSER=$ROOT/tests/browser
HELPER=$BUILD/tests/plant_recording
[ -x "$HELPER" ] || fail "$HELPER is not built (make)"

self_contained() { # PAGE: no reference to anything outside the file
	local page=$1
	if grep -Eiq '(src|href)=|url\(|@import|https?://' "$page"; then
		grep -Eio '.{30}((src|href)=|url\(|@import|https?://).{30}' "$page" | head -3 >&2
		fail "$page refers to something outside itself"
	fi
}

page_json() { # PAGE: the model embedded in the page, as JSON on stdout
	"$PY" - "$1" <<'EOF'
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'<script type="application/json" id="fl-data">(.*?)</script>', page, re.S)
if not m:
    sys.exit("no fl-data element in " + sys.argv[1])
print(m.group(1))
EOF
}

# ---------------------------------------------------------------- a real two-phase recording
name=phases
expect_record "$name" -L 4 -M 256 --timeline 20 -- "$PLANTED/html_phases" 8 400
read -r _ A B BYTES PAUSE0 PAUSE1 < <(grep -m1 '^phases ' "$WORK/$name.err") ||
	{ show_err "$name"; fail "html_phases printed no phases line"; }
OUT=$WORK/viz
mkdir -p "$OUT"
"$FAULTLINE" visualize "$WORK/$name" -o "$OUT" -v >"$WORK/viz.out" 2>"$WORK/viz.err" ||
	fail "visualize exited $?: $(tail -3 "$WORK/viz.err")"
PAGE=$OUT/report.html
[ -s "$PAGE" ] || fail "visualize wrote no report.html: $(cat "$WORK/viz.out")"
grep -qx "$PAGE" "$WORK/viz.out" || fail "visualize did not name $PAGE on stdout"
self_contained "$PAGE"
echo "ok report.html written ($(stat -c %s "$PAGE") bytes), self-contained"

"$FAULTLINE" report "$WORK/$name" >"$WORK/report.txt" 2>"$WORK/report.err" || fail "report exited $?"
page_json "$PAGE" >"$WORK/page.json" || fail "no model in the page"
"$PY" - "$WORK/page.json" "$WORK/report.txt" <<'EOF' || fail "the page's header or counts differ from report's"
import json, sys
d = json.load(open(sys.argv[1]))
report = open(sys.argv[2]).read().splitlines()
want = next(l for l in report if l.startswith("# faults:"))
have = [l for l in d["header"].splitlines() if l.startswith("# faults:")]
assert have == [want], "header's faults line: %r, report: %r" % (have, want)
# the rows line describes report's table, not the page's
assert any(l.startswith("# rows:") for l in report), "report printed no rows line"
assert not any(l.startswith("# rows:") for l in d["header"].splitlines()), "the page's header keeps report's rows line"
# the cells count every fault of the kinds shown (first-touch .. concurrent) exactly once
total = int(want.split()[2].replace(",", ""))
cells = d["cells"]
counted = sum(cells[i + 4] for i in range(0, len(cells), 5) if 1 <= cells[i + 2] <= 4)
assert counted + d["bounds"]["untimed"] == total, "cells hold %d faults (+%d untimed), report %d" % (
    counted, d["bounds"]["untimed"], total)
names = [d["names"][i] for i in d["callsites"]]
assert any(n.startswith("phase_one_fill ") for n in names) and any(n.startswith("phase_two_fill ") for n in names), names
assert d["series"], "no counter timeline in the page of a --timeline recording"
print("ok the page's header and cells agree with report: %d faults, %d callsites, %d series" % (
    total, len(names), len(d["series"])))
EOF

# the counter timeline: the model's steps (timeline_steps.h), checked on the wall axis and on the
# program's own time (--time virtual, whose sample times are task-clock values)
check_series() { # PAGE.json REPORT.txt AXIS
	"$PY" - "$@" <<'EOF'
import json, re, sys
d = json.load(open(sys.argv[1]))
report = open(sys.argv[2]).read()
axis = sys.argv[3]
faults = next(l for l in report.splitlines() if l.startswith("# faults:"))
first_touch = int(re.search(r"first-touch ([0-9,]*[0-9])", faults).group(1).replace(",", ""))
by = {s["label"]: s for s in d["series"]}
assert "page-faults" in by and "first-touch faults" in by, "%s: series %s" % (axis, sorted(by))
for s in d["series"]:
    x0, x1, v = s["x0"], s["x1"], s["v"]
    assert len(x0) == len(x1) == len(v) >= 2, (axis, s["label"], len(x0))
    for j in range(len(v)):
        assert x0[j] <= x1[j] and (s["gauge"] or x0[j] < x1[j]), "%s: %s step %d runs back: %d..%d" % (
            axis, s["label"], j, x0[j], x1[j])
        assert j == 0 or x1[j - 1] <= x0[j], "%s: %s steps %d, %d overlap" % (axis, s["label"], j - 1, j)
        assert v[j] >= 0, "%s: %s step %d: %g" % (axis, s["label"], j, v[j])
    if s["gauge"]:
        continue
    # a rate per second of the axis: over the steps it adds up to the counter's growth
    grown = sum(r * (b - a) for a, b, r in zip(x0, x1, v)) / 1e9
    want = s["last"] - s["first"]
    assert abs(grown - want) <= max(2, 0.01 * want), "%s: %s rate integrates to %.1f, the counter grew %d" % (
        axis, s["label"], grown, want)
ft = by["first-touch faults"]
assert ft["last"] == first_touch, "%s: first-touch counter ends at %d, report counts %d" % (axis, ft["last"], first_touch)
# two fill phases apart: no one step holds most of the faults (one spike instead of the rate)
pf = by["page-faults"]
steps = [r * (b - a) / 1e9 for a, b, r in zip(pf["x0"], pf["x1"], pf["v"])]
share = max(steps) / sum(steps)
assert share < 0.9, "%s: one page-faults step holds %.0f%% of the faults" % (axis, 100 * share)
print("ok %s axis: %d series, steps forward, rates integrate to the counters' growth, first-touch %d as report, "
      "largest page-faults step %.0f%% of them" % (axis, len(d["series"]), first_touch, 100 * share))
EOF
}
check_series "$WORK/page.json" "$WORK/report.txt" wall || fail "the page's counter timeline (wall) is wrong"
mkdir -p "$WORK/viz-virtual"
"$FAULTLINE" visualize "$WORK/$name" -o "$WORK/viz-virtual" --time virtual >/dev/null 2>"$WORK/viz-virtual.err" ||
	fail "visualize --time virtual exited $?: $(tail -3 "$WORK/viz-virtual.err")"
page_json "$WORK/viz-virtual/report.html" >"$WORK/page-virtual.json" || fail "no model in the --time virtual page"
check_series "$WORK/page-virtual.json" "$WORK/report.txt" virtual || fail "the page's counter timeline (virtual) is wrong"

START=$(json_get "$WORK/$name/$(first_proc "$WORK/$name")/meta.json" start_ns)
T0=$(( (PAUSE0 + PAUSE1) / 2 - START ))
mkdir -p "$WORK/shots"
RC=0
"$PY" "$BROWSER/check_html_report.py" "$PAGE" --rect "$B" "$((B + BYTES))" "$T0" "$((1 << 62))" \
	--expect phase_two_fill --other phase_one_fill --screenshots "$WORK/shots" >"$WORK/check.out" 2>&1 || RC=$?
cat "$WORK/check.out"
BROWSER_SKIPPED=
if [ "$RC" -eq 77 ]; then
	BROWSER_SKIPPED=$(grep -m1 '^SKIP' "$WORK/check.out" | cut -c6-)
elif [ "$RC" -ne 0 ]; then
	fail "report.html checks in Chromium failed (exit $RC)"
else
	for png in "$WORK"/shots/*.png; do
		[ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$png is not a PNG"
	done
	echo "ok screenshots taken ($(ls "$WORK"/shots/*.png | wc -l))"
fi

# ---------------------------------------------------------------- an empty selection
# the recording has no access sample: --kind access selects nothing; the page says so (in its
# text, not only in its script) and, in the browser, shows no empty grid, table or flame graph
! grep -q 'id="empty"' "$PAGE" || fail "the page of a non-empty selection says it is empty"
mkdir -p "$WORK/viz-empty" "$WORK/shots-empty"
"$FAULTLINE" visualize "$WORK/$name" -o "$WORK/viz-empty" --kind access >/dev/null 2>"$WORK/viz-empty.err" ||
	fail "visualize --kind access exited $?: $(tail -3 "$WORK/viz-empty.err")"
grep -q '<p id="empty" class="empty">No fault of the selected kinds (access): ' "$WORK/viz-empty/report.html" ||
	fail "the page of an empty selection does not say so: $(grep -o '<p id="empty".\{0,120\}' "$WORK/viz-empty/report.html")"
page_json "$WORK/viz-empty/report.html" >"$WORK/page-empty.json" || fail "no model in the empty page"
"$PY" - "$WORK/page-empty.json" <<'EOF' || fail "the empty page's model is not empty"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["cells"] == [] and d["groups"] == [] and d["kinds"] == 1 << 5, (len(d["cells"]), len(d["groups"]), d["kinds"])
EOF
echo "ok --kind access on a recording without access samples: the page says no fault of the selected kinds"
if [ -z "$BROWSER_SKIPPED" ]; then
	"$PY" "$BROWSER/check_html_report.py" "$WORK/viz-empty/report.html" --empty --screenshots "$WORK/shots-empty" \
		>"$WORK/check-empty.out" 2>&1 || { cat "$WORK/check-empty.out"; fail "the empty page's checks in Chromium failed"; }
	cat "$WORK/check-empty.out"
fi

rm -rf "$WORK/nohtml" && mkdir -p "$WORK/nohtml"
"$FAULTLINE" visualize "$WORK/$name" -o "$WORK/nohtml" --no-html >/dev/null 2>"$WORK/nohtml.err" ||
	fail "visualize --no-html exited $?: $(cat "$WORK/nohtml.err")"
[ ! -e "$WORK/nohtml/report.html" ] || fail "visualize --no-html wrote report.html"
[ -s "$WORK/nohtml/flamegraph.svg" ] || fail "visualize --no-html wrote no flamegraph.svg"
echo "ok --no-html: no report.html, the other files written"

# ---------------------------------------------------------------- the miss-ratio curve and the sweep
say "faultline sweep -L 4M,8M,16M --mrc -M 256 -- mrc_loops 16 2"
"$FAULTLINE" sweep -L 4M,8M,16M -o "$WORK/sweep" -M 256 --mrc -- "$PLANTED/mrc_loops" 16 2 >"$WORK/sweep.out" 2>&1 ||
	fail "sweep exited $?: $(tail -5 "$WORK/sweep.out")"
mkdir -p "$WORK/viz-sweep"
"$FAULTLINE" visualize "$WORK/sweep/L-8M" -o "$WORK/viz-sweep" >/dev/null 2>"$WORK/viz-sweep.err" ||
	fail "visualize (a sweep's L-8M) exited $?: $(tail -3 "$WORK/viz-sweep.err")"
"$FAULTLINE" mrc "$WORK/sweep/L-8M" --format csv >"$WORK/mrc.csv" 2>"$WORK/mrc.err" || fail "mrc exited $?: $(cat "$WORK/mrc.err")"
page_json "$WORK/viz-sweep/report.html" >"$WORK/page-sweep.json" || fail "no model in the sweep's page"
"$PY" - "$WORK/page-sweep.json" "$WORK/mrc.csv" "$WORK/sweep/sweep.csv" <<'EOF' || fail "the page's curves differ from faultline mrc's and sweep's"
import csv, json, sys
d = json.load(open(sys.argv[1]))
curve = d["mrc"]
rows = list(csv.DictReader(open(sys.argv[2])))
assert rows, "faultline mrc printed no row"
assert len(curve) == len(rows), "page: %d points, mrc: %d rows" % (len(curve), len(rows))
for p, r in zip(curve, rows):
    assert p[0] == int(r["local_bytes"]), (p, r)
    for i, k in ((1, "predicted_refaults"), (2, "lower"), (3, "upper")):
        assert abs(p[i] - float(r[k])) <= 1, (p, r)
print("ok the page's miss-ratio curve is faultline mrc's (%d points)" % len(curve))
sweep = {int(r["local_bytes"]): int(r["refault"]) for r in csv.DictReader(open(sys.argv[3]))}
page = {p[0]: p[1] for p in d["sweep"]}
assert page == sweep, "page's sweep %s, sweep.csv %s" % (page, sweep)
this = [p[0] for p in d["sweep"] if p[3] == 1]
assert this == [8 << 20], "the page marks %s as this recording, want 8 MiB" % this
print("ok the page's sweep curve is sweep.csv's refaults (%d sizes), this recording's -L 8M marked" % len(page))
EOF

# ---------------------------------------------------------------- --pid: one process of several
# far_forks forks twice: three processes, recorded with --mrc. Each --pid page holds that process
# only: its faults (report --pid's count), its allocation sites' whole-run counts (report --pid
# --by alloc's), its miss-ratio curve (the three pages' curves add up to the whole recording's),
# no image root frame (one image selected), and a time axis from its own start.
say "faultline record --mrc --timeline -- far_forks 2 2 (two children), visualize --pid of each"
expect_record forks -L 1 -M 64 --timeline 20 --mrc -- "$PLANTED/far_forks" 2 2
mkdir -p "$WORK/viz-forks"
"$FAULTLINE" visualize "$WORK/forks" -o "$WORK/viz-forks" >/dev/null 2>"$WORK/viz-forks.err" ||
	fail "visualize (far_forks) exited $?: $(tail -3 "$WORK/viz-forks.err")"
page_json "$WORK/viz-forks/report.html" >"$WORK/forks-all.json" || fail "no model in far_forks's page"
pids=
for meta in "$WORK"/forks/*/meta.json; do
	pid=$(json_get "$meta" pid)
	pids="$pids $pid"
	echo "$pid $(json_get "$meta" start_ns)" >>"$WORK/forks-starts.txt"
	mkdir -p "$WORK/viz-forks-$pid"
	"$FAULTLINE" visualize "$WORK/forks" --pid "$pid" -o "$WORK/viz-forks-$pid" >/dev/null 2>"$WORK/viz-forks-$pid.err" ||
		fail "visualize --pid $pid exited $?: $(tail -3 "$WORK/viz-forks-$pid.err")"
	page_json "$WORK/viz-forks-$pid/report.html" >"$WORK/forks-$pid.json" || fail "no model in the --pid $pid page"
	"$FAULTLINE" report "$WORK/forks" --pid "$pid" >"$WORK/forks-$pid.txt" 2>&1 || fail "report --pid $pid exited $?"
	"$FAULTLINE" report "$WORK/forks" --pid "$pid" --by alloc --format csv >"$WORK/forks-$pid.csv" 2>&1 ||
		fail "report --pid $pid --by alloc exited $?"
done
[ "$(echo $pids | wc -w)" -eq 3 ] || fail "far_forks 2 2 recorded $(echo $pids | wc -w) processes, want 3"
"$PY" - "$WORK" $pids <<'EOF' || fail "a --pid page holds other processes"
import csv, json, os, re, sys
work, pids = sys.argv[1], [int(p) for p in sys.argv[2:]]
starts = dict(tuple(map(int, l.split())) for l in open(os.path.join(work, "forks-starts.txt")))
first = min(starts.values())
whole = json.load(open(os.path.join(work, "forks-all.json")))
roots = {whole["names"][s[0]] for s in whole["stacks"]}
assert roots == {"far_forks"}, "the whole recording's stacks start with %s, want the image far_forks" % roots
mrc_sum = [0.0] * len(whole["mrc"])
assert whole["mrc"], "no miss-ratio curve in the page of a --mrc recording"
for pid in pids:
    d = json.load(open(os.path.join(work, "forks-%d.json" % pid)))
    report = open(os.path.join(work, "forks-%d.txt" % pid)).read()
    want = int(re.search(r"^# rows: .* ([0-9,]+) faults of pid %d$" % pid, report, re.M).group(1).replace(",", ""))
    cells = d["cells"]
    have = sum(cells[i + 4] for i in range(0, len(cells), 5) if 1 <= cells[i + 2] <= 4) + d["bounds"]["untimed"]
    assert have == want, "pid %d: the page holds %d faults, report --pid %d" % (pid, have, want)
    assert d["pid"] == pid, (pid, d["pid"])
    assert d["origin_ns"] == starts[pid] - first, "pid %d: the axis starts %d ns after the recording, the process %d" % (
        pid, d["origin_ns"], starts[pid] - first)
    if d["origin_ns"]:
        earliest = min(cells[i + 1] for i in range(0, len(cells), 5)) * d["grid"]["col_ns"]
        assert earliest < d["origin_ns"], "pid %d: its first fault at %d ns on the page, the process started at %d" % (
            pid, earliest, d["origin_ns"])
    roots = {d["names"][s[0]] for s in d["stacks"]}
    assert "far_forks" not in roots, "pid %d: one image selected, yet stacks start with its name: %s" % (pid, roots)
    # allocation sites' whole-run counts: report --pid --by alloc's
    rows = {}
    for r in csv.DictReader(open(os.path.join(work, "forks-%d.csv" % pid))):
        if r["file"] and r["allocated"]:
            rows["%s %s:%s" % (r["function"], os.path.basename(r["file"]), r["line"])] = [
                int(r["allocated"]), int(r["alloc_bytes"]), int(r["objects_faulted"]), int(r["site_faults"])]
    sites = {d["names"][s[0]]: s[1:] for s in d["sites"] if len(s) > 1}
    assert sites == rows, "pid %d: the page's sites' run counts %s, report --pid --by alloc %s" % (pid, sites, rows)
    assert [p[0] for p in d["mrc"]] == [p[0] for p in whole["mrc"]], "pid %d: the curve's sizes differ" % pid
    mrc_sum = [s + p[1] for s, p in zip(mrc_sum, d["mrc"])]
    print("ok --pid %d: %d faults as report --pid, %d sites' counts as report --by alloc, axis from %.3f s, no image root" % (
        pid, have, len(sites), d["origin_ns"] / 1e9))
for s, p in zip(mrc_sum, whole["mrc"]):
    assert abs(s - p[1]) <= 1, "the three processes' curves add to %.1f at %d bytes, the recording's is %.1f" % (s, p[0], p[1])
    assert s > 0 or p[1] == 0
print("ok the three --pid pages' miss-ratio curves add up to the recording's (%d sizes)" % len(mrc_sum))
EOF

# ---------------------------------------------------------------- size
"$HELPER" "$WORK/planted" 1000000 >/dev/null || fail "plant_recording failed"
mkdir -p "$WORK/viz-big"
"$FAULTLINE" visualize "$WORK/planted" -o "$WORK/viz-big" -v >/dev/null 2>"$WORK/viz-big.err" ||
	fail "visualize (1 M faults) exited $?: $(tail -3 "$WORK/viz-big.err")"
size=$(stat -c %s "$WORK/viz-big/report.html")
check_le "report.html of 1 M faults (bytes)" "$size" 5000000
bound=$(sed -n 's/.*report\.html: .*(bound \([0-9]*\)).*/\1/p' "$WORK/viz-big.err")
is_int "$bound" || fail "visualize -v stated no bound for report.html: $(grep report.html "$WORK/viz-big.err")"
check_le "report.html's bound for any recording (bytes)" "$bound" 10000000
check_le "report.html of 1 M faults within its bound" "$size" "$bound"

[ -z "$BROWSER_SKIPPED" ] || skip "the page's checks in Chromium: $BROWSER_SKIPPED (the rest passed)"
