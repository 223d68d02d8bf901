#!/usr/bin/env bash
# tests/cases/ranges.sh: `faultline ranges` and the runtime's online RAP tree (ranges.rap), end to end.
#   - A planted program (tests/planted/ranges_hot.c) faults ~80 % inside one 8 MiB array and ~20 %
#     spread over a 512 MiB one (-L 4 -M 1024, so the 8 MiB array refaults every round). From the
#     online tree and from the trace (--from-trace) the top hot range is that array (it covers >= 90 %
#     of it and is at most 2 MiB larger), its top allocation site is the array's malloc (hull = the
#     array, named after ranges_hot.c when symbolized), and every range's bounds hold against the
#     exact count of fault records inside it: lower <= trace <= upper (from the trace; the online
#     tree may miss the faults served after its snapshot at exit, allowed as slack), upper - lower
#     <= 2 * error bound; accuracy of the top range (1 - |est - exact| / exact) >= 98 %.
#     Where the array is placed is up to ASLR. When it straddles the boundary B of a tree node wider
#     than itself (B aligned to 16 MiB for 8 MiB; ~3 % of runs cross a 256 MiB one) and the cold
#     array's hot node (>= phi of the faults, 256 MiB) starts or ends at B, the array is two ranges
#     meeting at B: RAP's nodes are aligned blocks and hot ranges nest or are disjoint, so the
#     innermost nodes on both sides of B cannot be joined without a range overlapping that node.
#     There can be only one such B in the array, so the array is then the two top ranges, and the
#     checks above hold for the pair (union, summed exclusive share, each one's accuracy and site).
#   - ranges.rap exists in every process directory after a normal run, also for each process of a
#     fork (trees start empty in the child: each holds about its own trace's faults); a flipped
#     byte, a cut file, a bad magic, an empty file and another process's tree (well-formed, its
#     count not the trace's) are each rejected with one warning naming the file, and the ranges then
#     equal --from-trace's.
#   - text, CSV and JSON agree (parsed with python3); --tree dumps every node; --kind reads the
#     trace; options and usage errors; the newest faultline-* directory as default;
#     FAULTLINE_RAP_EPS=0 turns the online tree off, FAULTLINE_RAP_EPS=0.05 sets its ε.
. "$(dirname "$0")/../lib.sh"

need_faultline
need_planted ranges_hot fill fork_verify

if [ "$LONG" = 1 ]; then rounds=60; else rounds=20; fi
expect_record hot -L 4 -M 1024 -- "$PLANTED/ranges_hot" 8 512 "$rounds"
check_stats hot --local $((4 * MIB)) --max $((1024 * MIB))
summary hot
REC=$WORK/hot
OUT=$WORK/ranges.out
ERR=$WORK/ranges.err
read -r _ HOT_LO HOT_HI < <(grep '^hot ' "$WORK/hot.out") || fail "ranges_hot printed no 'hot' line"
say "hot array [$HOT_LO, $HOT_HI)"

# ranges ARGS...: runs faultline ranges; sets RC, stdout in $OUT, stderr in $ERR.
ranges() {
	RC=0
	"$FAULTLINE" ranges "$@" >"$OUT" 2>"$ERR" || RC=$?
}
# ranges_ok NAME ARGS...: ranges ARGS..., must exit 0; keeps stdout in $WORK/NAME.
ranges_ok() {
	local name=$1; shift
	ranges "$@"
	[ "$RC" -eq 0 ] || { cat "$ERR" >&2; fail "faultline ranges $* exited $RC"; }
	cp "$OUT" "$WORK/$name"
}

