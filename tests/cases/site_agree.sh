#!/usr/bin/env bash
# tests/cases/site_agree.sh: report, visualize, ranges and export name the same callsite for the same
# fault and allocation: they share one stack → frames → callsite resolver (tools/callsite.h).
# The planted program (tests/planted/site_agree.c) allocates an 8 MiB object inside libc (strdup
# calls malloc), whose first touches also happen inside libc (strdup's copy). Before the resolvers
# were one, visualize's heatmap named that allocation "from __GI___strdup" while report --by alloc
# and ranges named main. Now, for the strdup line of main (marked SITE in the source):
#   - report --by alloc: a row main site_agree.c:SITE (the object's faults);
#   - report --by callsite: the top row is main site_agree.c:SITE (strdup's copy, libc skipped);
#   - ranges --format json: the range on the object names main site_agree.c:SITE as its site;
#   - visualize: the heatmap names every allocation "from main", none from a libc function;
#   - export --sqlite: the object's allocation stack and the top callsite of its faults, through
#     the callsites view, are main at line SITE;
#   - qsort called from two functions: its buffers are two sites, each at its qsort line with its own
#     bytes (an allocation inside libc belongs to the program's call into libc).
. "$(dirname "$0")/../lib.sh"

need_faultline
need_planted site_agree

SRC=$ROOT/tests/planted/site_agree.c
SITE=$(grep -n 'SITE:' "$SRC" | cut -d: -f1)
[ -n "$SITE" ] || fail "no SITE line in $SRC"
say "the strdup line: site_agree.c:$SITE"
expect_record sa -L 4 -M 256 -- "$PLANTED/site_agree" 8
check_stats sa --local $((4 * MIB)) --max $((256 * MIB))
REC=$WORK/sa

"$FAULTLINE" report "$REC" --by alloc --format csv >"$WORK/alloc.csv" 2>"$WORK/alloc.err" || fail "report --by alloc: $(cat "$WORK/alloc.err")"
"$FAULTLINE" report "$REC" --format csv >"$WORK/callsite.csv" 2>"$WORK/callsite.err" || fail "report: $(cat "$WORK/callsite.err")"
"$FAULTLINE" ranges "$REC" --format json >"$WORK/ranges.json" 2>"$WORK/ranges.err" || fail "ranges: $(cat "$WORK/ranges.err")"
"$FAULTLINE" visualize "$REC" -o "$WORK/viz" >/dev/null 2>"$WORK/viz.err" || fail "visualize: $(cat "$WORK/viz.err")"
"$FAULTLINE" export --sqlite "$WORK/sa.db" "$REC" 2>"$WORK/export.err" || fail "export: $(cat "$WORK/export.err")"

"$PY" - "$WORK" "$SITE" <<'PYEOF' || fail "the verbs name different callsites"
import csv, json, os, re, sqlite3, sys
work, site = sys.argv[1], int(sys.argv[2])
want = ("main", "site_agree.c", site)
from checks import check, errors
def key(r):
    return (r["function"], os.path.basename(r["file"]), int(r["line"] or 0))

alloc = [key(r) for r in csv.DictReader(open(os.path.join(work, "alloc.csv")))]
check(want in alloc, "report --by alloc has a row main site_agree.c:%d (rows: %s)" % (site, alloc[:4]))
calls = [key(r) for r in csv.DictReader(open(os.path.join(work, "callsite.csv")))]
check(calls and calls[0] == want, "report's top callsite is main site_agree.c:%d (got %s)" % (site, calls[:2]))

ranges = json.load(open(os.path.join(work, "ranges.json")))
names = [s["name"] for p in ranges["processes"] for r in p["ranges"] for s in r.get("sites", [])]
check("main site_agree.c:%d" % site in names, "ranges names the object's site main site_agree.c:%d (sites: %s)" % (site, names[:6]))

