#!/usr/bin/env bash
# records_time: each fault's service time and virtual time (the fault record's tail, runtime/fault.c
# and fault_sample.c), and the program's own time axis (`--time virtual`) of report, visualize and
# export. tests/planted/half_dirty (one thread) writes/reads 16 MiB, sleeps 600 ms, reads it back,
# at -L 4 so both passes fault. From `faultline export`:
#   - the schema: faults.wall_ns, vtime_ns, service_ns, the evictions table, meta schema_version >= 4 (3 added them, 4 the timeline table);
#   - every fault has a service time > 0, and a thread's next fault is read only after the wake-up
#     of its previous one was issued: time + service <= the next fault's time (one thread);
#   - every fault has a virtual time; per thread it never decreases, and across the sleep (the
#     largest wall gap between two faults, >= the 600 ms slept) it advances by less than a quarter
#     of the gap and less than 100 ms times the load factor (`scaled`: the thread's CPU time, not the
#     wall clock, but a loaded machine stretches the wake-up's own CPU time too);
#   - `export --time virtual`: faults.time_ns is vtime_ns;
#   - `visualize --time virtual`: the heatmap's time span is at most the thread's CPU time (which the
#     program prints) x 2 plus two columns and at least half of it, and shorter than the wall span by
#     the sleep; the default (wall) heatmap spans the sleep;
#   - `report --time virtual --from/--to` selects exactly the faults whose vtime_ns is in the window;
#     its header shows the service-time percentiles; the whole report's wait-time line counts the
#     faults export has a wait_ns for, with their median as p50; recorded with -s 0 (no perf
#     samples), the line says the wait is unknown and why;
#   - bad --time values are usage errors (exit 2) in all three verbs;
#   - with --pmu events that lack task-clock (tests/planted/threads, 3 threads), the runtime adds
#     task-clock to each thread's group on its own: the faults still have virtual times (all but
#     each thread's first, whose stack comes by signal), per thread never decreasing, and the
#     contexts still hold exactly the --pmu events (npmu 2); `export --time virtual` puts them on
#     the process's axis: never decreasing in wall order, ending at the sum of the threads' times.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted half_dirty threads

expect_record hd -L 4 -M 64 -- "$PLANTED/half_dirty" 16 600
cpu=$(sed -n 's/.*thread_cpu_ns \([0-9]*\).*/\1/p' "$WORK/hd.out")
[ -n "$cpu" ] || fail "no thread_cpu_ns in the program's output"
db=$WORK/hd.db
"$FAULTLINE" export --sqlite "$db" "$WORK/hd" 2>"$WORK/export.err" || { cat "$WORK/export.err" >&2; fail "export failed"; }
"$FAULTLINE" export --sqlite "$WORK/hd-v.db" --time virtual "$WORK/hd" 2>"$WORK/export-v.err" ||
	{ cat "$WORK/export-v.err" >&2; fail "export --time virtual failed"; }

# the bound on virtual time across the sleep, in ms: 100 ms scaled by the measured load factor
vgap_ms=$(scaled 100) # scaled multiplies any number by the factor and rounds up
"$PY" - "$db" "$WORK/hd-v.db" "$vgap_ms" <<'PYEOF' || fail "fault times wrong (above)"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
v = sqlite3.connect(sys.argv[2])
bad = []
def ok(what, cond, detail=""):
    print(("ok " if cond else "BAD ") + what + (": " + str(detail) if detail != "" else ""))
    if not cond:
        bad.append(what)
cols = [r[1] for r in c.execute("PRAGMA table_info(faults)")]
ok("faults has wall_ns, vtime_ns, service_ns", all(k in cols for k in ("wall_ns", "vtime_ns", "service_ns")), cols[-3:])
ok("evictions table", c.execute("SELECT COUNT(*) FROM sqlite_master WHERE name = 'evictions'").fetchone()[0] == 1)
ok("schema_version >= 4", c.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] >= 4)
ok("meta time_axis", c.execute("SELECT value FROM meta WHERE key = 'time_axis'").fetchone()[0] == "wall" and
   v.execute("SELECT value FROM meta WHERE key = 'time_axis'").fetchone()[0] == "virtual")
