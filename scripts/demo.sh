#!/usr/bin/env bash
# scripts/demo.sh: `make demo` — records the bundled example (examples/kvstore.c) with tight local
# memory, then shows what faultline found. Output goes to build/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
faultline=build/faultline
out=build/demo/faultline-kvstore
mkdir -p build/demo
echo "== native run"
build/examples/kvstore
echo
echo "== faultline record -L 16M -M 1G -- build/examples/kvstore  (table 12 MiB + log 61 MiB, 16 MiB local)"
"$faultline" record -L 16M -M 1G -o "$out" --force -- build/examples/kvstore
for verb in report visualize; do
	if "$faultline" help 2>&1 | grep -qw "$verb"; then
		echo
		echo "== faultline $verb $out"
		"$faultline" "$verb" "$out"
	fi
done
echo
echo "The recording is in $out (one directory per process: meta.json, stats.json, faults)."
if [ -f "$out/report.html" ]; then
	echo "Open $out/report.html in a browser: tables, flame graph and heatmap, linked."
fi
