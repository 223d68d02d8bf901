#!/usr/bin/env bash
# far_prefetch: read-ahead (record --prefetch N) and emulated far latency (--far-latency USEC,
# --far-bandwidth MBPS), with the in-memory and the file store.
#   - fill under -L with --prefetch 16: fault counts (total, first-touch, refault) as in the
#     same run without read-ahead (within 0.5 %); most refaults are prefetch hits (>= half); every hit is flagged
#     FL_FAULT_PREFETCH_HIT in the faults file and their number equals stats.json prefetch_hits;
#     peak_resident_bytes <= -L (staged pages count in -L);
#   - --far-latency: meta.json records it; stats.json far_delay_ns >= far_reads x latency; the summary
#     names it; read-ahead then makes the run faster (one latency per window instead of per page),
#     reported, not asserted (timing);
#   - --far-bandwidth: recorded in meta.json, delay >= bytes / bandwidth.
# Sizes: fill 32 MiB with -L 8 (16,000 refaults); long mode 128 MiB with -L 32.
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
need_planted fill

if [ "$LONG" = 1 ]; then size=128 local=32; else size=32 local=8; fi
max=1024
mkdir -p "$WORK/store"
run_native fill "$PLANTED/fill" "$size"

# count_flag NAME FLAG: fault records of recording NAME with FLAG set. Reads the version-2 layout
# of inc/faultline/trace.h (kind at byte 32, flags at 33; version 1 had them at 28 and 29) and
# refuses another version: a count taken at a stale offset reads other bytes and says 0, which the
# check of the run without read-ahead would take for success. A flagged record must be a refault
# (a hit is a far page read ahead into the mirror), which catches a wrong offset too.
count_flag() {
	"$PY" - "$WORK/$1" "$2" <<'PYEOF'
import glob, os, struct, sys
from trace_frames import read   # format 3's frames decoded into version 2's fixed records
KIND, FLAGS, REFAULT = 32, 33, 2
n = 0
for f in glob.glob(os.path.join(sys.argv[1], "*", "faults")):
    data = read(f)
    version, _, hsize, rsize = struct.unpack_from("<IIII", data, 8)
    if version not in (2, 3, 4) or rsize < 64:
        sys.exit("%s: version %d, record_size %d: count_flag reads version 2" % (f, version, rsize))
    for off in range(hsize, len(data) - rsize + 1, rsize):
        if data[off + FLAGS] & int(sys.argv[2]):
            if data[off + KIND] != REFAULT:
                sys.exit("%s: record at %d flagged 0x%x has kind %d, not a refault" % (f, off, data[off + FLAGS], data[off + KIND]))
            n += 1
print(n)
PYEOF
}

for store in mem file; do
	if [ "$store" = mem ]; then far=(--far mem); else far=(--far "file:$WORK/store"); fi
	base=pf-$store-off name=pf-$store-on
	expect_record "$base" -L "$local" -M "$max" "${far[@]}" --far-latency 20 -- "$PLANTED/fill" "$size"
	expect_record "$name" -L "$local" -M "$max" "${far[@]}" --far-latency 20 --prefetch 16 -- "$PLANTED/fill" "$size"
	same_output "$name" fill
	summary "$base"
	summary "$name"
	check_stats "$name" --local $((local * MIB)) --max $((max * MIB)) --procs 1
	for key in faults_total faults_first_touch faults_refault; do
		check_near "$name $key (as without read-ahead)" "$(stat_of "$name" $key)" "$(stat_of "$base" $key)"
	done
	hits=$(stat_of "$name" prefetch_hits)
	check_ge "$name prefetch_hits x 2 (at least half the refaults)" $((hits * 2)) "$(stat_of "$name" faults_refault)"
	flagged=$(count_flag "$name" 2) || fail "$name: cannot count flagged records"
	check_eq "$name records flagged PREFETCH_HIT" "$flagged" "$hits"
	flagged=$(count_flag "$base" 2) || fail "$base: cannot count flagged records"
	check_eq "$base records flagged PREFETCH_HIT" "$flagged" 0
	check_le "$name prefetched pages - hits - unused" \
		$(( $(stat_of "$name" prefetched_pages) - hits - $(stat_of "$name" prefetch_unused) )) 0
	check_ge "$name far_delay_ns (>= 20 us per far request)" "$(stat_of "$name" far_delay_ns)" \
		$(( $(stat_of "$name" far_reads) * 20000 ))
	t0=$(stat_of "$base" wall_ns) t1=$(stat_of "$name" wall_ns)
	say "$store: wall time without read-ahead $((t0 / 1000000)) ms, with --prefetch 16 $((t1 / 1000000)) ms"
done
grep -q '"far_latency_ns": 20000' "$WORK"/pf-mem-on/*/meta.json || fail "meta.json lacks far_latency_ns 20000"
grep -q '"prefetch_pages": 16' "$WORK"/pf-mem-on/*/meta.json || fail "meta.json lacks prefetch_pages 16"
echo "ok meta.json: far_latency_ns 20000, prefetch_pages 16"

# the summary names the emulation and the read-ahead
"$FAULTLINE" record -o "$WORK/summary" --force -L 2 -M "$max" --far-latency 20 --far-bandwidth 500 --prefetch 8 \
	-- "$PLANTED/fill" 8 >"$WORK/summary.out" 2>"$WORK/summary.err" || { cat "$WORK/summary.err" >&2; fail "summary run failed"; }
grep -q "emulated 20.0 µs per request + 500 MB/s" "$WORK/summary.err" || { cat "$WORK/summary.err" >&2; fail "summary lacks the emulation"; }
grep -q "read-ahead .* hits" "$WORK/summary.err" || { cat "$WORK/summary.err" >&2; fail "summary lacks the read-ahead line"; }
echo "ok summary: $(grep -m1 'far store' "$WORK/summary.err")"
grep -q '"far_bandwidth_bytes_per_s": 500000000' "$WORK"/summary/*/meta.json || fail "meta.json lacks far_bandwidth"
bytes=$(( $(stat_of summary far_read_pages) * PAGE ))
check_ge "summary far_delay_ns (>= bytes / 500 MB/s)" "$(stat_of summary far_delay_ns)" $((bytes * 2))
