#!/usr/bin/env bash
# far_rss: with --far file:, the traced process's resident memory is bounded by -L plus the runtime's
# own bookkeeping, even while it streams far more data than -L. fill N MiB (write, then read twice)
# under -L 64 with --far file:DIR; VmRSS and VmHWM of the traced process are sampled from
# /proc/PID/status while it runs. The bound (runtime/far_store.c documents the parts):
#   -L + 20 MiB (code of the program, libc, jemalloc, libunwind, liburing and the runtime, trace
#   buffers, rings, io_uring, thread stacks) + 2 MiB per GiB of -M (state, epoch and generation
#   bytes: 6 B per page = 1.5 MiB per GiB).
# The same run with the in-memory store must exceed it (the mirror keeps every page): the check
# measures something. The file run reads ahead 32 pages (staged pages count in -L too, and the run is
# shorter: O_DIRECT refaults cost ~0.2 ms here). Default N = 128 MiB with -M 1 GiB; FAULTLINE_TEST_LONG=1: 1 GiB with -M 2 GiB.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted fill

if [ "$LONG" = 1 ]; then size=1024 max=2048; else size=128 max=1024; fi
local=64
bound_kib=$(( (local + 20 + 2 * max / 1024) * 1024 ))
mkdir -p "$WORK/store"

# sampled NAME FAR...: records fill with the given --far, prints the peak VmRSS / VmHWM in KiB
sampled() {
	local name=$1; shift
	say "faultline record -L $local -M $max $* -- fill $size, sampling VmRSS"
	"$FAULTLINE" record -q -o "$WORK/$name" --force -L "$local" -M "$max" "$@" -- "$PLANTED/fill" "$size" \
		>"$WORK/$name.out" 2>"$WORK/$name.err" &
	local rec=$! pid= peak=0 hwm=0 samples=0 r h
	for _ in $(seq 400); do
		pid=$(proc_dirs "$WORK/$name" 2>/dev/null | head -n 1)
		[ -n "$pid" ] && break
		sleep 0.02
	done
	[ -n "$pid" ] || fail "$name: the traced process never started"
	while [ -r "/proc/$pid/status" ]; do
		r=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null)
		h=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null)
		[ -n "$r" ] && [ "$r" -gt "$peak" ] && peak=$r
		[ -n "$h" ] && [ "$h" -gt "$hwm" ] && hwm=$h
		samples=$((samples + 1))
		sleep 0.05
	done
	wait "$rec" || { show_err "$name"; fail "$name: record failed"; }
	echo "# $name: $samples samples, peak VmRSS $peak KiB, VmHWM $hwm KiB"
	RSS_PEAK=$peak RSS_HWM=$hwm
}

# long mode streams 1 GiB through buffered I/O (FAULTLINE_FAR_IO=uring-buffered: the page cache is
# not in VmRSS) to fit the time limit; the default size uses O_DIRECT
if [ "$LONG" = 1 ]; then export FAULTLINE_FAR_IO=uring-buffered; fi
sampled rss-file --far "file:$WORK/store" --prefetch 32
unset FAULTLINE_FAR_IO
check_stats rss-file --local $((local * MIB)) --max $((max * MIB)) --procs 1
check_le "rss-file: peak VmRSS in KiB (-L $local MiB + 20 MiB + 2 MiB per GiB of -M)" "$RSS_PEAK" "$bound_kib"
check_le "rss-file: VmHWM in KiB (same bound)" "$RSS_HWM" "$bound_kib"
check_ge "rss-file: peak VmRSS in KiB (at least -L: the stream filled local memory)" "$RSS_PEAK" $((local * 1024))

[ "$LONG" = 1 ] && exit 0 # the in-memory comparison once is enough (and 1 GiB of it is slow)
sampled rss-mem --far mem
check_ge "rss-mem: VmHWM in KiB (in-memory store: above the bound)" "$RSS_HWM" "$bound_kib"
