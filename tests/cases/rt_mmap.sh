#!/usr/bin/env bash
# rt_mmap: the program's own anonymous mappings changed behind the allocator's back, with eviction in
# between (tests/planted/mmap_churn.c): partial munmap (head, tail, middle), MAP_FIXED over live pages
# and into holes, mremap grow / shrink / move, MADV_DONTNEED on resident and evicted pages reading back
# zeros, mprotect PROT_READ / PROT_NONE and back, MAP_SHARED|MAP_ANONYMOUS shared with a forked child.
# The program checks the data; the case checks exit 0, output as natively, that eviction happened
# (-L 4 against a 12 MiB pressure buffer), and check_stats for both processes (parent and the child
# of the MAP_SHARED check).
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted mmap_churn

local=4 max=256 pressure=12
run_native mmap "$PLANTED/mmap_churn" "$pressure"
expect_record mmap -L "$local" -M "$max" -- "$PLANTED/mmap_churn" "$pressure"
same_output mmap mmap
summary mmap
check_stats mmap --local $((local * MIB)) --max $((max * MIB)) --procs 2
check_ge "mmap evictions" "$(stat_of mmap evictions)" 1
check_ge "mmap faults_refault" "$(stat_of mmap faults_refault)" 1
