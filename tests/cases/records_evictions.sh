#!/usr/bin/env bash
# records_evictions: the eviction events (the evictions file, runtime/evict_log.c) agree with the
# runtime's own counters and tell clean from dirty pages exactly. tests/planted/half_dirty writes
# every even page of a page-aligned buffer and only reads the odd ones, then reads everything back;
# under a tight -L every page of the buffer is evicted. Three runs: clock at -L 4 (faults evict
# inline), fifo at -L 4, clock at -L 16 with 36 MiB (the evictor thread evicts). Per run, from
# `faultline export` (evictions table) against stats.json:
#   - records to the far store = evictions, of those dirty = writebacks and clean = evictions_clean;
#     trial unmaps (clock-trial) = soft_evictions (fifo: none);
#   - in the buffer, the dirty evictions to the far store are of written pages, once each (after a
#     write-back a page is read back clean), and no read-only page is ever evicted dirty;
#   - every page of the buffer was evicted (fifo; the clock: at least 95 %: evicting directly, as it
#     does here, it may never pass some pages again before the end), and so were the written
#     pages dirty and the read-only pages clean;
#   - the inline flag: set on all with the evictor off (-L 4), on few with the evictor on;
# and `faultline report` prints the same counts in its header (clock run). A garbled evictions file
# leaves report and export running, with a warning naming it (an optional file).
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted half_dirty

check_run() {
	local name=$1 mib=$2 inline_expect=$3
	local db=$WORK/$name.db written
	written=$(sed -n 's/.*pages_written \([0-9]*\).*/\1/p' "$WORK/$name.out")
	[ -n "$written" ] || fail "$name: no pages_written in the program's output"
	"$FAULTLINE" export --sqlite "$db" "$WORK/$name" 2>"$WORK/$name.export.err" ||
		{ cat "$WORK/$name.export.err" >&2; fail "$name: export failed"; }
	local st
	st=$(ls "$WORK/$name"/*/stats.json | head -n 1)
	local wp
	wp=$(json_get "$(dirname "$st")/meta.json" write_protect)
	"$PY" - "$db" "$st" "$mib" "$written" "$wp" "$inline_expect" "$name" <<'PYEOF' || fail "$name: eviction events disagree (above)"
import json, sqlite3, sys
db, stats, mib, written, wp, inline_expect, name = sys.argv[1:8]
exact = name == "fifo"
mib, written, wp = int(mib), int(written), int(wp)
s = json.load(open(stats))
c = sqlite3.connect(db)
q = lambda sql, *a: c.execute(sql, a).fetchone()[0]
bad = []
def eq(what, got, want):
    print(("ok " if got == want else "BAD ") + "%s %s: %s (want %s)" % (name, what, got, want))
    if got != want:
        bad.append(what)
eq("evictions to the far store = stats evictions", q("SELECT COUNT(*) FROM evictions WHERE to_far"), s["evictions"])
eq("dirty ones = stats writebacks", q("SELECT COUNT(*) FROM evictions WHERE to_far AND dirty"), s["writebacks"])
eq("clean ones = stats evictions_clean", q("SELECT COUNT(*) FROM evictions WHERE to_far AND NOT dirty"), s["evictions_clean"])
eq("trial unmaps = stats soft_evictions", q("SELECT COUNT(*) FROM evictions WHERE decision = 'clock-trial'"), s["soft_evictions"])
# the buffer: the one allocation of mib MiB
lo = q("SELECT addr FROM allocations WHERE size = ?", mib << 20)
pages = (mib << 20) // 4096
base = lo // 4096
inbuf = "page >= %d AND page < %d" % (base, base + pages)
eq("buffer page-aligned", lo % 4096, 0)
# fifo evicts every page of the buffer; the clock, evicting directly (no locality here), passes
# pages the hand never reaches again before the program ends, and its sample's pages wait in the
# soft pool: at least 95 % of them there
def most(what, got, want):
    print(("ok " if got >= want * 95 // 100 and got <= want else "BAD ") + "%s %s: %s (want %s%s)" %
          (name, what, got, want, "" if exact else ", at least 95 %"))
    if got > want or got < want * 95 // 100:
        bad.append(what)
check_all = eq if exact else most
evicted = q("SELECT COUNT(DISTINCT page) FROM evictions WHERE to_far AND " + inbuf)
check_all("pages of the buffer evicted at least once", evicted, pages)
if wp:
    dirty = q("SELECT COUNT(*) FROM evictions WHERE to_far AND dirty AND " + inbuf)
    check_all("dirty evictions in the buffer = pages written", dirty, written)
    eq("distinct pages among them", q("SELECT COUNT(DISTINCT page) FROM evictions WHERE to_far AND dirty AND " + inbuf), dirty)
    eq("dirty evictions of read-only (odd) pages", q("SELECT COUNT(*) FROM evictions WHERE dirty AND (page - ?) % 2 = 1 AND " + inbuf, base), 0)
    check_all("read-only pages evicted clean", q("SELECT COUNT(DISTINCT page) FROM evictions WHERE to_far AND NOT dirty AND (page - ?) % 2 = 1 AND " + inbuf, base), pages - written)
else:
    print("# %s: no write-protect on this kernel: every eviction counts as dirty, split not checked" % name)
total = q("SELECT COUNT(*) FROM evictions")
inl = q("SELECT COUNT(*) FROM evictions WHERE inline")
if inline_expect == "all":
    eq("evictions by fault handlers (evictor off below 16 MiB)", inl, total)
else:
    ok = inl < total
    print(("ok " if ok else "BAD ") + "%s evictions by the evictor thread: %d of %d" % (name, total - inl, total))
    if not ok:
        bad.append("evictor")
sys.exit(1 if bad else 0)
PYEOF
	[ "$name" = clock ] || return 0 # the report's header once (symbolizing takes a while)
	"$FAULTLINE" report "$WORK/$name" >"$WORK/$name.report" 2>&1 || fail "$name: report failed"
	local line
	line=$(grep '^# evictions:' "$WORK/$name.report") || fail "$name: report has no evictions line"
	local shown
	shown=$(echo "$line" | sed -n 's/^# evictions: *\([0-9,]*\) to the far store.*/\1/p' | tr -d ,)
	check_eq "$name report header: evictions to the far store" "$shown" "$(stat_of "$name" evictions)"
}

expect_record clock -L 4 -M 64 -- "$PLANTED/half_dirty" 16 50
check_run clock 16 all
expect_record fifo -L 4 -M 64 --policy fifo -- "$PLANTED/half_dirty" 16 50
check_run fifo 16 all
check_eq "fifo trial unmaps" "$("$PY" -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT COUNT(*) FROM evictions WHERE decision <> '"'fifo'"'").fetchone()[0])' "$WORK/fifo.db")" 0
expect_record evictor -L 16 -M 128 -- "$PLANTED/half_dirty" 36 50
check_run evictor 36 some