for d in "$REC"/*/; do
	[ -s "$d/ranges.rap" ] || fail "no ranges.rap in $d"
	[ -e "$d/ranges.rap.tmp" ] && fail "ranges.rap.tmp left behind in $d"
done
echo "ok ranges.rap in every process directory"

# hot_ranges.py: the ranges that are the hot array, shared by the checks below (see the header).
cat >"$WORK/hot_ranges.py" <<'EOF'
def split_point(lo, hi):
    """The one boundary inside (lo, hi) of a tree node wider than [lo, hi) (nodes are 4 KiB * 4^k,
    aligned), or None: only there can a hot range enclosing one side of the array begin or end."""
    step = 4096
    while step <= hi - lo:
        step *= 4
    b = -(-lo // step) * step
    return b if lo < b < hi else None

def hot_ranges(p, lo, hi):
    """[top] or, when the array is split at its split point because a hot range wider than the
    array (its tree node) begins or ends there, [top, the other half]."""
    top = p["ranges"][0]
    b = split_point(lo, hi)
    node = lambda r: (int(r["node_start"], 16), int(r["node_end"], 16))
    if b is None or b not in (top["start_addr"], top["end_addr"]) or \
            not any(b in node(r) and node(r)[1] - node(r)[0] > hi - lo for r in p["ranges"]):
        return [top]
    other = [r for r in p["ranges"][1:] if (r["end_addr"] if top["start_addr"] == b else r["start_addr"]) == b
             and lo - 4096 < r["start_addr"] and r["end_addr"] < hi + 4096]
    return [top] + other[:1]
EOF

# check_ranges JSON SOURCE: the checks of the header comment on one JSON output.
check_ranges() {
	"$PY" - "$1" "$2" "$HOT_LO" "$HOT_HI" "$WORK" <<'EOF' || fail "ranges check of $(basename "$1") failed"
import json, sys
sys.path.insert(0, sys.argv[5])
from hot_ranges import hot_ranges
doc = json.load(open(sys.argv[1]))
source, lo, hi = sys.argv[2], int(sys.argv[3], 16), int(sys.argv[4], 16)
errors = []
(p,) = doc["processes"]
if p["source"] != source:
    errors.append("source %s, want %s (%s)" % (p["source"], source, p["source_text"]))
want_text = "online tree (ranges.rap)" if source == "online" else "built from "
if want_text not in p["source_text"]:
    errors.append("source_text %r lacks %r" % (p["source_text"], want_text))
n, total = p["faults"], p["trace_faults"]
late = total - n          # faults served after the online tree's snapshot
if late < 0 or late > 200 or (source == "trace" and late != 0):
    errors.append("tree counts %d faults, the trace holds %d" % (n, total))
bound = p["error_bound"]
if bound > p["eps_now"] * n + p["trees"] * p["depth"] + 1:
    errors.append("error bound %d above eps_now*n + T*D" % bound)
for r in p["ranges"]:
    what = "range %d [%s, %s)" % (r["rank"], r["start"], r["end"])
    if not (r["lower"] == r["faults"] <= r["upper"]):
        errors.append("%s: lower %d, est %d, upper %d" % (what, r["lower"], r["faults"], r["upper"]))
    t = r["trace"]
    if t is None or not (r["lower"] <= t <= r["upper"] + late):
        errors.append("%s: exact %s outside [%d, %d] (+%d late)" % (what, t, r["lower"], r["upper"], late))
    if r["upper"] - r["lower"] > 2 * bound:
        errors.append("%s: upper - lower = %d > 2 * bound %d" % (what, r["upper"] - r["lower"], bound))
    if r["percent"] + 1e-9 < r["excl_percent"]:
        errors.append("%s: exclusive percent above percent" % what)
pieces = hot_ranges(p, lo, hi)   # the top range, or the two halves of a split array
top = pieces[0]
a, b = min(r["start_addr"] for r in pieces), max(r["end_addr"] for r in pieces)
covered = sum(max(0, min(r["end_addr"], hi) - max(r["start_addr"], lo)) for r in pieces)
if covered < 0.9 * (hi - lo) or (b - a) > (hi - lo) + 2 * 1048576:
    errors.append("top range%s %s not the hot array [%#x, %#x)" % ("s" if len(pieces) > 1 else "",
                  " + ".join("[%#x, %#x)" % (r["start_addr"], r["end_addr"]) for r in pieces), lo, hi))
excl = sum(r["excl_percent"] for r in pieces)
if excl < 60:
    errors.append("top range%s %.2f %% of the faults, want >= 60" % ("s hold" if len(pieces) > 1 else " holds", excl))
for r in pieces:
    what = "range %d" % r["rank"]
    acc = 1 - abs(r["faults"] - r["trace"]) / r["trace"]
    if acc < 0.98:
        errors.append("%s accuracy %.4f < 0.98" % (what, acc))
    site = r["sites"][0] if r["sites"] else None
    if not site or int(site["start"], 16) != lo or int(site["end"], 16) != hi or site["allocs"] != 1:
        errors.append("%s's first site is not the hot array's allocation: %r" % (what, site))
    elif "ranges_hot.c" not in site["name"] and "ranges_hot+" not in site["name"]:
        errors.append("%s's site named %r, want ranges_hot.c:LINE or ranges_hot+0xOFF" % (what, site["name"]))
    if not any(m["name"] == "[faultline region]" for m in r["mappings"]):
        errors.append("%s's mappings lack the region: %r" % (what, r["mappings"]))
acc = 1 - abs(top["faults"] - top["trace"]) / top["trace"]
site = top["sites"][0] if top["sites"] else {"name": None}
for e in errors:
    print("FAIL: " + e, file=sys.stderr)
if errors:
    sys.exit(1)
print("ok %s: top range [%#x, %#x) %d faults in [%d, %d], exact %d (accuracy %.4f), %.2f %% excl, site %s; "
      "%d ranges within bounds; n=%d, trace %d, bound %d, %d nodes"
      % (source, top["start_addr"], top["end_addr"], top["faults"], top["lower"], top["upper"], top["trace"], acc,
         top["excl_percent"], site["name"], len(p["ranges"]), n, total, bound, p["nodes"]))
if len(pieces) > 1:
    print("ok %s: the hot array straddles %#x: ranges %s, [%#x, %#x) together, %.2f %% excl"
          % (source, pieces[1]["start_addr"] if pieces[1]["start_addr"] != a else pieces[1]["end_addr"],
             " + ".join(str(r["rank"]) for r in pieces), a, b, excl))
EOF
}

ranges_ok online.json "$REC" --format json
[ -s "$ERR" ] && { cat "$ERR" >&2; fail "ranges of a complete recording printed on stderr"; }
check_ranges "$WORK/online.json" online
ranges_ok trace.json "$REC" --format json --from-trace
check_ranges "$WORK/trace.json" trace

# The online tree and the trace's agree on the hot array's range(s) within both trees' error bounds
# (each range's est is at most error_bound below its true count).
"$PY" - "$WORK/online.json" "$WORK/trace.json" "$HOT_LO" "$HOT_HI" "$WORK" <<'EOF' || fail "online and trace trees disagree"
import json, sys
sys.path.insert(0, sys.argv[5])
from hot_ranges import hot_ranges
lo, hi = int(sys.argv[3], 16), int(sys.argv[4], 16)
on, tr = (json.load(open(f))["processes"][0] for f in sys.argv[1:3])
a, b = hot_ranges(on, lo, hi), hot_ranges(tr, lo, hi)
fa, fb = sum(r["faults"] for r in a), sum(r["faults"] for r in b)
if abs(fa - fb) > len(a) * on["error_bound"] + len(b) * tr["error_bound"] + (tr["faults"] - on["faults"]):
    sys.exit("hot array's ranges: online %d vs trace %d faults" % (fa, fb))
show = lambda rs: " + ".join("%s-%s" % (r["start"], r["end"]) for r in rs)
print("ok online top range%s %s %d faults, trace top range%s %s %d faults"
      % ("s" * (len(a) > 1), show(a), fa, "s" * (len(b) > 1), show(b), fb))
EOF

# Text, CSV and JSON agree.
ranges_ok online.txt "$REC"
ranges_ok online.csv "$REC" --format csv
"$PY" - "$WORK/online.txt" "$WORK/online.csv" "$WORK/online.json" <<'EOF' || fail "text, CSV and JSON disagree"
import csv, json, re, sys
text, rows, doc = open(sys.argv[1]).read(), list(csv.DictReader(open(sys.argv[2]))), json.load(open(sys.argv[3]))
(p,) = doc["processes"]
num = lambda s: int(s.replace(",", ""))
line_re = re.compile(r"^\s*(\d+)\s+0x([0-9a-f]{16})\s+0x([0-9a-f]{16})\s+(\S+ \S+)\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)"
                     r"\s+([\d.]+)\s+([\d.]+)\s+([\d,]+|-)$")
lines = [m.groups() for m in map(line_re.match, text.splitlines()) if m]
header = re.search(r"^# source: online tree \(ranges\.rap\): ([\d,]+) faults counted; the trace holds ([\d,]+)", text, re.M)
errors = []
if not header or num(header.group(1)) != p["faults"] or num(header.group(2)) != p["trace_faults"]:
    errors.append("text header does not state %d faults / %d records" % (p["faults"], p["trace_faults"]))
if not (len(lines) == len(rows) == len(p["ranges"]) > 0):
    errors.append("%d text lines, %d CSV rows, %d JSON ranges" % (len(lines), len(rows), len(p["ranges"])))
by_rank = {int(l[0]): l for l in lines}   # the text lists ranges as a tree, CSV and JSON by rank
if sorted(by_rank) != list(range(1, len(lines) + 1)):
    errors.append("text ranks %r" % sorted(by_rank))
for l, c, j in zip((by_rank.get(i + 1, lines[0]) for i in range(len(lines))), rows, p["ranges"]):
    got = [
        (int(l[0]), int(c["rank"]), j["rank"]),
        (int(l[1], 16), int(c["start"], 16), int(j["start"], 16)),
        (int(l[2], 16), int(c["end"], 16), int(j["end"], 16)),
        (num(l[4]), int(c["faults"]), j["faults"]),
        (num(l[5]), int(c["lower"]), j["lower"]),
        (num(l[6]), int(c["upper"]), j["upper"]),
        (num(l[9]), int(c["trace"]), j["trace"]),
    ]
    for t, cv, jv in got:
        if not t == cv == jv:
            errors.append("rank %s: text %s, csv %s, json %s" % (l[0], t, cv, jv))
    for t, cv, jv in ((float(l[7]), float(c["percent"]), j["percent"]), (float(l[8]), float(c["excl_percent"]), j["excl_percent"])):
        if abs(t - jv) > 0.006 or abs(cv - jv) > 0.0001:
            errors.append("rank %s: percent text %s, csv %s, json %s" % (l[0], t, cv, jv))
    if int(c["bytes"]) != j["bytes"] or int(c["pid"]) != p["pid"] or c["source"] != "online":
        errors.append("rank %s: csv bytes/pid/source differ" % l[0])
    if (c["top_site"] or None) != (j["sites"][0]["name"] if j["sites"] else None):
        errors.append("rank %s: csv top_site %r" % (l[0], c["top_site"]))
    if j["sites"] and j["sites"][0]["name"] not in text:
        errors.append("rank %s: site %r not in the text" % (l[0], j["sites"][0]["name"]))
for e in errors:
    print("FAIL: " + e, file=sys.stderr)
if errors:
    sys.exit(1)
print("ok text, CSV and JSON agree on %d ranges" % len(rows))
EOF

# --tree: every node once, hot ones marked; the same in JSON.
ranges_ok tree.txt "$REC" --tree
nodes=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["processes"][0]["nodes"])' "$WORK/online.json")
grep -q '^# rap eps=0.0100 .* nodes='"$nodes"' ' "$WORK/tree.txt" || fail "--tree: no '# rap ... nodes=$nodes' header"
check_eq "--tree node lines" "$(grep -c '^ *\[0x' "$WORK/tree.txt")" "$nodes"
check_ge "--tree HOT lines" "$(grep -c ' HOT$' "$WORK/tree.txt")" 1
ranges_ok tree.json "$REC" --tree --format json
check_eq "--tree JSON nodes" "$("$PY" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["processes"][0]["tree"]))' "$WORK/tree.json")" "$nodes"

# --kind reads the fault records, and counts only that kind.
for kind in refault first-touch; do
	ranges_ok "kind-$kind.json" "$REC" --kind "$kind" --format json
	got=$("$PY" -c 'import json,sys; p=json.load(open(sys.argv[1]))["processes"][0]; print(p["faults"] if p["source"] == "trace" else -1)' "$WORK/kind-$kind.json")
	check_eq "--kind $kind faults" "$got" "$(stat_of hot "faults_$(echo "$kind" | tr - _)")"
done
# --no-merge: one range per node, none larger than a tree node of the array's scale.
ranges_ok nomerge.json "$REC" --no-merge --format json
"$PY" - "$WORK/nomerge.json" <<'EOF' || fail "--no-merge"
import json, sys
(p,) = json.load(open(sys.argv[1]))["processes"]
bad = [r for r in p["ranges"] if r["nodes"] != 1]
if bad or not p["ranges"]:
    sys.exit("--no-merge gave joined ranges: %r" % bad[:2])
print("ok --no-merge: %d single-node ranges" % len(p["ranges"]))
EOF

# A rejected ranges.rap: one warning naming the file, then the same ranges as --from-trace.
pdir=$(ls -d "$REC"/*/ | head -n1); pname=$(basename "$pdir")
size=$(stat -c %s "$REC/$pname/ranges.rap")
corrupt() {   # NAME HOW
	local name=$1 how=$2 f
	rm -rf "$WORK/$name"; cp -r "$REC" "$WORK/$name"
	f=$WORK/$name/$pname/ranges.rap
	case $how in
	flip) printf '\x5a' | dd of="$f" bs=1 seek=$((size / 2 + 3)) conv=notrunc status=none ;;
	magic) printf 'X' | dd of="$f" bs=1 seek=0 conv=notrunc status=none ;;
	cut) truncate -s $((size - 9)) "$f" ;;
	header) truncate -s 50 "$f" ;;
	empty) : >"$f" ;;
	foreign) cp "$FOREIGN" "$f" ;;   # another process's tree: well-formed, other counts
	esac
	ranges "$WORK/$name" --format json
	[ "$RC" -eq 0 ] || { cat "$ERR" >&2; fail "ranges with a $how ranges.rap exited $RC"; }
	check_eq "$how ranges.rap: stderr lines" "$(wc -l <"$ERR")" 1
	grep -q "$name/$pname/ranges.rap: .*; using the fault records instead" "$ERR" || fail "$how: warning does not name the file: $(cat "$ERR")"
	"$PY" - "$OUT" "$WORK/trace.json" <<'EOF' || fail "$how ranges.rap: ranges differ from --from-trace"
