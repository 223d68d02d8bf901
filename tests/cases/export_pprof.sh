#!/usr/bin/env bash
# tests/cases/export_pprof.sh: `faultline export --pprof FILE` read back by the real `go tool pprof`
# (Debian's golang-go; skipped with the reason where it is not installed) on the planted fill program
# (16 MiB written once, read twice, -L 8):
#   - the file is gzip; pprof reads it: sample types faults, first_touch, refault, soft, alloc_bytes;
#   - `-top` of every sample type: the flat count of every function equals `faultline report --by
#     function --kind K` (rows summed by function name), so the top function and its count match;
#   - inlined frames: pattern_word, inlined into fill_words, both marked (inline) in `-traces`;
#   - labels (`-raw`): kind, thread, process (the recorded pid), alloc_site; the faults per
#     alloc_site equal `report --by alloc`; alloc_bytes at the buffer's site is the 16 MiB allocated;
#   - an existing FILE is refused without --force (exit 1); neither --sqlite nor --pprof: exit 2.
. "$(dirname "$0")/../lib.sh"

need_faultline
need_planted fill
command -v go >/dev/null 2>&1 || skip "go is not installed: go tool pprof comes with Debian's golang-go (./deps.sh --test installs it)"
export GOCACHE=${GOCACHE:-$WORK/gocache} HOME=${HOME:-$WORK}
go tool pprof -h >/dev/null 2>&1 || skip "go tool pprof does not run here ($(go tool pprof -h 2>&1 | head -n1))"

expect_record fill -L 8 -- "$PLANTED/fill" 16
REC=$WORK/fill PROF=$WORK/fill.pb.gz
"$FAULTLINE" export --pprof "$PROF" "$REC" 2>"$WORK/export.err" || { cat "$WORK/export.err" >&2; fail "export --pprof exited $?"; }
gzip -t "$PROF" || fail "$PROF is not gzip"
echo "ok export --pprof wrote $(stat -c %s "$PROF") bytes: $(cat "$WORK/export.err")"

pprof() { go tool pprof -symbolize=none "$@" "$PROF"; }
for k in faults first_touch refault soft alloc_bytes; do
	pprof -top -nodefraction=0 -nodecount=1000000 -sample_index=$k >"$WORK/top.$k" 2>"$WORK/top.$k.err" ||
		fail "go tool pprof -top -sample_index=$k exited $?: $(cat "$WORK/top.$k.err")"
done
pprof -traces >"$WORK/traces" 2>&1 || fail "go tool pprof -traces exited $?"
pprof -raw >"$WORK/raw" 2>&1 || fail "go tool pprof -raw exited $?"
for k in all first-touch refault soft; do
	"$FAULTLINE" report "$REC" --by function --kind $k --format csv --top 0 >"$WORK/report.$k.csv" 2>/dev/null || fail "report --kind $k exited $?"
done
"$FAULTLINE" report "$REC" --by alloc --format csv --top 0 >"$WORK/report.alloc.csv" 2>/dev/null || fail "report --by alloc exited $?"
pid=$(basename "$(ls -d "$REC"/*/ | head -n1)")

"$PY" - "$WORK" "$pid" <<'PYEOF' || fail "pprof checks failed"
import collections, csv, os, re, sys
work, pid = sys.argv[1], sys.argv[2]
from checks import check, errors
def top(name):
    flat, head = {}, None
    for line in open(os.path.join(work, name)):
        if line.startswith("Type: "):
            head = line.split()[1]
        m = re.match(r"^\s*(\d+)\s+\S+%\s+\S+%\s+(\d+)\s+\S+%\s+(.*)$", line)
        if m and int(m.group(1)):
            fn = m.group(3).strip()
            fn = fn[:-len(" (inline)")] if fn.endswith(" (inline)") else fn
            fn = "<no stack>" if fn == "[no stack]" else fn  # report's name for it
            flat[fn] = flat.get(fn, 0) + int(m.group(1))
    return head, flat
def report(kind):
    sums = collections.Counter()
    for r in csv.DictReader(open(os.path.join(work, "report.%s.csv" % kind))):
        sums[r["function"]] += int(r["faults"])
    return {k: v for k, v in sums.items() if v}
