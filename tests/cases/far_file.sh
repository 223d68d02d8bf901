#!/usr/bin/env bash
# far_file: the file far store (record --far file:DIR), io_uring + O_DIRECT where the file system
# takes it. The planted programs of rt_fill, rt_threads, rt_fork and rt_rw_syscalls run with their
# pages evicted to a file:
#   - exit 0 and output identical to the native run (every program checks its data itself);
#   - check_stats invariants (peak_resident_bytes <= -L, records_dropped = 0, one trace per process);
#   - fill: fault and eviction counts as in the same run with the in-memory store (within 0.5 %), dirty pages
#     written in batches (far_writes < far_write_pages), every refault read from the file;
#   - fork_verify: the child sees the parent's evicted data as at the fork, neither sees the other's
#     later writes (the program checks; 3 processes, each with its own generation of far files);
#   - nothing is left in the store directory, also after SIGKILL of the traced program;
#   - --keep-far PATH keeps the files as PATH.<pid>.<n> (and without --far file: is a usage error);
#     FAULTLINE_FAR_IO=psync (pread/pwrite) works.
# Sizes (O_DIRECT refaults cost ~0.1-0.2 ms on this VM's disk): fill 24 MiB -L 6, threads 4 x 8 MiB
# -L 4, fork_verify 16 MiB -L 4, rw_syscalls 12 MiB -L 4; FAULTLINE_TEST_LONG=1 doubles them.
. "$(dirname "$0")/../lib.sh"
need_faultline

# check_near WHAT GOT WANT: GOT within 0.5 % (at least 16) of WANT. Counts of two runs of the same
# single-threaded program differ by a few faults at most (allocator metadata touched at other times).
check_near() {
	local what=$1 got=$2 want=$3 slack
	slack=$(( want / 200 > 16 ? want / 200 : 16 ))
	check_ge "$what" "$got" $((want - slack))
	check_le "$what" "$got" $((want + slack))
}
need_planted fill threads fork_verify rw_syscalls

if [ "$LONG" = 1 ]; then k=2; else k=1; fi
max=1024
store=$WORK/store
mkdir -p "$store"
far=(--far "file:$store")

store_empty() {
	local left
	left=$(ls -A "$store")
	[ -z "$left" ] || fail "$1: files left in the store directory: $left"
	echo "ok $1: store directory empty"
}

# fill: same counts as with the in-memory store
size=$((24 * k)) local=$((6 * k))
run_native fill "$PLANTED/fill" "$size"
expect_record fill-mem -L "$local" -M "$max" -- "$PLANTED/fill" "$size"
expect_record fill-file -L "$local" -M "$max" "${far[@]}" -- "$PLANTED/fill" "$size"
same_output fill-file fill
summary fill-file
check_stats fill-file --local $((local * MIB)) --max $((max * MIB)) --procs 1
for key in faults_total faults_first_touch faults_refault evictions writebacks; do
	check_near "fill-file $key (as with mem)" "$(stat_of fill-file $key)" "$(stat_of fill-mem $key)"
done
check_ge "fill-file far_read_pages" "$(stat_of fill-file far_read_pages)" "$(stat_of fill-file faults_refault)"
check_eq "fill-file far_write_pages" "$(stat_of fill-file far_write_pages)" "$(stat_of fill-file writebacks)"
writes=$(stat_of fill-file far_writes)
check_ge "fill-file far_writes" "$writes" 1
check_le "fill-file far_writes (batched: at most a quarter of the pages)" "$((writes * 4))" "$(stat_of fill-file far_write_pages)"
grep -q '"far_spec": "file:' "$WORK"/fill-file/*/meta.json || fail "meta.json lacks far_spec file:"
echo "ok fill-file: meta.json names the file store ($(grep -h far_detail "$WORK"/fill-file/*/meta.json | tr -s ' '))"
store_empty fill-file

