#!/usr/bin/env bash
# rt_real_python: Debian's python3 with PYTHONMALLOC=malloc (every object on faultline's heap) builds
# a large dict, walks it in order and prints checksums. Runs natively, recorded without -L, and
# recorded with -L = a quarter of the unlimited run's peak resident bytes (real_program in lib.sh):
# output identical to the native run, exit 0, evictions > 0, check_stats invariants. (No second,
# randomly accessed table: with a quarter of the peak local, that thrashes into a million faults.)
# Default 300,000 entries (~48 MB of heap, ~45,000 faults limited); FAULTLINE_TEST_LONG=1: 1,000,000
# (~160 MB).
. "$(dirname "$0")/../lib.sh"
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 is not installed (run ./deps.sh --test)"
if [ "$LONG" = 1 ]; then n=1000000; else n=300000; fi

cat >"$WORK/dict.py" <<'PYEOF'
import sys, zlib
n = int(sys.argv[1])
d = {}
for i in range(n):
    d[i] = ("%x-" % (i * 2654435761 % 4294967296)) * 3
crc = 0
total = 0
for k, v in d.items():
    crc = zlib.crc32(v.encode(), crc)
    total += k * len(v)
longest = max(d.values(), key=len)
print(len(d), total, crc, longest)
print([d[i] for i in range(0, n, n // 5)])
PYEOF

export PYTHONMALLOC=malloc PYTHONHASHSEED=0
real_program python 2048 /usr/bin/python3 "$WORK/dict.py" "$n"