# SIGKILL: eviction events reach the file on the fault records' cadence. The program is killed
# while it sleeps after pass 1; by then every fault record of pass 1 is on disk, and local memory
# (-L 4: 1024 pages) held at most 1024 of the pages first touched, so at least first touches - 1024
# pages had gone to the far store: that many eviction records must be in the file.
"$FAULTLINE" record -q -o "$WORK/kill" --force -L 4 -M 64 -- "$PLANTED/half_dirty" 16 20000 \
	>"$WORK/kill.out" 2>"$WORK/kill.err" &
rec=$!
prog=""
for i in $(seq 600); do
	sleep 0.1
	[ -n "$prog" ] || prog=$(pgrep -P "$rec" -f "$PLANTED/half_dirty" | head -n 1)
	f=$(ls "$WORK"/kill/*/faults 2>/dev/null | head -n 1)
	[ -n "$prog" ] && [ -n "$f" ] && [ "$(trace_records "$f")" -ge 4100 ] && break
done
[ -n "$prog" ] || fail "kill: the program never started"
sleep "$(scaled 0.3)"
kill -KILL "$prog"
rc=0; wait "$rec" || rc=$?
check_eq "kill: record's exit status after SIGKILL of the program" "$rc" 137
"$FAULTLINE" export --sqlite "$WORK/kill.db" "$WORK/kill" 2>"$WORK/kill.export.err" ||
	{ cat "$WORK/kill.export.err" >&2; fail "kill: export of the killed recording failed"; }
read -r first far <<<"$("$PY" -c 'import sqlite3,sys
c = sqlite3.connect(sys.argv[1])
print(c.execute("SELECT COUNT(*) FROM faults WHERE kind = '"'first-touch'"'").fetchone()[0],
      c.execute("SELECT COUNT(*) FROM evictions WHERE to_far").fetchone()[0])' "$WORK/kill.db")"
check_ge "kill: first touches on disk" "$first" 4096
check_ge "kill: evictions to the far store on disk (>= first touches - 1024 local pages)" "$far" $((first - 1024))

# An unreadable evictions file is an optional file lost, not a lost recording: report and export
# go on without it (a warning naming the file), as dump, visualize and ranges always did.
cp -r "$WORK/evictor" "$WORK/garbled"
ev=$(ls "$WORK"/garbled/*/evictions | head -n 1)
printf 'garbage!' | dd of="$ev" bs=1 seek=0 conv=notrunc status=none
"$FAULTLINE" report "$WORK/garbled" >"$WORK/garbled.report" 2>&1 || fail "garbled: report exited $?: $(head -c 500 "$WORK/garbled.report")"
grep -q "^# warning: .*evictions: offset 0: bad magic.*the evictions line leaves this process out" "$WORK/garbled.report" ||
	fail "garbled: no warning naming the evictions file: $(grep '^# warning' "$WORK/garbled.report")"
"$FAULTLINE" export --sqlite "$WORK/garbled.db" "$WORK/garbled" 2>"$WORK/garbled.export.err" ||
	fail "garbled: export exited $?: $(cat "$WORK/garbled.export.err")"
grep -q "table evictions leaves this process out" "$WORK/garbled.export.err" ||
	fail "garbled: export gave no warning: $(cat "$WORK/garbled.export.err")"
check_eq "garbled: rows of the evictions table" "$("$PY" -c 'import sqlite3,sys
print(sqlite3.connect(sys.argv[1]).execute("SELECT COUNT(*) FROM evictions").fetchone()[0])' "$WORK/garbled.db")" 0
echo "ok garbled: report and export go on without the evictions file, with a warning"
