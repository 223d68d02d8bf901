#!/usr/bin/env bash
# tests/cases/fuzz_regressions.sh: replays the fuzzing corpus in `make test`, without clang.
#   - builds each harness of fuzz/ (fuzz_trace_reader, fuzz_record_args, fuzz_cli, fuzz_text) with
#     gcc and fuzz/replay_main.c instead of libFuzzer, under AddressSanitizer and
#     UndefinedBehaviorSanitizer when the compiler has them (gcc on Debian does), into
#     build/fuzz-replay/ (rebuilt only when a source changed);
#   - replays every file of tests/fuzz-corpus/NAME/: the seeds (seed-*, fuzz/mkcorpus.sh) and the
#     regression inputs (regress-*: inputs that once crashed or broke a harness check, kept after
#     the fix), then the open findings of fuzz/findings/ (which must not crash either; their
#     stricter checks run only with FUZZ_STRICT=1); any crash, sanitizer report or failed check fails;
#   - every trace_reader seed, unpacked, is still a recording `faultline dump` reads (exit 0): a
#     change of the trace format that invalidates them says so here (re-run fuzz/mkcorpus.sh).
. "$(dirname "$0")/../lib.sh"

need_faultline
CORPUS=$ROOT/tests/fuzz-corpus
OUT=$BUILD/fuzz-replay
CC=${CC:-gcc}
HARNESSES=(trace_reader record_args cli text)
# What the faultline command links (the Makefile's TOOL_MODS, LIB_SRC and TOOL_LIBS).
TOOL_SRC=()
for src in "$ROOT"/tools/*/*.c "$ROOT"/lib/*.c; do
	src=${src#"$ROOT"/}
	[ "$src" = tools/cmd/main.c ] || TOOL_SRC+=("$src")
done
TOOL_INC=$(cd "$ROOT" && for d in tools/*/; do printf -- '-I%s ' "${d%/}"; done)
TOOL_LIBS=$(sed -n 's/^TOOL_LIBS *:= *//p' "$ROOT/Makefile")
[ -d "$CORPUS" ] || fail "no $CORPUS"
cd "$ROOT" || fail "cd $ROOT"

SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
LEAKS=1
echo 'int main(void) { return 0; }' >"$WORK/t.c"
if ! $CC $SAN -o "$WORK/t" "$WORK/t.c" 2>/dev/null || ! ASAN_OPTIONS=detect_leaks=0 "$WORK/t"; then
	say "$CC has no working -fsanitize=address,undefined here: replaying without sanitizers"
	SAN=""
elif ! ASAN_OPTIONS=detect_leaks=1 "$WORK/t" 2>/dev/null; then
	say "LeakSanitizer cannot run here (ptrace restricted?): leaks are not checked"
	LEAKS=0
