#!/usr/bin/env bash
# tests/cases/sweep.sh: `faultline sweep` on the planted cyclic scan (tests/planted/cyclic_scan.c: N pages
# read in address order, R passes), whose refaults are known by construction under --policy fifo:
#   - at every -L below N pages, the buffer's allocation site takes exactly (R - 1) x N refaults and N
#     first touches (faultline report --by alloc on that size's recording), and the sweep's refault
#     column is at least that (plus the few refaults of allocator metadata and stdio, < 64);
#   - at every -L of at least 1.5 x N pages, no refault at all;
#   - the CSV has exactly the issue's columns, rows largest size first, each row equal to the sums of
#     its recording's stats.json files; sweep.csv = --format csv's stdout; the table marks the knee at the
#     smallest size without refaults, and so does sweep.svg (well-formed XML, one point per size);
#   - every size's recording is readable by report and dump;
#   - without --stacks the runs are recorded with -s 0 (no fault context) and --timeline 0, with
#     --stacks with stacks, a timeline and the same faults at each size; a -s or --timeline of the
#     user's is kept;
#   - --auto: an unlimited run, then the smallest size holding its peak resident with the runtime's
#     eviction reserve free (no refault there) and halves of the peak down to 1/16 (the runtime's
#     floor, 1 MiB, once);
#   - every run reads the same stdin: a file (rewound) and a pipe (kept whole);
#   - bad input: no sizes, both -L and --auto, a bad size, no command, an unknown option (exit 2);
#     the same size twice, a size above -M (exit 2, before any run); a non-empty output directory
#     without --force and a program
#     that fails at one size only (exit 1); one that exits 1 at every size sweeps (exit 0).
. "$(dirname "$0")/../lib.sh"

need_faultline
need_planted cyclic_scan

PAGES=1024
PASSES=4
SIZES=1M,2M,3M,6M,8M
SCAN_LINE=$(grep -n 'malloc(pages \* PAGE_SIZE_BYTES)' "$ROOT/tests/planted/cyclic_scan.c" | cut -d: -f1)
[ -n "$SCAN_LINE" ] || fail "cannot find the malloc line of cyclic_scan.c"

OUT=$WORK/sw
RC=0
# One handler (-c 1): the counts are exact only when faults are served one after the other. With
# two, a handler preempted between a page's install (which wakes the program) and its unlock
# leaves the page mapped but locked: it cannot leave at its turn, and a loaded machine misses a
# refault now and then (1 run in ~30 at load 7).
"$FAULTLINE" sweep --policy fifo -c 1 -L "$SIZES" -o "$OUT" -- "$PLANTED/cyclic_scan" $PAGES $PASSES \
	>"$WORK/table" 2>"$WORK/sweep.err" || RC=$?
[ "$RC" -eq 0 ] || { cat "$WORK/sweep.err" >&2; fail "faultline sweep exited $RC"; }
grep -q '\[5/5\] -L 8 MiB' "$WORK/sweep.err" || fail "no progress on stderr: $(cat "$WORK/sweep.err")"
cp "$OUT/sweep.csv" "$WORK/sweep.csv"
echo "ok sweep ran 5 sizes, progress on stderr"
# a verb given the sweep's directory names it a sweep's and points at one of its runs
RC=0; "$FAULTLINE" report "$OUT" >/dev/null 2>"$WORK/sweepdir.err" || RC=$?
[ "$RC" -eq 1 ] && grep -q "a sweep's directory (sweep.csv), not a recording: give one of its runs, such as $OUT/L-" "$WORK/sweepdir.err" ||
	fail "report of the sweep's directory: exit $RC: $(cat "$WORK/sweepdir.err")"
echo "ok report of the sweep's directory: exit 1, $(cat "$WORK/sweepdir.err")"

for name in L-1M L-2M L-3M L-6M L-8M; do
	"$FAULTLINE" report "$OUT/$name" --by alloc --format csv --top 0 >"$WORK/$name.alloc.csv" 2>"$WORK/$name.err" ||
		fail "report of $OUT/$name exited $?: $(cat "$WORK/$name.err")"
	"$FAULTLINE" dump "$OUT/$name" >/dev/null 2>&1 || fail "dump of $OUT/$name exited $?"
