#!/usr/bin/env bash
# binary_identity: a binary rebuilt in place after the recording is never symbolized with the new
# file's lines (issue 13, item 11). `record` writes DIR/binaries (each mapped file's build-id, size,
# mtime); the symbolizer refuses a file whose identity differs: one warning naming it, and its
# frames as binary+0xOFFSET. With `record --archive` the recording keeps copies by build-id
# (DIR/.build-id/xx/rest) and the report still gives the right lines after the rebuild.
# The program fills then scans 64 MiB under -L 16: fill's line takes the first touches, scan's the
# refaults. It is rebuilt with other code before them (-DVARIANT, -O0) and written over the same
# file (same path, same inode, as a linker rewriting in place). dump --symbolize is checked the same way.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_cmd gcc

SRC=$WORK/prog.c
cat >"$SRC" <<'CEOF'
#include <stdio.h>
#include <stdlib.h>
#ifdef VARIANT
static volatile int pad[64];
__attribute__((noinline)) void other_work(int *p, size_t n) { for (size_t i = 0; i < n; i += 7) p[i] += (int)i; pad[0]++; }
#endif
__attribute__((noinline)) void fill(char *p, size_t n)
{
	for (size_t i = 0; i < n; i += 4096)
		p[i] = (char)i; /* FILL_LINE */
}
__attribute__((noinline)) long scan(char *p, size_t n)
{
	long s = 0;
	for (size_t i = 0; i < n; i += 4096)
		s += p[i]; /* SCAN_LINE */
	return s;
}
int main(void)
{
	size_t n = 64 << 20;
	char *p = malloc(n);
	fill(p, n);
#ifdef VARIANT
	other_work((int *)p, 1000);
#endif
	printf("%ld\n", scan(p, n) + scan(p, n));
	return 0;
}
CEOF
fill_line=$(grep -n FILL_LINE "$SRC" | cut -d: -f1)
scan_line=$(grep -n SCAN_LINE "$SRC" | cut -d: -f1)
PROG=$WORK/prog
gcc -g -O1 -o "$PROG" "$SRC" || fail "gcc"
inode=$(stat -c %i "$PROG")

expect_record plain -L 16 -M 256 -- "$PROG"
expect_record archived --archive -L 16 -M 256 -- "$PROG"
[ -s "$WORK/plain/binaries" ] || fail "record wrote no DIR/binaries"
id=$(awk -F'\t' -v p="$PROG" '$5 == p { print $1 }' "$WORK/plain/binaries")
want=$(readelf -n "$PROG" | awk '/Build ID/ { print $3 }')
[ -n "$id" ] && [ "$id" = "$want" ] || fail "build-id of the program in DIR/binaries: '$id', readelf says '$want'"
awk -F'\t' -v p="$PROG" '$5 == p && $4 == "-"' "$WORK/plain/binaries" | grep -q . || fail "plain: archived without --archive"
arch=$(awk -F'\t' -v p="$PROG" '$5 == p { print $4 }' "$WORK/archived/binaries")
[ -f "$WORK/archived/$arch" ] || fail "--archive: no copy of the program at '$arch'"
cmp -s "$PROG" "$WORK/archived/$arch" || fail "--archive: the copy differs from the program"
echo "ok DIR/binaries names the program's build-id $id; --archive keeps it as $arch"

# report ROWS_FILE DIR: the CSV rows of report (function, file, line) and its stderr.
report_csv() {
	"$FAULTLINE" report "$2" --format csv --top 0 >"$WORK/$1.csv" 2>"$WORK/$1.err" || fail "report $2: $(cat "$WORK/$1.err")"
}
# lines_of NAME: "function:line" of every row that names prog.c
lines_of() {
	"$PY" - "$WORK/$1.csv" <<'PYEOF'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    if (r.get("file") or "").endswith("prog.c"):
        print("%s:%s:%s" % (r["function"], r["line"], r["faults"]))
PYEOF
}
report_csv before "$WORK/plain"
grep -q "^fill:$fill_line:16384\$" <(lines_of before) || fail "before the rebuild: fill's line is not $fill_line: $(lines_of before)"
echo "ok before the rebuild: $(lines_of before | tr '\n' ' ')"

gcc -g -O0 -DVARIANT -o "$WORK/prog.new" "$SRC" || fail "gcc (variant)"
cat "$WORK/prog.new" >"$PROG"
check_eq "inode of the rebuilt program" "$(stat -c %i "$PROG")" "$inode"

report_csv after "$WORK/plain"
n=$(grep -c "$PROG: build-id .* recorded: rebuilt or replaced" "$WORK/after.err")
check_eq "warnings naming the rebuilt program" "$n" 1
[ -z "$(lines_of after)" ] || fail "after the rebuild, rows still name prog.c lines: $(lines_of after)"
grep -q 'prog+0x' "$WORK/after.csv" || fail "no prog+0xOFFSET row after the rebuild"
echo "ok after the rebuild: one warning, the program's frames as prog+0xOFFSET"

report_csv archive "$WORK/archived"
grep -q "rebuilt or replaced" "$WORK/archive.err" && fail "--archive: warned about the rebuilt program: $(cat "$WORK/archive.err")"
grep -q "^fill:$fill_line:16384\$" <(lines_of archive) || fail "--archive: fill's line is not $fill_line: $(lines_of archive)"
grep -q "^scan:$scan_line:" <(lines_of archive) || fail "--archive: scan's line is not $scan_line: $(lines_of archive)"
echo "ok --archive after the rebuild: $(lines_of archive | tr '\n' ' ')"

# A damaged DIR/binaries line is skipped with one warning; the rest still applies.
printf 'zz\tnot a number\n' >>"$WORK/plain/binaries"
report_csv damaged "$WORK/plain"
grep -q "binaries: 1 damaged line skipped" "$WORK/damaged.err" || fail "damaged binaries line: $(cat "$WORK/damaged.err")"
[ -z "$(lines_of damaged)" ] || fail "damaged binaries file: rows name prog.c"
echo "ok a damaged line of DIR/binaries is skipped with a warning"

# dump --symbolize goes through the same symbolizer: the archived recording names fill's line on
# every first touch of the array, the plain one names no prog.c line after the rebuild.
"$FAULTLINE" dump "$WORK/archived" --symbolize >"$WORK/dump.txt" 2>"$WORK/dump.err" || fail "dump --symbolize: $(cat "$WORK/dump.err")"
n=$(grep -c " first-touch .* sym=\*fill [^ ]*prog.c:$fill_line " "$WORK/dump.txt")
check_ge "dump --symbolize: first touches at fill prog.c:$fill_line" "$n" 16384
check_eq "dump --symbolize: lines without sym=" "$(grep -v '^#' "$WORK/dump.txt" | grep -vc ' sym=')" 0
"$FAULTLINE" dump "$WORK/plain" --symbolize >"$WORK/dump2.txt" 2>"$WORK/dump2.err" || fail "dump --symbolize (plain)"
check_eq "dump --symbolize after the rebuild: lines naming prog.c" "$(grep -c 'prog\.c:' "$WORK/dump2.txt")" 0
grep -q "rebuilt or replaced" "$WORK/dump2.err" || fail "dump --symbolize: no warning about the rebuilt program"
"$FAULTLINE" dump --help | grep -q -- '--symbolize' || fail "dump --help lacks --symbolize"
echo "ok dump --symbolize"
