#!/usr/bin/env bash
# tests/cases/dump.sh: `faultline dump` on a real recording of a planted program (fill 16 under
# -L 4 -M 256, so it both first-touches and refaults):
#   - one line per fault: as many lines as the stats.json files count, every line in the documented
#     format, in time order, kinds counted as stats.json counts them, a '#' header naming each process;
#   - when the recording holds contexts/stacks/allocs, the pmu=/stack=/alloc= fields are filled in;
#   - svc= and vt=, fault by fault: svc= is the raw record's service_ns (read from the faults file's
#     bytes here, '-' for 0) and vt= its thread_time_ns where that is set; both equal export
#     --sqlite's faults.service_ns and vtime_ns (NULL for '-');
#   - wait=, fault by fault: the raw record's wait_ns, equal to export's faults.wait_ns; and it is
#     physical: each fault with a wait happened (read time - wait) after the handler read the
#     previous fault of its thread;
#   - --pid, --limit (0: no limit), --help, usage errors, the newest faultline-* directory as the default
#     (passing over faultline-* directories that are not recordings);
#   - a faults file cut inside a record: still dumps (one line fewer) with a warning naming the file;
#   - a flipped magic: exit 1 and one error line naming the file and offset;
#   - a missing and an empty directory: exit 1 with a clear message; a process directory another
#     user cannot read (as nobody, when root): exit 1, "Permission denied", not "missing".
. "$(dirname "$0")/../lib.sh"

need_faultline
need_planted fill

expect_record fill -L 4 -M 256 -- "$PLANTED/fill" 16
check_stats fill --local $((4 * MIB)) --max $((256 * MIB))
REC=$WORK/fill
OUT=$WORK/dump.out
ERR=$WORK/dump.err

# dump ARGS...: runs faultline dump; sets RC, stdout in $OUT, stderr in $ERR.
dump() {
	RC=0
	"$FAULTLINE" dump "$@" >"$OUT" 2>"$ERR" || RC=$?
}

fault_lines() { grep -vc '^#' "$1" || true; }

dump "$REC"
[ "$RC" -eq 0 ] || { cat "$ERR" >&2; fail "dump exited $RC"; }
echo "ok dump exit status 0"
[ -s "$ERR" ] && { cat "$ERR" >&2; fail "dump of a complete recording printed on stderr"; }
echo "ok no warnings for a complete recording"

# One line per fault.
total=$(stat_of fill faults_total)
check_ge "fill faults_total" "$total" 4096
check_eq "dump fault lines" "$(fault_lines "$OUT")" "$total"

# The header: first line a comment, one "# pid PID ... cmdline ..." line per process directory.
head -n1 "$OUT" | grep -q '^# faultline dump of ' || fail "first line is not the '# faultline dump of' header: $(head -n1 "$OUT")"
for d in "$REC"/*/; do
	pid=$(basename "$d"); pid=${pid%%.*}
	grep -Eq "^# pid $pid dir [0-9.]+ .* cmdline .*fill 16\$" "$OUT" || fail "no '# pid $pid ... cmdline ... fill 16' header line"
done
echo "ok header lines for $(ls -d "$REC"/*/ | wc -l) process(es)"

# Every fault line in the format, time non-decreasing.
re='^[0-9]+\.[0-9]{9} [0-9]+ [0-9]+ 0x[0-9a-f]{16} (first-touch|refault|soft|concurrent) [rw] h[0-9]+ wait=(-|[0-9]+) svc=(-|[0-9]+) vt=(-|[0-9]+) pmu=(-|[0-9]+(,[0-9]+)*) alloc=(-|[0-9]+) stack=(-|0x[0-9a-f]+(,0x[0-9a-f]+)*)$'
bad=$(grep -v '^#' "$OUT" | grep -Evc "$re" || true)
if [ "$bad" -ne 0 ]; then
	grep -v '^#' "$OUT" | grep -Ev "$re" | head -n 5 >&2
	fail "$bad fault lines do not match the format"
