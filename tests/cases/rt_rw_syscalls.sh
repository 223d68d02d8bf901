#!/usr/bin/env bash
# rt_rw_syscalls: read()/write()/pread()/preadv()/pwritev() and pipe/socketpair transfers whose user
# buffers are evicted or never touched (tests/planted/rw_syscalls.c): kernel-mode faults must be
# served (no EFAULT, no wrong data, no short count left unexplained). Four buffers of N MiB with
# -L = N/3, so each buffer is mostly evicted when the next system call reaches it.
# The case checks: exit 0, output as natively, evictions and refaults, check_stats invariants; then
# the same without -L (no eviction; first-touch faults between 4 x N MiB of pages and that + 2 % + 2048).
# Default 24 MiB buffers with -L 8; FAULTLINE_TEST_LONG=1: 128 MiB with -L 32.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted rw_syscalls

if [ "$LONG" = 1 ]; then size=128 local=32; else size=24 local=8; fi
max=1024

run_native rw "$PLANTED/rw_syscalls" "$size" "$WORK"
expect_record rw -L "$local" -M "$max" -- "$PLANTED/rw_syscalls" "$size" "$WORK"
same_output rw rw
summary rw
check_stats rw --local $((local * MIB)) --max $((max * MIB)) --procs 1
check_ge "rw evictions" "$(stat_of rw evictions)" 1
check_ge "rw faults_refault" "$(stat_of rw faults_refault)" 1

# the same without -L: only first-touch faults, many of them taken inside the system calls
expect_record rw-unlimited -M "$max" -- "$PLANTED/rw_syscalls" "$size" "$WORK"
same_output rw-unlimited rw
summary rw-unlimited
check_stats rw-unlimited --max $((max * MIB)) --procs 1
check_eq "rw-unlimited evictions" "$(stat_of rw-unlimited evictions)" 0
check_first_touch rw-unlimited $((4 * size * MIB / PAGE))