done
echo "ok every size's recording is readable by report and dump"


"$PY" - "$WORK" "$OUT" "$PAGES" "$PASSES" "$SCAN_LINE" <<'PYEOF' || fail "sweep checks failed"
import csv, glob, json, os, sys
import xml.etree.ElementTree as ET
work, out, pages, passes, line = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:])
from checks import check, errors
MiB = 2**20
text = open(os.path.join(work, "sweep.csv")).read().splitlines()
check(text[0] == "local_bytes,faults_total,first_touch,refault,soft,far_read_bytes,far_write_bytes,wall_s",
      "CSV header: %s" % text[0])
rows = list(csv.DictReader(text))
sizes = [int(r["local_bytes"]) for r in rows]
check(sizes == [8 * MiB, 6 * MiB, 3 * MiB, 2 * MiB, 1 * MiB], "rows largest first: %s" % sizes)
want_refaults = (passes - 1) * pages
for r in rows:
    L = int(r["local_bytes"])
    name = "L-%dM" % (L // MiB)
    # the row is the sum of the recording's stats.json files
    st = [json.load(open(p)) for p in glob.glob(os.path.join(out, name, "*", "stats.json"))]
    sums = {k: sum(s[k] for s in st) for k in ("faults_total", "faults_first_touch", "faults_refault", "faults_soft",
                                                 "far_read_pages", "far_write_pages")}
    check(len(st) == 1 and int(r["faults_total"]) == sums["faults_total"] and int(r["first_touch"]) == sums["faults_first_touch"]
          and int(r["refault"]) == sums["faults_refault"] and int(r["soft"]) == sums["faults_soft"]
          and int(r["far_read_bytes"]) == 4096 * sums["far_read_pages"] and int(r["far_write_bytes"]) == 4096 * sums["far_write_pages"],
          "%s: row %s = stats.json %s" % (name, dict(r), sums))
    check(float(r["wall_s"]) > 0, "%s: wall_s %s > 0" % (name, r["wall_s"]))
    site = [a for a in csv.DictReader(open(os.path.join(work, name + ".alloc.csv")))
            if a["function"] == "main" and os.path.basename(a["file"]) == "cyclic_scan.c" and a["line"] == str(line)]
    if L < pages * 4096:
        check(len(site) == 1 and int(site[0]["refault"]) == want_refaults and int(site[0]["first_touch"]) == pages,
              "%s < %d pages: the scan buffer's site takes exactly %d refaults, %d first touches (%s)"
              % (name, pages, want_refaults, pages, [(a["refault"], a["first_touch"]) for a in site]))
        check(want_refaults <= int(r["refault"]) < want_refaults + 64 and int(r["far_read_bytes"]) >= want_refaults * 4096,
              "%s: sweep refaults %s within [%d, %d), far reads %s" % (name, r["refault"], want_refaults, want_refaults + 64, r["far_read_bytes"]))
    else:
        check(int(r["refault"]) == 0 and int(r["far_read_bytes"]) == 0 and (not site or int(site[0]["refault"]) == 0),
              "%s >= 1.5 x %d pages: no refault (%s)" % (name, pages, r["refault"]))
table = open(os.path.join(work, "table")).read()
knee = [l for l in table.splitlines() if l.endswith("<- knee")]
check(len(knee) == 1 and knee[0].split()[0:2] == ["6", "MiB"], "table marks the knee at 6 MiB: %s" % knee)
check("# knee: -L 6 MiB" in table, "table says the knee")
svg = ET.parse(os.path.join(out, "sweep.svg")).getroot()
ns = "{http://www.w3.org/2000/svg}"
points = [c for c in svg.iter(ns + "circle") if c.get("class") == "point"]
kl = [l for l in svg.iter(ns + "line") if l.get("id") == "knee"]
check(len(points) == 5, "sweep.svg: one point per size (%d)" % len(points))
labels = [t.text for t in svg.iter(ns + "text") if t.text and t.text.startswith("knee")]
check(len(kl) == 1 and labels == ["knee: -L 6 MiB"], "sweep.svg marks the knee: %s" % labels)
# the knee line is at the 6 MiB point's x
six = [p for p in points if "-L 6 MiB" in (p.find(ns + "title").text or "")]
check(len(six) == 1 and kl and six[0].get("cx") == kl[0].get("x1"), "the knee line stands on the 6 MiB point")
sys.exit(1 if errors else 0)
PYEOF

# Without --stacks the runs take no fault stacks (-s 0) but keep their allocation sites (the checks
# above read them); with --stacks, stacks and the same faults at each size.
for name in L-2M L-8M; do
	check_eq "$name: record -s (meta.json sample) without --stacks" "$(meta_of "sw/$name" sample)" 0
	check_eq "$name: fault contexts without --stacks" "$(stat_of "sw/$name" contexts_written)" 0
	check_eq "$name: no timeline without --stacks" "$(meta_of "sw/$name" timeline_ms)" 0
done
"$FAULTLINE" sweep --stacks --policy fifo -c 1 -L 2M,8M -o "$WORK/sws" -- "$PLANTED/cyclic_scan" $PAGES $PASSES \
	>/dev/null 2>"$WORK/sws.err" || { cat "$WORK/sws.err" >&2; fail "sweep --stacks exited $?"; }
for name in L-2M L-8M; do
	check_eq "$name: record -s with --stacks" "$(meta_of "sws/$name" sample)" 1
	check_ge "$name: fault contexts with --stacks" "$(stat_of "sws/$name" contexts_written)" 1
	check_eq "$name: the timeline with --stacks" "$(meta_of "sws/$name" timeline_ms)" 20
	for key in faults_total faults_first_touch faults_refault; do
		check_eq "$name: $key with and without --stacks" "$(stat_of "sws/$name" $key)" "$(stat_of "sw/$name" $key)"
	done
done
"$FAULTLINE" sweep -s 4 --policy fifo -L 2M -o "$WORK/sw4" -- "$PLANTED/cyclic_scan" 64 1 >/dev/null 2>&1 ||
	fail "sweep -s 4 exited $?"
check_eq "the user's -s 4 is kept" "$(meta_of "sw4/L-2M" sample)" 4
"$FAULTLINE" sweep --timeline=5 --policy fifo -L 2M -o "$WORK/swt" -- "$PLANTED/cyclic_scan" 64 1 >/dev/null 2>&1 ||
	fail "sweep --timeline=5 exited $?"
check_eq "the user's --timeline=5 is kept" "$(meta_of "swt/L-2M" timeline_ms)" 5

# --auto: the unlimited run's peak, halved down to 1/16 (the 1 MiB floor once, and not next to a size
# within a quarter of it).
"$FAULTLINE" sweep --policy fifo --auto --format csv -o "$WORK/auto" -- "$PLANTED/cyclic_scan" 512 2 >"$WORK/auto.csv" 2>"$WORK/auto.err" ||
	{ cat "$WORK/auto.err" >&2; fail "sweep --auto exited $?"; }
peak=$(max_stat "$WORK/auto/unlimited" peak_resident_bytes) || fail "--auto: no unlimited recording"
"$PY" - "$WORK/auto.csv" "$peak" <<'PYEOF' || fail "--auto checks failed"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
peak = int(sys.argv[2])
want = [0]
pages = fit = (peak + 4095) // 4096  # first the smallest -L holding the peak with the reserve free
for _ in range(8):
    fit = pages + min(max(fit // 16, 16), 4096)
for i in range(5):  # halves down to 1/16, none below the runtime's 1 MiB floor, no size twice,
    size = max(((peak >> i) + 4095) // 4096 * 4096, 2**20)  # nor the floor within a quarter of the one before
    if i == 0:
        size = max(fit * 4096, 2**20)
    if len(want) == 1 or want[-1] - size >= want[-1] // 4:
        want.append(size)
got = [int(r["local_bytes"]) for r in rows]
ok = got == want and len(want) >= 3
print(("ok " if ok else "FAIL: ") + "--auto sizes %s = unlimited, then peak %d halved down to 1/16 %s" % (got, peak, want))
# the largest size holds the program: no refault there (at the peak itself, the evictor started)
top = [r for r in rows if int(r["local_bytes"])][0]
ok = ok and int(top["refault"]) == 0
print(("ok " if int(top["refault"]) == 0 else "FAIL: ") + "--auto's largest size %s: %s refaults" % (top["local_bytes"], top["refault"]))
open(sys.argv[1] + ".n", "w").write(str(len(want)))
sys.exit(0 if ok else 1)
PYEOF
cmp -s "$WORK/auto.csv" "$WORK/auto/sweep.csv" || fail "--format csv: stdout and sweep.csv differ"
[ "$(ls -d "$WORK"/auto/unlimited "$WORK"/auto/L-* | wc -l)" -eq "$(cat "$WORK/auto.csv.n")" ] || fail "--auto: want one recording per row: $(ls "$WORK/auto")"
echo "ok --auto"

# Every run reads the same stdin: a file on stdin is rewound before each run, a pipe read whole first
# (before, only the first run got the input: sqlite3 < script swept as 129,082 faults, then 31).
seq 1 100000 >"$WORK/input.txt"
bytes=$(wc -c <"$WORK/input.txt")
"$FAULTLINE" sweep -L 2M,1M -o "$WORK/swin" -- wc -c <"$WORK/input.txt" >/dev/null 2>"$WORK/swin.err" ||
	{ cat "$WORK/swin.err" >&2; fail "sweep with a file on stdin exited $?"; }
cat "$WORK/input.txt" | "$FAULTLINE" sweep -L 2M,1M -o "$WORK/swpipe" -- wc -c >/dev/null 2>"$WORK/swpipe.err" ||
	{ cat "$WORK/swpipe.err" >&2; fail "sweep with a pipe on stdin exited $?"; }
for d in swin/L-2M swin/L-1M swpipe/L-2M swpipe/L-1M; do
	[ "$(grep -v '^faultline' "$WORK/$d/record.log")" = "$bytes" ] ||
		fail "$d: the program read [$(cat "$WORK/$d/record.log")] from stdin, want $bytes bytes"
done
grep -q "stdin is a pipe: read whole" "$WORK/swpipe.err" || fail "sweep did not say it kept the piped stdin"
[ -z "$(ls -A "$WORK/swpipe" | grep stdin)" ] || fail "the kept stdin is left in the output directory"
echo "ok every run read the whole stdin ($bytes bytes), from a file and from a pipe"
# a pipe that stays open without input (ssh's stdin) is not waited on for ever: the runs get it as it is
mkfifo "$WORK/idle.fifo"
exec 7<>"$WORK/idle.fifo" # a writer that never writes nor closes
rc=0; timeout "$(scaled 30)" "$FAULTLINE" sweep -L 1M -o "$WORK/swidle" -- true <"$WORK/idle.fifo" >/dev/null 2>"$WORK/swidle.err" || rc=$?
exec 7>&-
[ "$rc" -eq 0 ] && grep -q "gave nothing in 2 s" "$WORK/swidle.err" ||
	fail "sweep with an idle pipe on stdin: exit $rc (124: it waited for the pipe's end): $(cat "$WORK/swidle.err")"
echo "ok an idle pipe on stdin: the sweep ran without waiting for its end"

# Bad input.
expect_exit() {
	local want=$1 what=$2; shift 2
	local rc=0
	"$FAULTLINE" sweep "$@" >"$WORK/bad.out" 2>"$WORK/bad.err" || rc=$?
	[ "$rc" -eq "$want" ] && [ -s "$WORK/bad.err" ] || fail "$what: exit $rc (want $want): $(cat "$WORK/bad.err")"
	echo "ok $what: exit $want: $(head -n1 "$WORK/bad.err")"
}
expect_exit 2 "no sizes" -o "$WORK/b1" -- true
expect_exit 2 "-L and --auto" -L 1M --auto -o "$WORK/b2" -- true
expect_exit 2 "bad size" -L 1M,x -o "$WORK/b3" -- true
expect_exit 2 "size below the runtime's 1 MiB" -L 512K -o "$WORK/b3" -- true
expect_exit 2 "no command" -L 1M -o "$WORK/b4"
expect_exit 2 "unknown option" -L 1M --bogus -o "$WORK/b5" -- true
expect_exit 2 "a stray word before --" -L 1M stray -o "$WORK/b5" -- true
expect_exit 2 "bad record option" -L 1M --policy lru -o "$WORK/b5" -- true
[ ! -e "$WORK/b3" ] && [ ! -e "$WORK/b5" ] || fail "a usage error left an output directory"
expect_exit 1 "existing output directory" -L 1M -o "$OUT" -- true
expect_exit 2 "the same size twice" -L 2M,2048K -o "$WORK/b5" -- true
# an option record refuses only with the size (-L above -M): record's own reason, exit 2, before
# any run (the 4M run would take time for nothing)
expect_exit 2 "-L above record's -M" -L 4M,64M -M 8M -o "$WORK/bm" -- true
grep -q -- '-L 64 MiB is larger than -M 8 MiB' "$WORK/bad.err" ||
	fail "-L above -M: record's reason not shown: $(cat "$WORK/bad.err")"
[ ! -e "$WORK/bm/L-4M" ] || fail "-L above -M: the 4M run was made before the refusal"
# a program that fails only at some sizes fails the sweep (here: exit 5 below 2 MiB of -L, which
# the runtime's environment tells it); one that exits non-zero at every size is swept as any other
# (grep without a match, diff), its status named in the progress lines
expect_exit 1 "a program failing at one size only" -L 1M,4M -o "$WORK/b6" -- sh -c '[ "$FAULTLINE_LOCAL_BYTES" -gt 2000000 ] || exit 5'
grep -q 'record exited 0 where the run at -L 1 MiB exited 5' "$WORK/bad.err" || fail "failing program: no line naming both statuses: $(cat "$WORK/bad.err")"
# 70 is the runtime's own stop (a far store failing, or no runtime at all): a failure even at every size
expect_exit 1 "a program stopped by the runtime (status 70)" -L 1M,2M -o "$WORK/b8" -- sh -c 'exit 70'
grep -q 'sweep: -L 1 MiB: record exited 70: the runtime stopped the program' "$WORK/bad.err" ||
	fail "status 70: no line naming the runtime's stop: $(cat "$WORK/bad.err")"
rc=0; "$FAULTLINE" sweep -L 1M,2M -o "$WORK/b7" -- false >"$WORK/false.out" 2>"$WORK/false.err" || rc=$?
check_eq "a program exiting 1 at every size: sweep's exit status" "$rc" 0
check_eq "a program exiting 1 at every size: progress lines naming its status" "$(grep -c '(exit status 1, as at every size so far)' "$WORK/false.err")" 2
check_eq "a program exiting 1 at every size: rows" "$(grep -c '^ *[12] MiB ' "$WORK/false.out")" 2
"$FAULTLINE" sweep --help >"$WORK/help" 2>&1 || fail "sweep --help exited $?"
grep -q 'local_bytes,faults_total,first_touch,refault,soft,far_read_bytes,far_write_bytes,wall_s' "$WORK/help" || fail "sweep --help lacks the CSV columns"
echo "ok sweep --help"

# SIGTERM to the sweep reaches the running record and its program; the sweep stops with 143.
"$FAULTLINE" sweep -L 1M,2M -o "$WORK/sig" -- sleep 120 >/dev/null 2>"$WORK/sig.err" &
SWEEP=$!
for _ in $(seq 1 "$(scaled 20)"); do [ -s "$WORK/sig.err" ] && break; sleep 0.5; done
sleep 1
kill -TERM "$SWEEP"
RC=0; wait "$SWEEP" || RC=$?
[ "$RC" -eq 143 ] && grep -q 'stopped by signal 15' "$WORK/sig.err" || fail "SIGTERM: exit $RC: $(cat "$WORK/sig.err")"
[ ! -d "$WORK/sig/L-2M" ] || fail "SIGTERM: the sweep went on to the next size"
echo "ok SIGTERM stops the sweep (exit 143) and its running record"