fi
echo "ok every fault line matches the format"
grep -v '^#' "$OUT" | awk '{ if (NR > 1 && $1 < last) { print "line " NR ": " $1 " < " last; bad = 1; exit } last = $1 }
	END { exit bad }' || fail "fault lines are not in time order"
echo "ok fault lines in time order"
pids=$(for d in "$REC"/*/; do b=$(basename "$d"); echo "${b%%.*}"; done | sort -u | tr '\n' ' ')
grep -v '^#' "$OUT" | awk -v pids="$pids" 'BEGIN { n = split(pids, p, " "); for (i = 1; i <= n; i++) ok[p[i]] = 1 }
	!($2 in ok) { print "unknown pid " $2; exit 1 }' || fail "a fault line names a pid without a process directory"

# Kinds agree with stats.json.
for kind in first-touch refault soft concurrent; do
	key=faults_$(echo "$kind" | tr - _)
	got=$(grep -v '^#' "$OUT" | awk -v k="$kind" '$5 == k { n++ } END { print n + 0 }')
	check_eq "dump $kind lines" "$got" "$(stat_of fill "$key")"
done
grep -v '^#' "$OUT" | grep -q ' w h' || fail "no write fault in a program that fills memory"
echo "ok write faults present"

# Joins, when the recording has the files (the runtime writes them as they land).
has_file() { ls "$REC"/*/"$1" >/dev/null 2>&1; }
if has_file stacks && has_file contexts; then
	n=$(grep -v '^#' "$OUT" | grep -vc ' stack=-$' || true)
	check_ge "fault lines with a stack" "$n" 1
	n=$(grep -v '^#' "$OUT" | grep -vc ' pmu=- ' || true)
	check_ge "fault lines with pmu values" "$n" 1
else
	say "recording has no contexts/stacks files yet: stack= and pmu= checks skipped"
fi
if has_file allocs; then
	n=$(grep -v '^#' "$OUT" | grep -vc ' alloc=- ' || true)
	check_ge "fault lines inside an allocation" "$n" 1
else
	say "recording has no allocs file yet: alloc= check skipped"
fi

# svc= and vt= against the faults files' bytes (trace.h: records of 80 bytes hold
# thread_time_ns at offset 64 and service_ns at 72) and against export --sqlite.
"$FAULTLINE" export --sqlite "$WORK/fill.db" "$REC" 2>"$WORK/export.err" || fail "export --sqlite: $(cat "$WORK/export.err")"
"$PY" - "$REC" "$OUT" "$WORK/fill.db" <<'PYEOF' || fail "svc= or vt= disagree with the recording"
import collections, glob, os, sqlite3, struct, sys
rec, dump, db = sys.argv[1:]
from checks import check, errors
raw, raw_tt, raw_wait = collections.Counter(), collections.Counter(), collections.Counter()
threads = collections.defaultdict(list)   # (pid, tid) -> (seq, time_ns, wait_ns, kind)
from trace_frames import read   # format 3's frames decoded into fixed-size records
for path in glob.glob(os.path.join(rec, "*", "faults")):
    data = read(path)
    magic, version, kind, header_size, record_size, pid = struct.unpack_from("<QIIIII", data, 0)
    if record_size < 80:
        sys.exit("%s: records of %d bytes have no service_ns (version %d): rerecord" % (path, record_size, version))
    for off in range(header_size, len(data) - record_size + 1, record_size):
        addr, = struct.unpack_from("<Q", data, off + 8)
        tid, = struct.unpack_from("<I", data, off + 24)
        tt, svc, wait = struct.unpack_from("<QII", data, off + 64)
        t, = struct.unpack_from("<Q", data, off)
        seq, = struct.unpack_from("<Q", data, off + 16)
        kind, = struct.unpack_from("<B", data, off + 32)
        raw[(pid, tid, addr, svc or "-")] += 1
        raw_wait[(pid, tid, addr, wait or "-")] += 1
        threads[(pid, tid)].append((seq, t, wait, kind))
        if tt:
            raw_tt[(pid, tid, addr, tt)] += 1
