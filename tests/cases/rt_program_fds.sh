#!/usr/bin/env bash
# rt_program_fds: programs that close or reuse descriptors they never opened. The runtime's
# userfaultfd and trace files share the program's descriptor table; before the fix a daemon-style
# closefrom(3) closed the userfaultfd, later faults went unserved, evicted pages read back as zeros
# and the program still exited 0 ("sum" wrong), and a program started with stdin and stdout closed
# had its userfaultfd at descriptor 0 or 1, which its own redirections closed: it hung.
#   - tests/planted/fd_closer 32 at -L 4M (fill 32 MiB, closefrom(3), close 3..fd limit,
#     close_range, dup2 onto 3..7, fill 32 MiB more, verify both): the native output, exit 0, a
#     complete recording with evictions;
#   - sh -c 'ls / >/dev/null; echo done >&2' started with stdin and stdout closed: exit 0 within a
#     deadline, "done" on stderr, a complete recording;
#   - cat started with stdin closed finds it closed, as natively ("Bad file descriptor"; before, a
#     pipe libunwind had opened while the runtime started sat there);
#   - tests/planted/fd_lowest (single-threaded: open and close /dev/null for 300 ms, touching fresh
#     heap pages) gets the lowest free number from every open, as natively. Before, the timeline's
#     sampler thread opened its perf counters in the process's table, each taking number 3 for a
#     moment: 5 of 10 runs saw a 4;
#   - a program that closes stderr and opens a file at number 2 finds only its own data in it: the
#     runtime's messages go to its own copy of stderr;
#   - that copy follows the program's stderr: a daemon that closes or redirects it does not hold
#     the parent's pipe, so $(faultline record -- daemon) returns when the command ends.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted fd_closer
need_planted fd_lowest

run_native closer "$PLANTED/fd_closer" 32
run_record closer -L 4M -M 512M -- "$PLANTED/fd_closer" 32
same_output closer closer
check_stats closer --local $((4 * MIB)) --max $((512 * MIB)) --procs 1
check_ge "closer evictions" "$(stat_of closer evictions)" 1000

say "faultline record -- sh -c 'ls / >/dev/null; echo done >&2' <&- >&-"
RC=0
timeout -k 5 "$(scaled 60)" "$FAULTLINE" record -q -o "$WORK/closed" --force -- sh -c 'ls / >/dev/null; echo done >&2' \
	<&- >&- 2>"$WORK/closed.err" || RC=$?
[ "$RC" -ne 124 ] && [ "$RC" -ne 137 ] || fail "closed stdio: record did not finish within $(scaled 60) s (hung)"
[ "$RC" -eq 0 ] || { sed 's/^/# stderr: /' "$WORK/closed.err"; fail "closed stdio: record exited $RC, want 0"; }
grep -qx done "$WORK/closed.err" || fail "closed stdio: the program's 'done' is not on stderr"
check_stats closed --procs 2
echo "ok closed stdio: exit 0, the program ran to its end, a complete recording"

RC=0
cat <&- 2>"$WORK/cat.native" || RC=$?
"$FAULTLINE" record -q -o "$WORK/cat" --force -- cat <&- 2>"$WORK/cat.err" || true
grep -v '^faultline' "$WORK/cat.err" >"$WORK/cat.traced"
cmp -s "$WORK/cat.native" "$WORK/cat.traced" ||
	fail "cat with stdin closed: stderr [$(cat "$WORK/cat.traced")], natively [$(cat "$WORK/cat.native")]"
echo "ok cat with stdin closed: the native error ($(head -n1 "$WORK/cat.native"))"

# no descriptor of the runtime's, nor of the libraries it uses (libunwind's pipe), below the
# numbers it keeps its own at: sh lists its own descriptors, traced and natively
sh -c 'ls /proc/$$/fd' </dev/null >"$WORK/fds.native" 2>&1
"$FAULTLINE" record -q -o "$WORK/fds" --force -- sh -c 'ls /proc/$$/fd' </dev/null >"$WORK/fds.traced" 2>"$WORK/fds.err" ||
	fail "record of sh listing its descriptors failed: $(cat "$WORK/fds.err")"
