#!/usr/bin/env bash
# tests/cases/report_fill.sh: `faultline report` and `faultline export --sqlite` on the planted fill program
# (256 MiB written once, then read twice, under -L 64 -M 512; FAULTLINE_TEST_REPORT_MIB=128 with -L 32 halves
# it and scales every threshold):
#   - the fill loop is the top first-touch callsite with first-touch >= the buffer's pages: the store's
#     innermost source frame is pattern_word (gcc gives the store its line), inlined into fill_words at the
#     fill loop's line in planted.h; with --skip pattern_word the row is fill_words at that very line;
#   - the two read passes are refaults at verify_words' read line (>= 2 x (pages - local pages));
#   - --by alloc puts them all at main's malloc line in fill.c;
#   - the table, CSV and JSON agree (parsed with python3's csv and json), PMU columns present;
#   - hot address ranges (RAP) under the table: the top range lies on the filled buffer, and the hot
#     ranges on the buffer hold >= 95 % of the faults on its pages (from `faultline dump`; RAP splits a
#     buffer that straddles an alignment boundary), the top range at most 4 MiB larger than the buffer, site main at the malloc line, lower <= faults <= upper; --ranges 0 drops the section,
#     --kind first-touch builds the tree from the first-touch records; JSON stays the array of rows,
#     with --ranges N it is {"rows": [the same array], "ranges": [...], "ranges_source": {...}}; CSV
#     never has them;
#   - export --sqlite: opens in python3's sqlite3, the first two example queries of faultline-export(1) (man/faultline-export.1.scd) run, the top-
#     callsite query agrees with report --format csv, counts match stats.json, existing FILE refused;
#   - bad input: a missing and an empty directory (exit 1), a faults file cut mid-record (warning, runs).
. "$(dirname "$0")/../lib.sh"

need_faultline
need_planted fill

MIB_FILL=${FAULTLINE_TEST_REPORT_MIB:-256}
LOCAL=$((MIB_FILL / 4))
PAGES=$((MIB_FILL * MIB / PAGE))
LOCAL_PAGES=$((LOCAL * MIB / PAGE))
PLANTED_SRC=$ROOT/tests/planted
FILL_LINE=$(grep -n 'p\[i\] = pattern_word(i, seed);' "$PLANTED_SRC/planted.h" | cut -d: -f1)
READ_LINE=$(grep -n 'got = p\[i\];' "$PLANTED_SRC/planted.h" | cut -d: -f1)
MALLOC_LINE=$(grep -n 'malloc(bytes)' "$PLANTED_SRC/fill.c" | cut -d: -f1)
[ -n "$FILL_LINE" ] && [ -n "$READ_LINE" ] && [ -n "$MALLOC_LINE" ] || fail "cannot find the fill/read/malloc lines in the planted sources"
say "fill loop planted.h:$FILL_LINE, read loop line $READ_LINE, malloc fill.c:$MALLOC_LINE"

expect_record fill -L "$LOCAL" -M $((MIB_FILL * 2)) -- "$PLANTED/fill" "$MIB_FILL"
check_stats fill --local $((LOCAL * MIB)) --max $((MIB_FILL * 2 * MIB))
REC=$WORK/fill

# report OUT ARGS...: faultline report ARGS > $WORK/OUT, stderr in $WORK/OUT.err; fails on a non-zero exit.
report() {
	local out=$1; shift
	"$FAULTLINE" report "$@" >"$WORK/$out" 2>"$WORK/$out.err" || { cat "$WORK/$out.err" >&2; fail "faultline report $* exited $?"; }
}

report table "$REC"
report csv "$REC" --format csv
report json "$REC" --format json
report ft.csv "$REC" --format csv --kind first-touch
report ft.json "$REC" --format json --kind first-touch --top 1
report skip.csv "$REC" --format csv --kind first-touch --skip pattern_word
report alloc.csv "$REC" --format csv --by alloc
report alloc "$REC" --by alloc
grep -q '^# faultline report of ' "$WORK/table" || fail "no report header: $(head -n3 "$WORK/table")"
grep -q '^# PMU events:      task-clock' "$WORK/table" || fail "PMU events not in the header"
grep -q '^# records lost:    0$' "$WORK/table" || fail "records lost not in the header"
echo "ok report header"

"$PY" - "$WORK" "$PAGES" "$LOCAL_PAGES" "$FILL_LINE" "$READ_LINE" "$MALLOC_LINE" <<'EOF' || fail "report checks failed"
import csv, json, os, sys
work, pages, local_pages, fill_line, read_line, malloc_line = sys.argv[1], *map(int, sys.argv[2:])
def rows(name):
    return list(csv.DictReader(open(os.path.join(work, name))))
