#!/usr/bin/env bash
# report_stream: `faultline report` aggregates while it reads, in memory that does not grow with the
# faults, and says exactly what the reader that holds every fault says.
#   - a planted recording of N faults (tests/helpers/plant_recording: 2 M; FAULTLINE_TEST_LONG=1:
#     100 M), written straight to disk with two handlers' chunks interleaved out of time order:
#     the header's fault counts by kind, the --by thread rows (N/4 each, by kind) and the task-clock
#     per fault (its contexts' deltas, every third fault) are exact; report's peak RSS stays under
#     N x 16 bytes (the holding reader's fault array alone takes 72 bytes per fault; 2 M: about
#     10 MB measured; 100 M: under 1 GB), and the reading rate is printed;
#   - the same report through the holding reader (FAULTLINE_READ_HELD=1) is byte-identical but for
#     its timing line, on a planted recording of 200,000 faults and on a recorded two-thread program, for several
#     option sets (--by, --kind, --format, --from/--to, --symbol, --tid, --ranges);
#   - `faultline dump` streams too: every fault of the planted recording, one line each, in peak
#     RSS under the same bound; its output through the holding reader is byte-identical (the
#     planted 200,000 and the two-thread program, with --symbolize, --pid and --limit);
#   - so does `faultline visualize` (its faults walked twice, the heatmap's cells on the second
#     walk): peak RSS under the bound on the planted recording (plus 40 MB for report.html's
#     model, bounded whatever the faults), every file it writes byte-identical to the holding
#     reader's (report.html but for report's timing line; planted 200,000; two-thread program,
#     also --kind refault and --top 3);
#   - and `faultline ranges`: peak RSS under the bound, output identical to the holding reader's
#     (text, --tree, json, csv, --kind);
#   - and `faultline export --sqlite --pprof`: peak RSS under 256 MB whatever the size (SQLite's page
#     cache of 64 MiB and its sorter; the holding reader alone takes ~350 MB at 2 M faults), the
#     database's .dump and the profile identical to the holding reader's (planted 200,000; threads);
#   - and `faultline diff` (both sides streamed): peak RSS under the bound for the planted recording
#     against itself, its table, csv and flame graphs identical to the holding reader's.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted threads
need_cmd /usr/bin/time sqlite3
HELPER=$BUILD/tests/plant_recording
[ -x "$HELPER" ] || fail "$HELPER not built (make all)"

N=2000000
[ "$LONG" = 1 ] && N=100000000
"$HELPER" "$WORK/planted" "$N" >"$WORK/expected" || fail "plant_recording failed"
expect() { awk -v k="$1" '$1 == k { print $2 }' "$WORK/expected"; }
say "planted $N faults: $(tr '\n' ' ' <"$WORK/expected")"

# report ARGS...: report of the planted recording, CSV by thread, with time and peak RSS
/usr/bin/time -f "%e %M" -o "$WORK/time" "$FAULTLINE" report "$WORK/planted" --by thread --format csv --ranges 0 \
	>"$WORK/threads.csv" 2>"$WORK/threads.err" || fail "report failed: $(cat "$WORK/threads.err")"
read -r seconds rss_kb <"$WORK/time"
rate=$(awk -v n="$N" -v s="$seconds" 'BEGIN { printf "%.0f", (s > 0 ? n / s : n) }')
say "report of $N faults: $seconds s ($rate faults/s on this machine, load $(cut -d' ' -f1 /proc/loadavg)), peak RSS $rss_kb KB"
bound_kb=$((N * 16 / 1024))
[ "$LONG" = 1 ] && bound_kb=$((1000 * 1000))
[ "$rss_kb" -lt "$bound_kb" ] || fail "report's peak RSS $rss_kb KB, want < $bound_kb KB"
echo "ok: peak RSS $rss_kb KB < $bound_kb KB"

