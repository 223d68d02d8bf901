#!/usr/bin/env bash
# rel_limit_full_disk: the disk under the output directory fills up while recording — the only case
# where records may be dropped. A 384 KiB tmpfs is mounted in the test's own directory (skipped when
# mounting is not allowed) and record writes into it (without -q: its summary is checked) while
# tests/planted/rel_sigblock makes ~90,000 faults (about 1 MB of compressed fault records and contexts) under -L 4.
# Checks: the program runs to completion (exit 0, within a deadline) with its output identical to
# the native run; stats.json exists and is complete, with records_dropped > 0 and
# records_dropped_reason naming the cause (No space left on device); record's summary on stderr
# says how many records were dropped and why; `faultline dump` reads what was written (exit 0).
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted rel_sigblock
disk=$WORK/disk
mkdir -p "$disk"
mount -t tmpfs -o size=384k,mode=0755 tmpfs "$disk" 2>"$WORK/mount.err" \
	|| skip "cannot mount a tmpfs (mount -t tmpfs -o size=384k): $(head -c 200 "$WORK/mount.err")"
trap 'umount "$disk" 2>/dev/null || umount -l "$disk" 2>/dev/null; cleanup' EXIT
echo "ok mounted a 384 KiB tmpfs on $disk"

args=(4096 3)
run_native full "$PLANTED/rel_sigblock" "${args[@]}"
say "faultline record -o $disk/rec -L 4 -M 1024 -- $PLANTED/rel_sigblock ${args[*]}"
RC=0
timeout -k 5 "$(scaled 90)" "$FAULTLINE" record -o "$disk/rec" -L 4 -M 1024 -- "$PLANTED/rel_sigblock" "${args[@]}" \
	>"$WORK/full.out" 2>"$WORK/full.err" || RC=$?
grep -v '^tid ' "$WORK/full.err" | sed 's/^/# stderr: /' | head -n 30
[ "$RC" -ne 124 ] && [ "$RC" -ne 137 ] || fail "full: the program did not finish within 90 s on a full disk"
[ "$RC" -eq 0 ] || fail "full: faultline record exited $RC, want 0"
echo "ok full: exit status 0"
same_output full full
df -k "$disk" | sed 's/^/# /'

"$PY" - "$disk/rec" <<'PYEOF' || fail "full: stats.json after the disk filled up"
import glob, json, os, sys
d = sys.argv[1]
dirs = [p for p in glob.glob(os.path.join(d, "*")) if os.path.isdir(p)]
if len(dirs) != 1:
    sys.exit("FAIL: %d process directories in %s, want 1" % (len(dirs), d))
path = os.path.join(dirs[0], "stats.json")
try:
    s = json.load(open(path))
except Exception as e:
    size = os.path.getsize(path) if os.path.exists(path) else None
    sys.exit("FAIL: %s unreadable (%s bytes): %s — the runtime must still be able to say what it dropped" % (path, size, e))
print("# records_written %s records_dropped %s reason %r faults_total %s side_bytes_dropped %s" % (
    s.get("records_written"), s.get("records_dropped"), s.get("records_dropped_reason"), s.get("faults_total"),
    s.get("side_bytes_dropped")))
errors = []
if not isinstance(s.get("records_dropped"), int) or s["records_dropped"] <= 0:
    errors.append("records_dropped = %r, want > 0 (the disk filled up)" % s.get("records_dropped"))
reason = s.get("records_dropped_reason") or ""
if "space" not in reason.lower():
    errors.append("records_dropped_reason = %r, want the cause (No space left on device)" % reason)
if isinstance(s.get("records_written"), int) and isinstance(s.get("records_dropped"), int) and \
        s["records_written"] + s["records_dropped"] < s.get("faults_total", 0):
    errors.append("records_written + records_dropped = %d < faults_total = %d"
                  % (s["records_written"] + s["records_dropped"], s["faults_total"]))
for e in errors:
    print("FAIL: " + e, file=sys.stderr)
sys.exit(1 if errors else 0)
PYEOF
echo "ok full: stats.json says how many records were dropped and why"
grep -iE 'dropped' "$WORK/full.err" | grep -qE '[1-9]' || fail "full: record's summary does not say how many records were dropped"
grep -qi 'no space left' "$WORK/full.err" || fail "full: record's messages do not say why records were dropped (No space left on device)"
echo "ok full: record's summary says how many records were dropped and why"
rc=0
"$FAULTLINE" dump "$disk/rec" >"$WORK/full.dump" 2>"$WORK/full.dump.err" || rc=$?
sed 's/^/# dump: /' "$WORK/full.dump.err" | head -n 5
[ "$rc" -eq 0 ] || fail "full: faultline dump exited $rc on the recording of a full disk"
echo "ok full: faultline dump reads the $(grep -vc '^#' "$WORK/full.dump") fault records that were written"
