#!/usr/bin/env bash
# rt_exec_list: execl, execlp and execle (the shim's own versions, which collect the argument list
# and call execve or execvpe) with arguments past argv[0] after a heap of 16 MiB was filled at -L 4
# (tests/planted/exec_list.c). Each must run env(1) with exactly those arguments, and execle with
# exactly its environment: the output and exit status are the native run's (the shim once passed
# a pointer to its va_list parameter as a va_list: a crash, or EFAULT at -O0). execl with argv[0]
# alone is checked too. A process directory per traced image: the program, env, and the echo env
# runs (execle's environment, FOO=bar alone, has no LD_PRELOAD: env runs untraced, as it would).
# report --by process names each image by its directory.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted exec_list

for how in execl execlp execle execl0; do
	run_native "$how" "$PLANTED/exec_list" 16 "$how"
	expect_record "$how" -L 4 -M 256 -- "$PLANTED/exec_list" 16 "$how"
	same_output "$how" "$how"
	case $how in # env runs echo; execle's environment (FOO=bar alone) has no LD_PRELOAD: env untraced
	execl | execlp) images=3 ;; execle) images=1 ;; *) images=2 ;;
	esac
	check_stats "$how" --local $((4 * MIB)) --max $((256 * MIB)) --procs $images
done
[ "$(cat "$WORK/execle.native")" = "FOO=bar" ] || fail "execle's environment: $(cat "$WORK/execle.native")"
[ "$(cat "$WORK/execl.native")" = "one two three" ] || fail "execl's arguments: $(cat "$WORK/execl.native")"
check_ge "evictions before the exec" "$(stat_of execl evictions)" 1

# report --by process: a row per exec image, named as its directory (PID, PID.1, PID.2)
"$FAULTLINE" report "$WORK/execl" --by process --top 0 --format csv >"$WORK/byproc.csv" 2>"$WORK/byproc.err" ||
	fail "report --by process exited $?: $(cat "$WORK/byproc.err")"
names=$("$PY" -c 'import csv, sys; print(" ".join(sorted(r["process"] for r in csv.DictReader(open(sys.argv[1])))))' "$WORK/byproc.csv")
want=$(cd "$WORK/execl" && ls -d */ | tr -d / | sort | tr '\n' ' ' | sed 's/ $//')
[ "$names" = "$want" ] && [ "$(wc -w <<<"$names")" -eq 3 ] ||
	fail "report --by process names '$names', the directories are '$want'"
echo "ok report --by process: one row per exec image ($names)"
