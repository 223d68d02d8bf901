#!/usr/bin/env bash
# trace_read_live: a recording is read while it is still being written (issue 13). `faultline report`
# on the recording of a program that is still running succeeds (exit 0) and counts what is on disk:
# at least the complete fault records the file held just before report started, at most those it
# held just after report ended (the file only grows). Then `record` is killed (the program dies
# with it) and the cut recording still reads.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted fill

# complete fault records in a faults file now (the whole frames of format 3's faults file)
records_on_disk() {
	[ -f "$1" ] || return 1
	trace_records "$1"
}

"$FAULTLINE" record -q -o "$WORK/rec" --force -L 16 -M 2048 -- "$PLANTED/fill" 1024 >/dev/null 2>"$WORK/rec.err" &
rec=$!
faults=""
for i in $(seq "$(scaled 300)"); do
	sleep 0.1
	faults=$(ls "$WORK"/rec/*/faults 2>/dev/null | head -n 1)
	[ -n "$faults" ] && [ "$(records_on_disk "$faults")" -ge 1000 ] && break
	kill -0 "$rec" 2>/dev/null || break
done
kill -0 "$rec" 2>/dev/null || fail "record ended before the test could read its recording: $(tail -n 3 "$WORK/rec.err")"
[ -n "$faults" ] || { kill -KILL "$rec"; fail "no faults file appeared"; }
[ ! -e "$(dirname "$faults")/stats.json" ] || { kill -KILL "$rec"; fail "stats.json exists: the program already ended"; }

before=$(records_on_disk "$faults")
RC=0
"$FAULTLINE" report "$WORK/rec" >"$WORK/report.out" 2>"$WORK/report.err" || RC=$?
after=$(records_on_disk "$faults")
still_running=0
kill -0 "$rec" 2>/dev/null && still_running=1
kill -KILL "$rec" 2>/dev/null
wait "$rec" 2>/dev/null
[ "$RC" = 0 ] || fail "report of a recording in progress: exit $RC: $(head -c 400 "$WORK/report.err")"
[ "$still_running" = 1 ] || say "note: record ended while report ran (the checks below still hold)"
counted=$(sed -n 's/^# faults: *\([0-9,]*\).*/\1/p' "$WORK/report.out" | tr -d ,)
is_int "$counted" || fail "report printed no fault count: $(head -n 12 "$WORK/report.out")"
[ "$counted" -ge "$before" ] && [ "$counted" -le "$after" ] ||
	fail "report counted $counted faults; the file held $before complete records before and $after after"
grep -q '^# warning: .*no stats.json' "$WORK/report.out" || fail "report did not warn that the trace may be cut: $(grep warning "$WORK/report.out")"
echo "ok: report read the recording in progress: $counted faults ($before on disk before, $after after)"

"$FAULTLINE" report "$WORK/rec" >/dev/null 2>"$WORK/report2.err" || fail "report of the killed recording failed: $(head -c 400 "$WORK/report2.err")"
echo "ok: the recording cut by SIGKILL reads"
