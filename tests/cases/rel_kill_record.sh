#!/usr/bin/env bash
# rel_kill_record: `faultline record` killed with SIGKILL takes the program with it (the child
# has PR_SET_PDEATHSIG = SIGKILL): no orphan goes on running and recording. The recording keeps
# what was written until then and reads as cut, not as an error.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted fill

"$FAULTLINE" record -q -o "$WORK/rec" --force -L 16 -M 2048 -- "$PLANTED/fill" 1024 >/dev/null 2>"$WORK/rec.err" &
rec=$!
prog=""
for i in $(seq 300); do
	sleep 0.1
	prog=$(pgrep -P "$rec" -f "$PLANTED/fill" | head -n 1)
	[ -n "$prog" ] && [ -s "$(ls "$WORK"/rec/*/faults 2>/dev/null | head -n 1)" ] && break
done
[ -n "$prog" ] || fail "the program never started"
kill -KILL "$rec"
wait "$rec" 2>/dev/null
for i in $(seq 50); do
	st=$(awk '{print $3}' "/proc/$prog/stat" 2>/dev/null)
	[ -z "$st" ] || [ "$st" = Z ] && break
	sleep 0.1
done
if [ -n "$st" ] && [ "$st" != Z ]; then
	kill -KILL "$prog"
	fail "the program (pid $prog, state $st) still ran 5 s after record was killed"
fi
echo "ok: the program died with record"
"$FAULTLINE" dump "$WORK/rec" >/dev/null 2>"$WORK/dump.err" || fail "dump of the cut recording failed: $(cat "$WORK/dump.err")"
echo "ok: the cut recording reads ($(grep -c . "$WORK/dump.err") warnings)"
