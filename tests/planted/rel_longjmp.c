/* rel_longjmp.c: setjmp/longjmp and sigsetjmp/siglongjmp through frames whose heap data is evicted.
 *
 * One round: dive(DEPTH) recurses; every frame mallocs a 64 KiB block, fills it with the frame's
 * pattern, keeps a pointer in a table and a check value in a local; at the bottom the program
 * writes a pressure buffer larger than -L (so the blocks of every frame above are evicted), then
 * leaves all the frames at once:
 *   longjmp        from the bottom frame to the setjmp in main;
 *   siglongjmp     from a SIGUSR2 handler (raised at the bottom) that first reads every frame's
 *                  block itself (faults inside the handler), to a sigsetjmp with the mask saved;
 *   nested         longjmp to a setjmp in the middle frame, which checks its own locals and the
 *                  blocks of the frames above it, then longjmps again to main.
 * After each jump main verifies every block (refaults) and the values the frames left in volatile
 * locals, frees the blocks, and checks that the signal mask was restored (siglongjmp).
 *
 * usage: rel_longjmp [ROUNDS [DEPTH [PRESSURE_MiB]]]   (defaults 12, 64, 8)
 * stdout (identical in every correct run): one line per kind of jump and a checksum. */
#include "planted.h"
#include <setjmp.h>
#include <signal.h>

#define BLOCK_BYTES (64 * 1024)
#define BLOCK_WORDS (BLOCK_BYTES / 8)

enum kind { LONGJMP, SIGLONGJMP, NESTED, NKINDS };
static const char *kind_name[NKINDS] = { "longjmp", "siglongjmp", "nested" };

static jmp_buf top_env, middle_env;
static sigjmp_buf sig_env;
static uint64_t **blocks;          /* blocks[d]: the block of frame d */
static volatile uint64_t *frame_marks; /* frame d writes its mark here before diving on */
static unsigned depth, round_no;
static enum kind kind;
static uint64_t *pressure;
static size_t pressure_words;
static volatile uint64_t handler_sum;
static volatile unsigned middle_reached;

static uint64_t frame_seed(unsigned d)
{
	return 0x10000ULL * round_no + d + 1;
}

static void press(void)
{
	fill_words(pressure, pressure_words, round_no * 7 + 3);
}

static uint64_t check_frames(unsigned from, unsigned to, const char *who)
{
	uint64_t sum = 0;
	for (unsigned d = from; d < to; d++) {
		char what[96];
		snprintf(what, sizeof(what), "%s: round %u frame %u block", who, round_no, d);
		sum ^= verify_words(blocks[d], BLOCK_WORDS, frame_seed(d), what);
		if (frame_marks[d] != frame_seed(d) * 3)
			die("%s: round %u frame %u mark %#llx, want %#llx", who, round_no, d,
			    (unsigned long long)frame_marks[d], (unsigned long long)frame_seed(d) * 3);
	}
	return sum;
}

static void on_usr2(int sig)
{
	(void)sig;
	handler_sum = check_frames(0, depth, "signal handler");
	siglongjmp(sig_env, 1);
}

__attribute__((noinline)) static void dive(unsigned d)
{
	volatile uint64_t local_check = frame_seed(d) ^ 0x55;
	uint64_t *b = malloc(BLOCK_BYTES);
	if (!b)
		die_errno("malloc(frame %u)", d);
	fill_words(b, BLOCK_WORDS, frame_seed(d));
	blocks[d] = b;
	frame_marks[d] = frame_seed(d) * 3;
	if (kind == NESTED && d == depth / 2) {
		if (setjmp(middle_env)) {
			/* back in the middle frame: its local and the blocks above are intact */
			if (local_check != (frame_seed(d) ^ 0x55))
				die("round %u: middle frame local %#llx after longjmp", round_no, (unsigned long long)local_check);
			check_frames(0, d + 1, "middle frame after longjmp");
			middle_reached++;
			longjmp(top_env, 2);
		}
	}
	if (d + 1 < depth) {
		dive(d + 1);
		die("round %u: returned into frame %u: a jump did not happen", round_no, d);
	}
	press();
	switch (kind) {
	case LONGJMP: longjmp(top_env, 1);
	case SIGLONGJMP: raise(SIGUSR2); die("round %u: SIGUSR2 handler returned", round_no);
	case NESTED: longjmp(middle_env, 1);
	default: break;
	}
	/* not reached for a valid kind; the caller reports a dive that returns */
}

int main(int argc, char **argv)
{
	unsigned rounds = (unsigned)arg_ulong(argc, argv, 1, 12);
	depth = (unsigned)arg_ulong(argc, argv, 2, 64);
	size_t pressure_mib = arg_ulong(argc, argv, 3, 8);
	pressure_words = pressure_mib * MiB / 8;
	pressure = malloc(pressure_words * 8);
	blocks = calloc(depth, sizeof(*blocks));
	frame_marks = calloc(depth, sizeof(*frame_marks));
	if (!pressure || !blocks || !frame_marks)
		die_errno("malloc");
	struct sigaction sa = { .sa_handler = on_usr2 };
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR2, &sa, NULL))
		die_errno("sigaction(SIGUSR2)");

	uint64_t total = 0, per_kind[NKINDS] = { 0 };
	for (round_no = 0; round_no < rounds; round_no++) {
		kind = (enum kind)(round_no % NKINDS);
		volatile unsigned jumped = 0;
		if (kind == SIGLONGJMP) {
			if (sigsetjmp(sig_env, 1) == 0) {
				dive(0);
				die("round %u: dive returned", round_no);
			}
			jumped = 1;
			sigset_t cur;
			sigprocmask(SIG_BLOCK, NULL, &cur);
			if (sigismember(&cur, SIGUSR2))
				die("round %u: SIGUSR2 still blocked after siglongjmp (mask not restored)", round_no);
		} else {
			int v = setjmp(top_env);
			if (v == 0) {
				dive(0);
				die("round %u: dive returned", round_no);
			}
			if (v != (kind == NESTED ? 2 : 1))
				die("round %u: setjmp returned %d", round_no, v);
			jumped = 1;
		}
		if (!jumped)
			die("round %u: no jump", round_no);
		uint64_t sum = check_frames(0, depth, "main after the jump");
		if (kind == SIGLONGJMP && handler_sum != sum)
			die("round %u: the signal handler read checksum %#llx, main %#llx", round_no,
			    (unsigned long long)handler_sum, (unsigned long long)sum);
		per_kind[kind] ^= sum;
		total = (total ^ sum) * 0x100000001B3ULL;
		for (unsigned d = 0; d < depth; d++) {
			free(blocks[d]);
			blocks[d] = NULL;
		}
	}
	for (int k = 0; k < NKINDS; k++)
		printf("%s %016llx\n", kind_name[k], (unsigned long long)per_kind[k]);
	printf("rel_longjmp %u rounds depth %u: middle frame reached %u times, checksum %016llx\n", rounds, depth,
	       middle_reached, (unsigned long long)total);
	free(pressure);
	return 0;
}
