#!/usr/bin/env bash
# report_filters: `report --tid TID[,TID]` keeps the faults of those threads, `report --symbol REGEX`
# those whose stack has a frame matching REGEX (issue 13, wanted alongside). On tests/planted/threads
# (3 workers, each filling and verifying its own 16 MiB from the function `work`; main only starts
# them): --by thread rows under --tid are exactly the chosen threads with their unfiltered counts;
# --symbol '^work$' keeps >= 99 % of the workers' faults with stacks and none of main's;
# --symbol '^main$' keeps only main's; a --tid thread without faults exits 1; bad values are usage
# errors (exit 2). Under a selection the header says its faults line counts the whole recording and
# gives the selection's count.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted threads

expect_record th -L 16 -M 512 -- "$PLANTED/threads" 3 16
REC=$WORK/th
rows() { # NAME ARGS...: report --by thread --format csv ARGS... into $WORK/NAME.csv as "tid faults" lines
	local name=$1; shift
	"$FAULTLINE" report "$REC" --by thread --format csv --top 0 "$@" >"$WORK/$name.csv" 2>"$WORK/$name.err" ||
		fail "report $*: $(cat "$WORK/$name.err")"
	"$PY" -c 'import csv,sys
for r in csv.DictReader(open(sys.argv[1])): print(r["tid"], r["faults"])' "$WORK/$name.csv" | sort -n
}
# same WHAT GOT WANT: string equality
same() { [ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"; echo "ok $1: $2"; }
rows all >"$WORK/all.txt"
pid=$(ls "$REC" | grep -E '^[0-9]+$' | head -n1)
workers=$(awk -v p="$pid" '$1 != p' "$WORK/all.txt")
check_eq "worker threads" "$(echo "$workers" | wc -l)" 3
t1=$(echo "$workers" | sed -n 1p | cut -d' ' -f1)
t2=$(echo "$workers" | sed -n 2p | cut -d' ' -f1)

same "--tid $t1 rows" "$(rows one --tid "$t1")" "$(grep "^$t1 " "$WORK/all.txt")"
same "--tid $t1,$t2 rows" "$(rows two --tid "$t1,$t2" | tr '\n' ' ')" "$(grep -E "^($t1|$t2) " "$WORK/all.txt" | tr '\n' ' ')"
# a thread that took no fault is an error, as a --pid that is not there (not an empty report)
rc=0; "$FAULTLINE" report "$REC" --tid "$t1,1" >/dev/null 2>"$WORK/none.err" || rc=$?
check_eq "--tid $t1,1: exit status" "$rc" 1
grep -q "no fault of thread 1 in the recording" "$WORK/none.err" || fail "--tid $t1,1: no message naming thread 1: $(cat "$WORK/none.err")"

stackless=$("$FAULTLINE" dump "$REC" | awk -v p="$pid" '!/^#/ && $3 != p && / stack=-$/' | wc -l)
want=$(echo "$workers" | awk -v s="$stackless" '{ n += $2 } END { print n - s }')
got=$(rows work --symbol '^work$' | awk -v p="$pid" '$1 == p { bad = 1 } { n += $2 } END { print bad ? -1 : n }')
# (a worker's few faults before work runs — thread start-up, allocator set-up — have no work frame)
check_le "--symbol '^work\$': faults kept, at most the workers' faults with a stack" "$got" "$want"
check_ge "--symbol '^work\$': faults kept, per mille of the workers' faults with a stack" "$((got * 1000 / want))" 990
same "--symbol '^main\$' rows" "$(rows main --symbol '^main$' | cut -d' ' -f1 | sort -u | tr '\n' ' ')" "$pid "

for bad in "--tid abc" "--tid 1,,2" "--tid 0" "--symbol (" ; do
	rc=0
	# shellcheck disable=SC2086
	"$FAULTLINE" report "$REC" $bad >/dev/null 2>"$WORK/bad.err" || rc=$?
	check_eq "report $bad: exit status" "$rc" 2
	grep -q "report" "$WORK/bad.err" || fail "report $bad: no error line"
done
"$FAULTLINE" report --help | grep -q -- '--symbol REGEX' || fail "--help lacks --symbol"
"$FAULTLINE" report --help | grep -q -- '--tid TID' || fail "--help lacks --tid"
echo "ok report --tid and --symbol"

# the header under a selection: the faults line says it counts the whole recording, and a
# "selected" line gives the selection's count (the lines after it are of the selection)
t1=$(head -n1 "$WORK/all.txt" | cut -d' ' -f1) n1=$(head -n1 "$WORK/all.txt" | cut -d' ' -f2)
"$FAULTLINE" report "$REC" --tid "$t1" --top 1 >"$WORK/sel.txt" 2>&1 || fail "report --tid $t1: $(cat "$WORK/sel.txt")"
grep -q '^# faults:          [0-9,]* in the whole recording (' "$WORK/sel.txt" || fail "--tid: faults line: $(grep '^# faults' "$WORK/sel.txt")"
sel=$(sed -n 's/^# selected:        \([0-9,]*\) faults.*/\1/p' "$WORK/sel.txt" | tr -d ,)
check_eq "--tid $t1: the header's selected faults" "$sel" "$n1"
"$FAULTLINE" report "$REC" --top 1 >"$WORK/unsel.txt" 2>&1 || fail "report: $(cat "$WORK/unsel.txt")"
! grep -q '^# selected:\|in the whole recording' "$WORK/unsel.txt" || fail "no selection, yet the header speaks of one"
echo "ok the header says what it counts under a selection"
