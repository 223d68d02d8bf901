#!/usr/bin/env bash
# rec_sigterm: nothing is lost when a two-thread run is stopped by SIGTERM in its middle, however
# the signal comes: to the program alone, to `record` and the program together (as a script's
# `kill` of both), or to their whole process group (as `timeout`, a batch scheduler or a terminal's
# Ctrl-C send it). Each time record exits 143 (the program's status) after the program's runtime
# wrote its trace, stats.json is there, and `dump` lists exactly the faults stats.json counts,
# without a warning about the trace. And the program takes a signal sent to record's whole process
# group once, as natively: without a controlling terminal (setsid here, as in a batch job) record
# runs it in a group of its own and forwards the signal to it once (before, the program took the
# group's copy and record's: a bash that counts its SIGTERMs counted 2).
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted threads

# started NAME: record of NAME started in a process group of its own; sets REC and PROG.
start_run() {
	local name=$1
	rm -rf "$WORK/$name"
	setsid "$FAULTLINE" record -q -o "$WORK/$name" -L 16M -- "$PLANTED/threads" 2 1024 \
		>"$WORK/$name.out" 2>"$WORK/$name.err" &
	REC=$!
	PROG=""
	# the middle of the run: the program is traced and its faults file has grown past 64 KiB
	for _ in $(seq 1 $(( $(scaled 60) * 10 ))); do
		[ -n "$PROG" ] || PROG=$(pgrep -P "$REC" || true)
		local f
		f=$(ls "$WORK/$name"/*/faults 2>/dev/null | head -n 1)
		if [ -n "$PROG" ] && [ -n "$f" ] && [ "$(stat -c %s "$f")" -gt 65536 ]; then
			return 0
		fi
		kill -0 "$REC" 2>/dev/null || break
		sleep 0.1
	done
	show_err "$name"
	fail "$name: the run did not get to its middle (record $REC, program ${PROG:-none})"
}

check_run() {
	local name=$1 rc=0
	wait "$REC" || rc=$?
	[ "$rc" -eq 143 ] || { show_err "$name"; fail "$name: record exited $rc, want 143 (SIGTERM)"; }
	echo "ok $name: record exited 143"
	local total dropped dumped
	total=$(stat_of "$name" faults_total)
	dropped=$(stat_of "$name" records_dropped)
	check_eq "$name: records_dropped" "$dropped" 0
	"$FAULTLINE" dump "$WORK/$name" >"$WORK/$name.dump" 2>"$WORK/$name.dump.err" ||
		{ cat "$WORK/$name.dump.err" >&2; fail "$name: dump failed"; }
	dumped=$(grep -vc '^#' "$WORK/$name.dump" || true)
	check_eq "$name: faults dump lists (stats.json faults_total)" "$dumped" "$total"
	if grep -q warning "$WORK/$name.dump.err"; then
		cat "$WORK/$name.dump.err" >&2
		fail "$name: dump warned about the trace"
	fi
	echo "ok $name: dump without warnings"
}

start_run program-alone
kill -TERM "$PROG"
check_run program-alone

start_run record-and-program
kill -TERM "$REC" "$PROG"
check_run record-and-program

start_run process-group
kill -TERM -- "-$REC"
check_run process-group

# A program that counts its SIGTERMs and goes on: a signal to record's group reaches it once.
rm -rf "$WORK/count"
setsid "$FAULTLINE" record -q -o "$WORK/count" -- bash -c 'n=0; trap "n=\$((n + 1))" TERM; echo ready >"$1"
	for _ in $(seq 1 30); do sleep 0.1; done; echo "signals $n"' bash "$WORK/count.ready" >"$WORK/count.out" 2>"$WORK/count.err" &
REC=$!
for _ in $(seq 1 $(( $(scaled 30) * 10 ))); do [ -s "$WORK/count.ready" ] && break; sleep 0.1; done
[ -s "$WORK/count.ready" ] || { kill -KILL -- "-$REC" 2>/dev/null; fail "count: the program did not start"; }
PROG=$(pgrep -P "$REC" || true)
pgid=$(ps -o pgid= -p "${PROG:-0}" | tr -d ' ')
# whether both copies land before the program's handler runs is a race; the group is not
[ -n "$PROG" ] && [ "$pgid" = "$PROG" ] ||
	{ kill -KILL -- "-$REC" 2>/dev/null; fail "count: the program (${PROG:-none}) is in process group ${pgid:-?}, want its own"; }
echo "ok count: without a terminal the program runs in a process group of its own ($pgid; record's is $REC)"
kill -TERM -- "-$REC"
rc=0; wait "$REC" || rc=$?
[ "$rc" -eq 0 ] && grep -qx "signals 1" "$WORK/count.out" ||
	{ show_err count; fail "count: exit $rc, output '$(cat "$WORK/count.out")', want 'signals 1' and exit 0"; }
echo "ok count: a signal to record's process group reached the program once"
