#!/usr/bin/env bash
# st_signal_fallback: the signal path that takes a fault's stack when there is no perf sample
# (runtime/fault_context.c: a thread's first fault, machines whose perf_event_paranoid forbids
# sampling, overflowed rings). FAULTLINE_STACK_SOURCE=signal sends every stack down that path;
# the stack end-to-end checks (call chains at -O2 without frame pointers, faults inside read(),
# 4 threads on 2 handlers, threads that block signals) must hold there too (with the bound on
# stacks dropped for lateness that the signal path promises), and no stack may come from a sample.
. "$(dirname "$0")/../lib.sh"
need_faultline
unit=$FAULTLINE_BUILD/tests/unit/test_stacks_e2e
[ -x "$unit" ] || fail "not built: $unit"
FAULTLINE_STACK_SOURCE=signal "$unit" callchain sysread threads sigblock || fail "stack checks by signal failed"
echo "ok: every stack check holds with FAULTLINE_STACK_SOURCE=signal"
