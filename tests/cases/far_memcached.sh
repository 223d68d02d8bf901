#!/usr/bin/env bash
# far_memcached: the memcached far store (record --far memcached:HOST:PORT[,...]). The case starts its
# own memcached servers (Debian's package) on free loopback ports, with -M (errors instead of
# evicting items: a lost page must never go unnoticed) and enough -m, and stops them at exit.
#   - fill, threads, fork_verify and rw_syscalls: exit 0, output identical to the native run,
#     check_stats invariants; fill's counts as with the in-memory store (within 0.5 %);
#   - two servers: pages spread over both (consistent hashing), data intact;
#   - a server killed mid-run: the program stops with status 70, one line names the server, the
#     trace so far is readable by `faultline dump`, and nothing hangs (the case has a time limit);
#   - record refuses an unreachable server before starting anything;
#   - after each run record deletes the run's items (key prefixes in each process's far_keys):
#     the servers hold none, also after a fork (parent and children) and with two servers; but not
#     while a traced process outlives the command (a shell's background job): a warning, and the
#     process finishes with its data intact.
# Sizes (a round trip to memcached costs ~50-100 us here: two wake-ups across vCPUs): fill 16 MiB
# -L 4, threads 4 x 4 MiB -L 2, fork_verify 12 MiB -L 3, rw_syscalls 6 MiB -L 2; long mode: x 4.
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
need_cmd memcached

if [ "$LONG" = 1 ]; then k=4; else k=1; fi
max=1024
servers=()

stop_servers() {
	local p
	for p in "${servers[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${servers[@]}"; do wait "$p" 2>/dev/null; done
	cleanup
}
trap stop_servers EXIT

free_port() {
	"$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_server VAR: a memcached on a free port; VAR gets the port, servers[] the pid.
start_server() {
	local port tries
	for tries in 1 2 3; do
		port=$(free_port)
		memcached -l 127.0.0.1 -p "$port" -U 0 -M -m 1024 -t 2 -u "$(id -un)" >"$WORK/memcached-$port.log" 2>&1 &
		local pid=$!
		for _ in $(seq 50); do
			if "$PY" -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2)' "$port" 2>/dev/null; then
				servers+=("$pid")
				printf -v "$1" '%s' "$port"
				say "memcached pid $pid on 127.0.0.1:$port"
				return 0
			fi
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill "$pid" 2>/dev/null
	done
	fail "cannot start memcached (see $WORK/memcached-$port.log)"
}

# items PORT: curr_items of a server
items() {
	"$PY" - "$1" <<'PYEOF'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), 2)
s.sendall(b"stats\r\n")
data = b""
while not data.endswith(b"END\r\n"):
    data += s.recv(65536)
for line in data.decode().splitlines():
    if line.startswith("STAT curr_items "):
        print(line.split()[2])
PYEOF
}

start_server port1
far=(--far "memcached:127.0.0.1:$port1")

size=$((16 * k)) local=$((4 * k))
run_native fill "$PLANTED/fill" "$size"
expect_record fill-mem -L "$local" -M "$max" -- "$PLANTED/fill" "$size"
expect_record fill-mc -L "$local" -M "$max" "${far[@]}" -- "$PLANTED/fill" "$size"
same_output fill-mc fill
summary fill-mc
check_stats fill-mc --local $((local * MIB)) --max $((max * MIB)) --procs 1
for key in faults_total faults_first_touch faults_refault evictions writebacks; do
	check_near "fill-mc $key (as with mem)" "$(stat_of fill-mc $key)" "$(stat_of fill-mem $key)"
done
check_eq "fill-mc far_write_pages" "$(stat_of fill-mc far_write_pages)" "$(stat_of fill-mc writebacks)"
# after the run record deletes the run's items (prefixes in far_keys): the server is empty again
check_eq "fill-mc: items left on the server after the run" "$(items "$port1")" 0
check_eq "fill-mc: key prefixes in far_keys" "$(cat "$WORK"/fill-mc/*/far_keys | wc -l)" 1

size=$((4 * k)) local=$((2 * k))
run_native threads "$PLANTED/threads" 4 "$size"
expect_record threads-mc -L "$local" -M "$max" "${far[@]}" -- "$PLANTED/threads" 4 "$size"
same_output threads-mc threads
check_stats threads-mc --local $((local * MIB)) --max $((max * MIB)) --procs 1
check_ge "threads-mc faults_refault" "$(stat_of threads-mc faults_refault)" 1

size=$((12 * k)) local=$((3 * k))
run_native fork "$PLANTED/fork_verify" "$size"
expect_record fork-mc -L "$local" -M "$max" "${far[@]}" -- "$PLANTED/fork_verify" "$size"
same_output fork-mc fork
summary fork-mc
check_stats fork-mc --local $((local * MIB)) --max $((max * MIB)) --procs 3
check_ge "fork-mc faults_refault (all processes)" "$(stat_of fork-mc faults_refault)" 1
check_eq "fork-mc: items left on the server after the run (parent and children)" "$(items "$port1")" 0

size=$((6 * k)) local=$((2 * k))
run_native rw "$PLANTED/rw_syscalls" "$size" "$WORK"
expect_record rw-mc -L "$local" -M "$max" "${far[@]}" -- "$PLANTED/rw_syscalls" "$size" "$WORK"
same_output rw-mc rw
check_stats rw-mc --local $((local * MIB)) --max $((max * MIB)) --procs 1

