#!/usr/bin/env bash
# rt_signal_reset: a program that sets every signal to SIG_DFL (as git does in each child between
# fork and exec, and `env --default-signal`) or SIG_IGN, then works on (tests/planted/
# signal_reset.c). The runtime's own signals keep their handlers: the fault handlers' periodic
# wake-up once killed the child with signal 62. Each setting reads back as the program set it, the
# output and exit status are the native run's, every process image writes its trace, and no message
# says the program took the stack signal (it only set it to the default). `env --default-signal`
# too, where coreutils has it.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted signal_reset

run_native reset "$PLANTED/signal_reset" 16
expect_record reset -L 4 -M 256 -- "$PLANTED/signal_reset" 16
same_output reset reset
check_stats reset --local $((4 * MIB)) --max $((256 * MIB)) --procs 3 # parent, child, echo
check_ge "evictions" "$(stat_of reset evictions)" 1
! grep -q "installs a handler" "$WORK/reset.err" || fail "a message says the program took a signal: $(cat "$WORK/reset.err")"
echo "ok no message about the program's signal settings"

if env --default-signal true 2>/dev/null; then
	run_native envdfl env --default-signal "$PLANTED/fill" 8
	expect_record envdfl -L 4 -M 256 -- env --default-signal "$PLANTED/fill" 8
	same_output envdfl envdfl
	check_stats envdfl --local $((4 * MIB)) --max $((256 * MIB)) --procs 2
fi
