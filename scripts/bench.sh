#!/usr/bin/env bash
# scripts/bench.sh: `make bench` / `make bench-quick` — faultline against its baselines, measured side
# by side, printed as one Markdown table (stdout) and written to build/bench.md (bench-quick:
# build/bench-quick.md).
#
# usage: scripts/bench.sh [--quick] [--only GROUPS] [-o FILE.md]
#        --only: the thrash rows alone, GROUPS a comma-separated list of T, TB, TD, TX, SW (row T3's
#        floor, row E2's, is then taken from the other groups' runs of the same command)
# environment: FAULTLINE   the faultline binary (default build/faultline; its libfaultline.so next to it)
#              BENCH_WORK  scratch directory (default build/bench-work; emptied at start, recordings
#                          removed as soon as they are read; bench.log with every command stays)
#              BENCH_RUNS  runs per measurement (default 5, quick 3; row 1 takes 2 more when > 3)
#              FAULTLINE_OLD  another build's faultline (e.g. main's, built in a scratch checkout): row 5
#                          then times its report and this one's side by side, run by run, on one
#                          recording the old build made (its trace format, which both read), and says
#                          each run's faults/s (wall and CPU) and new/old ratio on stderr as it goes
#
# Row 5 reports on its own recording, fill REP_MIB at -L REP_L (full run: 1400 MiB at -L 16M, about
# 1.07 M faults, issue 14's size; quick: the fill of row H): faults per second end to end by wall
# time, and by the verb's CPU time (user + system), which the machine's load disturbs less.
#
# This machine is a noisy 2-vCPU VM: absolute times mean little, so every baseline is measured in the
# same loop as faultline, run by run (the order alternates between runs), and each ratio is taken per
# run (faultline / baseline of the same run) before the median is. Nothing here asserts a time: a
# measurement fails only when a program fails (exit status, wrong output) and its cell says so.
# The C programs in bench/ are built here with gcc -O2 into build/bench/ (only when out of date).
#
# Rows: 1 fault floor (minimal uffd handler vs faultline's first-touch fault), H handler threads
# (-c 1 vs -c 2), 2 refault path vs the kernel's swap (memory cgroup + swap file; not in quick),
# E eviction (issue 17: fill at small vs large -L, refault vs the floor, vs kernel swap, graph BFS,
# copy vs move, evictor thread vs inline),
# 3 overhead with ample memory vs native, 4 tracing cost (stacks), 5 report speed, 6 flamegraph,
# 7 RAP vs exact counting, M report's memory per fault, 8 eviction policy clock vs fifo, T thrash
# (two-thread random scatter; T4 against the minimal two-thread thrash handler), TB TD TX thrash (large buffers replaced, a dict built and sorted, an
# external sort: each natively, clock, fifo and the kernel's swap at about a fifth of its peak heap),
# 9 far stores, 10 an allocation-heavy
# program (record default and --alloc-log full vs native, ns per malloc/free), P the access prober
# (scripts/bench_probe.sh: record --mrc accuracy and cost, --sample-accesses cost). Rows whose feature is not
# built yet say so, so the table always has every row.
set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
export LC_ALL=C

QUICK=0
ONLY=
OUT=
while [ $# -gt 0 ]; do
	case $1 in
	--quick) QUICK=1 ;;
	--only) ONLY=,${2:?--only needs a list of row groups},; shift
		[[ $ONLY =~ ^,((T|TB|TD|TX|SW),)+$ ]] || { echo "bench.sh: --only takes T, TB, TD, TX, SW (comma-separated)" >&2; exit 2; } ;;
	-o) OUT=${2:?-o needs a file}; shift ;;
	-h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done

BUILD=$ROOT/build
FAULTLINE=${FAULTLINE:-$BUILD/faultline}
FILL=$(dirname "$FAULTLINE")/tests/fill     # planted program of the same build as faultline
BIN=$BUILD/bench
WORK=${BENCH_WORK:-$BUILD/bench-work}
S=$WORK/samples          # one file per measured quantity, one value per run
REC=$WORK/rec            # recordings and program outputs, removed once read
LOG=$WORK/bench.log
NCPU=$(nproc)
SWAP_FILE='' CGROUP_DIR=''
T_START=$EPOCHREALTIME

if [ "$QUICK" = 1 ]; then
	RUNS=${BENCH_RUNS:-3}; R1=$RUNS; TMO=60
	TOUCH_PAGES=4096; OTHER_PAGES=1024
	FILL_MIB=16; FILL_L=4
	REP_MIB=16; REP_L=4      # row 5's recording
	SIZE_MIB=128; SIZE_L=16  # row S's recording
	MEM_SMALL=32; MEM_BIG=128; MEM_L=8; PLANT_N=2000000 # row M's recordings
	SQL_ROWS=20000; PY_N=30000; SORT_LINES=50000
	HOT_MIB=2; COLD_MIB=32; HC_L=4
	RAP_EVENTS=200000
	EV_MIB=4; EV_L=1; EV_BIG=16; GR_LOG=14; GR_DEG=16; GR_L=1
	TH_LOG=14; TH_L=1M       # row T: bench/csr_scatter, ~5 MiB heap (-L: 1 MiB at least)
	TF_ARGS="512 256 2 40000"  # row T4: bench/thrash_floor PAGES CAP THREADS WRITES (CAP: -L's pages)
	SW_LOG=14; SW_SIZES=1M,2M,4M   # row SW: sweep of bench/csr_scatter
	# rows TB, TD, TX (-L in MiB, about a fifth of each one's peak heap; -L is 1 MiB at least)
	TB_ARGS="30 256 1024"; TB_L=3; TB_SWAP=128   # bench/bigbuf, ~14 MiB heap
	TD_ARGS="25000"; TD_L=1; TD_SWAP=64          # bench/dict_sort, ~4 MiB heap
	TX_ARGS="8 512"; TX_L=2; TX_SWAP=64          # bench/extsort, ~9 MiB heap
	ALLOC_N=2000000
	: "${OUT:=$BUILD/bench-quick.md}"
else
	RUNS=${BENCH_RUNS:-5}; R1=$RUNS; [ "$RUNS" -gt 3 ] && R1=$((RUNS + 2)); TMO=300
	TOUCH_PAGES=16384; OTHER_PAGES=4096   # the other-CPU reference costs 0.2-0.7 ms a fault
	FILL_MIB=256; FILL_L=64
	REP_MIB=1400; REP_L=16   # row 5: about 1.07 M faults, issue 14's size
	SIZE_MIB=1024; SIZE_L=64 # row S: a 1 GiB fill and two reads at -L 64, about 786 k faults
	MEM_SMALL=256; MEM_BIG=1024; MEM_L=64; PLANT_N=20000000 # row M: report's memory per fault
	SQL_ROWS=150000; PY_N=150000; SORT_LINES=500000
	HOT_MIB=16; COLD_MIB=256; HC_L=32
	RAP_EVENTS=2000000
	EV_MIB=256; EV_L=64; EV_BIG=1024; GR_LOG=20; GR_DEG=64; GR_L=64
	TH_LOG=17; TH_L=5M       # row T: bench/csr_scatter, ~26 MiB heap: -L about a fifth of it
	TF_ARGS="2304 1280 2 300000" # row T4: bench/thrash_floor: its 9 MiB written at random, CAP = -L's pages
	SW_LOG=15; SW_SIZES=1M,2M,4M,8M   # row SW: sweep of bench/csr_scatter, ~10 MiB heap
	TB_ARGS="60 5120 25600"; TB_L=80; TB_SWAP=1024   # bench/bigbuf, ~400 MiB heap
	TD_ARGS="100000"; TD_L=2; TD_SWAP=256            # bench/dict_sort, ~10 MiB heap
	TX_ARGS="160 8192"; TX_L=32; TX_SWAP=512         # bench/extsort, ~170 MiB heap
	ALLOC_N=20000000
	: "${OUT:=$BUILD/bench.md}"
fi
RF_L=16; RF_MIB=64       # row 2: working set 4 x -L
TP_KERNEL_TMO=600        # rows TB, TD, TX: the kernel's swap gets 10 minutes
# Time budget of this script (make all comes on top): under heavy load, a row stops after the run that
# would not fit any more; its Runs cell says how many it got and the footer names it.
if [ "$QUICK" = 1 ]; then BUDGET_S=${BENCH_BUDGET:-90}; else BUDGET_S=${BENCH_BUDGET:-450}; fi
S_HIGH=1000000           # "without stacks": a stack for 1 fault in a million

say() { echo "bench: [$(( $(us_since "$T_START") / 1000000 )) s] $*" >&2; }
die() { echo "bench.sh: $*" >&2; exit 1; }
log() { echo "$*" >>"$LOG"; }

cleanup() {
	if [ -n "$SWAP_FILE" ]; then swapoff "$SWAP_FILE" 2>/dev/null; rm -f "$SWAP_FILE"; fi
	[ -n "$CGROUP_DIR" ] && rmdir "$CGROUP_DIR" 2>/dev/null
	rm -rf "$REC" "$WORK/inputs" "$WORK/verb-out" "$WORK/verb-cwd"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------------------------------------
# Building the bench programs

# build NAME EXTRA_SOURCES...: build/bench/NAME from bench/NAME.c when out of date (atomic rename,
# so two bench runs at once never execute a half-written binary).
build() {
	local name=$1; shift
	local bin=$BIN/$name dep fresh=1
	for dep in "bench/$name.c" bench/bench.h bench/bench_uffd.h "$@"; do
		[ "$bin" -nt "$dep" ] || fresh=0
	done
	[ "$fresh" = 1 ] && return 0
	mkdir -p "$BIN"
	gcc -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -Iinc -Ibench \
		-o "$bin.tmp.$$" "bench/$name.c" "$@" -lpthread -lm >>"$LOG" 2>&1 || return 1
	mv -f "$bin.tmp.$$" "$bin"
}

# ---------------------------------------------------------------------------------------------
# Running things. Every run sets RC (exit status) and WALL_NS; its stdout is in $REC/NAME.out.

# Times come from $EPOCHREALTIME ("seconds.microseconds", no fork): ${t/./} is in microseconds.
us_since() { local now=$EPOCHREALTIME; echo $(( ${now/./} - ${1/./} )); }

# native NAME CMD...: run CMD (stdin /dev/null) with stdout in $REC/NAME.out, stderr in .err.
native() {
	local name=$1; shift
	log "\$ $*"
	local t0=$EPOCHREALTIME t1
	timeout -k 5 "$TMO" "$@" >"$REC/$name.out" 2>"$REC/$name.err" </dev/null
	RC=$?; t1=$EPOCHREALTIME
	WALL_NS=$(( (${t1/./} - ${t0/./}) * 1000 ))
	head -c 2000 "$REC/$name.out" >>"$LOG"
}

# rec NAME RECORD_OPTS... -- CMD...: faultline record -q into $REC/NAME (a directory), stdout in
# $REC/NAME.out.
rec() {
	local name=$1; shift
	rm -rf "${REC:?}/$name"
	log "\$ faultline record -q -o $REC/$name --force $*"
	local t0=$EPOCHREALTIME t1
	timeout -k 5 "$TMO" "$FAULTLINE" record -q -o "$REC/$name" --force "$@" \
		>"$REC/$name.out" 2>"$REC/$name.err" </dev/null
	RC=$?; t1=$EPOCHREALTIME
	WALL_NS=$(( (${t1/./} - ${t0/./}) * 1000 ))
	head -c 2000 "$REC/$name.out" >>"$LOG"
}

# why NAME: a short reason for a failed run (exit status and the last line of its stderr).
why() {
	local last; last=$(grep -v 'no hardware PMU' "$REC/$1.err" 2>/dev/null | tail -n 1 | tr -d '|' | cut -c1-100)
	case $RC in
	124 | 137) echo "timeout after ${TMO}s" ;;
	*) echo "exit $RC${last:+: $last}" ;;
	esac
}

# ok NAME KEY...: true when the last run exited 0; otherwise marks every KEY failed.
ok() {
	local name=$1; shift
	[ "$RC" -eq 0 ] && return 0
	local reason k; reason=$(why "$name")
	log "FAILED: $reason"
	for k in "$@"; do fail "$k" "$reason"; done
	return 1
}

# val NAME TAG KEY: value of KEY=... on the last stdout line of NAME starting with TAG.
val() {
	awk -v tag="$2" -v key="$3" '$1 == tag { for (i = 2; i <= NF; i++) { split($i, kv, "=");
		if (kv[1] == key) v = kv[2] } } END { if (v != "") print v }' "$REC/$1.out"
}

# wait_p50 NAME: the median wait of the recording's faults for a handler (report's "# wait time:"
# header line: from the fault to a handler reading its message), in ns; empty when it has none.
wait_p50() {
	"$FAULTLINE" report "$REC/$1" 2>/dev/null | awk '$1 == "#" && $2 == "wait" && $3 == "time:" {
		v = $5; u = $6; sub(/,$/, "", u)
		printf "%.0f\n", v * (u == "us" ? 1e3 : u == "ms" ? 1e6 : u == "s" ? 1e9 : 1); exit }'
}

# stat_sum NAME KEY: KEY summed over every process's stats.json of recording NAME (empty if none).
stat_sum() {
	cat "$REC/$1"/*/stats.json 2>/dev/null | awk -v key="\"$2\"" -F'[:,]' '
		{ k = $1; gsub(/[ \t]/, "", k) } k == key { s += $2; n++ } END { if (n) print s }'
}

# trace_bytes NAME FILES...: total size of the named trace files over every process of NAME.
trace_bytes() {
	local name=$1 f total=0 sz; shift
	for f in "$@"; do
		for sz in $(stat -c %s "$REC/$name"/*/"$f" 2>/dev/null); do total=$((total + sz)); done
	done
	echo "$total"
}

