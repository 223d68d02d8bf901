#!/usr/bin/env bash
# rel_real_pymalloc: Debian's python3 with its default allocator, pymalloc, whose 1 MiB arenas are
# anonymous mmaps (served from faultline's region; rt_real_python covers PYTHONMALLOC=malloc). The
# script builds a dict of short strings, walks it, deletes every other entry (pools and whole arenas
# go back with munmap), allocates again into the holes, walks again and joins/splits strings.
# real_program (lib.sh): native run, recorded without -L, recorded with -L = a quarter of the
# unlimited run's peak resident bytes: output identical to the native run, exit 0, evictions > 0,
# check_stats invariants.
# Default 300,000 entries (~75 MB peak resident, ~100,000 faults limited); FAULTLINE_TEST_LONG=1:
# 1,000,000.
. "$(dirname "$0")/../lib.sh"
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 is not installed (run ./deps.sh --test)"
if [ "$LONG" = 1 ]; then n=1000000; else n=300000; fi

cat >"$WORK/pymalloc.py" <<'PYEOF'
import sys, zlib
n = int(sys.argv[1])
# str objects of up to 512 bytes come from pymalloc's arenas (anonymous mmap)
d = {}
for i in range(n):
    d[i] = ("%x-" % (i * 2654435761 % 4294967296)) * (1 + i % 5)
def walk(d):
    crc = 0
    for k, v in d.items():
        crc = zlib.crc32(v.encode(), crc)
    return crc
print(len(d), walk(d))
# free every other entry (pools and whole arenas go back: munmap), then allocate again
for i in range(0, n, 2):
    del d[i]
print(len(d), walk(d))
for i in range(n, n + n // 2):
    d[i] = str(i * 3.25) + "/" + str(-i)
print(len(d), walk(d), max(d.values(), key=len))
words = " ".join(d[k] for k in range(1, n, 14)).split("/")
print(len(words), sum(map(len, words)), zlib.crc32("".join(words[::3]).encode()))
PYEOF

unset PYTHONMALLOC
export PYTHONHASHSEED=0
real_program pymalloc 2048 /usr/bin/python3 "$WORK/pymalloc.py" "$n"
