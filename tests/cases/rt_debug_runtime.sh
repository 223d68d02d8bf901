#!/usr/bin/env bash
# rt_debug_runtime: planted programs on the debug runtime (build/debug/libfaultline.so: every
# FL_ASSERT invariant checked, runtime/diag.h) with the page-state checker on
# (FAULTLINE_CHECK_STATES=1: at exit every page's state is compared with the mappings). Fill and
# two read passes at tight -L under CLOCK and FIFO, 4 threads on 2 handlers, fork with evicted
# pages, mmap/munmap/mremap churn, realloc storm: each must exit 0 with its native output, no
# invariant broken (that aborts), and page_state_mismatches = 0. With FAULTLINE_DEBUG_MARKS=1 each
# process prints how often every FL_ASSERT was checked and every FL_TESTCASE branch was reached
# (runtime/diag.h): the page-state asserts of pages.h must have run, and at least one rare branch
# must have been reached over the runs.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted fill threads fork_verify mmap_churn realloc_storm
lib=$FAULTLINE_BUILD/debug/libfaultline.so
[ -f "$lib" ] || fail "not built: $lib (make all builds it)"
export FAULTLINE_LIB=$lib FAULTLINE_CHECK_STATES=1 FAULTLINE_DEBUG_MARKS=1

run_case() {   # NAME LOCAL_MiB PROGRAM ARGS... (record options before the program via EXTRA)
	local name=$1 local=$2; shift 2
	run_native "$name" "$@"
	expect_record "$name" -L "$local" -M 512 ${EXTRA:-} -- "$@"
	same_output "$name" "$name"
	check_stats "$name" --local $((local * MIB)) --max $((512 * MIB))
	check_eq "$name page_state_mismatches" "$(stat_of "$name" page_state_mismatches)" 0
}

run_case fill-clock 4 "$PLANTED/fill" 24
EXTRA="--policy fifo" run_case fill-fifo 4 "$PLANTED/fill" 24
EXTRA="-c 2" run_case threads 4 "$PLANTED/threads" 4 8
run_case fork 4 "$PLANTED/fork_verify" 16
run_case mmap 8 "$PLANTED/mmap_churn"
run_case realloc 8 "$PLANTED/realloc_storm" 1000   # 1,000 of its 3,000 default iterations: 12 s here, not 26

# the marks every process printed at exit: "faultline: mark KIND FILE:LINE COND: N"
cat "$WORK"/*.err | grep '^faultline: mark ' >"$WORK/marks" || true
"$PY" - "$WORK/marks" <<'PY' || fail "debug marks missing (see above)"
import re, sys
from collections import Counter
counts = Counter()
for line in open(sys.argv[1]):
    m = re.match(r"faultline: mark (\w+) (\S+):(\d+) (.*): (\d+)$", line.rstrip("\n"))
    if m:
        counts[(m.group(1), m.group(2).split("/")[-1], m.group(4))] += int(m.group(5))
ok = True
def need(kind, file, cond_part):
    global ok
    n = sum(v for (k, f, c), v in counts.items() if k == kind and f == file and cond_part in c)
    print("%s %s %s '%s': %d" % ("ok" if n > 0 else "MISSING", kind, file, cond_part, n))
    ok &= n > 0
need("assert", "pages.h", "PG_BUSY")
need("assert", "pages.h", "PG_STAGED")
need("assert", "pages.h", "before >= n")
reached = {k: v for k, v in counts.items() if k[0] == "testcase" and v > 0}
for (k, f, c), v in sorted(reached.items()):
    print("ok testcase %s '%s' reached %d times" % (f, c, v))
if not reached:
    print("MISSING: no FL_TESTCASE branch was reached")
    ok = False
sys.exit(0 if ok else 1)
PY