import json, sys
a, b = (json.load(open(f))["processes"][0] for f in sys.argv[1:3])
key = lambda p: [(r["start"], r["end"], r["faults"], r["lower"], r["upper"], r["trace"]) for r in p["ranges"]]
if a["source"] != "trace" or key(a) != key(b):
    sys.exit("source %s, %d ranges vs %d" % (a["source"], len(a["ranges"]), len(b["ranges"])))
EOF
	echo "ok $how ranges.rap rejected: $(cat "$ERR")"
}
expect_record other -L 4 -M 256 -- "$PLANTED/fill" 8
FOREIGN=$(ls "$WORK"/other/*/ranges.rap | head -n1)
for how in flip magic cut header empty foreign; do corrupt "bad-$how" "$how"; done

# Options and usage errors.
ranges --pid 1 "$REC"
[ "$RC" -eq 1 ] && grep -q 'no process with pid 1' "$ERR" || fail "--pid 1: exit $RC: $(cat "$ERR")"
ranges_ok pid.json --pid "${pname%%.*}" "$REC" --format json
ranges --help
[ "$RC" -eq 0 ] && grep -q '^usage: faultline ranges' "$OUT" || fail "--help: exit $RC"
for bad in "--bogus" "--format xml" "--phi 0" "--phi 2" "--eps x" "--eps 1e-9 --from-trace" "--kind sideways" "--tree --format csv" "--sites"; do
	# shellcheck disable=SC2086
	ranges "$REC" $bad
	[ "$RC" -eq 2 ] || fail "ranges $bad: exit $RC, want 2"
done
ranges "$REC" "$REC"
[ "$RC" -eq 2 ] || fail "two directories: exit $RC"
ranges "$WORK/does-not-exist"
[ "$RC" -eq 1 ] || fail "missing directory: exit $RC"
echo "ok usage errors exit 2, missing recording exits 1"
mkdir -p "$WORK/cwd"
cp -r "$REC" "$WORK/cwd/faultline-new"
(cd "$WORK/cwd" && "$FAULTLINE" ranges --format csv >"$OUT" 2>"$ERR") || fail "ranges without DIR: $(cat "$ERR")"
grep -q 'faultline-new' "$ERR" || fail "ranges without DIR does not say which recording it read"
check_eq "ranges without DIR: CSV rows" "$(($(wc -l <"$OUT") - 1))" "$(($(wc -l <"$WORK/online.csv") - 1))"

# FAULTLINE_RAP_EPS: 0 turns the online tree off (ranges come from the trace, no warning); 0.05 is used.
RC=0; FAULTLINE_RAP_EPS=0 record "$WORK/off" -L 4 -M 256 -- "$PLANTED/fill" 8 >/dev/null 2>"$WORK/off.err" || RC=$?
[ "$RC" -eq 0 ] || fail "record with FAULTLINE_RAP_EPS=0 exited $RC"
ls "$WORK"/off/*/ranges.rap >/dev/null 2>&1 && fail "FAULTLINE_RAP_EPS=0 still wrote ranges.rap"
ranges_ok off.json "$WORK/off" --format json
[ -s "$ERR" ] && fail "ranges of a recording without ranges.rap warned: $(cat "$ERR")"
grep -q '"source": "trace"' "$WORK/off.json" || fail "without ranges.rap the source is not the trace"
RC=0; FAULTLINE_RAP_EPS=0.05 record "$WORK/eps" -L 4 -M 256 -- "$PLANTED/fill" 8 >/dev/null 2>"$WORK/eps.err" || RC=$?
[ "$RC" -eq 0 ] || fail "record with FAULTLINE_RAP_EPS=0.05 exited $RC"
ranges_ok eps.json "$WORK/eps" --format json
"$PY" -c 'import json,sys; p=json.load(open(sys.argv[1]))["processes"][0]; sys.exit(0 if p["source"] == "online" and abs(p["eps"] - 0.05) < 1e-9 else "eps %s source %s" % (p["eps"], p["source"]))' "$WORK/eps.json" \
	|| fail "FAULTLINE_RAP_EPS=0.05 not used"
echo "ok FAULTLINE_RAP_EPS=0 turns the online tree off, 0.05 sets its eps"

# fork: every process writes its own tree, which starts empty in the child.
expect_record fork -L 4 -M 256 -- "$PLANTED/fork_verify" 16
check_stats fork --procs 3
for d in "$WORK"/fork/*/; do [ -s "$d/ranges.rap" ] || fail "fork: no ranges.rap in $d"; done
ranges_ok fork.json "$WORK/fork" --format json
"$PY" - "$WORK/fork.json" <<'EOF' || fail "fork: trees do not match their processes"
import json, sys
procs = json.load(open(sys.argv[1]))["processes"]
errors = []
for p in procs:
    late = p["trace_faults"] - p["faults"]
    if p["source"] != "online" or p["faults"] == 0 or not 0 <= late <= 200:
        errors.append("process %s: source %s, tree %d faults, trace %d" % (p["process"], p["source"], p["faults"], p["trace_faults"]))
if len(procs) != 3 or errors:
    sys.exit("; ".join(errors) or "%d processes" % len(procs))
print("ok fork: 3 online trees, each counting its own process's faults (%s)"
      % ", ".join("%d of %d" % (p["faults"], p["trace_faults"]) for p in procs))
EOF
