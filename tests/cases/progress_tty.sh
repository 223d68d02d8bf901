#!/usr/bin/env bash
# progress_tty: report, visualize, ranges and diff show a progress line on a terminal when their work takes more
# than a second (here FAULTLINE_PROGRESS_AFTER=0: at once), and only there. On a planted recording of 2,000,000 faults
# (tests/helpers/plant_recording), each verb runs with stderr on a pseudo-terminal:
#   - exit 0;
#   - stderr shows "faultline VERB: PHASE NN% (DONE/TOTAL, T s)" lines (visualize: "counting faults"
#     with the recording's 2,000,000 as TOTAL; report: any phase), each rewriting the last
#     ("\r" + erase line), and the line is erased at the end (the output ends with "\r\033[K"), so
#     nothing of it stays on the screen;
# and again with stderr on a file: no progress text there at all.
. "$(dirname "$0")/../lib.sh"
need_faultline

HELPER=$BUILD/tests/plant_recording
[ -x "$HELPER" ] || fail "$HELPER not built"
"$HELPER" "$WORK/planted" 2000000 >/dev/null || fail "plant_recording failed"

# on_tty NAME ARGS...: runs faultline ARGS with stderr on a pseudo-terminal; its bytes in NAME.tty
on_tty() {
	local name=$1; shift
	"$PY" - "$WORK/$name.tty" "$FAULTLINE" "$@" <<'EOF'
import os, pty, subprocess, sys
out_path, args = sys.argv[1], sys.argv[2:]
master, slave = pty.openpty()
p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=slave, stdin=subprocess.DEVNULL)
os.close(slave)
data = b''
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:  # EIO: the other side is closed
        break
    if not chunk:
        break
    data += chunk
open(out_path, 'wb').write(data)
sys.exit(p.wait())
EOF
}

# check_progress NAME VERB PATTERN: NAME.tty has progress lines of VERB matching PATTERN, erased at the end
check_progress() {
	local name=$1 verb=$2 pattern=$3
	"$PY" - "$WORK/$name.tty" "$verb" "$pattern" <<'EOF' || fail "$name: progress line wrong (see above)"
import re, sys
data = open(sys.argv[1], 'rb').read().decode('utf-8', 'replace')
verb, pattern = sys.argv[2], sys.argv[3]
lines = [l for l in data.split('\r\x1b[K') if l]
progress = [l for l in lines if l.startswith('faultline %s: ' % verb)]
print('# %d progress updates; last: %r' % (len(progress), progress[-1] if progress else None))
if not progress:
    sys.exit('no progress line in %r' % data[-300:])
for l in progress:
    if not re.fullmatch(r'faultline %s: [a-z ]+( +[0-9]+%% \([0-9]+/[0-9]+, [0-9.]+ s\)| \([0-9.]+ s\))' % verb, l):
        sys.exit('malformed progress line %r' % l)
if not any(re.search(pattern, l) for l in progress):
    sys.exit('no progress line matches %r' % pattern)
if not data.endswith('\r\x1b[K'):
    sys.exit('the progress line is not erased at the end: %r' % data[-200:])
EOF
	echo "ok $name: progress lines on the terminal, erased at the end"
}

# the line at once (FAULTLINE_PROGRESS_AFTER=0), not after a second: streamed, these verbs may finish
# their shown phases in less (the display thread still refreshes only every 100 ms)
export FAULTLINE_PROGRESS_AFTER=0
on_tty viz visualize "$WORK/planted" -o "$WORK/viz" || fail "visualize on a terminal: exit $?"
[ -s "$WORK/viz/flamegraph.svg" ] || fail "visualize wrote no flamegraph.svg"
check_progress viz visualize 'counting faults +[0-9]+% \([0-9]+/2000000, '

on_tty report report "$WORK/planted" || fail "report on a terminal: exit $?"
check_progress report report '.'

on_tty ranges ranges "$WORK/planted" || fail "ranges on a terminal: exit $?"
check_progress ranges ranges 'reading the recording|counting ranges'

on_tty diff diff "$WORK/planted" "$WORK/planted" || fail "diff on a terminal: exit $?"
check_progress diff diff '.'

"$FAULTLINE" visualize "$WORK/planted" -o "$WORK/viz2" >/dev/null 2>"$WORK/viz2.err" || fail "visualize: exit $?"
"$FAULTLINE" report "$WORK/planted" >/dev/null 2>"$WORK/report2.err" || fail "report: exit $?"
if grep -a -q "faultline .*%\|counting faults\|reading the recording" "$WORK/viz2.err" "$WORK/report2.err"; then
	fail "progress text on stderr that is not a terminal: $(cat "$WORK/viz2.err" "$WORK/report2.err" | head -c 300)"
fi
echo "ok no progress text when stderr is a file"
