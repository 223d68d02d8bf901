#!/usr/bin/env bash
# rel_stress_forks: 200 forks (without exec) of a process whose 16 MiB heap is mostly evicted
# (-L 4), up to 4 children at a time, each verifying the memory it inherited (the pages the parent
# rewrote just before its fork and 64 random pages), writing its own and ending with exit or
# _exit, while the parent keeps rewriting pages (tests/planted/rel_forks.c). Then the same with
# the environment moved to the heap by setenv() before the heap is filled (as redis, nginx or
# postgres do to rewrite their process title): it is evicted when the process forks, and each
# child reads it back with getenv().
# Checks for each run: exit 0, output as natively, one process directory per process (201 / 21)
# with check_stats, evictions and refaults. A run that does not finish within its deadline fails
# with the states of the processes still alive, which are then killed.
# make test and FAULTLINE_TEST_LONG=1 alike: 200 forks (~50,000 faults, ~6 s here), and 20 with
# setenv.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted rel_forks
local=4 max=1024 mib=16

descendants() {  # PID: every process below PID
	local c
	for c in $(pgrep -P "$1"); do echo "$c"; descendants "$c"; done
}
# record_deadline NAME SECONDS ARGS...: run_record with a deadline; when it passes, prints what
# every process of the run is doing, kills them all (SIGKILL) and fails.
record_deadline() {
	local name=$1 secs=$2; shift 2
	say "faultline record -q -o $WORK/$name --force $*   (deadline ${secs} s)"
	record "$WORK/$name" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
	local pid=$! end=$((SECONDS + secs))
	while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$end" ]; do sleep 0.2; done
	if kill -0 "$pid" 2>/dev/null; then
		local tree p
		tree=$(descendants "$pid")
		for p in $tree; do
			echo "--- still running after ${secs} s: pid $p ($(tr '\0' ' ' </proc/$p/cmdline 2>/dev/null)) state $(awk '{print $3}' /proc/$p/stat 2>/dev/null), $(ls /proc/$p/task 2>/dev/null | wc -l) thread(s), kernel wait $(cat /proc/$p/wchan 2>/dev/null)" >&2
		done
		echo "--- process directories written: $(ls "$WORK/$name" 2>/dev/null | wc -l)" >&2
		kill -KILL "$pid" $tree 2>/dev/null
		wait "$pid" 2>/dev/null
		show_err "$name"
		fail "$name: did not finish within ${secs} s"
	fi
	RC=0
	wait "$pid" || RC=$?
	if [ "$RC" -ne 0 ]; then show_err "$name"; fail "$name: faultline record exited $RC, want 0"; fi
	echo "ok $name: exit status 0"
}

fork_case() {  # NAME FORKS DEADLINE [setenv]
	local name=$1 forks=$2 secs=$3; shift 3
	run_native "$name" "$PLANTED/rel_forks" "$forks" "$mib" 64 4 "$@"
	record_deadline "$name" "$secs" -L "$local" -M "$max" -- "$PLANTED/rel_forks" "$forks" "$mib" 64 4 "$@"
	same_output "$name" "$name"
	summary "$name"
	check_stats "$name" --local $((local * MIB)) --max $((max * MIB)) --procs $((forks + 1))
	check_ge "$name evictions" "$(stat_of "$name" evictions)" 1
	check_ge "$name faults_refault" "$(stat_of "$name" faults_refault)" "$forks"
}

fork_case forks 200 "$(scaled 60)"
fork_case forks-setenv 20 "$(scaled 30)" setenv
