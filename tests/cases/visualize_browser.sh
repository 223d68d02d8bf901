#!/usr/bin/env bash
# tests/cases/visualize_browser.sh: the flame graph and heatmap of a real recording (viz_chain) in a
# real browser — Debian's Chromium, headless, driven over the DevTools protocol pipe by
# tests/browser/*.py (python3 standard library only; no network, fresh profile):
#   - the flame graph renders (every frame laid out with a size, no script error);
#   - clicking frame c zooms: c becomes the full width, frames outside it are hidden, its ancestors
#     stay; Reset Zoom restores the widths;
#   - Search (the page's own prompt, answered "^(b|d)$") highlights exactly b and d and prints
#     "Matched: P%" with P computed here from the folded stacks (stacks holding a match, counted
#     once); Escape clears it;
#   - the icicle (--inverted) variant zooms the same way;
#   - the heatmap renders its cells;
#   - when FAULTLINE_SPEEDSCOPE names speedscope's offline build (dist/release/index.html of the npm
#     package `speedscope`; not installed by deps.sh), speedscope imports faults.folded.
# Skipped (exit 77, "SKIP reason") when Chromium is not installed or cannot start — never passed
# silently. Screenshots are kept with FAULTLINE_TEST_KEEP=1.
. "$(dirname "$0")/../lib.sh"

need_faultline
need_planted viz_chain
BROWSER=$ROOT/tests/browser
command -v chromium >/dev/null 2>&1 || [ -n "${FAULTLINE_CHROMIUM:-}" ] ||
	skip "chromium is not installed (./deps.sh --test installs Debian's chromium)"

expect_record chain -L 4 -M 256 -- "$PLANTED/viz_chain" 2048
OUT=$WORK/viz
"$FAULTLINE" visualize "$WORK/chain" -o "$OUT" >/dev/null 2>"$WORK/viz.err" || fail "visualize failed: $(cat "$WORK/viz.err")"
"$FAULTLINE" visualize "$WORK/chain" -o "$WORK/icicle" --inverted >/dev/null 2>"$WORK/viz.err" ||
	fail "visualize --inverted failed: $(cat "$WORK/viz.err")"
mkdir -p "$WORK/shots" "$WORK/shots-icicle"

REGEX='^(b|d)$'
read -r names pct < <("$PY" - "$OUT/faults.folded" "$OUT/flamegraph.svg" "$REGEX" <<'EOF'
import re, sys
import xml.etree.ElementTree as ET
folded, svg, regex = sys.argv[1:4]
rx = re.compile(regex)
total = matched = 0
for line in open(folded):
    stack, count = line.rstrip("\n").rsplit(" ", 1)
    total += int(count)
    if any(rx.search(f) for f in stack.split(";")):
        matched += int(count)
NS = "{http://www.w3.org/2000/svg}"
names = set()
for g in ET.parse(svg).getroot().iter(NS + "g"):
    t = g.find(NS + "title")
    if t is not None and g.find(NS + "rect") is not None:
        name = re.match(r"^(.*) \([0-9,]+ ", t.text.split("\n")[0]).group(1)
        if name != "all" and rx.search(name):
            names.add(name)
print(",".join(sorted(names)), "%.2f%%" % (100.0 * matched / total))
EOF
)
[ "$names" = "b,d" ] || fail "frames matching $REGEX in the SVG: '$names', want b,d"
say "expect frames $names highlighted, Matched: $pct"

RC=0
"$PY" "$BROWSER/check_flamegraph.py" "$OUT/flamegraph.svg" --click c --search "$REGEX" \
	--expect-match "$names" --expect-matched "$pct" --screenshots "$WORK/shots" >"$WORK/check.out" || RC=$?
cat "$WORK/check.out"
[ "$RC" -eq 77 ] && skip "$(grep -m1 '^SKIP' "$WORK/check.out" | cut -c6-)"
[ "$RC" -eq 0 ] || fail "flame graph checks in Chromium failed (exit $RC)"

RC=0
"$PY" "$BROWSER/check_flamegraph.py" "$WORK/icicle/flamegraph.svg" --click c --search "$REGEX" \
	--expect-match "$names" --expect-matched "$pct" --screenshots "$WORK/shots-icicle" || RC=$?
[ "$RC" -eq 0 ] || fail "icicle graph checks in Chromium failed (exit $RC)"

RC=0
"$PY" "$BROWSER/check_render.py" "$OUT/heatmap.svg" --selector '#cells rect' --min 100 \
	--screenshot "$WORK/shots/heatmap.png" || RC=$?
[ "$RC" -eq 0 ] || fail "heatmap did not render in Chromium (exit $RC)"
for png in "$WORK"/shots/*.png; do
	[ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$png is not a PNG"
done
echo "ok screenshots taken ($(ls "$WORK"/shots/*.png | wc -l))"
if [ -n "${FAULTLINE_SPEEDSCOPE:-}" ]; then
	[ -f "$FAULTLINE_SPEEDSCOPE" ] || fail "FAULTLINE_SPEEDSCOPE=$FAULTLINE_SPEEDSCOPE is not a file"
	"$PY" "$BROWSER/check_speedscope.py" "$OUT/faults.folded" "$FAULTLINE_SPEEDSCOPE" ||
		fail "speedscope did not import faults.folded"
else
	say "FAULTLINE_SPEEDSCOPE not set: speedscope import not checked"
fi