fi
# -O0: the tool sources compile fast and a replay of a few dozen inputs needs no speed. The
# harnesses are ours and warning-free; the tools' own warnings are the normal build's business.
FLAGS="-std=gnu11 -O0 -g -Iinc $TOOL_INC-Ilib -Ifuzz -D_GNU_SOURCE -DPACKAGE=\"faultline\" -DPACKAGE_VERSION=\"0.1\" $SAN"
mkdir -p "$OUT/lib"; for d in tools/*/; do mkdir -p "$OUT/${d%/}"; done
echo "$CC $FLAGS" >"$WORK/flags"

# up_to_date TARGET SOURCES...: TARGET exists, was built with these flags and is newer than every source.
up_to_date() {
	local target=$1; shift
	[ -f "$target" ] && [ -f "$target.flags" ] && cmp -s "$target.flags" "$WORK/flags" || return 1
	[ -z "$(find "$@" inc/faultline tools/*/*.h lib/*.h fuzz/*.h -newer "$target" 2>/dev/null | head -n1)" ]
}
compile() { # OBJ SRC
	local warn="-w"
	up_to_date "$1" "$2" && return 0
	case $2 in fuzz/*) warn="-Wall -Wextra -Werror" ;; esac
	# shellcheck disable=SC2086
	$CC $FLAGS $warn -c "$2" -o "$1" || return 1
	cp "$WORK/flags" "$1.flags"
}
export -f compile up_to_date
export CC FLAGS WORK
jobs=()
for src in "${TOOL_SRC[@]}"; do jobs+=("$OUT/${src%.c}.o $src"); done
for h in "${HARNESSES[@]}" replay_main; do
	case $h in replay_main) src=fuzz/replay_main.c ;; *) src=fuzz/fuzz_$h.c ;; esac
	jobs+=("$OUT/$(basename "$src" .c).o $src")
done
# A tool module that does not compile (work in progress in a shared tree) is left out: the link
# below fails only if a harness needs it.
printf '%s\n' "${jobs[@]}" | xargs -P 2 -L 1 bash -c 'compile "$0" "$1" 2>"$0.err" || echo "$1" >>"$WORK/broken"'
if grep -q '^fuzz/' "$WORK/broken" 2>/dev/null; then
	cat "$OUT"/fuzz_*.o.err "$OUT"/replay_main.o.err >&2 2>/dev/null
	fail "a harness does not compile: $(grep '^fuzz/' "$WORK/broken" | tr '\n' ' ')"
fi
[ -s "$WORK/broken" ] && say "left out (do not compile): $(tr '\n' ' ' <"$WORK/broken")"
# The tool objects as an archive: each driver takes the modules its harness needs.
objs=()
for src in "${TOOL_SRC[@]}"; do
	grep -qx "$src" "$WORK/broken" 2>/dev/null || objs+=("$OUT/${src%.c}.o")
done
rm -f "$OUT/tools.a"
ar rcs "$OUT/tools.a" "${objs[@]}" || fail "ar failed"
for h in "${HARNESSES[@]}"; do
	bin=$OUT/replay_$h
	if ! up_to_date "$bin" "$OUT/fuzz_$h.o" "$OUT/replay_main.o" "${objs[@]}"; then
		# shellcheck disable=SC2086
		$CC $SAN -o "$bin" "$OUT/fuzz_$h.o" "$OUT/replay_main.o" "$OUT/tools.a" $TOOL_LIBS ||
			fail "linking $bin failed"
		cp "$WORK/flags" "$bin.flags"
	fi
done
# shellcheck disable=SC2086
$CC $FLAGS -Wall -Wextra -Werror -o "$OUT/unpack" fuzz/unpack.c || fail "building fuzz/unpack.c failed"
echo "ok replay drivers built${SAN:+ with ASan+UBSan}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=$LEAKS:abort_on_error=0:exitcode=86}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
unset FUZZ_STRICT
for h in "${HARNESSES[@]}"; do
	dir=$CORPUS/$h
	[ -d "$dir" ] || fail "no corpus $dir"
	inputs=$(find "$dir" -maxdepth 1 -type f | wc -l)
	[ "$inputs" -ge 1 ] || fail "corpus $dir is empty"
	log=$WORK/replay-$h.log
	RC=0
	"$OUT/replay_$h" "$dir" >"$log" 2>&1 || RC=$?
	if [ $RC -ne 0 ]; then
		grep -E 'check failed|ERROR: AddressSanitizer|runtime error|SUMMARY|the input that was running' "$log" | head -n 20 >&2
		fail "replay_$h over $dir: exit $RC (log above; replay one input with $OUT/replay_$h FILE)"
	fi
	grep -q "^replayed $inputs inputs\$" "$log" || { tail -n 5 "$log" >&2; fail "replay_$h did not replay all $inputs inputs"; }
	regress=$(find "$dir" -maxdepth 1 -type f -name 'regress-*' | wc -l)
	echo "ok $h: $inputs inputs replayed clean ($regress regression inputs)"
done

# Open findings (fuzz/findings/README.md): no crash in the default checks.
for f in "$ROOT"/fuzz/findings/*; do
	[ -f "$f" ] || continue
	case $(basename "$f") in README*) continue ;; esac
	h=${f##*/}; h=${h%%-*}
	case $h in trace_reader|record_args|cli|text) ;; *) continue ;; esac
	RC=0
	"$OUT/replay_$h" "$f" >"$WORK/finding.log" 2>&1 || RC=$?
	[ $RC -eq 0 ] || { tail -n 20 "$WORK/finding.log" >&2; fail "open finding $f crashes replay_$h (exit $RC)"; }
	echo "ok finding $(basename "$f"): no crash (its strict check: FUZZ_STRICT=1 $OUT/replay_$h $f)"
done

# Every trace_reader seed is still a valid recording.
n=0
for f in "$CORPUS"/trace_reader/seed-*; do
	[ -f "$f" ] || continue
	d=$WORK/unpacked-$(basename "$f")
	"$OUT/unpack" "$f" "$d" || fail "unpack $f"
	RC=0
	"$FAULTLINE" dump "$d" >"$WORK/dump.out" 2>"$WORK/dump.err" || RC=$?
	[ $RC -eq 0 ] || fail "seed $(basename "$f") is no longer a readable recording (dump exit $RC: $(head -c 300 "$WORK/dump.err")); after a trace format change re-run fuzz/mkcorpus.sh"
	grep -q '^# faultline dump of ' "$WORK/dump.out" || fail "dump of seed $(basename "$f") printed no header"
	n=$((n + 1))
done
[ $n -ge 1 ] || fail "no trace_reader seeds in $CORPUS/trace_reader"
echo "ok $n trace_reader seeds are readable recordings"
