#!/usr/bin/env bash
# tests/cases/diff.sh: `faultline diff A B` on two recordings of the planted cyclic scan (1024 pages read
# 4 times, tests/planted/cyclic_scan.c) under --policy fifo at -L 8M (no refault) and -L 2M (every
# re-read refaults):
#   - by callsite, by allocation site, and with --kind refault, the diff's a and b of every row equal
#     the two `faultline report --format csv --top 0` outputs (rows summed by function, file, line),
#     delta = b - a, relative_percent = delta / a, every location of either report present, rows
#     sorted by |delta|;
#   - the scan's read line is the top row with delta 3 x 1024; JSON carries the same rows as CSV;
#   - --folded writes difffolded's "stack A B" lines (main's own: 1024 4096); the differential flame
#     graph is well-formed SVG whose main frame is red (grew), its tooltip with A and B as the folded
#     stacks through main sum them;
#   - across policies (fifo vs clock at -L 2M) and program versions (cyclic_scan rebuilt with other
#     function addresses): rows equal the reports' difference; the versions' rows all match, delta 0;
#   - two recordings without fault stacks (-s 0): one <no stack> row, and a hint to use --by alloc;
#   - bad input: one recording, three, a missing one (exit 2, 2, 1), a bad --kind (exit 2);
#   - a function of one name in a program and in its library, both without debug information: two
#     rows, each naming its binary.
. "$(dirname "$0")/../lib.sh"

need_faultline
need_planted cyclic_scan

READ_LINE=$(grep -n 'sum += buf\[p \* WORDS_PER_PAGE\];' "$ROOT/tests/planted/cyclic_scan.c" | cut -d: -f1)
[ -n "$READ_LINE" ] || fail "cannot find the read line of cyclic_scan.c"
# one handler (-c 1): the refaults are exact only when faults are served one after the other
# (tests/cases/sweep.sh says why)
expect_record big --policy fifo -c 1 -L 8M -- "$PLANTED/cyclic_scan" 1024 4
expect_record small --policy fifo -c 1 -L 2M -- "$PLANTED/cyclic_scan" 1024 4
A=$WORK/big B=$WORK/small

