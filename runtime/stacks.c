/* stacks.c: call stacks — taking them (libunwind's unw_backtrace: DWARF CFI, correct for -O2
 * code without frame pointers, ~0.1-0.3 µs for 15 frames) and deduplicating them.
 *
 * The stack table is an open-addressing hash table (2^20 slots, raw mmap) from a 64-bit hash
 * of the frames to a stack id. Inserting is lock-free: a thread claims an empty slot with a
 * compare-and-swap of the hash, takes the next id, writes the stack's definition to its own
 * stream, then publishes the id. A lookup that finds a claimed but unpublished slot waits for
 * it in normal code; in a signal handler it must not (the claimer may be the code it
 * interrupted), so it defines the stack again under a new id: a duplicate definition, never
 * a wrong one. A full table likewise only costs duplicates. */
#include "stacks.h"
#include "context.h"
#include "stream.h"
#include "sys.h"
#include "diag.h"

#include <errno.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <sched.h>
#include <sys/mman.h>

#define TABLE_BITS 20
#define TABLE_SLOTS (1u << TABLE_BITS)
#define MAX_PROBES 64

struct slot {
	_Atomic uint64_t hash;
	_Atomic uint32_t id;
	uint32_t pad;
};

static struct slot *table;
static _Atomic uint32_t next_id = 1;

int fl_stacks_setup(struct fl_runtime *rt)
{
	(void)rt;
	table = fl_sys_reserve(TABLE_SLOTS * sizeof(struct slot), "mmap(stack table)");
	if (!table)
		return -1;
	/* libunwind's own system calls (its lock brackets, its memory validation) go straight to
	 * the kernel, never to an interposer of the shim or the program (import_patch.c) */
	fl_import_redirect("/libunwind", "sigprocmask", (void *)fl_sys_sigprocmask);
	fl_import_redirect("/libunwind", "read", (void *)fl_sys_read);
	fl_import_redirect("/libunwind", "write", (void *)fl_sys_write);
	unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
	return 0;
}

static uint64_t hash_frames(const uint64_t *frames, unsigned n, uint16_t flags)
{
	uint64_t h = 0xcbf29ce484222325ull ^ ((uint64_t)n << 16) ^ flags;
	for (unsigned i = 0; i < n; i++) {
		h ^= frames[i];
		h *= 0x100000001b3ull;
		h ^= h >> 29;
	}
	return h ? h : 1;
}

static uint32_t define(struct fl_stream *defs, uint64_t hash, const uint64_t *frames, unsigned n, uint16_t flags)
{
	struct fl_stack_record rec = {
		.stack_id = atomic_fetch_add(&next_id, 1),
		.nframes = (uint16_t)n,
		.flags = flags,
		.hash = hash,
	};
	fl_stream_append(defs, &rec, sizeof(rec), frames, n * sizeof(uint64_t));
	return rec.stack_id;
}

uint32_t fl_stack_intern(struct fl_stream *defs, const uint64_t *frames, unsigned n, uint16_t flags, bool may_wait)
{
	uint64_t h = hash_frames(frames, n, flags);
	for (unsigned probe = 0; probe < MAX_PROBES; probe++) {
		struct slot *s = &table[(h + probe) & (TABLE_SLOTS - 1)];
		uint64_t seen = atomic_load_explicit(&s->hash, memory_order_acquire);
		if (seen == 0) {
			if (!atomic_compare_exchange_strong(&s->hash, &seen, h)) {
				if (seen != h)
					continue; /* another stack took the slot: probe on */
			} else {
				uint32_t id = define(defs, h, frames, n, flags);
				atomic_store_explicit(&s->id, id, memory_order_release);
				return id;
			}
		}
		if (seen != h)
			continue;
		for (;;) {
			uint32_t id = atomic_load_explicit(&s->id, memory_order_acquire);
			if (id)
				return id;
			if (!may_wait)
				break;
			sched_yield();
		}
		break;
	}
	return define(defs, h, frames, n, flags);
}

/* The callers of the function that called this one, innermost first, without the frames of
 * libfaultline itself (so an allocation stack starts at the program's call to malloc). */
unsigned fl_stack_capture_here(uint64_t *frames, unsigned max)
{
	void *raw[FL_MAX_STACK_DEPTH + 16];
	int n = unw_backtrace(raw, (int)(max + 16 < FL_MAX_STACK_DEPTH + 16 ? max + 16 : FL_MAX_STACK_DEPTH + 16));
	unsigned out = 0;
	int i = 0;
	while (i < n && (uintptr_t)raw[i] >= fl_rt.own_text_start && (uintptr_t)raw[i] < fl_rt.own_text_end)
		i++;
	for (; i < n && out < max; i++)
		frames[out++] = (uint64_t)(uintptr_t)raw[i];
	return out;
}

/* In a forked child the parent's stack definitions are in the parent's file: start afresh. */
void fl_stacks_after_fork(void)
{
	fl_sys_madvise(table, TABLE_SLOTS * sizeof(struct slot), MADV_DONTNEED);
	atomic_store(&next_id, 1);
}
