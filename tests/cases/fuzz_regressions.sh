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
TOOL_SRC=(tools/trace_reader.c tools/dump.c tools/maps.c tools/stats_json.c tools/cli.c tools/record.c tools/far_spec.c)
[ -d "$CORPUS" ] || fail "no $CORPUS"
cd "$ROOT" || fail "cd $ROOT"

SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
echo 'int main(void) { return 0; }' >"$WORK/t.c"
if ! $CC $SAN -o "$WORK/t" "$WORK/t.c" 2>/dev/null || ! "$WORK/t"; then
	say "$CC has no working -fsanitize=address,undefined here: replaying without sanitizers"
	SAN=""
fi
FLAGS="-std=gnu11 -O1 -g -Wall -Wextra -Werror -Iinc -Itools -Ifuzz -D_GNU_SOURCE $SAN"
mkdir -p "$OUT"
echo "$CC $FLAGS" >"$WORK/flags"

# up_to_date TARGET SOURCES...: TARGET exists, was built with these flags and is newer than every source.
up_to_date() {
	local target=$1; shift
	[ -f "$target" ] && [ -f "$target.flags" ] && cmp -s "$target.flags" "$WORK/flags" || return 1
	[ -z "$(find "$@" inc/faultline tools/*.h fuzz/*.h -newer "$target" 2>/dev/null | head -n1)" ]
}
compile() { # OBJ SRC
	up_to_date "$1" "$2" && return 0
	# shellcheck disable=SC2086
	$CC $FLAGS -c "$2" -o "$1" || return 1
	cp "$WORK/flags" "$1.flags"
}
export -f compile up_to_date
export CC FLAGS WORK
objs=()
jobs=()
for src in "${TOOL_SRC[@]}" fuzz/replay_main.c; do
	obj=$OUT/$(basename "$src" .c).o
	objs+=("$obj")
	jobs+=("$obj $src")
done
for h in "${HARNESSES[@]}"; do jobs+=("$OUT/fuzz_$h.o fuzz/fuzz_$h.c"); done
printf '%s\n' "${jobs[@]}" | xargs -P 2 -L 1 bash -c 'compile "$0" "$1"' || fail "building the replay drivers failed"
for h in "${HARNESSES[@]}"; do
	bin=$OUT/replay_$h
	if ! up_to_date "$bin" "$OUT/fuzz_$h.o" "${objs[@]}"; then
		# shellcheck disable=SC2086
		$CC $SAN -o "$bin" "$OUT/fuzz_$h.o" "${objs[@]}" || fail "linking $bin failed"
		cp "$WORK/flags" "$bin.flags"
	fi
done
# shellcheck disable=SC2086
$CC $FLAGS -o "$OUT/unpack" fuzz/unpack.c || fail "building fuzz/unpack.c failed"
echo "ok replay drivers built${SAN:+ with ASan+UBSan}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:exitcode=86}
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