python3 - "$WORK/threads.csv" "$N" "$(expect first_touch)" "$(expect refault)" "$(expect soft)" <<'PY' || fail "--by thread rows are not exact"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
n, ft, rf, soft = (int(x) for x in sys.argv[2:6])
assert len(rows) == 4, f"{len(rows)} thread rows, want 4"
for r in rows:
    tid = int(r["tid"]); t = tid - 1000
    want = len(range(t, n, 4))
    assert int(r["faults"]) == want, f"tid {tid}: {r['faults']} faults, want {want}"
    # task-clock: contexts at i = t (mod 4), i = 0 (mod 3); values 50 i + 1, cumulative per thread
    ctx = [i for i in range(t, n, 4) if i % 3 == 0]
    want_us = (50 * ctx[-1] + 1) / len(ctx) / 1000
    got = float(r["task_clock_us_per_fault"])
    assert abs(got - want_us) < 0.0011, f"tid {tid}: task-clock {got} us per fault, want {want_us:.4f}"
assert sum(int(r["first_touch"]) for r in rows) == ft
assert sum(int(r["refault"]) for r in rows) == rf
assert sum(int(r["soft"]) for r in rows) == soft
print("ok: 4 thread rows, faults, kinds and task-clock per fault exact")
PY

"$FAULTLINE" report "$WORK/planted" --ranges 0 --top 3 >"$WORK/table" 2>&1 || fail "report (table) failed"
commas() { python3 -c 'import sys; print(f"{int(sys.argv[1]):,}")' "$1"; }
want_line=$(printf "# faults: *%s (first-touch %s, refault %s, soft %s, concurrent 0)" "$(commas "$N")" \
	"$(commas "$(expect first_touch)")" "$(commas "$(expect refault)")" "$(commas "$(expect soft)")")
grep -q "^$want_line" "$WORK/table" ||
	fail "header: $(grep '^# faults' "$WORK/table"), want $want_line"
echo "ok: $(grep '^# faults' "$WORK/table")"

/usr/bin/time -f "%e %M" -o "$WORK/time" "$FAULTLINE" dump "$WORK/planted" 2>"$WORK/dump.err" |
	grep -vc '^#' >"$WORK/dump.lines"
read -r seconds rss_kb <"$WORK/time"
[ -s "$WORK/dump.err" ] && fail "dump wrote on stderr: $(head -c 300 "$WORK/dump.err")"
check_eq "dump's fault lines" "$(cat "$WORK/dump.lines")" "$N"
say "dump of $N faults: $seconds s, peak RSS $rss_kb KB"
[ "$rss_kb" -lt "$bound_kb" ] || fail "dump's peak RSS $rss_kb KB, want < $bound_kb KB"
echo "ok: dump's peak RSS $rss_kb KB < $bound_kb KB"

/usr/bin/time -f "%e %M" -o "$WORK/time" "$FAULTLINE" visualize "$WORK/planted" -o "$WORK/viz" >/dev/null 2>"$WORK/viz.err" ||
	fail "visualize failed: $(head -c 300 "$WORK/viz.err")"
read -r seconds rss_kb <"$WORK/time"
say "visualize of $N faults: $seconds s, peak RSS $rss_kb KB"
# report.html's model adds a constant, not a cost per fault: its cells are bounded (html_model.h)
html_kb=$((40 * 1024))
[ "$rss_kb" -lt $((bound_kb + html_kb)) ] ||
	fail "visualize's peak RSS $rss_kb KB, want < $bound_kb KB + $html_kb KB (report.html's model)"
grep -q "<g class=\"row\"" "$WORK/viz/heatmap.svg" || fail "visualize's heatmap.svg has no row of cells"
[ -s "$WORK/viz/report.html" ] || fail "visualize wrote no report.html"
echo "ok: visualize's peak RSS $rss_kb KB < $bound_kb KB + $html_kb KB (report.html's model)"

/usr/bin/time -f "%e %M" -o "$WORK/time" "$FAULTLINE" ranges "$WORK/planted" >"$WORK/ranges.out" 2>"$WORK/ranges.err" ||
	fail "ranges failed: $(head -c 300 "$WORK/ranges.err")"
read -r seconds rss_kb <"$WORK/time"
say "ranges of $N faults: $seconds s, peak RSS $rss_kb KB"
[ "$rss_kb" -lt "$bound_kb" ] || fail "ranges' peak RSS $rss_kb KB, want < $bound_kb KB"
grep -q "faults counted" "$WORK/ranges.out" || fail "ranges printed no source line: $(head -3 "$WORK/ranges.out")"
echo "ok: ranges' peak RSS $rss_kb KB < $bound_kb KB"

