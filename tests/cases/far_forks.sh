#!/usr/bin/env bash
# far_forks: copy-on-fork of far data over many forks (tests/planted/far_forks.c). The parent rewrites
# its memory and forks 36 times; every fork freezes the far copies written so far (runtime/far_store.c:
# generations), so the parent passes the 32 generations a process keeps and compacts. Every child
# checks it sees the parent's memory of its fork, evicted pages included; the parent checks it never
# sees a child's writes. With --far file: (buffered I/O here, FAULTLINE_FAR_IO=uring-buffered: the
# case is about generations, not the disk) and -L 1 MiB under 2 MiB of data.
#   - exit 0, output as natively, 37 processes, check_stats invariants;
#   - the parent compacted at least once (far_compactions >= 1) and ends with fewer than 32 generations.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted far_forks

size=2 rounds=36 local=1 max=256
mkdir -p "$WORK/store"
run_native forks "$PLANTED/far_forks" "$size" "$rounds"
FAULTLINE_FAR_IO=uring-buffered expect_record forks -L "$local" -M "$max" --far "file:$WORK/store" \
	-- "$PLANTED/far_forks" "$size" "$rounds"
same_output forks forks
check_stats forks --local $((local * MIB)) --max $((max * MIB)) --procs $((rounds + 1))
parent=$(proc_dirs "$WORK/forks" | head -n 1)
check_ge "forks: parent's far_compactions" "$(json_get "$WORK/forks/$parent/stats.json" far_compactions)" 1
check_le "forks: parent's far_generations" "$(json_get "$WORK/forks/$parent/stats.json" far_generations)" 31
[ -z "$(ls -A "$WORK/store")" ] || fail "forks: files left in the store directory"
echo "ok forks: store directory empty"
