#!/usr/bin/env bash
# scripts/bench_probe.sh: the access prober's rows of `make bench` (scripts/bench.sh runs it and
# appends its rows; it also runs alone): issue 15's one-run miss-ratio curve and issue 16's sampled
# accesses.
#
# usage: scripts/bench_probe.sh [--quick] [-o ROWS.md]     (rows of the bench table, Markdown)
# environment: FAULTLINE (default build/faultline), BENCH_WORK (default build/bench-work/probe),
#              BENCH_RUNS (cost ratios: runs per program, default 3, quick 1)
#
# P1 accuracy, per program (planted mrc_loops, python3, sqlite3, bench/graph_bfs, bench/csr_scatter): one
#    `record --mrc` run without -L gives the peak P of local memory and `faultline mrc --at P/8
#    --at P/4 --at P/2`; real `record -L` runs at those sizes give the measured refaults. Cell:
#    predicted / measured and the error, per size. (CLOCK, the default policy, is what is measured
#    and what `faultline mrc` predicts by default: a miniature simulation of it.)
# P2 cost of --mrc: wall of `record --mrc` vs a plain `record` (both without -L), per run interleaved.
# P3 cost of --sample-accesses (default rate) vs a plain `record` at the same -L (unlimited), per
#    run interleaved, on python3, sqlite3 and tests/planted/access_hotcold (8 + 128 MiB, 3 s: it runs
#    for a fixed time, so its wall ratio shows only the first-touch phase and the exit; its stderr
#    has accesses per CPU-second). The note gives the prober thread's own CPU time (probe_cpu_ns).
# Nothing is asserted; a failed run says so in its cell.
set -u
cd "$(dirname "$0")/.." || exit 1
export LC_ALL=C
QUICK=0 OUT=/dev/stdout
while [ $# -gt 0 ]; do
	case $1 in
	--quick) QUICK=1 ;;
	-o) OUT=${2:?-o needs a file}; shift ;;
	-h | --help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench_probe.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
	shift
done
FAULTLINE=${FAULTLINE:-$(pwd)/build/faultline}
PLANTED=$(dirname "$FAULTLINE")/tests
WORK=${BENCH_WORK:-$(pwd)/build/bench-work}/probe
BIN=$(pwd)/build/bench
if [ "$QUICK" = 1 ]; then RUNS=${BENCH_RUNS:-1}; PY_N=30000; SQL_ROWS=20000; LOOPS_MIB=32; GR_LOG=14; GR_DEG=16; CSR_LOG=13
else RUNS=${BENCH_RUNS:-3}; PY_N=150000; SQL_ROWS=100000; LOOPS_MIB=64; GR_LOG=16; GR_DEG=32; CSR_LOG=15; fi
rm -rf "$WORK"; mkdir -p "$WORK" || exit 1
say() { echo "bench_probe: $*" >&2; }
ROWS=$WORK/rows.md; : >"$ROWS"
row() { local c=() x; for x in "$@"; do c+=("${x//|/\\|}"); done; printf '| %s | %s | %s | %s | %s | %s | %s |\n' "${c[@]}" >>"$ROWS"; }

# rec NAME OPTS... -- CMD: record into $WORK/NAME; sets RC and WALL_NS.
rec() {
	local name=$1; shift
	local t0=$EPOCHREALTIME t1
	timeout -k 5 600 "$FAULTLINE" record -q -o "$WORK/$name" --force "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" </dev/null
	RC=$?; t1=$EPOCHREALTIME
	WALL_NS=$(( (${t1/./} - ${t0/./}) * 1000 ))
}
stat_sum() { python3 -c 'import glob,json,sys; print(sum(json.load(open(f)).get(sys.argv[2],0) for f in glob.glob(sys.argv[1]+"/*/stats.json")))' "$WORK/$1" "$2"; }
stat_max() { python3 -c 'import glob,json,sys; print(max([json.load(open(f)).get(sys.argv[2],0) for f in glob.glob(sys.argv[1]+"/*/stats.json")] or [0]))' "$WORK/$1" "$2"; }
# median (min–max) of the ratios in FILE (one per line)
summary() { sort -g "$1" | awk '{v[NR]=$1} END {if (!NR) {print "n/a"; exit} m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2; printf "%.2f× (%.2f–%.2f)", m, v[1], v[NR]}'; }

