#!/usr/bin/env bash
# rt_debug_runtime: planted programs on the debug runtime (build/debug/libfaultline.so: every
# FL_ASSERT invariant checked, runtime/diag.h) with the page-state checker on
# (FAULTLINE_CHECK_STATES=1: at exit every page's state is compared with the mappings). Fill and
# two read passes at tight -L under CLOCK and FIFO, 4 threads on 2 handlers, fork with evicted
# pages, mmap/munmap/mremap churn, realloc storm: each must exit 0 with its native output, no
# invariant broken (that aborts), and page_state_mismatches = 0.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted fill threads fork_verify mmap_churn realloc_storm
lib=$FAULTLINE_BUILD/debug/libfaultline.so
[ -f "$lib" ] || fail "not built: $lib (make all builds it)"
export FAULTLINE_LIB=$lib FAULTLINE_CHECK_STATES=1

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
run_case realloc 8 "$PLANTED/realloc_storm"