lines, lines_tt, lines_wait = collections.Counter(), collections.Counter(), collections.Counter()
full = collections.Counter()
for line in open(dump):
    if line.startswith("#"):
        continue
    f = line.split()
    field = {x.split("=", 1)[0]: x.split("=", 1)[1] for x in f[7:] if "=" in x}
    svc = "-" if field["svc"] == "-" else int(field["svc"])
    vt = "-" if field["vt"] == "-" else int(field["vt"])
    key = (int(f[1]), int(f[2]), int(f[3], 16))
    lines[key + (svc,)] += 1
    lines_wait[key + ("-" if field["wait"] == "-" else int(field["wait"]),)] += 1
    lines_tt[key + (vt,)] += 1
    full[key + (svc, vt)] += 1
known_svc = sum(n for k, n in lines.items() if k[3] != "-")
check(known_svc > 0, "%d of %d fault lines have a service time" % (known_svc, sum(lines.values())))
check(lines == raw, "svc= of every fault is its record's service_ns ('-' for 0)")
check(lines_wait == raw_wait, "wait= of every fault is its record's wait_ns ('-' for 0)")
# wait_ns is the time from the fault to the handler's read: a thread faults again only after a
# handler read (and served) its previous fault, so each fault with a wait happened after the read
# of the thread's previous one (a concurrent message, kind 4, can be read after its thread ran on)
known_wait, after = 0, 0
for faults in threads.values():
    faults.sort()
    for prev, cur in zip(faults, faults[1:]):
        if cur[2] and prev[3] != 4:
            known_wait += 1
            after += cur[1] - cur[2] >= prev[1]
check(known_wait > 0, "%d faults have a wait and a previous fault of their thread" % known_wait)
check(after == known_wait, "every fault with a wait happened after the read of its thread's previous fault (%d of %d)" % (after, known_wait))
missing = raw_tt - lines_tt
check(not missing, "vt= is the record's thread_time_ns on the %d faults that have one%s" % (
    sum(raw_tt.values()), "; not so for %s" % list(missing.items())[:3] if missing else ""))
con = sqlite3.connect(db)
sql = collections.Counter()
sql_wait = collections.Counter()
for pid, tid, addr, wait in con.execute("SELECT p.pid, f.tid, f.addr, f.wait_ns FROM faults AS f JOIN processes AS p ON p.id = f.process_id"):
    sql_wait[(pid, tid, addr, "-" if wait is None else wait)] += 1
check(sql_wait == lines_wait, "wait= of every fault equals export's faults.wait_ns")
for pid, tid, addr, svc, vt in con.execute("SELECT p.pid, f.tid, f.addr, f.service_ns, f.vtime_ns FROM faults AS f "
                                           "JOIN processes AS p ON p.id = f.process_id"):
    sql[(pid, tid, addr, "-" if svc is None else svc, "-" if vt is None else vt)] += 1
check(full == sql, "svc= and vt= of every fault equal export's faults.service_ns and vtime_ns (%d with a virtual time)" % (
    sum(n for k, n in full.items() if k[4] != "-")))
sys.exit(1 if errors else 0)
PYEOF

