#!/usr/bin/env bash
# tests/cases/visualize.sh: `faultline visualize` on a recording of the planted call chain
# (tests/planted/viz_chain.c: main → a → b → c → d, d writes and reads back a heap array; main → e
# with e_fill inlined into it), under -L 4 -M 256 so it first-touches and refaults.
#   - prints the paths of every file, all written;
#   - folded stacks: well-formed lines; "…main;a;b;c;d N" with N the faults whose faulting PC lies
#     in d (counted independently from `faultline dump` and the symbol table); 2048 first-touch
#     faults there (one per page); the inlined frame main;e;e_fill; every folded file sums to the
#     faults of its kind in stats.json (faults-alloc.folded to all of them);
#   - no frame of the runtime (libfaultline.so): --keep-runtime adds exactly such frames;
#   - SVGs well-formed (python3's XML parser); d's frame is as wide as its count (±1 px); no
#     frame under 1 px; canvas under 32,767 px; tooltip "d (N faults, P%)";
#   - heatmap: every cell's address row holds a fault, in the cell's time span (±1 column);
#     every fault lies in a drawn row; the array's allocation lifetime is outlined;
#   - hot address ranges: ranges.txt (`faultline ranges --tree`'s text: d's array at main's malloc is
#     in the top range); the heatmap marks >= 1 hot range (<g class="hot-range" data-lo data-hi>),
#     each mark inside drawn rows at both ends and inside its whole range, ranks listed in the legend,
#     and the marks cover most faults;
#   - options: --kind, --pid, --top (0: every stack), --reverse, --inverted, --title, --minwidth, usage errors;
#   - a recording without stacks (--stack-depth 0): one "[no stack]" line with every fault.
. "$(dirname "$0")/../lib.sh"

need_faultline
need_planted viz_chain
PAGES=2048

expect_record chain -L 4 -M 256 -- "$PLANTED/viz_chain" $PAGES
check_stats chain --local $((4 * MIB)) --max $((256 * MIB))
REC=$WORK/chain
OUT=$WORK/viz

# visualize ARGS...: runs faultline visualize; sets RC; stdout in $WORK/viz.out, stderr in $WORK/viz.err.
visualize() {
	RC=0
	"$FAULTLINE" visualize "$@" >"$WORK/viz.out" 2>"$WORK/viz.err" || RC=$?
}

visualize "$REC" -o "$OUT"
[ "$RC" -eq 0 ] || { cat "$WORK/viz.err" >&2; fail "visualize exited $RC"; }
for f in faults.folded faults-first-touch.folded faults-refault.folded faults-alloc.folded \
	flamegraph.svg flamegraph-first-touch.svg flamegraph-refault.svg flamegraph-alloc.svg heatmap.svg ranges.txt; do
	grep -qx "$OUT/$f" "$WORK/viz.out" || fail "visualize did not print $OUT/$f: $(cat "$WORK/viz.out")"
	[ -s "$OUT/$f" ] || fail "$OUT/$f is missing or empty"
done
echo "ok visualize wrote and printed 10 files"
grep -q '^# ranges of ' "$OUT/ranges.txt" && grep -q '^# tree of process ' "$OUT/ranges.txt" ||
	fail "ranges.txt is not faultline ranges --tree's text: $(head -n3 "$OUT/ranges.txt")"
grep -A3 '^rank ' "$OUT/ranges.txt" | grep -q 'site .* main viz_chain\.c:' ||
	fail "ranges.txt: the top range's site is not main's malloc in viz_chain.c: $(grep -A3 '^rank ' "$OUT/ranges.txt")"
echo "ok ranges.txt: hot ranges and the tree, the array's malloc in main at the top"
[ -z "$(find "$OUT" -maxdepth 1 -name "*.tmp")" ] || fail "temporary files left in $OUT: $(find "$OUT" -maxdepth 1 -name "*.tmp")"

"$FAULTLINE" dump "$REC" >"$WORK/dump.txt" || fail "faultline dump failed"

