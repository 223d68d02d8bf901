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
#   - visualize: the folded stacks have both main and frames of the other file;
#   - report --format json: each row's "stack" (the row's most common stack, listed in full) has as
#     its callsite frame the row's own callsite: the row of the other file does not list main;
#   - report --symbol '^main$': exactly the faults whose stack, as export names it at the fault's
#     time, has a frame main (none from T on);
#   - export --pprof (when go is installed): go tool pprof -top's flat count per function equals
#     report --by function's rows (main has only the faults before T);
#   - dump --symbolize: the callsite frame ('*') is main site_agree.c:SITE on exactly the faults
#     before T export names so, and no fault line from T on names main.
# Ranges name allocation sites, and site_agree's allocations all precede T, so a second recording
# does: malloc_large, whose blocks come from one malloc line over the run, gets the same kind of
# swap at T', the time of its middle block's allocation. The blocks allocated before T' are named
# main malloc_large.c:LINE, those from T' on by the other file. Expected:
#   - ranges --format json: each site (by its alloc_id) named as export's callsites name its
#     allocation's stack, blocks of both kinds among the sites (one stack, two sites);
#   - ranges --no-symbols: the sites named malloc_large+0xOFF before T', otherbin+0xOFF after;
#   - report --by alloc --format json: each row lists an allocation stack whose callsite is the
#     row's site (the row of the other file does not list main);
#   - ranges' mappings: see the last section.
. "$(dirname "$0")/../lib.sh"

need_faultline
need_planted site_agree malloc_large
need_cmd sqlite3

# add_swap MAPS EXE OTHER T: appends to the maps file MAPS a snapshot "# maps T swap", a copy of its
# last snapshot in which the mappings of EXE are named OTHER.
add_swap() {
	"$PY" - "$@" <<'PYEOF' || fail "could not add the swap snapshot to $1"
import sys
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
}

# median_time DB: the median fault's time of the export DB, in its process's clock (the maps file's).
median_time() {
	sqlite3 "$1" "SELECT f.wall_ns - p.offset_ns FROM faults AS f JOIN processes AS p ON p.id = f.process_id
		ORDER BY f.wall_ns LIMIT 1 OFFSET (SELECT count(*) / 2 FROM faults)"
}

SRC=$ROOT/tests/planted/site_agree.c
SITE=$(grep -n 'SITE:' "$SRC" | cut -d: -f1)
[ -n "$SITE" ] || fail "no SITE line in $SRC"
expect_record mt -L 4 -M 256 -- "$PLANTED/site_agree" 8
REC=$WORK/mt
PID=$(proc_dirs "$REC" | head -1)
[ -n "$PID" ] && [ -f "$REC/$PID/maps" ] || fail "no process directory with a maps file in $REC"

"$FAULTLINE" export --sqlite "$WORK/before.db" "$REC" 2>"$WORK/export0.err" || fail "export: $(cat "$WORK/export0.err")"
# the median fault's time, in the process's clock (the maps file's)
T=$(median_time "$WORK/before.db")
is_int "$T" || fail "no median fault time (got '$T')"
say "the swap snapshot at $T ns"

OTHER=$WORK/otherbin
cp /bin/true "$OTHER"
EXE=$(readlink -f "$PLANTED/site_agree")
add_swap "$REC/$PID/maps" "$EXE" "$OTHER" "$T"

"$FAULTLINE" export --sqlite "$WORK/after.db" "$REC" 2>"$WORK/export.err" || fail "export: $(cat "$WORK/export.err")"
"$FAULTLINE" report "$REC" --format csv >"$WORK/callsite.csv" 2>"$WORK/report.err" || fail "report: $(cat "$WORK/report.err")"
"$FAULTLINE" visualize "$REC" -o "$WORK/viz" >/dev/null 2>"$WORK/viz.err" || fail "visualize: $(cat "$WORK/viz.err")"

"$PY" - "$WORK" "$SITE" "$T" "$OTHER" <<'PYEOF' || fail "a fault was named under the wrong maps snapshot"
import csv, glob, os, sqlite3, sys
work, site, t, other = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
from checks import check, errors

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

# report's stack listing (JSON rows), --symbol, dump --symbolize, and the pprof profile.
"$FAULTLINE" report "$REC" --format json --top 0 >"$WORK/rows.json" 2>"$WORK/json.err" || fail "report --format json: $(cat "$WORK/json.err")"
"$FAULTLINE" report "$REC" --symbol '^main$' --format csv --top 0 >"$WORK/symbol.csv" 2>"$WORK/symbol.err" ||
	fail "report --symbol: $(cat "$WORK/symbol.err")"
