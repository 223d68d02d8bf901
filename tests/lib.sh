# tests/lib.sh: helpers for the end-to-end cases in tests/cases/*.sh. A case starts with
#     . "$(dirname "$0")/../lib.sh"
# and then records programs with `expect_record`, compares their output with a native run and checks
# the counters in DIR/<pid>/stats.json. Conventions (tests/run.sh): exit 0 = pass, 1 = fail (`fail`),
# 77 = skip (`skip`, which prints "SKIP reason" first). Every check prints one "ok ..." line, so the log
# of a failing case shows how far it got. The work directory is removed at exit unless
# FAULTLINE_TEST_KEEP=1.
set -u

ROOT=${FAULTLINE_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
BUILD=${FAULTLINE_BUILD:-$ROOT/build}
FAULTLINE=${FAULTLINE:-$BUILD/faultline}
PLANTED=$BUILD/tests
LONG=${FAULTLINE_TEST_LONG:-0}
MIB=1048576
PAGE=4096
# The tests' own helper interpreter. Debian's, not a pyenv shim (a shell script that would be traced
# along with the program when used as a workload).
if [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; else PY=$(command -v python3 || echo python3); fi
# the checks the tests' Python heredocs share (tests/py/checks.py: from checks import check, errors)
export PYTHONPATH="$ROOT/tests/py${PYTHONPATH:+:$PYTHONPATH}"

# The load factor tests/run.sh measured (>= 1): inner time limits of a case scale with it.
SCALE=${FAULTLINE_TEST_SCALE:-1}
# scaled SECONDS: SECONDS times the load factor, rounded up to whole seconds.
scaled() { awk -v s="$1" -v f="$SCALE" 'BEGIN{v=s*f; printf "%d", (v==int(v))?v:int(v)+1}'; }

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP $*"; exit 77; }
say() { echo "# $*"; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/faultline-test.XXXXXX") || fail "mktemp -d failed"
cleanup() {
	if [ "${FAULTLINE_TEST_KEEP:-0}" = 1 ]; then echo "# kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

# need_faultline: the CLI and the shim must have been built (make); their absence is a failure.
need_faultline() {
	[ -x "$FAULTLINE" ] || fail "$FAULTLINE not built (run make)"
	[ -f "$BUILD/libfaultline.so" ] || fail "$BUILD/libfaultline.so not built (run make)"
}

# need_planted NAME...: the planted programs must have been built.
need_planted() {
	local p
	for p in "$@"; do [ -x "$PLANTED/$p" ] || fail "$PLANTED/$p not built (run make)"; done
}

# need_cmd CMD...: skips when a third-party program is not installed (deps.sh installs them).
need_cmd() {
	local c
	for c in "$@"; do command -v "$c" >/dev/null 2>&1 || skip "$c is not installed (run ./deps.sh --test)"; done
}

# record DIR ARGS...: faultline record, quiet, into DIR (replaced if present). ARGS are record's own
# options, then -- and the command.
record() {
	local dir=$1; shift
	"$FAULTLINE" record -q -o "$dir" --force "$@"
}

# run_record NAME ARGS...: `record $WORK/NAME ARGS...` with stdout in $WORK/NAME.out and stderr in
# $WORK/NAME.err; sets RC to its exit status and never fails by itself.
run_record() {
	local name=$1; shift
	say "faultline record -q -o $WORK/$name --force $*"
	RC=0
	record "$WORK/$name" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || RC=$?
}

# show_err NAME: the end of a recording's stderr, for failure messages.
show_err() {
	echo "--- stderr of $1 (last 20 lines):" >&2
	tail -n 20 "$WORK/$1.err" >&2
	echo "---" >&2
}

# expect_record NAME ARGS...: run_record, and fail unless the program exited 0.
expect_record() {
	local name=$1
	run_record "$@"
	if [ "$RC" -ne 0 ]; then
		show_err "$name"
		fail "$name: faultline record exited $RC, want 0"
	fi
	echo "ok $name: exit status 0"
}

# build_bench NAME [LIBS...]: bench/NAME.c built into $WORK/NAME, as scripts/bench.sh builds it.
build_bench() {
	local name=$1; shift
	gcc -std=gnu11 -O2 -g -Wall -Wextra -D_GNU_SOURCE -I"$ROOT/inc" -I"$ROOT/bench" -pthread -o "$WORK/$name" \
		"$ROOT/bench/$name.c" "$@" || fail "cannot build bench/$name.c"
}

# bench_checksum FILE: the checksum a bench program printed (its checksum=HEX) in FILE; empty if none.
bench_checksum() { sed -n 's/.*checksum=\([0-9a-f]*\).*/\1/p' "$1"; }

# run_native NAME CMD...: the command without faultline; stdout in $WORK/NAME.native; must exit 0.
run_native() {
	local name=$1; shift
	say "native: $*"
	local rc=0
	"$@" >"$WORK/$name.native" 2>"$WORK/$name.native.err" || rc=$?
	if [ "$rc" -ne 0 ]; then
		tail -n 20 "$WORK/$name.native.err" >&2
		fail "$name: native run of '$*' exited $rc"
	fi
}

# same_output NAME NATIVE: the recording's stdout must equal the native run's, byte for byte.
same_output() {
	local name=$1 native=$2
	if ! cmp -s "$WORK/$native.native" "$WORK/$name.out"; then
		echo "--- native:" >&2; head -c 2000 "$WORK/$native.native" >&2
		echo "--- under faultline:" >&2; head -c 2000 "$WORK/$name.out" >&2
		cmp "$WORK/$native.native" "$WORK/$name.out" >&2
		fail "$name: output differs from the native run"
	fi
	echo "ok $name: output identical to the native run ($(wc -c <"$WORK/$name.out") bytes)"
}

# trace_records FILE: the complete records of a binary trace file now: fixed-size records, or the
# records of its whole frames (format 3's faults, contexts, evictions: tests/py/trace_frames.py).
trace_records() {
	"$PY" -c 'import sys; from trace_frames import count; print(count(sys.argv[1]))' "$1" 2>/dev/null || echo 0
}

# json_get FILE KEY: one value of a flat JSON object.
json_get() {
	"$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}

# proc_dirs DIR: the process directories of recording DIR (<pid>, <pid>.N after an exec), one a
# line in numeric order; the recording's other entries (binaries, .build-id) are not listed.
proc_dirs() {
	ls "$1" | grep -E '^[0-9]+(\.[0-9]+)?$' | sort -n
}

# first_proc DIR: the process directory of recording DIR whose runtime started first (meta.json
# start_ns): the traced program itself. Not the smallest pid: pids wrap (pid_max is 32768 here).
first_proc() {
	"$PY" - "$1" <<'EOF'
import json, os, re, sys
d = sys.argv[1]
best = None
for p in os.listdir(d):
    if not re.fullmatch(r"[0-9]+(\.[0-9]+)?", p):
        continue
    try:
        t = json.load(open(os.path.join(d, p, "meta.json")))["start_ns"]
    except (OSError, ValueError, KeyError):
        continue
    if best is None or t < best[0]:
        best = (t, p)
print(best[1] if best else "")
EOF
}

# stat_agg sum|max DIR KEY: KEY aggregated over every DIR/*/stats.json. Prints nothing and returns 1
# (with a message) when there is no stats.json or one lacks KEY.
stat_agg() {
	"$PY" - "$@" <<'EOF'
import glob, json, os, sys
how, d, key = sys.argv[1:4]
files = sorted(glob.glob(os.path.join(d, "*", "stats.json")))
if not files:
    sys.exit("no stats.json under %s" % d)
vals = []
for f in files:
    s = json.load(open(f))
    if key not in s:
        sys.exit("%s has no key %s" % (f, key))
    vals.append(s[key])
print(sum(vals) if how == "sum" else max(vals))
EOF
}
sum_stat() { stat_agg sum "$1" "$2"; }
max_stat() { stat_agg max "$1" "$2"; }

# check_eq|check_le|check_ge WHAT GOT BOUND: integer comparisons that fail with both numbers.
is_int() { [[ $1 =~ ^-?[0-9]+$ ]]; }
check_cmp() {
	local op=$1 what=$2 got=$3 bound=$4
	is_int "$got" || fail "$what: got '$got', not an integer"
	is_int "$bound" || fail "$what: bound '$bound' is not an integer"
	case $op in
	eq) [ "$got" -eq "$bound" ] || fail "$what = $got, want = $bound" ;;
	le) [ "$got" -le "$bound" ] || fail "$what = $got, want <= $bound" ;;
	ge) [ "$got" -ge "$bound" ] || fail "$what = $got, want >= $bound" ;;
	esac
	echo "ok $what = $got ($op $bound)"
}
check_eq() { check_cmp eq "$@"; }
check_le() { check_cmp le "$@"; }
check_ge() { check_cmp ge "$@"; }

# stat_of NAME KEY: KEY summed over the processes of recording NAME (fails if there is none).
stat_of() {
	local v
	v=$(sum_stat "$WORK/$1" "$2") || fail "$1: cannot read $2"
	echo "$v"
}

# meta_of NAME KEY: KEY of the meta.json of recording NAME's first process directory (fails if
# there is none, or no such key).
meta_of() {
	local v
	v=$("$PY" -c 'import glob, json, sys; print(json.load(open(sorted(glob.glob(sys.argv[1] + "/*/meta.json"))[0]))[sys.argv[2]])' \
		"$WORK/$1" "$2") || fail "$1: cannot read $2 from meta.json"
	echo "$v"
}

# check_stackless NAME WHAT BARE: BARE faults of recording NAME (not concurrent ones) have no stack.
# The runtime promises a stack for each but those whose stack signal was taken more than 200 ms
# late (it would show wherever the thread finally took it): it drops them and counts them in
# stats.json late_stacks_dropped. So BARE <= late_stacks_dropped, and that count is itself bounded:
# at most 2 % of faults_total + 16 (a loaded machine drops 1-4 of 20 000).
check_stackless() {
	local name=$1 what=$2 bare=$3 late total
	late=$(stat_of "$name" late_stacks_dropped)
	total=$(stat_of "$name" faults_total)
	check_le "$what: late_stacks_dropped" "$late" $((total / 50 + 16))
	check_le "$what (all dropped late)" "$bare" "$late"
}

# first_touch_allowance PAGES: the slack allowed above PAGES first-touch faults for allocator
# metadata and the runtime's own start-up use of the heap: 2 % + 2048 pages.
first_touch_allowance() { echo $(($1 * 2 / 100 + 2048)); }

# check_first_touch NAME PAGES: a program that touches PAGES heap pages once each, in order, takes at
# least PAGES first-touch faults (no zero-fill ahead of access, no fault lost) and at most PAGES +
# first_touch_allowance.
check_first_touch() {
	local name=$1 pages=$2 got
	got=$(stat_of "$name" faults_first_touch)
	check_ge "$name faults_first_touch" "$got" "$pages"
	check_le "$name faults_first_touch" "$got" $((pages + $(first_touch_allowance "$pages")))
}

# check_stats NAME [--local BYTES] [--max BYTES] [--procs N]: the invariants every recording must
# satisfy, for every DIR/<pid>/ of $WORK/NAME:
#   stats.json holds every contract key (integers, "exit" a non-empty string), pid = directory name
#   (<pid>, or <pid>.N after an exec),
#   records_dropped = 0, faults_total = first_touch + refault + soft + concurrent,
#   records_written >= faults_total, writebacks <= evictions, evictions_clean <= evictions,
#   meta.json exists, the faults file has a valid header (magic FLTRACE, version 2, kind 1, the pid)
#   and exactly faults_total records of header.record_size bytes;
#   with --local: local_limit_bytes = BYTES and peak_resident_bytes <= BYTES;
#   with --max:   max_bytes = BYTES and peak_heap_bytes <= BYTES;
#   with --procs: exactly N process directories, each with stats.json.
check_stats() {
	local name=$1; shift
	"$PY" - "$WORK/$name" "$@" <<'EOF' || { show_err "$name"; fail "$name: stats check failed"; }
import glob, json, os, re, struct, sys
import trace_frames
d = sys.argv[1]
args = sys.argv[2:]
opts = dict(zip(args[::2], (int(a) for a in args[1::2])))
INT_KEYS = ("pid faults_total faults_first_touch faults_refault faults_soft faults_concurrent "
            "evictions writebacks evictions_clean soft_evictions peak_resident_bytes local_limit_bytes "
            "max_bytes peak_heap_bytes records_written records_dropped wall_ns").split()
errors = []
def bad(msg):
    errors.append(msg)
# one directory per process: <pid>, and <pid>.N for the N-th program it exec'd
pids = sorted(p for p in os.listdir(d) if re.fullmatch(r"[0-9]+(\.[0-9]+)?", p)) if os.path.isdir(d) else []
if not pids:
    sys.exit("FAIL: %s: no process directory" % d)
if "--procs" in opts and len(pids) != opts["--procs"]:
    bad("%d process directories (%s), want %d" % (len(pids), " ".join(pids), opts["--procs"]))
for pid in pids:
    pd = os.path.join(d, pid)
    where = "%s/%s" % (os.path.basename(d), pid)
    try:
        s = json.load(open(os.path.join(pd, "stats.json")))
    except Exception as e:
        bad("%s: stats.json unreadable: %s" % (where, e)); continue
    missing = [k for k in INT_KEYS if not isinstance(s.get(k), int) or isinstance(s.get(k), bool)]
    if missing:
        bad("%s: stats.json lacks integer keys %s" % (where, " ".join(missing))); continue
    if not isinstance(s.get("exit"), str) or not s["exit"]:
        bad("%s: stats.json 'exit' is %r, want a non-empty string" % (where, s.get("exit")))
    if s["pid"] != int(pid.split(".")[0]):
        bad("%s: stats.json pid %d != directory name" % (where, s["pid"]))
    if s["records_dropped"] != 0:
        bad("%s: records_dropped = %d, want 0" % (where, s["records_dropped"]))
    kinds = s["faults_first_touch"] + s["faults_refault"] + s["faults_soft"] + s["faults_concurrent"]
    if s["faults_total"] != kinds:
        bad("%s: faults_total = %d but first_touch + refault + soft + concurrent = %d" % (where, s["faults_total"], kinds))
    if s["records_written"] < s["faults_total"]:
        bad("%s: records_written = %d < faults_total = %d" % (where, s["records_written"], s["faults_total"]))
    for k in ("writebacks", "evictions_clean"):
        if s[k] > s["evictions"]:
            bad("%s: %s = %d > evictions = %d" % (where, k, s[k], s["evictions"]))
    if "--local" in opts:
        if s["local_limit_bytes"] != opts["--local"]:
            bad("%s: local_limit_bytes = %d, want %d (-L)" % (where, s["local_limit_bytes"], opts["--local"]))
        if s["peak_resident_bytes"] > opts["--local"]:
            bad("%s: peak_resident_bytes = %d > -L = %d" % (where, s["peak_resident_bytes"], opts["--local"]))
    if "--max" in opts:
        if s["max_bytes"] != opts["--max"]:
            bad("%s: max_bytes = %d, want %d (-M)" % (where, s["max_bytes"], opts["--max"]))
        if s["peak_heap_bytes"] > opts["--max"]:
            bad("%s: peak_heap_bytes = %d > -M = %d" % (where, s["peak_heap_bytes"], opts["--max"]))
    if not os.path.isfile(os.path.join(pd, "meta.json")):
        bad("%s: no meta.json" % where)
    fpath = os.path.join(pd, "faults")
    try:
        data = trace_frames.read(fpath)   # format 3's frames decoded into fixed-size records
    except OSError as e:
        bad("%s: %s" % (where, e)); continue
    if len(data) < 64:
        bad("%s: faults file is %d bytes, shorter than its header" % (where, len(data))); continue
    magic, version, kind, hsize, rsize, fpid = struct.unpack_from("<8s5I", data)
    if magic != b"FLTRACE\0" or version not in (2, 3, 4) or kind != 1 or hsize < 64 or rsize < 64 or fpid != s["pid"]:
        bad("%s: faults header magic=%r version=%d kind=%d header_size=%d record_size=%d pid=%d"
            % (where, magic, version, kind, hsize, rsize, fpid)); continue
    body = len(data) - hsize
    if body % rsize:
        bad("%s: faults file ends in a partial record (%d bytes after the header)" % (where, body))
    elif body // rsize != s["faults_total"] + s.get("access_samples", 0):  # access samples: records, not faults
        bad("%s: faults file holds %d records, stats.json faults_total + access_samples = %d" % (where, body // rsize, s["faults_total"] + s.get("access_samples", 0)))
for e in errors:
    print("FAIL: " + e, file=sys.stderr)
if errors:
    sys.exit(1)
print("ok %s: stats of %d process(es) consistent (%s)" % (os.path.basename(d), len(pids),
      ", ".join("%s %d" % (k, v) for k, v in sorted(opts.items()))))
EOF
}

# summary NAME: one line of the main counters summed over processes, for the log.
summary() {
	"$PY" - "$WORK/$1" <<'EOF'
import glob, json, os, sys
t = {}
for f in glob.glob(os.path.join(sys.argv[1], "*", "stats.json")):
    for k, v in json.load(open(f)).items():
        if isinstance(v, int) and k != "pid":
            t[k] = max(t.get(k, 0), v) if k.startswith("peak") or k.endswith("_bytes") else t.get(k, 0) + v
keys = ("faults_total faults_first_touch faults_refault faults_soft faults_concurrent evictions "
        "writebacks evictions_clean peak_resident_bytes wall_ns").split()
print("# %s: %s" % (os.path.basename(sys.argv[1]), " ".join("%s=%s" % (k, t.get(k)) for k in keys)))
EOF
}

# real_program NAME MAX_MiB CMD...: a third-party program under faultline. CMD runs natively, then
# under `record -M MAX` without -L, then with -L = a quarter of the unlimited run's peak resident bytes
# (rounded down to whole MiB, and at least 4 MiB: a smaller workload makes the check meaningless).
# Both recordings must exit 0 with output identical to the native run; the limited one must evict.
real_program() {
	local name=$1 max=$2; shift 2
	need_faultline
	run_native "$name" "$@"
	expect_record "$name-unlimited" -M "$max" -- "$@"
	same_output "$name-unlimited" "$name"
	check_stats "$name-unlimited" --max $((max * MIB))
	summary "$name-unlimited"
	check_eq "$name-unlimited evictions" "$(stat_of "$name-unlimited" evictions)" 0
	local peak limit
	peak=$(max_stat "$WORK/$name-unlimited" peak_resident_bytes) || fail "no peak_resident_bytes"
	limit=$((peak / 4 / MIB))
	check_ge "$name: -L in MiB (peak_resident_bytes $peak / 4, rounded down)" "$limit" 4
	expect_record "$name-limited" -L "$limit" -M "$max" -- "$@"
	same_output "$name-limited" "$name"
	check_stats "$name-limited" --local $((limit * MIB)) --max $((max * MIB))
	summary "$name-limited"
	check_ge "$name-limited evictions" "$(stat_of "$name-limited" evictions)" 1
}
