#!/usr/bin/env bash
# rel_real_gcc: `gcc -O1 -c` of a generated C file. The driver starts cc1 and as as child processes
# (posix_spawn / vfork + exec), so every process is traced: the recording must hold one directory
# per process (the driver, cc1, as) with consistent stats (check_stats --procs 3), and the object
# file must be byte-identical to a native compile (-frandom-seed=x, compared with cmp). Runs
# natively, recorded without -L, then with -L = a quarter of the largest peak_resident_bytes of the
# unlimited run (cc1's; -L applies to each process): evictions > 0. gcc's temporary files go to a
# private TMPDIR, which must be empty afterwards.
# Default 300 generated functions (~37 MB peak in cc1, ~30,000 faults limited);
# FAULTLINE_TEST_LONG=1: 800 (~90 MB peak in cc1, ~65,000 faults limited).
. "$(dirname "$0")/../lib.sh"
need_faultline
need_cmd gcc as
GCC=$(command -v gcc)
if [ "$LONG" = 1 ]; then nfun=800; else nfun=300; fi
max=1024

"$PY" - "$WORK/gen.c" "$nfun" <<'PYEOF'
import sys
path, n = sys.argv[1], int(sys.argv[2])
with open(path, "w") as f:
    f.write("#include <stdio.h>\n#include <string.h>\n")
    for i in range(n):
        f.write("struct s%d { int a[%d]; double d; char name[16]; };\n" % (i, i % 7 + 1))
        f.write("int f%d(struct s%d *p, int x) { int t = 0; for (int i = 0; i < %d; i++) { t += p->a[i] * (x + %d);"
                " if (t > %d) t ^= x << (i & 7); } p->d = t * 1.5; snprintf(p->name, sizeof p->name, \"f%d-%%d\", t);"
                " return t + (int)strlen(p->name); }\n" % (i, i, i % 7 + 1, i, i * 31 + 7, i))
    f.write("int all(int x) { int t = 0;\n")
    for i in range(n):
        f.write(" { struct s%d v; memset(&v, 0, sizeof v); t += f%d(&v, x + %d); }\n" % (i, i, i))
    f.write(" return t; }\n")
PYEOF

mkdir -p "$WORK/tmp"
export TMPDIR="$WORK/tmp"
compile() {  # OUT: gcc's command line for an object file OUT
	echo "$GCC" -O1 -c -frandom-seed=x "$WORK/gen.c" -o "$1"
}

say "native: $(compile "$WORK/native.o")"
$(compile "$WORK/native.o") 2>"$WORK/native.err" || { cat "$WORK/native.err" >&2; fail "native gcc failed"; }

check_gcc_run() {  # NAME: object identical, three processes (gcc, cc1, as), TMPDIR empty
	local name=$1
	if ! cmp "$WORK/native.o" "$WORK/$name.o" >&2; then
		fail "$name: the object file differs from the native compile's"
	fi
	echo "ok $name: object file identical to the native compile's ($(wc -c <"$WORK/$name.o") bytes)"
	[ -z "$(ls -A "$WORK/tmp")" ] || fail "$name: files left in TMPDIR: $(ls -A "$WORK/tmp")"
	echo "ok $name: no temporary file left"
	# one directory per process, and they are the driver, the compiler proper and the assembler
	"$PY" - "$WORK/$name" <<'PYEOF' || fail "$name: the process directories are not gcc, cc1 and as"
import glob, json, os, sys
progs = []
for m in sorted(glob.glob(os.path.join(sys.argv[1], "*", "meta.json"))):
    argv0 = json.load(open(m))["cmdline"][0]
    progs.append(os.path.basename(argv0))
    print("# %s: %s" % (os.path.basename(os.path.dirname(m)), argv0))
if sorted(progs) != ["as", "cc1", "gcc"]:
    sys.exit("FAIL: programs traced: %s, want gcc, cc1 and as" % progs)
print("ok %s: traced processes are gcc, cc1 and as" % os.path.basename(sys.argv[1]))
PYEOF
}

expect_record gcc-unlimited -M "$max" -- $(compile "$WORK/gcc-unlimited.o")
check_gcc_run gcc-unlimited
check_stats gcc-unlimited --max $((max * MIB)) --procs 3
summary gcc-unlimited
check_eq "gcc-unlimited evictions" "$(stat_of gcc-unlimited evictions)" 0

peak=$(max_stat "$WORK/gcc-unlimited" peak_resident_bytes) || fail "no peak_resident_bytes"
limit=$((peak / 4 / MIB))
check_ge "gcc: -L in MiB (largest peak_resident_bytes $peak / 4, rounded down)" "$limit" 4
expect_record gcc-limited -L "$limit" -M "$max" -- $(compile "$WORK/gcc-limited.o")
check_gcc_run gcc-limited
check_stats gcc-limited --local $((limit * MIB)) --max $((max * MIB)) --procs 3
summary gcc-limited
check_ge "gcc-limited evictions" "$(stat_of gcc-limited evictions)" 1