low() { awk '$1 < 256' "$1" | sort -n | tr '\n' ' '; }
[ "$(low "$WORK/fds.native")" = "$(low "$WORK/fds.traced")" ] ||
	fail "descriptors below 256: traced [$(low "$WORK/fds.traced")], natively [$(low "$WORK/fds.native")]"
echo "ok descriptors below 256 as natively: $(low "$WORK/fds.native")"

# open(2) gets the lowest free number while the runtime's threads work beside the program: three
# runs (each opened about 80,000 times; before the fix, half of the runs saw a 4)
run_native lowest "$PLANTED/fd_lowest" 300
grep -q "others 0$" "$WORK/lowest.native" || fail "fd_lowest natively: $(cat "$WORK/lowest.native")"
for i in 1 2 3; do
	run_record lowest$i -M 512M -- "$PLANTED/fd_lowest" 300
	same_output lowest$i lowest
done
echo "ok the program's open(2) got the lowest free number in 3 runs under record: $(cat "$WORK/lowest.native")"

# a program that closes stderr and opens a file, which gets number 2: the runtime's messages (here
# the region's exhaustion at -M 64M, by a 256 MiB malloc) go to the runtime's own copy of stderr,
# which became /dev/null when the program closed its stderr, never into the program's file.
# Before, the message was written into the file.
cat >"$WORK/stderr_reuse.c" <<'C'
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	close(2);
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd != 2)
		return 3;
	write(fd, "DATA1\n", 6);
	void *p = malloc((size_t)256 << 20);
	write(fd, p ? "nonnull\n" : "null\n", p ? 8 : 5);
	return 0;
}
C
gcc -O2 -o "$WORK/stderr_reuse" "$WORK/stderr_reuse.c" || fail "cannot build stderr_reuse.c"
run_record reuse -M 64M -- "$WORK/stderr_reuse" "$WORK/reuse.data"
[ "$RC" = 0 ] || fail "stderr_reuse exited $RC: $(cat "$WORK/reuse.err")"
[ "$(tr '\n' ' ' <"$WORK/reuse.data")" = "DATA1 null " ] || fail "stderr_reuse: the program's file holds: $(cat "$WORK/reuse.data")"
echo "ok the runtime's message stayed out of the program's file at number 2 (its stderr was closed: the message goes nowhere)"

# A daemon that closes (or redirects to /dev/null) its stderr while it lives on: the runtime's copy
# of stderr follows, so it does not hold the parent's pipe open, and x=$(faultline record ...)
# returns when the command has ended, not when the daemon does (it sleeps 20 s).
cat >"$WORK/daemon.c" <<'C'
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	if (fork() == 0) {
		char *p = malloc(1 << 20);
		memset(p, 1, 1 << 20);
		if (argc > 1) {
			int fd = open("/dev/null", O_RDWR);
			dup2(fd, 0), dup2(fd, 1), dup2(fd, 2);
		} else {
			close(0), close(1), close(2);
		}
		sleep(20);
		_exit(0);
	}
	return 0;
}
C
gcc -O2 -o "$WORK/daemon" "$WORK/daemon.c" || fail "cannot build daemon.c"
for how in close dup2; do
	arg=; [ "$how" = dup2 ] && arg=dup2
	start=$(date +%s)
	out=$("$FAULTLINE" record -q -o "$WORK/daemon-$how" --force -- "$WORK/daemon" $arg 2>&1)
	took=$(( $(date +%s) - start ))
	pkill -f "$WORK/daemon" 2>/dev/null || true
	[ "$took" -lt 15 ] || fail "daemon that ${how}s its stderr: \$(faultline record ...) took $took s (the daemon's 20 s): $out"
	echo "ok daemon that ${how}s its stderr: \$(faultline record ...) returned in $took s"
done