/usr/bin/time -f "%e %M" -o "$WORK/time" "$FAULTLINE" export --sqlite "$WORK/planted.db" "$WORK/planted" \
	>/dev/null 2>"$WORK/export.err" || fail "export failed: $(head -c 300 "$WORK/export.err")"
read -r seconds rss_kb <"$WORK/time"
say "export --sqlite of $N faults: $seconds s, peak RSS $rss_kb KB"
[ "$rss_kb" -lt $((256 * 1024)) ] || fail "export's peak RSS $rss_kb KB, want < 256 MB"
check_eq "faults in the database" "$(sqlite3 "$WORK/planted.db" 'SELECT count(*) FROM faults')" "$N"
rm -f "$WORK/planted.db"
echo "ok: export's peak RSS $rss_kb KB < 256 MB"

/usr/bin/time -f "%e %M" -o "$WORK/time" "$FAULTLINE" diff "$WORK/planted" "$WORK/planted" >"$WORK/diff.out" 2>"$WORK/diff.err" ||
	fail "diff failed: $(head -c 300 "$WORK/diff.err")"
read -r seconds rss_kb <"$WORK/time"
say "diff of $N faults against themselves: $seconds s, peak RSS $rss_kb KB"
[ "$rss_kb" -lt "$bound_kb" ] || fail "diff's peak RSS $rss_kb KB, want < $bound_kb KB"
echo "ok: diff's peak RSS $rss_kb KB < $bound_kb KB"

[ "$LONG" = 1 ] && exit 0 # the comparison below holds every fault: not at 100 M

# same ARGS...: the streamed and the held report of $REC agree but for the timing line
same() {
	"$FAULTLINE" report "$REC" "$@" >"$WORK/streamed" 2>&1; local a=$?
	FAULTLINE_READ_HELD=1 "$FAULTLINE" report "$REC" "$@" >"$WORK/held" 2>&1; local b=$?
	[ $a = $b ] || fail "$REC $*: exit $a streamed, $b held"
	diff <(grep -v 'report built in' "$WORK/streamed") <(grep -v 'report built in' "$WORK/held") >"$WORK/diff" ||
		fail "$REC $*: streamed and held reports differ: $(head -5 "$WORK/diff")"
}
expect_record threads -L 4 -M 256 -- "$PLANTED/threads" 2 16
"$HELPER" "$WORK/small" 200000 >/dev/null || fail "plant_recording (200,000) failed"
# same_dump ARGS...: the streamed and the held dump of $REC are byte-identical
same_dump() {
	"$FAULTLINE" dump "$REC" "$@" >"$WORK/streamed" 2>&1; local a=$?
	FAULTLINE_READ_HELD=1 "$FAULTLINE" dump "$REC" "$@" >"$WORK/held" 2>&1; local b=$?
	[ $a = 0 ] && [ $b = 0 ] || fail "dump $REC $*: exit $a streamed, $b held"
	cmp -s "$WORK/streamed" "$WORK/held" ||
		fail "dump $REC $*: streamed and held differ: $(diff "$WORK/streamed" "$WORK/held" | head -5)"
}
for REC in "$WORK/small" "$WORK/threads"; do
	same_dump
	same_dump --limit 1000
