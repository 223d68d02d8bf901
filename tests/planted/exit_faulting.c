/* exit_faulting.c: a program that ends on a caught SIGINT while its two threads fault: the main
 * thread calls exit() and the worker returns, unjoined, both at the flag. The runtime's handlers
 * serve faults until the very end; the process's exit_group can kill one between a fault and its
 * record's flush, and stats.json must not count such a fault.
 *
 * usage: exit_faulting N_MiB [MS]: the worker writes at random over N MiB, main over 2N, until a
 * SIGINT sets the flag: from outside, or (MS > 0) from main itself MS milliseconds in. Prints
 * "exit_faulting done". */
#include "planted.h"
#include <pthread.h>
#include <signal.h>
#include <time.h>

static size_t bytes;
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = sig;
}

/* A 32-bit LCG (its low bits cycle): pages in a scrambled order, over more than -L. */
static void write_randomly(unsigned char *p, size_t n, uint32_t *x)
{
	*x = *x * 1103515245u + 12345u;
	p[(*x >> 3) % n]++;
}

static uint64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

static void *worker(void *arg)
{
	unsigned char *p = malloc(bytes);
	uint32_t x = 7;
	(void)arg;
	if (!p)
		die("malloc(%zu) failed", bytes);
	while (!stop)
		write_randomly(p, bytes, &x);
	return p;
}

int main(int argc, char **argv)
{
	bytes = arg_ulong(argc, argv, 1, 32) * MiB;
	uint64_t ms = arg_ulong(argc, argv, 2, 0), end = ms ? now_ms() + ms : 0;
	signal(SIGINT, on_signal);
	pthread_t t;
	if (pthread_create(&t, NULL, worker, NULL) != 0)
		die("pthread_create failed");
	unsigned char *p = malloc(2 * bytes);
	uint32_t x = 1;
	if (!p)
		die("malloc(%zu) failed", 2 * bytes);
	fprintf(stderr, "exit_faulting %d started\n", (int)getpid());
	for (;;) {
		write_randomly(p, 2 * bytes, &x);
		if (end && (x & 0xfff) == 0 && now_ms() >= end) {
			kill(getpid(), SIGINT); /* taken by either thread */
			end = 0;
		}
		if (stop) {
			fprintf(stderr, "exit_faulting: signal %d, exiting\n", (int)stop);
			printf("exit_faulting done\n");
			exit(0);
		}
	}
}
