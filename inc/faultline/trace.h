/* trace.h: the on-disk trace format, shared by the runtime (writer) and the tools (reader).
 *
 * A recording is a directory DIR holding one subdirectory per traced process, named by its
 * pid in decimal. Each process directory holds:
 *   meta.json   what was traced and how (command line, limits, features, clock origin)
 *   stats.json  counters written at exit (absent if the process was killed by SIGKILL)
 *   faults      fault records (fl_fault_record), one per message the kernel delivered
 *   contexts    fault contexts (fl_fault_context): the stack and PMU values of a fault, written
 *               by the handler that served it or by the faulting thread itself; joined to
 *               `faults` by seq. A fault without a context had no stack wanted (sampling) or
 *               none could be taken.
 *   stacks      call stacks (fl_stack_record, variable size), each defined once, by stack_id
 *   allocs      allocation events (fl_alloc_record): malloc family and anonymous mmap. By default
 *               (meta.json "alloc_log": "sampled") only a sample: an allocation is logged when its
 *               thread has allocated another "alloc_sample_bytes" bytes (on average; the interval
 *               is random), every allocation of at least one page is logged, and so is the end
 *               (FREE/MUNMAP) of every logged object. Faults do not need the log: each fault
 *               record names the object it hit and that object's site.
 *   allocs.zst  with `record --alloc-log full` instead of allocs: every allocation event, as zstd
 *               frames of encoded chunks (see "Full allocation log" below)
 *   sites       allocation sites (fl_site_record): exact per-site aggregates, written at exit
 *   maps        text: snapshots of /proc/self/maps, each after a line
 *               "# maps <time_ns> <reason>" (reason: start, dlopen, exec, exit); a reader uses
 *               the latest snapshot taken before the time it symbolizes (or the last one)
 *   ranges.rap  the runtime's online RAP tree of every fault's page (inc/faultline/rap.h, rap_serialize)
 *
 * All integers are little-endian (the only byte order faultline runs on is x86-64). Every
 * binary file starts with an fl_file_header; records follow back to back, each exactly
 * header.record_size bytes. Records are appended in chunks; a file cut short by a crash
 * ends in a partial record, which a reader must report as a truncated tail, not as data.
 *
 * Extension rule: a record only grows at its end. A reader takes the fields it knows from the
 * first bytes of each record (record_size may be larger than the struct it knows: the unknown
 * tail is skipped; record sizes stay multiples of 8) and treats fields beyond a shorter
 * record_size as absent (the FL_*_SIZE_V* constants name the sizes that have existed). So a new
 * field is not a format break. Version-1 fault records (32 bytes) have no object fields: a
 * reader then joins faults to objects through the allocation log. */
#ifndef FAULTLINE_TRACE_H
#define FAULTLINE_TRACE_H

#include <stdint.h>

#define FL_TRACE_MAGIC   "FLTRACE"   /* 7 characters + NUL = 8 bytes */
#define FL_TRACE_VERSION 1

enum fl_file_kind {
	FL_FILE_FAULTS = 1,
	FL_FILE_STACKS = 2,   /* record_size = 0: records are variable-sized */
	FL_FILE_ALLOCS = 3,
	FL_FILE_CONTEXTS = 4,
	FL_FILE_SITES = 5,
	FL_FILE_ALLOCS_ZSTD = 6, /* record_size = sizeof(fl_alloc_record) once decoded */
};

struct fl_file_header {
	char magic[8];          /* FL_TRACE_MAGIC, NUL-terminated */
	uint32_t version;       /* FL_TRACE_VERSION */
	uint32_t kind;          /* enum fl_file_kind */
	uint32_t header_size;   /* sizeof(struct fl_file_header) = 64 */
	uint32_t record_size;   /* size of every record that follows */
	uint32_t pid;           /* process that wrote the file */
	uint32_t page_size;     /* page size of the region, bytes */
	uint64_t start_ns;      /* CLOCK_MONOTONIC at runtime start; record times are relative to it */
	uint64_t region_start;  /* first address of the managed region */
	uint64_t region_size;   /* bytes reserved for the region (-M) */
	uint64_t reserved;      /* zero */
};

/* What a fault did. */
enum fl_fault_kind {
	FL_FAULT_FIRST_TOUCH = 1, /* page never held data since (re)allocation: served with zeros */
	FL_FAULT_REFAULT = 2,     /* page was evicted to the far store: copied back */
	FL_FAULT_SOFT = 3,        /* page was unmapped by the eviction policy on trial, kept locally */
	FL_FAULT_CONCURRENT = 4,  /* another message already brought the page in; only woken */
	FL_FAULT_ACCESS_SAMPLE = 5, /* not a fault of the program's memory traffic: a re-touch of a page
	                             * the access prober (runtime/probe.c: record --mrc,
	                             * --sample-accesses) had unmapped on trial, kept locally. Counted
	                             * apart from the other kinds (stats.json "access_samples") */
};
#define FL_FAULT_KIND_MAX FL_FAULT_ACCESS_SAMPLE /* the highest enum fl_fault_kind value */

