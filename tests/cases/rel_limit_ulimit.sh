#!/usr/bin/env bash
# rel_limit_ulimit: an address-space limit (ulimit -v) too small for the runtime. The runtime
# reserves -M bytes of address space (plus its far-store mirror and thread stacks), so with
# `ulimit -v` below -M it cannot start. That must give a clear error at start — not a crash, a hang
# or a silently wrong result: stderr names the reservation that failed with the system's reason and
# says that the runtime could not start, and either the program runs untraced to its normal end
# (then record's status and output are the program's own) or record fails with a clear status (not
# a signal).
# Two limits: 600 MiB with -M 1024 (the region itself cannot be reserved: the message must name
# it, -M) and 1,300 MiB with -M 1024 (the region fits, the runtime's other reservations do not).
# The program is tests/planted/rel_forks (4 forks, 16 MiB): its children must behave the same.
# Natively, under the same limit, it exits 0. No process of it may be left. And a program that lowers
# RLIMIT_AS itself: records dropped for want of memory say so (not "No space left on device").
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted rel_forks
max=1024

limit_case() {  # NAME ULIMIT_KiB WHAT: WHAT = regex of the message naming the failed reservation
	local name=$1 kib=$2 what=$3 rc=0
	say "ulimit -v $kib; native: $PLANTED/rel_forks 4 16"
	( ulimit -v "$kib" && exec "$PLANTED/rel_forks" 4 16 ) >"$WORK/$name.native" 2>"$WORK/$name.native.err" || rc=$?
	[ "$rc" -eq 0 ] || { cat "$WORK/$name.native.err" >&2; fail "$name: native run under ulimit -v $kib exited $rc"; }
	say "ulimit -v $kib; faultline record -o $WORK/$name -L 4 -M $max -- $PLANTED/rel_forks 4 16"
	RC=0
	( ulimit -v "$kib" && exec timeout -k 5 "$(scaled 60)" "$FAULTLINE" record -o "$WORK/$name" --force -L 4 -M "$max" -- "$PLANTED/rel_forks" 4 16 ) \
		>"$WORK/$name.out" 2>"$WORK/$name.err" || RC=$?
	sed 's/^/# stderr: /' "$WORK/$name.err" | head -n 20
	[ "$RC" -ne 124 ] && [ "$RC" -ne 137 ] || fail "$name: record did not finish within 60 s"
	[ "$RC" -lt 128 ] || fail "$name: record exited $RC (killed by signal $((RC - 128))): a crash, not a clear error"
	grep -qE -- "$what" "$WORK/$name.err" \
		|| fail "$name: stderr does not say which reservation failed and why (want a line matching '$what')"
	grep -qiE 'could not start|cannot start|untraced' "$WORK/$name.err" \
		|| fail "$name: stderr does not say that the runtime could not start"
	echo "ok $name: stderr says which reservation failed, why, and that the runtime could not start"
	if [ "$RC" -eq 0 ]; then
		grep -qi 'untraced\|not traced\|without tracing' "$WORK/$name.err" || fail "$name: exit 0 but stderr does not say the program ran untraced"
		same_output "$name" "$name"
		echo "ok $name: the program ran untraced to its normal end, status 0"
	else
		[ ! -s "$WORK/$name.out" ] || cmp -s "$WORK/$name.out" "$WORK/$name.native" \
			|| fail "$name: record failed ($RC) but the program's output is not its native output"
		echo "ok $name: record failed with status $RC and a message"
	fi
	check_eq "$name: processes of the program left" "$(pgrep -f "^$PLANTED/rel_forks 4 16" | wc -l)" 0
}

limit_case ulimit-600M $((600 * 1024)) '(-M|region).*failed.*Cannot allocate memory'
limit_case ulimit-1300M $((1300 * 1024)) 'failed.*Cannot allocate memory'

# A start that fails late (after the far store and read-ahead are set up) leaves no runtime thread
# in the program: sh, traced with --prefetch 8, counts its own threads under limits where the
# region fits but a later reservation does not. Every run that says the runtime could not start
# must count 1.
late=0
for mib in 600 800 1000 1200; do
	out=$( (ulimit -v $((mib * 1024)) && exec timeout -k 5 "$(scaled 60)" "$FAULTLINE" record -q -o "$WORK/late" --force \
		-L 4M -M 256M --prefetch 8 -- sh -c 'ls /proc/$$/task | wc -l') 2>"$WORK/late.err") || true
	grep -q 'could not start' "$WORK/late.err" || continue
	grep -q 'far store mirror' "$WORK/late.err" && continue   # failed before read-ahead was set up
	late=$((late + 1))
	check_eq "ulimit -v ${mib}M, --prefetch 8: threads of the program after a failed start" "$out" 1
done
[ "$late" -gt 0 ] || fail "no limit made the runtime's start fail after the far store was set up"
echo "ok late-failure: $late limits failed the start late, each leaving the program with its one thread"

# A program that lowers RLIMIT_AS itself, once the runtime runs: the runtime's later allocations
# fail (the trace's compression buffers), records are dropped, and the reason given is the real
# one, out of memory, naming the limits (before: "No space left on device", and a bare zstd line)
cat >"$WORK/lower_as.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
int main(void)
{
	struct rlimit rl = { (rlim_t)512 << 20, (rlim_t)512 << 20 };
	if (setrlimit(RLIMIT_AS, &rl) != 0)
		return 3;
	for (int i = 0; i < 8; i++) {
		char *x = malloc(8 << 20);
		if (!x)
			break;
		memset(x, 1, 8 << 20);
	}
	return 0;
}
C
gcc -O2 -o "$WORK/lower_as" "$WORK/lower_as.c" || fail "cannot build lower_as.c"
RC=0
"$FAULTLINE" record -q -o "$WORK/lower" --force -L 4M -- "$WORK/lower_as" >"$WORK/lower.out" 2>"$WORK/lower.err" || RC=$?
check_eq "lower_as: exit status" "$RC" 0
! grep -q "No space left on device" "$WORK/lower.err" "$WORK"/lower/*/stats.json ||
	fail "RLIMIT_AS lowered: a full disk is blamed: $(cat "$WORK/lower.err")"
if [ "$(stat_of lower records_dropped)" -gt 0 ]; then
	grep -q '"records_dropped_reason": "Cannot allocate memory"' "$WORK"/lower/*/stats.json ||
		fail "records dropped for another reason: $(grep records_dropped_reason "$WORK"/lower/*/stats.json)"
	grep -q "RLIMIT_AS or RLIMIT_DATA" "$WORK/lower.err" || fail "the message does not point at the limits: $(cat "$WORK/lower.err")"
fi
echo "ok a program that lowers RLIMIT_AS: the dropped records' reason is out of memory, naming the limits"