"$FAULTLINE" report "$REC" --by function --format csv --top 0 >"$WORK/function.csv" 2>"$WORK/function.err" ||
	fail "report --by function: $(cat "$WORK/function.err")"
"$FAULTLINE" dump --symbolize "$REC" >"$WORK/dump.txt" 2>"$WORK/dump.err" || fail "dump --symbolize: $(cat "$WORK/dump.err")"
PPROF=
if ! command -v go >/dev/null 2>&1; then
	say "SKIP the pprof check: go is not installed (go tool pprof comes with Debian's golang-go)"
else
	export GOCACHE=${GOCACHE:-$WORK/gocache} HOME=${HOME:-$WORK}
	if ! go tool pprof -h >/dev/null 2>&1; then
		say "SKIP the pprof check: go tool pprof does not run here"
	else
		"$FAULTLINE" export --pprof "$WORK/mt.pb.gz" "$REC" 2>"$WORK/pprof.err" || fail "export --pprof: $(cat "$WORK/pprof.err")"
		go tool pprof -symbolize=none -top -nodefraction=0 -nodecount=1000000 -sample_index=faults "$WORK/mt.pb.gz" \
			>"$WORK/top" 2>"$WORK/top.err" || fail "go tool pprof -top: $(cat "$WORK/top.err")"
		PPROF=$WORK/top
	fi
fi

"$PY" - "$WORK" "$SITE" "$T" "$OTHER" "$PPROF" <<'PYEOF' || fail "a stack listing, filter or profile named a fault under the wrong maps snapshot"
import collections, csv, json, os, re, sqlite3, sys
work, site, t, other, pprof = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
from checks import check, errors
db = sqlite3.connect(os.path.join(work, "after.db"))

# report JSON: each row's listed stack has the row's callsite as its callsite frame
rows = json.load(open(os.path.join(work, "rows.json")))
bad, other_rows = [], 0
for r in rows:
    frames = [f for f in r.get("stack", []) if f["callsite"]]
    if not frames:
        continue
    f = frames[0]
    # a frame without a function name is named by its label, as the row is
    if (f["function"] or f["label"], f["file"] or "", f["line"], f["binary"] or "") != (r["function"] or "", r["file"] or "", r["line"], r["binary"] or ""):
        bad.append("row %s %s:%s [%s] lists a stack whose callsite is %s %s:%s [%s]" % (
            r["function"], r["file"], r["line"], r["binary"], f["function"], f["file"], f["line"], f["binary"]))
    other_rows += r["binary"] == other
check(other_rows > 0, "report JSON: %d row(s) in %s" % (other_rows, os.path.basename(other)))
check(not bad, "report JSON: every row's stack has the row's callsite as its callsite frame%s" % ("; " + "; ".join(bad[:3]) if bad else ""))
late_listing_main = sum(1 for r in rows if r["binary"] == other and any(f["function"] == "main" for f in r.get("stack", [])))
check(late_listing_main == 0, "report JSON: no row of %s lists main in its stack (got %d)" % (os.path.basename(other), late_listing_main))

# --symbol '^main$': the faults whose stack (as named at the fault's time) has a frame main
want_before, want_after = db.execute(
    "SELECT coalesce(sum(f.wall_ns - p.offset_ns < ?), 0), coalesce(sum(f.wall_ns - p.offset_ns >= ?), 0) FROM faults AS f "
    "JOIN processes AS p ON p.id = f.process_id WHERE EXISTS (SELECT 1 FROM frames AS x WHERE x.stack_id = f.stack_id AND x.function = 'main')",
    (t, t)).fetchone()
got = sum(int(r["faults"]) for r in csv.DictReader(open(os.path.join(work, "symbol.csv"))))
check(want_before > 0 and want_after == 0, "export: %d faults before the swap have a frame main, %d from it on" % (want_before, want_after))
check(got == want_before, "report --symbol '^main$': %d faults, the %d whose stack names main at their time" % (got, want_before))

# dump --symbolize: the callsite frame per fault, before and after T (dump's times are the
# recording's: T plus the process's offset)
offset = db.execute("SELECT offset_ns FROM processes").fetchone()[0]
marked = "*main site_agree.c:%d" % site
early_marked = late_main = late_lines = 0
for line in open(os.path.join(work, "dump.txt")):
    if line.startswith("#") or " sym=" not in line:
        continue
    sec, ns = line.split()[0].split(".")
    when = int(sec) * 1000000000 + int(ns) - offset
    sym = line.split(" sym=", 1)[1]
    frames = sym.strip().split(" ; ")
    if when < t:
        early_marked += any(os.path.basename(f.split(" ")[1].rsplit(":", 1)[0]) == "site_agree.c" and f.startswith("*main ")
                            and f.endswith(":%d" % site) for f in frames if " " in f)
    else:
        late_lines += sym.strip() != "-"
        late_main += any(f.lstrip("*").startswith("main ") for f in frames)
