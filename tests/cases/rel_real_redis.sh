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
. "$(dirname "$0")/../lib_redis.sh"
need_faultline
need_cmd redis-server redis-cli redis-benchmark
if [ "$LONG" = 1 ]; then nkeys=64000; else nkeys=16000; fi
max=1024
bench_tests=set,get,incr,lpush,rpop,hset,lrange_100,mset
nbench=9    # result lines: the tests above plus "LPUSH (needed to benchmark LRANGE)"

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
	read_keys "$name"
}

make_keys

# native reference: load and read back (the benchmark's keys are not read back: without -r they are
# single keys whose values depend on timing, and they would only add to DBSIZE)
start_server redis-native "$WORK"
load_keys redis-native
read_back redis-native
shutdown_server redis-native
[ "$(wc -l <"$WORK/redis-native.readback")" -eq $((nkeys + 1)) ] || fail "native read-back has $(wc -l <"$WORK/redis-native.readback") lines, want $((nkeys + 1))"

traced_run() {  # NAME RECORD_OPTIONS...
	local name=$1; shift
	start_server "$name" "$WORK" "$@"
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
