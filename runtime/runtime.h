/* runtime.h: the far-memory runtime's single context and its internal API.
 *
 * The runtime owns one region of virtual memory (the program's heap), registered with
 * userfaultfd. Every page of the region has one state byte (pages.h). Handler threads
 * (handler.c) read fault messages and serve them (fault.c); when local memory is at its
 * limit they evict pages (evict.c) into the far store (a mirror of the region in this
 * process's memory: far copy of page i at mirror + i * PAGE). Fault records go through
 * per-handler buffers to the trace files (trace_writer.c). The shim calls the functions
 * declared at the end of this file; it never touches page states itself. */
#ifndef FL_RUNTIME_H
#define FL_RUNTIME_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>

#include "faultline/trace.h"

#define FL_PAGE_SIZE 4096UL
#define FL_PAGE_SHIFT 12
#define FL_MAX_HANDLERS 16
#define FL_MSG_BATCH 64          /* uffd messages read per read(2) */
#define FL_EVICT_BATCH 64        /* pages evicted per eviction round, at least */
#define FL_TRACE_CHUNK 2048      /* fault records per handler buffer (64 KiB) */
#define FL_MIN_LOCAL_PAGES 256   /* -L below 1 MiB is refused */

enum fl_policy { FL_POLICY_CLOCK = 0, FL_POLICY_FIFO = 1 };

/* Counters owned by one handler thread (written only by it; read at exit). */
struct fl_handler_stats {
	_Atomic uint64_t faults_total, first_touch, refault, soft, concurrent;
	_Atomic uint64_t wp_faults;          /* write-protect messages (dirty tracking), not faults */
	_Atomic uint64_t records_written, records_dropped;
	_Atomic uint64_t busy_waits;         /* messages that waited for a page in transition */
};

struct fl_handler {
	struct fl_runtime *rt;
	pthread_t thread;
	unsigned index;
	int cpu;                             /* pinned CPU, or -1 */
	int wake_fd;                         /* eventfd: flush requests and shutdown */
	struct fl_handler_stats stats;
	/* trace buffer, owned by the handler thread */
	struct fl_fault_record *records;
	unsigned nrecords;
	_Atomic uint64_t flush_request, flush_done;
	int last_write_errno;
};

/* Eviction statistics (updated under the eviction lock or atomically). */
struct fl_evict_stats {
	_Atomic uint64_t evictions;          /* pages that left local memory for the far store */
	_Atomic uint64_t writebacks;         /* of those, pages whose content was written */
	_Atomic uint64_t evictions_clean;    /* of those, dropped because the far copy was valid */
	_Atomic uint64_t soft_evictions;     /* pages unmapped on trial (kept locally) */
	_Atomic uint64_t rounds;             /* eviction rounds */
	_Atomic uint64_t skipped_noaccess;   /* victims skipped because the program made them PROT_NONE */
};

/* Ring of page numbers: the FIFO order of the fifo policy, and the order of the soft pool. */
struct fl_page_ring {
	uint32_t *pages;
	uint32_t *epochs;
	size_t cap, head, tail;              /* entries in [head, tail), indices modulo cap */
};

struct fl_runtime {
	/* configuration */
	int pid;                             /* process the runtime belongs to */
	char dir[PATH_MAX];                  /* this process's trace directory */
	size_t local_limit_pages;            /* 0 = unlimited */
	size_t max_bytes;
	unsigned nhandlers;
	enum fl_policy policy;
	size_t soft_target_pages;            /* size of the trial-eviction pool (clock) */

	/* the region and its far copy */
	char *region;
	size_t region_pages;
	char *mirror;                        /* far store: page i at mirror + i * PAGE */
	_Atomic uint8_t *state;              /* one byte per page, see pages.h */
	uint32_t *epoch;                     /* per page: incremented at every install */

	/* userfaultfd */
	int uffd;
	uint64_t features;

	/* local memory accounting */
	_Atomic size_t local_pages;          /* resident + soft pages */
	_Atomic size_t peak_local_pages;
	_Atomic size_t soft_pages;           /* of local_pages, those unmapped on trial */
	bool write_protect;                  /* the kernel supports uffd write-protect (dirty tracking) */