# same_output NAME REF KEY...: fails KEYs unless NAME's stdout equals REF's.
same_output() {
	local name=$1 ref=$2; shift 2
	cmp -s "$REC/$name.out" "$REC/$ref.out" && return 0
	log "FAILED: $name: output differs from $ref"
	local k; for k in "$@"; do fail "$k" "output differs from the native run"; done
	return 1
}

# budget_ok ROW SECTION_START RUN: true when run RUN (1, 2, ...) of a loop that started at
# SECTION_START ($EPOCHREALTIME) still fits in the time budget, assuming it lasts as long as the
# average run so far; else notes ROW as stopped.
budget_ok() {
	local done=$(( $3 - 1 )) spent need=0 elapsed
	spent=$(us_since "$2"); elapsed=$(us_since "$T_START")
	[ "$done" -gt 0 ] && need=$(( spent / done ))
	[ $(( elapsed + need )) -le $(( BUDGET_S * 1000000 )) ] && return 0
	grep -qx "$1" "$S/.budget" 2>/dev/null || echo "$1" >>"$S/.budget"
	log "time budget of $BUDGET_S s: $1 stopped after $done runs"
	return 1
}

drop() { rm -rf "${REC:?}/$1" "$REC/$1.out" "$REC/$1.err"; }

# ---------------------------------------------------------------------------------------------
# Samples and table cells

add() {   # KEY VALUE: one more sample; an empty VALUE (not in the program's output) fails KEY
	if [ -n "$2" ]; then echo "$2" >>"$S/$1"; else fail "$1" "no value in the output (see $LOG)"; fi
}
fail() { [ -f "$S/$1.fail" ] || echo "$2" >"$S/$1.fail"; }
note() { echo "$2" >"$S/$1.note"; }

# The awk code behind cell and ratio (one process per cell: forks are slow under load): report()
# sorts v[1..n] and prints "median UNIT (min–max)", numbers formatted by fmt(): integers as such,
# others to about 3 significant digits, never in exponent notation; FMT (a printf format)
# overrides; an all-integer ratio gets 2 decimals.
STATS_AWK='
function fmt(x,   a, f) {
	a = x < 0 ? -x : x; f = FMT
	if (f == "") {
		if (a == int(a) && a < 1e15) f = "%.0f"; else if (a >= 100) f = "%.0f";
		else if (a >= 10) f = "%.1f"; else if (a >= 1) f = "%.2f";
		else if (a >= 0.01) f = "%.3f"; else f = "%.5f"
	}
	return sprintf(f, x)
}
function report(   i, j, t, m, u) {
	if (!n) { print EMPTY; return }
	for (i = 2; i <= n; i++) {
		t = v[i]; for (j = i - 1; j >= 1 && v[j] > t; j--) v[j + 1] = v[j]; v[j + 1] = t
	}
	m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
	if (RATIO && FMT == "" && m == int(m) && v[1] == int(v[1]) && v[n] == int(v[n])) FMT = "%.2f"
	u = UNIT == "" ? "" : (RATIO ? UNIT : " " UNIT)
	if (n == 1) print fmt(m) u; else print fmt(m) u " (" fmt(v[1]) "–" fmt(v[n]) ")"
}'

# cell KEY UNIT [SCALE [FMT]]: "median UNIT (min–max)" of KEY's samples times SCALE, or why there
# are none.
cell() {
	local key=$1 unit=$2 scale=${3:-1} f=${4:-}
	if [ -f "$S/$key.fail" ]; then echo "failed: $(cat "$S/$key.fail")"; return; fi
	if [ -f "$S/$key.skip" ]; then cat "$S/$key.skip"; return; fi
	if [ ! -s "$S/$key" ]; then
		if [ -s "$S/.budget" ]; then echo "skipped: time budget"; else echo "failed: no samples"; fi
		return
	fi
	awk -v SC="$scale" -v UNIT="$unit" -v FMT="$f" -v EMPTY="failed: no samples" \
		"$STATS_AWK"' { v[++n] = $1 * SC } END { report() }' "$S/$key"
}

# ratio KEY_OURS KEY_BASE: median (min–max) of the per-run ratios ours/base (pairs by line).
ratio() {
	local ours=$1 base=$2 k
	for k in "$ours" "$base"; do
		[ -f "$S/$k.skip" ] && { cat "$S/$k.skip"; return; }
		[ -f "$S/$k.fail" ] && { echo "n/a (failed)"; return; }
		[ -s "$S/$k" ] || [ ! -s "$S/.budget" ] || { echo "skipped: time budget"; return; }
		[ -s "$S/$k" ] || { echo "n/a (failed)"; return; }
	done
	awk -v UNIT="×" -v RATIO=1 -v EMPTY="n/a" "$STATS_AWK"'
		FNR == NR { b[FNR] = $1; next } (FNR in b) && b[FNR] != 0 { v[++n] = $1 / b[FNR] }
		END { report() }' "$S/$base" "$S/$ours"
}

runs_of() { local k; for k in "$@"; do [ -s "$S/$k" ] && { wc -l <"$S/$k"; return; }; done; echo 0; }

TABLE=$WORK/table.md
# row ID WHAT BASELINE OURS RATIO RUNS NOTES
row() {   # a literal | inside a cell is escaped as \| (Markdown)
	local cells=() c
	for c in "$@"; do cells+=("${c//|/\\|}"); done
	printf '| %s | %s | %s | %s | %s | %s | %s |\n' "${cells[@]}" >>"$TABLE"
}
row_unbuilt() { row "$1" "$2" "not built yet" "not built yet" "not built yet" 0 "$3"; }
row_skipped() { row "$1" "$2" "skipped: $3" "skipped: $3" "skipped: $3" 0 "${4:-}"; }
# row_two_cpus ID WHAT ...: row ID, or skipped on a machine with one CPU (it measures the other CPU)
row_two_cpus() { if [ "$NCPU" -ge 2 ]; then row "$@"; else row_skipped "$1" "$2" "one CPU only"; fi; }

# ---------------------------------------------------------------------------------------------
# Setup

rm -rf "$WORK"
mkdir -p "$S" "$REC" "$WORK/inputs" || die "cannot create $WORK"
: >"$LOG"
: >"$TABLE"
[ -x "$FAULTLINE" ] || die "$FAULTLINE not built (run make)"
[ -f "$(dirname "$FAULTLINE")/libfaultline.so" ] || die "libfaultline.so not built next to $FAULTLINE (run make)"
[ -x "$FILL" ] || die "$FILL not built (run make)"
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
say "$([ "$QUICK" = 1 ] && echo quick || echo full) run, $RUNS runs per measurement, load average $LOAD_START; log in $LOG"

for p in uffd_floor thrash_floor touch refault hotcold graph_bfs csr_scatter bigbuf dict_sort extsort; do
	build "$p" || die "building bench/$p.c failed (see $LOG)"
done
RAP_OK=0
if [ -f inc/faultline/rap.h ] && [ -f lib/rap.c ]; then
	build rap_bench lib/rap.c && RAP_OK=1 || log "rap_bench did not build: row 7 reported as not built"
fi

# What is built yet: stacks (a -s 1 recording has stack records), report, visualize, file far store.
rec probe -L 16M -M 16M -s 1 -- "$BIN/touch" 64
STACKS=0
[ "$RC" -eq 0 ] && [ "$(trace_bytes probe stacks)" -gt 64 ] && STACKS=1
drop probe
HELP=$("$FAULTLINE" help 2>&1)
HAS_REPORT=0; grep -qE '^[[:space:]]+report([[:space:]]|$)' <<<"$HELP" && HAS_REPORT=1
HAS_VISUALIZE=0; grep -qE '^[[:space:]]+visualize([[:space:]]|$)' <<<"$HELP" && HAS_VISUALIZE=1
HAS_FAR_FILE=0; "$FAULTLINE" record --help 2>&1 | grep -q 'file:' && HAS_FAR_FILE=1
log "built: stacks=$STACKS report=$HAS_REPORT visualize=$HAS_VISUALIZE far_file=$HAS_FAR_FILE"

# ---------------------------------------------------------------------------------------------
# Row 1 (+ row 4's samples): the fault floor. Per run: the minimal handler on the faulting CPU and on
# the other one, the kernel's own first touch (native), faultline -s 1 (and, with stacks, -s 100 and
# -s 1000000). The same first-touch program is measured inside: its touch loop / pages.

bench_floor() {
	say "row 1: fault floor ($R1 runs, $TOUCH_PAGES pages)"
	local i order m
	local sec_start=$EPOCHREALTIME
	for i in $(seq 1 "$R1"); do
		budget_ok "row 1" "$sec_start" "$i" || break
		order="same other reader perf both native s1 s100 shigh"
		[ $((i % 2)) = 0 ] && order="shigh s100 s1 native both perf reader other same"
		for m in $order; do
			case $m in
			same)
				native floor "$BIN/uffd_floor" "$TOUCH_PAGES" 0 0 1
				ok floor floor_same && add floor_same "$(val floor uffd ns_per_fault)" ;;
			other)
				[ "$NCPU" -ge 2 ] || continue
				native floor "$BIN/uffd_floor" "$OTHER_PAGES" 1 0 1
				ok floor floor_other && add floor_other "$(val floor uffd ns_per_fault)" ;;
			reader | perf | both)   # the floor with one kernel-side cost of faultline's design added
				[ "$m" = perf ] || [ "$NCPU" -ge 2 ] || continue
				native floor "$BIN/uffd_floor" "$TOUCH_PAGES" 0 0 1 "$m"
				ok floor "floor_$m" && add "floor_$m" "$(val floor uffd ns_per_fault)" ;;
			native)
				native touch "$BIN/touch" "$TOUCH_PAGES"
				ok touch touch_native && add touch_native "$(val touch touch ns_per_page)" ;;
			s1)
				rec touch -L 256M -M 256M -s 1 -- "$BIN/touch" "$TOUCH_PAGES"
				if ok touch touch_s1 trace_bpf; then
					add touch_s1 "$(val touch touch ns_per_page)"
					local faults bytes; faults=$(stat_sum touch faults_total)
					bytes=$(trace_bytes touch faults contexts stacks)
					[ -n "$faults" ] && [ "$faults" -gt 0 ] &&
						add trace_bpf "$(awk -v b="$bytes" -v f="$faults" 'BEGIN { print b / f }')"
					add touch_s1_faults "$faults"
				fi
				drop touch ;;
			s100 | shigh)
				[ "$STACKS" = 1 ] || continue
				local s=100; [ "$m" = shigh ] && s=$S_HIGH
				rec touch -L 256M -M 256M -s "$s" -- "$BIN/touch" "$TOUCH_PAGES"
				ok touch "touch_$m" && add "touch_$m" "$(val touch touch ns_per_page)"
				drop touch ;;
			esac
		done
	done
}

table_floor() {
	local n; n=$(runs_of touch_s1)
	local fpp; fpp="faults/page $(cell touch_s1_faults "" "$(awk -v p="$TOUCH_PAGES" 'BEGIN { print 1 / p }')")"
	row 1a "First-touch fault, per page: minimal uffd handler on the faulting CPU (UFFDIO_COPY, blocking read) vs faultline -s 1 (stacks on), -L = -M" \
		"$(cell floor_same µs 0.001)" "$(cell touch_s1 µs 0.001)" "$(ratio touch_s1 floor_same)" "$n" \
		"$TOUCH_PAGES pages per run, touch loop timed inside the program; faultline $fpp"
	if [ "$STACKS" = 1 ]; then
		row 1b "First-touch fault, per page: minimal handler, same CPU vs faultline without stacks (-s $S_HIGH)" \
			"$(cell floor_same µs 0.001)" "$(cell touch_shigh µs 0.001)" "$(ratio touch_shigh floor_same)" \
			"$(runs_of touch_shigh)" ""
	else
		row 1b "First-touch fault, per page: minimal handler, same CPU vs faultline without stacks (-s $S_HIGH)" \
			"$(cell floor_same µs 0.001)" "$(cell touch_s1 µs 0.001)" "$(ratio touch_s1 floor_same)" "$n" \
			"stacks not built yet: same runs as 1a"
	fi
	row_two_cpus 1c "Reference: minimal handler on the other CPU vs faultline -s 1" \
		"$(cell floor_other µs 0.001)" "$(cell touch_s1 µs 0.001)" "$(ratio touch_s1 floor_other)" \
		"$(runs_of floor_other)" "$OTHER_PAGES pages per run; cross-vCPU wake-ups"
	row 1d "Reference: kernel anonymous first-touch fault (native run) vs faultline -s 1" \
		"$(cell touch_native µs 0.001)" "$(cell touch_s1 µs 0.001)" "$(ratio touch_s1 touch_native)" \
		"$(runs_of touch_native)" "same program, no faultline"
	row_two_cpus 1e "Floor split: minimal handler vs the same with a second reader blocked on the userfaultfd on the other CPU (faultline runs one handler per CPU; every message wakes every reader)" \
		"$(cell floor_same µs 0.001)" "$(cell floor_reader µs 0.001)" "$(ratio floor_reader floor_same)" \
		"$(runs_of floor_reader)" "kernel-side: no faultline code runs"
	row 1f "Floor split: minimal handler vs the same with faultline's per-thread perf events on the faulting thread (page-fault sampler with registers at every fault, task-clock)" \
		"$(cell floor_same µs 0.001)" "$(cell floor_perf µs 0.001)" "$(ratio floor_perf floor_same)" \
		"$(runs_of floor_perf)" "kernel-side: the sample that carries each fault's registers (its stack) and virtual time"
	row_two_cpus 1g "Floor split: minimal handler with both (second reader and perf events) vs faultline -s 1: faultline's own cost per fault" \
		"$(cell floor_both µs 0.001)" "$(cell touch_s1 µs 0.001)" "$(ratio touch_s1 floor_both)" \
		"$(runs_of floor_both)" "floor with both / floor: $(ratio floor_both floor_same); 1a = that × 1g: the first factor is the kernel's price for the design"
}

