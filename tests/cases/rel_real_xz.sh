#!/usr/bin/env bash
# rel_real_xz: xz -9 and xz -d round trip under LANG=C.UTF-8 (fltrace deadlocked on xz: a handler
# touched locale data the program had allocated on the traced heap). Each direction goes through
# real_program (lib.sh): native run, recorded without -L, recorded with -L = a quarter of the
# unlimited run's peak resident bytes: output identical to the native run (the compressed stream
# byte for byte, the decompressed data byte for byte), exit 0, evictions > 0, check_stats
# invariants. Then the stream compressed under faultline is decompressed under faultline (-L 1)
# and must equal the input.
#   compress:   xz -9 keeps its match finder's hash table (~30 MB resident after a few hundred KiB
#               of input) and touches it at random, so with a quarter of that local it refaults
#               for every few input bytes (~0.8 fault per byte). Default 128 KiB of text (~100,000
#               faults limited); FAULTLINE_TEST_LONG=1: 512 KiB (~560,000 faults, ~55 s here), and
#               the full 1 MiB when the test timeout allows it (FAULTLINE_TEST_TIMEOUT >= 240: ~1.3
#               million faults, 95-110 s for the limited run alone on this 2-vCPU machine).
#   decompress: xz -d only touches its dictionary as far as the output goes, so a quarter of its
#               peak is below the 4 MiB real_program requires unless the output is larger than
#               16 MiB: 18 MiB of text with a 64 MiB dictionary (~20,000 faults limited).
. "$(dirname "$0")/../lib.sh"
need_cmd xz
locale -a 2>/dev/null | grep -qix 'c.utf-\?8' || skip "the C.UTF-8 locale is not available"
export LANG=C.UTF-8 LC_ALL=C.UTF-8
kib=128
if [ "$LONG" = 1 ]; then
	if [ "${FAULTLINE_TEST_TIMEOUT:-120}" -ge 240 ]; then kib=1024; else kib=512; fi
fi

# Text with a vocabulary, so it compresses (and xz finds matches all over its window).
"$PY" - "$WORK" "$kib" <<'PYEOF'
import random, sys
work, kib = sys.argv[1], int(sys.argv[2])
def text(seed, nwords, nbytes):
    r = random.Random(seed)
    words = ["".join(r.choices("abcdefghijklmnopqrstuvwxyz", k=r.randint(2, 9))) for _ in range(nwords)]
    chosen = r.choices(words, k=nbytes // 5)
    s = "\n".join(" ".join(chosen[i:i + 12]) for i in range(0, len(chosen), 12)) + "\n"
    return (s * (nbytes // len(s) + 1))[:nbytes]
open(work + "/small.txt", "w").write(text(1, 5000, kib * 1024))
open(work + "/big.txt", "w").write(text(2, 2000, 18 * 1024 * 1024))
PYEOF
# the big stream: a 64 MiB dictionary, so xz -d keeps all 18 MiB of output resident (its peak sets
# -L); the fastest preset otherwise, as only the decoder is under test with it
xz --lzma2=preset=0,dict=64MiB -T1 -c "$WORK/big.txt" >"$WORK/big.xz" || fail "native xz of big.txt failed"

real_program xz-9 1024 xz -9 -T1 -c "$WORK/small.txt"
real_program xz-d 1024 xz -d -c "$WORK/big.xz"

# the stream written under faultline (-L limited), decompressed under faultline
cp "$WORK/xz-9-limited.out" "$WORK/small-traced.xz"
expect_record xz-roundtrip -L 1 -M 1024 -- xz -d -c "$WORK/small-traced.xz"
cmp -s "$WORK/small.txt" "$WORK/xz-roundtrip.out" || fail "xz -d under faultline of the stream xz -9 wrote under faultline differs from the input"
echo "ok xz-roundtrip: xz -9 then xz -d, both under faultline, give back the input ($kib KiB)"
check_stats xz-roundtrip --local "$MIB" --max $((1024 * MIB))