svg = open(os.path.join(work, "viz", "heatmap.svg")).read()
froms = re.findall(r"alloc #\d+ \(pid \d+\) from ([^:<]+)", svg)
check(froms and all(f == "main" for f in froms), "visualize names every allocation from main (got %s)" % sorted(set(froms)))

db = sqlite3.connect(os.path.join(work, "sa.db"))
rows = db.execute("SELECT c.function, c.file, c.line FROM allocations AS a JOIN callsites AS c ON c.stack_id = a.stack_id "
                  "WHERE a.size = 8388609").fetchall()
got = [(f, os.path.basename(fl or ""), ln) for f, fl, ln in rows]
check(want in got, "export: an 8 MiB allocation whose callsite is main site_agree.c:%d (got %s)" % (site, got))
top = db.execute("SELECT c.function, c.file, c.line, count(*) AS n FROM faults AS f JOIN callsites AS c ON c.stack_id = f.stack_id "
                 "GROUP BY 1, 2, 3 ORDER BY n DESC LIMIT 1").fetchone()
check(top is not None and (top[0], os.path.basename(top[1] or ""), top[2]) == want,
      "export: the top fault callsite is main site_agree.c:%d, as report's (got %s)" % (site, top))
sys.exit(1 if errors else 0)
PYEOF
echo "ok report, visualize, ranges and export agree on main site_agree.c:$SITE"

# An allocation made inside libc for its caller (qsort's buffer) belongs to the place that called
# qsort: two functions that sort make two sites, each with its own bytes (before, the key was
# qsort's own return address, so both were one site named after the first caller, its 0.8 MB
# buffer credited with the other's 8 MB).
cat >"$WORK/qsort2.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
static int cmp(const void *a, const void *b) { long x = *(const long *)a, y = *(const long *)b; return (x > y) - (x < y); }
static void fill(long *v, size_t n) { for (size_t i = 0; i < n; i++) v[i] = (long)((i * 2654435761u) % 1000003); }
__attribute__((noinline)) static long sort_small(void) {
	size_t n = 100000; long *v = malloc(n * sizeof *v), s;
	fill(v, n);
	qsort(v, n, sizeof *v, cmp); /* QSORT_SMALL */
	s = v[n / 2]; free(v); return s;
}
__attribute__((noinline)) static long sort_big(void) {
	size_t n = 1000000; long *v = malloc(n * sizeof *v), s;
	fill(v, n);
	qsort(v, n, sizeof *v, cmp); /* QSORT_BIG */
	s = v[n / 2]; free(v); return s;
}
int main(void) { printf("%ld\n", sort_small() + sort_big()); return 0; }
C
gcc -O1 -g -o "$WORK/qsort2" "$WORK/qsort2.c" || fail "cannot build qsort2.c"
small_line=$(grep -n QSORT_SMALL "$WORK/qsort2.c" | cut -d: -f1) big_line=$(grep -n QSORT_BIG "$WORK/qsort2.c" | cut -d: -f1)
expect_record q2 -L 4 -M 256 -- "$WORK/qsort2"
"$FAULTLINE" report "$WORK/q2" --by alloc --format csv --top 0 >"$WORK/q2.csv" 2>"$WORK/q2.err" || fail "report q2: $(cat "$WORK/q2.err")"
"$PY" - "$WORK/q2.csv" "$small_line" "$big_line" <<'PYEOF' || fail "qsort's buffers"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
def site(fn, line):
    got = [r for r in rows if r["function"] == fn and r["line"] == line]
    assert len(got) == 1, "no single site %s line %s: %s" % (fn, line, [(r["function"], r["line"]) for r in rows])
    return int(got[0]["alloc_bytes"])
small, big = site("sort_small", sys.argv[2]), site("sort_big", sys.argv[3])
# qsort's buffer is the array's size (glibc's merge sort)
assert small == 800000 and big == 8000000, "qsort buffers: sort_small %d bytes, sort_big %d, want 800000 and 8000000" % (small, big)
print("ok qsort's buffers: sort_small %d bytes, sort_big %d bytes, two sites" % (small, big))
PYEOF
