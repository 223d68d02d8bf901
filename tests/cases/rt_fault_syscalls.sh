#!/usr/bin/env bash
# rt_fault_syscalls: the fault path's system calls, counted with strace -f -c on a recording of
# tests/planted/fill.c (16 MiB, every page first touched by a write) with a stack for every
# fault (-s 1) and no local limit (issue 17), without the counter timeline (--timeline 0: its
# sampler reads each thread's counters every 20 ms, so its reads grow with the run's length, and
# under strace on a busy machine they went past the allowance below: 4,403 reads for 4,119 faults):
#   - no epoll_wait, epoll_pwait or poll at all: handlers block in read(2) on the userfaultfd;
#   - ioctl <= faults + write-protect faults + 2 per stack signal + 64: one UFFDIO_COPY that
#     also wakes the thread per fault, a separate UFFDIO_WAKE only after a stack signal (a
#     fault without a usable perf sample), and the set-up's few (UFFDIO_API, REGISTER, perf);
#   - read <= faults + 256: one read per batch of messages, never one that only says EAGAIN
#     (the loader's and the runtime's own reads of files are the allowance);
#   - process_vm_readv <= 16: the unwinder reads a sleeping thread's stack in place where it
#     lies in the thread's own stack mapping; the call validates other pages only.
# Counts, not times: strace slows every call alike.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted fill
need_cmd strace

size=16
run_native fill "$PLANTED/fill" "$size"
say "strace -f -c faultline record -s 1 --timeline 0 -- fill $size"
RC=0
strace -f -c -o "$WORK/strace.txt" "$FAULTLINE" record -q -o "$WORK/sys" --force -s 1 --timeline 0 -- "$PLANTED/fill" "$size" \
	>"$WORK/sys.out" 2>"$WORK/sys.err" || RC=$?
[ "$RC" = 0 ] || { show_err sys; fail "record under strace exited $RC"; }
same_output sys fill
check_stats sys --procs 1

# calls SYSCALL: its count in strace's table (column 4: % time, seconds, usecs/call, calls)
calls() { awk -v c="$1" '$NF == c && $1 ~ /^[0-9.]+$/ { print $4; found = 1 } END { if (!found) print 0 }' "$WORK/strace.txt"; }
faults=$(stat_of sys faults_total)
wp=$(stat_of sys write_protect_faults)
signals=$(stat_of sys stack_signals_sent)
say "faults $faults, write-protect faults $wp, stack signals $signals"
say "calls: read $(calls read), ioctl $(calls ioctl), epoll_wait $(calls epoll_wait), process_vm_readv $(calls process_vm_readv)"
check_ge "faults_total" "$faults" $((size * MIB / PAGE))
for c in epoll_wait epoll_pwait poll; do
	check_eq "$c calls" "$(calls $c)" 0
done
# ppoll: only the trace's frame writer thread polls (its wake-up eventfd, with a timeout when idle, so
# open frames reach the disk); never the handlers, never once per fault.
check_le "ppoll calls (frame writer only)" "$(calls ppoll)" 256
check_le "ioctl calls" "$(calls ioctl)" $((faults + wp + 2 * signals + 64))
check_le "read calls" "$(calls read)" $((faults + 256))
check_le "process_vm_readv calls" "$(calls process_vm_readv)" 16
