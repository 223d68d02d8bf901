#!/usr/bin/env bash
# tests/cases/report_callsites.sh: callsites `faultline report` must get right, on tests/planted/report_mix.c
# built here with gcc (-O2 -g -fomit-frame-pointer, as the planted programs are):
#   - a PIE and a non-PIE build of the same program give the same rows (function, file, line, counts);
#   - faults inside read() are the caller's (read_into's read() line), with and without --no-skip;
#   - a library loaded with dlopen that faults is resolved to its function and file:line;
#   - --locality: every score in [0,1]; the sequential-scan callsite ranks above the random one on spatial;
#   - a binary deleted, or replaced (a new inode at its path), since the recording: a warning, rows named
#     binary+0xOFFSET, no crash (table, CSV and JSON, export).
. "$(dirname "$0")/../lib.sh"

need_faultline
need_cmd gcc

SRC=$ROOT/tests/planted/report_mix.c
CFLAGS_PLANTED="-std=gnu11 -O2 -g -fomit-frame-pointer -Wall -Wextra -Werror -I$ROOT/tests/planted"
mkdir -p "$WORK/pie" "$WORK/nopie" "$WORK/lib"
gcc $CFLAGS_PLANTED -fPIE -pie -o "$WORK/pie/report_mix" "$SRC" -ldl || fail "gcc -pie failed"
gcc $CFLAGS_PLANTED -fno-pie -no-pie -o "$WORK/nopie/report_mix" "$SRC" -ldl || fail "gcc -no-pie failed"
readelf -h "$WORK/pie/report_mix" | grep -q 'DYN' || fail "the PIE build is not ET_DYN"
readelf -h "$WORK/nopie/report_mix" | grep -q 'EXEC' || fail "the non-PIE build is not ET_EXEC"
echo "ok built report_mix as PIE and non-PIE"
line_of() { grep -n "$2" "$1" | head -n1 | cut -d: -f1; }
SEQ_LINE=$(line_of "$SRC" 'sequential-scan callsite')
RAND_LINE=$(line_of "$SRC" 'random-access callsite')
READ_LINE=$(line_of "$SRC" 'read() callsite')

# csv_rows FILE: "function|file basename|line|faults|first_touch|refault|reads|writes" of the rows in report_mix.c
csv_rows() {
	"$PY" -c 'import csv, os, sys
for r in csv.DictReader(open(sys.argv[1])):
    if os.path.basename(r["file"]) == "report_mix.c":
        print("|".join([r["function"], os.path.basename(r["file"]), r["line"], r["faults"], r["first_touch"], r["refault"], r["reads"], r["writes"]]))' "$1" | sort
}
report() { # OUT ARGS...
	local out=$1; shift
	"$FAULTLINE" report "$@" >"$WORK/$out" 2>"$WORK/$out.err" || { cat "$WORK/$out.err" >&2; fail "faultline report $* exited $?"; }
}

# PIE and non-PIE: the same rows. 16 MiB buffers, -L large enough that nothing is evicted.
for kind in pie nopie; do
	expect_record "scan_$kind" -L 256 -M 512 -- "$WORK/$kind/report_mix" scan 16
	report "scan_$kind.csv" "$WORK/scan_$kind" --format csv --top 0 --locality
done
csv_rows "$WORK/scan_pie.csv" >"$WORK/rows_pie"
csv_rows "$WORK/scan_nopie.csv" >"$WORK/rows_nopie"
[ -s "$WORK/rows_pie" ] || fail "no report_mix.c rows in the PIE report: $(head -n5 "$WORK/scan_pie.csv")"
if ! cmp -s "$WORK/rows_pie" "$WORK/rows_nopie"; then
	diff "$WORK/rows_pie" "$WORK/rows_nopie" >&2
	fail "PIE and non-PIE reports differ"
fi
echo "ok PIE and non-PIE give the same rows: $(tr '\n' ' ' <"$WORK/rows_pie")"
grep -q "^scan_sequential|report_mix.c|$SEQ_LINE|4096|4096|" "$WORK/rows_pie" || fail "scan_sequential row at line $SEQ_LINE with 4096 first-touch faults missing"
grep -q "^touch_random|report_mix.c|$RAND_LINE|" "$WORK/rows_pie" || fail "touch_random row at line $RAND_LINE missing"
echo "ok sequential and random callsites at their lines"

# --locality: scores in [0,1], sequential above random on spatial.
"$PY" - "$WORK/scan_pie.csv" "$WORK/scan_nopie.csv" <<'EOF' || fail "locality checks failed"
import csv, sys
for path in sys.argv[1:]:
    rows = list(csv.DictReader(open(path)))
    for r in rows:
        for k in ("spatial", "temporal"):
            v = float(r[k])
            if not 0.0 <= v <= 1.0:
                sys.exit("FAIL: %s: %s %s = %s outside [0,1]" % (path, r["function"], k, v))
    by = {r["function"]: r for r in rows}
    seq, rnd = float(by["scan_sequential"]["spatial"]), float(by["touch_random"]["spatial"])
    if not (seq > rnd and seq >= 0.9 and rnd <= 0.3):
        sys.exit("FAIL: %s: spatial sequential %.4f vs random %.4f" % (path, seq, rnd))
    print("ok %s: scores in [0,1]; spatial sequential %.4f > random %.4f" % (path.split("/")[-1], seq, rnd))
