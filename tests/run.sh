#!/usr/bin/env bash
# tests/run.sh: runs every test of faultline and ends with the line "N passed, N failed, N skipped".
#   unit tests:  build/tests/unit/test_*   (C programs, exit 0 = pass)
#   cases:       tests/cases/*.sh          (shell scripts; exit 0 = pass, 77 = skipped, else fail)
# Arguments: name filters (substrings) to run a subset. Output of failing tests is shown; all output is
# kept in build/test-logs/. The 10 slowest tests are listed just before the final line.
#
# Timeouts follow the machine's load, measured, not guessed: a calibration run (record a fixed small
# fill under -L, the same CPU + fault path the tests exercise; median of 3) is timed at the start and
# again every 5 minutes. Its time over CAL_REFERENCE_S (what it takes on this machine when quiet)
# gives the load factor F (>= 1, <= 10). A test's timeout is F x FAULTLINE_TEST_TIMEOUT (base 120 s).
# A test that times out is re-run once when a fresh calibration finds the machine at least 1.5x
# slower than the factor it ran under (its log says so); any other failure is final. Cases read F as
# FAULTLINE_TEST_SCALE (lib.sh: `scaled SECONDS`) for their own inner time limits.
set -u
cd "$(dirname "$0")/.."
root=$(pwd)
base_timeout=${FAULTLINE_TEST_TIMEOUT:-120}
CAL_REFERENCE_S=${FAULTLINE_TEST_CAL_REFERENCE:-1.2}
logs=$root/build/test-logs
rm -rf "$logs"; mkdir -p "$logs"
export FAULTLINE="$root/build/faultline" FAULTLINE_ROOT="$root" FAULTLINE_BUILD="$root/build"
export FAULTLINE_TEST_TIMEOUT=$base_timeout
passed=0 failed=0 skipped=0
failed_names=()
times=()   # "seconds name" per test run
suite_start=$(date +%s.%N)

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.1f", b-a}'; }

# calibrate: sets scale (the load factor) and cal_secs from a fresh calibration run.
cal_dir=$(mktemp -d "${TMPDIR:-/tmp}/faultline-cal.XXXXXX")
trap 'rm -rf "$cal_dir"' EXIT
cal_at=0 scale=1 cal_secs=0
calibrate() {
	local runs=() t0 t1
	if [ ! -x "$FAULTLINE" ] || [ ! -x build/tests/fill ]; then scale=1; return; fi
	for _ in 1 2 3; do
		t0=$(now)
		"$FAULTLINE" record -q -o "$cal_dir/rec" --force -L 8 -M 64 -- build/tests/fill 32 >/dev/null 2>&1
		t1=$(now)
		runs+=("$(elapsed "$t0" "$t1")")
	done
	cal_secs=$(printf '%s\n' "${runs[@]}" | sort -n | sed -n 2p)
	scale=$(awk -v s="$cal_secs" -v r="$CAL_REFERENCE_S" 'BEGIN{f=s/r; if(f<1)f=1; if(f>10)f=10; printf "%.2f", f}')
	cal_at=$(date +%s)
	export FAULTLINE_TEST_SCALE=$scale
}
maybe_calibrate() { [ $(( $(date +%s) - cal_at )) -ge 300 ] && calibrate; return 0; }
timeout_for() { awk -v b="$base_timeout" -v f="$1" 'BEGIN{printf "%d", b*f+0.5}'; }

selected() {   # name: true when no filter was given or one filter is a substring of name
	local name=$1
	[ ${#filters[@]} -eq 0 ] && return 0
	for f in "${filters[@]}"; do [[ $name == *"$f"* ]] && return 0; done
	return 1
}

run_one() {   # name, command...
	local name=$1; shift
	selected "$name" || return 0
	local log="$logs/$name.log" start end rc t_s secs used_scale
	mkdir -p "$(dirname "$log")"
	maybe_calibrate
	used_scale=$scale; t_s=$(timeout_for "$scale")
	start=$(now)
	( cd "$root" && timeout -k 10 "$t_s" "$@" ) >"$log" 2>&1 </dev/null
	rc=$?
	if [ $rc -eq 124 ]; then
		calibrate
		if awk -v a="$scale" -v b="$used_scale" 'BEGIN{exit !(a >= 1.5*b)}'; then
			echo "TIMEOUT after ${t_s}s at load factor $used_scale; the machine now measures $scale: re-run" >>"$log"
			mv "$log" "$log.first"
			t_s=$(timeout_for "$scale")
			start=$(now)
			( cd "$root" && timeout -k 10 "$t_s" "$@" ) >"$log" 2>&1 </dev/null
			rc=$?
		fi
	fi
	end=$(now)
	secs=$(elapsed "$start" "$end")
	times+=("$secs $name")
	if [ $rc -eq 0 ]; then
		passed=$((passed+1)); echo "PASS  $name (${secs}s)"
	elif [ $rc -eq 77 ]; then
		skipped=$((skipped+1)); echo "SKIP  $name: $(grep -m1 '^SKIP' "$log" || tail -n1 "$log")"
	else
		failed=$((failed+1)); failed_names+=("$name")
		[ $rc -eq 124 ] && echo "TIMEOUT after ${t_s}s (load factor $scale, base ${base_timeout}s)" >>"$log"
		echo "FAIL  $name (exit $rc, ${secs}s)"; tail -n 25 "$log" | sed 's/^/      /'
	fi
}

filters=("$@")
calibrate
echo "# calibration: ${cal_secs}s (quiet: ${CAL_REFERENCE_S}s): load factor $scale, timeout $(timeout_for "$scale")s per test"
for t in build/tests/unit/test_*; do
	[ -x "$t" ] || continue
	run_one "unit/$(basename "$t")" "$t"
done
for t in tests/cases/*.sh; do
	[ -f "$t" ] || continue
	run_one "$(basename "$t" .sh)" bash "$t"
done
if [ ${#times[@]} -gt 0 ]; then
	echo "# slowest tests (of ${#times[@]}, $(elapsed "$suite_start" "$(now)")s in all; last load factor $scale):"
	printf '%s\n' "${times[@]}" | sort -rn | head -n 10 | awk '{printf "#   %7.1fs  %s\n", $1, $2}'
fi
[ ${#failed_names[@]} -gt 0 ] && echo "failed: ${failed_names[*]}"
echo "$passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