# ---------------------------------------------------------------------------------------------
# Row H: handler threads, -c 1 vs -c NCPU (the default), on the first-touch program and on fill.

bench_handlers() {
	[ "$NCPU" -ge 2 ] || return 0
	say "row H: -c 1 vs -c $NCPU ($RUNS runs; fill $FILL_MIB MiB at -L $FILL_L)"
	local i c order
	local sec_start=$EPOCHREALTIME
	for i in $(seq 1 "$RUNS"); do
		budget_ok "row H" "$sec_start" "$i" || break
		order="1 $NCPU"; [ $((i % 2)) = 0 ] && order="$NCPU 1"
		for c in $order; do
			rec touch -L 256M -M 256M -c "$c" -- "$BIN/touch" "$TOUCH_PAGES"
			ok touch "h_touch_c$c" && add "h_touch_c$c" "$(val touch touch ns_per_page)"
			drop touch
		done
		for c in $order; do
			rec fill -L "${FILL_L}M" -M "$((FILL_MIB * 2))M" -c "$c" -- "$FILL" "$FILL_MIB"
			if ok fill "h_fill_c$c"; then
				add "h_fill_c$c" "$WALL_NS"
				add "h_fill_faults" "$(stat_sum fill faults_total)"
				# rows 5 and 6 report on one of these (default handlers)
				[ "$c" = "$NCPU" ] && [ ! -d "$REC/rin" ] && mv "$REC/fill" "$REC/rin"
			fi
			drop fill
		done
	done
}

table_handlers() {
	if [ "$NCPU" -lt 2 ]; then
		row_skipped H1 "Handler threads: first-touch fault per page, -c $NCPU (default) vs -c 1" "one CPU only"
		row_skipped H2 "Handler threads: fill $FILL_MIB at -L ${FILL_L}M, wall" "one CPU only"
		return
	fi
	row H1 "Handler threads: first-touch fault per page, -c $NCPU (default, one per CPU) vs -c 1" \
		"$(cell "h_touch_c$NCPU" µs 0.001)" "$(cell h_touch_c1 µs 0.001)" "$(ratio h_touch_c1 "h_touch_c$NCPU")" \
		"$(runs_of h_touch_c1)" "baseline = -c $NCPU, faultline = -c 1; < 1× means -c 1 is faster"
	row H2 "Handler threads: build/tests/fill $FILL_MIB (write + 2 read passes) at -L ${FILL_L}M, wall, -c $NCPU vs -c 1" \
		"$(cell "h_fill_c$NCPU" s 1e-9)" "$(cell h_fill_c1 s 1e-9)" "$(ratio h_fill_c1 "h_fill_c$NCPU")" \
		"$(runs_of h_fill_c1)" "faults per run $(cell h_fill_faults "")"
}

# ---------------------------------------------------------------------------------------------
# Row 2: refaults vs the kernel's swap. The kernel runs the same program in a memory cgroup limited
# to -L with a swap file on the same disk; faultline runs it with -L.

# swap_setup [LIMIT_MiB [SWAP_MiB]]: sets CGROUP_DIR (memory limited to LIMIT, default RF_L) and
# SWAP_FILE (SWAP MiB, default 2 RF_MIB + 64), or SWAP_SKIP to why not and fails.
swap_setup() {
	local limit=${1:-$RF_L} swap_mib=${2:-$((RF_MIB * 2 + 64))}
	[ "$(id -u)" = 0 ] || { SWAP_SKIP="needs root (swapon, cgroups)"; return 1; }
	command -v swapon >/dev/null && command -v mkswap >/dev/null || { SWAP_SKIP="no swapon/mkswap"; return 1; }
	local cg fs; fs=$(stat -fc %T /sys/fs/cgroup 2>/dev/null)
	if [ "$fs" = cgroup2fs ]; then
		grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null || { SWAP_SKIP="cgroup v2 without the memory controller"; return 1; }
		grep -qw memory /sys/fs/cgroup/cgroup.subtree_control || echo +memory >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
		cg=/sys/fs/cgroup/faultline-bench-$$
		mkdir "$cg" 2>/dev/null || { SWAP_SKIP="mkdir $cg failed"; return 1; }
		CGROUP_DIR=$cg
		echo $((limit * 1048576)) >"$cg/memory.max" 2>/dev/null ||
			{ SWAP_SKIP="cannot set memory.max in $cg"; return 1; }
		[ -f "$cg/memory.swap.max" ] && echo max >"$cg/memory.swap.max"
		CG_KIND=v2
	elif [ -d /sys/fs/cgroup/memory ]; then
		cg=/sys/fs/cgroup/memory/faultline-bench-$$
		mkdir "$cg" 2>/dev/null || { SWAP_SKIP="mkdir $cg failed"; return 1; }
		CGROUP_DIR=$cg
		echo $((limit * 1048576)) >"$cg/memory.limit_in_bytes" 2>/dev/null ||
			{ SWAP_SKIP="cannot set memory.limit_in_bytes in $cg"; return 1; }
		CG_KIND=v1
	else
		SWAP_SKIP="no memory cgroup (neither v1 nor v2 mounted)"; return 1
	fi
	local f=$WORK/swapfile
	{ fallocate -l $(( swap_mib * 1048576 )) "$f" && chmod 600 "$f" && mkswap "$f"; } >>"$LOG" 2>&1 ||
		{ rm -f "$f"; SWAP_SKIP="creating a swap file failed"; return 1; }
	local err; err=$(swapon "$f" 2>&1) || { rm -f "$f"; SWAP_SKIP="swapon failed: $err"; return 1; }
	SWAP_FILE=$f
	log "swap: $f on, memory cgroup $CG_KIND $cg limited to $limit MiB"
}

swap_teardown() {
	[ -n "$SWAP_FILE" ] && { swapoff "$SWAP_FILE" 2>>"$LOG"; rm -f "$SWAP_FILE"; SWAP_FILE=; }
	[ -n "$CGROUP_DIR" ] && { rmdir "$CGROUP_DIR" 2>>"$LOG"; CGROUP_DIR=; }
}

bench_refault() {
	if [ "$QUICK" = 1 ]; then SWAP_SKIP="not in bench-quick"; return; fi
	budget_ok "row 2" "$EPOCHREALTIME" 1 || { SWAP_SKIP="time budget"; return; }
	say "row 2: refaults vs kernel swap ($RUNS runs, $RF_MIB MiB at -L ${RF_L}M)"
	SWAP_SKIP=
	swap_setup || { swap_teardown; log "row 2 skipped: $SWAP_SKIP"; return; }
	local i mode who order
	local sec_start=$EPOCHREALTIME
	for i in $(seq 1 "$RUNS"); do
		budget_ok "row 2" "$sec_start" "$i" || break
		order="kernel ours"; [ $((i % 2)) = 0 ] && order="ours kernel"
		for mode in seq rand; do
			for who in $order; do
				if [ "$who" = kernel ]; then
					# shellcheck disable=SC2016
					native rf bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CGROUP_DIR" \
						"$BIN/refault" "$mode" "$RF_MIB" 1
				else
					rec rf -L "${RF_L}M" -M 256M -- "$BIN/refault" "$mode" "$RF_MIB" 1
				fi
				if ok rf "rf_${mode}_$who"; then
					# refaults of the pass: the kernel's page faults in it (a swap-in is major, a
					# page read ahead into the swap cache minor); faultline's from stats.json
					# (refaults + soft faults: the fill before the pass has neither), because
					# getrusage reports ~20 % more faults than faultline served in a pass
					local pass_ns faults maj min
					pass_ns=$(val rf pass ns); maj=$(val rf pass majflt); min=$(val rf pass minflt)
					faults=$(( ${maj:-0} + ${min:-0} ))
					if [ "$who" = ours ]; then
						maj=$(stat_sum rf faults_refault); min=$(stat_sum rf faults_soft)
						faults=$(( ${maj:-0} + ${min:-0} ))
					fi
					add "rf_${mode}_$who" "$([ "$faults" -gt 0 ] && [ -n "$pass_ns" ] &&
						awk -v t="$pass_ns" -v f="$faults" 'BEGIN { print t / f }')"
					add "rf_${mode}_${who}_page" "$(val rf pass ns_per_page)"
					add "rf_${mode}_${who}_faults" "$faults"
				fi
				drop rf
			done
		done
	done
	swap_teardown
}

table_refault() {
	local what_s="Refault, sequential read of 4× -L ($RF_MIB MiB at -L ${RF_L}M), per refault: kernel swap (memory cgroup $RF_L MiB + swap file) vs faultline"
	local what_r="Refault, random read (a permutation of the pages) of 4× -L, per refault: kernel swap vs faultline"
	if [ -n "$SWAP_SKIP" ]; then
		row_skipped 2a "$what_s" "$SWAP_SKIP"
		row_skipped 2b "$what_r" "$SWAP_SKIP"
		return
	fi
	local m
	for m in seq rand; do
		local id=2a what=$what_s; [ $m = rand ] && { id=2b; what=$what_r; }
		row $id "$what" "$(cell "rf_${m}_kernel" µs 0.001)" "$(cell "rf_${m}_ours" µs 0.001)" \
			"$(ratio "rf_${m}_ours" "rf_${m}_kernel")" "$(runs_of "rf_${m}_ours")" \
			"per refault = pass time / refaults in the pass (kernel: getrusage major + minor faults; faultline: faults_refault + faults_soft); refaults per pass kernel $(cell "rf_${m}_kernel_faults" "") / faultline $(cell "rf_${m}_ours_faults" ""); per page read kernel $(cell "rf_${m}_kernel_page" µs 0.001) / faultline $(cell "rf_${m}_ours_page" µs 0.001)"
	done
}

# ---------------------------------------------------------------------------------------------
# Row E: eviction (issue 17). Per run, in alternating order: bench/refault's fill + two sequential
# read passes of EV_MIB MiB at -L EV_L (>= 75 % evicted), at -L EV_BIG (no eviction), at -L EV_L with
# the copying eviction of before (FAULTLINE_EVICT_COPY=1) and with the evictor thread off
# (FAULTLINE_EVICT_INLINE=1); the minimal same-CPU uffd handler; natively under a memory cgroup of
# EV_L MiB with a swap file (not in quick). Then bench/graph_bfs (CSR, BFS from 3 roots; 2^GR_LOG
# nodes of degree GR_DEG: ~290 MB in the full run) natively, at -L GR_L, and under the cgroup.

ev_phase_sum() {   # NAME KEY: KEY summed over the fill and pass lines of NAME's output
	awk -v key="$2" '$1 == "fill" || $1 == "pass" { for (i = 2; i <= NF; i++) { split($i, kv, "=");
		if (kv[1] == key) s += kv[2] } } END { if (s != "") print s }' "$REC/$1.out"
}
ev_pass_avg() {   # NAME KEY: KEY of the pass lines, averaged per page
	awk -v key="$2" '$1 == "pass" { for (i = 2; i <= NF; i++) { split($i, kv, "=");
		if (kv[1] == key) s += kv[2]; if (kv[1] == "pages") p += kv[2] } } END { if (p) print s / p }' "$REC/$1.out"
}

bench_evict() {
	budget_ok "row E" "$EPOCHREALTIME" 1 || return
	say "row E: eviction ($RUNS runs, $EV_MIB MiB at -L ${EV_L}M)"
	local pages=$((EV_MIB * 1048576 / 4096)) i who order
	EV_SWAP=1
	if [ "$QUICK" = 1 ]; then EV_SWAP_SKIP="not in bench-quick"; EV_SWAP=0
	else SWAP_SKIP=; swap_setup "$EV_L" $((EV_MIB + (1 << GR_LOG) * (GR_DEG * 8 + 24) / 1048576 + 128)) ||
		{ EV_SWAP_SKIP=$SWAP_SKIP; EV_SWAP=0; swap_teardown; }
	fi
	local sec_start=$EPOCHREALTIME
	for i in $(seq 1 "$RUNS"); do
		budget_ok "row E" "$sec_start" "$i" || break
		order="small big copy inline floor kernel"; [ $((i % 2)) = 0 ] && order="kernel floor inline copy big small"
		for who in $order; do
			# below 16 MiB of -L there is no evictor thread (runtime/evict.c): inline = default
			[ "$who" = inline ] && [ "$EV_L" -lt 16 ] && continue
			case $who in
			floor) native evf "$BIN/uffd_floor" 4096 0 0 1
				ok evf ev_floor && add ev_floor "$(val evf uffd ns_per_fault)"; continue ;;
			kernel) [ "$EV_SWAP" = 1 ] || continue
				# shellcheck disable=SC2016
				native ev bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CGROUP_DIR" \
					"$BIN/refault" seq "$EV_MIB" 2 ;;
			small) rec ev -L "${EV_L}M" -M "$((EV_MIB * 4))M" -- "$BIN/refault" seq "$EV_MIB" 2 ;;
			big) rec ev -L "${EV_BIG}M" -M "$((EV_MIB * 4))M" -- "$BIN/refault" seq "$EV_MIB" 2 ;;
			copy) FAULTLINE_EVICT_COPY=1 rec ev -L "${EV_L}M" -M "$((EV_MIB * 4))M" -- "$BIN/refault" seq "$EV_MIB" 2 ;;
			inline) FAULTLINE_EVICT_INLINE=1 rec ev -L "${EV_L}M" -M "$((EV_MIB * 4))M" -- "$BIN/refault" seq "$EV_MIB" 2 ;;
			esac
			if ok ev "ev_fill_$who" "ev_cpu_$who" "ev_wall_$who"; then
				add "ev_fill_$who" "$(awk -v c="$(val ev fill cpu_ns)" -v p="$pages" 'BEGIN { if (c != "") print c / p }')"
				add "ev_cpu_$who" "$(ev_phase_sum ev cpu_ns)"
				add "ev_wall_$who" "$(ev_phase_sum ev ns)"
				add "ev_pass_$who" "$(ev_pass_avg ev ns)"
				if [ "$who" = small ]; then
					add ev_evicted_small "$(stat_sum ev evictions)"
					# where the CPU went, per fault (stats.json): handlers, evictor, the rest (the program's thread)
					local f c h e; f=$(stat_sum ev faults_total) c=$(stat_sum ev cpu_ns) h=$(stat_sum ev handler_cpu_ns) e=$(stat_sum ev evictor_cpu_ns)
					if [ -n "$f" ] && [ -n "$c" ] && [ -n "$h" ] && [ -n "$e" ]; then   # (awk: sums print as 2.4e+09)
						add ev_hcpu_small "$(awk -v h="$h" -v f="$f" 'BEGIN { if (f > 0) print h / f }')"
						add ev_ecpu_small "$(awk -v e="$e" -v f="$f" 'BEGIN { if (f > 0) print e / f }')"
						add ev_rcpu_small "$(awk -v c="$c" -v h="$h" -v e="$e" -v f="$f" 'BEGIN { if (f > 0) print (c - h - e) / f }')"
					fi
				fi
			fi
			drop ev
		done
	done
	bench_graph
	[ "$EV_SWAP" = 1 ] && swap_teardown
}

