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
need_faultline
need_cmd redis-server redis-cli
if [ "$LONG" = 1 ]; then nkeys=64000; else nkeys=16000; fi
local_mib=4 max=1024

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

# start_server NAME DIR [RECORD_OPTIONS...]: redis-server with --dir DIR --dbfilename x.rdb in the
# background (natively without options, else under `faultline record OPTIONS`); waits for PING.
start_server() {
	local name=$1 dir=$2; shift 2
	SERVER_PORT=$(free_port)
	local cmd=(redis-server --save '' --appendonly no --port "$SERVER_PORT" --bind 127.0.0.1 --dir "$dir" --dbfilename x.rdb)
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

shutdown_server() {  # NAME: SHUTDOWN NOSAVE; the server (or record) must exit 0
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

read_back() {  # NAME: every known key and DBSIZE -> NAME.readback
	local name=$1
	redis-cli -p "$SERVER_PORT" <"$WORK/mget.txt" >"$WORK/$name.readback" 2>&1 || fail "$name: redis-cli MGET failed"
	redis-cli -p "$SERVER_PORT" dbsize >>"$WORK/$name.readback" 2>&1
	[ "$(wc -l <"$WORK/$name.readback")" -eq $((nkeys + 1)) ] || fail "$name: read-back has $(wc -l <"$WORK/$name.readback") lines, want $((nkeys + 1))"
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
done_ok="" deadline=$((SECONDS + 40))
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
	fail "bgsave: BGSAVE did not finish with status ok within 40 s (the BGSAVE child is stuck; see the process states above)"
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
