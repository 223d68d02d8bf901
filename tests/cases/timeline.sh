#!/usr/bin/env bash
# timeline: counter timelines (record --timeline, issue 16), end to end on a planted program in three
# phases (tests/planted/timeline_phases.c: a fill of 32 MiB, a 1 s sleep, a re-read) at -L 8M, placed on
# the timeline by the CLOCK_MONOTONIC times the program prints:
#   - the process samples' far-read counter is 0 in the fill and the pause, and its growth in the
#     re-read equals the refaults of the faults file x the page size, spread over several samples;
#   - task-clock advances in the fill and the re-read, not during the sleep (samples inside it agree
#     to within 1 ms); the main thread has samples of its own;
#   - hardware counters (instructions, cycles): checked where the machine counts them; here the
#     software events are, and the test says so with a SKIP line (and passes);
#   - export: the timeline table; visualize: timeline.svg well-formed, one strip per counter, on the
#     heatmap's axis (same x0 and ns per px), far_read_bytes total = refaults x page; --time virtual
#     puts the program's own time on the axis (its end = the final task-clock);
#   - --timeline-every N: exactly faults_total / N event samples; --timeline 0: no timeline file,
#     no timeline.svg; bad values are usage errors (exit 2).
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted timeline_phases

name=phases
expect_record "$name" -L 8 -M 1024 --timeline 10 -- "$PLANTED/timeline_phases" 32 1000
P=$(ls -d "$WORK/$name"/[0-9]* | head -n1)
[ -s "$P/timeline" ] || fail "no timeline file in $P"
phases=$(grep -m1 '^phases ' "$WORK/$name.err") || { show_err "$name"; fail "the program printed no phase times"; }
"$FAULTLINE" export --sqlite "$WORK/$name.db" "$WORK/$name" 2>"$WORK/export.err" || fail "export: $(cat "$WORK/export.err")"
echo "ok recorded, exported"

"$PY" - "$WORK/$name.db" "$P" $phases <<'EOF' || fail "timeline checks failed"
import json, os, sqlite3, sys
db, pdir, fill_end_abs, sleep_end_abs = sys.argv[1], sys.argv[2], int(sys.argv[4]), int(sys.argv[5])
con = sqlite3.connect(db)
failed = False
def check(cond, what):
    global failed
    print(("ok " if cond else "FAIL ") + what)
    failed |= not cond
start_ns, offset_ns, pid = con.execute("SELECT start_ns, offset_ns, pid FROM processes").fetchone()
fill_end = fill_end_abs - start_ns + offset_ns
sleep_end = sleep_end_abs - start_ns + offset_ns
refaults = con.execute("SELECT COUNT(*) FROM faults WHERE kind = 'refault'").fetchone()[0]
page = con.execute("SELECT page_size FROM processes").fetchone()[0]
rows = con.execute("SELECT time_ns, far_read_bytes, task_clock_ns, instructions, reason FROM timeline "
                   "WHERE tid = 0 ORDER BY time_ns").fetchall()
check(refaults > 1000, "the re-read refaults: %d refaults" % refaults)
check(len(rows) >= 20, "%d process samples" % len(rows))
before = [r for r in rows if r[0] <= sleep_end]
during = [r for r in rows if r[0] > sleep_end]
check(len(before) >= 2 and all(r[1] == 0 for r in before),
      "far reads are 0 in the fill and the pause (%d samples; max %d)" % (len(before), max(r[1] for r in before)))
deltas = [b[1] - a[1] for a, b in zip([before[-1]] + during[:-1], during)]
check(sum(deltas) == refaults * page,
      "far-read growth in the re-read = refaults x page: %d = %d x %d" % (sum(deltas), refaults, page))
check(sum(1 for d in deltas if d > 0) >= 2, "the far reads are spread over %d samples" % sum(1 for d in deltas if d > 0))
check(rows[-1][4] == "final", "the last sample is the final one")
# task-clock: advances while running, not while sleeping
margin = 50 * 10**6
inside = [r for r in rows if fill_end + margin <= r[0] <= sleep_end - margin]
check(len(inside) >= 2 and inside[-1][0] - inside[0][0] >= 300 * 10**6,
      "%d samples inside the sleep, %.3f s apart" % (len(inside), (inside[-1][0] - inside[0][0]) / 1e9 if inside else 0))
