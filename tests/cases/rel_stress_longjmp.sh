#!/usr/bin/env bash
# rel_stress_longjmp: setjmp/longjmp and sigsetjmp/siglongjmp through frames whose heap data is
# evicted (tests/planted/rel_longjmp.c): 64 nested frames each own a 64 KiB block; at the bottom an
# 8 MiB pressure buffer is written under -L 4 (evicting the blocks), then all frames are left at
# once — by longjmp to main, by siglongjmp out of a SIGUSR2 handler that first reads every block
# (faults inside a signal handler), or by longjmp to a middle frame that checks its locals and the
# blocks above it and longjmps again. Main then verifies every block (refaults) and that
# siglongjmp restored the signal mask. 12 rounds (~50,000 faults); FAULTLINE_TEST_LONG=1: 48.
# Checks: exit 0, output (checksums per kind of jump) as natively, check_stats, evictions and
# refaults, and `faultline dump`: exit 0, every fault but the "concurrent" ones has a stack (the
# faults taken inside the signal handler included).
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted rel_longjmp
local=4 max=1024
if [ "$LONG" = 1 ]; then rounds=48; else rounds=12; fi

run_native longjmp "$PLANTED/rel_longjmp" "$rounds" 64 8
expect_record longjmp -L "$local" -M "$max" -- "$PLANTED/rel_longjmp" "$rounds" 64 8
same_output longjmp longjmp
summary longjmp
check_stats longjmp --local $((local * MIB)) --max $((max * MIB)) --procs 1
check_ge "longjmp evictions" "$(stat_of longjmp evictions)" 1
check_ge "longjmp faults_refault" "$(stat_of longjmp faults_refault)" 1
rc=0
"$FAULTLINE" dump "$WORK/longjmp" >"$WORK/longjmp.dump" 2>"$WORK/longjmp.dump.err" || rc=$?
[ "$rc" -eq 0 ] || { cat "$WORK/longjmp.dump.err" >&2; fail "longjmp: faultline dump exited $rc"; }
bare=$(grep -v '^#' "$WORK/longjmp.dump" | grep -v ' concurrent ' | grep -c ' stack=-$' || true)
check_stackless longjmp "longjmp: faults (not concurrent) without a stack" "$bare"
