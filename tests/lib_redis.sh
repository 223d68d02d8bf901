# tests/lib_redis.sh: a redis-server for the rel_real_redis* cases, sourced after lib.sh. It starts
# the server natively or under `faultline record`, loads and reads back a set of known keys, and
# always shuts the server down (SHUTDOWN NOSAVE, then SIGKILL for it and everything it started) in
# an EXIT trap. Callers set nkeys (how many known keys) before make_keys.

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

# make_keys: $WORK/load.resp (SET of nkeys known keys, 1 KiB values, for redis-cli --pipe) and
# $WORK/mget.txt (MGET of all of them, 100 a line)
make_keys() {
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
}

load_keys() {  # NAME
	local name=$1
	redis-cli -p "$SERVER_PORT" --pipe <"$WORK/load.resp" >"$WORK/$name.load" 2>&1 || { cat "$WORK/$name.load" >&2; fail "$name: redis-cli --pipe failed"; }
	grep -q "errors: 0, replies: $nkeys" "$WORK/$name.load" || { cat "$WORK/$name.load" >&2; fail "$name: loading $nkeys keys"; }
	echo "ok $name: $nkeys keys loaded"
}

read_keys() {  # NAME: every known key (MGET) and DBSIZE -> NAME.readback
	local name=$1
	redis-cli -p "$SERVER_PORT" <"$WORK/mget.txt" >"$WORK/$name.readback" 2>&1 || fail "$name: redis-cli MGET failed"
	redis-cli -p "$SERVER_PORT" dbsize >>"$WORK/$name.readback" 2>&1
}