/* Flags of a fault record. */
#define FL_FAULT_WRITE        0x01 /* the access was a write */
#define FL_FAULT_PREFETCH_HIT 0x02 /* served from pages prefetched into local staging */
#define FL_FAULT_NO_STACK     0x04 /* a stack was wanted but could not be taken */
#define FL_FAULT_OBJECT       0x08 /* the runtime looked the address up in its live objects: the obj_*
                                    * fields are valid (obj_addr 0: in no live object) */

/* One message delivered by the kernel for a page of the region. 56 bytes (32 before the object
 * fields: FL_FAULT_RECORD_SIZE_V1; a reader then joins faults to objects through the allocs log). */
struct fl_fault_record {
	uint64_t time_ns;  /* nanoseconds since fl_file_header.start_ns, when the handler read it */
	uint64_t addr;     /* exact faulting address (UFFD_FEATURE_EXACT_ADDRESS), all 64 bits */
	uint32_t tid;      /* faulting thread (UFFD_FEATURE_THREAD_ID) */
	uint32_t seq;      /* per-process sequence number, 0, 1, 2, ... in the order served */
	uint32_t stack_id; /* index into the stacks table; 0 = no stack */
	uint8_t kind;      /* enum fl_fault_kind */
	uint8_t flags;     /* FL_FAULT_* */
	uint8_t handler;   /* index of the handler thread that served it */
	uint8_t reserved;  /* zero */
	/* The live object the address was in when the fault was served (runtime/live_objects.c):
	 * malloc-family objects and anonymous mmaps of the region. obj_addr 0 = in no live object. */
	uint64_t obj_addr;     /* the object's first byte */
	uint64_t obj_size;     /* its requested size, bytes */
	uint32_t obj_alloc_id; /* its alloc_id: joins the allocs record when the object was logged */
	uint32_t obj_stack_id; /* its allocation site's stack (as in the sites file); 0 = unknown */
};
#define FL_FAULT_RECORD_SIZE_V1 32

/* The context of one fault: its call stack and the faulting thread's counters at the fault.
 * Taken by the handler that served the fault, from the perf sample the fault left (registers
 * and counter values; the stack unwound while the thread slept in the fault), or, without a
 * usable sample, by the faulting thread itself in a signal handler that runs before the
 * faulting instruction re-executes or when the system call that faulted returns. For a fault
 * inside a system call the stack starts at the call's caller (frame 0 a return address, no
 * FL_STACK_EXACT_PC). Contexts come from several writers in no particular order; in seq order
 * a thread's PMU values never decrease (readers order them so). */
#define FL_PMU_MAX 4
struct fl_fault_context {
	uint32_t seq;            /* the fault record's seq */
	uint32_t stack_id;       /* its call stack (frame 0 = faulting PC); 0 = none */
	uint32_t tid;            /* faulting thread (same as the fault record's) */
	uint32_t npmu;           /* how many pmu values are valid (meta.json names the events) */
	uint64_t pmu[FL_PMU_MAX];/* the thread's counter values (cumulative, per thread) */
};

/* Stack flags. */
#define FL_STACK_EXACT_PC  0x01 /* frame 0 is an exact PC (the faulting instruction), not a return address */
#define FL_STACK_TRUNCATED 0x02 /* deeper than --stack-depth: the outermost frames are missing */

/* A call stack, innermost frame first: 16 bytes + 8 per frame. Stack ids start at 1. */
struct fl_stack_record {
	uint32_t stack_id;
	uint16_t nframes;
	uint16_t flags;          /* FL_STACK_* */
	uint64_t hash;           /* hash of the frames, as used for deduplication */
	/* uint64_t frames[nframes] follow */
};

enum fl_alloc_kind {
	FL_ALLOC_MALLOC = 1,  /* malloc, calloc, memalign & co, and the new block of a realloc */
	FL_ALLOC_FREE = 2,    /* free, and the old block of a realloc that moved */
	FL_ALLOC_MMAP = 3,    /* anonymous mmap served from the region */
	FL_ALLOC_MUNMAP = 4,  /* munmap of region memory (size = bytes unmapped) */
};

/* Flags of an allocation record. */
#define FL_ALLOC_SAMPLED 0x01 /* logged by byte sampling: stands for about alloc_sample_bytes bytes of
                               * allocations of its site (absent: logged because every allocation
                               * is (full log), or because it is >= 1 page) */

/* One allocation event. 40 bytes. An allocation is live from its MALLOC/MMAP record to the
 * FREE/MUNMAP record of the same address (a partial MUNMAP shrinks it). */
