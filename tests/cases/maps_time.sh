#!/usr/bin/env bash
# tests/cases/maps_time.sh: every verb names a fault's stack under the maps snapshot in force at the
# time of the fault (issue 13 item 10), not under one snapshot per stack.
# A recording of the planted site_agree program (its faults are in main, at the strdup line) gets a
# second maps snapshot, "# maps T swap", taken at the median fault's time T: a copy of the last
# snapshot in which the program's mappings are named by another file (a copy of /bin/true). The same
# PCs then belong to main before T and to that file from T on. Expected:
#   - export --sqlite: faults before T have callsite main site_agree.c:SITE, faults from T on have a
#     callsite in the other file, and maps_snapshots lists both snapshots;
#   - report --format csv: the faults of the main row are exactly the faults before T named main;
#   - visualize: the folded stacks have both main and frames of the other file.
. "$(dirname "$0")/../lib.sh"

need_faultline
need_planted site_agree
need_cmd sqlite3

SRC=$ROOT/tests/planted/site_agree.c
SITE=$(grep -n 'SITE:' "$SRC" | cut -d: -f1)
[ -n "$SITE" ] || fail "no SITE line in $SRC"
expect_record mt -L 4 -M 256 -- "$PLANTED/site_agree" 8
REC=$WORK/mt
PID=$(proc_dirs "$REC" | head -1)
[ -n "$PID" ] && [ -f "$REC/$PID/maps" ] || fail "no process directory with a maps file in $REC"

"$FAULTLINE" export --sqlite "$WORK/before.db" "$REC" 2>"$WORK/export0.err" || fail "export: $(cat "$WORK/export0.err")"
# the median fault's time, in the process's clock (the maps file's)
T=$(sqlite3 "$WORK/before.db" "SELECT f.wall_ns - p.offset_ns FROM faults AS f JOIN processes AS p ON p.id = f.process_id
	ORDER BY f.wall_ns LIMIT 1 OFFSET (SELECT count(*) / 2 FROM faults)")
is_int "$T" || fail "no median fault time (got '$T')"
say "the swap snapshot at $T ns"

OTHER=$WORK/otherbin
cp /bin/true "$OTHER"
EXE=$(readlink -f "$PLANTED/site_agree")
"$PY" - "$REC/$PID/maps" "$EXE" "$OTHER" "$T" <<'PYEOF' || fail "could not add the swap snapshot"
import re, sys
path, exe, other, t = sys.argv[1:]
text = open(path).read()
last = text[text.rindex("# maps "):]
body = last[last.index("\n") + 1:]
lines = [l for l in body.splitlines() if l.endswith(" " + exe)]
if not lines:
    sys.exit("the program %s is not in the last snapshot" % exe)
swapped = "".join((l[: -len(exe)] + other if l.endswith(" " + exe) else l) + "\n" for l in body.splitlines())
open(path, "a").write("# maps %s swap\n" % t + swapped)
PYEOF

"$FAULTLINE" export --sqlite "$WORK/after.db" "$REC" 2>"$WORK/export.err" || fail "export: $(cat "$WORK/export.err")"
"$FAULTLINE" report "$REC" --format csv >"$WORK/callsite.csv" 2>"$WORK/report.err" || fail "report: $(cat "$WORK/report.err")"
"$FAULTLINE" visualize "$REC" -o "$WORK/viz" >/dev/null 2>"$WORK/viz.err" || fail "visualize: $(cat "$WORK/viz.err")"

"$PY" - "$WORK" "$SITE" "$T" "$OTHER" <<'PYEOF' || fail "a fault was named under the wrong maps snapshot"
import csv, glob, os, sqlite3, sys
work, site, t, other = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
errors = []
def check(ok, what):
    print(("ok " if ok else "FAIL: ") + what)
    if not ok:
        errors.append(what)

db = sqlite3.connect(os.path.join(work, "after.db"))
q = ("SELECT f.wall_ns - p.offset_ns >= ?, c.function, c.file, c.line, c.binary, count(*) FROM faults AS f "
     "JOIN processes AS p ON p.id = f.process_id JOIN callsites AS c ON c.stack_id = f.stack_id GROUP BY 1, 2, 3, 4, 5")
rows = db.execute(q, (t,)).fetchall()
def is_main(r):
    return r[1] == "main" and os.path.basename(r[2] or "") == "site_agree.c" and r[3] == site
early_main = sum(r[5] for r in rows if not r[0] and is_main(r))
late_main = sum(r[5] for r in rows if r[0] and is_main(r))
late_other = sum(r[5] for r in rows if r[0] and r[4] == other)
check(early_main > 0, "export: %d faults before the swap named main site_agree.c:%d" % (early_main, site))
check(late_main == 0, "export: no fault from the swap on named main (got %d)" % late_main)
check(late_other > 0, "export: %d faults from the swap on named in %s" % (late_other, os.path.basename(other)))
snaps = db.execute("SELECT reason FROM maps_snapshots ORDER BY idx").fetchall()
check(("swap",) in snaps, "export: maps_snapshots lists the swap snapshot (got %s)" % snaps)
version = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
check(version is not None and int(version[0]) >= 5, "export: schema_version %s >= 5" % (version,))

got = sum(int(r["faults"]) for r in csv.DictReader(open(os.path.join(work, "callsite.csv")))
          if r["function"] == "main" and os.path.basename(r["file"]) == "site_agree.c" and int(r["line"] or 0) == site)
check(got == early_main, "report: the main site_agree.c:%d row has the %d faults before the swap (got %d)" % (site, early_main, got))

folded = "".join(open(f).read() for f in glob.glob(os.path.join(work, "viz", "*.folded")))
check(";main" in folded or folded.startswith("main"), "visualize: folded stacks name main")
check(os.path.basename(other) in folded, "visualize: folded stacks name frames of %s" % os.path.basename(other))
sys.exit(1 if errors else 0)
PYEOF
echo "ok every verb names each fault under the maps snapshot of its time"
