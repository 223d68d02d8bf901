#!/usr/bin/env bash
# house_graph: the repository's file graph (scripts/include_graph.py: arrows from #include lines
# and from the symbols one object of a program uses and another defines) has no circle and no
# arrow running up the stages of tools/README.md in tools/, shim/, lib/, inc/ and runtime/, and
# shim/ includes nothing of runtime/ but runtime_api.h. The runtime is one-way too (docs/design.md,
# "Layers"): leaves at the bottom, the context types above them, the subsystems, and runtime.c,
# the lifecycle, on top, called by nothing in runtime/.
. "$(dirname "$0")/../lib.sh"
need_faultline

say "scripts/include_graph.py --strict tools,shim,lib,inc,runtime"
"$PY" "$ROOT/scripts/include_graph.py" --root "$ROOT" --build "$BUILD" --strict tools,shim,lib,inc,runtime \
	>"$WORK/graph.out" 2>&1 || { cat "$WORK/graph.out" >&2; fail "circles or upward arrows in tools/, shim/, lib/, inc/ or runtime/"; }
grep -q "symbols of [1-9][0-9]* objects" "$WORK/graph.out" || { cat "$WORK/graph.out" >&2; fail "no objects read from $BUILD"; }
echo "ok $(head -1 "$WORK/graph.out"): no circle or upward arrow in tools/, shim/, lib/, inc/, runtime/"
"$PY" "$ROOT/scripts/include_graph.py" --root "$ROOT" --build "$BUILD" --strict runtime --no-calls >"$WORK/rt.out" 2>&1 ||
	{ cat "$WORK/rt.out" >&2; fail "circles in runtime/ from the #include lines alone"; }
echo "ok runtime/ from the #include lines alone: no circle"
