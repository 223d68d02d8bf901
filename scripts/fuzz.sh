#!/usr/bin/env bash
# scripts/fuzz.sh: builds the libFuzzer harnesses of fuzz/ with clang (AddressSanitizer and
# UndefinedBehaviorSanitizer) and runs each for its share of FUZZ_SECONDS (default 600 in all:
# half for the trace reader, the rest split among the others). `make fuzz` runs it; CI does not.
#
#     scripts/fuzz.sh [HARNESS...]      trace_reader record_args cli text (default: all)
#     FUZZ_SECONDS=3600 scripts/fuzz.sh trace_reader
#
# Each harness starts from tests/fuzz-corpus/NAME (the seeds, read only) and its own working corpus
# build/fuzz/corpus/NAME, which grows from run to run. A crash, a sanitizer report or a failed
# harness check leaves the input in build/fuzz/artifacts/NAME/ and makes this script exit 1 once
# every harness has run. Turn such an input into a regression test: once the bug is fixed, copy it
# to tests/fuzz-corpus/NAME/regress-SHORT-DESCRIPTION (tests/cases/fuzz_regressions.sh replays every
# file there in `make test`); until then keep it in fuzz/findings/ with a note. To look at a
# trace_reader input as a recording: build/fuzz/unpack INPUT DIR; build/faultline dump DIR.
#
# Prints one summary line per harness: executions, executions per second, edges covered (cov),
# features (ft), corpus size, and the artifacts found; then the lines and functions of the files
# under test that the corpus reaches (llvm-cov, when installed). Logs: build/fuzz/logs/NAME.log.
set -euo pipefail
cd "$(dirname "$0")/.."

ALL=(trace_reader record_args cli text)
TOTAL=${FUZZ_SECONDS:-600}
CLANG=${FUZZ_CC:-clang}
OUT=build/fuzz
# Every harness links what the faultline command links (the Makefile's TOOL_MODS and LIB_SRC, with
# TOOL_LIBS), as an archive: the linker takes the modules the harness needs, so that a module
# record.c or the reader comes to call needs no edit here, and work in progress in another one
# cannot break the link.
TOOL_SRC=()
for src in tools/*/*.c lib/*.c; do [ "$src" = tools/cmd/main.c ] || TOOL_SRC+=("$src"); done
TOOL_INC=$(for d in tools/*/; do printf -- '-I%s ' "${d%/}"; done)
TOOL_LIBS=$(sed -n 's/^TOOL_LIBS *:= *//p' Makefile)
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
CFLAGS_FUZZ="-std=gnu11 -g -O1 -Iinc $TOOL_INC-Ilib -Ifuzz -D_GNU_SOURCE -DPACKAGE=\"faultline\" -DPACKAGE_VERSION=\"0.1\""

harnesses=("$@")
[ ${#harnesses[@]} -eq 0 ] && harnesses=("${ALL[@]}")
for h in "${harnesses[@]}"; do
	[ -f "fuzz/fuzz_$h.c" ] || { echo "fuzz.sh: no harness fuzz/fuzz_$h.c (have: ${ALL[*]})" >&2; exit 2; }
done
command -v "$CLANG" >/dev/null || { echo "fuzz.sh: $CLANG not found (./deps.sh --fuzz installs it)" >&2; exit 2; }
case $TOTAL in ''|*[!0-9]*) echo "fuzz.sh: FUZZ_SECONDS must be a whole number of seconds" >&2; exit 2;; esac

# Seconds for harness H: half of the total for trace_reader when it runs with others.
seconds_for() {
	local h=$1 n=${#harnesses[@]}
	if [ "$n" -eq 1 ]; then echo "$TOTAL"; return; fi
	local has_reader=0 x
	for x in "${harnesses[@]}"; do [ "$x" = trace_reader ] && has_reader=1; done
	if [ $has_reader -eq 0 ]; then echo $((TOTAL / n)); return; fi
	if [ "$h" = trace_reader ]; then echo $((TOTAL / 2)); else echo $((TOTAL / 2 / (n - 1))); fi
}

max_len_for() {
	case $1 in
		trace_reader) echo 32768 ;;
		text) echo 8192 ;;
		record_args) echo 1024 ;;
		*) echo 512 ;;
	esac
}

