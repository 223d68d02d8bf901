#!/usr/bin/env bash
# rt_threads: 4 threads, each filling and twice verifying its own malloc'd buffer, all faulting at
# the same time (tests/planted/threads.c), with the default number of handler threads, -c 1 and -c 2.
# Same checks as rt_fill: exit 0, same checksum as natively, first-touch faults between pages and
# pages + 2 % + 2048, refaults and evictions under -L, at most one fault per page per pass,
# peak_resident_bytes <= -L, records_dropped = 0.
# Default: the issue's 4 x 64 MiB with -L 32; FAULTLINE_TEST_LONG=1: 4 x 256 MiB, -L 128.
# And a program whose main thread ends with pthread_exit: it ends when its workers do (exit 0).
. "$(dirname "$0")/../lib.sh"
need_faultline
need_planted threads

threads=4
if [ "$LONG" = 1 ]; then size=256 local=128; else size=64 local=32; fi
max=1024
pages=$((threads * size * MIB / PAGE))
allow=$(first_touch_allowance "$pages")

run_native threads "$PLANTED/threads" "$threads" "$size"

for handlers in default 1 2; do
	name=threads-c$handlers
	opts=(-L "$local" -M "$max")
	[ "$handlers" = default ] || opts+=(-c "$handlers")
	expect_record "$name" "${opts[@]}" -- "$PLANTED/threads" "$threads" "$size"
	same_output "$name" threads
	summary "$name"
	check_stats "$name" --local $((local * MIB)) --max $((max * MIB)) --procs 1
	check_first_touch "$name" "$pages"
	check_ge "$name faults_refault" "$(stat_of "$name" faults_refault)" 1
	check_ge "$name evictions" "$(stat_of "$name" evictions)" 1
	check_le "$name faults_total" "$(stat_of "$name" faults_total)" $((3 * pages + allow))
done

# The main thread ends with pthread_exit while workers go on faulting (refaults from the mirror):
# when the last worker ends, the process ends with status 0, as natively (before, the runtime's
# threads kept it alive and record waited for ever); the runtime reads mirror pages by its
# handler's thread id, not the main thread's (gone: before, "process_vm_readv ... No such
# process" on stderr and direct reads from then on); the workers' sums come out right.
cat >"$WORK/main_exits.c" <<'C'
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static unsigned char *buf;
static void *worker(void *arg)
{
	uint32_t r = (uint32_t)(uintptr_t)arg + 1;
	unsigned long sum = 0;
	for (int i = 0; i < 20000; i++) {
		r = r * 1103515245u + 12345u;
		sum += buf[(r >> 3) % (32u << 20)];
	}
	if (sum != 20000ul)
		abort();
	return NULL;
}
int main(void)
{
	buf = malloc(32u << 20);
	memset(buf, 1, 32u << 20);
	pthread_t t[2];
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	pthread_exit(NULL);
}
C
gcc -O2 -pthread -o "$WORK/main_exits.bin" "$WORK/main_exits.c" || fail "cannot build main_exits.c"
expect_record main_exits -L 4M -- "$WORK/main_exits.bin"
! grep -q "process_vm_readv" "$WORK/main_exits.err" || fail "main thread gone: $(cat "$WORK/main_exits.err")"
check_ge "main_exits: refaults" "$(stat_of main_exits faults_refault)" 1000
echo "ok the main thread's pthread_exit: workers fault on, mirror pages read by the handler's own thread id"