# two servers: consistent hashing spreads the pages (record says how many items it deleted from
# each server after the run: each page is written once, so as many as pages were written)
start_server port2
size=$((16 * k)) local=$((4 * k))
say "faultline record -o $WORK/fill-mc2 --force -L $local -M $max --far memcached:127.0.0.1:$port1,localhost:$port2 -- fill $size"
"$FAULTLINE" record -o "$WORK/fill-mc2" --force -L "$local" -M "$max" --far "memcached:127.0.0.1:$port1,localhost:$port2" \
	-- "$PLANTED/fill" "$size" >"$WORK/fill-mc2.out" 2>"$WORK/fill-mc2.err" || { show_err fill-mc2; fail "fill-mc2: record failed"; }
same_output fill-mc2 fill
per_server=$(sed -n "s/.*deleted the run's [0-9,]* items from memcached (per server, in --far order: \([0-9]*\), \([0-9]*\)).*/\1 \2/p" "$WORK/fill-mc2.err")
[ -n "$per_server" ] || { show_err fill-mc2; fail "fill-mc2: no line saying how many items were deleted from each server"; }
read -r new1 new2 <<<"$per_server"
check_eq "fill-mc2: items left on the two servers after the run" $(( $(items "$port1") + $(items "$port2") )) 0
written=$(stat_of fill-mc2 far_write_pages)
check_eq "fill-mc2: items stored (and deleted) on the two servers" $((new1 + new2)) "$written"
check_ge "fill-mc2: items on server 1, x 4 (at least a quarter of them)" $((new1 * 4)) "$written"
check_ge "fill-mc2: items on server 2, x 4 (at least a quarter of them)" $((new2 * 4)) "$written"

# a traced process that outlives the command (a shell's background job) still reads its items:
# they are not deleted, a warning names it, and it finishes with its data intact
run_native hd "$PLANTED/half_dirty" 8 1500
"$FAULTLINE" record -o "$WORK/bg" --force -L 2 -M "$max" "${far[@]}" -- \
	sh -c "\"$PLANTED/half_dirty\" 8 1500 >\"$WORK/bg.child.out\" & sleep 0.5" >"$WORK/bg.out" 2>"$WORK/bg.err" ||
	{ show_err bg; fail "bg: record failed"; }
grep -q "items could not all be deleted from memcached: traced process [0-9]* still runs" "$WORK/bg.err" ||
	{ show_err bg; fail "bg: no warning that a traced process still runs"; }
check_ge "bg: items left on the server while the background process runs" "$(items "$port1")" 1
for _ in $(seq 300); do [ -s "$WORK/bg.child.out" ] && break; sleep 0.1; done   # it prints when done
# (its line ends with its CPU time, which differs from run to run)
[ "$(sed 's/ thread_cpu_ns.*//' "$WORK/bg.child.out")" = "$(sed 's/ thread_cpu_ns.*//' "$WORK/hd.native")" ] ||
	fail "bg: the background process's output '$(cat "$WORK/bg.child.out")' differs from its native run's '$(cat "$WORK/hd.native")'"
echo "ok bg: a process outliving the command keeps its items and finishes intact"

# record refuses a server that does not answer
dead=$(free_port)
run_record refused -L 4 --far "memcached:127.0.0.1:$dead" -- "$PLANTED/fill" 8
check_eq "refused: record's exit status" "$RC" 2
grep -q "127.0.0.1:$dead does not answer" "$WORK/refused.err" || { show_err refused; fail "refused: no message naming the server"; }
echo "ok refused: $(head -n 1 "$WORK/refused.err")"

# a server killed mid-run: status 70, the server named, the trace readable, no hang
start_server port3
say "killing memcached on port $port3 while fill 512 runs"
start=$(date +%s)
"$FAULTLINE" record -q -o "$WORK/lost" --force -L 8 -M 2048 --far "memcached:127.0.0.1:$port3" -- "$PLANTED/fill" 512 \
	>"$WORK/lost.out" 2>"$WORK/lost.err" &
rec=$!
for _ in $(seq 100); do
	[ "$(items "$port3")" -gt 2000 ] 2>/dev/null && break
	sleep 0.1
done
kill -9 "${servers[-1]}"
rc=0
lost_limit=$(scaled 60)
for _ in $(seq $((lost_limit * 10))); do kill -0 "$rec" 2>/dev/null || break; sleep 0.1; done
kill -0 "$rec" 2>/dev/null && { kill -9 "$rec"; fail "lost: record still running $lost_limit s after the server died"; }
wait "$rec" || rc=$?
check_eq "lost: exit status" "$rc" 70
grep -q "server 127.0.0.1:$port3" "$WORK/lost.err" || { show_err lost; fail "lost: no message naming the server"; }
echo "ok lost: $(grep -m1 "server 127.0.0.1:$port3" "$WORK/lost.err")"
check_le "lost: seconds until the program stopped" $(($(date +%s) - start)) "$lost_limit"
"$FAULTLINE" dump "$WORK/lost" >"$WORK/lost.dump" 2>"$WORK/lost.dump.err" || { cat "$WORK/lost.dump.err" >&2; fail "lost: faultline dump failed"; }
check_ge "lost: fault lines in the dump" "$(grep -c -E '^[0-9.]+ [0-9]+ [0-9]+ 0x' "$WORK/lost.dump")" 1