# Options.
dump "$REC" --limit 5
[ "$RC" -eq 0 ] || fail "dump --limit 5 exited $RC"
check_eq "dump --limit 5 fault lines" "$(fault_lines "$OUT")" 5
all=$(dump "$REC"; fault_lines "$OUT")
dump "$REC" --limit 0   # 0: no limit, as report's --top 0
check_eq "dump --limit 0 fault lines (as many as without --limit)" "$(fault_lines "$OUT")" "$all"
first_pid=$(basename "$(ls -d "$REC"/*/ | head -n1)"); first_pid=${first_pid%%.*}
dump --pid "$first_pid" "$REC"
[ "$RC" -eq 0 ] || fail "dump --pid $first_pid exited $RC"
want=$(for d in "$REC"/"$first_pid" "$REC"/"$first_pid".*; do [ -f "$d/faults" ] && "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["faults_total"])' "$d/stats.json"; done | awk '{ s += $1 } END { print s + 0 }')
check_eq "dump --pid $first_pid fault lines" "$(fault_lines "$OUT")" "$want"
dump --pid 1 "$REC"
[ "$RC" -eq 1 ] && grep -q 'no process with pid 1' "$ERR" || fail "dump --pid 1: exit $RC, stderr: $(cat "$ERR")"
echo "ok dump --pid of an absent process: exit 1"
dump --help
[ "$RC" -eq 0 ] && grep -q '^usage: faultline dump' "$OUT" || fail "dump --help: exit $RC"
echo "ok dump --help"
dump --bogus "$REC"
[ "$RC" -eq 2 ] && grep -q "unknown option '--bogus'" "$ERR" || fail "dump --bogus: exit $RC, stderr: $(cat "$ERR")"
dump --limit x "$REC"
[ "$RC" -eq 2 ] || fail "dump --limit x: exit $RC"
dump "$REC" "$REC"
[ "$RC" -eq 2 ] || fail "dump with two directories: exit $RC"
echo "ok usage errors exit 2"

# Without DIR: the newest faultline-* directory of the current directory.
mkdir -p "$WORK/cwd"
cp -r "$REC" "$WORK/cwd/faultline-old"
cp -r "$REC" "$WORK/cwd/faultline-new"
touch -d '2000-01-01' "$WORK/cwd/faultline-old"
(cd "$WORK/cwd" && "$FAULTLINE" dump --limit 3 >"$OUT" 2>"$ERR") || fail "dump without DIR exited $?: $(cat "$ERR")"
grep -q 'faultline-new' "$ERR" || fail "dump without DIR does not say which recording it read: $(cat "$ERR")"
check_eq "dump without DIR fault lines" "$(fault_lines "$OUT")" 3
# a newer faultline-* directory that is not a recording (a sweep's, notes) is passed over
mkdir -p "$WORK/cwd/faultline-sweep-x/L-1M" "$WORK/cwd/faultline-notes"
(cd "$WORK/cwd" && "$FAULTLINE" dump --limit 3 >"$OUT" 2>"$ERR") || fail "dump without DIR, beside a sweep's directory, exited $?: $(cat "$ERR")"
grep -q 'faultline-new' "$ERR" || fail "dump without DIR did not pass over the directories that are not recordings: $(cat "$ERR")"
mkdir -p "$WORK/onlysweep/faultline-sweep-x/L-1M"
RC=0; (cd "$WORK/onlysweep" && "$FAULTLINE" dump >"$OUT" 2>"$ERR") || RC=$?
[ "$RC" -eq 1 ] && grep -q 'faultline-sweep-x is not one' "$ERR" || fail "dump beside a sweep's directory only: exit $RC: $(cat "$ERR")"
mkdir -p "$WORK/nothing"
RC=0; (cd "$WORK/nothing" && "$FAULTLINE" dump >"$OUT" 2>"$ERR") || RC=$?
[ "$RC" -eq 1 ] && grep -q 'no faultline-\* directory' "$ERR" || fail "dump without DIR in an empty directory: exit $RC: $(cat "$ERR")"
echo "ok default directory"

# A process directory another user cannot read: its reason is the permission, not a missing file.
as_nobody() { setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"; }
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
	cp -r "$REC" "$WORK/private"
	chmod 755 "$WORK" "$WORK/private"
	chmod 700 "$WORK/private"/*/
fi
# only where nobody can run faultline and reach the copy (not a checkout under a private home)
if [ -d "$WORK/private" ] && as_nobody "$FAULTLINE" --version >/dev/null 2>&1 && as_nobody test -x "$WORK/private"; then
	RC=0; as_nobody "$FAULTLINE" dump "$WORK/private" >"$OUT" 2>"$ERR" || RC=$?
	[ "$RC" -eq 1 ] && grep -q 'meta.json: Permission denied' "$ERR" && ! grep -q missing "$ERR" ||
		fail "an unreadable process directory: exit $RC: $(cat "$ERR")"
	echo "ok an unreadable process directory: Permission denied"
fi

# A faults file cut inside a record: dumps the complete records, warns.
pdir=$(ls -d "$REC"/*/ | head -n1); pdir=${pdir%/}; pname=$(basename "$pdir")
cp -r "$REC" "$WORK/cut"
f=$WORK/cut/$pname/faults
size=$(stat -c %s "$f")
truncate -s $((size - 7)) "$f"
dump "$WORK/cut"
[ "$RC" -eq 0 ] || fail "dump of a cut recording exited $RC: $(cat "$ERR")"
# format 3 (trace.h, "Framed files"): the last frame is cut, the frames before it are whole
grep -q "$pname/faults: frame [0-9]* at offset [0-9]*: cut" "$ERR" || fail "no warning naming the file and the cut frame: $(cat "$ERR")"
check_eq "dump of the cut recording: fault lines (the records of the whole frames)" "$(fault_lines "$OUT")" "$(trace_records "$f")"
echo "ok cut faults file: warning, the complete frames' records dumped"

# A flipped magic: exit 1, one clear line naming the file and offset, nothing on stdout.
cp -r "$REC" "$WORK/badmagic"
printf 'X' | dd of="$WORK/badmagic/$pname/faults" bs=1 seek=0 conv=notrunc status=none
dump "$WORK/badmagic"
[ "$RC" -eq 1 ] || fail "dump of a corrupt recording exited $RC, want 1"
grep -q "badmagic/$pname/faults: offset 0: bad magic" "$ERR" || fail "error does not name the file and offset: $(cat "$ERR")"
check_eq "error lines" "$(wc -l <"$ERR")" 1
[ -s "$OUT" ] && fail "dump of a corrupt recording wrote to stdout"
echo "ok corrupt magic: exit 1, $(cat "$ERR")"

# A newer format version is refused by name.
cp -r "$REC" "$WORK/newer"
printf '\x63' | dd of="$WORK/newer/$pname/faults" bs=1 seek=8 conv=notrunc status=none
dump "$WORK/newer"
[ "$RC" -eq 1 ] && grep -q 'format version 99 is newer' "$ERR" || fail "newer version: exit $RC: $(cat "$ERR")"
echo "ok newer format version refused"

# Missing and empty directories.
dump "$WORK/does-not-exist"
[ "$RC" -eq 1 ] && grep -q 'does-not-exist: no such recording directory' "$ERR" || fail "missing dir: exit $RC: $(cat "$ERR")"
mkdir -p "$WORK/empty"
dump "$WORK/empty"
[ "$RC" -eq 1 ] && grep -q 'empty: no process directory' "$ERR" || fail "empty dir: exit $RC: $(cat "$ERR")"
dump "$(ls -d "$REC"/[0-9]* | head -n1)"
[ "$RC" -eq 1 ] && grep -q 'a process directory of a recording, not a recording: give the directory that holds it' "$ERR" ||
	fail "a process directory given: exit $RC: $(cat "$ERR")"
echo "ok missing and empty directories, and a process directory given for a recording: exit 1"

# Damaged text files: a stats.json that is no JSON is ignored as a missing one would be (the counts
# come from the records), and a maps file of random bytes leaves the stacks as addresses: each a
# warning naming the file, every fault dumped (before, every verb refused the whole recording).
mkdir -p "$WORK/damaged" && cp -r "$REC"/. "$WORK/damaged/"
P=$(ls -d "$WORK/damaged"/[0-9]* | head -n1)
echo garbage >"$P/stats.json"
head -c 3000 /dev/urandom >"$P/maps"
dump "$WORK/damaged"
[ "$RC" -eq 0 ] || fail "damaged stats.json and maps: exit $RC: $(cat "$ERR")"
grep -q "stats.json.*ignored" "$ERR" && grep -q "maps: damaged at offset 0" "$ERR" ||
	fail "damaged stats.json and maps: no warnings naming them: $(cat "$ERR")"
want=$(sum_stat "$REC" faults_total)
[ "$(grep -vc '^#' "$OUT")" = "$want" ] || fail "damaged stats.json and maps: $(grep -vc '^#' "$OUT") faults dumped, want $want"
echo "ok a damaged stats.json and maps: warnings, every fault dumped ($want)"
for how in missing empty; do
	if [ "$how" = missing ]; then rm -f "$P/maps"; else : >"$P/maps"; fi
	dump "$WORK/damaged"
	[ "$RC" -eq 0 ] && grep -q "maps: $how: no memory maps" "$ERR" ||
		fail "maps $how: exit $RC, want 0 and a warning: $(cat "$ERR")"
done
echo "ok maps missing or empty: a warning that code addresses stay numbers"
# a missing stacks file is read as a cut trace (its references warnings), as an empty one is; a
# meta.json without its format_version is read as the current version, with a warning
rm -f "$P/stacks"
sed -i 's/"format_version": *[0-9]*,//' "$P/meta.json"
dump "$WORK/damaged"
[ "$RC" -eq 0 ] && grep -q "stack ids of fault records .* missing from the trace" "$ERR" &&
	grep -q 'no integer "format_version": read as format version' "$ERR" ||
	fail "stacks missing, meta.json without format_version: exit $RC: $(cat "$ERR")"
[ "$(grep -vc '^#' "$OUT")" = "$want" ] || fail "stacks missing: $(grep -vc '^#' "$OUT") faults dumped, want $want"
echo "ok stacks missing and no format_version: warnings, every fault dumped ($want)"

# One flipped bit inside a frame's compressed bytes: every zstd frame carries its content checksum,
# so the frame is reported as corrupt (a warning naming the file) and the file is read up to it:
# exactly the records of the frames before it are dumped. Before, such a flip could decode into
# thousands of other addresses without a word.
mkdir -p "$WORK/flipped" && cp -r "$REC"/. "$WORK/flipped/"
P=$(ls -d "$WORK/flipped"/[0-9]* | head -n1)
"$PY" - "$P/faults" >"$WORK/flipped.before" <<'PYEOF' || fail "could not flip a byte of the last frame"
import struct, sys
path = sys.argv[1]
data = bytearray(open(path, "rb").read())
off, frames = struct.unpack_from("<I", data, 16)[0], []   # the file header's header_size
while off + 16 <= len(data):
    magic, nrecords, compressed, encoded = struct.unpack_from("<IIII", data, off)
    frames.append((off, nrecords, compressed))
    off += 16 + compressed
start, nrecords, compressed = frames[-1]
data[start + 16 + compressed // 2] ^= 0x01
open(path, "wb").write(data)
print(sum(n for _, n, _ in frames[:-1]))   # the records before the flipped frame
PYEOF
before=$(cat "$WORK/flipped.before")
dump "$WORK/flipped"
grep -q "faults: frame [0-9]* at offset [0-9]*: corrupt zstd data" "$ERR" ||
	fail "a flipped bit in a frame: no warning naming the frame: $(head -c 600 "$ERR")"
check_eq "a flipped bit in the last frame: faults dumped (those of the frames before it)" "$(grep -vc '^#' "$OUT")" "$before"
