#!/usr/bin/env bash
# rt_exit_codes: `record` exits with the program's status: N for exit(N) and _exit(N), 128 + N when
# the program dies of signal N (tests/planted/exit_code.c, which first fills 8 MiB of heap, so with
# -L 4 it ends with evicted pages). Every process that does not die of SIGKILL must leave a complete
# stats.json and trace (trace.h: stats.json is absent only after SIGKILL; design: flushed on exit and
# on fatal signals), checked with check_stats. The recording keeps how the command ended (DIR/exit:
# "exit N" or "signal N"), and report's header says it; read while record still runs, the header
# says the recording is in progress. Core dumps are disabled for the run.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted exit_code
ulimit -c 0

local=4 max=256
run_case() {  # NAME WANT_STATUS HAS_STATS ARGS... (a status of 128 + N comes from signal N when ARGS
              # start with signal, vfork-signal or signal-dfl)
	local name=$1 want=$2 has_stats=$3; shift 3
	run_record "$name" -L "$local" -M "$max" -- "$PLANTED/exit_code" "$@"
	if [ "$RC" -ne "$want" ]; then
		show_err "$name"
		fail "$name: faultline record exited $RC, want $want (exit_code $*)"
	fi
	echo "ok $name: exit status $RC"
	# the recording keeps how the command ended, and report says it
	local kept want_line
	if [ "${1#*signal}" != "$1" ]; then
		kept="signal $((want - 128))" want_line="killed by SIG$(kill -l $((want - 128))) (signal $((want - 128)))"
	else
		kept="exit $want" want_line="exit status $want"
	fi
	[ "$(cat "$WORK/$name/exit" 2>/dev/null)" = "$kept" ] ||
		fail "$name: DIR/exit holds [$(cat "$WORK/$name/exit" 2>/dev/null)], want [$kept]"
	"$FAULTLINE" report "$WORK/$name" >"$WORK/$name.report" 2>&1 || true
	grep -qx "# command ended:   $want_line" "$WORK/$name.report" ||
		fail "$name: report's header has [$(grep 'command ended' "$WORK/$name.report")], want [$want_line]"
	[ "$has_stats" = yes ] || return 0
	check_stats "$name" --local $((local * MIB)) --max $((max * MIB)) --procs 1
}

for n in 0 1 3 42 255; do
	run_case "exit-$n" "$n" yes "$n"
done
run_case "_exit-7" 7 yes _exit 7
run_case "_exit-0" 0 yes _exit 0
run_case "signal-TERM" $((128 + 15)) yes signal TERM
# a vfork child, which shares the process's memory, dies of SIGTERM first: it must not claim the
# shutdown (before the fix, the parent's own SIGTERM then waited for ever for it)
run_case "vfork-signal-TERM" $((128 + 15)) yes vfork-signal TERM
run_case "signal-INT" $((128 + 2)) yes signal INT
run_case "signal-USR1" $((128 + 10)) yes signal USR1
run_case "signal-SEGV" $((128 + 11)) yes signal SEGV
run_case "signal-ABRT" $((128 + 6)) yes signal ABRT
run_case "signal-KILL" $((128 + 9)) no signal KILL
# a program that resets its own disposition to SIG_DFL and then dies of the signal (GNU sort's
# cleanup-and-reraise pattern): same status, and still a stats.json
run_case "signal-dfl-TERM" $((128 + 15)) yes signal-dfl TERM
run_case "signal-dfl-SEGV" $((128 + 11)) yes signal-dfl SEGV

# The runtime cannot start (its region does not fit under `ulimit -v`): the program runs untraced.
# A program that exits 0 then gives record's own 70 (no trace is no success); a failing one still
# passes its status through.
untraced_case() {  # NAME WANT_STATUS ARGS...
	local name=$1 want=$2; shift 2
	RC=0
	(ulimit -v 3000000; record "$WORK/$name" -M 8G -- "$PLANTED/exit_code" "$@") >"$WORK/$name.out" 2>"$WORK/$name.err" || RC=$?
	[ "$RC" -eq "$want" ] || { show_err "$name"; fail "$name: record exited $RC, want $want"; }
	grep -q "the runtime could not start" "$WORK/$name.err" || { show_err "$name"; fail "$name: no message that the runtime did not start"; }
	grep -q "no process wrote a trace" "$WORK/$name.err" || { show_err "$name"; fail "$name: no message that nothing was traced"; }
	echo "ok $name: exit status $RC, and the messages say nothing was traced"
}
untraced_case untraced-exit-0 70 0
untraced_case untraced-exit-3 3 3

# Read while record still runs (it holds its lock on the directory): report says the recording is
# in progress, never that a process was killed or that records are lost; once record has ended,
# the same report says how the command ended.
"$FAULTLINE" record -q -o "$WORK/live" --force -L "$local" -M "$max" -- sh -c "$PLANTED/exit_code 0; sleep 6" \
	>"$WORK/live.out" 2>"$WORK/live.err" &
live_pid=$!
for _ in $(seq 1 100); do
	ls "$WORK/live"/[0-9]*/meta.json >/dev/null 2>&1 && break
	sleep 0.05
done
"$FAULTLINE" report "$WORK/live" >"$WORK/live.report" 2>&1 || fail "report of a recording in progress exited $?: $(tail -3 "$WORK/live.report")"
grep -q '^# command ended:   not yet: the recording is in progress' "$WORK/live.report" ||
	fail "report of a recording in progress: $(grep 'command ended' "$WORK/live.report")"
if grep -q 'killed\|records are missing\|records lost:    at least' "$WORK/live.report"; then
	fail "report of a recording in progress speaks of kills or lost records: $(grep 'killed\|missing\|records lost' "$WORK/live.report")"
fi
wait "$live_pid" || fail "record of the live case exited $?"
"$FAULTLINE" report "$WORK/live" >"$WORK/live.report" 2>&1 || fail "report after the run exited $?"
grep -q '^# command ended:   exit status 0' "$WORK/live.report" || fail "report after the run: $(grep 'command ended' "$WORK/live.report")"
echo "ok a recording read while record runs is said to be in progress; once done, its ending is known"
