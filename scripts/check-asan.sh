#!/usr/bin/env bash
# scripts/check-asan.sh: the tool side of faultline under AddressSanitizer and
# UndefinedBehaviorSanitizer (`make check-asan`, which first builds the normal tree with `make all`).
#
#   1. builds build/asan/faultline and build/asan/tests/unit/* from the same Makefile rules with
#      CC="gcc -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" and
#      CFLAGS="-O1 -g", warnings not fatal (the traced side, build/libfaultline.so, stays the normal build: record
#      preloads it through FAULTLINE_LIB);
#   2. runs every unit test with them;
#   3. records a few planted programs with the ASan faultline and dumps each recording, then dumps
#      corrupted copies: every file cut at header and record boundaries and in between, bytes
#      flipped in every header field and in records, files missing, empty, or replaced by a
#      directory; and the fuzzing corpus unpacked (tests/fuzz-corpus, plus build/fuzz/corpus when
#      `make fuzz` has run). Each dump must exit 0 or 1;
#   4. runs the tool-side test cases (CHECK_ASAN_CASES, default: dump record_cli safety_files) with
#      FAULTLINE=build/asan/faultline.
# Sanitizer reports go to files (ASAN_OPTIONS/UBSAN_OPTIONS log_path) so that none is lost inside a
# test that accepts any non-zero exit; the run is clean only when there are none. Leaks count (but
# for one inside libbfd, suppressed below).
# Exit 0 when clean; the reports are in build/asan/logs/.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
A=$ROOT/build/asan
LOGS=$A/logs
SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
CASES=${CHECK_ASAN_CASES:-dump record_cli safety_files}
failures=0
checks=0

say() { echo "check-asan: $*"; }
bad() { echo "check-asan: FAIL: $*" >&2; failures=$((failures + 1)); }

# ---------------------------------------------------------------- 1. build
units=()
for t in tests/unit/test_*.c; do units+=("$A/tests/unit/$(basename "$t" .c)"); done
say "building build/asan/faultline and ${#units[@]} unit tests with ${CC:-gcc} $SAN"
# Warnings stay on but are not fatal here: -O1 and the sanitizers change what gcc's analyses see
# (the normal build keeps -Werror).
CFLAGS="-O1 -g" make -s BUILD="$A" CC="${CC:-gcc} $SAN" WARN="-Wall -Wextra" "$A/faultline" "${units[@]}" ||
	{ echo "check-asan: the ASan build failed" >&2; exit 1; }
for need in build/faultline build/libfaultline.so build/tests/fill build/tests/fork_verify; do
	[ -e "$need" ] || { echo "check-asan: $need missing: run make first" >&2; exit 1; }
done

rm -rf "$LOGS"
mkdir -p "$LOGS"
# Leaks inside libbfd's DWARF line lookup (binutils 2.40, Debian 12): memory that
# _bfd_elf_find_nearest_line allocates for a separate debug file (libc6-dbg) stays allocated
# after symbolize.c's bfd_close of every bfd it opened. Not faultline's; everything else counts.
cat >"$A/lsan.supp" <<'SUPP'
leak:_bfd_elf_find_nearest_line
SUPP
export LSAN_OPTIONS="suppressions=$A/lsan.supp:print_suppressions=0"
export ASAN_OPTIONS="log_path=$LOGS/asan:detect_leaks=1:abort_on_error=0:exitcode=86:detect_stack_use_after_return=1:verify_asan_link_order=0"
export UBSAN_OPTIONS="log_path=$LOGS/ubsan:print_stacktrace=1:halt_on_error=1:exitcode=86"
export FAULTLINE="$A/faultline" FAULTLINE_LIB="$ROOT/build/libfaultline.so" FAULTLINE_BUILD="$ROOT/build"
export FAULTLINE_ROOT="$ROOT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/faultline-asan.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

reports() { find "$LOGS" -maxdepth 1 -type f \( -name 'asan*' -o -name 'ubsan*' \) | wc -l; }

# ---------------------------------------------------------------- 2. unit tests
for t in "${units[@]}"; do
	name=$(basename "$t")
	rc=0
	# The slow unwinder on malloc: libbfd has no frame pointers, and the suppression above needs
	# the frames beyond it.
	ASAN_OPTIONS="$ASAN_OPTIONS:fast_unwind_on_malloc=0" timeout -k 10 900 "$t" >"$LOGS/$name.log" 2>&1 </dev/null || rc=$?
	checks=$((checks + 1))
	if [ $rc -eq 0 ]; then say "ok unit/$name"; else bad "unit/$name exit $rc (log: $LOGS/$name.log)"; fi
done

# ---------------------------------------------------------------- 3. recordings, intact and corrupted
# dump_ok DIR WHAT: dump exits 0 or 1 (1: an error line on stderr), never anything else.
dump_ok() {
	local dir=$1 what=$2 rc=0
	timeout -k 5 60 "$FAULTLINE" dump "$dir" >/dev/null 2>"$WORK/dump.err" || rc=$?
	checks=$((checks + 1))
	case $rc in
		0) ;;
		1) [ -s "$WORK/dump.err" ] || bad "$what: dump exit 1 without a message" ;;
		*) bad "$what: dump exit $rc: $(head -c 300 "$WORK/dump.err")" ;;
	esac
	return 0
}
record() { # NAME ARGS... -- CMD
	local name=$1; shift
	"$FAULTLINE" record -q -o "$WORK/$name" --force "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" ||
		bad "record $name: exit $? ($(head -c 300 "$WORK/$name.err"))"
	checks=$((checks + 1))
}
record fill -L 1 -M 64 -- build/tests/fill 4
record fork -L 1 -M 64 -c 1 -- build/tests/fork_verify 2
record sampled -L 2 -M 64 -s 3 --stack-depth 2 -- build/tests/fill 2
for r in fill fork sampled; do
	rc=0
	"$FAULTLINE" dump "$WORK/$r" >"$WORK/$r.dump" 2>"$WORK/$r.dump.err" || rc=$?
	checks=$((checks + 1))
	[ $rc -eq 0 ] && [ -s "$WORK/$r.dump" ] || bad "dump $r: exit $rc: $(head -c 300 "$WORK/$r.dump.err")"
