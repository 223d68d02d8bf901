#!/usr/bin/env bash
# bench_ab.sh: two builds of faultline side by side, interleaved in one run — "before and after".
#
# usage: scripts/bench_ab.sh OLD_BUILD_DIR [ROUNDS (5)] [FILL_MiB (256)]
#   OLD_BUILD_DIR holds the other build's faultline and libfaultline.so (e.g. a worktree of an
#   older commit, built with `make build/faultline build/libfaultline.so`). The new build is this
#   checkout's build/. Each round runs, in alternating order:
#     floor      bench/uffd_floor: the minimal userfaultfd handler on the faulting CPU
#     touch      first-touch program (bench/touch, 16384 pages) under record -L = -M, with stacks
#                (-s 1) and without (-s 1000000): ns per page, timed inside the program
#     refault    bench/refault seq FILL_MiB 2 under record -L 64 and -L FILL*4: the fill's and
#                the read passes' ns per page, wall and process CPU (handler threads included)
# and prints the medians, new / old, and each build against the floor. Machines here are shared
# and noisy: only ratios within one run mean anything. Last, when strace is installed, one
# first-touch run of each build (4096 pages, -s 1) under strace -f -c: system calls per fault,
# all of them and those of the fault path (counts do not depend on the load).
set -u
cd "$(dirname "$0")/.."
old=${1:?usage: scripts/bench_ab.sh OLD_BUILD_DIR [ROUNDS] [FILL_MiB]}
rounds=${2:-5}
fill=${3:-256}
new=build
for b in "$old" "$new"; do
	[ -x "$b/faultline" ] && [ -f "$b/libfaultline.so" ] || { echo "bench_ab: no faultline build in $b" >&2; exit 2; }
done
mkdir -p build/bench
for p in touch refault uffd_floor; do   # as scripts/bench.sh builds them
	[ "build/bench/$p" -nt "bench/$p.c" ] && [ "build/bench/$p" -nt bench/bench.h ] && continue
	gcc -std=gnu11 -O2 -g -Wall -Wextra -o "build/bench/$p" "bench/$p.c" -lpthread -lm ||
		{ echo "bench_ab: building bench/$p.c failed" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
results=$work/results

add() { echo "$1 $2" >>"$results"; }

# field KEY LINE_TAG OUTPUT: value of KEY= on the first line starting with LINE_TAG
field() { awk -v k="$1" -v t="$2" '$1 == t { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) { print kv[2]; exit } } }' <<<"$3"; }

touch_run() {   # BUILD_NAME BUILD_DIR S
	local out
	out=$("$2/faultline" record -q -o "$work/rec" --force -L 256M -M 256M -s "$3" -- build/bench/touch 16384 2>/dev/null)
	add "touch_$1_s$3" "$(field ns_per_page touch "$out")"
}

refault_run() {   # BUILD_NAME BUILD_DIR L_MiB
	local out pages
	out=$("$2/faultline" record -q -o "$work/rec" --force -L "${3}M" -M "$((fill * 4 + 64))M" -- build/bench/refault seq "$fill" 2 2>/dev/null)
	pages=$(field pages fill "$out")
	[ -n "$pages" ] || return
	add "fill_wall_$1_L$3" "$(awk -v n="$(field ns fill "$out")" -v p="$pages" 'BEGIN { print n / p }')"
	add "fill_cpu_$1_L$3" "$(awk -v n="$(field cpu_ns fill "$out")" -v p="$pages" 'BEGIN { print n / p }')"
	add "pass_wall_$1_L$3" "$(grep '^pass ' <<<"$out" | awk -v p="$pages" '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "ns") s += kv[2] } } END { print s / (2 * p) }')"
	add "pass_cpu_$1_L$3" "$(grep '^pass ' <<<"$out" | awk -v p="$pages" '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "cpu_ns") s += kv[2] } } END { print s / (2 * p) }')"
}

for r in $(seq 1 "$rounds"); do
	echo "bench_ab: round $r of $rounds (load $(cut -d' ' -f1 /proc/loadavg))" >&2
	order="old new"; [ $((r % 2)) = 0 ] && order="new old"
	add floor "$(field ns_per_fault uffd "$(build/bench/uffd_floor 16384 0 0 1)")"
	for b in $order; do
		dir=$new; [ "$b" = old ] && dir=$old
		touch_run "$b" "$dir" 1
		touch_run "$b" "$dir" 1000000
		refault_run "$b" "$dir" 64
		refault_run "$b" "$dir" $((fill * 4))
	done
done

median() { awk -v k="$1" '$1 == k && $2 != "" { print $2 }' "$results" | sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b != "" && b > 0) printf "%.2f", a / b; else print "-" }'; }