early_main = db.execute("SELECT count(*) FROM faults AS f JOIN processes AS p ON p.id = f.process_id JOIN callsites AS c "
                        "ON c.stack_id = f.stack_id WHERE f.wall_ns - p.offset_ns < ? AND c.function = 'main' AND c.line = ?",
                        (t, site)).fetchone()[0]
check(early_marked == early_main, "dump --symbolize: %d faults before the swap marked %s (export: %d)" % (early_marked, marked, early_main))
check(late_lines > 0 and late_main == 0, "dump --symbolize: none of the %d fault lines from the swap on names main (got %d)" % (late_lines, late_main))

# pprof: flat faults per function = report --by function
if pprof:
    flat = collections.Counter()
    for line in open(pprof):
        m = re.match(r"^\s*(\d+)\s+\S+%\s+\S+%\s+(\d+)\s+\S+%\s+(.*)$", line)
        if m and int(m.group(1)):
            fn = m.group(3).strip()
            flat[fn[:-len(" (inline)")] if fn.endswith(" (inline)") else fn] += int(m.group(1))
    want = collections.Counter()
    for r in csv.DictReader(open(os.path.join(work, "function.csv"))):
        want[r["function"]] += int(r["faults"])
    want = {k: v for k, v in want.items() if v}
    check(dict(flat) == want, "pprof -top: flat faults per function = report --by function (main %d, report %d)%s" % (
        flat.get("main", 0), want.get("main", 0), "" if dict(flat) == want else "; pprof %s, report %s" % (sorted(flat.items())[:4], sorted(want.items())[:4])))
sys.exit(1 if errors else 0)
PYEOF