bench_graph() {
	budget_ok "row E4" "$EPOCHREALTIME" 1 || return
	local runs=$RUNS i who order; [ "$runs" -gt 3 ] && runs=3; [ "$QUICK" = 1 ] && runs=1
	say "row E4: graph BFS ($runs runs, 2^$GR_LOG nodes, degree $GR_DEG, -L ${GR_L}M)"
	local sec_start=$EPOCHREALTIME
	for i in $(seq 1 "$runs"); do
		budget_ok "row E4" "$sec_start" "$i" || break
		order="native ours kernel"; [ $((i % 2)) = 0 ] && order="kernel ours native"
		for who in $order; do
			case $who in
			native) native gr "$BIN/graph_bfs" "$GR_LOG" "$GR_DEG" 3 ;;
			kernel) [ "$EV_SWAP" = 1 ] || continue
				# shellcheck disable=SC2016
				native gr bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CGROUP_DIR" \
					"$BIN/graph_bfs" "$GR_LOG" "$GR_DEG" 3 ;;
			ours) rec gr -L "${GR_L}M" -M 1G -s 100 -- "$BIN/graph_bfs" "$GR_LOG" "$GR_DEG" 3 ;;
			esac
			if ok gr "gr_$who"; then
				add "gr_$who" "$WALL_NS"; add "gr_cpu_$who" "$(val gr graph cpu_ns)"
				[ "$who" = native ] && cp "$REC/gr.out" "$REC/gr.ref"
				[ "$who" != native ] && [ -f "$REC/gr.ref" ] && ! cmp -s <(cut -d' ' -f2,3,7,8 "$REC/gr.out") <(cut -d' ' -f2,3,7,8 "$REC/gr.ref") &&
					fail "gr_$who" "output differs from the native run"
			fi
			drop gr
		done
	done
	add gr_heap_mib "$(( ((1 << GR_LOG) * (GR_DEG * 4 + 16)) / 1048576 ))"
}

table_evict() {
	local n; n=$(runs_of ev_fill_small)
	row E1 "Eviction: fill of $EV_MIB MiB (bench/refault seq), CPU per page: at -L ${EV_BIG}M (no eviction) vs -L ${EV_L}M" \
		"$(cell ev_fill_big µs 0.001)" "$(cell ev_fill_small µs 0.001)" "$(ratio ev_fill_small ev_fill_big)" "$n" \
		"process CPU incl. handler and evictor threads; target ≤ 1.15×; evictions per run $(cell ev_evicted_small "")"
	row E2 "Eviction: refault per page, two sequential read passes at -L ${EV_L}M vs the minimal same-CPU first-touch handler (bench/uffd_floor)" \
		"$(cell ev_floor µs 0.001)" "$(cell ev_pass_small µs 0.001)" "$(ratio ev_pass_small ev_floor)" "$(runs_of ev_pass_small)" \
		"wall per page of the passes; target ≤ 1.5×"
	local base="skipped: ${EV_SWAP_SKIP:-}"
	if [ "${EV_SWAP:-0}" = 1 ]; then
		row E3a "Eviction: fill + two reads of $EV_MIB MiB, CPU: kernel swap (memory cgroup ${EV_L} MiB + swap file) vs faultline -L ${EV_L}M" \
			"$(cell ev_cpu_kernel s 1e-9)" "$(cell ev_cpu_small s 1e-9)" "$(ratio ev_cpu_small ev_cpu_kernel)" "$(runs_of ev_cpu_kernel)" \
			"target ≤ 1.0×; faultline's CPU per fault (stats.json): handler threads $(cell ev_hcpu_small µs 0.001), evictor $(cell ev_ecpu_small µs 0.001), the program's thread and the rest $(cell ev_rcpu_small µs 0.001)"
		row E3b "Eviction: fill + two reads of $EV_MIB MiB, wall: kernel swap vs faultline -L ${EV_L}M" \
			"$(cell ev_wall_kernel s 1e-9)" "$(cell ev_wall_small s 1e-9)" "$(ratio ev_wall_small ev_wall_kernel)" "$(runs_of ev_wall_kernel)" "target ≤ 1.0×"
	else
		row_skipped E3a "Eviction: fill + two reads vs kernel swap, CPU" "$EV_SWAP_SKIP"
		row_skipped E3b "Eviction: fill + two reads vs kernel swap, wall" "$EV_SWAP_SKIP"
	fi
	row E4a "Graph BFS (bench/graph_bfs, CSR, 3 roots, ~$(cell gr_heap_mib MiB)), wall: native (no limit) vs faultline -L ${GR_L}M -s 100" \
		"$(cell gr_native s 1e-9)" "$(cell gr_ours s 1e-9)" "$(ratio gr_ours gr_native)" "$(runs_of gr_ours)" "target ≤ 30×"
	if [ "${EV_SWAP:-0}" = 1 ]; then
		row E4b "Graph BFS, wall: kernel swap (memory cgroup ${GR_L} MiB + swap file) vs faultline -L ${GR_L}M -s 100" \
			"$(cell gr_kernel s 1e-9)" "$(cell gr_ours s 1e-9)" "$(ratio gr_ours gr_kernel)" "$(runs_of gr_kernel)" "target ≤ 1.3×"
	else
		row_skipped E4b "Graph BFS, wall: kernel swap vs faultline" "$EV_SWAP_SKIP"
	fi
	row E5a "Eviction method: fill + two reads at -L ${EV_L}M, CPU: copy (memcpy + madvise, FAULTLINE_EVICT_COPY=1) vs move (UFFDIO_MOVE, default)" \
		"$(cell ev_cpu_copy s 1e-9)" "$(cell ev_cpu_small s 1e-9)" "$(ratio ev_cpu_small ev_cpu_copy)" "$(runs_of ev_cpu_copy)" "fill alone, per page: copy $(cell ev_fill_copy µs 0.001), move $(cell ev_fill_small µs 0.001)"
	[ "$EV_L" -lt 16 ] && { row_skipped E5b "Evictor thread: inline eviction only vs the evictor keeping a reserve" "no evictor below -L 16M"; return; }
	row E5b "Evictor thread: fill + two reads at -L ${EV_L}M, wall: inline eviction only (FAULTLINE_EVICT_INLINE=1) vs the evictor keeping a reserve (default)" \
		"$(cell ev_wall_inline s 1e-9)" "$(cell ev_wall_small s 1e-9)" "$(ratio ev_wall_small ev_wall_inline)" "$(runs_of ev_wall_inline)" "CPU: inline $(cell ev_cpu_inline s 1e-9), evictor $(cell ev_cpu_small s 1e-9)"
}

# ---------------------------------------------------------------------------------------------
# Row 3: overhead with ample memory (-L = -M), wall time vs native, outputs checked.

make_inputs() {
	local in=$WORK/inputs
	bench/sqlite_workload.sh "$SQL_ROWS" all >"$in/queries.sql" || return 1
	cat >"$in/dict.py" <<'PY'
import sys, zlib
n = int(sys.argv[1])
d = {}
for i in range(n):
    d[i] = ("%x-" % (i * 2654435761 % 4294967296)) * 3
crc = 0
total = 0
for k, v in d.items():
    crc = zlib.crc32(v.encode(), crc)
    total += k * len(v)
print(len(d), total, crc, max(d.values(), key=len))
PY
	awk -v n="$SORT_LINES" 'BEGIN { for (i = 1; i <= n; i++)
		printf "%08x %d line-%d\n", (i * 2654435761) % 4294967296, i % 977, i }' >"$in/sort.txt"
}

workload_cmd() {   # NAME: sets CMD (array) and MAXM
	local in=$WORK/inputs
	case $1 in
	sqlite) CMD=(sqlite3 -bail :memory: ".read $in/queries.sql"); MAXM=2048M ;;
	python) CMD=(env PYTHONMALLOC=malloc PYTHONHASHSEED=0 /usr/bin/python3 "$in/dict.py" "$PY_N"); MAXM=2048M ;;
	sort) CMD=(sort "-k2,2n" "-k1,1" "$in/sort.txt"); MAXM=2048M ;;
	touch) CMD=("$BIN/touch" "$TOUCH_PAGES"); MAXM=256M ;;
	esac
}

bench_overhead() {
	say "row 3: overhead vs native, -L = -M, -s 1 ($RUNS runs)"
	make_inputs
	local w i who order avail=()
	command -v sqlite3 >/dev/null && avail+=(sqlite) || fail ov_sqlite_ours "sqlite3 not installed (./deps.sh)"
	[ -x /usr/bin/python3 ] && avail+=(python) || fail ov_python_ours "/usr/bin/python3 not installed (./deps.sh)"
	avail+=(sort touch)
	local sec_start=$EPOCHREALTIME
	for i in $(seq 1 "$RUNS"); do
		budget_ok "row 3" "$sec_start" "$i" || break
		order="native ours"; [ $((i % 2)) = 0 ] && order="ours native"
		for w in "${avail[@]}"; do
			workload_cmd "$w"
			for who in $order; do
				if [ "$who" = native ]; then
					native "ov_$w" "${CMD[@]}"
					if ok "ov_$w" "ov_${w}_native" "ov_${w}_ours"; then
						add "ov_${w}_native" "$WALL_NS"
						[ -f "$REC/ov_$w.ref.out" ] || cp "$REC/ov_$w.out" "$REC/ov_$w.ref.out"
					fi
				else
					rec "ov_$w" -L "$MAXM" -M "$MAXM" -s 1 -- "${CMD[@]}"
					if ok "ov_$w" "ov_${w}_ours"; then
						add "ov_${w}_ours" "$WALL_NS"
						add "ov_${w}_faults" "$(stat_sum "ov_$w" faults_total)"
					fi
				fi
				# outputs compared with the first native run (touch prints timings: not compared)
				if [ "$RC" = 0 ] && [ "$w" != touch ] && [ -f "$REC/ov_$w.ref.out" ]; then
					same_output "ov_$w" "ov_$w.ref" "ov_${w}_$who"
				fi
				drop "ov_$w"
			done
		done
	done
}

table_overhead() {
	local w id what
	for w in sqlite python sort touch; do
		case $w in
		sqlite) id=3a; what="sqlite3 :memory:, $SQL_ROWS rows inserted, indexed, queried" ;;
		python) id=3b; what="python3 dict of $PY_N strings (PYTHONMALLOC=malloc)" ;;
		sort) id=3c; what="sort -k2,2n -k1,1 of $SORT_LINES lines" ;;
		touch) id=3d; what="first-touch program, $TOUCH_PAGES pages (shows the per-fault floor)" ;;
		esac
		row "$id" "Overhead with ample memory (-L = -M, -s 1: every fault with its stack and PMU values): $what, wall vs native" \
			"$(cell "ov_${w}_native" s 1e-9)" "$(cell "ov_${w}_ours" s 1e-9)" \
			"$(ratio "ov_${w}_ours" "ov_${w}_native")" "$(runs_of "ov_${w}_ours")" \
			"faults per run $(cell "ov_${w}_faults" "")$([ "$w" != touch ] && echo "; output = native output")"
	done
}

# ---------------------------------------------------------------------------------------------
# Row 4: tracing cost (samples taken in row 1).

table_tracing() {
	local what_a="Tracing cost: first-touch fault per page, stacks off (-s $S_HIGH) vs on (-s 1)"
	local what_b="Tracing cost: first-touch fault per page, stacks off vs -s 100"
	if [ "$STACKS" = 1 ]; then
		row 4a "$what_a" "$(cell touch_shigh µs 0.001)" "$(cell touch_s1 µs 0.001)" \
			"$(ratio touch_s1 touch_shigh)" "$(runs_of touch_s1)" "runs of row 1"
		row 4b "$what_b" "$(cell touch_shigh µs 0.001)" "$(cell touch_s100 µs 0.001)" \
			"$(ratio touch_s100 touch_shigh)" "$(runs_of touch_s100)" "runs of row 1"
	else
		row_unbuilt 4a "$what_a" "stacks not built yet (no stack records with -s 1)"
		row_unbuilt 4b "$what_b" "stacks not built yet"
	fi
	local files="faults + contexts + stacks"; [ "$STACKS" = 1 ] || files="faults file only; contexts/stacks: not built yet"
	[ -s "$S/trace_bpf" ] && sed 's/.*/150/' "$S/trace_bpf" >"$S/fltrace_bpf"
	row 4c "Trace bytes per fault, -s 1, first-touch program: fltrace (notes) vs faultline" \
		"150 B" "$(cell trace_bpf B)" "$(ratio trace_bpf fltrace_bpf)" "$(runs_of trace_bpf)" \
		"$files; baseline: fltrace ≈ 150 B/fault (fltrace's own figure, not measured here)"
}

