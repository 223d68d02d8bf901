/* thrash_warn.c: tells the user, once, that the program mostly waits for refaults (thrash_warn.h).
 *
 * A -L far below what a program uses makes it run at the speed of its page faults: each refault
 * costs tens of microseconds, so a program that refaults a million times runs a minute or more
 * where it took a second. Nothing told the user so while it ran (xz -9 at -L 8M ran for minutes
 * in silence). Handler 0 calls fl_thrash_check on its flush cadence; from 10 seconds on
 * (FAULTLINE_THRASH_WARN_AFTER), while the process has refaulted at least 5,000 times a second on
 * average (FAULTLINE_THRASH_WARN_RATE; both read at start, tests lower them) and refaults are most
 * of its faults, one line goes to stderr with the numbers and what to do. */
#include "thrash_warn.h"
#include "clock.h"
#include "context.h"
#include "diag.h"

static void buf_mib(struct fl_buf *b, uint64_t pages)
{
	fl_buf_u64(b, (pages * FL_PAGE_SIZE + (1 << 19)) >> 20);
	fl_buf_str(b, " MiB");
}

/* -L as record's banner shows it: tenths of a MiB below 10 MiB (-L 1500K is 1.5 MiB, not 1). */
static void buf_limit(struct fl_buf *b, uint64_t pages)
{
	uint64_t tenths = (pages * FL_PAGE_SIZE * 10 + (1 << 19)) >> 20;
	if (tenths >= 100 || tenths % 10 == 0) {
		buf_mib(b, pages);
		return;
	}
	fl_buf_u64(b, tenths / 10);
	fl_buf_str(b, ".");
	fl_buf_u64(b, tenths % 10);
	fl_buf_str(b, " MiB");
}

void fl_thrash_check(struct fl_runtime *rt)
{
	if (rt->thrash_warned || rt->local_limit_pages == 0)
		return;
	uint64_t elapsed_ns = fl_now_ns() - rt->start_ns;
	if (rt->thrash_warn_after_s == 0 || elapsed_ns < rt->thrash_warn_after_s * 1000000000ull)
		return;
	uint64_t refaults = 0, faults = 0;
	for (unsigned i = 0; i < rt->nhandlers; i++) {
		refaults += atomic_load_explicit(&rt->handlers[i].stats.refault, memory_order_relaxed);
		faults += atomic_load_explicit(&rt->handlers[i].stats.faults_total, memory_order_relaxed);
	}
	uint64_t seconds = elapsed_ns / 1000000000ull; /* >= 1 */
	if (refaults == 0 || refaults < rt->thrash_warn_rate * seconds || 2 * refaults < faults)
		return;
	rt->thrash_warned = true;
	char tmp[512];
	struct fl_buf b = { tmp, 0, sizeof(tmp) };
	fl_buf_str(&b, "note: ");
	fl_buf_u64(&b, seconds);
	fl_buf_str(&b, " s in, ");
	fl_buf_u64(&b, refaults / seconds);
	fl_buf_str(&b, " refaults a second at -L ");
	buf_limit(&b, rt->local_limit_pages);
	fl_buf_str(&b, " (peak heap so far ");
	/* what the program allocated, not the heap's address high-water mark (which counts the
	 * allocator's spread: xz's 45 MiB showed as 117) */
	buf_mib(&b, (atomic_load_explicit(&rt->peak_heap_bytes, memory_order_relaxed) + FL_PAGE_SIZE - 1) / FL_PAGE_SIZE);
	fl_buf_str(&b, "): the program runs at the speed of its page faults. More local"
		       " memory runs it quicker; `faultline record --mrc` (one run without -L) predicts the"
		       " refaults at every -L");
	fl_log(tmp);
}
