#!/usr/bin/env bash
# rel_kill_stacks: a program killed with SIGKILL keeps the stacks of its faults. Stacks and
# contexts reach the files on the same ~100 ms cadence as the fault records (the handlers' own
# streams with their records, the threads' streams by handler 0), so in the recording of a
# program killed while it faults at tight -L, at least 99 % of the fault records `dump` reads
# have a stack (issue: SIGKILL lost every stack, all faults were <no stack>).
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted fill

"$FAULTLINE" record -q -o "$WORK/kill" --force -L 16 -M 1024 -- "$PLANTED/fill" 512 >"$WORK/kill.out" 2>"$WORK/kill.err" &
rec=$!
# wait until the program has faulted for a while (records on disk), then kill the program itself
prog=""
for i in $(seq 600); do
	sleep 0.1
	[ -n "$prog" ] || prog=$(pgrep -P "$rec" -f "$PLANTED/fill" | head -n 1)
	# records on disk (the whole frames of format 3's faults file)
	f=$(ls "$WORK"/kill/*/faults 2>/dev/null | head -n 1)
	[ -n "$prog" ] && [ -n "$f" ] && [ "$(trace_records "$f")" -gt 20000 ] && break
done
[ -n "$prog" ] || fail "the program never started"
kill -KILL "$prog"
rc=0; wait "$rec" || rc=$?
check_eq "record's exit status after SIGKILL of the program" "$rc" 137
"$FAULTLINE" dump "$WORK/kill" >"$WORK/kill.dump" 2>"$WORK/kill.dump.err" || fail "dump failed: $(cat "$WORK/kill.dump.err")"
total=$(grep -cv '^#' "$WORK/kill.dump")
bare=$(grep -v '^#' "$WORK/kill.dump" | grep -c ' stack=-$')
say "faults read back: $total, without a stack: $bare"
check_ge "fault records read back after SIGKILL" "$total" 20000
check_ge "faults with a stack, in per mille of all" "$(( (total - bare) * 1000 / total ))" 990
