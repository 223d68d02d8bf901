#!/usr/bin/env bash
# tests/cases/record_cli.sh: end-to-end checks of the `faultline` command line and of
# `faultline record`'s behaviour around the traced program: help and usage errors, command
# lookup (127/126), static and set-user-ID binaries refused, output directory rules
# (refuse non-empty, --force removes only an earlier recording's pid directories, those holding its
# meta.json or stats.json and nothing but its files, and then visualize's files), the child's environment
# (LD_PRELOAD appended, FAULTLINE_*), arguments passed exactly, exit status passthrough,
# SIGTERM forwarding, a process that outlives the command said to be running, and nothing
# written to stdout by record itself.
# Runs through the real runtime (build/libfaultline.so, or $FAULTLINE_LIB when set).
# Exit 0 when every check passes, 1 otherwise (each failure printed), 77 when the runtime
# is missing or userfaultfd is unavailable (after running the checks that need neither).
set -u

ROOT=${FAULTLINE_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
BUILD=${FAULTLINE_BUILD:-$ROOT/build}
F=${FAULTLINE:-$BUILD/faultline}
LIB=${FAULTLINE_LIB:-$BUILD/libfaultline.so}

[ -x "$F" ] || { echo "FAIL: $F not built (run make)"; exit 1; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/record_cli.XXXXXX") || { echo "FAIL: mktemp -d"; exit 1; }
# scaled SECONDS: SECONDS times the load factor tests/run.sh measured (as lib.sh's, which this case
# does not source: it keeps its own work directory).
scaled() { awk -v s="$1" -v f="${FAULTLINE_TEST_SCALE:-1}" 'BEGIN{v=s*f; printf "%d", (v==int(v))?v:int(v)+1}'; }
children=()
cleanup() {
	local pid
	for pid in "${children[@]}"; do kill -KILL "$pid" 2>/dev/null; done
	chmod -R u+rwx "$WORK" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
cd "$WORK" || exit 1

failures=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; failures=$((failures + 1)); }

# run CMD...: runs it with stdin from /dev/null; sets rc, out (stdout), err (stderr).
run() {
	"$@" <"/dev/null" >"$WORK/.out" 2>"$WORK/.err"
	rc=$?
	out=$(cat "$WORK/.out")
	err=$(cat "$WORK/.err")
}

# expect NAME WANT_RC [TEXT_IN_STDERR]: checks the last run.
expect() {
	local name=$1 want=$2 text=${3:-}
	if [ "$want" = nonzero ] && [ "$rc" -eq 0 ]; then
		bad "$name: exit 0, want non-zero; stderr: $err"
	elif [ "$want" != nonzero ] && [ "$rc" -ne "$want" ]; then
		bad "$name: exit $rc, want $want; stderr: $err"
	elif [ -n "$text" ] && [[ $err != *"$text"* ]]; then
		bad "$name: stderr lacks '$text': $err"
	else
		ok "$name"
	fi
}

# ---------------------------------------------------------------- checks without the runtime

run "$F" record --help
if [ "$rc" -eq 0 ] && [[ $out == *"-L"* ]] && [[ $out == *"-M"* ]] && [[ $out == *--local* ]]; then
	ok "record --help: exit 0, mentions -L and -M"
else
	bad "record --help: exit $rc, stdout: $out"
fi
run "$F" --help
[ "$rc" -eq 0 ] && [[ $out == *record* ]] && ok "--help lists record" || bad "--help: exit $rc: $out"
run "$F" help record
[ "$rc" -eq 0 ] && [[ $out == *--local* ]] && ok "help record" || bad "help record: exit $rc"
run "$F" --version
[ "$rc" -eq 0 ] && [[ $out == "faultline "* ]] && ok "--version" || bad "--version: exit $rc: $out"
run "$F"
expect "no arguments: usage, exit 2" 2 "usage:"
run "$F" --version extra
expect "--version with an argument: exit 2" 2 "takes no argument"
if [ -w /dev/full ]; then
	for args in "--help" "--version" "record --help"; do
		rc=0
		# shellcheck disable=SC2086
		"$F" $args >/dev/full 2>"$WORK/.err" || rc=$?
		[ "$rc" -eq 1 ] && grep -q "writing standard output" "$WORK/.err" && ok "$args > /dev/full: exit 1" ||
			bad "$args > /dev/full: exit $rc, want 1 and a message: $(cat "$WORK/.err")"
	done
	# a verb that says so itself: one message, not a second from main
	"$F" record -q -o "$WORK/fullrec" -- /bin/true >/dev/null 2>&1 || bad "record of true for dump > /dev/full"
	rc=0; "$F" dump "$WORK/fullrec" >/dev/full 2>"$WORK/.err" || rc=$?
	[ "$rc" -eq 1 ] && [ "$(wc -l <"$WORK/.err")" -eq 1 ] && grep -q "No space left on device" "$WORK/.err" &&
		ok "dump > /dev/full: exit 1, one message" || bad "dump > /dev/full: exit $rc: $(cat "$WORK/.err")"
fi
run "$F" frobnicate
expect "unknown verb: exit 2" 2 "unknown command 'frobnicate'"

run "$F" record -M 64M
expect "missing command" 2 "no command"
run "$F" record -M 64M --
expect "nothing after --" 2 "no command"
run "$F" record -M 64M -- no-such-command-faultline-test
expect "nonexistent command: 127" 127 "cannot run 'no-such-command-faultline-test': No such file or directory"
run "$F" record -M 64M -- ./missing/prog
expect "nonexistent path: 127" 127 "No such file or directory"
printf '#!/bin/sh\nexit 0\n' >"$WORK/not-executable"
chmod 644 "$WORK/not-executable"
run "$F" record -M 64M -- "$WORK/not-executable"
expect "not executable: 126" 126 "Permission denied"
run "$F" record -M 64M -- "$WORK"
expect "directory: 126" 126 "cannot run"
# a script whose interpreter is missing: named, with a native run's 127, before any directory is made
printf '#!/nonexistent/faultline-interp\necho x\n' >"$WORK/bad-interp"
chmod 755 "$WORK/bad-interp"
run "$F" record -M 64M -o "$WORK/bad-interp-rec" -- "$WORK/bad-interp"
expect "missing interpreter: 127" 127 "bad interpreter '/nonexistent/faultline-interp': No such file or directory"
[ ! -e "$WORK/bad-interp-rec" ] && ok "missing interpreter: no output directory made" ||
	bad "missing interpreter: the output directory was made"
run "$F" record -L 12Q -M 64M -- true
expect "bad size -L 12Q" 2 "12Q"
run "$F" record -M=-5 -- true
expect "negative size" 2 "invalid size"
run "$F" record -M 0 -- true
expect "-M 0" 2 "-M"
run "$F" record -L 128M -M 64M -- true
expect "-L > -M" 2 "larger than -M"
run "$F" record --pmu bogus -M 64M -- true
expect "--pmu with an unknown event" 2 "'bogus' is not a known event"
run "$F" record --pmu task-clock,bogus2 -M 64M -- true
expect "--pmu with an unknown second event" 2 "'bogus2' is not a known event"
if ! perf_ok=$(perf stat -e cycles true 2>&1) || [[ $perf_ok == *"not supported"* ]]; then
	run "$F" record --pmu cycles -M 64M -- true
	expect "--pmu with a hardware event this machine lacks" 2 "'cycles' is not available on this machine"
fi
run "$F" record --far tape:/tmp/x -M 64M -- true
expect "--far of an unknown kind" 2 "unknown far store 'tape:/tmp/x'"
run "$F" record --far file:/nonexistent-dir/x -M 64M -- true
expect "--far file: in a missing directory" 2 "directory /nonexistent-dir"
run "$F" record --far file:/dev/full -M 64M -- true
expect "--far file: on a character device: refused (no store in /dev)" 2 "/dev/full is a character device"
run "$F" record --far file:/proc -M 64M -- true
expect "--far file: where no file can be created (/proc): refused before the run" 2 "a file cannot be created there"
run "$F" record --far memcached:localhost:99999 -M 64M -- true
expect "--far memcached: with a port above 65535" 2 "port 99999 is not one"
run "$F" record --policy lru -M 64M -- true
expect "unknown policy" 2 "lru"
run "$F" record --frobnicate -M 64M -- true
expect "unknown option" 2 "unknown option '--frobnicate'"
[ ! -e "$WORK/faultline-true-"* ] 2>/dev/null && ok "no output directory created by refused runs" ||
	bad "a refused run created an output directory: $(ls "$WORK")"

static_note=""
if printf 'int main(void) { return 0; }\n' >"$WORK/st.c" &&
	gcc -static -o "$WORK/static-prog" "$WORK/st.c" 2>/dev/null; then
	run "$F" record -M 64M -- "$WORK/static-prog"
	expect "static binary refused" 2 "statically linked"
	printf '#!%s\n' "$WORK/static-prog" >"$WORK/static-script"
	chmod 755 "$WORK/static-script"
	run "$F" record -M 64M -- "$WORK/static-script"
	expect "script with a static interpreter refused" 2 "interpreter"
else
	static_note="static binary check not run: gcc -static failed (libc6-dev's libc.a missing?)"
	echo "note $static_note"
fi

if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1; then
	cp /bin/true "$WORK/setuid-true" && chown nobody "$WORK/setuid-true" && chmod 4755 "$WORK/setuid-true"
	if findmnt -n -o OPTIONS -T "$WORK" 2>/dev/null | grep -qw nosuid; then
		echo "note setuid check not run: $WORK is mounted nosuid"
	else
		run "$F" record -M 64M -- "$WORK/setuid-true"
		expect "setuid binary owned by another user refused" 2 "set-user-ID"
	fi
else
	echo "note setuid check not run: needs root to give a file to another user"
fi

# ---------------------------------------------------------------- checks through the runtime

if [ ! -f "$LIB" ]; then
	[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
	echo "SKIP runtime library $LIB not built; the checks that run programs were skipped"
	exit 77
fi
export FAULTLINE_LIB=$LIB
LIB_ABS=$(realpath "$LIB")

run "$F" record -M 64M -- true
if [[ $err == *"userfaultfd is not available"* ]]; then
	[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
	echo "SKIP userfaultfd unavailable here: $err"
	exit 77
fi
expect "record true: exit 0" 0 "recording 'true' into faultline-true-"
[ -z "$out" ] && ok "record writes nothing to stdout" || bad "record wrote to stdout: $out"
[[ $err == *"next: faultline report faultline-true-"* ]] && ok "summary ends with the next command" ||
	bad "no 'next: faultline report' line: $err"
[[ $err == *"(local unlimited, max 64 MiB, clock)"* ]] && ok "banner states limits and policy" ||
	bad "banner: $err"
dirs=(faultline-true-*)
if [ "${#dirs[@]}" -eq 1 ] && [ -d "${dirs[0]}" ]; then
	ok "default output directory ${dirs[0]} created in the current directory"
	if ls "${dirs[0]}"/*/stats.json >/dev/null 2>&1 && [[ $err == *"processes traced  1"* ]]; then
		ok "summary read DIR/<pid>/stats.json"
	else
		bad "no stats.json or no 'processes traced' line (runtime?): $(ls -R "${dirs[0]}"); $err"
	fi
else
	bad "default output directory: found ${dirs[*]}"
fi

run "$F" record -q -M 64M -o "$WORK/quiet" -- true
[ "$rc" -eq 0 ] && [ -z "$err" ] && ok "-q: no banner, no summary" || bad "-q: exit $rc, stderr: $err"

run "$F" record -M 64M -o "$WORK/status3" -- sh -c 'exit 3'
expect "exit status passed through (3)" 3
run "$F" record -M 64M -o "$WORK/status143" -- sh -c 'kill -TERM $$'
expect "killed by SIGTERM: 143" 143 "killed by signal 15"
run "$F" record -M 64M -o "$WORK/status70" -- sh -c 'exit 70'
expect "exit 70 passed through" 70
# a background job that outlives the command is said to be running, not killed. Made deterministic:
# the job (a subshell, no exec) marks that it runs (its runtime has written its directory by then),
# the command waits for the mark and exits, and the job waits on a FIFO until the checks are done
mkfifo "$WORK/bg.fifo"
run "$F" record -M 64M -o "$WORK/bg" -- sh -c '(: >"$1"; read x <"$2") & while [ ! -e "$1" ]; do sleep 0.05; done' \
	sh "$WORK/bg.mark" "$WORK/bg.fifo"
expect "a process outliving the command: still running" 0 "still running (it outlived the command)"
[[ $err != *"process killed?"* ]] && ok "a process outliving the command: not called killed" ||
	bad "a process outliving the command called killed: $err"
# ... and the recording keeps that, so report says it too (before: "the process was killed")
grep -q '^running [0-9]' "$WORK/bg/exit" 2>/dev/null && ok "DIR/exit names the process that outlived the command" ||
	bad "DIR/exit: $(cat "$WORK/bg/exit")"
run "$F" report "$WORK/bg"
[[ $out == *"still running when record ended"* && $out != *"was killed"* ]] &&
	ok "report: the process outlived the command, not killed" || bad "report on the outlived process: $(grep -E 'lost|warning' <<<"$out") $err"
echo >"$WORK/bg.fifo" # the job ends

run "$F" record -q -M 64M -o "$WORK/args" -- sh -c 'printf "[%s]" "$@"' argv0 "" "a b" '$HOME' '*' "it's"
want='[][a b][$HOME][*][it'"'"'s]'
[ "$rc" -eq 0 ] && [ "$out" = "$want" ] && ok "arguments passed exactly (empty ones kept)" ||
	bad "arguments: exit $rc, got '$out', want '$want'"

# Existing output directory.
mkdir -p "$WORK/old/123" "$WORK/old/notes" "$WORK/keep-target"
touch "$WORK/old/README" "$WORK/old/123/faults" "$WORK/old/123/meta.json" "$WORK/old/notes/a"
# named like pids, not a recording's: a note, nothing, a meta.json among one's own files
mkdir -p "$WORK/old/2024" "$WORK/old/2025" "$WORK/old/2026" && echo mine >"$WORK/old/2024/notes.txt"
echo '{}' >"$WORK/old/2026/meta.json" && echo mine >"$WORK/old/2026/notes.txt"
# what `faultline visualize` wrote from the old trace (stale once it is replaced)
touch "$WORK/old/flamegraph.svg" "$WORK/old/flamegraph-refault.svg" "$WORK/old/faults.folded" \
	"$WORK/old/faults-alloc.folded" "$WORK/old/ranges.txt" "$WORK/old/heatmap.svg" "$WORK/old/timeline.svg" \
	"$WORK/old/report.html"
touch "$WORK/old/flamegraph-mine.svg"   # a user's own file, not visualize's: kept
ln -s "$WORK/keep-target" "$WORK/old/456"
run "$F" record -M 64M -o "$WORK/old" -- true
expect "non-empty output directory refused" 2 "exists and is not empty"
[ -d "$WORK/old/123" ] && [ -f "$WORK/old/README" ] && ok "refusal touched nothing" ||
	bad "refusal removed files: $(ls -R "$WORK/old")"
run "$F" record -M 64M -o "$WORK/old" --force -- true
expect "--force accepted" 0 "removed 1 old process directory"
[[ $err == *"removed 8 files visualize made from the old trace"* ]] && ok "--force: says it removed visualize's 8 files" ||
	bad "--force: no line about visualize's files: $err"
if [ ! -e "$WORK/old/123" ] && [ -f "$WORK/old/README" ] && [ -f "$WORK/old/notes/a" ] &&
	[ -L "$WORK/old/456" ] && [ -d "$WORK/keep-target" ] && [ -f "$WORK/old/flamegraph-mine.svg" ] &&
	[ -f "$WORK/old/2024/notes.txt" ] && [ -d "$WORK/old/2025" ] && [ -f "$WORK/old/2026/notes.txt" ] &&
	[ -z "$(ls "$WORK/old" | grep -v '^flamegraph-mine\.svg$' | grep -E '\.(svg|folded)$|^ranges\.txt$|^report\.html$')" ]; then
	ok "--force removed only the pid directory and visualize's files (kept other files, dirs, symlinks)"
else
	bad "--force: $(ls -lR "$WORK/old")"
fi
# a folder of one's own (no recording in it): --force keeps everything, visualize's names included
mkdir -p "$WORK/mine/2025" && echo mine >"$WORK/mine/2025/notes.txt" && echo mine >"$WORK/mine/flamegraph.svg"
run "$F" record -M 64M -o "$WORK/mine" --force -- true
expect "--force into a folder that holds no recording" 0 ""
[ -f "$WORK/mine/2025/notes.txt" ] && [ -f "$WORK/mine/flamegraph.svg" ] &&
	ok "--force over a folder without a recording kept its pid-named folder and its flamegraph.svg" ||
	bad "--force removed a user's files: $(ls -lR "$WORK/mine")"
touch "$WORK/plain-file"
run "$F" record -M 64M -o "$WORK/plain-file" -- true
expect "output path is a file: refused" 2 "not a directory"
run "$F" record -q -M 64M -o "$WORK/deep/er/dir" -- true
[ "$rc" -eq 0 ] && [ -d "$WORK/deep/er/dir" ] && ok "-o creates parent directories" ||
	bad "-o deep: exit $rc: $err"

# The child's environment.
empty_so=""
if printf 'int faultline_test_empty_library;\n' >"$WORK/empty.c" &&
	gcc -shared -fPIC -o "$WORK/empty.so" "$WORK/empty.c" 2>/dev/null; then
	empty_so=$WORK/empty.so
	run env LD_PRELOAD="$empty_so" FAULTLINE_PMU=stale "$F" record -q -L 16M -M 64M -o "$WORK/env" -- env
	want_preload="LD_PRELOAD=$empty_so:$LIB_ABS"
	if [ "$rc" -eq 0 ] && grep -qxF "$want_preload" <<<"$out"; then
		ok "LD_PRELOAD appended: $want_preload"
	else
		bad "LD_PRELOAD: exit $rc, want '$want_preload', got: $(grep LD_PRELOAD <<<"$out") $err"
	fi
	grep -q '^FAULTLINE_PMU=' <<<"$out" && bad "a stale FAULTLINE_PMU leaked into the child" ||
		ok "no FAULTLINE_PMU without --pmu"
else
	echo "note LD_PRELOAD append check not run: cannot build a shared library with gcc"
fi
run env -u LD_PRELOAD "$F" record -q -L 16M -M 64M -c 2 --policy fifo -s 3 --stack-depth 20 \
	--alloc-sample 5 --pmu task-clock -o "$WORK/env2" -- env
for want in "LD_PRELOAD=$LIB_ABS" "FAULTLINE_DIR=$WORK/env2" "FAULTLINE_LOCAL_BYTES=16777216" \
	"FAULTLINE_MAX_BYTES=67108864" "FAULTLINE_HANDLERS=2" "FAULTLINE_POLICY=fifo" \
	"FAULTLINE_SAMPLE=3" "FAULTLINE_STACK_DEPTH=20" "FAULTLINE_ALLOC_SAMPLE=5" \
	"FAULTLINE_PMU=task-clock" "FAULTLINE_FAR=mem"; do
	grep -qxF "$want" <<<"$out" && ok "child environment has $want" ||
		bad "child environment lacks $want (exit $rc): $(grep -E 'FAULTLINE|PRELOAD' <<<"$out") $err"
done
mkdir -p "$WORK/rel"
(cd "$WORK/rel" && "$F" record -q -M 64M -o out -- env) >"$WORK/.out" 2>"$WORK/.err"
grep -qxF "FAULTLINE_DIR=$(realpath "$WORK/rel/out")" "$WORK/.out" && ok "FAULTLINE_DIR is absolute" ||
	bad "FAULTLINE_DIR not absolute: $(grep FAULTLINE_DIR "$WORK/.out")"

run env FAULTLINE_LIB="$WORK/no-such-lib.so" "$F" record -M 64M -o "$WORK/nolib" -- true
expect "missing runtime library" 2 "no-such-lib.so"

# SIGTERM sent to record reaches the child, which exits 42 from its trap.
ready=$WORK/ready
"$F" record -q -M 64M -o "$WORK/sigterm" -- sh -c \
	'trap "exit 42" TERM; : >"$1"; while :; do sleep 0.1; done' sh "$ready" \
	</dev/null >/dev/null 2>"$WORK/.sig" &
record_pid=$!
children+=("$record_pid")
for _ in $(seq "$(scaled 100)"); do [ -e "$ready" ] && break; sleep 0.1; done
if [ -e "$ready" ]; then
	kill -TERM "$record_pid"
	term_limit=$(scaled 10)
	for _ in $(seq $((term_limit * 10))); do kill -0 "$record_pid" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$record_pid" 2>/dev/null; then
		bad "SIGTERM: record still running $term_limit s after SIGTERM"
	else
		wait "$record_pid"
		rc=$?
		[ "$rc" -eq 42 ] && ok "SIGTERM forwarded to the child (exit 42 from its trap)" ||
			bad "SIGTERM: exit $rc, want 42: $(cat "$WORK/.sig")"
	fi
else
	bad "SIGTERM: the child never started: $(cat "$WORK/.sig")"
fi

# The output directory is held for the run: a second record given the same -o meanwhile is refused
# (before, both wrote into it and their processes made one recording)
"$F" record -q -M 64M -o "$WORK/held" -- sleep 3 </dev/null >/dev/null 2>&1 &
held_pid=$!
for _ in $(seq 100); do [ -d "$WORK/held" ] && [ -n "$(ls "$WORK/held")" ] && break; sleep 0.1; done
run "$F" record -M 64M -o "$WORK/held" -- true
expect "a second record into an output directory being written" 2 "is being written by another faultline record"
wait "$held_pid"
[ "$(ls -d "$WORK"/held/[0-9]* | wc -l)" -eq 1 ] && ok "the held recording has its own process only" ||
	bad "the held recording: $(ls "$WORK/held")"
# an output path too long for the files in it: refused before anything is made
long=$WORK/$(printf 'd%.0s' $(seq 250))
for _ in $(seq 15); do long=$long/$(printf 'd%.0s' $(seq 250)); done
run "$F" record -M 64M -o "$long" -- true
expect "an output path too long for its files" 2 "output directory path too long"
[ ! -e "$WORK/$(printf 'd%.0s' $(seq 250))" ] && ok "nothing made for the too-long path" || bad "the too-long path was partly made"
# a directory on a read-only file system: refused before the program runs (root only: mount)
if [ "$(id -u)" -eq 0 ] && mkdir -p "$WORK/ro" && mount -t tmpfs -o size=1M,ro tmpfs "$WORK/ro" 2>/dev/null; then
	run "$F" record -M 64M -o "$WORK/ro" -- true
	umount "$WORK/ro"
	expect "an output directory on a read-only file system" 2 "no file can be created in it"
fi

[ -n "$static_note" ] && echo "note $static_note"
if [ "$failures" -ne 0 ]; then
	echo "$failures check(s) failed"
	exit 1
fi
echo "all record_cli checks passed"
exit 0
