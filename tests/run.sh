#!/usr/bin/env bash
# tests/run.sh: runs every test of faultline and ends with the line "N passed, N failed, N skipped".
#   unit tests:  build/tests/unit/test_*   (C programs, exit 0 = pass)
#   cases:       tests/cases/*.sh          (shell scripts; exit 0 = pass, 77 = skipped, else fail)
# Each test runs under a timeout (FAULTLINE_TEST_TIMEOUT, default 120 s). Output of failing tests is
# shown; all output is kept in build/test-logs/. Arguments: name filters (substrings) to run a subset.
set -u
cd "$(dirname "$0")/.."
root=$(pwd)
timeout_s=${FAULTLINE_TEST_TIMEOUT:-120}
logs=$root/build/test-logs
rm -rf "$logs"; mkdir -p "$logs"
export FAULTLINE="$root/build/faultline" FAULTLINE_ROOT="$root" FAULTLINE_BUILD="$root/build"
passed=0 failed=0 skipped=0
failed_names=()

selected() {   # name: true when no filter was given or one filter is a substring of name
	local name=$1
	[ ${#filters[@]} -eq 0 ] && return 0
	for f in "${filters[@]}"; do [[ $name == *"$f"* ]] && return 0; done
	return 1
}

run_one() {   # name, command...
	local name=$1; shift
	selected "$name" || return 0
	local log="$logs/$name.log" start end rc
	mkdir -p "$(dirname "$log")"
	start=$(date +%s.%N)
	( cd "$root" && timeout -k 10 "$timeout_s" "$@" ) >"$log" 2>&1 </dev/null
	rc=$?
	end=$(date +%s.%N)
	local secs; secs=$(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.1f", b-a}')
	if [ $rc -eq 0 ]; then
		passed=$((passed+1)); echo "PASS  $name (${secs}s)"
	elif [ $rc -eq 77 ]; then
		skipped=$((skipped+1)); echo "SKIP  $name: $(grep -m1 '^SKIP' "$log" || tail -n1 "$log")"
	else
		failed=$((failed+1)); failed_names+=("$name")
		[ $rc -eq 124 ] && echo "TIMEOUT after ${timeout_s}s" >>"$log"
		echo "FAIL  $name (exit $rc, ${secs}s)"; tail -n 25 "$log" | sed 's/^/      /'
	fi
}

filters=("$@")
for t in build/tests/unit/test_*; do
	[ -x "$t" ] || continue
	run_one "unit/$(basename "$t")" "$t"
done
for t in tests/cases/*.sh; do
	[ -f "$t" ] || continue
	run_one "$(basename "$t" .sh)" bash "$t"
done
[ ${#failed_names[@]} -gt 0 ] && echo "failed: ${failed_names[*]}"
echo "$passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
