#!/usr/bin/env bash
# rel_real_redis: redis-server (which asks malloc_usable_size of every allocation, and calls
# jemalloc's mallctl and malloc_stats_print) on a free loopback port, --save '' (no RDB written):
#   1. 16,000 known keys with 1 KiB values are loaded through redis-cli --pipe (~17 MB of data);
#   2. redis-benchmark -n 20000 -q runs eight of its tests (-t below: strings, counters, lists,
#      hashes, LRANGE_100, MSET; the whole default set takes minutes on a loaded 2-core machine,
#      its LRANGE_300..600 alone longer than the rest) and must complete: exit 0 and one result
#      line per test;
#   3. a probe key is SET and read back with GET, INFO memory and MEMORY MALLOC-STATS must answer,
#      and every known key is read back with MGET: the output must equal the native server's,
#      byte for byte (a native run of steps 1 and 3 in the same test);
#   4. SHUTDOWN NOSAVE: record exits 0, check_stats holds.
# Runs natively, recorded without -L, recorded with -L = a quarter of the unlimited run's peak
# resident bytes (rounded down to MiB, at least 4): evictions > 0. Servers are always shut down
# (redis-cli shutdown nosave, then kill) by an EXIT trap. FAULTLINE_TEST_LONG=1: 64,000 keys.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_cmd redis-server redis-cli redis-benchmark
if [ "$LONG" = 1 ]; then nkeys=64000; else nkeys=16000; fi
max=1024
bench_tests=set,get,incr,lpush,rpop,hset,lrange_100,mset
nbench=9    # result lines: the tests above plus "LPUSH (needed to benchmark LRANGE)"

SERVER_PID="" SERVER_PORT=""
descendants() {  # PID: every process below PID
	local c
	for c in $(pgrep -P "$1"); do echo "$c"; descendants "$c"; done
}
# stop_server: SHUTDOWN NOSAVE, then SIGKILL for the server (record, and everything it started)
stop_server() {
	[ -n "$SERVER_PID" ] || return 0
	if kill -0 "$SERVER_PID" 2>/dev/null; then
		local tree i
		tree=$(descendants "$SERVER_PID")   # before the server exits and its children are orphaned
		redis-cli -p "$SERVER_PORT" shutdown nosave >/dev/null 2>&1 || true
		for i in $(seq 30); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$SERVER_PID" $tree 2>/dev/null || true
	fi
	wait "$SERVER_PID" 2>/dev/null || true
	SERVER_PID=""
}
trap 'stop_server; cleanup' EXIT

