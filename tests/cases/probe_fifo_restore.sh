#!/usr/bin/env bash
# probe_fifo_restore: under --policy fifo, a page the access prober maps back (its probe window
# ended untouched: runtime/probe.c, restore) takes a new place in fifo's line. Before, its new
# epoch made its old entry stale and nothing queued it again, so it could never be evicted: python3
# touching 0.6 MB, sleeping 2 s while --sample-accesses probed (and restored) its resident pages,
# then allocating 8 MB at -L 1M stopped with "eviction is stalled: no page of local memory can be
# evicted" in 1 run of 1 (now 4 s).
#   - the run exits 0 (within a time limit), with the native output;
#   - the prober restored pages, and fifo evicted pages after them (evictions > 0), and no
#     "eviction is stalled" line.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_cmd python3
python=$(command -v python3)
[ -x /usr/bin/python3 ] && python=/usr/bin/python3   # not a wrapper script (pyenv's shims exec through bash)

cat >"$WORK/restore.py" <<'EOF'
import time
a = bytearray(600_000)
time.sleep(2)
b = bytearray(8_000_000)
print(len(a) + len(b), sum(b[::4096]))
EOF
run_native restore "$python" "$WORK/restore.py"

name=fifo-probed
say "timeout $(scaled 90) faultline record -q -o $WORK/$name --force --policy fifo -L 1M --sample-accesses --sample-accesses-rate 20000 -- python3 restore.py"
rc=0
timeout "$(scaled 90)" "$FAULTLINE" record -q -o "$WORK/$name" --force --policy fifo -L 1M --sample-accesses \
	--sample-accesses-rate 20000 -- "$python" "$WORK/restore.py" >"$WORK/$name.out" 2>"$WORK/$name.err" </dev/null || rc=$?
[ "$rc" -eq 124 ] && fail "$name: still running after $(scaled 90) s: $(tail -3 "$WORK/$name.err")"
check_eq "$name exit status" "$rc" 0
same_output "$name" restore
if grep -q "eviction is stalled" "$WORK/$name.err"; then fail "$name: $(grep "eviction is stalled" "$WORK/$name.err")"; fi
check_ge "$name: pages the prober mapped back (probe_restored)" "$(stat_of "$name" probe_restored)" 100
check_ge "$name: evictions" "$(stat_of "$name" evictions)" 1
echo "PASS"
