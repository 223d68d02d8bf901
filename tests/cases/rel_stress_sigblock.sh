#!/usr/bin/env bash
# rel_stress_sigblock: threads that block every signal, each in its own way — pthread_sigmask,
# sigprocmask, a mask inherited from main at creation, pthread_attr_setsigmask_np, and the raw
# rt_sigprocmask system call (no libc wrapper the shim can interpose) — while main blocks
# everything too (tests/planted/rel_sigblock.c). Each writes one word per page of its own 2048-page
# buffer, three passes, under -L 4 (every pass refaults). The runtime takes stacks on a signal sent
# to the faulting thread; whatever the masks, the program must run to completion and the trace
# must say, for each fault, its stack or that it has none.
# Checks: exit 0 (within a deadline), output as natively, check_stats; then `faultline dump`:
#   - every thread has at least pages x passes faults in the trace;
#   - the five blocking threads' faults have their own stacks: a stack is either absent
#     (stack=-) or goes through the program's own code (the faults of these threads happen below
#     blocker_main, in blocked_touch or the allocator; at most 64 per thread at thread exit, in
#     jemalloc's thread cleanup). More stacks without a frame of the program were taken somewhere
#     else, e.g. when the thread exits and finally takes its pending stack signals;
#   - the threads that block signals through a libc API (pthread_sigmask, sigprocmask, a mask
#     inherited at pthread_create, pthread_attr_setsigmask_np) and main: every fault other than
#     "concurrent" (only woken, never has a stack) has a stack, and at least pages x (passes - 1)
#     of them (the refaults of the checking passes) have frame 0 inside the program's code;
#   - raw_syscall: every fault is recorded and the program completes; its stacks are not checked
#     (no LD_PRELOAD shim can see a mask set by the raw system call: a known limitation; the
#     runtime drops the stacks it takes more than 200 ms late); the counts are printed.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted rel_sigblock
pages=2048 passes=3 local=4 max=1024

run_native sigblock "$PLANTED/rel_sigblock" "$pages" "$passes"
say "faultline record -q -o $WORK/sigblock --force -L $local -M $max -- $PLANTED/rel_sigblock $pages $passes"
RC=0
timeout -k 5 "$(scaled 60)" "$FAULTLINE" record -q -o "$WORK/sigblock" --force -L "$local" -M "$max" -- \
	"$PLANTED/rel_sigblock" "$pages" "$passes" >"$WORK/sigblock.out" 2>"$WORK/sigblock.err" || RC=$?
[ "$RC" -ne 124 ] && [ "$RC" -ne 137 ] || { show_err sigblock; fail "sigblock: the program did not finish within $(scaled 60) s (threads that block every signal hang)"; }
[ "$RC" -eq 0 ] || { show_err sigblock; fail "sigblock: faultline record exited $RC, want 0"; }
echo "ok sigblock: exit status 0"
same_output sigblock sigblock
summary sigblock
check_stats sigblock --local $((local * MIB)) --max $((max * MIB)) --procs 1

rc=0
"$FAULTLINE" dump "$WORK/sigblock" >"$WORK/sigblock.dump" 2>"$WORK/sigblock.dump.err" || rc=$?
[ "$rc" -eq 0 ] || { cat "$WORK/sigblock.dump.err" >&2; fail "sigblock: faultline dump exited $rc"; }
echo "ok sigblock: faultline dump exit status 0"

late=$(stat_of sigblock late_stacks_dropped)
# (no bound on the count itself here: the raw_syscall thread's stacks are dropped late by design)
"$PY" - "$WORK/sigblock" "$WORK/sigblock.err" "$WORK/sigblock.dump" "$PLANTED/rel_sigblock" "$pages" "$passes" "$late" <<'PYEOF'
import glob, os, re, sys
d, errf, dumpf, prog, pages, passes, late = sys.argv[1:8]
pages, passes, late = int(pages), int(passes), int(late)
stackless = 0  # faults of the libc-blocking threads without a stack: each must be a late drop
tids = {}
for line in open(errf):
    m = re.match(r"tid (\S+) (\d+)$", line.strip())
    if m:
        tids[int(m.group(2))] = m.group(1)