if len(inside) >= 2:
    advance = inside[-1][2] - inside[0][2]
    check(0 <= advance <= 10**6, "task-clock advanced %d ns during %.3f s of sleep" % (advance, (inside[-1][0] - inside[0][0]) / 1e9))
at_fill_end = max((r for r in rows if r[0] <= fill_end), key=lambda r: r[0], default=None)
check(at_fill_end is not None and at_fill_end[2] > 0, "task-clock advances in the fill")
check(rows[-1][2] > before[-1][2], "task-clock advances in the re-read: %d -> %d ns" % (before[-1][2], rows[-1][2]))
threads = con.execute("SELECT COUNT(*), MAX(task_clock_ns) FROM timeline WHERE tid = ?", (pid,)).fetchone()
check(threads[0] >= 20 and threads[1] > 0, "the main thread has %d samples of its own" % threads[0])
meta = json.load(open(os.path.join(pdir, "meta.json")))
check(meta.get("timeline_ms") == 10, "meta.json timeline_ms 10")
if meta.get("timeline_pmu_kind") == "hardware":
    inst = [r[3] for r in rows]
    check(all(i is not None for i in inst) and inst[-1] > before[-1][3] > 0,
          "hardware: instructions counted and advancing in the re-read")
    check(inst[0] is not None and inside[-1][3] - inside[0][3] <= 10**6, "hardware: no instructions during the sleep")
else:
    check(all(r[3] is None for r in rows), "no instructions column without hardware counters")
    print("SKIP hardware counters (instructions, cycles): this machine has none; the timeline was tested with "
          "the software events (%s)" % ", ".join(meta.get("timeline_events", [])))
sys.exit(1 if failed else 0)
EOF

# visualize: timeline.svg on the heatmap's axis, well-formed, with its strips
"$FAULTLINE" visualize -o "$WORK/viz" "$WORK/$name" >"$WORK/viz.out" 2>"$WORK/viz.err" || fail "visualize: $(cat "$WORK/viz.err")"
grep -q 'timeline.svg$' "$WORK/viz.out" || fail "visualize did not list timeline.svg"
"$FAULTLINE" visualize --time virtual -o "$WORK/vizv" "$WORK/$name" >/dev/null 2>"$WORK/vizv.err" ||
	fail "visualize --time virtual: $(cat "$WORK/vizv.err")"
"$PY" - "$WORK/viz" "$WORK/vizv" "$WORK/$name.db" <<'EOF' || fail "timeline.svg checks failed"
import os, sqlite3, sys
import xml.etree.ElementTree as ET
NS = "{http://www.w3.org/2000/svg}"
viz, vizv, db = sys.argv[1:4]
failed = False
def check(cond, what):
    global failed
    print(("ok " if cond else "FAIL ") + what)
    failed |= not cond
con = sqlite3.connect(db)
refaults = con.execute("SELECT COUNT(*) FROM faults WHERE kind = 'refault'").fetchone()[0]
final_clock = con.execute("SELECT task_clock_ns FROM timeline WHERE tid = 0 ORDER BY time_ns DESC LIMIT 1").fetchone()[0]
tl = ET.parse(os.path.join(viz, "timeline.svg")).getroot()
hm = ET.parse(os.path.join(viz, "heatmap.svg")).getroot()
check(tl.get("width") == hm.get("width"), "timeline.svg is as wide as heatmap.svg (%s px)" % tl.get("width"))
strips = tl.find(".//%sg[@id='strips']" % NS)
cells = hm.find(".//%sg[@id='cells']" % NS)
check(strips is not None and cells is not None and strips.get("data-x0") == cells.get("data-x0") and
      strips.get("data-ns-per-px") == cells.get("data-ns-per-px"),
      "same time axis as the heatmap: x0 %s, ns per px %s" % (strips.get("data-x0"), strips.get("data-ns-per-px")))
names = {g.get("data-counter"): g for g in tl.iter(NS + "g") if g.get("class") == "strip"}
want = ["task_clock_ns", "page_faults", "context_switches", "resident_pages", "soft_pages", "far_read_bytes",
        "far_write_bytes", "evictions", "writebacks", "first_touch", "refaults"]