mkdir -p "$OUT/logs"
echo "fuzz.sh: building ${harnesses[*]} with $CLANG -fsanitize=fuzzer,address,undefined" >&2
# The tool sources once per run, as objects (instrumented for coverage, without libFuzzer's main).
rm -rf "$OUT/obj"
mkdir -p "$OUT/obj/lib"; for d in tools/*/; do mkdir -p "$OUT/obj/${d%/}"; done
export CLANG CFLAGS_FUZZ SAN OUT
# A module that does not compile (work in progress) is left out; the link fails only if it is needed.
# shellcheck disable=SC2016
printf '%s\n' "${TOOL_SRC[@]}" | xargs -P 2 -I{} bash -c \
	'$CLANG $CFLAGS_FUZZ $SAN -fsanitize=fuzzer-no-link -w -c "$1" -o "$OUT/obj/${1%.c}.o" 2>/dev/null ||
	 echo "fuzz.sh: left out $1 (does not compile)" >&2' _ {}
objs=()
for src in "${TOOL_SRC[@]}"; do [ -f "$OUT/obj/${src%.c}.o" ] && objs+=("$OUT/obj/${src%.c}.o"); done
rm -f "$OUT/tools.a"
ar rcs "$OUT/tools.a" "${objs[@]}"
for h in "${harnesses[@]}"; do
	# shellcheck disable=SC2086
	"$CLANG" $CFLAGS_FUZZ $SAN -fsanitize=fuzzer -o "$OUT/fuzz_$h" "fuzz/fuzz_$h.c" "$OUT/tools.a" $TOOL_LIBS
done
# shellcheck disable=SC2086
"$CLANG" $CFLAGS_FUZZ -o "$OUT/unpack" fuzz/unpack.c

status=0
summary=()
for h in "${harnesses[@]}"; do
	secs=$(seconds_for "$h")
	[ "$secs" -ge 1 ] || secs=1
	corpus=$OUT/corpus/$h artifacts=$OUT/artifacts/$h log=$OUT/logs/$h.log
	mkdir -p "$corpus" "$artifacts"
	before=$(find "$artifacts" -type f | wc -l)
	args=(-max_total_time="$secs" -print_final_stats=1 -close_fd_mask=3 -timeout=20 -rss_limit_mb=2048
	      -max_len="$(max_len_for "$h")" -artifact_prefix="$artifacts/")
	[ -f "fuzz/$h.dict" ] && args+=(-dict="fuzz/$h.dict")
	seeds=()
	[ -d "tests/fuzz-corpus/$h" ] && seeds=("tests/fuzz-corpus/$h")
	echo "fuzz.sh: $h for ${secs}s (log: $log)" >&2
	rc=0
	"$OUT/fuzz_$h" "${args[@]}" "$corpus" "${seeds[@]}" >"$log" 2>&1 || rc=$?
	after=$(find "$artifacts" -type f | wc -l)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n1)
	last=$(grep -E '^#[0-9]+' "$log" | tail -n1 || true)
	cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
	ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
	corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9]*[a-zA-Z]*\).*/\1/p' <<<"$last")
	line=$(printf '%-13s %6ss  execs %-10s %6s/s  cov %-6s ft %-6s corpus %-12s new artifacts %d' "$h" "$secs" \
		"${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" $((after - before)))
	summary+=("$line")
	if [ $rc -ne 0 ] || [ "$after" -gt "$before" ]; then
		status=1
		echo "fuzz.sh: $h FAILED (exit $rc): the report ends the log:" >&2
		grep -E 'ERROR|SUMMARY|check failed|Test unit written|runtime error' "$log" | head -n 20 >&2 || tail -n 30 "$log" >&2
	fi
done

