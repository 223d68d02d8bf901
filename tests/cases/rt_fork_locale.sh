#!/usr/bin/env bash
# rt_fork_locale: fork at a small -L in a program that set its locale. libc keeps the locale's data
# on the heap, where every new thread's start-up reads it (__ctype_init), and the forked child's
# runtime starts its own threads (handlers, evictor, timeline...) at the fork: before the fix, with
# that data evicted, they faulted on it before any of them could serve a fault, and the child hung
# for ever (python3 building a dict, then os.fork, at -L 8M; tests/planted/fork_locale at -L 4M).
#   - tests/planted/fork_locale C.UTF-8 32 at -L 4M (setlocale, fill 32 MiB, fork; the child starts
#     a thread and checks the memory, exits 3; the parent checks it): exits 0 with the native
#     output, within a deadline (a hang is killed with its whole process group and fails);
#   - the same with Debian's python3 (a dict of 100,000 entries, os.fork, the child rewrites a third and
#     exits 3) at -L 8M: the native output, exit 0;
#   - each child wrote a complete recording (check_stats: two processes, nothing dropped);
#   - tests/planted/fork_threads at -L 8M (4 threads thrash 8 MiB each while main forks 3 times):
#     in the child, libc's cache holds the parent's threads' stacks, and a thread created there
#     could take one and clear its thread-local table, on the heap and evicted; the runtime's
#     threads now have stacks of their own (before: the child hung in 4 of 4 runs).
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted fork_locale
need_planted fork_threads
need_cmd setsid
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 is not installed (run ./deps.sh --test)"

locale -a 2>/dev/null | grep -qixE 'c\.utf-?8' || skip "the C.UTF-8 locale is not installed"

# record_within NAME SECONDS ARGS...: run_record in a process group of its own, killed whole (a
# hung child included) when it takes longer than SECONDS; fails then.
record_within() {
	local name=$1 limit=$2; shift 2
	say "faultline record -q -o $WORK/$name --force $* (at most $limit s)"
	setsid "$FAULTLINE" record -q -o "$WORK/$name" --force "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
	local pid=$! waited=0
	while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt $((limit * 10)) ]; do
		sleep 0.1
		waited=$((waited + 1))
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL -- -"$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		fail "$name: still running after $limit s (hung): killed"
	fi
	RC=0
	wait "$pid" || RC=$?
	[ "$RC" -eq 0 ] || { show_err "$name"; fail "$name: faultline record exited $RC, want 0"; }
}

run_native fork "$PLANTED/fork_locale" C.UTF-8 32
record_within fork "$(scaled 60)" -L 4M -M 512M -- "$PLANTED/fork_locale" C.UTF-8 32
same_output fork fork
check_stats fork --local $((4 * MIB)) --max $((512 * MIB)) --procs 2
check_ge "fork evictions (all processes)" "$(stat_of fork evictions)" 1

cat >"$WORK/fork.py" <<'EOF'
import os
d = {i: str(i) * 5 for i in range(100000)}
pid = os.fork()
if pid == 0:
    for i in range(0, 100000, 3):
        d[i] = "child"
    print("child", sum(len(v) for v in d.values()), flush=True)
    os._exit(3)
_, status = os.waitpid(pid, 0)
print("parent", sum(len(v) for v in d.values()), os.waitstatus_to_exitcode(status), flush=True)
EOF
run_native py /usr/bin/python3 "$WORK/fork.py"
record_within py "$(scaled 90)" -L 8M -M 1G -- /usr/bin/python3 "$WORK/fork.py"
same_output py py
check_stats py --local $((8 * MIB)) --max $((1024 * MIB)) --procs 2

run_native threads "$PLANTED/fork_threads"
record_within threads "$(scaled 60)" -L 8M -M 512M -- "$PLANTED/fork_threads"
same_output threads threads
check_stats threads --local $((8 * MIB)) --max $((512 * MIB)) --procs 4
check_ge "fork_threads evictions (all processes)" "$(stat_of threads evictions)" 1