# The folded files, the SVGs and the heatmap against the recording.
"$PY" - "$REC" "$OUT" "$WORK/dump.txt" "$PLANTED/viz_chain" "$PAGES" <<'EOF' || fail "visualize output check failed"
import glob, json, os, re, subprocess, sys
import xml.etree.ElementTree as ET
rec, out, dump, exe, pages = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
bad = []
def ok(msg): print("ok " + msg)
def check(cond, msg):
    if cond: ok(msg)
    else: bad.append(msg); print("FAIL: " + msg, file=sys.stderr)

stats = [json.load(open(p)) for p in glob.glob(os.path.join(rec, "*", "stats.json"))]
total = {k: sum(s["faults_" + k] for s in stats) for k in ("total", "first_touch", "refault", "soft", "concurrent")}

def folded(name):
    lines = {}
    for i, line in enumerate(open(os.path.join(out, name))):
        m = re.match(r"^(\S.*) ([0-9]+)$", line.rstrip("\n"))
        if not m:
            bad.append("%s line %d malformed: %r" % (name, i + 1, line)); continue
        if m.group(1) in lines:
            bad.append("%s: stack %r twice" % (name, m.group(1)))
        lines[m.group(1)] = int(m.group(2))
    return lines

F = folded("faults.folded")
for name, want in (("faults.folded", total["total"]), ("faults-first-touch.folded", total["first_touch"]),
                   ("faults-refault.folded", total["refault"]), ("faults-alloc.folded", total["total"])):
    got = sum(folded(name).values())
    check(got == want, "%s sums to %d (stats.json: %d)" % (name, got, want))

# Faults whose faulting PC (frame 0 of the stack) lies in d, from the dump and the symbol table.
syms = {}
for line in subprocess.run(["nm", "-S", "--defined-only", exe], capture_output=True, text=True).stdout.splitlines():
    p = line.split()
    if len(p) == 4 and p[2] in "tT":
        syms[p[3].split(".")[0]] = (int(p[0], 16), int(p[1], 16))  # d.constprop.0 is d
check("d" in syms and "e" in syms, "nm finds d and e in viz_chain")
maps = open(glob.glob(os.path.join(rec, "*", "maps"))[0]).read().splitlines()
base = None
for line in maps:
    f = line.split()
    if len(f) >= 6 and f[5] == os.path.realpath(exe) and int(f[2], 16) == 0:
        base = int(f[0].split("-")[0], 16); break
check(base is not None, "load address of viz_chain found in the maps file")
in_d = {"first-touch": 0, "refault": 0, "all": 0}
faults = []
for line in open(dump):
    if line.startswith("#"): continue
    f = line.split()
    t, addr, kind = float(f[0]), int(f[3], 16), f[4]
    faults.append((t, addr, kind))
    st = next(x for x in f if x.startswith("stack="))[len("stack="):]
    if st == "-": continue
    pc = int(st.split(",")[0], 16) - base
    lo, size = syms["d"]
    if lo <= pc < lo + size:
        in_d[kind] = in_d.get(kind, 0) + 1; in_d["all"] += 1
