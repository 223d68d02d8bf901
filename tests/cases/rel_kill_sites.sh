#!/usr/bin/env bash
# rel_kill_sites: a program killed with SIGKILL keeps its per-site aggregates (the sites file).
# The runtime rewrites the file in place every ~100 ms (handler 0, with the threads' streams:
# live_objects.c), adding the counts the threads have not published yet, so after a SIGKILL the
# file holds a consistent snapshot of the last ~100 ms (issue 13: it was written at exit only,
# and absent after SIGKILL). tests/planted/alloc_heavy's three sites are known by construction:
#   make_array  1 object of 8 MiB, its 2,048 pages written (faults >= 2,048, objects_faulted 1);
#   churn_one   the most allocations, 16..136 bytes each (76 on average), one live at a time;
#   batch_fill  100 objects of 64 bytes per 1,000 churn objects.
# Checked on the file a killed run leaves (read here with Python, by the header's sizes) and
# through `faultline report --by alloc`, which reads it.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted alloc_heavy

"$FAULTLINE" record -q -o "$WORK/kill" --force -L 16 -M 256 -- "$PLANTED/alloc_heavy" 4000000000 \
	>"$WORK/kill.out" 2>"$WORK/kill.err" &
rec=$!
prog=""
limit=$(( $(scaled 60) * 10 ))
for i in $(seq "$limit"); do
	sleep 0.1
	[ -n "$prog" ] || prog=$(pgrep -P "$rec" -f "$PLANTED/alloc_heavy" | head -n 1)
	f=$(ls "$WORK"/kill/*/sites 2>/dev/null | head -n 1)
	size=$(stat -c %s "$f" 2>/dev/null || echo 0)
	# three sites on disk (64-byte header, 72-byte records) and the churn well under way
	[ -n "$prog" ] && [ "$size" -ge $((64 + 3 * 72)) ] && [ "$i" -ge 20 ] && break
done
[ -n "$prog" ] || fail "the program never started"
[ "$size" -ge $((64 + 3 * 72)) ] || fail "no sites on disk while the program runs (sites file: $size bytes)"
kill -KILL "$prog"
rc=0; wait "$rec" || rc=$?
check_eq "record's exit status after SIGKILL of the program" "$rc" 137

"$PY" - "$f" <<'PYEOF' || fail "the sites file of the killed run is wrong"
import struct, sys
data = open(sys.argv[1], "rb").read()
hsize, rsize = struct.unpack_from("<II", data, 16)
if rsize != 72 or (len(data) - hsize) % rsize:
    sys.exit("header %d, record %d bytes, file %d bytes" % (hsize, rsize, len(data)))
sites = []
for off in range(hsize, len(data), rsize):
    stack, flags, key, allocs, frees, nbytes, peak, live, faulted, faults = struct.unpack_from("<IIQQQQQQQQ", data, off)
    sites.append(dict(stack=stack, key=key, allocs=allocs, frees=frees, bytes=nbytes, peak=peak, live=live,
                      faulted=faulted, faults=faults))
errors = []
if len({s["key"] for s in sites}) != len(sites):
    errors.append("a site appears twice")
array = [s for s in sites if s["allocs"] == 1 and s["bytes"] == 8 << 20]
churn = max(sites, key=lambda s: s["allocs"])
batch = [s for s in sites if s is not churn and s["allocs"] >= 100 and s["bytes"] == 64 * s["allocs"]]
if len(array) != 1 or array[0]["faults"] < 2048 or array[0]["faulted"] != 1:
    errors.append("make_array's site: %r" % array)
if churn["allocs"] < 10000 or not 16 * churn["allocs"] <= churn["bytes"] <= 136 * churn["allocs"]:
    errors.append("churn_one's site: %r" % churn)
elif abs(churn["bytes"] / churn["allocs"] - 76) > 2:
    errors.append("churn_one: %.2f bytes per object, want 76" % (churn["bytes"] / churn["allocs"]))
if churn["allocs"] - churn["frees"] > 1 or churn["peak"] < 16:
    errors.append("churn_one: %d allocs, %d frees, peak %d" % (churn["allocs"], churn["frees"], churn["peak"]))
if len(batch) != 1:
    errors.append("batch_fill's site not found: %r" % sites)
else:
    want = churn["allocs"] / 10
    if abs(batch[0]["allocs"] - want) > 0.05 * want + 200:
        errors.append("batch_fill %d allocs, churn_one %d: want about a tenth" % (batch[0]["allocs"], churn["allocs"]))
for e in errors:
    print("FAIL: " + e, file=sys.stderr)
if errors:
    sys.exit(1)
print("ok sites after SIGKILL: %d sites; churn_one %d objects (%.1f bytes each), batch_fill %d, make_array 1 with %d faults"
      % (len(sites), churn["allocs"], churn["bytes"] / churn["allocs"], batch[0]["allocs"], array[0]["faults"]))
PYEOF
"$FAULTLINE" report "$WORK/kill" --by alloc --format csv >"$WORK/report.csv" 2>"$WORK/report.err" ||
	fail "report --by alloc of the killed run: $(cat "$WORK/report.err")"
grep -q 'make_array' "$WORK/report.csv" ||
	fail "report --by alloc has no make_array row"
echo "ok report --by alloc reads the killed run's sites"