# ---------------------------------------------------------------------------------------------
# Rows 5, 6, 9: report, flamegraph, far stores — measured once they exist.

# A recording to report on, NAME: fill MIB at -L L_MiB. Row 6's is row H's fill (full run: 196,643
# faults, about fltrace's 204,845 rows), kept from row H or made here; row 5's is bigger (REP_MIB).
report_input() {
	local name=$1 mib=$2 l=$3
	[ -d "$REC/$name" ] && return 0
	if [ -n "${FAULTLINE_OLD:-}" ]; then   # a recording both builds read: the old build's format
		local new=$FAULTLINE
		FAULTLINE=$FAULTLINE_OLD
		rec "$name" -L "${l}M" -M "$((mib * 2))M" -- "$(dirname "$FAULTLINE_OLD")/tests/fill" "$mib"
		FAULTLINE=$new
	else
		rec "$name" -L "${l}M" -M "$((mib * 2))M" -- "$FILL" "$mib"
	fi
	[ "$RC" -eq 0 ]
}

# children_cpu: sets CHILD_CPU_US to the user + system CPU time of this shell's children waited
# for so far, in microseconds (bash's times, no fork: a child's own count would start at zero).
children_cpu() {
	local line u s us=0 t m sec
	times >"$WORK/times.txt"
	{ read -r line; read -r u s; } <"$WORK/times.txt"
	for t in "$u" "$s"; do   # "1m2.345s"
		m=${t%%m*}; sec=${t#*m}; sec=${sec%s}
		us=$(( us + (m * 60 + ${sec%.*}) * 1000000 + 10#${sec#*.} * 1000 ))
	done
	CHILD_CPU_US=$us
}

# time_verb BINARY VERB KEY INPUT ARGS...: one timed run of BINARY VERB on the recording INPUT, as
# faults per second end to end: KEY by wall time, KEY_cpu by the verb's CPU time (user + system).
time_verb() {
	local bin=$1 verb=$2 key=$3 input=$4; shift 4
	log "\$ $bin $verb $REC/$input $*"
	local t0=$EPOCHREALTIME t1 cpu0
	children_cpu; cpu0=$CHILD_CPU_US
	(cd "$WORK/verb-cwd" && timeout -k 5 "$TMO" "$bin" "$verb" "$REC/$input" "$@") >/dev/null 2>"$REC/verb.err" </dev/null
	RC=$?; t1=$EPOCHREALTIME
	children_cpu
	ok verb "$key" "${key}_cpu" || return 1
	add "$key" "$(awk -v f="$faults" -v us=$(( ${t1/./} - ${t0/./} )) 'BEGIN { print f / (us / 1e6) }')"
	add "${key}_cpu" "$(awk -v f="$faults" -v us=$(( CHILD_CPU_US - cpu0 )) 'BEGIN { if (us > 0) print f / (us / 1e6) }')"
	add "${key}_secs" "$(( ${t1/./} - ${t0/./} ))"
	add "${key}_cpu_secs" "$(( CHILD_CPU_US - cpu0 ))"
}

# last_k KEY: the last sample of KEY in thousands (for the per-run lines).
last_k() { awk '{ v = $1 } END { if (NR) printf "%.0f", v / 1000; else print "?" }' "$S/$1" 2>/dev/null; }

# bench_verb VERB KEY: time `faultline VERB DIR` per run, as faults per second (visualize writes its
# SVGs to a scratch directory, not into the recording). Report runs side by side with FAULTLINE_OLD
# when it is set, each run said on stderr: both rates and the ratio of that run.
bench_verb() {
	local verb=$1 key=$2 i faults row=5 args=() input=rep
	[ "$verb" = visualize ] && { row=6; args=(-o "$WORK/verb-out"); input=rin; }
	budget_ok "row $row" "$EPOCHREALTIME" 1 || return
	if [ "$input" = rep ]; then report_input rep "$REP_MIB" "$REP_L"; else report_input rin "$FILL_MIB" "$FILL_L"; fi ||
		{ ok "$input" "$key" "${key}_cpu"; return; }
	faults=$(stat_sum "$input" faults_total)
	mkdir -p "$WORK/verb-cwd"
	local sec_start=$EPOCHREALTIME
	for i in $(seq 1 "$RUNS"); do
		budget_ok "row $row" "$sec_start" "$i" || break
		if [ "$verb" = report ] && [ -n "${FAULTLINE_OLD:-}" ]; then   # old and new, alternating
			if [ $((i % 2)) = 1 ]; then
				time_verb "$FAULTLINE_OLD" "$verb" "${key}_old" "$input" "${args[@]}" || return
				time_verb "$FAULTLINE" "$verb" "$key" "$input" "${args[@]}" || return
			else
				time_verb "$FAULTLINE" "$verb" "$key" "$input" "${args[@]}" || return
				time_verb "$FAULTLINE_OLD" "$verb" "${key}_old" "$input" "${args[@]}" || return
			fi
			say "row $row run $i: this build $(last_k "$key") k faults/s wall, $(last_k "${key}_cpu") k/s CPU;" \
				"old $(last_k "${key}_old") k/s wall, $(last_k "${key}_old_cpu") k/s CPU;" \
				"new/old $(awk -v a="$(tail -n 1 "$S/$key")" -v b="$(tail -n 1 "$S/${key}_old")" 'BEGIN { printf "%.2f", a / b }')× wall," \
				"$(awk -v a="$(tail -n 1 "$S/${key}_cpu")" -v b="$(tail -n 1 "$S/${key}_old_cpu")" 'BEGIN { printf "%.2f", a / b }')× CPU"
		else
			time_verb "$FAULTLINE" "$verb" "$key" "$input" "${args[@]}" || return
			say "row $row run $i: $(last_k "$key") k faults/s wall, $(last_k "${key}_cpu") k/s CPU"
		fi
	done
	add "${key}_records" "$faults"
}

bench_far() {
	local i st order mib=$((FILL_MIB / 4)) l=$((FILL_MIB / 16))
	budget_ok "row 9" "$EPOCHREALTIME" 1 || return
	local sec_start=$EPOCHREALTIME
	for i in $(seq 1 "$RUNS"); do
		budget_ok "row 9" "$sec_start" "$i" || break
		order="mem file"; [ $((i % 2)) = 0 ] && order="file mem"
		for st in $order; do
			local spec=mem; [ $st = file ] && spec="file:$WORK/far-store.$i"
			rec far -L "${l}M" -M "$((mib * 2))M" --far "$spec" -- "$FILL" "$mib"
			ok far "far_$st" && add "far_$st" "$WALL_NS"
			drop far; rm -f "$WORK/far-store.$i"
		done
	done
}

# Row S: the recording's size on disk per fault, stacks on (the default), against what format 2 (fixed
# records: 80-byte faults, 56-byte contexts, 24-byte evictions) wrote for the same records.
bench_size() {
	budget_ok "row S" "$EPOCHREALTIME" 1 || return
	say "row S: recording size, fill $SIZE_MIB MiB at -L ${SIZE_L}M"
	rec size -L "${SIZE_L}M" -M "$((SIZE_MIB * 2))M" -- "$FILL" "$SIZE_MIB"
	ok size size_bytes size_fmt2 || return
	local faults bytes framed fmt2
	faults=$(stat_sum size faults_total)
	bytes=$(cat "$REC"/size/[0-9]*/* | wc -c)
	framed=$(trace_bytes size faults contexts evictions)
	fmt2=$(awk -v all="$bytes" -v framed="$framed" -v f="$faults" -v c="$(stat_sum size contexts_written)" \
		-v e="$(stat_sum size evictions)" -v t="$(stat_sum size soft_evictions)" \
		'BEGIN { print all - framed + 3 * 64 + f * 80 + c * 56 + (e + t) * 24 }')
	add size_bytes "$(awk -v b="$bytes" -v f="$faults" 'BEGIN { if (f > 0) print b / f }')"
	add size_fmt2 "$(awk -v b="$fmt2" -v f="$faults" 'BEGIN { if (f > 0) print b / f }')"
	add size_faults "$faults"
	add size_total "$bytes"
	drop size
}

table_size() {
	row S "Recording size: fill $SIZE_MIB MiB + two reads at -L ${SIZE_L}M, stacks on, bytes on disk per fault (every file of the process directory): format 2's fixed records vs this build" \
		"$(cell size_fmt2 "B/fault")" "$(cell size_bytes "B/fault")" "$(ratio size_bytes size_fmt2)" "$(runs_of size_bytes)" \
		"$(cell size_faults faults), $(cell size_total bytes) in all; format 2 = the same run's files with faults, contexts and evictions at 80, 56 and 24 bytes a record; goal: <= 16 B/fault"
}

# Row M: report's peak RSS per fault. The same program (fill) recorded at MEM_SMALL and MEM_BIG MiB
# at -L MEM_L; report's peak RSS (/usr/bin/time's maximum resident set) on each, and the growth
# (big - small) / (faults big - faults small) in bytes per fault, for the streaming reader (this
# build's default) and the holding one (FAULTLINE_READ_HELD=1: every fault held, as before),
# interleaved run by run. Then a planted recording of PLANT_N faults written straight to disk
# (tests/helpers/plant_recording): report's faults per second and peak RSS.
peak_rss_kb() {   # NAME HELD: report of NAME, its peak RSS in KB (empty on failure)
	local out=$WORK/rss.txt
	log "\$ FAULTLINE_READ_HELD=$2 faultline report $REC/$1"
	FAULTLINE_READ_HELD=$2 /usr/bin/time -f %M -o "$out" timeout -k 5 "$TMO" "$FAULTLINE" report "$REC/$1" \
		>/dev/null 2>"$REC/$1.report.err" </dev/null || return 1
	tail -n 1 "$out"
}

bench_report_memory() {
	budget_ok "row M" "$EPOCHREALTIME" 1 || return
	local size i held small big fs fb k
	say "row M: report's peak RSS, fill $MEM_SMALL and $MEM_BIG MiB at -L ${MEM_L}M"
	for size in "$MEM_SMALL" "$MEM_BIG"; do
		rec "mem$size" -L "${MEM_L}M" -M "$((size * 2))M" -- "$FILL" "$size"
		ok "mem$size" mem_growth mem_growth_held || return
	done
	fs=$(stat_sum "mem$MEM_SMALL" faults_total); fb=$(stat_sum "mem$MEM_BIG" faults_total)
	local runs=$RUNS sec_start=$EPOCHREALTIME; [ "$runs" -gt 3 ] && runs=3
	for i in $(seq 1 "$runs"); do
		budget_ok "row M" "$sec_start" "$i" || break
		for held in $([ $((i % 2)) = 1 ] && echo "0 1" || echo "1 0"); do
			k=mem_growth; [ "$held" = 1 ] && k=mem_growth_held
			small=$(peak_rss_kb "mem$MEM_SMALL" "$held") && big=$(peak_rss_kb "mem$MEM_BIG" "$held") ||
				{ fail "$k" "report failed: $(tail -n 1 "$REC/mem$MEM_SMALL.report.err" "$REC/mem$MEM_BIG.report.err" | tr -d '|' | cut -c1-100)"; continue; }
			add "$k" "$(awk -v s="$small" -v b="$big" -v fs="$fs" -v fb="$fb" 'BEGIN { if (fb > fs) print (b - s) * 1024 / (fb - fs) }')"
			add "${k}_big_kb" "$big"
		done
		say "row M run $i: $(tail -n 1 "$S/mem_growth" 2>/dev/null) B/fault streaming, $(tail -n 1 "$S/mem_growth_held" 2>/dev/null) B/fault held"
	done
	add mem_faults "$fs"; add mem_faults "$fb"
	drop "mem$MEM_SMALL"; drop "mem$MEM_BIG"
	# the planted recording: no run to wait for, any size
	budget_ok "row M" "$EPOCHREALTIME" 1 || return
	rm -rf "$WORK/planted"
	"$BUILD/tests/plant_recording" "$WORK/planted" "$PLANT_N" >/dev/null 2>>"$LOG" ||
		{ fail plant_rate "plant_recording failed"; return; }
	local t0 t1 rss
	t0=$EPOCHREALTIME
	rss=$(FAULTLINE_READ_HELD=0 /usr/bin/time -f %M -o "$WORK/rss.txt" "$FAULTLINE" report "$WORK/planted" \
		>/dev/null 2>>"$LOG" && tail -n 1 "$WORK/rss.txt") || { fail plant_rate "report failed"; rm -rf "$WORK/planted"; return; }
	t1=$EPOCHREALTIME
	add plant_rate "$(awk -v n="$PLANT_N" -v us=$(( ${t1/./} - ${t0/./} )) 'BEGIN { print n / (us / 1e6) }')"
	add plant_rss "$rss"
	rm -rf "$WORK/planted"
}

table_report_memory() {
	row M "Report's memory: peak RSS growth per fault between a fill of $MEM_SMALL and $MEM_BIG MiB at -L ${MEM_L}M (holding reader vs this build's streaming one)" \
		"$(cell mem_growth_held "B/fault")" "$(cell mem_growth "B/fault")" "$(ratio mem_growth mem_growth_held)" "$(runs_of mem_growth)" \
		"$(cell mem_faults faults) (small, big); peak RSS on the big one: held $(cell mem_growth_held_big_kb "MB" 0.001024), streaming $(cell mem_growth_big_kb "MB" 0.001024); planted recording of $PLANT_N faults (two handlers, contexts every third fault): $(cell plant_rate "k faults/s" 0.001) in $(cell plant_rss "MB" 0.001024) peak RSS; goal: <= 16 B/fault, >= 1,000 k faults/s"
}

bench_later_rows() {
	if [ "$HAS_REPORT" = 1 ]; then say "row 5: report speed"; bench_verb report rep_speed; fi
	if [ "$HAS_VISUALIZE" = 1 ]; then say "row 6: flamegraph"; bench_verb visualize vis_speed; fi
	if [ "$HAS_FAR_FILE" = 1 ]; then say "row 9: far stores"; bench_far; fi
	drop rin; drop rep
}

# verb_row ID WHAT KEY BASE_RATE BASE_TEXT
verb_row() {
	local id=$1 what=$2 key=$3 base=$4 base_text=$5
	echo "$base" >"$S/${key}_base1"
	[ -s "$S/$key" ] && sed "s/.*/$base/" "$S/$key" >"$S/${key}_base"
	row "$id" "$what" "$(cell "${key}_base1" "k records/s" 0.001)" "$(cell "$key" "k records/s" 0.001)" \
		"$(ratio "$key" "${key}_base")" "$(runs_of "$key")" \
		"$base_text; recording of fill $FILL_MIB at -L ${FILL_L}M, $(cell "${key}_records" records), $(cell "${key}_secs" s 1e-6) per run"
}

table_later_rows() {
	local rep_what="fill $REP_MIB at -L ${REP_L}M, $(cell rep_speed_records faults)"
	if [ "$HAS_REPORT" = 1 ] && [ -s "$S/rep_speed_old" ]; then
		row 5 "Report speed: faultline report DIR, faults per second end to end, wall (old build vs this one)" \
			"$(cell rep_speed_old "k faults/s" 0.001)" "$(cell rep_speed "k faults/s" 0.001)" \
			"$(ratio rep_speed rep_speed_old)" "$(runs_of rep_speed)" \
			"old: $FAULTLINE_OLD, side by side on one recording it made ($rep_what); by CPU time (user + system): this build $(cell rep_speed_cpu "k faults/s" 0.001), old $(cell rep_speed_old_cpu "k faults/s" 0.001), $(ratio rep_speed_cpu rep_speed_old_cpu); this build $(cell rep_speed_secs s 1e-6) wall, $(cell rep_speed_cpu_secs s 1e-6) CPU, old $(cell rep_speed_old_secs s 1e-6) wall, $(cell rep_speed_old_cpu_secs s 1e-6) CPU per run; goal (issue 14): 1,000 k faults/s; fltrace report: 310 k records/s (fltrace, measured earlier on this machine)"
	elif [ "$HAS_REPORT" = 1 ]; then
		echo 310369 >"$S/rep_speed_base1"
		[ -s "$S/rep_speed" ] && sed "s/.*/310369/" "$S/rep_speed" >"$S/rep_speed_base"
		row 5 "Report speed: faultline report DIR, faults per second end to end, wall" \
			"$(cell rep_speed_base1 "k records/s" 0.001)" "$(cell rep_speed "k faults/s" 0.001)" \
			"$(ratio rep_speed rep_speed_base)" "$(runs_of rep_speed)" \
			"baseline: fltrace report, 204,845 rows in 0.66 s (measured earlier on this machine, not side by side); recording of $rep_what; by CPU time (user + system) $(cell rep_speed_cpu "k faults/s" 0.001); $(cell rep_speed_secs s 1e-6) wall, $(cell rep_speed_cpu_secs s 1e-6) CPU per run; goal (issue 14): 1,000 k faults/s; FAULTLINE_OLD=another build's faultline times both side by side"
	else
		row_unbuilt 5 "Report speed: faultline report DIR, trace records per second" "faultline help does not list report"
	fi
	if [ "$HAS_VISUALIZE" = 1 ]; then
		verb_row 6 "Flamegraph: faultline visualize DIR, trace records per second" vis_speed 1463179 \
			"baseline: fltrace visualize, 204,845 rows in 0.14 s (measured earlier on this machine, not side by side)"
	else
		row_unbuilt 6 "Flamegraph: faultline visualize DIR, trace records per second" "faultline help does not list visualize"
	fi
}

table_far() {
	local what="Far stores: fill $((FILL_MIB / 4)) at -L $((FILL_MIB / 16))M, wall, --far mem vs --far file:"
	if [ "$HAS_FAR_FILE" = 1 ]; then
		row 9 "$what" "$(cell far_mem s 1e-9)" "$(cell far_file s 1e-9)" "$(ratio far_file far_mem)" \
			"$(runs_of far_file)" "file store on the same disk as build/"
	else
		row_unbuilt 9 "$what" "record --help does not mention --far file:"
	fi
}

# ---------------------------------------------------------------------------------------------
# Row 7: RAP against exact per-page counting.

bench_rap() {
	[ "$RAP_OK" = 1 ] || return
	budget_ok "row 7" "$EPOCHREALTIME" 1 || return
	say "row 7: RAP ($RUNS runs, $RAP_EVENTS events)"
	native rap "$BIN/rap_bench" "$RAP_EVENTS" "$RUNS" 8192 0.05
	ok rap rap_ups rap_bytes rap_acc || return
	awk '$1 == "rap" { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		print v["exact_ups"] > S "/exact_ups"; print v["rap_ups"] > S "/rap_ups"
		print v["exact_bytes"] > S "/exact_bytes"; print v["rap_bytes"] > S "/rap_bytes"
		print 100 > S "/exact_acc"; print v["accuracy"] * 100 > S "/rap_acc"
		print v["hot_ranges"] > S "/rap_hot"; print v["rap_nodes"] > S "/rap_nodes"
		print v["accuracy_noroot"] * 100 > S "/rap_acc_noroot" }' S="$S" "$REC/rap.out"
	drop rap
}

table_rap() {
	local w="RAP (ε 0.01, b 4, ≤ 8 KiB) vs exact per-page hash counts, 90/10 stream of $RAP_EVENTS addresses (90 % in 1 MiB, 10 % over 2^36 pages)"
	if [ "$RAP_OK" != 1 ]; then
		row_unbuilt 7a "$w: updates/s" "inc/faultline/rap.h or lib/rap.c missing or not building"
		row_unbuilt 7b "$w: memory" ""
		row_unbuilt 7c "$w: accuracy over the hot ranges at φ = 0.05" ""
		return
	fi
	local n; n=$(runs_of rap_ups)
	row 7a "$w: updates/s" "$(cell exact_ups "M/s" 1e-6)" "$(cell rap_ups "M/s" 1e-6)" \
		"$(ratio rap_ups exact_ups)" "$n" "> 1× = RAP faster"
	row 7b "$w: memory" "$(cell exact_bytes KiB "$(awk 'BEGIN { print 1 / 1024 }')")" \
		"$(cell rap_bytes KiB "$(awk 'BEGIN { print 1 / 1024 }')")" "$(ratio rap_bytes exact_bytes)" "$n" \
		"RAP: pool + descriptor, $(cell rap_nodes nodes) live"
	row 7c "$w: accuracy over the hot ranges at φ = 0.05" "$(cell exact_acc % 1 %.3f)" "$(cell rap_acc % 1 %.3f)" \
		"$(ratio rap_acc exact_acc)" "$n" "1 − Σ|est − true| / Σ true; $(cell rap_hot ranges) reported, the root among them; without the root $(cell rap_acc_noroot % 1 %.3f)"
}

# ---------------------------------------------------------------------------------------------
# Row T: thrash. bench/csr_scatter (two threads scatter 2^TH_LOG x 16 edges into a CSR by atomic
# fetch-add: random writes over the whole heap) natively, under the default policy (the adaptive
# clock) and --policy fifo at -L TH_L, in alternating order; outputs (an order-free checksum) must
# match the native run's. In the same rounds, bench/thrash_floor (row T4): the smallest handler that
# keeps such a cap with two threads writing at random, its refaults moved in and, apart, copied in;
# CPU per fault is compared, the one measure the two programs share.

bench_thrash() {
	local runs=$RUNS i who order; [ "$runs" -gt 3 ] && runs=3; [ "$QUICK" = 1 ] && runs=1
	say "row T: thrash, bench/csr_scatter $TH_LOG 16 2 at -L $TH_L ($runs runs)"
	local sec_start=$EPOCHREALTIME
	for i in $(seq 1 "$runs"); do
		budget_ok "row T" "$sec_start" "$i" || break
		order="native clock floor fifo"; [ $((i % 2)) = 0 ] && order="fifo floor clock native"
		for who in $order; do
			case $who in
			floor)   # row T4: the minimal two-thread handler, refaults moved in and copied in
				local m; for m in move copy; do
					native tf "$BIN/thrash_floor" $TF_ARGS 2 "$m"
					if [ "$RC" -eq 77 ]; then # a kernel without UFFDIO_MOVE
						echo "skipped: no UFFDIO_MOVE" >"$S/tf_cpf_$m.skip"; drop tf; continue
					fi
					ok tf "tf_cpf_$m" && add "tf_cpf_$m" "$(val tf thrash cpu_ns_per_fault)"
					drop tf
				done
				continue ;;
			native) native th "$BIN/csr_scatter" "$TH_LOG" 16 2 ;;
			clock) rec th -L "$TH_L" -M 1G -- "$BIN/csr_scatter" "$TH_LOG" 16 2 ;;
			fifo) rec th -L "$TH_L" -M 1G --policy fifo -- "$BIN/csr_scatter" "$TH_LOG" 16 2 ;;
			esac
			ok th "th_wall_$who" || { drop th; continue; }
			local sum; sum=$(val th csr checksum)
			if [ "$who" = native ]; then TH_SUM=$sum
			elif [ -n "${TH_SUM:-}" ] && [ "$sum" != "$TH_SUM" ]; then
				fail "th_wall_$who" "checksum $sum, natively $TH_SUM"; fail "th_faults_$who" "wrong output"; drop th; continue
			fi
			add "th_wall_$who" "$WALL_NS"
			if [ "$who" != native ]; then
				local f s r c; f=$(stat_sum th faults_total) s=$(stat_sum th faults_soft) r=$(stat_sum th faults_refault) c=$(stat_sum th cpu_ns)
				add "th_faults_$who" "$f"; add "th_soft_$who" "$s"; add "th_refault_$who" "$r"
				add "th_cpf_$who" "$(awk -v c="$c" -v f="$f" 'BEGIN { if (f > 0) print c / f }')"
				local wp; wp=$(wait_p50 th)
				[ -n "$wp" ] && add "th_wait_$who" "$wp"
			fi
			drop th
		done
	done
}