free_port() {
	"$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_server NAME [RECORD_OPTIONS...]: redis-server in the background, natively without options,
# else under `faultline record OPTIONS`; waits until it answers PING.
start_server() {
	local name=$1; shift
	SERVER_PORT=$(free_port)
	local cmd=(redis-server --save '' --appendonly no --port "$SERVER_PORT" --bind 127.0.0.1 --dir "$WORK")
	if [ $# -eq 0 ]; then
		say "native: ${cmd[*]}"
		"${cmd[@]}" >"$WORK/$name.out" 2>"$WORK/$name.err" &
	else
		say "faultline record -q -o $WORK/$name --force $* -- ${cmd[*]}"
		record "$WORK/$name" "$@" -- "${cmd[@]}" >"$WORK/$name.out" 2>"$WORK/$name.err" &
	fi
	SERVER_PID=$!
	local i
	for i in $(seq 300); do
		redis-cli -p "$SERVER_PORT" ping 2>/dev/null | grep -q PONG && { echo "ok $name: server answers on port $SERVER_PORT"; return 0; }
		kill -0 "$SERVER_PID" 2>/dev/null || { show_err "$name"; fail "$name: the server exited before answering"; }
		sleep 0.1
	done
	show_err "$name"
	fail "$name: the server did not answer PING within 30 s"
}

# shutdown_server NAME: SHUTDOWN NOSAVE; the server (or record) must exit 0.
shutdown_server() {
	local name=$1 rc=0
	redis-cli -p "$SERVER_PORT" shutdown nosave >/dev/null 2>&1 || true
	wait "$SERVER_PID" || rc=$?
	SERVER_PID=""
	if [ "$rc" -ne 0 ]; then show_err "$name"; fail "$name: exited $rc after SHUTDOWN NOSAVE, want 0"; fi
	echo "ok $name: exit status 0 after SHUTDOWN NOSAVE"
}

load_keys() {  # NAME
	local name=$1
	redis-cli -p "$SERVER_PORT" --pipe <"$WORK/load.resp" >"$WORK/$name.load" 2>&1 || { cat "$WORK/$name.load" >&2; fail "$name: redis-cli --pipe failed"; }
	grep -q "errors: 0, replies: $nkeys" "$WORK/$name.load" || { cat "$WORK/$name.load" >&2; fail "$name: loading $nkeys keys"; }
	echo "ok $name: $nkeys keys loaded"
}

run_benchmark() {  # NAME
	local name=$1 rc=0
	say "redis-benchmark -n 20000 -q -p $SERVER_PORT -t $bench_tests"
	redis-benchmark -n 20000 -q -p "$SERVER_PORT" -t "$bench_tests" >"$WORK/$name.bench.raw" 2>&1 || rc=$?
	tr '\r' '\n' <"$WORK/$name.bench.raw" | grep 'requests per second' >"$WORK/$name.bench" || true
	[ "$rc" -eq 0 ] || { tail -c 2000 "$WORK/$name.bench.raw" >&2; fail "$name: redis-benchmark exited $rc"; }
	sed 's/^/# /' "$WORK/$name.bench"
	check_eq "$name redis-benchmark result lines" "$(wc -l <"$WORK/$name.bench")" "$nbench"
	kill -0 "$SERVER_PID" 2>/dev/null || fail "$name: the server died during the benchmark"
}

read_back() {  # NAME: probe SET/GET, INFO memory, MEMORY MALLOC-STATS, then every known key -> NAME.readback
	local name=$1 got
	got=$(redis-cli -p "$SERVER_PORT" set rel:probe "probe-$name" 2>&1)
	[ "$got" = OK ] || fail "$name: SET rel:probe answered '$got'"
	got=$(redis-cli -p "$SERVER_PORT" get rel:probe 2>&1)
	[ "$got" = "probe-$name" ] || fail "$name: GET rel:probe answered '$got', want 'probe-$name'"
	echo "ok $name: SET then GET of a probe key round-trips"
	redis-cli -p "$SERVER_PORT" info memory | grep -q '^used_memory:' || fail "$name: INFO memory has no used_memory"
	[ "$(redis-cli -p "$SERVER_PORT" memory malloc-stats | wc -l)" -gt 10 ] || fail "$name: MEMORY MALLOC-STATS answered (almost) nothing"
	echo "ok $name: INFO memory and MEMORY MALLOC-STATS answer"
	redis-cli -p "$SERVER_PORT" <"$WORK/mget.txt" >"$WORK/$name.readback" 2>&1 || fail "$name: redis-cli MGET failed"
	redis-cli -p "$SERVER_PORT" dbsize >>"$WORK/$name.readback" 2>&1
}

"$PY" - "$WORK" "$nkeys" <<'PYEOF'
import sys
work, n = sys.argv[1], int(sys.argv[2])
with open(work + "/load.resp", "wb") as f:
    for i in range(n):
        k = b"rel:known:%d" % i
        v = (b"%08d-" % i) * 113 + b"x" * (1024 - 9 * 113)
        f.write(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(k), k, len(v), v))
with open(work + "/mget.txt", "w") as f:
    for b in range(0, n, 100):
        f.write("MGET " + " ".join("rel:known:%d" % i for i in range(b, min(n, b + 100))) + "\n")
PYEOF

# native reference: load and read back (the benchmark's keys are not read back: without -r they are
# single keys whose values depend on timing, and they would only add to DBSIZE)
start_server redis-native
load_keys redis-native
read_back redis-native
shutdown_server redis-native
[ "$(wc -l <"$WORK/redis-native.readback")" -eq $((nkeys + 1)) ] || fail "native read-back has $(wc -l <"$WORK/redis-native.readback") lines, want $((nkeys + 1))"

traced_run() {  # NAME RECORD_OPTIONS...
	local name=$1; shift
	start_server "$name" "$@"
	load_keys "$name"
	run_benchmark "$name"
	read_back "$name"
	# DBSIZE differs by the benchmark's own keys; everything before it must be identical
	if ! cmp -s <(head -n "$nkeys" "$WORK/redis-native.readback") <(head -n "$nkeys" "$WORK/$name.readback"); then
		cmp <(head -n "$nkeys" "$WORK/redis-native.readback") <(head -n "$nkeys" "$WORK/$name.readback") >&2
		fail "$name: the known keys read back differ from the native server's"
	fi
	echo "ok $name: all $nkeys known keys read back identical to the native server's"
	shutdown_server "$name"
}

traced_run redis-unlimited -M "$max"
check_stats redis-unlimited --max $((max * MIB)) --procs 1
summary redis-unlimited
peak=$(max_stat "$WORK/redis-unlimited" peak_resident_bytes) || fail "no peak_resident_bytes"
limit=$((peak / 4 / MIB))
check_ge "redis: -L in MiB (peak_resident_bytes $peak / 4, rounded down)" "$limit" 4

traced_run redis-limited -L "$limit" -M "$max"
check_stats redis-limited --local $((limit * MIB)) --max $((max * MIB)) --procs 1
summary redis-limited
check_ge "redis-limited evictions" "$(stat_of redis-limited evictions)" 1