def base(p):
    return os.path.basename(p or "")
from checks import check, errors

# The fill loop: top first-touch callsite, inlined chain through fill_words at the fill line.
ft = rows("ft.csv")
top = ft[0]
check(int(top["first_touch"]) >= pages, "top first-touch row has %s >= %d first-touch faults" % (top["first_touch"], pages))
check(base(top["file"]) == "planted.h", "top first-touch row is in planted.h (%s:%s %s)" % (top["file"], top["line"], top["function"]))
j = json.load(open(os.path.join(work, "ft.json")))[0]
cs = [i for i, f in enumerate(j["stack"]) if f["callsite"]][0]
pc = j["stack"][cs]["pc"]
chain = [(f["function"], base(f["file"]), f["line"]) for f in j["stack"] if f["pc"] == pc]
check(("fill_words", "planted.h", fill_line) in chain, "the callsite's inline chain %s holds fill_words at planted.h:%d" % (chain, fill_line))
sk = rows("skip.csv")[0]
check((sk["function"], base(sk["file"]), int(sk["line"])) == ("fill_words", "planted.h", fill_line) and int(sk["first_touch"]) >= pages,
      "--skip pattern_word: top first-touch row is fill_words planted.h:%d (%s %s:%s, %s)" % (fill_line, sk["function"], sk["file"], sk["line"], sk["first_touch"]))

# The read passes: refaults at the read loop's line (libbfd names the file of this out-of-line
# header function after the including file, as addr2line does; gdb says planted.h).
allrows = rows("csv")
reads = [r for r in allrows if r["function"] == "verify_words" and r["line"] == str(read_line)]
check(len(reads) == 1, "one verify_words row at line %d" % read_line)
if reads:
    check(int(reads[0]["refault"]) >= 2 * (pages - local_pages), "read loop refaults %s >= %d" % (reads[0]["refault"], 2 * (pages - local_pages)))
    check(int(reads[0]["reads"]) == int(reads[0]["faults"]), "read loop faults are reads")
fills = [r for r in allrows if int(r["first_touch"]) >= pages]
check(len(fills) == 1 and int(fills[0]["writes"]) == int(fills[0]["faults"]), "the fill row is all writes")

# --by alloc: the malloc line of fill.c.
al = rows("alloc.csv")[0]
check((al["function"], base(al["file"]), int(al["line"])) == ("main", "fill.c", malloc_line),
      "top allocation site main fill.c:%d (got %s %s:%s)" % (malloc_line, al["function"], al["file"], al["line"]))
check(int(al["first_touch"]) >= pages and int(al["refault"]) >= 2 * (pages - local_pages),
      "allocation site holds the fill and both read passes (%s first-touch, %s refault)" % (al["first_touch"], al["refault"]))
check(al["allocs"] == "1", "one allocation at the site")

# PMU columns, per fault.
for key in ("task_clock_us_per_fault", "page_faults_per_fault", "context_switches_per_fault"):
    check(key in allrows[0] and float(allrows[0][key]) >= 0, "CSV has %s (%s)" % (key, allrows[0].get(key)))

# Table, CSV and JSON agree.
def table_rows(name):
    out, head = [], None
    for line in open(os.path.join(work, name)):
        if line.startswith("# ") and "faults" in line.split() and "%" in line.split():
            head = line[2:].split()
            continue
        if line.startswith("#") or not line.strip() or head is None:
            continue
        t = line.split()
        nnum = head.index(next(h for h in head if h in ("function", "allocation", "top")))
        out.append({"num": [x.replace(",", "").rstrip("%") for x in t[:nnum]], "function": " ".join(t[nnum:-2]),
                    "fileline": t[-2], "binary": t[-1], "head": head[:nnum]})
    return out
def agree(table, csvrows, jsonrows, what):
    check(len(table) == len(csvrows) == len(jsonrows), "%s: %d table rows, %d CSV, %d JSON" % (what, len(table), len(csvrows), len(jsonrows)))
    names = {"faults": "faults", "%": "percent", "first-touch": "first_touch", "refault": "refault", "soft": "soft",
             "concurrent": "concurrent", "reads": "reads", "writes": "writes", "allocs": "allocs"}
    bad = 0
    for t, c, js in zip(table, csvrows, jsonrows):
        for h, v in zip(t["head"], t["num"]):
            if h in names:
                key = names[h]
                if v != c[key] or float(c[key]) != float(js[key]):
                    bad += 1
                    print("  mismatch %s: table %s csv %s json %s" % (key, v, c[key], js[key]))
        fl = "%s:%s" % (base(c["file"]), c["line"]) if c["file"] else "-"
        if t["function"] != c["function"] or c["function"] != js["function"] or t["fileline"] != fl or \
           t["binary"] != (base(c["binary"]) or "-") or c["binary"] != (js["binary"] or ""):
            bad += 1
            print("  mismatch row: table %s %s %s, csv %s %s %s" % (t["function"], t["fileline"], t["binary"], c["function"], fl, c["binary"]))
        if not isinstance(js.get("stack"), list):
            bad += 1
    check(bad == 0, "%s: table, CSV and JSON agree on every row" % what)