table_thrash() {
	local w="Thrash: bench/csr_scatter $TH_LOG 16 2 (two threads, random scatter) at -L $TH_L"
	local n; n=$(runs_of th_wall_clock)
	row T1 "$w, wall: native vs faultline (default policy)" "$(cell th_wall_native s 1e-9)" "$(cell th_wall_clock s 1e-9)" \
		"$(ratio th_wall_clock th_wall_native)" "$n" "fifo: $(cell th_wall_fifo s 1e-9)"
	row T2 "$w, faults: --policy fifo vs the default (adaptive clock)" "$(cell th_faults_fifo "")" "$(cell th_faults_clock "")" \
		"$(ratio th_faults_clock th_faults_fifo)" "$n" "target ≤ 1.0×; clock: soft $(cell th_soft_clock ""), refaults $(cell th_refault_clock ""); fifo refaults $(cell th_refault_fifo "")"
	row T3 "$w, CPU per fault (process, all threads) vs the minimal same-CPU first-touch handler (row E2's floor)" \
		"$(cell ev_floor µs 0.001)" "$(cell th_cpf_clock µs 0.001)" "$(ratio th_cpf_clock ev_floor)" "$n" \
		"target ≤ 1.5×; fifo $(cell th_cpf_fifo µs 0.001); a fault's wait for a handler (report's wait time, p50): clock $(cell th_wait_clock µs 0.001), fifo $(cell th_wait_fifo µs 0.001)"
	row T4 "$w, CPU per fault vs the minimal two-thread thrash handler (bench/thrash_floor $TF_ARGS: FIFO at the same cap, one UFFDIO_MOVE out and one move in per fault, no log, no stack): faultline's own share under thrash" \
		"$(cell tf_cpf_move µs 0.001)" "$(cell th_cpf_clock µs 0.001)" "$(ratio th_cpf_clock tf_cpf_move)" "$(runs_of tf_cpf_move)" \
		"the floor with refaults copied in (UFFDIO_COPY + MADV_DONTNEED of the mirror page, faultline's way): $(cell tf_cpf_copy µs 0.001), faultline vs it $(ratio th_cpf_clock tf_cpf_copy); floor / row E2's first-touch floor: $(ratio tf_cpf_move ev_floor) (the kernel's price for thrash, which T3's target compares against). Not the same program: faultline's side is csr_scatter's whole run (its own work too, its sequential reads), the floor's only its random writes over a working set of about twice the cap"
}

# ---------------------------------------------------------------------------------------------
# Rows TB, TD, TX: three more programs that thrash like real ones, each at about a fifth of its peak
# heap (stats.json's peak_heap_bytes, in the notes): bench/bigbuf (large buffers freed, allocated
# again and written whole: a malloc benchmark), bench/dict_sort (a hash table of small malloc'd
# entries, then qsort of pointers to them by key) and bench/extsort (chunks generated and sorted by
# two threads, the runs merged through a heap). Per round, in alternating order: natively, under
# record with the default policy (the adaptive clock) and with --policy fifo, under the kernel's swap
# at the same budget (memory cgroup + a swap file on disk; not in quick), and the minimal first-touch
# handler of row E2 (bench/uffd_floor, the same command) for the CPU-per-fault ratio, paired by round.
# Every run's checksum must equal the native run's. Rows: 1 wall vs native, 2 faults clock vs fifo
# (by kind), 3 CPU per fault (process: program, handlers and evictor) vs the floor, 4 wall vs the
# kernel's swap. A kernel run killed by the cgroup's OOM killer (exit 137 before the timeout) is
# counted as such, not as a failure; one that outlasts TP_KERNEL_TMO is not run again.