# Ranges: allocation sites named under the snapshot of the allocations' time.
ML_LINE=$(grep -n 'char \*p = malloc(n);' "$ROOT/tests/planted/malloc_large.c" | cut -d: -f1)
[ -n "$ML_LINE" ] || fail "no malloc(n) line in tests/planted/malloc_large.c"
expect_record ml -L 4 -M 512 -- "$PLANTED/malloc_large" 6
ML=$WORK/ml
MLPID=$(first_proc "$ML")
[ -n "$MLPID" ] && [ -f "$ML/$MLPID/maps" ] || fail "no process directory with a maps file in $ML"
"$FAULTLINE" export --sqlite "$WORK/ml0.db" "$ML" 2>"$WORK/ml0.err" || fail "export: $(cat "$WORK/ml0.err")"
# the time of the middle block's allocation (of those made at the malloc line), in the process's clock
T2=$(sqlite3 "$WORK/ml0.db" "SELECT a.time_ns - p.offset_ns FROM allocations AS a JOIN processes AS p ON p.id = a.process_id
	JOIN callsites AS c ON c.stack_id = a.stack_id WHERE c.function = 'main' AND c.line = $ML_LINE
	ORDER BY a.time_ns LIMIT 1 OFFSET (SELECT count(*) / 2 FROM allocations AS a JOIN callsites AS c ON c.stack_id = a.stack_id
	WHERE c.function = 'main' AND c.line = $ML_LINE)")
is_int "$T2" || fail "no allocation at malloc_large.c:$ML_LINE in $ML (got '$T2')"
say "malloc_large: the swap snapshot at $T2 ns"
add_swap "$ML/$MLPID/maps" "$(readlink -f "$PLANTED/malloc_large")" "$OTHER" "$T2"
"$FAULTLINE" export --sqlite "$WORK/ml.db" "$ML" 2>"$WORK/ml.err" || fail "export: $(cat "$WORK/ml.err")"
"$FAULTLINE" ranges "$ML" --format json --sites 1000 >"$WORK/ranges.json" 2>"$WORK/ranges.err" || fail "ranges: $(cat "$WORK/ranges.err")"
"$FAULTLINE" ranges "$ML" --format json --sites 1000 --no-symbols >"$WORK/ranges_raw.json" 2>"$WORK/ranges_raw.err" ||
	fail "ranges --no-symbols: $(cat "$WORK/ranges_raw.err")"
"$FAULTLINE" report "$ML" --by alloc --format json --top 0 >"$WORK/alloc_rows.json" 2>"$WORK/alloc_rows.err" ||
	fail "report --by alloc --format json: $(cat "$WORK/alloc_rows.err")"

"$PY" - "$WORK" "$ML_LINE" "$T2" "$OTHER" "$MLPID" <<'PYEOF' || fail "ranges named an allocation site under the wrong maps snapshot"
import json, os, sqlite3, sys
work, line, t, other, pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
from checks import check, errors
db = sqlite3.connect(os.path.join(work, "ml.db"))
pid = int(pid.split(".")[0])
def alloc(alloc_id):
    """(made before the swap, callsite function, file, line, binary, size) of an allocation, as export names it"""
    return db.execute("SELECT a.time_ns - p.offset_ns < ?, c.function, c.file, c.line, c.binary, a.size FROM allocations AS a "
                      "JOIN processes AS p ON p.id = a.process_id LEFT JOIN callsites AS c ON c.stack_id = a.stack_id "
                      "WHERE a.alloc_id = ? AND p.pid = ? ORDER BY a.time_ns LIMIT 1", (t, alloc_id, pid)).fetchone()
before = db.execute("SELECT count(*) FROM allocations AS a JOIN processes AS p ON p.id = a.process_id JOIN callsites AS c ON c.stack_id = a.stack_id "
                    "WHERE a.time_ns - p.offset_ns < ? AND c.function = 'main' AND c.line = ?", (t, line)).fetchone()[0]
after = db.execute("SELECT count(*) FROM allocations AS a JOIN processes AS p ON p.id = a.process_id JOIN callsites AS c ON c.stack_id = a.stack_id "
                   "WHERE a.time_ns - p.offset_ns >= ? AND c.binary = ? AND a.size >= 5 * 1048576", (t, other)).fetchone()[0]
check(before > 0 and after > 0, "export: %d blocks allocated at malloc_large.c:%d before the swap, %d blocks (5 MiB or more) named in %s after" % (before, line, after, os.path.basename(other)))

def sites(name):
    doc = json.load(open(os.path.join(work, name)))
    procs = doc if isinstance(doc, list) else doc.get("processes", doc.get("procs", []))
    for p in procs:
        for r in p["ranges"]:
            for s in r["sites"]:
                yield s
kinds = {"early": 0, "late": 0}  # sites of blocks (5 MiB or more), named right
bad = []
for s in sites("ranges.json"):
    a = alloc(s["alloc_id"])
    if a is None or a[1] is None:
        continue
    early, fn, file, ln, binary, size = a
    if early:
        want = "%s %s:%d" % (fn, os.path.basename(file or ""), ln or 0)
        ok = s["name"] == want
    else:
        want = "a name in %s" % os.path.basename(other)
        ok = binary == other and os.path.basename(other) in s["name"] and "malloc_large.c" not in s["name"]
    kinds["early" if early else "late"] += ok and size >= 5 * 1048576
    if not ok:
        bad.append("site of alloc %d (%s the swap) named '%s', want %s" % (s["alloc_id"], "before" if early else "after", s["name"], want))
check(not bad, "ranges: every site named as export names its allocation's stack at the allocation's time%s" % ("; " + "; ".join(bad[:3]) if bad else ""))
# one stack allocated the blocks on both sides of the swap: two sites, each named as at its time
check(kinds["early"] > 0 and kinds["late"] > 0, "ranges: sites of blocks made before (%d) and after (%d) the swap" % (kinds["early"], kinds["late"]))
bad, raw = [], {"early": 0, "late": 0}
for s in sites("ranges_raw.json"):
    a = alloc(s["alloc_id"])
    if a is None:
        continue
    prefix = "malloc_large+0x" if a[0] else os.path.basename(other) + "+0x"
    raw["early" if a[0] else "late"] += 1
    if not s["name"].startswith(prefix):
        bad.append("site of alloc %d named '%s', want %s..." % (s["alloc_id"], s["name"], prefix))
check(not bad and raw["early"] > 0 and raw["late"] > 0,
      "ranges --no-symbols: %d sites before the swap named malloc_large+0x..., %d after named %s+0x...%s" % (
          raw["early"], raw["late"], os.path.basename(other), "; " + "; ".join(bad[:3]) if bad else ""))

# report --by alloc JSON: each row's "stack" (its most common allocation stack) has the row's
# allocation site as its callsite frame, named as at the allocations' time
bad, other_rows = [], 0
for r in json.load(open(os.path.join(work, "alloc_rows.json"))):
    frames = [f for f in r.get("stack", []) if f["callsite"]]
    if not frames:
        continue
    f = frames[0]
    if (f["function"] or f["label"], f["file"] or "", f["line"], f["binary"] or "") != (r["function"] or "", r["file"] or "", r["line"], r["binary"] or ""):
        bad.append("row %s %s:%s [%s] lists an allocation stack whose callsite is %s %s:%s [%s]" % (
            r["function"], r["file"], r["line"], r["binary"], f["function"], f["file"], f["line"], f["binary"]))
    other_rows += r["binary"] == other
check(other_rows > 0 and not bad, "report --by alloc JSON: %d row(s) in %s, every row's stack has the row's site as its callsite%s" % (
    other_rows, os.path.basename(other), "; " + "; ".join(bad[:3]) if bad else ""))
sys.exit(1 if errors else 0)
PYEOF

# Ranges' mappings: those of every maps snapshot in force while the range's faults happened (from
# its first fault's to its last's), each once. The swap snapshot of the malloc_large recording gets
# the mapping that holds the middle of its top range cut in two there (as an mprotect would), so the
# range overlaps one mapping before T' and two from T' on: three mappings, where the snapshot at
# exit (what ranges listed before) has one. Expected: exactly the mappings computed here from the
# maps file and export's fault times.
TOP=$("$PY" -c 'import json, sys; r = json.load(open(sys.argv[1]))["processes"][0]["ranges"][0]; print(r["start_addr"], r["end_addr"])' "$WORK/ranges.json")
"$PY" - "$ML/$MLPID/maps" $TOP <<'PYEOF' || fail "could not cut a mapping in the swap snapshot"
import sys
path, lo, hi = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
text = open(path).read()
head, last = text[: text.rindex("# maps ")], text[text.rindex("# maps "):]
title, body = last.split("\n", 1)
assert title.endswith(" swap"), title
mid = (lo + (hi - lo) // 2) & ~4095
out, cut = [], 0
for l in body.splitlines():
    f = l.split()
    a, b = (int(x, 16) for x in f[0].split("-"))
    if a < mid < b:
        rest = l[len(f[0]):]
        out += ["%x-%x%s" % (a, mid, rest), "%x-%x%s" % (mid, b, rest)]
        cut += 1
    else:
        out.append(l)
if cut != 1:
    sys.exit("no mapping holds 0x%x in the swap snapshot" % mid)
open(path, "w").write(head + title + "\n" + "".join(l + "\n" for l in out))
PYEOF
"$FAULTLINE" ranges "$ML" --format json >"$WORK/ranges_maps.json" 2>"$WORK/ranges_maps.err" || fail "ranges: $(cat "$WORK/ranges_maps.err")"
"$PY" - "$WORK" "$ML/$MLPID/maps" <<'PYEOF' || fail "ranges listed the wrong mappings"
import json, os, sqlite3, sys
work, maps_path = sys.argv[1:]
db = sqlite3.connect(os.path.join(work, "ml.db"))
offset, rs, rsize = db.execute("SELECT offset_ns, region_start, region_size FROM processes").fetchone()
snaps = []  # (time, lines), sorted by time (ties keep file order), as the reader sorts them
for block in open(maps_path).read().split("# maps ")[1:]:
    title, body = block.split("\n", 1)
    snaps.append((int(title.split()[0]), [l for l in body.splitlines() if l.strip()]))
snaps.sort(key=lambda s: s[0])
def at(t):
    i = 0
    for k, (st, _) in enumerate(snaps):
        if st <= t:
            i = k
    return i
r = json.load(open(os.path.join(work, "ranges_maps.json")))["processes"][0]["ranges"][0]
lo, hi = r["start_addr"], r["end_addr"]
t0, t1 = db.execute("SELECT min(wall_ns) - ?, max(wall_ns) - ? FROM faults WHERE addr >= ? AND addr < ?", (offset, offset, lo, hi)).fetchone()
want = set()
for time, lines in snaps[at(t0): at(t1) + 1]:
    for l in lines:
        f = l.split(None, 5)
        a, b = (int(x, 16) for x in f[0].split("-"))
        if a < hi and b > lo:
            name = f[5].strip() if len(f) > 5 else ""
            name = name or ("[faultline region]" if a < rs + rsize and b > rs else "[anon]")
            want.add((a, b, f[1], name))
got = {(int(m["start"], 16), int(m["end"], 16), m["perms"], m["name"]) for m in r["mappings"]}
ok = len(want) == 3 and r["mappings_total"] == len(want) and got == want
print(("ok " if ok else "FAIL: ") + "ranges: the top range lists the %d mappings of the snapshots in force during its faults (got %d of %d: %s; want %s)" % (
    len(want), len(got), r["mappings_total"], sorted(got), sorted(want)))
sys.exit(0 if ok else 1)
PYEOF

echo "ok every verb names each fault under the maps snapshot of its time"