n = c.execute("SELECT COUNT(*) FROM faults").fetchone()[0]
ok("faults recorded", n > 4096, n)
ok("time_ns is wall_ns by default", c.execute("SELECT COUNT(*) FROM faults WHERE time_ns IS NOT wall_ns").fetchone()[0] == 0)
ok("--time virtual: time_ns is vtime_ns", v.execute("SELECT COUNT(*) FROM faults WHERE time_ns IS NOT vtime_ns").fetchone()[0] == 0)
nserv = c.execute("SELECT COUNT(*) FROM faults WHERE service_ns > 0").fetchone()[0]
ok("every fault has a service time > 0", nserv == n, "%d of %d" % (nserv, n))
tids = [r[0] for r in c.execute("SELECT DISTINCT tid FROM faults")]
ok("one thread", len(tids) == 1, tids)
rows = c.execute("SELECT seq, wall_ns, service_ns, vtime_ns, kind FROM faults ORDER BY wall_ns, seq").fetchall()
late = [(a, b) for a, b in zip(rows, rows[1:]) if a[4] != 'concurrent' and a[1] + a[2] > b[1]]
ok("time + service <= next fault's time", not late, late[:3])
nv = sum(1 for r in rows if r[3] is not None)
ok("every fault has a virtual time", nv == n, "%d of %d" % (nv, n))
timed = [r for r in rows if r[3] is not None]
back = [(a, b) for a, b in zip(timed, timed[1:]) if b[3] < a[3]]
ok("virtual time never decreases", not back, back[:3])
gap, a, b = max((b[1] - a[1], a, b) for a, b in zip(timed, timed[1:]))
vgap = b[3] - a[3]
ok("largest wall gap >= the 600 ms slept", gap >= 600e6 * 0.95, "%.3f s" % (gap / 1e9))
vgap_max = int(sys.argv[3]) * 1e6
ok("virtual time across the sleep < 1/4 of the gap and < %d ms" % int(sys.argv[3]), vgap * 4 < gap and vgap < vgap_max,
   "%.3f ms over a wall gap of %.3f s" % (vgap / 1e6, gap / 1e9))
sys.exit(1 if bad else 0)
PYEOF

# the heatmap's time span: the right end of its last cell, from data-x0 and data-ns-per-px
heatmap_span() {
	"$PY" - "$1" <<'PYEOF'
import re, sys
s = open(sys.argv[1]).read()
m = re.search(r'<g id="cells" data-x0="([\d.]+)" data-ns-per-px="([\d.]+)"', s)
x0, npp = float(m.group(1)), float(m.group(2))
rows = re.findall(r'<g class="row"[^>]*>(.*?)</g>', s, re.S)
span = max((float(x) + float(w) - x0) * npp for r in rows
           for x, w in re.findall(r'<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)"', r))
print(int(span))
PYEOF
}
"$FAULTLINE" visualize --time virtual -o "$WORK/viz-v" "$WORK/hd" >/dev/null 2>"$WORK/viz-v.err" ||
	{ cat "$WORK/viz-v.err" >&2; fail "visualize --time virtual failed"; }
"$FAULTLINE" visualize -o "$WORK/viz-w" "$WORK/hd" >/dev/null 2>"$WORK/viz-w.err" ||
	{ cat "$WORK/viz-w.err" >&2; fail "visualize failed"; }
grep -q '<text id="time-axis"[^>]*>virtual time' "$WORK/viz-v/heatmap.svg" || fail "the virtual heatmap's axis is not labelled virtual time"
vspan=$(heatmap_span "$WORK/viz-v/heatmap.svg") && wspan=$(heatmap_span "$WORK/viz-w/heatmap.svg") || fail "cannot read the heatmaps"
say "heatmap spans: virtual $vspan ns, wall $wspan ns; the thread's CPU time $cpu ns"
# the heatmap snaps both ends to its columns (1/280 of the span each), and the faults' task-clock
# (perf's count in the fault sample) and the thread's clock_gettime CPU time are read by two
# mechanisms: on a loaded machine the span was seen 3.8 ms (about 8 %) over CPU time + one column,
# and once 76 ms (40 %: 268 against 192 ms, CI at load average ~3, 2026-11-29), not understood yet.
# The bound, twice the CPU time, stays below the 600 ms slept, which the wall span must hold.
check_le "virtual heatmap span (ns) <= thread CPU time x 2 + two columns" "$vspan" $((2 * cpu + cpu / 140 + 1000000))
check_ge "virtual heatmap span (ns) >= half the thread CPU time" "$vspan" $((cpu / 2))
check_ge "wall heatmap span (ns) >= virtual span + the 600 ms slept" "$wspan" $((vspan + 570000000))