done
say "ok recorded and dumped fill, fork, sampled"

# Corrupted copies of the fill recording, one change each.
SRC=$(find "$WORK/fill" -mindepth 1 -maxdepth 1 -type d | head -n1)
pname=$(basename "$SRC")
variant=0
fresh() { # a new copy of the recording; sets V and PD
	variant=$((variant + 1))
	V=$WORK/v$variant
	rm -rf "$V"
	mkdir -p "$V"
	cp -r "$SRC" "$V/$pname"
	PD=$V/$pname
}
# flip FILE OFFSET BYTE: writes BYTE (decimal) at OFFSET.
flip() { printf "\\x$(printf %02x "$3")" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none; }
n_before=$checks
for f in meta.json stats.json faults contexts stacks allocs maps; do
	[ -f "$SRC/$f" ] || continue
	size=$(stat -c %s "$SRC/$f")
	# Cuts: inside and at the end of the header, at and around record boundaries, halfway.
	for cut in 0 1 7 8 12 16 20 24 28 32 40 48 56 63 64 65 72 80 96 104 112 $((size / 2)) $((size - 1)); do
		[ "$cut" -lt "$size" ] || continue
		fresh; truncate -s "$cut" "$PD/$f"; dump_ok "$V" "$f cut to $cut bytes"
	done
	# Flips: every 4-byte field of the header, then bytes spread over the records.
	offsets="0 4 7 8 9 12 16 20 24 28 32 36 40 44 48 52 56 60"
	for k in 1 2 3 5 7 11 13 17 19 23; do offsets="$offsets $(( (size * k / 29) + k ))"; done
	for off in $offsets; do
		[ "$off" -lt "$size" ] || continue
		for byte in 0 255 128; do
			fresh; flip "$PD/$f" "$off" "$byte"; dump_ok "$V" "$f byte $off = $byte"
		done
	done
	fresh; rm "$PD/$f"; dump_ok "$V" "$f missing"
	fresh; : >"$PD/$f"; dump_ok "$V" "$f empty"
	fresh; rm "$PD/$f"; mkdir "$PD/$f"; dump_ok "$V" "$f a directory"
	fresh; cat "$SRC/$f" >>"$PD/$f"; dump_ok "$V" "$f twice over"
done
# The process directory renamed: a pid that disagrees, an exec image, a name that is no pid.
for name in 1 "$pname.1" "$pname.0" "0$pname" x; do
	fresh; mv "$PD" "$V/$name" 2>/dev/null; dump_ok "$V" "process directory named $name"
done
rm -rf "$WORK"/v*
say "ok $((checks - n_before)) corrupted copies dumped"

# The fuzzing corpus as recordings.
if [ -x build/fuzz-replay/unpack ] || cc -std=gnu11 -O1 -D_GNU_SOURCE -o build/fuzz-replay-unpack fuzz/unpack.c 2>/dev/null; then
	unpack=build/fuzz-replay/unpack
	[ -x "$unpack" ] || unpack=build/fuzz-replay-unpack
	n_before=$checks
	inputs=$(find tests/fuzz-corpus/trace_reader fuzz/findings -maxdepth 1 -type f 2>/dev/null)
	[ -d build/fuzz/corpus/trace_reader ] && inputs="$inputs
$(find build/fuzz/corpus/trace_reader -maxdepth 1 -type f | sort | head -n 300)"
	i=0
	while IFS= read -r f; do
		[ -n "$f" ] || continue
		case $(basename "$f") in README*|text-*|cli-*|record_args-*) continue ;; esac
		i=$((i + 1))
		d=$WORK/corpus-$i
		"$unpack" "$f" "$d" 2>/dev/null || continue
		dump_ok "$d" "corpus input $f"
		rm -rf "$d"
	done <<<"$inputs"
	say "ok $((checks - n_before)) fuzzing inputs dumped"
fi

# ---------------------------------------------------------------- 4. tool-side test cases
for c in $CASES; do
	rc=0
	timeout -k 10 600 bash "tests/cases/$c.sh" >"$LOGS/case-$c.log" 2>&1 </dev/null || rc=$?
	checks=$((checks + 1))
	case $rc in
		0) say "ok case $c" ;;
		77) say "skipped case $c: $(grep -m1 '^SKIP' "$LOGS/case-$c.log")" ;;
		*) bad "case $c exit $rc (log: $LOGS/case-$c.log)" ;;
	esac
done

# ---------------------------------------------------------------- verdict
n=$(reports)
if [ "$n" -gt 0 ]; then
	bad "$n sanitizer report(s) in $LOGS:"
	for r in $(find "$LOGS" -maxdepth 1 -type f \( -name 'asan*' -o -name 'ubsan*' \) | head -n 5); do
		echo "---- $r" >&2
		grep -E 'ERROR|SUMMARY|runtime error|^    #[0-9] ' "$r" | head -n 15 >&2
	done
fi
if [ $failures -gt 0 ]; then
	echo "check-asan: $failures failure(s) in $checks checks" >&2
	exit 1
fi
say "clean: $checks checks, no sanitizer report"
