#!/usr/bin/env bash
# bench_far.sh: far-store costs side by side (not asserted anywhere; numbers for notes and reports).
# For each store — mem, file with O_DIRECT through io_uring and through pread/pwrite, file buffered
# (page cache) both ways, memcached on loopback — records bench/refault (fill MIB, then one read pass,
# sequential and random, under -L MIB/4) and prints, as a markdown table in build/bench-far.md:
#   refault ns/page   the read pass's time per refaulted page, as the program sees it (fault round
#                     trip + far read + install), and its inverse, refaults/s sustained;
#   read ns/page      time inside the backend per page read (stats.json far_read_ns / far_read_pages);
#   write-back        time inside the backend per page written and per batch (far_write_ns / ...).
# usage: scripts/bench_far.sh [MIB (64)] [RUNS (2)]   (memcached must be installed for its rows)
set -u
cd "$(dirname "$0")/.."
MIB=${1:-64} RUNS=${2:-2}
F=build/faultline
WORK=$(mktemp -d "${TMPDIR:-/tmp}/faultline-bench-far.XXXXXX")
OUT=build/bench-far.md
mc_pid=
cleanup() { [ -n "$mc_pid" ] && kill "$mc_pid" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
cc -O2 -std=gnu11 -o "$WORK/refault" bench/refault.c || exit 1
mkdir -p "$WORK/store"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
if command -v memcached >/dev/null; then
	memcached -l 127.0.0.1 -p "$port" -U 0 -M -m 2048 -t 2 -u "$(id -un)" & mc_pid=$!
	sleep 0.5
fi
stores=("mem|mem|" "file O_DIRECT io_uring|file:$WORK/store|uring" "file O_DIRECT pread/pwrite|file:$WORK/store|psync"
	"file buffered io_uring|file:$WORK/store|uring-buffered" "file buffered pread/pwrite|file:$WORK/store|psync-buffered")
[ -n "$mc_pid" ] && stores+=("memcached (loopback)|memcached:127.0.0.1:$port|")
{
	echo "# far stores: refault $MIB MiB under -L $((MIB / 4)) MiB, $RUNS run(s) each, medians"
	echo
	echo "| store | mode | refault ns/page | refaults/s | read ns/page (backend) | write-back ns/page | ns/batch | pages/batch |"
	echo "|---|---|---|---|---|---|---|---|"
} >"$OUT"
for entry in "${stores[@]}"; do
	IFS='|' read -r label spec io <<<"$entry"
	for mode in seq rand; do
		: >"$WORK/rows"
		for run in $(seq "$RUNS"); do
			FAULTLINE_FAR_IO=${io:-uring} "$F" record -q -o "$WORK/rec" --force -L $((MIB / 4)) -M $((MIB * 2)) \
				--far "$spec" -- "$WORK/refault" "$mode" "$MIB" >"$WORK/out" 2>"$WORK/err" || { tail -3 "$WORK/err"; continue; }
			python3 - "$WORK/rec" "$WORK/out" >>"$WORK/rows" <<'PY'
import glob, json, re, sys
s = json.load(open(glob.glob(sys.argv[1] + "/*/stats.json")[0]))
m = re.search(r"pass .*ns_per_page=([0-9.]+)", open(sys.argv[2]).read())
per = lambda a, b: s[a] / s[b] if s[b] else 0
print(m.group(1), per("far_read_ns", "far_read_pages"), per("far_write_ns", "far_write_pages"),
      per("far_write_ns", "far_writes"), per("far_write_pages", "far_writes"))
PY
		done
		python3 - "$label" "$mode" "$WORK/rows" >>"$OUT" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[3]) if l.strip()]
if not rows:
    print("| %s | %s | failed | | | | | |" % (sys.argv[1], sys.argv[2])); sys.exit()
med = [statistics.median(c) for c in zip(*rows)]
print("| %s | %s | %.0f | %.0f k | %.0f | %.0f | %.0f | %.0f |" % (sys.argv[1], sys.argv[2], med[0], 1e6 / med[0],
      med[1], med[2], med[3], med[4]))
PY
	done
done
cat "$OUT"