agree(table_rows("table"), allrows, json.load(open(os.path.join(work, "json"))), "by callsite")
agree(table_rows("alloc"), rows("alloc.csv"), [dict(r, stack=[]) for r in rows("alloc.csv")], "by alloc (table vs CSV)")
sys.exit(1 if errors else 0)
EOF

# Hot address ranges under the table (and in JSON with --ranges).
report r.json "$REC" --format json --ranges 3
report r0 "$REC" --ranges 0
report rft "$REC" --kind first-touch --ranges 2
report rwin "$REC" --from 0 --to 1000
"$FAULTLINE" dump "$REC" >"$WORK/dump.txt" 2>/dev/null || fail "faultline dump failed"
grep -q 'hot address ranges' "$WORK/r0" && fail "--ranges 0 still shows the hot address ranges"
grep -q 'hot address ranges' "$WORK/csv" && fail "CSV shows the hot address ranges"
grep -q '^# hot address ranges .*whole recording: --from/--to do not apply' "$WORK/rwin" ||
	fail "--from/--to: the ranges section does not say it covers the whole recording"
RC=0; "$FAULTLINE" report "$REC" --ranges x >/dev/null 2>&1 || RC=$?
[ "$RC" -eq 2 ] || fail "--ranges x: exit $RC, want 2"
"$PY" - "$WORK" "$MIB_FILL" "$MALLOC_LINE" <<'EOF' || fail "hot address range checks failed"
import collections, json, os, re, sys
work, mib, malloc_line = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
from checks import check, errors
def section(name):
    lines = open(os.path.join(work, name)).read().splitlines()
    heads = [i for i, l in enumerate(lines) if l.startswith("# hot address ranges (RAP, ")]
    if len(heads) != 1:
        return None, []
    rows = []
    for l in lines[heads[0] + 1:]:
        # nested ranges are indented under their parent (a tree in address order)
        m = re.match(r"^#\s+[^0-9]*(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+(\S+ \S+)\s+([0-9,]+)\s+\[([0-9,]+), ([0-9,]+)\]\s+([0-9.]+)%  (.*)$", l)
        if m:
            g = m.groups()
            rows.append({"lo": int(g[0], 16), "hi": int(g[1], 16), "faults": int(g[3].replace(",", "")),
                         "lower": int(g[4].replace(",", "")), "upper": int(g[5].replace(",", "")), "pct": float(g[6]),
                         "site": g[7]})
    return lines[heads[0]], rows

head, rows = section("table")
check(head is not None and "ε 0.0100, φ 0.0500, source: online tree (ranges.rap)" in head,
      "table ends with the ranges section, from the online tree: %r" % head)
check(len(rows) >= 1, "the section has %d range rows" % len(rows))
# The filled buffer, from the dump: the allocation with the most faults, and the pages they hit.
faults, by_alloc = [], collections.defaultdict(list)
for line in open(os.path.join(work, "dump.txt")):
    if line.startswith("#"):
        continue
    f = line.split()
    addr, kind = int(f[3], 16), f[4]
    alloc = next(x for x in f if x.startswith("alloc="))
    faults.append((addr, kind))
    if alloc != "alloc=-":
        by_alloc[alloc].append(addr)
