#!/usr/bin/env bash
# tests/cases/install_make.sh: `make install` from a clean copy of the source (no build/), as GNU
# asks: PREFIX and DESTDIR. The copy is built and installed into a temporary root with
# PREFIX=/usr, then removed whole; the installed command must still record (finding its runtime
# library as ../lib/faultline/libfaultline.so from itself) and report, FAULTLINE_LIB must still
# override it, and every manual page and the completion must be in place. `make uninstall` must
# remove exactly what install wrote (a file of someone else's in the same directories stays).
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted fill
need_cmd make gcc scdoc

src=$WORK/src root=$WORK/root
mkdir -p "$src" "$root/usr/bin" || fail "mkdir"
(cd "$ROOT" && tar --exclude=./build --exclude=./.git --exclude='./faultline-*' -cf - .) | tar -xf - -C "$src" ||
	fail "copying the source"
[ ! -e "$src/build" ] || fail "the copy has a build directory"
echo "someone else's" > "$root/usr/bin/other-tool"
say "make -j2 install DESTDIR=$root PREFIX=/usr (a clean copy of the source)"
make -C "$src" -j2 install DESTDIR="$root" PREFIX=/usr >"$WORK/install.log" 2>&1 ||
	{ tail -20 "$WORK/install.log" >&2; fail "make install failed"; }
(cd "$root" && find . -type f | sort) > "$WORK/installed.txt"
expected="./usr/bin/faultline
./usr/bin/other-tool
./usr/lib/faultline/libfaultline.so
./usr/share/bash-completion/completions/faultline"
for page in "$ROOT"/man/*.scd; do
	name=$(basename "$page" .scd)
	expected+=$'\n'"./usr/share/man/man${name##*.}/$name"
done
[ "$(sort <<<"$expected")" = "$(cat "$WORK/installed.txt")" ] ||
	fail "installed files differ from the expected ones: $(diff <(sort <<<"$expected") "$WORK/installed.txt")"
echo "ok   installed: $(grep -c . "$WORK/installed.txt") files (binary, library, $(grep -c /man/ "$WORK/installed.txt") manual pages, completion)"

rm -rf "$src"
[ ! -e "$src" ] || fail "could not remove the source copy"
echo "ok   the source copy and its build tree are removed"

F=$root/usr/bin/faultline
cd "$WORK" || fail "cd $WORK"
RC=0
env -u FAULTLINE_LIB "$F" record -q -o "$WORK/rec" -L 8 -M 64 -- "$PLANTED/fill" 16 >"$WORK/rec.out" 2>"$WORK/rec.err" || RC=$?
if [ "$RC" -ne 0 ] && grep -q "userfaultfd" "$WORK/rec.err"; then skip "userfaultfd is not available here: $(head -1 "$WORK/rec.err")"; fi
[ "$RC" -eq 0 ] || fail "installed record exited $RC: $(cat "$WORK/rec.err")"
grep -q "$root/usr/lib/faultline/libfaultline.so" "$WORK"/rec/*/maps ||
	fail "the traced program did not map the installed runtime library: $(grep -h libfaultline "$WORK"/rec/*/maps | head -2)"
echo "ok   installed record traced fill 16 with $root/usr/lib/faultline/libfaultline.so"
"$F" report "$WORK/rec" --top 3 >"$WORK/report.out" 2>"$WORK/report.err" || fail "installed report failed: $(cat "$WORK/report.err")"
grep -q "fill_pages\|fill" "$WORK/report.out" || fail "the report names no callsite of fill: $(head -20 "$WORK/report.out")"
echo "ok   installed report ranks the faults: $(grep -m1 -o 'fill[a-z_]*' "$WORK/report.out")"

RC=0
FAULTLINE_LIB=$WORK/no-such-lib.so "$F" record -q -o "$WORK/rec2" -- "$PLANTED/fill" 1 >/dev/null 2>"$WORK/rec2.err" || RC=$?
[ "$RC" -ne 0 ] && grep -q "FAULTLINE_LIB=$WORK/no-such-lib.so" "$WORK/rec2.err" ||
	fail "FAULTLINE_LIB did not override the installed library (exit $RC: $(cat "$WORK/rec2.err"))"
FAULTLINE_LIB=$BUILD/libfaultline.so "$F" record -q -o "$WORK/rec3" -L 8 -M 64 -- "$PLANTED/fill" 4 >/dev/null 2>"$WORK/rec3.err" ||
	fail "record with FAULTLINE_LIB=$BUILD/libfaultline.so failed: $(cat "$WORK/rec3.err")"
grep -q "$BUILD/libfaultline.so" "$WORK"/rec3/*/maps || fail "FAULTLINE_LIB=$BUILD/libfaultline.so was not the library preloaded"
echo "ok   FAULTLINE_LIB overrides the installed library"

# uninstall: the Makefile of the same source (this checkout) with the same PREFIX and DESTDIR
make -s -C "$ROOT" uninstall DESTDIR="$root" PREFIX=/usr >"$WORK/uninstall.log" 2>&1 ||
	fail "make uninstall failed: $(cat "$WORK/uninstall.log")"
left=$(cd "$root" && find . -type f | sort)
[ "$left" = "./usr/bin/other-tool" ] || fail "after uninstall these files are left: $left"
[ ! -e "$root/usr/lib/faultline" ] || fail "uninstall left $root/usr/lib/faultline"
echo "ok   make uninstall removed exactly the installed files (other-tool stays)"