run() { # run OUT CMD...: stdout to $WORK/OUT, fails on a non-zero exit
	local out=$1; shift
	"$@" >"$WORK/$out" 2>"$WORK/$out.err" || { cat "$WORK/$out.err" >&2; fail "$* exited $?"; }
}
for sel in "callsite:--by callsite" "alloc:--by alloc" "refault:--kind refault" "function:--by function"; do
	name=${sel%%:*} args=${sel#*:}
	# shellcheck disable=SC2086
	run "$name.a.csv" "$FAULTLINE" report "$A" --format csv --top 0 $args
	# shellcheck disable=SC2086
	run "$name.b.csv" "$FAULTLINE" report "$B" --format csv --top 0 $args
	# shellcheck disable=SC2086
	run "$name.diff.csv" "$FAULTLINE" diff "$A" "$B" --format csv --top 0 $args
done
run diff.json "$FAULTLINE" diff "$A" "$B" --format json --top 0
run diff.table "$FAULTLINE" diff "$A" "$B" --flame "$WORK/diff.svg" --folded "$WORK/diff.folded"

"$PY" - "$WORK" "$READ_LINE" <<'PYEOF' || fail "diff checks failed"
import collections, csv, json, os, sys
import xml.etree.ElementTree as ET
work, read_line = sys.argv[1], int(sys.argv[2])
from checks import check, errors
def rows(name):
    return list(csv.DictReader(open(os.path.join(work, name))))
def key(r):
    return (r["function"], r["file"], r["line"])
header = open(os.path.join(work, "callsite.diff.csv")).readline().strip()
check(header.startswith("function,file,line,a,b,delta"), "CSV header starts with function,file,line,a,b,delta: %s" % header)
for name in ("callsite", "alloc", "refault", "function"):
    want = collections.defaultdict(lambda: [0, 0])
    for side, f in ((0, name + ".a.csv"), (1, name + ".b.csv")):
        for r in rows(f):
            # by function the report shows the row's most common callsite; the diff keys the function
            k = (r["function"], "", "") if name == "function" else key(r)
            want[k][side] += int(r["faults"])
    got = {key(r): r for r in rows(name + ".diff.csv")}
    bad = [k for k in set(want) | set(got) if k not in got or k not in want or
           [int(got[k]["a"]), int(got[k]["b"])] != want[k] or int(got[k]["delta"]) != want[k][1] - want[k][0] or
           (want[k][0] and abs(float(got[k]["relative_percent"]) - 100.0 * (want[k][1] - want[k][0]) / want[k][0]) > 0.01) or
           (not want[k][0] and got[k]["relative_percent"] != "")]
    check(not bad and len(got) == len(want), "%s: %d diff rows = the two reports' difference (mismatches: %s)" % (name, len(got), bad[:3]))
    deltas = [abs(int(r["delta"])) for r in rows(name + ".diff.csv")]
    check(deltas == sorted(deltas, reverse=True), "%s: sorted by |delta|" % name)
top = rows("callsite.diff.csv")[0]
check((top["function"], os.path.basename(top["file"]), int(top["line"]), int(top["delta"])) == ("main", "cyclic_scan.c", read_line, 3 * 1024),
      "top callsite row: main cyclic_scan.c:%d delta 3072 (%s)" % (read_line, dict(top)))
rt = rows("refault.diff.csv")[0]
check(int(rt["a"]) == 0 and int(rt["b"]) == 3 * 1024 and rt["relative_percent"] == "", "--kind refault top row: new, 0 -> 3072 (%s)" % dict(rt))
j = json.load(open(os.path.join(work, "diff.json")))
check([(r["function"], r["file"] or "", str(r["line"] or ""), str(r["a"]), str(r["b"]), str(r["delta"])) for r in j["rows"]] ==
      [(r["function"], r["file"], r["line"], r["a"], r["b"], r["delta"]) for r in rows("callsite.diff.csv")],
      "JSON rows = CSV rows (%d)" % len(j["rows"]))
check(j["total_b"] - j["total_a"] == sum(int(r["delta"]) for r in rows("callsite.diff.csv")), "JSON totals agree with the deltas")
table = open(os.path.join(work, "diff.table")).read().splitlines()
first = [l for l in table if not l.startswith("#")][0].split()
check(first[:4] == ["1,024", "4,096", "+3,072", "+300.0%"] and first[4] == "main", "table's top row: %s" % first)
svg = ET.parse(os.path.join(work, "diff.svg")).getroot()
ns = "{http://www.w3.org/2000/svg}"
folded = [l.rsplit(" ", 2) for l in open(os.path.join(work, "diff.folded"))]
check(any(l[0].endswith(";main") and [int(x) for x in l[1:]] == [1024, 4096] for l in folded), "folded: ...;main 1024 4096")
# main's frame totals: every folded stack through main
under = [l for l in folded if "main" in l[0].split(";")]
ta, tb = sum(int(l[1]) for l in under), sum(int(l[2]) for l in under)
want = "A %s, B %s (+%s, +%.2f%%)" % (format(ta, ","), format(tb, ","), format(tb - ta, ","), 100.0 * (tb - ta) / ta)
mains = [g for g in svg.iter(ns + "g") if g.find(ns + "title") is not None and g.find(ns + "title").text.startswith("main (")]
check(len(mains) == 1 and want in mains[0].find(ns + "title").text and "self 4,096" in mains[0].find(ns + "title").text and
      mains[0].find(ns + "rect").get("fill", "").startswith("#ff"), "flame graph: main is red, tooltip %r has %r" %
      (mains[0].find(ns + "title").text if mains else None, want))
sys.exit(1 if errors else 0)
PYEOF

# across policies and across program versions: the same scan at -L 2M under clock (the default),
# and a second build of cyclic_scan.c whose functions all start elsewhere (-falign-functions=1024:
# same source lines, other addresses). Each diff's rows equal its two reports' difference; the
# version diff matches every frame by function and file:line, so each row's delta is 0.
expect_record small-clock -L 2M -- "$PLANTED/cyclic_scan" 1024 4
gcc -std=gnu11 -O2 -g -fomit-frame-pointer -falign-functions=1024 -o "$WORK/cyclic_scan_v2" \
	"$ROOT/tests/planted/cyclic_scan.c" -lpthread || fail "cannot build the second version of cyclic_scan"
[ "$(nm "$PLANTED/cyclic_scan" | awk '$3 == "main" {print $1}')" != "$(nm "$WORK/cyclic_scan_v2" | awk '$3 == "main" {print $1}')" ] ||
	fail "the second build's main is at the same address"
expect_record small-v2 --policy fifo -c 1 -L 2M -- "$WORK/cyclic_scan_v2" 1024 4
for pair in "policy:$B:$WORK/small-clock" "version:$B:$WORK/small-v2"; do
	name=${pair%%:*} rest=${pair#*:}
	run "$name.a.csv" "$FAULTLINE" report "${rest%%:*}" --format csv --top 0
	run "$name.b.csv" "$FAULTLINE" report "${rest#*:}" --format csv --top 0
	run "$name.diff.csv" "$FAULTLINE" diff "${rest%%:*}" "${rest#*:}" --format csv --top 0
done
"$PY" - "$WORK" <<'PYEOF' || fail "diff across policies / versions"
import collections, csv, os, sys
work = sys.argv[1]
def rows(name):
    return list(csv.DictReader(open(os.path.join(work, name))))
bad = []
for name in ("policy", "version"):
    want = collections.defaultdict(lambda: [0, 0])
    for side in (0, 1):
        for r in rows("%s.%s.csv" % (name, "ab"[side])):
            want[(r["function"], r["file"], r["line"])][side] += int(r["faults"])
    got = {(r["function"], r["file"], r["line"]): (int(r["a"]), int(r["b"]), int(r["delta"])) for r in rows(name + ".diff.csv")}
    same = got == {k: (a, b, b - a) for k, (a, b) in want.items()}
    print(("ok " if same else "FAIL: ") + "%s diff: %d rows = the two reports' difference" % (name, len(got)))
    bad += [] if same else [name]
got = rows("version.diff.csv")
zero = got and all(int(r["delta"]) == 0 and int(r["a"]) > 0 for r in got)
print(("ok " if zero else "FAIL: ") + "version diff: %d rows, every one matched with delta 0" % len(got))
sys.exit(1 if bad or not zero else 0)
PYEOF

# recordings without fault stacks (-s 0, as sweep makes them): one <no stack> row, and a hint
expect_record nostack-a -s 0 -c 1 -L 2M -- "$PLANTED/cyclic_scan" 1024 2
expect_record nostack-b -s 0 -c 1 -L 8M -- "$PLANTED/cyclic_scan" 1024 2
run nostack.diff "$FAULTLINE" diff "$WORK/nostack-a" "$WORK/nostack-b"
grep -q '^ .*<no stack>' "$WORK/nostack.diff" && grep -q -- '--by alloc' "$WORK/nostack.diff" ||
	fail "diff of two recordings without stacks: no <no stack> row with a hint to use --by alloc: $(cat "$WORK/nostack.diff")"
run nostack.alloc "$FAULTLINE" diff --by alloc "$WORK/nostack-a" "$WORK/nostack-b"
! grep -q 'no fault has a stack' "$WORK/nostack.alloc" || fail "diff --by alloc shows the no-stack hint"
[ -s "$WORK/diff.table" ] && ! grep -q "no selected fault has a stack" "$WORK/diff.table" || fail "the no-stack hint on recordings with stacks"
echo "ok diff without stacks: one <no stack> row and a hint to use --by alloc (none with --by alloc)"
# one side with stacks, the other without: every row "gone" (or "new"), so the hint says which side lacks them
run mixed.diff "$FAULTLINE" diff "$WORK/big" "$WORK/nostack-b"
grep -q '^# B has no fault stacks' "$WORK/mixed.diff" && grep -q -- '--by alloc' "$WORK/mixed.diff" ||
	fail "diff of a recording with stacks and one without: no hint: $(tail -n 3 "$WORK/mixed.diff")"
run mixed2.diff "$FAULTLINE" diff "$WORK/nostack-a" "$WORK/big"
grep -q '^# A has no fault stacks' "$WORK/mixed2.diff" || fail "diff, A without stacks: no hint: $(tail -n 3 "$WORK/mixed2.diff")"
echo "ok diff of a recording with stacks and one without: a hint naming the side without"

RC=0; "$FAULTLINE" diff "$A" >/dev/null 2>"$WORK/e" || RC=$?
[ "$RC" -eq 2 ] || fail "one recording: exit $RC"
RC=0; "$FAULTLINE" diff "$A" "$B" "$A" >/dev/null 2>"$WORK/e" || RC=$?
[ "$RC" -eq 2 ] || fail "three recordings: exit $RC"
RC=0; "$FAULTLINE" diff "$A" "$WORK/none" >/dev/null 2>"$WORK/e" || RC=$?
[ "$RC" -eq 1 ] && grep -q 'no such recording' "$WORK/e" || fail "missing recording: exit $RC: $(cat "$WORK/e")"
RC=0; "$FAULTLINE" diff "$A" "$B" --kind bogus >/dev/null 2>"$WORK/e" || RC=$?
[ "$RC" -eq 2 ] || fail "bad --kind: exit $RC"
echo "ok bad input: exit 2 for usage, 1 for a missing recording"
"$FAULTLINE" diff --help >"$WORK/help" 2>&1 && grep -q -- '--flame FILE' "$WORK/help" || fail "diff --help"
"$FAULTLINE" export --help >"$WORK/help" 2>&1 && grep -q -- '--pprof FILE' "$WORK/help" || fail "export --help lacks --pprof"
echo "ok diff --help, export --help"
# an output that cannot be written is refused before any work: no table printed, exit 1
RC=0; "$FAULTLINE" diff "$A" "$B" --flame "$WORK/no-such-dir/d.svg" >"$WORK/noflame.out" 2>"$WORK/noflame.err" || RC=$?
[ "$RC" -eq 1 ] && grep -q "cannot write in" "$WORK/noflame.err" && [ ! -s "$WORK/noflame.out" ] ||
	fail "--flame into a missing directory: exit $RC, $(wc -c <"$WORK/noflame.out") bytes out: $(cat "$WORK/noflame.err")"
echo "ok --flame into a missing directory: refused before the diff is made (exit 1)"

# Two functions of one name in two binaries, neither with debug information (no file:line): two
# rows, each naming its binary, as report has them (before: one row, labelled with one binary).
mkdir -p "$WORK/twin"
cat >"$WORK/twin/lib.c" <<'C'
#include <stddef.h>
__attribute__((noinline)) static void touch_pages(char *p, size_t n) { for (size_t i = 0; i < n; i += 4096) p[i] = 1; }
void lib_fill(char *p, size_t n) { touch_pages(p, n); }
C
cat >"$WORK/twin/main.c" <<'C'
#include <stdlib.h>
void lib_fill(char *p, size_t n);
__attribute__((noinline)) static void touch_pages(char *p, size_t n) { for (size_t i = 0; i < n; i += 4096) p[i] = 2; }
int main(void) { char *a = malloc(8 << 20), *b = malloc(4 << 20); touch_pages(a, 8 << 20); lib_fill(b, 4 << 20); return a[0] + b[0] == 3 ? 0 : 1; }
C
gcc -O1 -fPIC -shared -o "$WORK/twin/libtwin.so" "$WORK/twin/lib.c" &&
	gcc -O1 -o "$WORK/twin/twin" "$WORK/twin/main.c" -L"$WORK/twin" -ltwin -Wl,-rpath,"$WORK/twin" ||
	fail "cannot build the twin program"
expect_record twin -- "$WORK/twin/twin"
run twin.diff.csv "$FAULTLINE" diff "$WORK/twin" "$WORK/twin" --format csv --top 0
"$PY" - "$WORK/twin.diff.csv" <<'PYEOF' || fail "twin functions"
import csv, os, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["function"] == "touch_pages"]
bins = sorted(os.path.basename(r["binary"]) for r in rows)
assert bins == ["libtwin.so", "twin"], "touch_pages rows name the binaries %s, want libtwin.so and twin: %s" % (bins, rows)
faults = {os.path.basename(r["binary"]): int(r["a"]) for r in rows}
assert faults["twin"] >= 2048 and faults["libtwin.so"] >= 1024, faults
print("ok touch_pages of twin (%d faults) and of libtwin.so (%d): two rows" % (faults["twin"], faults["libtwin.so"]))
PYEOF