mkdir -p "$WORK/in"
bench/sqlite_workload.sh "$SQL_ROWS" mrc >"$WORK/in/q.sql" || exit 1
cat >"$WORK/in/dict.py" <<'PY'
import sys, zlib
n = int(sys.argv[1])
d = {}
for i in range(n):
    d[i] = ("%x-" % (i * 2654435761 % 4294967296)) * 3
crc = 0
for rnd in range(3):
    for k, v in d.items():
        crc = zlib.crc32(v.encode(), crc)
print(len(d), crc)
PY
cmd_of() {   # NAME: sets CMD
	case $1 in
	loops) CMD=("$PLANTED/mrc_loops" "$LOOPS_MIB" 4) ;;
	python) CMD=(env PYTHONMALLOC=malloc PYTHONHASHSEED=0 /usr/bin/python3 "$WORK/in/dict.py" "$PY_N") ;;
	sqlite) CMD=(sqlite3 -bail :memory: ".read $WORK/in/q.sql") ;;
	graph) CMD=("$BIN/graph_bfs" "$GR_LOG" "$GR_DEG" 3) ;;
	csr) CMD=("$BIN/csr_scatter" "$CSR_LOG" 16 2) ;;
	hotcold) CMD=("$PLANTED/access_hotcold" 8 128 3) ;;
	esac
}
have() {
	case $1 in
	python) [ -x /usr/bin/python3 ] ;; sqlite) command -v sqlite3 >/dev/null ;;
	graph) [ -x "$BIN/graph_bfs" ] || gcc -O2 -o "$BIN/graph_bfs" bench/graph_bfs.c -lm 2>/dev/null ;;
	csr) [ -x "$BIN/csr_scatter" ] || gcc -O2 -D_GNU_SOURCE -Iinc -Ibench -pthread -o "$BIN/csr_scatter" bench/csr_scatter.c 2>/dev/null ;;
	*) [ -x "${CMD[0]}" ] ;;
	esac
}
mkdir -p "$BIN"