big=$((fill * 4))
printf '%-58s %12s %12s %8s %10s %10s\n' "measure (median of $rounds, ns per page)" old new new/old old/floor new/floor
fl=$(median floor)
printf '%-58s %12.0f\n' "minimal uffd handler, same CPU (floor)" "$fl"
for m in "touch_%s_s1:first touch, stacks and PMU (-s 1)" "touch_%s_s1000000:first touch, no stacks (-s 1000000)" \
	"fill_wall_%s_L64:fill at -L 64, wall" "fill_cpu_%s_L64:fill at -L 64, CPU" \
	"fill_wall_%s_L$big:fill at -L $big (no eviction), wall" "fill_cpu_%s_L$big:fill at -L $big, CPU" \
	"pass_wall_%s_L64:read passes at -L 64 (refaults), wall" "pass_cpu_%s_L64:read passes at -L 64, CPU"; do
	key=${m%%:*} what=${m#*:}
	o=$(median "$(printf "$key" old)") n=$(median "$(printf "$key" new)")
	printf '%-58s %12.0f %12.0f %8s %10s %10s\n' "$what" "${o:-0}" "${n:-0}" "$(ratio "$n" "$o")" "$(ratio "$o" "$fl")" "$(ratio "$n" "$fl")"
done
for b in old new; do
	echo "$b: fill -L 64 / fill -L $big per page: wall $(ratio "$(median fill_wall_${b}_L64)" "$(median fill_wall_${b}_L$big)"), CPU $(ratio "$(median fill_cpu_${b}_L64)" "$(median fill_cpu_${b}_L$big)")"
done

# syscalls_per_fault BUILD_NAME BUILD_DIR: system calls per fault of a first-touch run under strace
syscalls_per_fault() {
	local st=$work/strace.$1 faults
	strace -f -c -o "$st" "$2/faultline" record -q -o "$work/rec" --force -L 64M -M 64M -s 1 -- build/bench/touch 4096 >/dev/null 2>&1 || return
	faults=$(grep -o '"faults_total": *[0-9]*' "$work"/rec/*/stats.json | awk -F: '{ s += $NF } END { print s }')
	awk -v f="$faults" -v b="$1" '$1 ~ /^[0-9.]+$/ && $NF != "total" { n[$NF] = $4; all += $4 }
		END { path = n["read"] + n["ioctl"] + n["epoll_wait"] + n["rt_tgsigqueueinfo"] + n["getuid"] + n["getpid"] + n["rt_sigreturn"] + n["process_vm_readv"];
		      printf "%s: %d faults; system calls per fault: all %.2f, fault path %.2f (read %.2f, ioctl %.2f, epoll_wait %.2f, signal %.2f, process_vm_readv %.3f)\n",
		      b, f, all / f, path / f, n["read"] / f, n["ioctl"] / f, n["epoll_wait"] / f, n["rt_tgsigqueueinfo"] / f, n["process_vm_readv"] / f }' "$st"
}
if command -v strace >/dev/null; then
	syscalls_per_fault old "$old"
	syscalls_per_fault new "$new"
fi