done
REC=$WORK/threads
same_dump --symbolize
same_dump --pid "$(ls "$REC" | grep -E '^[0-9]+$' | head -1)"
echo "ok: dump streamed = dump held (planted 200,000; threads, with --symbolize, --pid, --limit)"
# same_viz NAME ARGS...: every file the streamed and the held visualize of $REC write is the same
same_viz() {
	local name=$1; shift
	"$FAULTLINE" visualize "$REC" -o "$WORK/$name.s" "$@" >/dev/null 2>&1 || fail "visualize $REC $* (streamed) failed"
	FAULTLINE_READ_HELD=1 "$FAULTLINE" visualize "$REC" -o "$WORK/$name.h" "$@" >/dev/null 2>&1 ||
		fail "visualize $REC $* (held) failed"
	local f n=0
	for f in "$WORK/$name.h"/*; do
		n=$((n + 1))
		if [ "${f##*/}" = report.html ]; then # its header holds report's timing line
			cmp -s <(sed -E 's/report built in [^)]*\)//' "$f") \
				<(sed -E 's/report built in [^)]*\)//' "$WORK/$name.s/report.html") ||
				fail "visualize $REC $*: report.html differs between streamed and held (but for report's timing)"
			continue
		fi
		cmp -s "$f" "$WORK/$name.s/${f##*/}" || fail "visualize $REC $*: ${f##*/} differs between streamed and held"
	done
	[ "$n" -ge 5 ] || fail "visualize $REC $*: only $n files"
}
REC=$WORK/small; same_viz small
REC=$WORK/threads; same_viz threads; same_viz threads-refault --kind refault; same_viz threads-top --top 3
echo "ok: visualize streamed = visualize held, file by file (planted 200,000; threads, --kind, --top)"
# same_ranges ARGS...: the streamed and the held ranges of $REC print the same
same_ranges() {
	"$FAULTLINE" ranges "$REC" "$@" >"$WORK/streamed" 2>&1 || fail "ranges $REC $* (streamed) failed"
	FAULTLINE_READ_HELD=1 "$FAULTLINE" ranges "$REC" "$@" >"$WORK/held" 2>&1 || fail "ranges $REC $* (held) failed"
	cmp -s "$WORK/streamed" "$WORK/held" ||
		fail "ranges $REC $*: streamed and held differ: $(diff "$WORK/streamed" "$WORK/held" | head -5)"
}
for REC in "$WORK/small" "$WORK/threads"; do
	same_ranges
	same_ranges --tree
	same_ranges --format json
	same_ranges --format csv --kind refault
done
echo "ok: ranges streamed = ranges held (text, --tree, json, csv --kind)"
for REC in "$WORK/small" "$WORK/threads"; do
	"$FAULTLINE" export --sqlite "$WORK/s.db" --pprof "$WORK/s.pb" "$REC" >/dev/null 2>&1 ||
		fail "export $REC (streamed) failed"
	FAULTLINE_READ_HELD=1 "$FAULTLINE" export --sqlite "$WORK/h.db" --pprof "$WORK/h.pb" "$REC" >/dev/null 2>&1 ||
		fail "export $REC (held) failed"
	cmp -s <(sqlite3 "$WORK/s.db" .dump) <(sqlite3 "$WORK/h.db" .dump) || fail "export $REC: the databases differ"
	cmp -s "$WORK/s.pb" "$WORK/h.pb" || fail "export $REC: the pprof profiles differ"
	rm -f "$WORK"/[sh].db "$WORK"/[sh].pb
done
echo "ok: export streamed = export held (the database's .dump, the pprof profile)"
for args in "" "--by function --format csv" "--kind refault --top 0" "--by alloc --format json"; do
	# shellcheck disable=SC2086 # $args: several options
	"$FAULTLINE" diff "$WORK/small" "$WORK/threads" $args --flame "$WORK/s.svg" --folded "$WORK/s.folded" \
		>"$WORK/streamed" 2>&1 || fail "diff $args (streamed) failed: $(head -c 300 "$WORK/streamed")"
	# shellcheck disable=SC2086
	FAULTLINE_READ_HELD=1 "$FAULTLINE" diff "$WORK/small" "$WORK/threads" $args --flame "$WORK/h.svg" \
		--folded "$WORK/h.folded" >"$WORK/held" 2>&1 || fail "diff $args (held) failed"
	cmp -s "$WORK/streamed" "$WORK/held" || fail "diff $args: streamed and held differ: $(diff "$WORK/streamed" "$WORK/held" | head -5)"
	cmp -s "$WORK/s.svg" "$WORK/h.svg" && cmp -s "$WORK/s.folded" "$WORK/h.folded" ||
		fail "diff $args: the flame graphs differ"
done
echo "ok: diff streamed = diff held (table, csv, json, --kind, flame graphs)"
for REC in "$WORK/small" "$WORK/threads"; do
	same
	same --by alloc
	same --by function --format json
	same --by thread --format csv --kind refault
	same --by process --top 0 --ranges 10
	same --by alloc --format json --ranges 3
	same --from 0.05 --to 0.2
	same --symbol main
	tid=$("$FAULTLINE" report "$REC" --by thread --format csv --ranges 0 | awk -F, 'NR == 2 { print $15 }')
	same --tid "$tid"
	same --tid 999999
	echo "ok: $REC: streamed and held reports identical (10 option sets)"
done
