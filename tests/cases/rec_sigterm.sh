#!/usr/bin/env bash
# rec_sigterm: nothing is lost when a two-thread run is stopped by SIGTERM in its middle, however
# the signal comes: to the program alone, to `record` and the program together (as a script's
# `kill` of both), or to their whole process group (as `timeout`, a batch scheduler or a terminal's
# Ctrl-C send it, which `record` then forwards: the program takes SIGTERM twice). Each time record
# exits 143 (the program's status) after the program's runtime wrote its trace, stats.json is there,
# and `dump` lists exactly the faults stats.json counts, without a warning about the trace. Last, a
# program that ignores SIGINT (inherited, as a background job's) gets a SIGINT through `record` and
# then, a second and more later, a SIGTERM: only the same signal again cuts the run short with
# SIGKILL (record once took any second signal for a repeat: exit 137 and no stats.json).
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted threads

# start_run NAME [WRAPPER...]: record of NAME started in a process group of its own (through
# WRAPPER, which execs it); sets REC and PROG.
start_run() {
	local name=$1; shift
	rm -rf "$WORK/$name"
	setsid "$@" "$FAULTLINE" record -q -o "$WORK/$name" -L 16M -- "$PLANTED/threads" 2 1024 \
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

start_run int-then-term sh -c 'trap "" INT; exec "$@"' sh
kill -INT "$REC"
sleep 1.5
kill -TERM "$REC"
check_run int-then-term
