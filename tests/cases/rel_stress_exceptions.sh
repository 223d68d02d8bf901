#!/usr/bin/env bash
# rel_stress_exceptions: C++ exceptions thrown through frames whose heap data is evicted
# (tests/planted/rel_exceptions.cc, built here with g++: the Makefile builds C only). 4 threads at
# once, each 6 rounds (FAULTLINE_TEST_LONG=1: 24) of: 48 nested frames, each owning a Guard (a
# std::vector filled with the frame's pattern) and a heap std::string; at the bottom an 8 MiB
# pressure buffer is written under -L 4 and an Error carrying a 256 KiB payload is thrown. On the
# way up every Guard's destructor verifies its vector (refaults during unwinding), every 8th frame
# catches, checks and rethrows (`throw;`), the middle frame wraps it (std::throw_with_nested); the
# top unwraps and checks payload and notes, and that all 48 guards ran. Each thread's last
# exception is kept in a std::exception_ptr and rethrown and checked by main at the end.
# Checks: exit 0, output (checksums per thread) as natively, check_stats, evictions and refaults,
# `faultline dump` exit 0 and every fault but the "concurrent" ones has a stack.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_cmd g++
local=4 max=1024
if [ "$LONG" = 1 ]; then rounds=24; else rounds=6; fi

prog=$WORK/rel_exceptions
g++ -std=gnu++17 -O2 -g -fomit-frame-pointer -Wall -Wextra -Werror -pthread -o "$prog" "$ROOT/tests/planted/rel_exceptions.cc" \
	|| fail "g++ could not build tests/planted/rel_exceptions.cc"
echo "ok built rel_exceptions with g++ -O2 -fomit-frame-pointer"

run_native exceptions "$prog" 4 "$rounds" 48 8
expect_record exceptions -L "$local" -M "$max" -- "$prog" 4 "$rounds" 48 8
same_output exceptions exceptions
summary exceptions
check_stats exceptions --local $((local * MIB)) --max $((max * MIB)) --procs 1
check_ge "exceptions evictions" "$(stat_of exceptions evictions)" 1
check_ge "exceptions faults_refault" "$(stat_of exceptions faults_refault)" 1
rc=0
"$FAULTLINE" dump "$WORK/exceptions" >"$WORK/exceptions.dump" 2>"$WORK/exceptions.dump.err" || rc=$?
[ "$rc" -eq 0 ] || { cat "$WORK/exceptions.dump.err" >&2; fail "exceptions: faultline dump exited $rc"; }
bare=$(grep -v '^#' "$WORK/exceptions.dump" | grep -v ' concurrent ' | grep -c ' stack=-$' || true)
check_stackless exceptions "exceptions: faults (not concurrent) without a stack" "$bare"