# ---- P1 + P2: accuracy and cost of --mrc ----
for w in loops python sqlite graph csr; do
	cmd_of "$w"
	if ! have "$w"; then row "P1-$w" "mrc accuracy: $w" "-" "not available" "-" 0 ""; continue; fi
	say "P1/P2 $w: --mrc vs plain record ($RUNS runs), then record -L at P/8, P/4, P/2"
	: >"$WORK/cost_$w"
	for i in $(seq 1 "$RUNS"); do
		order="plain mrc"; [ $((i % 2)) = 0 ] && order="mrc plain"
		for who in $order; do
			if [ "$who" = mrc ]; then rec "m_$w" -M 2G --mrc -- "${CMD[@]}"; rc_m=$RC; wall_m=$WALL_NS
			else rec "p_$w" -M 2G -- "${CMD[@]}"; rc_p=$RC; wall_p=$WALL_NS; fi
		done
		[ "$rc_m" = 0 ] && [ "$rc_p" = 0 ] && awk -v a="$wall_m" -v b="$wall_p" 'BEGIN {print a / b}' >>"$WORK/cost_$w"
	done
	if [ "$rc_m" != 0 ]; then row "P1-$w" "mrc accuracy: $w" "-" "record --mrc failed (exit $rc_m)" "-" 0 ""; continue; fi
	peak=$(stat_max "m_$w" peak_resident_bytes)
	sizes=() at=()
	for d in 8 4 2; do s=$(( (peak / d + 4095) / 4096 * 4096 )); [ "$s" -lt 1048576 ] && s=1048576; sizes+=("$s"); at+=(--at "${s}B"); done
	"$FAULTLINE" mrc "$WORK/m_$w" --format csv "${at[@]}" >"$WORK/mrc_$w.csv" 2>"$WORK/mrc_$w.err"
	cells=() errs=()
	for k in 0 1 2; do
		s=${sizes[$k]}
		rec "l_$w" -M 2G -L "${s}B" -- "${CMD[@]}"
		if [ "$RC" != 0 ]; then cells+=("1/$((8 >> k)): record -L failed ($RC)"); continue; fi
		meas=$(stat_sum "l_$w" faults_refault)
		band=$(awk -F, -v s="$s" '$1 == s {print $2, $3, $4; exit}' "$WORK/mrc_$w.csv")
		read -r pred lo hi <<<"${band:-0 0 0}"
		err=$(awk -v p="$pred" -v m="$meas" -v lo="$lo" -v hi="$hi" 'BEGIN {
			if (m > 0) printf "%+.1f %%", 100 * (p - m) / m; else printf "%s", (p == 0 ? "exact" : "m=0")
			printf "%s", (lo <= m && m <= hi) ? ", in band" : ", outside the band" }')
		cells+=("1/$((8 >> k)) ($((s / 1048576)) MiB): $pred [$lo, $hi] vs $meas, $err")
		rm -rf "${WORK:?}/l_$w"
	done
	rate=$(python3 -c 'import glob,json,sys; t=[json.load(open(f)).get("mrc_threshold",0) for f in glob.glob(sys.argv[1]+"/*/stats.json")]; t=[x for x in t if x]; print("%.0f" % (2**32 / min(t))) if t else print("?")' "$WORK/m_$w")
	cuts=$(stat_sum "m_$w" mrc_budget_cuts) pages=$(stat_sum "m_$w" mrc_pages)
	joined=$(printf '%s; ' "${cells[@]}"); joined=${joined%; }
	row "P1-$w" "mrc accuracy, ${CMD[*]##*/}: predicted vs measured refaults (record -L, CLOCK) at 1/8, 1/4, 1/2 of the peak $((peak / 1048576)) MiB" \
		"measured: record -L" "$joined" "-" 1 "final sampling 1 page in $rate, $pages pages (--mrc: 1 in 2, at most 2048 pages; the cost budget lowered the rate $cuts times); model: the runtime's clock, simulated on the sampled accesses; target: within 10 %, or in a band wider than that"
	row "P2-$w" "cost of record --mrc vs plain record (no -L), ${CMD[*]##*/}: wall" "plain record" "record --mrc" \
		"$(summary "$WORK/cost_$w")" "$(wc -l <"$WORK/cost_$w")" "target ≤ 1.5×; $(stat_sum "m_$w" access_samples) access samples, $(stat_sum "m_$w" faults_total) faults"
	rm -rf "${WORK:?}/m_$w" "${WORK:?}/p_$w"
done

# ---- P3: cost of --sample-accesses ----
for w in python sqlite hotcold; do
	cmd_of "$w"
	if ! have "$w"; then row "P3-$w" "--sample-accesses cost: $w" "-" "not available" "-" 0 ""; continue; fi
	say "P3 $w: --sample-accesses vs plain record ($RUNS runs)"
	: >"$WORK/acost_$w"
	for i in $(seq 1 "$RUNS"); do
		order="plain acc"; [ $((i % 2)) = 0 ] && order="acc plain"
		for who in $order; do
			if [ "$who" = acc ]; then rec "a_$w" -M 2G --sample-accesses -- "${CMD[@]}"; rc_a=$RC; wall_a=$WALL_NS
			else rec "p_$w" -M 2G -- "${CMD[@]}"; rc_p=$RC; wall_p=$WALL_NS; fi
		done
		[ "$rc_a" = 0 ] && [ "$rc_p" = 0 ] && awk -v a="$wall_a" -v b="$wall_p" 'BEGIN {print a / b}' >>"$WORK/acost_$w"
	done
	row "P3-$w" "cost of record --sample-accesses (default: 500 probes/s) vs plain record, same -L (unlimited), ${CMD[*]##*/}: wall" \
		"plain record" "record --sample-accesses" "$(summary "$WORK/acost_$w")" "$(wc -l <"$WORK/acost_$w")" \
		"$( [ "$rc_a" = 0 ] && echo "$(stat_sum "a_$w" access_samples) access samples, $(stat_sum "a_$w" faults_refault) refaults, prober thread $(( $(stat_sum "a_$w" probe_cpu_ns) / 1000000 )) ms CPU in $((wall_a / 1000000)) ms")"
	rm -rf "${WORK:?}/a_$w" "${WORK:?}/p_$w"
done
cat "$ROWS" >"$OUT"