buf = max(by_alloc.values(), key=len)
blo, bhi = min(buf), max(buf) + 4096
check(bhi - blo >= mib * 2**20 - 8192, "the buffer's faults span %d MiB of addresses" % ((bhi - blo) >> 20))
if rows:
    # the table is a tree in address order; the top range (rank 1, most exclusive faults) is
    # the first of the JSON ranges
    ranked = json.load(open(os.path.join(work, "r.json"))).get("ranges", [])
    top = next((r for r in rows if ranked and (r["lo"], r["hi"]) == (int(ranked[0]["start"], 16), int(ranked[0]["end"], 16))), rows[0])
    # RAP's ranges are aligned powers of two (x branching): where the buffer falls across an
    # alignment boundary (ASLR decides) it is split over several hot ranges, the top one holding
    # the largest part: the top range must lie on the buffer, and the hot ranges that overlap the
    # buffer must hold >= 95 % of its faults together.
    on_buf = [r for r in rows if r["lo"] < bhi and blo < r["hi"]]
    inside = sum(1 for a in buf if any(r["lo"] <= a < r["hi"] for r in on_buf))
    check(top in on_buf, "the top range [0x%x, 0x%x) lies on the buffer [0x%x, 0x%x)" % (top["lo"], top["hi"], blo, bhi))
    check(inside >= 0.95 * len(buf), "the %d hot ranges on the buffer hold %d of its %d faults" % (len(on_buf), inside, len(buf)))
    check(top["hi"] - top["lo"] <= bhi - blo + 4 * 2**20, "top range is %d MiB for a %d MiB buffer" % ((top["hi"] - top["lo"]) >> 20, mib))
    check(top["lower"] <= top["faults"] <= top["upper"], "bounds [%d, %d] hold the estimate %d" % (top["lower"], top["upper"], top["faults"]))
    check(top["site"].startswith("main fill.c:%d" % malloc_line), "top allocation site %r is main fill.c:%d" % (top["site"], malloc_line))
    allin = sum(1 for a, _ in faults if top["lo"] <= a < top["hi"])
    check(abs(top["pct"] - 100.0 * allin / len(faults)) <= 1.0, "percent %.2f ~ %.2f%% of the dump's faults in the range" % (top["pct"], 100.0 * allin / len(faults)))

# JSON: the array of rows by default; with --ranges an object holding that same array.
plain = json.load(open(os.path.join(work, "json")))
obj = json.load(open(os.path.join(work, "r.json")))
check(isinstance(plain, list), "report --format json is still an array of rows")
check(isinstance(obj, dict) and set(obj) == {"rows", "ranges", "ranges_source"}, "with --ranges: an object with rows, ranges, ranges_source")
obj = obj if isinstance(obj, dict) else {}
check(obj.get("rows") == plain, "with --ranges: \"rows\" is the default output's array (%d rows)" % len(plain))
jr = obj.get("ranges", [])
check(1 <= len(jr) <= 3 and bool(rows) and (int(jr[0]["start"], 16), int(jr[0]["end"], 16), jr[0]["faults"]) == (top["lo"], top["hi"], top["faults"]),
      "JSON ranges (%d) agree with the table's top range" % len(jr))
src = obj.get("ranges_source", {})
check(src.get("method") == "RAP" and src.get("phi") == 0.05 and [p["source"] for p in src.get("processes", [])] == ["online"],
      "ranges_source: %s" % src)
check(all(r["lower"] <= r["faults"] <= r["upper"] and r["top_site"] for r in jr), "JSON ranges carry bounds and a top site")

# --kind first-touch: the tree is built from the first-touch records.
head, ft_rows = section("rft")
n_ft = sum(1 for _, k in faults if k == "first-touch")
check(head is not None and ("source: built from %s fault records" % format(n_ft, ",")) in head and "faults of kind first-touch" in head,
      "--kind first-touch: %r (%d first-touch faults)" % (head, n_ft))
check(1 <= len(ft_rows) <= 2 and ft_rows[0]["site"].startswith("main fill.c:"),
      "--kind first-touch --ranges 2: %d rows, top site %s" % (len(ft_rows), ft_rows[0]["site"] if ft_rows else None))
sys.exit(1 if errors else 0)
EOF
echo "ok hot address ranges: table section, --ranges 0, --kind, JSON object with --ranges, CSV without"

