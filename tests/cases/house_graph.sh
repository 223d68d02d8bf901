#!/usr/bin/env bash
# house_graph: the repository's file graph (scripts/include_graph.py: arrows from #include lines
# and from the symbols one object of a program uses and another defines) has no circle and no
# arrow running up the stages of tools/README.md in tools/, shim/, lib/ and inc/, and shim/
# includes nothing of runtime/ but runtime_api.h. The runtime's remaining circles are printed
# (information, not yet a failure), with calls and from includes alone, so progress shows.
. "$(dirname "$0")/../lib.sh"
need_faultline

say "scripts/include_graph.py --strict tools,shim,lib,inc"
"$PY" "$ROOT/scripts/include_graph.py" --root "$ROOT" --build "$BUILD" --strict tools,shim,lib,inc \
	>"$WORK/graph.out" 2>&1 || { cat "$WORK/graph.out" >&2; fail "circles or upward arrows in tools/, shim/, lib/ or inc/"; }
grep -q "symbols of [1-9][0-9]* objects" "$WORK/graph.out" || { cat "$WORK/graph.out" >&2; fail "no objects read from $BUILD"; }
echo "ok $(head -1 "$WORK/graph.out"): no circle or upward arrow in tools/, shim/, lib/, inc/"
for mode in "" --no-calls; do
	"$PY" "$ROOT/scripts/include_graph.py" --root "$ROOT" --build "$BUILD" --show runtime $mode >"$WORK/rt.out" 2>&1 ||
		fail "include_graph.py --show runtime $mode failed: $(tail -3 "$WORK/rt.out")"
	say "runtime/ ${mode:-(includes and calls)}: $(grep -c '^circle' "$WORK/rt.out") circle(s)"
	sed -n 's/^circle (\([0-9]*\) files.*/#   one of \1 files/p' "$WORK/rt.out"
done
