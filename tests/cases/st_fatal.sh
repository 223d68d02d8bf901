#!/usr/bin/env bash
# st_fatal: a program that dies of a signal keeps its trace (tests/planted/st_crash.c: fills 16 MiB
# under -L 4, reads it back, then stores through NULL or calls abort()). The runtime writes the
# records and stats.json from its fatal-signal handler, so for each way of dying:
#   - `record` exits 128 + signal (139 for SIGSEGV, 134 for SIGABRT);
#   - `faultline dump` succeeds without warnings and prints exactly faults_total fault lines, at least
#     as many as the pages the program reported touching before the crash;
#   - single-threaded: every fault line has a stack (the faulting thread took them all before dying);
#   - check_stats holds (stats.json complete, faults file = faults_total records, nothing dropped).
# segv-thread: the same while a second thread is still faulting when the main thread crashes: the
# trace must still be consistent (no fault record or context written after stats.json was, none
# counted in stats.json but missing from the faults file). Three runs, as the window is a race;
# --policy fifo, under which each of its touches faults.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted st_crash
ulimit -c 0

local=4 max=256 mib=16

fatal_case() {  # NAME MODE WANT_STATUS EVERY_FAULT_HAS_STACK(yes|no) [RECORD OPTION...]
	local name=$1 mode=$2 want=$3 all_stacks=$4
	shift 4
	run_record "$name" -L "$local" -M "$max" "$@" -- "$PLANTED/st_crash" "$mode" "$mib"
	if [ "$RC" -ne "$want" ]; then
		show_err "$name"
		fail "$name: faultline record exited $RC, want $want"
	fi
	echo "ok $name: exit status $RC"
	grep -q '^touched [0-9]* pages$' "$WORK/$name.out" || fail "$name: the program did not reach its crash: $(cat "$WORK/$name.out")"
	local touched
	touched=$(awk '/^touched/ { print $2 }' "$WORK/$name.out")
	[ -f "$(ls -d "$WORK/$name"/*/ | head -n1)stats.json" ] || fail "$name: no stats.json after the crash"
	local total
	total=$(stat_of "$name" faults_total)
	check_ge "$name faults_total (pages touched before the crash: $touched)" "$total" "$touched"

	local rc=0
	"$FAULTLINE" dump "$WORK/$name" >"$WORK/$name.dump" 2>"$WORK/$name.dump.err" || rc=$?
	if [ "$rc" -ne 0 ]; then
		cat "$WORK/$name.dump.err" >&2
		fail "$name: faultline dump $WORK/$name exited $rc"
	fi
	echo "ok $name: faultline dump exit status 0"
	if [ -s "$WORK/$name.dump.err" ]; then
		cat "$WORK/$name.dump.err" >&2
		fail "$name: faultline dump warned about the recording of a crash the runtime flushed"
	fi
	echo "ok $name: faultline dump printed no warning"
	local lines
	lines=$(grep -vc '^#' "$WORK/$name.dump" || true)
	check_eq "$name dump fault lines (= faults_total of stats.json)" "$lines" "$total"
	if [ "$all_stacks" = yes ]; then
		local bare
		bare=$(grep -v '^#' "$WORK/$name.dump" | grep -c ' stack=-$' || true)
		check_stackless "$name" "$name fault lines without a stack" "$bare"
	fi
	check_stats "$name" --local $((local * MIB)) --max $((max * MIB)) --procs 1
}

fatal_case segv segv 139 yes
fatal_case abort abort 134 yes
# fifo: the helper thread's cyclic passes over 8 MiB refault every page under it (the count of
# touches is a floor for the faults); the adaptive clock, evicting directly in address order,
# keeps a few pages of a cyclic scan (8,190 faults for 8,192 touches seen once)
for i in 1 2 3; do
	fatal_case "segv-thread-$i" segv-thread 139 no --policy fifo
done