# export --sqlite
DB=$WORK/fill.db
"$FAULTLINE" export --sqlite "$DB" "$REC" 2>"$WORK/export.err" || { cat "$WORK/export.err" >&2; fail "export exited $?"; }
[ -s "$DB" ] || fail "export wrote no database"
echo "ok export --sqlite"
report top.csv "$REC" --format csv --top 0
total=$(stat_of fill faults_total)
"$PY" - "$DB" "$WORK/top.csv" "$ROOT/man/faultline-export.1.scd" "$total" <<'EOF' || fail "SQLite checks failed"
import csv, re, sqlite3, sys
db, top_csv, doc, total = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
con = sqlite3.connect(db)
from checks import check, errors
n = con.execute("SELECT COUNT(*) FROM faults").fetchone()[0]
check(n == total, "faults table holds %d rows = stats.json faults_total %d" % (n, total))
check(con.execute("SELECT COUNT(*) FROM contexts").fetchone()[0] == total, "one context per fault")
check(con.execute("SELECT COUNT(*) FROM processes").fetchone()[0] >= 1, "processes")
check(con.execute("SELECT COUNT(*) FROM frames WHERE inlined = 1").fetchone()[0] >= 1, "inlined frames exported")
idx = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
check({"faults_time", "faults_addr", "faults_stack"} <= idx, "indexes on time, address and stack: %s" % sorted(idx))
section = open(doc).read().split("\n# EXAMPLES\n", 1)[-1].split("\n# ", 1)[0]
queries = re.findall(r"```\n(SELECT .*?)```", section, re.S)
check(len(queries) >= 2, "faultline-export(1)'s EXAMPLES has two example queries")
top = con.execute(queries[0]).fetchall()
want = {(r["function"], r["file"] or None, int(r["line"]) if r["line"] else None, r["binary"] or None):
        (int(r["faults"]), int(r["first_touch"]), int(r["refault"])) for r in csv.DictReader(open(top_csv)) if r["function"] != "<no stack>"}
got = {tuple(r[:4]): tuple(r[4:7]) for r in top}
best = max(want.items(), key=lambda kv: kv[1][0])
check(len(got) > 0 and all(want.get(k) == v for k, v in got.items()) and got.get(best[0]) == best[1],
      "top-callsite query agrees with report --format csv (%d rows):\n  sql %s\n  csv %s" % (len(got), top[:2], best))
rows = con.execute(queries[1]).fetchall()
allocated = con.execute("SELECT COUNT(*) FROM faults AS f JOIN allocations AS a ON a.id = f.allocation_id "
                        "JOIN callsites AS c ON c.stack_id = a.stack_id").fetchone()[0]
check(len(rows) >= 1 and sum(r[-1] for r in rows) == allocated and allocated >= total // 2,
      "faults-per-allocation-site-over-time query: %d rows summing to the %d faults in allocations" % (len(rows), allocated))
sys.exit(1 if errors else 0)
EOF
RC=0; "$FAULTLINE" export --sqlite "$DB" "$REC" 2>"$WORK/export2.err" || RC=$?
[ "$RC" -eq 1 ] && grep -q 'exists (use --force' "$WORK/export2.err" || fail "export over an existing file: exit $RC: $(cat "$WORK/export2.err")"
"$FAULTLINE" export --sqlite "$DB" --force "$REC" 2>/dev/null || fail "export --force exited $?"
echo "ok export refuses an existing FILE, replaces it with --force"

# Bad input.
RC=0; "$FAULTLINE" report "$WORK/does-not-exist" >"$WORK/bad.out" 2>"$WORK/bad.err" || RC=$?
[ "$RC" -eq 1 ] && grep -q 'no such recording directory' "$WORK/bad.err" || fail "missing dir: exit $RC: $(cat "$WORK/bad.err")"
mkdir -p "$WORK/empty"
RC=0; "$FAULTLINE" report "$WORK/empty" >"$WORK/bad.out" 2>"$WORK/bad.err" || RC=$?
[ "$RC" -eq 1 ] && grep -q 'no process directory' "$WORK/bad.err" || fail "empty dir: exit $RC: $(cat "$WORK/bad.err")"
RC=0; "$FAULTLINE" export --sqlite "$WORK/empty.db" "$WORK/empty" 2>"$WORK/bad.err" || RC=$?
[ "$RC" -eq 1 ] && [ ! -e "$WORK/empty.db" ] || fail "export of an empty dir: exit $RC, $(ls "$WORK"/empty.db* 2>/dev/null)"
echo "ok missing and empty directories: exit 1"
cp -r "$REC" "$WORK/cut"
pdir=$(ls -d "$WORK"/cut/*/ | head -n1)
size=$(stat -c %s "$pdir/faults")
truncate -s $((64 + (size - 64) / 2 + 5)) "$pdir/faults"
report cut.table "$WORK/cut"
grep -Eq '^# warning: .*faults: (truncated at offset|frame [0-9]+ at offset [0-9]+: cut)' "$WORK/cut.table" || fail "cut faults file: no truncation warning in the header"
report cut.csv "$WORK/cut" --format csv
grep -Eq 'warning: .*faults: (truncated|frame [0-9]+ at offset [0-9]+: cut)' "$WORK/cut.csv.err" || fail "cut faults file: no warning on stderr with --format csv"
"$FAULTLINE" export --sqlite "$WORK/cut.db" "$WORK/cut" 2>/dev/null || fail "export of a cut recording exited $?"
echo "ok cut faults file: warning, report and export still run"
