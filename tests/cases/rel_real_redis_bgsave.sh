#!/usr/bin/env bash
# rel_real_redis_bgsave: redis-server under faultline forks for BGSAVE. The server (--save '',
# --dir a private directory, --dbfilename x.rdb) is recorded with -L 4 while it holds 16,000 known
# keys of 1 KiB (~17 MB, most of it evicted when it forks); `redis-cli bgsave` makes it fork a
# child that reads the whole data set and writes x.rdb. The case waits until INFO persistence
# reports the save done and ok, shuts the server down (nosave: record exits 0), checks the
# recording (two processes: the server and its BGSAVE child, check_stats for both, refaults in the
# child), then starts a plain native redis-server on x.rdb and reads every key back with MGET: the
# output must equal that of a native server loaded with the same keys (run in this test too).
# Servers are always shut down by an EXIT trap. FAULTLINE_TEST_LONG=1: 64,000 keys.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_redis.sh"
need_faultline
need_cmd redis-server redis-cli
if [ "$LONG" = 1 ]; then nkeys=64000; else nkeys=16000; fi
local_mib=4 max=1024

read_back() {  # NAME: every known key and DBSIZE -> NAME.readback
	local name=$1
	read_keys "$name"
	[ "$(wc -l <"$WORK/$name.readback")" -eq $((nkeys + 1)) ] || fail "$name: read-back has $(wc -l <"$WORK/$name.readback") lines, want $((nkeys + 1))"
}

make_keys
mkdir -p "$WORK/native-dir" "$WORK/rdb"

# native reference
start_server redis-native "$WORK/native-dir"
load_keys redis-native
read_back redis-native
shutdown_server redis-native

# the traced server forks for BGSAVE
start_server bgsave "$WORK/rdb" -L "$local_mib" -M "$max"
load_keys bgsave
got=$(redis-cli -p "$SERVER_PORT" bgsave 2>&1)
case $got in *"Background saving started"*) ;; *) fail "bgsave: BGSAVE answered '$got'" ;; esac
echo "ok bgsave: BGSAVE started"
bgsave_s=$(scaled 40) # 40 s on a quiet machine, times the load factor tests/run.sh measured
done_ok="" deadline=$((SECONDS + bgsave_s))
while [ "$SECONDS" -lt "$deadline" ]; do
	info=$(redis-cli -p "$SERVER_PORT" info persistence 2>/dev/null | tr -d '\r')
	if grep -q '^rdb_bgsave_in_progress:0' <<<"$info"; then
		grep -q '^rdb_last_bgsave_status:ok' <<<"$info" && grep -q '^rdb_changes_since_last_save:0' <<<"$info" && done_ok=yes
		break
	fi
	kill -0 "$SERVER_PID" 2>/dev/null || { show_err bgsave; fail "bgsave: the server died during BGSAVE"; }
	sleep 0.2
done
if [ -z "$done_ok" ]; then
	grep -E '^(rdb_|current_save)' <<<"$info" >&2
	for pid in $(descendants "$SERVER_PID"); do
		echo "--- process $pid: $(tr '\0' ' ' </proc/$pid/cmdline 2>/dev/null), state $(awk '{print $3}' /proc/$pid/stat 2>/dev/null), threads $(ls /proc/$pid/task 2>/dev/null | wc -l), kernel wait: $(cat /proc/$pid/wchan 2>/dev/null)" >&2
	done
	echo "--- process directories in the recording: $(proc_dirs "$WORK/bgsave" | tr '\n' ' ')" >&2
	show_err bgsave
	fail "bgsave: BGSAVE did not finish with status ok within $bgsave_s s (the BGSAVE child is stuck; see the process states above)"
fi
echo "ok bgsave: BGSAVE finished, status ok ($(wc -c <"$WORK/rdb/x.rdb") bytes)"
shutdown_server bgsave
summary bgsave
check_stats bgsave --local $((local_mib * MIB)) --max $((max * MIB)) --procs 2
check_ge "bgsave evictions (server and child)" "$(stat_of bgsave evictions)" 1
# the child is the directory that is not the server's (record's child)
child_refaults=$("$PY" - "$WORK/bgsave" <<'PYEOF'
import glob, json, os, sys
stats = [json.load(open(f)) for f in glob.glob(os.path.join(sys.argv[1], "*", "stats.json"))]
stats.sort(key=lambda s: s["pid"])   # the server started first; its child has the higher pid
print(stats[-1]["faults_refault"] if len(stats) == 2 else "none")
PYEOF
)
check_ge "bgsave: refaults in the BGSAVE child (the data evicted at the fork)" "$child_refaults" 1

# a plain native server loads the dump
start_server redis-reload "$WORK/rdb"
read_back redis-reload
shutdown_server redis-reload
if ! cmp "$WORK/redis-native.readback" "$WORK/redis-reload.readback" >&2; then
	fail "redis-reload: the keys loaded from the RDB written under faultline differ from the native server's"
fi
echo "ok redis-reload: the RDB written by the traced server's BGSAVE child loads back identical ($nkeys keys)"