# Coverage reached: each harness's corpus (seeds and what fuzzing added) replayed once by a build
# with clang's source-based coverage; lines covered in the files it is about. Needs llvm-cov and
# llvm-profdata (Debian's llvm package); FUZZ_COVERAGE=0 skips it.
coverage=()
if [ "${FUZZ_COVERAGE:-1}" = 1 ] && command -v llvm-cov >/dev/null && command -v llvm-profdata >/dev/null; then
	cov_dir=$OUT/coverage
	rm -rf "$cov_dir"
	mkdir -p "$cov_dir/obj/lib"; for d in tools/*/; do mkdir -p "$cov_dir/obj/${d%/}"; done
	CFLAGS_COV="${CFLAGS_FUZZ/-O1/-O0} -fprofile-instr-generate -fcoverage-mapping"
	export CFLAGS_COV cov_dir
	# shellcheck disable=SC2016
	printf '%s\n' "${TOOL_SRC[@]}" | xargs -P 2 -I{} bash -c \
		'$CLANG $CFLAGS_COV -w -c "$1" -o "$cov_dir/obj/${1%.c}.o" 2>/dev/null' _ {} || true
	cov_objs=()
	for src in "${TOOL_SRC[@]}"; do [ -f "$cov_dir/obj/${src%.c}.o" ] && cov_objs+=("$cov_dir/obj/${src%.c}.o"); done
	ar rcs "$cov_dir/tools.a" "${cov_objs[@]}" 2>/dev/null || true
	for h in "${harnesses[@]}"; do
		case $h in
			trace_reader) files="tools/trace/trace_reader.c tools/trace/stats_json.c tools/trace/maps.c tools/cmd/dump.c" ;;
			record_args) files="tools/record/record.c tools/base/cli.c" ;;
			cli) files="tools/base/cli.c" ;;
			text) files="tools/trace/stats_json.c tools/trace/maps.c" ;;
		esac
		# shellcheck disable=SC2086
		"$CLANG" $CFLAGS_COV -o "$cov_dir/cov_$h" "fuzz/fuzz_$h.c" fuzz/replay_main.c "$cov_dir/tools.a" $TOOL_LIBS ||
			{ echo "fuzz.sh: coverage build of $h failed" >&2; continue; }
		seeds=()
		[ -d "tests/fuzz-corpus/$h" ] && seeds=("tests/fuzz-corpus/$h")
		LLVM_PROFILE_FILE="$cov_dir/$h.profraw" "$cov_dir/cov_$h" "$OUT/corpus/$h" "${seeds[@]}" >/dev/null 2>&1 || true
		llvm-profdata merge -sparse "$cov_dir/$h.profraw" -o "$cov_dir/$h.profdata" 2>/dev/null || continue
		# shellcheck disable=SC2086
		llvm-cov report "$cov_dir/cov_$h" -instr-profile="$cov_dir/$h.profdata" $files >"$cov_dir/$h.txt" 2>/dev/null || continue
		# Columns: Filename Regions Missed Cover Functions Missed Executed Lines Missed Cover ...
		while read -r f _ _ _ fn fnmiss _ lines lmiss lcover _; do
			case $f in *.c) ;; *) continue ;; esac
			coverage+=("$(printf '%-13s %-16s lines %5s/%-5s (%s)  functions %s/%s' "$h" "${f##*/}" \
				$((lines - lmiss)) "$lines" "$lcover" $((fn - fnmiss)) "$fn")")
		done <"$cov_dir/$h.txt"
	done
fi

echo "fuzz.sh: summary (FUZZ_SECONDS=$TOTAL)"
printf '%s\n' "${summary[@]}"
if [ ${#coverage[@]} -gt 0 ]; then
	echo "fuzz.sh: coverage of each harness's corpus (details: $OUT/coverage/NAME.txt)"
	printf '%s\n' "${coverage[@]}"
fi
if [ $status -ne 0 ]; then
	echo "fuzz.sh: findings in $OUT/artifacts/: replay one with $OUT/fuzz_NAME FILE; see the comment at the top of $0"
fi
exit $status