	/* eviction */
	pthread_mutex_t evict_lock;          /* held by one handler at a time; app threads never take it */
	size_t clock_hand;                   /* page index, under evict_lock */
	struct fl_page_ring fifo;            /* pages in fault-in order (fifo policy), under evict_lock */
	struct fl_page_ring soft;            /* soft (trial-evicted) pages, oldest first, under evict_lock */
	struct fl_evict_stats evict;

	/* virtual address allocator (region.c), taken by app threads only */
	pthread_mutex_t va_lock;
	struct fl_extent *free_extents;
	size_t nfree, free_cap;
	size_t va_high_pages;                /* highest page ever handed out + 1 */
	_Atomic size_t heap_bytes, peak_heap_bytes;
	_Atomic bool exhausted_reported;

	/* handlers and trace */
	struct fl_handler handlers[FL_MAX_HANDLERS];
	_Atomic uint32_t next_seq;
	int faults_fd;
	struct fl_file_header file_header;
	uint64_t start_ns;
	_Atomic bool final_mode;             /* after shutdown: records written at once */
	_Atomic bool stopping;
};

/* Free range of the region, in pages. */
struct fl_extent {
	size_t first, count;
};

extern struct fl_runtime fl_rt;

/* Set on the runtime's own threads: the shim routes their allocations outside the region. */
extern __thread int fl_internal_thread;

/* ---- state of the runtime, for the shim ---- */
enum fl_rt_state { FL_RT_UNINIT = 0, FL_RT_INITIALIZING, FL_RT_READY, FL_RT_DISABLED };
extern _Atomic int fl_rt_state;

static inline bool fl_in_region(const void *p)
{
	return (const char *)p >= fl_rt.region && (const char *)p < fl_rt.region + fl_rt.region_pages * FL_PAGE_SIZE;
}

/* runtime.c */
int fl_runtime_init(void);            /* reads FAULTLINE_*; 0 = ready, 1 = disabled, -1 = failed */
void fl_runtime_shutdown(const char *why); /* flush records, write stats.json; handlers keep serving */
void fl_runtime_fork_child(void);     /* atfork child: new uffd, handlers, trace directory */
uint64_t fl_now_ns(void);

/* region.c: virtual memory of the region, in bytes (multiples of the page size) */
int fl_region_setup(struct fl_runtime *rt);
void *fl_region_alloc(size_t size, size_t align);
bool fl_region_alloc_at(void *addr, size_t size);
void fl_region_free(void *addr, size_t size);     /* discard + give the addresses back */
void fl_region_unmap(void *addr, size_t size);    /* the same for munmap: PROT_NONE until reused */
void fl_region_discard(void *addr, size_t size);  /* contents become zero; far copies dropped */
void fl_region_set_noaccess(void *addr, size_t size, bool noaccess);
void fl_region_report_exhausted(size_t request);

/* fault.c */
void fl_fault_serve_batch(struct fl_handler *h, const void *msgs, int n);

/* evict.c */
void fl_evict_make_room(struct fl_runtime *rt, size_t need);
void fl_evict_note_installed(struct fl_runtime *rt, size_t page);
int fl_evict_setup(struct fl_runtime *rt);
void fl_evict_rebuild_after_fork(struct fl_runtime *rt);

/* handler.c */
int fl_handlers_start(struct fl_runtime *rt);
void fl_handlers_flush(struct fl_runtime *rt);

/* trace_writer.c */
int fl_trace_open(struct fl_runtime *rt);
void fl_trace_append(struct fl_handler *h, const struct fl_fault_record *rec);
void fl_trace_flush(struct fl_handler *h);
void fl_trace_write_meta(struct fl_runtime *rt);
void fl_trace_write_stats(struct fl_runtime *rt, const char *exit_reason);

/* raw system calls that bypass the shim's interposed mmap family */
void *fl_sys_mmap(void *addr, size_t len, int prot, int flags, int fd, long off);
int fl_sys_munmap(void *addr, size_t len);
int fl_sys_madvise(void *addr, size_t len, int advice);
int fl_sys_mprotect(void *addr, size_t len, int prot);
void *fl_sys_mremap(void *old, size_t oldsz, size_t newsz, int flags, void *newaddr);

#endif