want = {"pthread_sigmask", "sigprocmask", "inherited", "attr", "raw_syscall", "main"}
if set(tids.values()) != want:
    sys.exit("FAIL: threads reported on stderr: %s, want %s" % (sorted(tids.values()), sorted(want)))
# the program's executable mappings, from the last maps snapshot
real = os.path.realpath(prog)
text = []
for m in glob.glob(os.path.join(d, "*", "maps")):
    for line in open(m):
        f = line.split()
        if len(f) >= 6 and "x" in f[1] and os.path.realpath(f[5]) == real:
            lo, hi = (int(x, 16) for x in f[0].split("-"))
            text.append((lo, hi))
if not text:
    sys.exit("FAIL: no executable mapping of %s in the maps snapshots" % real)
count = {n: {"faults": 0, "stack": 0, "none": 0, "none_concurrent": 0, "in_program": 0, "foreign": 0} for n in want}
foreign_example = {}
def in_program(pc):
    return any(lo <= pc < hi for lo, hi in text)
for line in open(dumpf):
    if line.startswith("#"):
        continue
    f = line.split()
    tid, kind, stack = int(f[2]), f[4], f[-1]
    if tid not in tids or not stack.startswith("stack="):
        continue
    name = tids[tid]
    c = count[name]
    c["faults"] += 1
    frames = stack[len("stack="):]
    if frames == "-":
        c["none_concurrent" if kind == "concurrent" else "none"] += 1
        continue
    c["stack"] += 1
    pcs = [int(x, 16) for x in frames.split(",")]
    if in_program(pcs[0]):
        c["in_program"] += 1
    if not any(in_program(pc) for pc in pcs):
        c["foreign"] += 1
        foreign_example.setdefault(name, line.strip())
errors = []
for name in sorted(want):
    c = count[name]
    print("# %-16s faults %5d  with stack %5d (frame 0 in the program %5d, no frame in the program %5d)  "
          "without stack %d (+ %d concurrent)" % (name, c["faults"], c["stack"], c["in_program"], c["foreign"],
                                                  c["none"], c["none_concurrent"]))
    if c["faults"] < pages * passes:
        errors.append("%s: %d faults in the trace, want >= %d (pages x passes)" % (name, c["faults"], pages * passes))
    # raw_syscall: a mask set with the raw system call is invisible to an LD_PRELOAD shim, so the
    # stack signals wait until the thread unblocks or exits. The runtime drops a stack it takes
    # more than 200 ms late, but the last ones before the thread's exit arrive sooner and are
    # taken where the thread is then (known limitation, stated in the issue note); so for this
    # thread only completion and complete fault records are required.
    if name != "main" and name != "raw_syscall" and c["foreign"] > 64:
        errors.append("%s: %d faults carry a stack without any frame of the program, i.e. not the stack of the fault "
                      "(should be the fault's stack or none); e.g. %s" % (name, c["foreign"], foreign_example[name]))
    if name == "raw_syscall":
        continue
    stackless += c["none"]
    if c["in_program"] < pages * (passes - 1):
        errors.append("%s: %d faults with frame 0 in the program's code, want >= %d" % (name, c["in_program"], pages * (passes - 1)))
# the runtime drops (and counts in late_stacks_dropped) a stack taken > 200 ms late; no other may miss
if stackless > late:
    errors.append("%d faults without a stack although their threads blocked signals through libc, more than the "
                  "late_stacks_dropped = %d the runtime counted" % (stackless, late))
for e in errors:
    print("FAIL: sigblock: " + e, file=sys.stderr)
if errors:
    sys.exit(1)
print("ok sigblock: every thread's faults are in the trace, each with its own stack (raw_syscall: recorded, stacks not checked)")
PYEOF
[ $? -eq 0 ] || fail "sigblock: stacks of the signal-blocking threads"
