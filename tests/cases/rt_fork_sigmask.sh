#!/usr/bin/env bash
# rt_fork_sigmask: the runtime's evictor thread blocks the stack signal, in a forked child too.
# The evictor blocks every signal when it starts; it is restarted in a child after fork, when the
# runtime is already marked ready, and a mask set through pthread_sigmask there would go through the
# shim's interposer, which keeps the stack signal deliverable for the program's own threads. The
# case records tests/planted/fork_sigmask.c (fill 48 MiB with -L 16, fork, the child faults its
# copy back in and then waits), finds the thread named fl-evictor in the parent and in the waiting
# child (/proc/PID/task/*/comm) and checks that its SigBlk (/proc/PID/task/TID/status) has the bit
# of the stack signal each process's meta.json names.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted fork_sigmask

ready=$WORK/ready go=$WORK/go rec=$WORK/fs
say "faultline record -L 16 -M 1024 -- fork_sigmask 48 $ready $go (in the background)"
"$FAULTLINE" record -q -o "$rec" --force -L 16 -M 1024 -- "$PLANTED/fork_sigmask" 48 "$ready" "$go" \
	>"$WORK/fs.out" 2>"$WORK/fs.err" &
recorder=$!
finish() { touch "$go"; wait "$recorder" 2>/dev/null; }

deadline=$(( $(date +%s) + $(scaled 60) ))
while [ ! -s "$ready" ]; do
	if ! kill -0 "$recorder" 2>/dev/null; then show_err fs; fail "the recording ended before the child was ready"; fi
	[ "$(date +%s)" -lt "$deadline" ] || { finish; fail "the child was not ready within $(scaled 60) s"; }
	sleep 0.05
done
read -r parent child <"$ready"
say "parent $parent, child $child"

# evictor_mask PID: the SigBlk (hex) of PID's thread named fl-evictor; empty if there is none
evictor_mask() {
	local t
	for t in /proc/"$1"/task/*; do
		if [ "$(cat "$t/comm" 2>/dev/null)" = fl-evictor ]; then
			awk '/^SigBlk:/ {print $2}' "$t/status"
			return
		fi
	done
}
parent_mask=$(evictor_mask "$parent")
child_mask=$(evictor_mask "$child")
finish
rc=$?
[ "$rc" -eq 0 ] || { show_err fs; fail "faultline record exited $rc, want 0"; }
echo "ok fs: exit status 0"
[ -n "$parent_mask" ] || fail "no thread named fl-evictor in the parent $parent"
[ -n "$child_mask" ] || fail "no thread named fl-evictor in the forked child $child"

# has_bit MASK_HEX SIG: exit 0 if signal SIG's bit is set in the mask
has_bit() { "$PY" -c 'import sys; sys.exit(0 if (int(sys.argv[1], 16) >> (int(sys.argv[2]) - 1)) & 1 else 1)' "$1" "$2"; }
for who in parent child; do
	pid=${!who}
	mask=${who}_mask; mask=${!mask}
	sig=$(json_get "$rec/$pid/meta.json" stack_signal) || fail "$who: cannot read stack_signal from $rec/$pid/meta.json"
	[ "$sig" -gt 0 ] || skip "the stack signal is off in $who $pid (no free real-time signal?)"
	has_bit "$mask" "$sig" || fail "$who $pid: the evictor's SigBlk $mask leaves the stack signal $sig unblocked"
	echo "ok $who $pid: the evictor blocks the stack signal $sig (SigBlk $mask)"
done