# report --time virtual --from/--to: exactly the faults with vtime_ns in the window
window=$("$PY" -c 'import sqlite3,sys
c = sqlite3.connect(sys.argv[1])
lo, hi = c.execute("SELECT MIN(vtime_ns), MAX(vtime_ns) FROM faults").fetchone()
a = lo + (hi - lo) // 4; b = lo + (hi - lo) // 2
a = (a // 1000000) * 1000000; b = (b // 1000000) * 1000000
print(a / 1e9, b / 1e9, c.execute("SELECT COUNT(*) FROM faults WHERE vtime_ns >= ? AND vtime_ns < ?", (a, b)).fetchone()[0])' "$db")
set -- $window
"$FAULTLINE" report --time virtual --from "$1" --to "$2" "$WORK/hd" >"$WORK/report-v" 2>&1 || fail "report --time virtual failed"
shown=$(sed -n 's/^# rows: .*; \([0-9,]*\) faults from.*of virtual time.*/\1/p' "$WORK/report-v" | tr -d ,)
check_eq "report --time virtual --from $1 --to $2: faults selected (= export's count)" "$shown" "$3"
grep -q '^# service time:    p50 ' "$WORK/report-v" || fail "report header has no service-time line"
echo "ok report header: $(grep '^# service time' "$WORK/report-v")"
# the header's wait line: as many faults as export has a wait_ns for, its p50 their nearest-rank median
"$FAULTLINE" report "$WORK/hd" >"$WORK/report-all" 2>&1 || fail "report failed"
want=$("$PY" -c 'import sqlite3,sys
v = sorted(r[0] for r in sqlite3.connect(sys.argv[1]).execute("SELECT wait_ns FROM faults WHERE wait_ns IS NOT NULL"))
n = len(v); m = v[max(0, -(-n // 2) - 1)] if n else 0
print("{:,}".format(n), "%.1f us" % (m / 1e3) if m < 1000000 else "%.2f ms" % (m / 1e6))' "$db")
set -- $want
line=$(grep '^# wait time:' "$WORK/report-all") || fail "report header has no wait-time line"
case $line in
"# wait time:       p50 $2 $3, "*"($1 faults; fault to message read)") echo "ok report header: $line" ;;
*) fail "wait-time line '$line', want p50 $2 $3 over $1 faults" ;;
esac
# without perf samples (-s 0) no fault has a wait: the line says so and why
expect_record hd0 -s 0 -L 4 -M 64 -- "$PLANTED/half_dirty" 4 1
"$FAULTLINE" report "$WORK/hd0" >"$WORK/report-s0" 2>&1 || fail "report of the -s 0 recording failed"
line=$(grep '^# wait time:' "$WORK/report-s0") || fail "-s 0: report header has no wait-time line"
case $line in
*"unknown: no fault has one"*"-s 0"*) echo "ok -s 0: $line" ;;
*) fail "-s 0: wait-time line '$line' does not say why it is unknown" ;;
esac

for verb in report visualize export; do
	rc=0
	"$FAULTLINE" $verb --time bogus ${verb/export/--sqlite $WORK/x.db} "$WORK/hd" >"$WORK/bad.out" 2>"$WORK/bad.err" || rc=$?
	check_eq "$verb --time bogus: exit status" "$rc" 2
	grep -q "expected wall or virtual" "$WORK/bad.err" || fail "$verb --time bogus: no clear error line"
done

expect_record thr -L 8 -M 256 --pmu page-faults,context-switches -- "$PLANTED/threads" 3 8
"$FAULTLINE" export --sqlite "$WORK/thr.db" --time virtual "$WORK/thr" 2>"$WORK/thr.err" || { cat "$WORK/thr.err" >&2; fail "export thr failed"; }
"$PY" - "$WORK/thr.db" <<'PYEOF' || fail "virtual time with the extra task-clock member wrong (above)"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
bad = []
def ok(what, cond, detail=""):
    print(("ok " if cond else "BAD ") + "thr " + what + (": " + str(detail) if detail != "" else ""))
    if not cond:
        bad.append(what)
n = c.execute("SELECT COUNT(*) FROM faults").fetchone()[0]
tids = [r[0] for r in c.execute("SELECT DISTINCT tid FROM faults")]
nv = c.execute("SELECT COUNT(*) FROM faults WHERE vtime_ns IS NOT NULL").fetchone()[0]
ok("threads that faulted", len(tids) >= 3, len(tids))
ok("faults with a virtual time (all but about one per thread)", nv >= n - 8 * len(tids), "%d of %d" % (nv, n))
for t in tids:
    v = [r[0] for r in c.execute("SELECT vtime_ns FROM faults WHERE tid = ? AND vtime_ns IS NOT NULL ORDER BY wall_ns, seq", (t,))]
    back = sum(1 for a, b in zip(v, v[1:]) if b < a)
    ok("tid %d: virtual time never decreases (%d faults)" % (t, len(v)), back == 0, back)
names = [r[0] for r in c.execute("SELECT name FROM pmu_events ORDER BY idx")]
ok("pmu events as asked", names == ["page-faults", "context-switches"], names)
npmu = [r[0] for r in c.execute("SELECT DISTINCT npmu FROM contexts")]
ok("contexts hold exactly the --pmu events", npmu == [2], npmu)
axis = [r[0] for r in c.execute("SELECT time_ns FROM faults WHERE time_ns IS NOT NULL ORDER BY wall_ns, seq")]
back = sum(1 for a, b in zip(axis, axis[1:]) if b < a)
ok("process axis (--time virtual) never decreases", back == 0 and len(axis) >= nv, "%d steps back, %d faults" % (back, len(axis)))
total = c.execute("SELECT SUM(m) FROM (SELECT MAX(vtime_ns) AS m FROM faults GROUP BY tid)").fetchone()[0]
ok("process axis ends at the sum of the threads' last times", axis[-1] == total, "%d vs %d" % (axis[-1], total))
sys.exit(1 if bad else 0)
PYEOF