# pread/pwrite instead of io_uring
FAULTLINE_FAR_IO=psync expect_record fill-psync -L "$local" -M "$max" "${far[@]}" -- "$PLANTED/fill" "$size"
same_output fill-psync fill
check_near "fill-psync faults_refault (as with mem)" "$(stat_of fill-psync faults_refault)" "$(stat_of fill-mem faults_refault)"
grep -q '"far_detail": ".*pread/pwrite' "$WORK"/fill-psync/*/meta.json || fail "fill-psync: meta.json does not say pread/pwrite"
store_empty fill-psync

# threads
size=$((8 * k)) local=$((4 * k))
run_native threads "$PLANTED/threads" 4 "$size"
expect_record threads-file -L "$local" -M "$max" "${far[@]}" -- "$PLANTED/threads" 4 "$size"
same_output threads-file threads
summary threads-file
check_stats threads-file --local $((local * MIB)) --max $((max * MIB)) --procs 1
check_first_touch threads-file $((4 * size * MIB / PAGE))
check_ge "threads-file faults_refault" "$(stat_of threads-file faults_refault)" 1
store_empty threads-file

# fork: copy-on-fork of far data
size=$((16 * k)) local=$((4 * k))
run_native fork "$PLANTED/fork_verify" "$size"
expect_record fork-file -L "$local" -M "$max" "${far[@]}" -- "$PLANTED/fork_verify" "$size"
same_output fork-file fork
summary fork-file
check_stats fork-file --local $((local * MIB)) --max $((max * MIB)) --procs 3
check_ge "fork-file faults_refault (all processes)" "$(stat_of fork-file faults_refault)" 1
check_ge "fork-file far_generations (all processes)" "$(stat_of fork-file far_generations)" 4
store_empty fork-file

# system calls into evicted buffers
size=$((12 * k)) local=$((4 * k))
run_native rw "$PLANTED/rw_syscalls" "$size" "$WORK"
expect_record rw-file -L "$local" -M "$max" "${far[@]}" -- "$PLANTED/rw_syscalls" "$size" "$WORK"
same_output rw-file rw
check_stats rw-file --local $((local * MIB)) --max $((max * MIB)) --procs 1
check_ge "rw-file faults_refault" "$(stat_of rw-file faults_refault)" 1
store_empty rw-file

# SIGKILL of the traced program: nothing is left behind
say "SIGKILL while recording fill 1024 with --far file:"
"$FAULTLINE" record -q -o "$WORK/killed" --force -L 8 -M 2048 "${far[@]}" -- "$PLANTED/fill" 1024 \
	>"$WORK/killed.out" 2>"$WORK/killed.err" &
rec=$!
pid=
for _ in $(seq 200); do
	pid=$(proc_dirs "$WORK/killed" 2>/dev/null | head -n 1)
	[ -n "$pid" ] && break
	sleep 0.05
done
[ -n "$pid" ] || fail "killed: the traced process never started"
sleep 1
kill -9 "$pid" 2>/dev/null || fail "killed: process $pid already gone"
rc=0; wait "$rec" || rc=$?
check_eq "killed: record's exit status (128 + SIGKILL)" "$rc" 137
store_empty killed

# --keep-far: the files stay, named PATH.<pid>.<n>
size=8 local=2
expect_record keep -L "$local" -M "$max" "${far[@]}" --keep-far "$WORK/kept" -- "$PLANTED/fill" "$size"
pid=$(proc_dirs "$WORK/keep" | head -n 1)
[ -f "$WORK/kept.$pid.0" ] || fail "keep: no $WORK/kept.$pid.0 ($(ls "$WORK"))"
used=$(du -k "$WORK/kept.$pid.0" | cut -f1)
check_ge "keep: KiB of data in kept.$pid.0" "$used" $(( (size - local) * 1024 / 2 ))
store_empty keep

# --keep-far without the file store: a usage error, not a run that keeps nothing
rc=0; "$FAULTLINE" record -q -o "$WORK/keepmem" --keep-far "$WORK/kept-mem" -- true 2>"$WORK/keepmem.err" || rc=$?
check_eq "keep-far with the mem store: exit status" "$rc" 2
grep -q -- "--keep-far .*needs --far file:" "$WORK/keepmem.err" || fail "keep-far with the mem store: $(cat "$WORK/keepmem.err")"
echo "ok --keep-far without --far file: refused"
