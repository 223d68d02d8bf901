#!/usr/bin/env bash
# probe_migration: the access prober and the evictor keep every page's content while the kernel
# migrates pages (memory compaction). On this kernel (6.18) a UFFDIO_MOVE of a page under migration
# can fail with EEXIST after it moved the page; the prober took EEXIST for "an older copy in the
# mirror", dropped that mirror page (the only copy) and re-moved a hole, so the page read back as
# zeros (CI: access_hotcold "cold array, word ...: 0x0", sqlite3 "disk I/O error" under --mrc, both
# on a busy machine). tests/planted/probe_stress rewrites and checks pages from 3 threads while
# /proc/sys/vm/compact_memory is written every 0.1 s; before the fix it read zeros in 3 runs of 3.
#   - --sample-accesses at 3000 probes/s, --mrc sampling every page (no cost budget: every reuse
#     re-armed, as many moves as possible; an access sample's page comes back by a move, fault.c),
#     and -L 4 MiB under the clock
#     and under fifo (eviction moves runs of pages): each exits 0 with probe_stress's own checks
#     passed;
#   - the prober did arm pages, and the kernel did migrate pages meanwhile (else: skip, nothing shown).
# Needs root (compact_memory); skipped otherwise.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted probe_stress

compact=/proc/sys/vm/compact_memory
[ -w "$compact" ] || skip "$compact is not writable (needs root and CONFIG_COMPACTION)"
migrated() { awk '$1 == "pgmigrate_success" { print $2 }' /proc/vmstat; }
[ -n "$(migrated)" ] || skip "/proc/vmstat has no pgmigrate_success"

limit=$(scaled 120)
run_native stress "$PLANTED/probe_stress" 8 3 2

# run_compacting NAME ARGS...: expect_record under `timeout`, compacting memory all along
run_compacting() {
	local name=$1; shift
	(while :; do echo 1 >"$compact"; sleep 0.1; done) 2>/dev/null &
	local compactor=$!
	local before
	before=$(migrated)
	say "timeout $limit faultline record -q -o $WORK/$name --force $*"
	RC=0
	timeout "$limit" "$FAULTLINE" record -q -o "$WORK/$name" --force "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || RC=$?
	kill "$compactor"
	wait "$compactor" 2>/dev/null
	[ "$RC" -eq 124 ] && { show_err "$name"; fail "$name: still running after ${limit}s (killed)"; }
	if [ "$RC" -ne 0 ]; then
		show_err "$name"
		fail "$name: faultline record exited $RC, want 0"
	fi
	grep -qx "probe_stress ok" "$WORK/$name.out" || fail "$name: no 'probe_stress ok' in its output"
	echo "ok $name: exit status 0, every page checked"
	MIGRATED=$(($(migrated) - before))
}

any=0
run_compacting sampled -M 1G --sample-accesses --sample-accesses-rate 3000 -- "$PLANTED/probe_stress" 8 3 5
check_ge "sampled probe_armed" "$(stat_of sampled probe_armed)" 1
[ "$MIGRATED" -gt 0 ] && any=1
run_compacting mrc -M 1G --mrc --mrc-rate 1 --mrc-budget 0 -- "$PLANTED/probe_stress" 8 3 5
check_ge "mrc probe_armed" "$(stat_of mrc probe_armed)" 1
[ "$MIGRATED" -gt 0 ] && any=1
run_compacting limited -M 1G -L 4M -- "$PLANTED/probe_stress" 8 3 5
check_ge "limited evictions" "$(stat_of limited evictions)" 1
[ "$MIGRATED" -gt 0 ] && any=1
# fifo moves runs of the oldest pages, dirty ones among them: before the fix a run whose move
# failed on a migrated page left the handler copying a page it had moved (a fault on its own BUSY
# page: bench/csr_scatter 14 16 2 at -L 1M hung in 2 of 2 runs while compacting), or, with its
# mirror page dropped, read zeros
run_compacting fifo -M 1G -L 4M --policy fifo -- "$PLANTED/probe_stress" 8 3 5
check_ge "fifo evictions" "$(stat_of fifo evictions)" 1
[ "$MIGRATED" -gt 0 ] && any=1
[ "$any" = 1 ] || skip "the kernel migrated no page during the recordings: nothing was shown"
echo "PASS"