# thrash_prog_rounds ID TAG BUDGET_MiB PROGRAM ARGS...: the runs of row group ID (samples keyed
# by ID in lower case); TAG is the program's output line.
thrash_prog_rounds() {
	local id=$1 tag=$2 mib=$3 prog=$4; shift 4
	local k; k=$(tr 'A-Z' 'a-z' <<<"$id")
	local runs=$RUNS i who order sum ref= kernel=1 wall_kernel wall_clock
	[ "$runs" -gt 3 ] && runs=3; [ "$QUICK" = 1 ] && runs=1
	budget_ok "rows $id" "$EPOCHREALTIME" 1 || return
	say "rows $id: bench/$prog $* at -L ${mib}M ($runs runs)"
	if [ "$QUICK" = 1 ]; then echo "skipped: not in bench-quick" >"$S/${k}_kernel.skip"; kernel=0
	else
		SWAP_SKIP=
		if ! swap_setup "$mib" $((TP_SWAP_MIB)); then
			echo "skipped: $SWAP_SKIP" >"$S/${k}_kernel.skip"; kernel=0; swap_teardown
		fi
	fi
	local sec_start=$EPOCHREALTIME
	for i in $(seq 1 "$runs"); do
		budget_ok "rows $id" "$sec_start" "$i" || break
		order="native clock fifo ahead kernel floor"; [ $((i % 2)) = 0 ] && order="floor kernel ahead fifo clock native"
		wall_kernel= wall_clock= wall_ahead=
		for who in $order; do
			case $who in
			floor) native tpf "$BIN/uffd_floor" 4096 0 0 1
				ok tpf "${k}_floor" && add "${k}_floor" "$(val tpf uffd ns_per_fault)"; drop tpf; continue ;;
			native) native tp "$BIN/$prog" "$@" ;;
			clock) rec tp -L "${mib}M" -M 4G -- "$BIN/$prog" "$@" ;;
			fifo) rec tp -L "${mib}M" -M 4G --policy fifo -- "$BIN/$prog" "$@" ;;
			ahead) rec tp -L "${mib}M" -M 4G --fill-ahead 64 -- "$BIN/$prog" "$@" ;;
			kernel) [ "$kernel" = 1 ] || continue
				# shellcheck disable=SC2016
				TMO=$TP_KERNEL_TMO native tp bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CGROUP_DIR" \
					"$BIN/$prog" "$@"
				if [ "$RC" = 137 ] && [ "$WALL_NS" -lt $((TP_KERNEL_TMO * 1000000000)) ]; then
					echo "$WALL_NS" >>"$S/${k}_kernel_oom"; log "kernel swap: OOM-killed"; drop tp; continue
				fi
				if [ "$RC" = 124 ] || [ "$RC" = 137 ]; then
					echo "n/a (did not finish in $TP_KERNEL_TMO s)" >"$S/${k}_kernel.skip"; kernel=0; drop tp; continue
				fi ;;
			esac
			ok tp "${k}_wall_$who" || { drop tp; continue; }
			sum=$(val tp "$tag" checksum)
			if [ "$who" = native ]; then ref=$sum
			elif [ -z "$sum" ] || { [ -n "$ref" ] && [ "$sum" != "$ref" ]; }; then
				log "FAILED: $who: checksum '$sum', natively '$ref'"
				fail "${k}_wall_$who" "checksum '$sum', natively '$ref' (wrong output)"
				fail "${k}_faults_$who" "wrong output"; fail "${k}_cpf_$who" "wrong output"; drop tp; continue
			fi
			add "${k}_wall_$who" "$WALL_NS"
			add "${k}_cpu_$who" "$(val tp "$tag" cpu_ns)"
			[ "$who" = kernel ] && wall_kernel=$WALL_NS
			[ "$who" = clock ] && wall_clock=$WALL_NS
			if [ "$who" = ahead ]; then wall_ahead=$WALL_NS; add "${k}_filled_ahead" "$(stat_sum tp filled_ahead_pages)"; fi
			case $who in clock | fifo | ahead)
				local f c h e
				f=$(stat_sum tp faults_total) c=$(stat_sum tp cpu_ns) h=$(stat_sum tp handler_cpu_ns) e=$(stat_sum tp evictor_cpu_ns)
				add "${k}_faults_$who" "$f"
				add "${k}_first_$who" "$(stat_sum tp faults_first_touch)"
				add "${k}_refault_$who" "$(stat_sum tp faults_refault)"
				add "${k}_soft_$who" "$(stat_sum tp faults_soft)"
				add "${k}_peak_$who" "$(stat_sum tp peak_heap_bytes)"
				add "${k}_cpf_$who" "$(awk -v c="$c" -v f="$f" 'BEGIN { if (f > 0) print c / f }')"
				add "${k}_hpf_$who" "$(awk -v h="$h" -v f="$f" 'BEGIN { if (f > 0) print h / f }')"
				add "${k}_epf_$who" "$(awk -v e="$e" -v f="$f" 'BEGIN { if (f > 0) print e / f }')" ;;
			esac
			drop tp
		done
		# the kernel's ratio pairs runs of the same round only (a round may lose its kernel run)
		if [ -n "$wall_kernel" ] && [ -n "$wall_clock" ]; then
			add "${k}_pair_kernel" "$wall_kernel"; add "${k}_pair_clock" "$wall_clock"
		fi
		if [ -n "$wall_kernel" ] && [ -n "$wall_ahead" ]; then
			add "${k}_pairx_kernel" "$wall_kernel"; add "${k}_pairx_ahead" "$wall_ahead"
		fi
	done
	swap_teardown
	echo "$mib" >"$S/${k}_budget"
}

# wanted GROUP: true unless --only leaves row group GROUP out.
wanted() { [ -z "$ONLY" ] || [[ $ONLY == *,$1,* ]]; }

# ---------------------------------------------------------------------------------------------
# Row SW: what a sweep costs. `faultline sweep -L $SW_SIZES` of bench/csr_scatter $SW_LOG 16 2 with
# --stacks (every fault's stack and PMU values: what sweep recorded before) and without (its
# default, record -s 0), in alternating order. The faults summed over the sizes are compared too:
# the same program at the same sizes (two threads and the adaptive clock: not exactly equal).

bench_sweep() {
	local runs=$RUNS i who order opt; [ "$runs" -gt 3 ] && runs=3; [ "$QUICK" = 1 ] && runs=1
	say "row SW: sweep -L $SW_SIZES of bench/csr_scatter $SW_LOG 16 2, with and without --stacks ($runs runs)"
	local sec_start=$EPOCHREALTIME
	for i in $(seq 1 "$runs"); do
		budget_ok "row SW" "$sec_start" "$i" || break
		order="stacks bare"; [ $((i % 2)) = 0 ] && order="bare stacks"
		for who in $order; do
			opt=; [ "$who" = stacks ] && opt=--stacks
			rm -rf "${REC:?}/sw_$who"
			log "\$ faultline sweep $opt -L $SW_SIZES --format csv -o $REC/sw_$who -- csr_scatter $SW_LOG 16 2"
			local t0=$EPOCHREALTIME t1
			timeout -k 5 $((TMO * 4)) "$FAULTLINE" sweep $opt -L "$SW_SIZES" --format csv -o "$REC/sw_$who" \
				-- "$BIN/csr_scatter" "$SW_LOG" 16 2 >"$REC/sw_$who.out" 2>"$REC/sw_$who.err" </dev/null
			RC=$?; t1=$EPOCHREALTIME
			ok "sw_$who" "sw_wall_$who" "sw_faults_$who" || { drop "sw_$who"; continue; }
			add "sw_wall_$who" $(( (${t1/./} - ${t0/./}) * 1000 ))
			add "sw_faults_$who" "$(awk -F, 'NR > 1 { s += $2 } END { if (NR > 1) print s }' "$REC/sw_$who.out")"
			drop "sw_$who"
		done
	done
}

table_sweep() {
	local w="sweep -L $SW_SIZES of bench/csr_scatter $SW_LOG 16 2" n; n=$(runs_of sw_wall_bare)
	row SW1 "$w, wall: --stacks (stacks and PMU values at every fault, as before) vs the default (-s 0)" \
		"$(cell sw_wall_stacks s 1e-9)" "$(cell sw_wall_bare s 1e-9)" "$(ratio sw_wall_bare sw_wall_stacks)" "$n" \
		"target ≤ 0.8×"
	row SW2 "$w, faults summed over the sizes: --stacks vs the default" "$(cell sw_faults_stacks "")" \
		"$(cell sw_faults_bare "")" "$(ratio sw_faults_bare sw_faults_stacks)" "$n" \
		"the same runs but for stacks (two threads, the adaptive clock: not exactly equal)"
}

bench_thrash_programs() {
	wanted TB && { TP_SWAP_MIB=$TB_SWAP; thrash_prog_rounds TB bigbuf "$TB_L" bigbuf $TB_ARGS; }
	wanted TD && { TP_SWAP_MIB=$TD_SWAP; thrash_prog_rounds TD dict "$TD_L" dict_sort $TD_ARGS; }
	wanted TX && { TP_SWAP_MIB=$TX_SWAP; thrash_prog_rounds TX extsort "$TX_L" extsort $TX_ARGS; }
}

# thrash_prog_table ID WHAT: rows ID1..ID5 of thrash_prog_rounds' samples.
thrash_prog_table() {
	local id=$1 k; k=$(tr 'A-Z' 'a-z' <<<"$id")
	local mib; mib=$(cat "$S/${k}_budget" 2>/dev/null || echo "?")
	local w="Thrash: $2 at -L ${mib}M" n; n=$(runs_of "${k}_wall_clock")
	local peak share
	peak=$(cell "${k}_peak_clock" MiB "$(awk 'BEGIN { print 1 / 1048576 }')")
	share=$(awk -v m="$mib" '{ v[++n] = $1 } END { if (n && v[1] > 0) printf "%.0f %%", m * 1048576 * 100 / v[1] }' "$S/${k}_peak_clock" 2>/dev/null)
	row "${id}1" "$w, wall: native vs faultline (default policy)" "$(cell "${k}_wall_native" s 1e-9)" \
		"$(cell "${k}_wall_clock" s 1e-9)" "$(ratio "${k}_wall_clock" "${k}_wall_native")" "$n" \
		"fifo $(cell "${k}_wall_fifo" s 1e-9) ($(ratio "${k}_wall_fifo" "${k}_wall_native")); process CPU (the program's own clock, handler threads included): native $(cell "${k}_cpu_native" s 1e-9), clock $(cell "${k}_cpu_clock" s 1e-9) ($(ratio "${k}_cpu_clock" "${k}_cpu_native")), fifo $(cell "${k}_cpu_fifo" s 1e-9); peak heap $peak (-L ${share:-?} of it); checksums as natively"
	row "${id}2" "$w, faults: --policy fifo vs the default (adaptive clock)" "$(cell "${k}_faults_fifo" "")" \
		"$(cell "${k}_faults_clock" "")" "$(ratio "${k}_faults_clock" "${k}_faults_fifo")" "$n" \
		"target ≤ 1.0×; clock: first touch $(cell "${k}_first_clock" ""), refaults $(cell "${k}_refault_clock" ""), soft $(cell "${k}_soft_clock" ""); fifo: first touch $(cell "${k}_first_fifo" ""), refaults $(cell "${k}_refault_fifo" "")"
	row "${id}3" "$w, CPU per fault (process, all threads) vs the minimal same-CPU first-touch handler (row E2's floor, measured in the same rounds)" \
		"$(cell "${k}_floor" µs 0.001)" "$(cell "${k}_cpf_clock" µs 0.001)" "$(ratio "${k}_cpf_clock" "${k}_floor")" "$n" \
		"target ≤ 1.5×; of it handlers $(cell "${k}_hpf_clock" µs 0.001), evictor $(cell "${k}_epf_clock" µs 0.001); fifo $(cell "${k}_cpf_fifo" µs 0.001) ($(ratio "${k}_cpf_fifo" "${k}_floor"))"
	local what4="$w, wall: kernel swap (memory cgroup ${mib} MiB + swap file on disk) vs faultline (default policy)"
	local ooms=0 oom_note=""
	[ -f "$S/${k}_kernel.skip" ] && [ -s "$S/${k}_wall_kernel" ] && oom_note="; then $(cat "$S/${k}_kernel.skip")"
	[ -s "$S/${k}_kernel_oom" ] && ooms=$(wc -l <"$S/${k}_kernel_oom") &&
		oom_note="$oom_note; the kernel's run was OOM-killed by the memory cgroup in $ooms run(s), after $(cell "${k}_kernel_oom" s 1e-9)"
	if [ -f "$S/${k}_kernel.skip" ] && [ ! -s "$S/${k}_wall_kernel" ]; then
		local why; why=$(cat "$S/${k}_kernel.skip")
		row "${id}4" "$what4" "$why" "$(cell "${k}_wall_clock" s 1e-9)" "$why" 0 "target ≤ 1.0×$oom_note"
	elif [ ! -s "$S/${k}_wall_kernel" ] && [ "$ooms" -gt 0 ]; then
		row "${id}4" "$what4" "n/a (OOM-killed in $ooms of $ooms runs)" "$(cell "${k}_wall_clock" s 1e-9)" \
			"n/a (the kernel did not finish)" 0 "target ≤ 1.0×$oom_note"
	else
		row "${id}4" "$what4" "$(cell "${k}_wall_kernel" s 1e-9)" "$(cell "${k}_wall_clock" s 1e-9)" \
			"$(ratio "${k}_pair_clock" "${k}_pair_kernel")" "$(runs_of "${k}_wall_kernel")" "target ≤ 1.0× (ratio of runs in the same round); process CPU: kernel $(cell "${k}_cpu_kernel" s 1e-9) (its reclaim in kswapd not included), clock $(cell "${k}_cpu_clock" s 1e-9)$oom_note"
	fi
	local vs_kernel="kernel swap not run"
	[ -s "$S/${k}_pairx_kernel" ] && vs_kernel="against the kernel's swap (same rounds) $(ratio "${k}_pairx_ahead" "${k}_pairx_kernel")"
	row "${id}5" "$w, wall: native vs faultline --fill-ahead 64 (fresh pages zero-filled ahead of a forward first-touch write: no fault, no record, no stack for them)" \
		"$(cell "${k}_wall_native" s 1e-9)" "$(cell "${k}_wall_ahead" s 1e-9)" "$(ratio "${k}_wall_ahead" "${k}_wall_native")" "$(runs_of "${k}_wall_ahead")" \
		"against the default's wall $(ratio "${k}_wall_ahead" "${k}_wall_clock"); $vs_kernel; faults $(cell "${k}_faults_ahead" "") (first touch $(cell "${k}_first_ahead" ""), refaults $(cell "${k}_refault_ahead" "")), pages filled ahead $(cell "${k}_filled_ahead" "")"
}