check(all(n in names for n in want), "one strip per counter: %s" % " ".join(names))
check(int(names["far_read_bytes"].get("data-total")) == refaults * 4096, "far_read_bytes strip total = refaults x page")
check(int(names["refaults"].get("data-total")) == refaults, "refaults strip total = %d" % refaults)
check(all(len(g.findall(NS + "path")) == 1 for n, g in names.items() if n in want if float(g.get("data-max")) > 0),
      "each non-empty strip draws its process")
v = ET.parse(os.path.join(vizv, "timeline.svg")).getroot().find(".//%sg[@id='strips']" % NS)
check(v.get("data-time") == "virtual" and int(v.get("data-end-ns")) == final_clock,
      "--time virtual: the axis ends at the final task-clock, %s ns" % v.get("data-end-ns"))
sys.exit(1 if failed else 0)
EOF

# event-based sampling: one process sample every N faults, exactly
name=every
expect_record "$name" -L 8 -M 1024 --timeline-every 1000 -- "$PLANTED/timeline_phases" 8 10
"$FAULTLINE" export --sqlite "$WORK/$name.db" "$WORK/$name" 2>"$WORK/export2.err" || fail "export: $(cat "$WORK/export2.err")"
total=$(stat_of "$name" faults_total)
events=$("$PY" -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT COUNT(*) FROM timeline WHERE reason = '"'every-n'"' AND tid = 0 AND far_read_bytes IS NOT NULL").fetchone()[0])' "$WORK/$name.db")
check_eq "--timeline-every 1000: event samples (faults_total $total)" "$events" $((total / 1000))

# off, and bad values
name=off
expect_record "$name" -L 8 -M 1024 --timeline 0 -- "$PLANTED/timeline_phases" 4 10
P=$(ls -d "$WORK/$name"/[0-9]* | head -n1)
[ -e "$P/timeline" ] && fail "--timeline 0 wrote a timeline file"
"$FAULTLINE" visualize -o "$WORK/vizoff" "$WORK/$name" >"$WORK/vizoff.out" 2>&1 || fail "visualize without timeline failed"
[ -e "$WORK/vizoff/timeline.svg" ] && fail "visualize wrote timeline.svg without a timeline"
echo "ok --timeline 0: no timeline file, no timeline.svg"
for bad in "--timeline abc" "--timeline -5" "--timeline 0 --timeline-every 10" "--timeline-every x"; do
	RC=0
	# shellcheck disable=SC2086
	"$FAULTLINE" record -q -o "$WORK/bad" --force $bad -- true >"$WORK/bad.out" 2>&1 || RC=$?
	[ "$RC" = 2 ] || fail "record $bad: exit $RC, want 2: $(cat "$WORK/bad.out")"
	grep -q -- "--timeline" "$WORK/bad.out" || fail "record $bad: the error does not name the option: $(cat "$WORK/bad.out")"
done
RC=0
"$FAULTLINE" visualize --time sideways "$WORK/off" >"$WORK/bad.out" 2>&1 || RC=$?
[ "$RC" = 2 ] || fail "visualize --time sideways: exit $RC, want 2"
echo "ok bad --timeline, --timeline-every, --time values are usage errors"

# Threads that end during the run: the process samples (tid 0) sum every thread, ended ones with
# their last values, so their counters never fall. Before, a thread that ended between two samples
# was left out of one sample's sums (3,000 short threads: 120 falls of task-clock in 858 samples).
need_planted rel_thread_storm
expect_record storm -L 8 -M 1024 --timeline 5 -- "$PLANTED/rel_thread_storm" 3000 16 16
"$FAULTLINE" export --sqlite "$WORK/storm.db" "$WORK/storm" 2>"$WORK/export.err" || fail "export storm: $(cat "$WORK/export.err")"
"$PY" - "$WORK/storm.db" <<'PYEOF' || fail "storm: the process's counters fell"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for counter in ("task_clock_ns", "page_faults", "context_switches"):
    values = [v for (v,) in db.execute("select %s from timeline where tid = 0 and %s is not null order by time_ns, rowid"
                                       % (counter, counter))]
    falls = sum(1 for a, b in zip(values, values[1:]) if b < a)
    print("%s: %d process samples, %d falls" % (counter, len(values), falls))
    if len(values) < 10 or falls:
        sys.exit(1)
PYEOF
echo "ok threads ending during the run: the process's counters never fall"