for idx, kind in (("faults", "all"), ("first_touch", "first-touch"), ("refault", "refault"), ("soft", "soft")):
    head, flat = top("top." + idx)
    want = report(kind)
    check(head == idx, "pprof reads sample type %s" % idx)
    check(flat == want, "-sample_index=%s: pprof's flat per function = report --by function --kind %s (%d functions%s)"
          % (idx, kind, len(want), "" if flat == want else "; pprof %s, report %s" % (sorted(flat.items())[:5], sorted(want.items())[:5])))
    if want:
        t_pprof = max(flat.items(), key=lambda kv: kv[1]) if flat else None
        t_report = max(want.items(), key=lambda kv: kv[1])
        check(t_pprof == t_report, "%s: top function %s = report's %s" % (idx, t_pprof, t_report))
traces = open(os.path.join(work, "traces")).read()
check(re.search(r"pattern_word \(inline\)\n\s+fill_words \(inline\)\n\s+main\n", traces) is not None,
      "-traces: pattern_word inlined into fill_words inlined into main")
# -raw: per-sample values and labels
raw = open(os.path.join(work, "raw")).read()
types = re.search(r"^Samples:\n(.*)$", raw, re.M).group(1).split()
check([t.split("/")[0] for t in types] == ["faults", "first_touch", "refault", "soft", "alloc_bytes"],
      "sample types %s" % types)
samples = re.findall(r"^ +((?:\d+ +){4}\d+):[^\n]*\n((?:\s+\S+:\[[^\n]*\n)+)", raw, re.M)
by_site, by_kind, pids, threads, alloc_bytes = collections.Counter(), collections.Counter(), set(), 0, collections.Counter()
for values, labels in samples:
    v = [int(x) for x in values.split()]
    lab = dict(re.findall(r"(\w+):\[([^\]]*)\]", labels))
    by_kind[lab.get("kind")] += v[0]
    by_site[lab.get("alloc_site")] += v[0]
    alloc_bytes[lab.get("alloc_site")] += v[4]
    pids.add(lab.get("process"))
    threads += v[0] if lab.get("thread") else 0
total = sum(by_kind.values())
check(pids == {pid}, "process label = the recorded pid %s (%s)" % (pid, pids))
check(threads == total and total > 0, "every fault sample has a thread label (%d of %d faults)" % (threads, total))
rep = report("all")
check(by_kind["refault"] == sum(report("refault").values()) and by_kind["first-touch"] == sum(report("first-touch").values()),
      "kind labels: %s" % dict(by_kind))
sites = collections.Counter()
for r in csv.DictReader(open(os.path.join(work, "report.alloc.csv"))):
    name = r["function"] + (" %s:%s" % (r["file"], r["line"]) if r["file"] and r["line"] else "")
    sites[name] += int(r["faults"])
check(dict(by_site) == {k: v for k, v in sites.items() if v}, "faults per alloc_site label = report --by alloc: %s" % dict(by_site))
buf = [k for k in alloc_bytes if k and k.startswith("main ") and k.endswith("fill.c:%s" % k.rsplit(":", 1)[-1])]
check(any(alloc_bytes[k] == 16 * 2**20 for k in buf), "alloc_bytes at main fill.c: 16 MiB (%s)" % dict(alloc_bytes))
sys.exit(1 if errors else 0)
PYEOF

RC=0; "$FAULTLINE" export --pprof "$PROF" "$REC" 2>"$WORK/e" || RC=$?
[ "$RC" -eq 1 ] && grep -q 'exists (use --force' "$WORK/e" || fail "existing FILE: exit $RC: $(cat "$WORK/e")"
"$FAULTLINE" export --pprof "$PROF" --force "$REC" 2>/dev/null || fail "--force exited $?"
RC=0; "$FAULTLINE" export "$REC" 2>"$WORK/e" || RC=$?
[ "$RC" -eq 2 ] || fail "no --sqlite/--pprof: exit $RC"
echo "ok existing FILE refused without --force; no output named: exit 2"
# one file named twice, in two spellings: refused before anything is written
RC=0; (cd "$WORK" && "$FAULTLINE" export --sqlite both.out --pprof "../$(basename "$WORK")/both.out" --force "$REC") 2>"$WORK/e" || RC=$?
[ "$RC" -eq 2 ] && grep -q 'name the same file' "$WORK/e" && [ ! -e "$WORK/both.out" ] ||
	fail "--sqlite and --pprof the same file: exit $RC, $(ls "$WORK" | grep -c both.out) file(s): $(cat "$WORK/e")"
echo "ok --sqlite and --pprof naming one file: refused (exit 2), nothing written"