table_thrash_programs() {
	wanted TB && thrash_prog_table TB "bench/bigbuf $TB_ARGS (20 buffers replaced at random, each written whole)"
	wanted TD && thrash_prog_table TD "bench/dict_sort $TD_ARGS (hash table of malloc'd entries, then qsort by key)"
	wanted TX && thrash_prog_table TX "bench/extsort $TX_ARGS (two threads generate and sort chunks, then a heap merge)"
}

# ---------------------------------------------------------------------------------------------
# Row 8: eviction policy, clock (default) vs fifo, on the hot/cold program.

bench_policy() {
	say "row 8: eviction policy clock vs fifo ($RUNS runs, hot $HOT_MIB + cold $COLD_MIB MiB at -L ${HC_L}M)"
	local i p order
	local sec_start=$EPOCHREALTIME
	for i in $(seq 1 "$RUNS"); do
		budget_ok "row 8" "$sec_start" "$i" || break
		order="fifo clock"; [ $((i % 2)) = 0 ] && order="clock fifo"
		for p in $order; do
			rec hc -L "${HC_L}M" -M "$(( (HOT_MIB + COLD_MIB) * 2 ))M" --policy "$p" -- \
				"$BIN/hotcold" "$HOT_MIB" "$COLD_MIB"
			if ok hc "pol_${p}_refault" "pol_${p}_soft" "pol_${p}_wall"; then
				add "pol_${p}_refault" "$(stat_sum hc faults_refault)"
				add "pol_${p}_soft" "$(stat_sum hc faults_soft)"
				add "pol_${p}_wall" "$WALL_NS"
			fi
			drop hc
		done
	done
}

table_policy() {
	local w="Eviction policy, hot $HOT_MIB MiB used while cold $COLD_MIB MiB streams, -L ${HC_L}M: --policy fifo vs clock (default)"
	local n; n=$(runs_of pol_clock_refault)
	row 8a "$w: refaults" "$(cell pol_fifo_refault "")" "$(cell pol_clock_refault "")" \
		"$(ratio pol_clock_refault pol_fifo_refault)" "$n" "faults_refault (copied back from the far store)"
	local r; r=$(ratio pol_clock_soft pol_fifo_soft); [ "$r" = "n/a" ] && r="n/a (fifo has none)"
	row 8b "$w: soft faults" "$(cell pol_fifo_soft "")" "$(cell pol_clock_soft "")" "$r" "$n" \
		"faults_soft (unmapped on trial, still local: CLOCK's reference bit)"
	row 8c "$w: wall" "$(cell pol_fifo_wall s 1e-9)" "$(cell pol_clock_wall s 1e-9)" \
		"$(ratio pol_clock_wall pol_fifo_wall)" "$n" ""
}

# ---------------------------------------------------------------------------------------------
# Row 10: an allocation-heavy program (issue 12): tests/planted/alloc_heavy, N small malloc/free
# pairs plus N/10 in batches and one 8 MiB array (2,080 faults), -L unlimited. Per run, side by
# side: native (glibc), native on jemalloc (LD_PRELOAD, the shim's own allocator), record with
# default options (sampled allocation log), record --alloc-log full. Recording sizes in the notes;
# "v1 log" is what the allocation log took before issue 12: 40 bytes for every event.

bench_alloc() {
	local prog; prog=$(dirname "$FAULTLINE")/tests/alloc_heavy
	local je=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 i order who
	if [ ! -x "$prog" ]; then fail al_native "tests/planted/alloc_heavy not built (make)"; return; fi
	say "row 10: allocation-heavy program, N=$ALLOC_N ($RUNS runs)"
	local sec_start=$EPOCHREALTIME
	for i in $(seq 1 "$RUNS"); do
		budget_ok "row 10" "$sec_start" "$i" || break
		order="native jemalloc ours full"; [ $((i % 2)) = 0 ] && order="full ours jemalloc native"
		for who in $order; do
			case $who in
			native) native al_native "$prog" "$ALLOC_N"
				ok al_native al_native && add al_native "$WALL_NS" ;;
			jemalloc) native al_je env LD_PRELOAD="$je" "$prog" "$ALLOC_N"
				ok al_je al_je && add al_je "$WALL_NS" ;;
			ours) rec al_ours -M 1024M -- "$prog" "$ALLOC_N"
				if ok al_ours al_ours; then
					add al_ours "$WALL_NS"
					add al_ours_bytes "$(du -sb "$REC/al_ours" | cut -f1)"
					add al_events "$(grep -h '"alloc_events"' "$REC/al_ours"/*/stats.json | tr -dc 0-9)"
				fi
				drop al_ours ;;
			full) rec al_full -M 1024M --alloc-log full -- "$prog" "$ALLOC_N"
				if ok al_full al_full; then
					add al_full "$WALL_NS"
					add al_full_bytes "$(du -sb "$REC/al_full" | cut -f1)"
					add al_full_zst "$(trace_bytes al_full allocs.zst)"
					add al_full_v1 "$(( $(stat_sum al_full alloc_events) * 40 ))"
				fi
				drop al_full ;;
			esac
		done
		# ns per malloc/free call above jemalloc's: 2 calls per object, N * 1.1 objects
		if [ -s "$S/al_ours" ] && [ -s "$S/al_je" ]; then
			add al_ns_above "$(( ($(tail -n 1 "$S/al_ours") - $(tail -n 1 "$S/al_je")) * 10 / (ALLOC_N * 22) ))"
			add al_je_ns "$(( $(tail -n 1 "$S/al_je") * 10 / (ALLOC_N * 22) ))"
			add al_ours_ns "$(( $(tail -n 1 "$S/al_ours") * 10 / (ALLOC_N * 22) ))"
		fi
	done
}

table_alloc() {
	local what="alloc_heavy $ALLOC_N (N small malloc/free pairs + N/10 in batches, 2,080 faults), -L unlimited"
	row 10a "Allocation-heavy: $what; record (default: sampled allocation log) vs native wall" \
		"$(cell al_native s 1e-9)" "$(cell al_ours s 1e-9)" "$(ratio al_ours al_native)" "$(runs_of al_ours)" \
		"recording $(cell al_ours_bytes MB 1e-6); allocation events logged $(cell al_events "")"
	row 10b "Allocation-heavy: $what; record --alloc-log full vs native wall" \
		"$(cell al_native s 1e-9)" "$(cell al_full s 1e-9)" "$(ratio al_full al_native)" "$(runs_of al_full)" \
		"recording $(cell al_full_bytes MB 1e-6); allocs.zst $(cell al_full_zst MB 1e-6) vs the v1 log's $(cell al_full_v1 MB 1e-6) (40 B an event): $(ratio al_full_v1 al_full_zst) smaller"
	row 10c "Allocation-heavy: wall per malloc/free call, record (default) vs the same program on jemalloc (LD_PRELOAD)" \
		"$(cell al_je_ns ns)" "$(cell al_ours_ns ns)" "$(ratio al_ours_ns al_je_ns)" "$(runs_of al_ns_above)" \
		"above jemalloc: $(cell al_ns_above ns) per call (start-up, 2,080 faults with stacks and the summary included)"
}

# ---------------------------------------------------------------------------------------------
# Row 11: counter timelines (issue 16): the same fill recorded with the timeline off (--timeline 0),
# on at its default period (20 ms), and at its most costly (--timeline 1 --timeline-every 64: a
# sample every millisecond and every 64 faults), interleaved per run.

bench_timeline() {
	local i who order
	say "row 11: counter timelines ($RUNS runs; fill $FILL_MIB MiB at -L $FILL_L)"
	local sec_start=$EPOCHREALTIME
	for i in $(seq 1 "$RUNS"); do
		budget_ok "row 11" "$sec_start" "$i" || break
		order="off on dense"; [ $((i % 2)) = 0 ] && order="dense on off"
		for who in $order; do
			case $who in
			off) rec tl -L "${FILL_L}M" -M "$((FILL_MIB * 2))M" --timeline 0 -- "$FILL" "$FILL_MIB" ;;
			on) rec tl -L "${FILL_L}M" -M "$((FILL_MIB * 2))M" -- "$FILL" "$FILL_MIB" ;;
			dense) rec tl -L "${FILL_L}M" -M "$((FILL_MIB * 2))M" --timeline 1 --timeline-every 64 -- "$FILL" "$FILL_MIB" ;;
			esac
			if ok tl "tl_$who"; then
				add "tl_$who" "$WALL_NS"
				[ "$who" = off ] || add "tl_${who}_bytes" "$(trace_bytes tl timeline)"
			fi
			drop tl
		done
	done
}

table_timeline() {
	local w="Counter timeline: build/tests/fill $FILL_MIB at -L ${FILL_L}M, wall"
	row 11a "$w, record (default: --timeline 20) vs --timeline 0" "$(cell tl_off s 1e-9)" "$(cell tl_on s 1e-9)" \
		"$(ratio tl_on tl_off)" "$(runs_of tl_on)" "timeline file $(cell tl_on_bytes kB 1e-3)"
	row 11b "$w, --timeline 1 --timeline-every 64 vs --timeline 0" "$(cell tl_off s 1e-9)" "$(cell tl_dense s 1e-9)" \
		"$(ratio tl_dense tl_off)" "$(runs_of tl_dense)" "timeline file $(cell tl_dense_bytes kB 1e-3)"
}

# ---------------------------------------------------------------------------------------------
# Main: measure in table order, then print.

# write_table: the table with its header and footer, on stdout and into $OUT.
write_table() {
	cat "$PROBE_ROWS" >>"$TABLE"
	LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
	ELAPSED=$(( $(us_since "$T_START") / 1000000 ))
	COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
	DIRTY=$(git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo " + uncommitted changes")

	{
		echo "## faultline bench$([ "$QUICK" = 1 ] && echo " (quick)")"
		echo
		echo "Ratio = faultline / baseline, taken per run (baseline and faultline interleaved, order alternating), then median (min–max). Other cells: median (min–max) over the runs. Nothing is asserted."
		echo
		echo "| # | What | Baseline | faultline | Ratio | Runs | Notes |"
		echo "|---|---|---|---|---|---|---|"
		cat "$TABLE"
		echo
		echo "Load average (1/5/15 min) at start: $LOAD_START; at end: $LOAD_END. $NCPU CPUs, kernel $(uname -r), $(date -u '+%Y-%m-%d %H:%M UTC'), ${ELAPSED} s, commit $COMMIT$DIRTY, $RUNS runs (row 1: $R1).$([ -s "$S/.budget" ] && echo " Time budget of $BUDGET_S s reached: $(paste -sd, "$S/.budget" | sed 's/,/, /g') stopped early (see Runs).")"
	} >"$OUT.tmp.$$" && mv -f "$OUT.tmp.$$" "$OUT"
	cat "$OUT"
	say "table written to $OUT (${ELAPSED} s)"
}

if [ -n "$ONLY" ]; then
	wanted T && bench_thrash
	bench_thrash_programs
	wanted SW && bench_sweep
	# row T3 compares with row E2's floor, not measured here: the same command's samples of rows TB-TX
	cat "$S"/t[bdx]_floor >"$S/ev_floor" 2>/dev/null
	PROBE_ROWS=$WORK/probe_rows.md
	echo "Only row groups ${ONLY:1:-1} were run (--only)." >"$PROBE_ROWS"
	wanted T && table_thrash
	table_thrash_programs
	wanted SW && table_sweep
	write_table
	exit 0
fi

# Under heavy load the time budget cuts the last ones short: the tools' speed (5, 6) and the far
# stores (9) go last, the fault floor and the handler-thread question first.
bench_floor
bench_rap
bench_handlers
bench_refault
bench_evict
bench_overhead
bench_policy
bench_thrash
bench_thrash_programs
bench_sweep
bench_alloc
bench_timeline
bench_size
bench_report_memory
bench_later_rows
# Rows P: the access prober (issues 15, 16), measured by their own script, rows appended as they are.
say "rows P: access prober (scripts/bench_probe.sh)"
PROBE_ROWS=$WORK/probe_rows.md
if [ "$QUICK" = 1 ]; then # --mrc on python3 and sqlite3 alone outlasts the quick run's budget
	echo "Rows P (access prober: --mrc accuracy and cost, --sample-accesses cost) are not in bench-quick; \`make bench\` runs them." >"$PROBE_ROWS"
else
	BENCH_WORK=$WORK FAULTLINE=$FAULTLINE scripts/bench_probe.sh -o "$PROBE_ROWS" 2>>"$LOG" ||
		echo "| P | access prober rows | scripts/bench_probe.sh failed (see $LOG) | | | 0 | |" >"$PROBE_ROWS"
fi

table_floor
table_handlers
table_refault
table_evict
table_overhead
table_tracing
table_later_rows
table_rap
table_policy
table_thrash
table_thrash_programs
table_sweep
table_far
table_alloc
table_timeline
table_size
table_report_memory
write_table
