#!/usr/bin/env bash
# rt_interpose: the runtime's system calls go straight to the kernel, never through an interposer.
# tests/planted/rt_interpose.c defines read, write, pread, pwrite, poll, recv, send, sendmsg,
# sigaction, sigprocmask and pthread_sigmask itself (linked -rdynamic, so its definitions come
# first in lookup, before libfaultline.so's) and counts every call whose caller is outside its
# own code. Under record, with faults, evictions, stacks and the file far store all busy, that
# count must stay 0 (a runtime that called read(uffd) or write(trace) through libc's names, or
# libunwind's sigprocmask brackets, would land there by the thousand).
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted rt_interpose

run_native ip "$PLANTED/rt_interpose" 24 2
grep -q '^interpose own=11 foreign=0 ' "$WORK/ip.native" || fail "native run: $(cat "$WORK/ip.native")"
echo "ok native: $(cat "$WORK/ip.native")"

for far in mem "file:$WORK"; do
	for c in 1 2; do
		name="ip-${far%%:*}-c$c"
		expect_record "$name" -L 8 -M 256 -c "$c" --far "$far" -- "$PLANTED/rt_interpose" 24 2
		line=$(grep '^interpose ' "$WORK/$name.out")
		check_eq "$name: calls of the program's interposers from outside its code ($line)" \
			"$(echo "$line" | sed -n 's/.* foreign=\([0-9]*\).*/\1/p')" 0
		check_ge "$name evictions" "$(stat_of "$name" evictions)" 1
		check_ge "$name stacks taken" "$(stat_of "$name" contexts_written)" 1000
	done
done
