#!/usr/bin/env bash
# tests/cases/install_deb.sh: `make deb` (debian/, debhelper, dpkg-buildpackage -b -us -uc) leaves
# a .deb that holds the command, its runtime library, every manual page and the completion, and
# depends on the runtime libraries' packages; unpacked with dpkg-deb -x into a temporary root, its
# faultline records and reports a program. lintian, where installed, reports no error or warning.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted fill
need_cmd make dpkg-buildpackage dpkg-deb dh fakeroot scdoc

say "make deb (into $WORK/b/deb)"
DEB_BUILD_OPTIONS=noddebs make -s -C "$ROOT" BUILD="$WORK/b" deb >"$WORK/deb.log" 2>&1 ||
	{ tail -30 "$WORK/deb.log" >&2; fail "make deb failed"; }
debs=("$WORK"/b/deb/faultline_*_amd64.deb)
[ -f "${debs[0]}" ] || fail "make deb left no .deb in $WORK/b/deb: $(ls "$WORK/b/deb")"
deb=${debs[0]}
echo "ok   make deb built $(basename "$deb") ($(stat -c %s "$deb") bytes)"

contents=$(dpkg-deb -c "$deb" | awk '{ print $NF }')
for f in ./usr/bin/faultline ./usr/lib/faultline/libfaultline.so ./usr/share/bash-completion/completions/faultline; do
	grep -qxF "$f" <<<"$contents" || fail "$f is not in the package"
done
for page in "$ROOT"/man/*.scd; do
	name=$(basename "$page" .scd)
	grep -qxF "./usr/share/man/man${name##*.}/$name.gz" <<<"$contents" || fail "manual page $name is not in the package"
done
echo "ok   the package holds the command, the library, $(ls "$ROOT"/man/*.scd | wc -l) manual pages and the completion"
depends=$(dpkg-deb -f "$deb" Depends)
for p in libjemalloc2 liburing2 libunwind8 libsqlite3-0 libzstd1 libprotobuf-c1; do
	grep -q "$p" <<<"$depends" || fail "Depends has no $p: $depends"
done
echo "ok   Depends: $depends"

dpkg-deb -x "$deb" "$WORK/root" || fail "dpkg-deb -x failed"
F=$WORK/root/usr/bin/faultline
cd "$WORK" || fail "cd"
RC=0
env -u FAULTLINE_LIB "$F" record -q -o "$WORK/rec" -L 8 -M 64 -- "$PLANTED/fill" 16 >"$WORK/rec.out" 2>"$WORK/rec.err" || RC=$?
if [ "$RC" -ne 0 ] && grep -q "userfaultfd" "$WORK/rec.err"; then skip "userfaultfd is not available here: $(head -1 "$WORK/rec.err")"; fi
[ "$RC" -eq 0 ] || fail "the packaged record exited $RC: $(cat "$WORK/rec.err")"
grep -q "$WORK/root/usr/lib/faultline/libfaultline.so" "$WORK"/rec/*/maps ||
	fail "the traced program did not map the packaged runtime library"
"$F" report "$WORK/rec" --top 3 >"$WORK/report.out" 2>"$WORK/report.err" || fail "the packaged report failed: $(cat "$WORK/report.err")"
grep -q "fill" "$WORK/report.out" || fail "the report names no callsite of fill: $(head -20 "$WORK/report.out")"
echo "ok   the unpacked faultline recorded fill 16 with its own library and reported it"

if ! command -v lintian >/dev/null 2>&1; then
	echo "# lintian is not installed (./deps.sh --test installs it): not run"
	exit 0
fi
# lintian over the .deb alone (the .changes adds the buildinfo checks and doubles its time), bounded:
# on a loaded machine it may not finish, and then it is not judged rather than timing the test out.
lintian_secs=$(scaled 40)
timeout "$lintian_secs" lintian "$WORK"/b/deb/faultline_*_amd64.deb >"$WORK/lintian.out" 2>&1
if [ $? -eq 124 ]; then echo "# lintian did not finish in ${lintian_secs}s (machine load): not judged"; exit 0; fi
if grep -E '^[EW]: ' "$WORK/lintian.out"; then fail "lintian reports errors or warnings (above)"; fi
echo "ok   lintian: no error or warning ($(grep -c '^[IPN]: ' "$WORK/lintian.out") informational lines)"