struct fl_alloc_record {
	uint64_t time_ns;    /* since fl_file_header.start_ns */
	uint64_t addr;
	uint64_t size;       /* requested bytes (MALLOC/MMAP/MUNMAP); 0 for FREE */
	uint32_t tid;
	uint32_t stack_id;   /* allocation site's stack (0 = none) */
	uint32_t alloc_id;   /* per-process unique id of a MALLOC/MMAP object, >= 1 (handed out to
	                      * threads in blocks: unique, not in time order); 0 for FREE/MUNMAP */
	uint8_t kind;        /* enum fl_alloc_kind */
	uint8_t flags;       /* FL_ALLOC_* */
	uint8_t reserved[2];
};

/* Site flags. */
#define FL_SITE_OVERFLOW 0x01 /* the runtime's site table was full: every later site is counted here */

/* One allocation site: where the program called the allocator (the return address of the call,
 * or for C++ operator new the call of operator new), with exact aggregates over the whole run.
 * 72 bytes. Written at exit (absent after SIGKILL). */
struct fl_site_record {
	uint32_t stack_id;         /* the stack of the site's first allocation (its DWARF unwind) */
	uint32_t flags;            /* FL_SITE_* */
	uint64_t key;              /* the return-address key the runtime interned the site by */
	uint64_t allocs;           /* objects allocated (malloc family, mmap) */
	uint64_t frees;            /* of those, freed (or unmapped whole) */
	uint64_t bytes;            /* requested bytes allocated */
	uint64_t live_peak_bytes;  /* the most bytes of this site live at once */
	uint64_t live_bytes;       /* bytes still live when the record was written */
	uint64_t objects_faulted;  /* objects of this site that took at least one fault */
	uint64_t faults;           /* faults on objects of this site */
};

/* Full allocation log (allocs.zst). After the fl_file_header (kind FL_FILE_ALLOCS_ZSTD), the
 * file is a sequence of zstd frames, each written whole by one thread with one write(2). A frame
 * decompresses to one chunk: a 16-byte chunk header, then nevents encoded events of that thread
 * in its time order. Integers are LEB128 varints; signed deltas are zigzag-encoded.
 *   header: u32 magic FL_ALLOC_CHUNK_MAGIC, u32 tid, u32 nevents, u32 zero
 *   event:  u8 kind | flags << 4; varint time_ns delta (from 0, then from the previous event);
 *           varint zigzag(addr - previous addr, from 0); unless FREE: varint size;
 *           MALLOC/MMAP only: varint stack_id, varint zigzag(alloc_id - previous alloc_id, from 0)
 * Decoded, each event is an fl_alloc_record (tid from the chunk header). A file cut by a crash
 * ends inside a frame: a reader keeps the complete frames and reports the cut tail. */
#define FL_ALLOC_CHUNK_MAGIC 0x31435a46u /* "FZC1" */

/* Spatial sampling of pages (record --mrc, SHARDS-style): page number P of the region (address -
 * region_start, divided by the page size) is sampled when fl_probe_page_hash(P) is below the
 * threshold of stats.json "mrc_threshold" (meta.json "mrc_threshold" at start; the runtime lowers
 * it when more pages than "mrc_max_pages" are sampled, and a page once dropped is never taken
 * again, so the pages under the final threshold were followed from their first touch). The
 * sampling rate is threshold / 2^32. Every access the runtime saw to a sampled page is a fault
 * record (first-touch, refault, soft or access-sample): that stream gives the reuse distances. */
static inline uint32_t fl_probe_page_hash(uint64_t page)
{
	uint64_t x = page + 0x9e3779b97f4a7c15ULL; /* splitmix64's finalizer */
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return (uint32_t)(x >> 32);
}

#ifdef __cplusplus
#define FL_STATIC_ASSERT static_assert
#else
#define FL_STATIC_ASSERT _Static_assert
#endif
FL_STATIC_ASSERT(sizeof(struct fl_file_header) == 64, "file header is 64 bytes");
FL_STATIC_ASSERT(sizeof(struct fl_fault_record) == 56, "fault record is 56 bytes");
FL_STATIC_ASSERT(sizeof(struct fl_fault_context) == 48, "fault context is 48 bytes");
FL_STATIC_ASSERT(sizeof(struct fl_stack_record) == 16, "stack record header is 16 bytes");
FL_STATIC_ASSERT(sizeof(struct fl_alloc_record) == 40, "alloc record is 40 bytes");
FL_STATIC_ASSERT(sizeof(struct fl_site_record) == 72, "site record is 72 bytes");

/* Names of the files in a process directory. */
#define FL_FILE_NAME_META   "meta.json"
#define FL_FILE_NAME_STATS  "stats.json"
#define FL_FILE_NAME_FAULTS "faults"
#define FL_FILE_NAME_CONTEXTS "contexts"
#define FL_FILE_NAME_STACKS "stacks"
#define FL_FILE_NAME_ALLOCS "allocs"
#define FL_FILE_NAME_ALLOCS_ZSTD "allocs.zst"
#define FL_FILE_NAME_SITES "sites"
#define FL_FILE_NAME_MAPS "maps"
#define FL_FILE_NAME_RAP "ranges.rap"

#endif