d_lines = {k: v for k, v in F.items() if k.endswith("main;a;b;c;d")}
check(len(d_lines) == 1, "one folded stack ends in main;a;b;c;d: %s" % list(d_lines))
d_count = sum(d_lines.values())
check(d_count == in_d["all"], "main;a;b;c;d %d = faults with their PC in d (%d)" % (d_count, in_d["all"]))
FT = folded("faults-first-touch.folded")
d_ft = sum(v for k, v in FT.items() if k.endswith("main;a;b;c;d"))
check(d_ft == pages == in_d["first-touch"], "first-touch faults in d: %d = %d pages (dump: %d)" % (d_ft, pages, in_d["first-touch"]))
RF = folded("faults-refault.folded")
check(sum(v for k, v in RF.items() if k.endswith("main;a;b;c;d")) == in_d["refault"], "refaults in d = dump's (%d)" % in_d["refault"])
e_fill = sum(v for k, v in FT.items() if k.endswith("main;e;e_fill"))
check(e_fill == pages // 4, "inlined frame expanded: main;e;e_fill has %d first-touch faults (%d pages)" % (e_fill, pages // 4))
check(not any("libfaultline" in k for k in F), "no libfaultline frame in the folded stacks")
A = folded("faults-alloc.folded")
main_alloc = sum(v for k, v in A.items() if k.endswith(";main"))
check(main_alloc >= in_d["all"], "allocation site main (malloc of the array) weighted by its faults: %d >= %d" % (main_alloc, in_d["all"]))

# SVGs: well-formed, d's width proportional to its count, nothing sub-pixel.
NS = "{http://www.w3.org/2000/svg}"
def frames(svg):
    root = ET.parse(svg).getroot()
    res = []
    for g in root.iter(NS + "g"):
        if g.get("id") != "frames": continue
        for fg in g.findall(NS + "g"):
            title = fg.find(NS + "title").text
            rect = fg.find(NS + "rect")
            m = re.match(r"^(.*) \(([0-9,]+) faults, ", title.split("\n")[0])
            res.append((m.group(1), int(m.group(2).replace(",", "")), float(rect.get("x")), float(rect.get("width")),
                        float(rect.get("y")), title))
    return root, res
for svg in sorted(glob.glob(os.path.join(out, "*.svg"))):
    try:
        root = ET.parse(svg).getroot()
    except ET.ParseError as e:
        check(False, "%s is well-formed XML: %s" % (svg, e)); continue
    h, w = float(root.get("height")), float(root.get("width"))
    check(h < 32767 and w < 32767, "%s parses as XML, %gx%g px" % (os.path.basename(svg), w, h))
    check(os.path.getsize(svg) < 2 << 20, "%s is %d bytes" % (os.path.basename(svg), os.path.getsize(svg)))
root, fr = frames(os.path.join(out, "flamegraph.svg"))
width = float(root.get("width")); full = width - 20
allf = [f for f in fr if f[0] == "all"][0]
check(allf[1] == total["total"] and abs(allf[3] - full) < 0.01, "root frame: %d faults, full width" % allf[1])
d = [f for f in fr if f[0] == "d"]
check(len(d) == 1, "one frame named d")
want_w = d_count / total["total"] * full
check(abs(d[0][3] - want_w) <= 1, "d is %.2f px wide for %d of %d faults (want %.2f ±1)" % (d[0][3], d_count, total["total"], want_w))
pct = "%.2f%%" % (100.0 * d_count / total["total"])
check(d[0][5].startswith("d (%s faults, %s)" % (format(d_count, ","), pct)), "tooltip %r" % d[0][5].split("\n")[0])
check("viz_chain.c:" in d[0][5], "d's tooltip names its file:line (%r)" % d[0][5].replace("\n", " | "))
check(min(f[3] for f in fr) >= 1 - 1e-9, "no frame narrower than 1 px (narrowest %.2f)" % min(f[3] for f in fr))
c = [f for f in fr if f[0] == "c"][0]
check(d[0][4] < c[4], "d is drawn above its caller c (y %g < %g)" % (d[0][4], c[4]))

# Heatmap: cells only where faults are.
hm = ET.parse(os.path.join(out, "heatmap.svg")).getroot()
cells = [g for g in hm.iter(NS + "g") if g.get("id") == "cells"][0]
x0, ns_px = float(cells.get("data-x0")), float(cells.get("data-ns-per-px"))
rows = [(int(g.get("data-lo"), 16), int(g.get("data-hi"), 16), g) for g in cells.findall(NS + "g")]
check(len(rows) > 0, "heatmap has %d address rows with cells" % len(rows))
col_ns = 3 * ns_px  # default columns are 3 px wide
t0 = 0.0  # dump times count from the same origin (the recording's first process start)
empty_rows = empty_cells = 0
ncells = 0
for lo, hi, g in rows:
    in_row = [f for f in faults if lo <= f[1] < hi]
    if not in_row: empty_rows += 1
    for r in g.findall(NS + "rect"):
        ncells += 1
        ta = (float(r.get("x")) - x0) * ns_px / 1e9
        tb = ta + float(r.get("width")) * ns_px / 1e9
        slack = col_ns / 1e9
        if not any(ta - slack <= f[0] < tb + slack for f in in_row): empty_cells += 1
check(empty_rows == 0, "every heatmap row holds a fault (%d rows)" % len(rows))
check(empty_cells == 0, "every heatmap cell's time span holds a fault of its row (%d cells)" % ncells)
uncovered = sum(1 for f in faults if not any(lo <= f[1] < hi for lo, hi, _ in rows))
check(uncovered == 0, "every fault lies in a drawn row (%d faults)" % len(faults))
allocs = [g for g in hm.iter(NS + "g") if g.get("id") == "allocs"][0].findall(NS + "rect")
check(any("from main" in r.find(NS + "title").text for r in allocs), "allocation outlines drawn (%d), one allocated in main" % len(allocs))
labels = [t for t in hm.iter(NS + "text") if t.text and t.text.startswith("0x")]
check(len(labels) >= 1, "hex address labels on the y axis (%s)" % [t.text for t in labels[:3]])
# labels all down the axis (not only at range starts), never on top of each other, in address order
ys = [float(t.get("y")) for t in labels]
plot = [r for r in hm.iter(NS + "rect") if r.get("fill") == "none" and r.get("stroke") == "#444"][0]
plot_h = float(plot.get("height"))
check(len(labels) >= plot_h / 100, "%d address labels on a %d px axis (want one per 100 px at least)" % (len(labels), plot_h))
check(all(b - a >= 11 for a, b in zip(ys, ys[1:])), "address labels at least 11 px apart (%s)" % ys[:8])
addrs = [int(t.text, 16) for t in labels]
check(addrs == sorted(addrs), "address labels increase down the axis")
# no time shown for the end of a never-freed object (it was UINT64_MAX ns: 18446744073.7 s)
titles = " ".join((t.text or "") for t in hm.iter(NS + "title"))
check("18446744073" not in titles, "no allocation tooltip ends at 18446744073 s")
# the legend fits in the picture: its longest text at ~0.62 em per character
width = float(hm.get("width"))
over = [t.text for t in hm.iter(NS + "text") if t.get("x") and float(t.get("x")) > width * 0.6 and t.text and
        float(t.get("x")) + 0.62 * float(t.get("font-size") or 11) * len("".join(t.itertext())) > width]
check(not over, "legend text inside the %d px picture (over: %s)" % (width, over[:3]))
check(any(t.text and "first-touch" in t.text for t in hm.iter(NS + "text")), "legend names first-touch")

# Hot ranges marked where they meet the drawn rows.
marks = [g for g in hm.iter(NS + "g") if g.get("class") == "hot-range"]
check(len(marks) >= 1, "heatmap marks %d hot-range elements" % len(marks))
def in_rows(a):
    return any(lo <= a < hi for lo, hi, _ in rows)
bad_marks = []
for g in marks:
    lo, hi = int(g.get("data-lo"), 16), int(g.get("data-hi"), 16)
    rlo, rhi = int(g.get("data-range-lo"), 16), int(g.get("data-range-hi"), 16)
    if not (lo < hi and in_rows(lo) and in_rows(hi - 1) and rlo <= lo and hi <= rhi) or g.find(NS + "rect") is None:
        bad_marks.append((hex(lo), hex(hi), hex(rlo), hex(rhi)))
check(not bad_marks, "every hot-range mark lies in drawn rows and in its range (bad: %s)" % bad_marks[:3])
covered = sum(1 for f in faults if any(int(g.get("data-lo"), 16) <= f[1] < int(g.get("data-hi"), 16) for g in marks))
check(covered >= 0.9 * len(faults), "the marks cover %d of %d faults" % (covered, len(faults)))
ranks = {g.get("data-rank") for g in marks}
legend = [t for t in hm.iter(NS + "text") if t.get("class") == "hot-range-legend"]
check(len(legend) == len(ranks) and any("hot address range" in (t.text or "") for t in hm.iter(NS + "text")),
      "legend: a hot address range entry and %d ranges listed (%d ranks marked)" % (len(legend), len(ranks)))
with open(os.path.join(out, "ranges.txt")) as fh:
    txt = fh.read()
top = re.search(r"^\s+1\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)", txt, re.M)
check(top is not None and any(int(g.get("data-range-lo"), 16) == int(top.group(1), 16) and int(g.get("data-range-hi"), 16) == int(top.group(2), 16)
                              for g in marks if g.get("data-rank") == "1"), "H1 is ranges.txt's top range")
sys.exit(1 if bad else 0)
EOF

# --keep-runtime: the frames it adds are exactly the runtime's (functions of libfaultline.so).
visualize "$REC" -o "$WORK/keep" --keep-runtime
[ "$RC" -eq 0 ] || fail "visualize --keep-runtime exited $RC: $(cat "$WORK/viz.err")"
"$PY" - "$OUT/faults.folded" "$WORK/keep/faults.folded" "$BUILD/libfaultline.so" <<'EOF' || fail "--keep-runtime check failed"
import subprocess, sys
def names(path):
    s = set()
    for line in open(path):
        s.update(line.rsplit(" ", 1)[0].split(";"))
    return s
plain, keep = names(sys.argv[1]), names(sys.argv[2])
extra = keep - plain
syms = set()
for line in subprocess.run(["nm", "--defined-only", sys.argv[3]], capture_output=True, text=True).stdout.splitlines():
    p = line.split()
    if len(p) == 3: syms.add(p[2])
print("# frames only with --keep-runtime: %s" % sorted(extra)[:8])
if not extra: sys.exit("FAIL: --keep-runtime shows no runtime frame")
stray = [n for n in extra if n not in syms and not n.startswith("[") and "." not in n]
if stray: sys.exit("FAIL: frames added by --keep-runtime that are not libfaultline.so symbols: %s" % stray[:5])
if plain & syms - {"malloc", "free", "calloc", "realloc", "mmap", "munmap"} - keep:
    pass
print("ok --keep-runtime adds %d runtime frames; the default skips them" % len(extra))
EOF

# Options.
sum_folded() { awk '{ s += $NF } END { print s + 0 }' "$1"; }
visualize "$REC" -o "$WORK/refault" --kind refault
[ "$RC" -eq 0 ] || fail "--kind refault exited $RC"
check_eq "--kind refault: faults.folded sum" "$(sum_folded "$WORK/refault/faults.folded")" "$(stat_of chain faults_refault)"
[ -e "$WORK/refault/flamegraph-first-touch.svg" ] && fail "--kind refault wrote a first-touch graph"
grep -q flamegraph-refault.svg "$WORK/viz.out" || fail "--kind refault did not write flamegraph-refault.svg"
visualize "$REC" -o "$WORK/top" --top 2
[ "$RC" -eq 0 ] || fail "--top 2 exited $RC"
check_le "--top 2: folded lines" "$(wc -l <"$WORK/top/faults.folded")" 3
check_eq "--top 2: folded sum" "$(sum_folded "$WORK/top/faults.folded")" "$(stat_of chain faults_total)"
grep -q '^\[other stacks\] ' "$WORK/top/faults.folded" || fail "--top 2: no [other stacks] line"
grep -q 'main;a;b;c;d ' "$WORK/top/faults.folded" || fail "--top 2 dropped the heaviest stack"
visualize "$REC" -o "$WORK/rev" --reverse --inverted --title 'Chain <&> test' --minwidth 2
[ "$RC" -eq 0 ] || fail "--reverse --inverted exited $RC"
cmp -s "$OUT/faults.folded" "$WORK/rev/faults.folded" || fail "--reverse changed the folded file (it stays root first)"
"$PY" - "$WORK/rev/flamegraph.svg" <<'EOF' || fail "--reverse/--inverted/--title check failed"
import re, sys
import xml.etree.ElementTree as ET
NS = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
texts = [t.text for t in root.iter(NS + "text")]
if "Chain <&> test" not in texts: sys.exit("FAIL: title not shown: %s" % texts[:3])
fr = {}
for g in root.iter(NS + "g"):
    t = g.find(NS + "title")
    if t is not None and g.find(NS + "rect") is not None:
        fr.setdefault(t.text.split(" (")[0], []).append(float(g.find(NS + "rect").get("y")))
# Reversed: d (a leaf) sits right on the root; inverted: below the root in y.
if "d" not in fr or min(fr["d"]) <= fr["all"][0]: sys.exit("FAIL: inverted graph does not draw d below the root")
if min(fr["d"]) - fr["all"][0] != 16: sys.exit("FAIL: reversed graph does not put d next to the root (dy %g)" % (min(fr["d"]) - fr["all"][0]))
for g in root.iter(NS + "g"):
    r = g.find(NS + "rect")
    if g.find(NS + "title") is not None and r is not None and float(r.get("width")) < 2 - 1e-9:
        sys.exit("FAIL: a frame narrower than --minwidth 2")
print("ok --reverse puts d on the root, --inverted draws downward, --title shown, --minwidth 2 holds")
EOF
first_pid=$(basename "$(ls -d "$REC"/*/ | head -n1)"); first_pid=${first_pid%%.*}
visualize "$REC" -o "$WORK/pid" --pid "$first_pid"
[ "$RC" -eq 0 ] || fail "--pid $first_pid exited $RC"
visualize "$REC" -o "$WORK/pid1" --pid 1
[ "$RC" -eq 1 ] && grep -q 'no process with pid 1' "$WORK/viz.err" || fail "--pid 1: exit $RC: $(cat "$WORK/viz.err")"
visualize --help
[ "$RC" -eq 0 ] && grep -q '^usage: faultline visualize' "$WORK/viz.out" || fail "visualize --help: exit $RC"
visualize "$REC" -o "$WORK/top0" --top 0   # 0: every stack, as report's --top 0
[ "$RC" -eq 0 ] || fail "--top 0 exited $RC"
cmp -s "$WORK/top0/faults.folded" "$OUT/faults.folded" || fail "--top 0: faults.folded differs from the default's"
for bad in "--bogus" "--kind nope" "--minwidth 0" "--minwidth 200%" "--top -1" "--width 5"; do
	# shellcheck disable=SC2086
	visualize "$REC" $bad
	[ "$RC" -eq 2 ] || fail "visualize $bad: exit $RC, want 2"
done
echo "ok usage errors exit 2"
visualize "$WORK/does-not-exist"
[ "$RC" -eq 1 ] || fail "visualize of a missing recording: exit $RC"
[ ! -e "$WORK/does-not-exist" ] || fail "visualize of a missing recording created it"
visualize "$WORK/does-not-exist" -o "$WORK/viz-out-of-nothing"
[ "$RC" -eq 1 ] && [ ! -e "$WORK/viz-out-of-nothing" ] || fail "visualize of a missing recording: exit $RC, or -o created"
echo "ok options"

# No stacks at all: every fault under one "[no stack]" frame.
expect_record nostack -L 4 -M 256 --stack-depth 0 -- "$PLANTED/viz_chain" 256
visualize "$WORK/nostack" -o "$WORK/nostack-viz"
[ "$RC" -eq 0 ] || fail "visualize of a recording without stacks exited $RC"
check_eq "no stacks: folded lines" "$(wc -l <"$WORK/nostack-viz/faults.folded")" 1
grep -qx "\[no stack\] $(stat_of nostack faults_total)" "$WORK/nostack-viz/faults.folded" ||
	fail "no stacks: want '[no stack] $(stat_of nostack faults_total)', got $(cat "$WORK/nostack-viz/faults.folded")"
echo "ok a recording without stacks: one [no stack] line with every fault"