EOF

# A fault inside read(): the caller's.
head -c $((8 * MIB)) /dev/urandom >"$WORK/data.bin"
expect_record read -L 256 -M 512 -- "$WORK/pie/report_mix" read "$WORK/data.bin"
for skip in "" --no-skip; do
	report "read$skip.csv" "$WORK/read" --format csv $skip
	"$PY" - "$WORK/read$skip.csv" "$READ_LINE" <<'EOF' || fail "read() attribution ($skip) failed"
import csv, os, sys
rows = list(csv.DictReader(open(sys.argv[1])))
top = rows[0]
ok = top["function"] == "read_into" and os.path.basename(top["file"]) == "report_mix.c" and top["line"] == sys.argv[2] \
     and int(top["first_touch"]) >= 2048 and "libc" not in os.path.basename(top["binary"])
libc = sum(int(r["faults"]) for r in rows if "libc.so" in os.path.basename(r["binary"]))
if not ok or libc >= 2048:
    sys.exit("FAIL: top row %s %s:%s %s faults (%s), libc rows %d faults" % (top["function"], top["file"], top["line"], top["faults"], top["binary"], libc))
print("ok faults inside read(): %s faults at read_into report_mix.c:%s" % (top["faults"], top["line"]))
EOF
done

# A library loaded with dlopen.
cat >"$WORK/lib/libtouch.c" <<'EOF'
#include <stddef.h>
#include <stdint.h>
uint64_t lib_touch(uint8_t *buf, size_t bytes)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < bytes; i += 4096) {
		buf[i] = (uint8_t)(i >> 12); /* library callsite */
		sum += buf[i];
	}
	return sum;
}
EOF
gcc -O2 -g -fPIC -shared -o "$WORK/lib/libtouch.so" "$WORK/lib/libtouch.c" || fail "building libtouch.so failed"
LIB_LINE=$(line_of "$WORK/lib/libtouch.c" 'library callsite')
expect_record dl -L 256 -M 512 -- "$WORK/nopie/report_mix" dlopen "$WORK/lib/libtouch.so" 4
report dl.csv "$WORK/dl" --format csv
"$PY" - "$WORK/dl.csv" "$LIB_LINE" <<'EOF' || fail "dlopen'ed library not resolved"
import csv, os, sys
top = list(csv.DictReader(open(sys.argv[1])))[0]
if (top["function"], os.path.basename(top["file"]), top["line"], os.path.basename(top["binary"])) != ("lib_touch", "libtouch.c", sys.argv[2], "libtouch.so") \
   or int(top["first_touch"]) < 1024:
    sys.exit("FAIL: top row %s" % top)
print("ok dlopen'ed library: %s faults at lib_touch libtouch.c:%s in libtouch.so" % (top["faults"], top["line"]))
EOF

# A binary deleted, or replaced by another file, since the recording.
for what in deleted replaced; do
	mkdir -p "$WORK/$what"
	cp "$WORK/nopie/report_mix" "$WORK/$what/report_mix"
	expect_record "rec_$what" -L 256 -M 512 -- "$WORK/$what/report_mix" scan 4
	if [ "$what" = deleted ]; then
		rm "$WORK/$what/report_mix"
	else
		cp "$PLANTED/fill" "$WORK/$what/new" && mv "$WORK/$what/new" "$WORK/$what/report_mix"
	fi
	report "$what.table" "$WORK/rec_$what"
	report "$what.csv" "$WORK/rec_$what" --format csv
	report "$what.json" "$WORK/rec_$what" --format json
	grep -q "^# warning: .*$what/report_mix" "$WORK/$what.table" || fail "$what binary: no warning naming it in the header: $(grep '^#' "$WORK/$what.table")"
	grep -q "warning: .*$what/report_mix" "$WORK/$what.csv.err" || fail "$what binary: no warning on stderr with --format csv"
	"$PY" - "$WORK/$what.csv" "$WORK/$what.json" <<'EOF' || fail "$what binary: rows not named binary+offset"
import csv, json, os, re, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if os.path.basename(r["binary"]) == "report_mix"]
js = json.load(open(sys.argv[2]))
if not rows or not all(re.fullmatch(r"report_mix\+0x[0-9a-f]+", r["function"]) and not r["file"] for r in rows) or len(js) == 0:
    sys.exit("FAIL: %s" % [(r["function"], r["file"]) for r in rows])
print("ok %d rows named binary+offset: %s" % (len(rows), ", ".join(r["function"] for r in rows[:3])))
EOF
	"$FAULTLINE" export --sqlite "$WORK/$what.db" "$WORK/rec_$what" 2>/dev/null || fail "export with a $what binary exited $?"
	echo "ok $what binary: warned, labelled, exported"
done
