#!/usr/bin/env bash
# st_never_surface: the stack signal never surfaces to the program (tests/planted/st_surface.c). A
# writer thread sends 32 MiB through a pipe to a reader thread in 1 MiB writes; before every read()
# and write() each waits with poll() or select() (in turn) whose pollfd arrays / fd_sets sit in heap
# pages of their own that are evicted between uses; both data buffers are evicted (-L 8 M); two
# hammer threads fault heavily meanwhile. The program fails on any EINTR or other error, on a short
# write() to the blocking pipe, on a read() returning more than asked or 0 early, on poll()/select()
# not returning exactly 1 with the end ready, on errno changed by a successful call, on wrong data.
# The case checks: the program runs clean natively; under faultline it exits 0 with the same
# output, check_stats holds, no stack signal failed, every signal sent became a context; and the
# trace shows the paths were really taken — faults taken inside system calls (a context whose stack
# lacks FL_STACK_EXACT_PC) on the pollfd pages (poll), the fd_set pages (select), the source
# (write) and the destination (read). Twice: default handlers, and -c 1 with 256 KiB chunks.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted st_surface

local=8 max=512

# in_kernel_faults NAME: "RANGE COUNT" lines: faults per range of the program's "range" lines whose
# context's stack is not an exact PC (taken inside a system call).
in_kernel_faults() {
	"$PY" - "$WORK/$1" "$WORK/$1.out" <<'EOF2'
import glob, os, re, struct, sys
d, out = sys.argv[1], sys.argv[2]
pdirs = [p for p in glob.glob(os.path.join(d, "*")) if os.path.isdir(p)]
if len(pdirs) != 1:
    sys.exit("want one process directory, got %d" % len(pdirs))
pd = pdirs[0]
from trace_frames import read   # format 3's frames decoded into fixed-size records
def records(name):
    data = read(os.path.join(pd, name))
    hsize, rsize = struct.unpack_from("<II", data, 16)
    return data[hsize:], rsize
ranges = []
for line in open(out):
    m = re.match(r"range (\S+) 0x([0-9a-f]+) (\d+)$", line.strip())
    if m:
        ranges.append((m.group(1), int(m.group(2), 16), int(m.group(3))))
stacks = {}
body, _ = records("stacks")
off = 0
while off + 16 <= len(body):
    sid, n, flags = struct.unpack_from("<IHH", body, off)
    stacks[sid] = flags
    off += 16 + 8 * n
ctx_stack = {}
body, rsize = records("contexts")
for off in range(0, len(body) - rsize + 1, rsize):
    seq, sid = struct.unpack_from("<QI", body, off)     # trace.h: version 2
    ctx_stack[seq] = sid
counts = {name: 0 for name, _, _ in ranges}
body, rsize = records("faults")
for off in range(0, len(body) - rsize + 1, rsize):
    _, addr, seq = struct.unpack_from("<QQQ", body, off)
    sid = ctx_stack.get(seq)
    if not sid or sid not in stacks or stacks[sid] & 1:
        continue
    for name, start, length in ranges:
        if start <= addr < start + length:
            counts[name] += 1
for name in sorted(counts):
    print(name, counts[name])
EOF2
}

surface_case() {  # NAME CHUNK_KIB RECORD_OPTIONS...
	local name=$1 chunk=$2; shift 2
	local args=(32 "$chunk" 2 16 8)
	run_native "$name" "$PLANTED/st_surface" "${args[@]}"
	expect_record "$name" "$@" -L "$local" -M "$max" -- "$PLANTED/st_surface" "${args[@]}"
	grep '^surface ok' "$WORK/$name.out" | sed 's/^/# /'
	grep -v '^range ' "$WORK/$name.native" >"$WORK/$name.native.cmp"
	grep -v '^range ' "$WORK/$name.out" >"$WORK/$name.out.cmp"
	# same line shapes; the counts of short reads and polls depend on timing, the checksum does not
	[ "$(sed 's/.* checksum //' "$WORK/$name.native.cmp")" = "$(sed 's/.* checksum //' "$WORK/$name.out.cmp")" ] ||
		fail "$name: checksum differs from the native run: $(cat "$WORK/$name.out.cmp") vs $(cat "$WORK/$name.native.cmp")"
	echo "ok $name: program checks passed, checksum as natively"
	check_stats "$name" --local $((local * MIB)) --max $((max * MIB)) --procs 1
	summary "$name"
	check_eq "$name stack_signals_failed" "$(stat_of "$name" stack_signals_failed)" 0
	# every context comes from a sample (taken by a handler) or from a signal the thread took
	check_eq "$name contexts_written (= stacks_from_samples + stack_signals_sent)" "$(stat_of "$name" contexts_written)" \
		"$(( $(stat_of "$name" stacks_from_samples) + $(stat_of "$name" stack_signals_sent) ))"
	local counts
	counts=$(in_kernel_faults "$name") || fail "$name: cannot read the trace"
	echo "$counts" | sed 's/^/# in-kernel faults: /'
	local r n
	for r in pollfds fdsets src dst; do
		n=$(echo "$counts" | awk -v r="$r" '$1 == r { print $2 }')
		check_ge "$name faults inside system calls on $r" "${n:-0}" 1
	done
}

surface_case surface 1024
surface_case surface-c1 256 -c 1
