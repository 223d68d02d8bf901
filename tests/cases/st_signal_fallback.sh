#!/usr/bin/env bash
# st_signal_fallback: the signal path that takes a fault's stack when there is no perf sample
# (runtime/fault_context.c: a thread's first fault, machines whose perf_event_paranoid forbids
# sampling, overflowed rings). FAULTLINE_STACK_SOURCE=signal sends every stack down that path;
# the stack end-to-end checks of single-threaded programs (call chains at -O2 without frame
# pointers, faults inside read()) must hold there too, and no stack may come from a sample.
# (The multi-threaded sections drop stacks taken > 200 ms late on a loaded machine, by design.)
. "$(dirname "$0")/../lib.sh"
need_faultline
unit=$FAULTLINE_BUILD/tests/unit/test_stacks_e2e
[ -x "$unit" ] || fail "not built: $unit"
FAULTLINE_STACK_SOURCE=signal "$unit" callchain sysread || fail "stack checks by signal failed"
echo "ok: every stack check holds with FAULTLINE_STACK_SOURCE=signal"
