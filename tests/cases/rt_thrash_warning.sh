#!/usr/bin/env bash
# rt_thrash_warning: a program that runs mostly in refaults is told so once, on stderr, while it runs
# (runtime/thrash_warn.c). bench/dict_sort 30000 (a hash table of malloc'd entries, then qsort; ~5 MiB)
# with the note's delay and rate lowered (FAULTLINE_THRASH_WARN_AFTER=1 s, _RATE=100 refaults a
# second, so that a loaded machine still qualifies):
#   - at -L 1M: exactly one "faultline: note: N s in, R refaults a second at -L 1 MiB (peak heap so
#     far M MiB): ..." line, naming record --mrc, N >= 1 and R x N at most stats.json's refaults, M
#     more than -L and at most stats.json's peak heap (the heap's address high-water mark was shown
#     before, xz's 45 MiB as 117), and the program's checksum as natively (the note changes nothing);
#   - at -L 1536K (dict_sort 60000): the note gives -L as 1.5 MiB, in tenths as record's banner does;
#   - at -L 1M with a rate no run reaches (FAULTLINE_THRASH_WARN_RATE=1000000000): no note;
#   - at -L 1M with FAULTLINE_THRASH_WARN_AFTER=0 (off): no note;
#   - record -q turns it off (FAULTLINE_THRASH_WARN_AFTER=0 for the program unless set).
. "$(dirname "$0")/../lib.sh"
need_faultline

build_bench dict_sort
run_native native "$WORK/dict_sort" 30000
want=$(bench_checksum "$WORK/native.native")
[ -n "$want" ] || fail "no checksum in the native output"

export FAULTLINE_THRASH_WARN_AFTER=1 FAULTLINE_THRASH_WARN_RATE=100
expect_record tight -L 1M -- "$WORK/dict_sort" 30000
n=$(grep -c '^faultline: note: [0-9]* s in, [0-9]* refaults a second at -L 1 MiB (peak heap so far [0-9]* MiB): the program runs at the speed of its page faults' "$WORK/tight.err")
check_eq "-L 1M: note lines" "$n" 1
grep -q 'faultline record --mrc' "$WORK/tight.err" || fail "the note does not name record --mrc: $(cat "$WORK/tight.err")"
got=$(bench_checksum "$WORK/tight.out")
[ "$got" = "$want" ] || fail "-L 1M: checksum '$got', natively $want"
# its numbers: N s in, R refaults a second, so R x N refaults had happened: at most the run's total
set -- $(sed -n 's/^faultline: note: \([0-9]*\) s in, \([0-9]*\) refaults a second.*/\1 \2/p' "$WORK/tight.err")
check_ge "-L 1M: the note's seconds" "$1" 1
check_le "-L 1M: the note's refaults (seconds x rate) vs stats.json's faults_refault" "$(($1 * $2))" "$(stat_of tight faults_refault)"
# and the peak heap: more than -L (it refaults), within stats.json's peak heap
heap=$(sed -n 's/.*(peak heap so far \([0-9]*\) MiB).*/\1/p' "$WORK/tight.err")
check_ge "-L 1M: the note's peak heap (MiB)" "$heap" 2
check_le "-L 1M: the note's peak heap (MiB) vs stats.json's (rounded up)" "$heap" "$(( ($(stat_of tight peak_heap_bytes) + (1 << 20) - 1) >> 20 ))"
echo "ok -L 1M: $(grep '^faultline: note' "$WORK/tight.err")"

# -L shown as the banner shows it: 1536K is 1.5 MiB (it read "1 MiB" before)
expect_record tenths -L 1536K -- "$WORK/dict_sort" 60000
grep -q '^faultline: note: [0-9]* s in, [0-9]* refaults a second at -L 1\.5 MiB (' "$WORK/tenths.err" ||
	fail "-L 1536K: the note does not say -L 1.5 MiB: $(grep 'faultline' "$WORK/tenths.err")"
echo "ok -L 1536K: the note says -L 1.5 MiB"

FAULTLINE_THRASH_WARN_RATE=1000000000 expect_record slow -L 1M -- "$WORK/dict_sort" 30000
! grep -q 'faultline: note' "$WORK/slow.err" || fail "a rate above the run's: warned: $(cat "$WORK/slow.err")"
echo "ok a rate above the run's: no note"

FAULTLINE_THRASH_WARN_AFTER=0 expect_record off -L 1M -- "$WORK/dict_sort" 30000
! grep -q 'faultline: note' "$WORK/off.err" || fail "FAULTLINE_THRASH_WARN_AFTER=0: warned: $(cat "$WORK/off.err")"
echo "ok FAULTLINE_THRASH_WARN_AFTER=0: no note"

# record -q: no runtime note either (it sets FAULTLINE_THRASH_WARN_AFTER=0 for the program, unless
# that is set already); without -q the program's environment has no such setting from record
unset FAULTLINE_THRASH_WARN_AFTER
quiet=$("$FAULTLINE" record -q -o "$WORK/quiet" --force -- sh -c 'echo "${FAULTLINE_THRASH_WARN_AFTER-unset}"')
loud=$("$FAULTLINE" record -o "$WORK/loud" --force -- sh -c 'echo "${FAULTLINE_THRASH_WARN_AFTER-unset}"' 2>/dev/null)
check_eq "record -q: the program's FAULTLINE_THRASH_WARN_AFTER" "$quiet" 0
[ "$loud" = unset ] || fail "record without -q set FAULTLINE_THRASH_WARN_AFTER=$loud"
echo "ok record -q turns the note off; record without it leaves the setting alone"
