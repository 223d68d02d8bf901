#!/usr/bin/env bash
# visualize_image_roots: with several process images, visualize's flame graphs (SVG and folded)
# have one root frame per image, its command name, as perf does (issue 13, "wanted alongside").
# `sh -c` runs two planted programs (fill, alloc_heavy): three images (the shell, fill,
# alloc_heavy), each named by its meta.json "exe"'s base name: every folded line starts with one
# of them, each of them roots some lines, the SVG's frames one level above "all" are exactly those
# names, each once, and their faults sum to the root's. A recording of one image has no such root.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted fill
need_planted alloc_heavy

expect_record multi -M 256 -- sh -c "'$PLANTED/fill' 8 && '$PLANTED/alloc_heavy' 10000"
"$FAULTLINE" visualize "$WORK/multi" -o "$WORK/multi.viz" >"$WORK/viz.out" 2>"$WORK/viz.err" ||
	fail "visualize: $(cat "$WORK/viz.err")"
expect_record single -M 256 -- "$PLANTED/fill" 8
"$FAULTLINE" visualize "$WORK/single" -o "$WORK/single.viz" >"$WORK/viz1.out" 2>"$WORK/viz1.err" ||
	fail "visualize of one image: $(cat "$WORK/viz1.err")"

"$PY" - "$WORK" <<'PYEOF' || fail "the flame graphs' roots are wrong"
import glob, html, json, os, re, sys
work = sys.argv[1]
from checks import check, errors
def images(rec):
    return {os.path.basename(json.load(open(m))["exe"]) for m in glob.glob(os.path.join(work, rec, "*", "meta.json"))}
def roots(folded):
    return [l.rsplit(" ", 1)[0].split(";")[0] for l in open(folded) if l.strip()]
def svg_level1(svg):
    frames = [(html.unescape(m.group(1)), int(m.group(2).replace(",", "")), float(m.group(3)))
              for m in re.finditer(r'<g><title>(.*?) \(([\d,]+) faults?[^<]*</title><rect x="[^"]*" y="([^"]*)"', open(svg).read())]
    root = [f for f in frames if f[0] == "all"]
    if len(root) != 1:
        return None, []
    return root[0][1], [f for f in frames if abs(f[2] - (root[0][2] - 16)) < 0.01]

want = images("multi")
check(len(want) == 3 and {"fill", "alloc_heavy"} <= want, "three images recorded: %s" % sorted(want))
for name in ("faults", "faults-first-touch", "faults-alloc"):
    got = roots(os.path.join(work, "multi.viz", name + ".folded"))
    check(set(got) <= want and {"fill", "alloc_heavy"} <= set(got),
          "%s.folded: roots %s are images, fill and alloc_heavy among them" % (name, sorted(set(got))))
total, level1 = svg_level1(os.path.join(work, "multi.viz", "flamegraph.svg"))
names = [f[0] for f in level1]
check(sorted(names) == sorted(set(names)) and set(names) <= want and {"fill", "alloc_heavy"} <= set(names),
      "flamegraph.svg: one frame per image under all: %s" % names)
check(total is not None and sum(f[1] for f in level1) == total,
      "flamegraph.svg: the image roots sum to all's %s faults (%s)" % (total, [f[1] for f in level1]))
one = roots(os.path.join(work, "single.viz", "faults.folded"))
check("fill" not in one, "one image: no command root (roots %s)" % sorted(set(one))[:5])
sys.exit(1 if errors else 0)
PYEOF
echo "ok one root frame per process image"
