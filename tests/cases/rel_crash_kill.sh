#!/usr/bin/env bash
# rel_crash_kill: a multi-threaded program dies while its threads fault (tests/planted/rel_crash.c:
# 4 workers write one word per page of their own 4 MiB, pass after pass, under -L 4, so they
# refault all the time; once each has made 2 passes, worker 0 ends the process):
#   segv       worker 0 stores through NULL        -> record exits 139
#   abort      worker 0 calls abort()              -> 134
#   exit 7     worker 0 calls _exit(7)             -> 7
#   selfkill   worker 0 sends SIGKILL to its process, 1.5 s in at the earliest (the runtime writes
#              an open frame of records 0.5 s after its first record; a quicker kill left none)
#                                                   -> 137
#   spin       killed with SIGKILL from outside, with a forked (traced) child that dies with it
#              (PR_SET_PDEATHSIG)                   -> 137
# For each: the status equals the native run's, and stdout too. `faultline dump` reads the trace
# written up to that point: exit 0 always; after SIGSEGV, SIGABRT and _exit (all of which the
# runtime sees coming) without any warning, with exactly faults_total fault lines, and check_stats
# holds; after SIGKILL, each process directory either has no stats.json or dump warns that its
# files are cut. Afterwards nothing is left: no process of the program (pgrep, 5 s of grace for
# the kernel and init to reap), no temporary file in the run's private TMPDIR or in /dev/shm, no
# *.tmp file in the recording. Core dumps are disabled.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted rel_crash
ulimit -c 0
local=4 max=256
prog=$PLANTED/rel_crash
mkdir -p "$WORK/tmp"
shm_before=$(ls -A /dev/shm 2>/dev/null | sort)

no_leftovers() {  # NAME
	local name=$1 i left=""
	for i in $(seq 50); do
		# zombies (state Z) are dead already; anything else is a leftover
		left=$(pgrep -f "^$prog " | while read -r p; do
			st=$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)
			[ -n "$st" ] && [ "$st" != Z ] && echo "$p($st)"
		done)
		[ -z "$left" ] && break
		sleep 0.1
	done
	if [ -n "$left" ]; then
		kill -KILL $(echo "$left" | sed 's/([A-Za-z]*)//g') 2>/dev/null
		fail "$name: processes of the program still alive 5 s after record exited: $left"
	fi
	pgrep -f "record -q -o $WORK/$name " >/dev/null && fail "$name: faultline record is still running"
	[ -z "$(ls -A "$WORK/tmp")" ] || fail "$name: files left in TMPDIR: $(ls -A "$WORK/tmp" | tr '\n' ' ')"
	local tmps
	tmps=$(find "$WORK/$name" -name '*.tmp' 2>/dev/null)
	[ -z "$tmps" ] || fail "$name: temporary files left in the recording: $tmps"
	local shm_now new
	shm_now=$(ls -A /dev/shm 2>/dev/null | sort)
	new=$(comm -13 <(echo "$shm_before") <(echo "$shm_now") | grep -i -e faultline -e '^fl' || true)
	[ -z "$new" ] || fail "$name: new files in /dev/shm: $new"
	echo "ok $name: no process, temporary file or *.tmp left"
}

# dump_after NAME clean|killed: faultline dump of the recording
dump_after() {
	local name=$1 how=$2 rc=0
	"$FAULTLINE" dump "$WORK/$name" >"$WORK/$name.dump" 2>"$WORK/$name.dump.err" || rc=$?
	if [ "$rc" -ne 0 ]; then
		cat "$WORK/$name.dump.err" >&2
		fail "$name: faultline dump exited $rc, want 0 (the trace written up to the end must be readable)"
	fi
	echo "ok $name: faultline dump exit status 0"
	if [ "$how" = clean ]; then
		if [ -s "$WORK/$name.dump.err" ]; then
			cat "$WORK/$name.dump.err" >&2
			fail "$name: faultline dump warned about the recording of an end the runtime saw coming"
		fi
		echo "ok $name: faultline dump printed no warning"
		check_stats "$name" --local $((local * MIB)) --max $((max * MIB)) --procs 1
		check_eq "$name dump fault lines (= faults_total of stats.json)" \
			"$(grep -vc '^#' "$WORK/$name.dump" || true)" "$(stat_of "$name" faults_total)"
	else
		local d
		for d in "$WORK/$name"/*/; do
			if [ -f "$d/stats.json" ] && ! grep -q "$(basename "$d")" "$WORK/$name.dump.err"; then
				fail "$name: $(basename "$d") has a stats.json and dump did not warn about it after SIGKILL"
			fi
		done
		echo "ok $name: after SIGKILL every process directory lacks stats.json or is reported cut"
		[ "$(grep -vc '^#' "$WORK/$name.dump" || true)" -gt 0 ] || fail "$name: no fault in the recording"
		echo "ok $name: $(grep -vc '^#' "$WORK/$name.dump") faults readable"
	fi
}

crash_case() {  # NAME WANT_STATUS clean|killed ARGS...
	local name=$1 want=$2 how=$3; shift 3
	local nrc=0
	say "native: $prog $*"
	"$prog" "$@" >"$WORK/$name.native" 2>"$WORK/$name.native.err" || nrc=$?
	check_eq "$name: native exit status" "$nrc" "$want"
	run_record "$name" -L "$local" -M "$max" -- "$prog" "$@"
	if [ "$RC" -ne "$want" ]; then show_err "$name"; fail "$name: faultline record exited $RC, want $want"; fi
	echo "ok $name: faultline record exit status $RC"
	same_output "$name" "$name"
	no_leftovers "$name"
	dump_after "$name" "$how"
}

spin_case() {  # SIGKILL from outside while every thread (and a forked child) faults
	local name=spin i rec ppid cpid
	say "faultline record -q -o $WORK/$name --force -L $local -M $max -- $prog spin; then SIGKILL"
	record "$WORK/$name" -L "$local" -M "$max" -- "$prog" spin >"$WORK/$name.out" 2>"$WORK/$name.err" &
	rec=$!
	for i in $(seq "$(scaled 300)"); do grep -q ready "$WORK/$name.out" 2>/dev/null && break; sleep 0.1; done
	if ! grep -q ready "$WORK/$name.out"; then
		kill -KILL $(pgrep -f "^$prog ") "$rec" 2>/dev/null
		show_err "$name"
		fail "$name: the program did not get ready within 30 s"
	fi
	read -r _ _ _ ppid cpid <"$WORK/$name.out"
	sleep 0.5
	kill -KILL "$ppid"
	RC=0
	wait "$rec" || RC=$?
	[ "$RC" -eq 137 ] || { show_err "$name"; fail "$name: faultline record exited $RC after the program was killed with SIGKILL, want 137"; }
	echo "ok $name: faultline record exit status 137 (program pid $ppid killed, its child $cpid dies with it)"
	no_leftovers "$name"
	check_eq "$name process directories" "$(proc_dirs "$WORK/$name" | wc -l)" 2
	dump_after "$name" killed
}

# Each case runs in a subshell, so one failing case does not hide the others' results.
export TMPDIR=$WORK/tmp
failed=()
( crash_case segv 139 clean segv ) || failed+=(segv)
( crash_case abort 134 clean abort ) || failed+=(abort)
( crash_case exit-7 7 clean exit 7 ) || failed+=(exit-7)
( crash_case selfkill 137 killed selfkill ) || failed+=(selfkill)
( spin_case ) || failed+=(spin)
[ ${#failed[@]} -eq 0 ] || fail "cases that failed: ${failed[*]}"
