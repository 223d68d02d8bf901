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
 *   sites       allocation sites (fl_site_record): exact per-site aggregates, rewritten in place every ~100 ms and at exit
 *   maps        text: snapshots of /proc/self/maps, each after a line
 *               "# maps <time_ns> <reason>" (reason: start, dlopen, exec, exit); a reader uses
 *               the latest snapshot taken before the time it symbolizes (or the last one)
 *   ranges.rap  the runtime's online RAP tree of every fault's page (inc/faultline/rap.h, rap_serialize)
 *   evictions   eviction events (fl_evict_record): every page the eviction policy took out of
 *               memory, on the same flush cadence as fault records. Each evicting thread (the
 *               evictor, a fault handler evicting inline) appends its own chunks: readers sort
 *               by time
 *   timeline    counter samples over time (fl_timeline_record): per thread and per process, every
 *               `record --timeline MS` and every `--timeline-every N` faults (see "Timeline" below)
 *
 * Integers are in the writer's byte order, which the header's 64-bit magic reveals: it reads as
 * FL_TRACE_MAGIC in the same order and as FL_TRACE_MAGIC_SWAPPED in the other (faultline runs on
 * x86-64: little-endian, and its reader refuses the other order by name). Every binary file
 * starts with an fl_file_header; records follow back to back from offset header_size, each
 * exactly header.record_size bytes. Records are appended in chunks; a file cut short by a crash
 * ends in a partial record, which a reader must report as a truncated tail, not as data.
 *
 * Extension rule: the header and the records only grow at their end. A reader takes the fields
 * it knows from the first bytes (header_size and record_size may be larger than the structs it
 * knows: the unknown tail is skipped; sizes stay multiples of 8) and treats fields beyond a
 * shorter record_size as absent (the FL_*_SIZE_V* constants name the sizes that have existed).
 * So a new field is not a format break, as with perf.data's attr_size.
 *
 * Versions. 3 (this file): the faults, contexts and evictions files are framed and compressed
 * (see "Framed files" below); every other file is as in version 2. 2: 64-bit seq in fault and
 * context records, every file a header and fixed-size records. 1: the same files with a
 * 32-bit seq (struct layouts: FL_FAULT_RECORD_V1_* and FL_CONTEXT_V1_* below), which wrapped at
 * 2^32; the reader reads both. Version-1 fault records of 32 bytes have no object fields: a
 * reader then joins faults to objects through the allocation log. */
#ifndef FAULTLINE_TRACE_H
#define FAULTLINE_TRACE_H

#include <stdint.h>

/* The bytes "FLTRACE\0" as a little-endian 64-bit integer (version 1 wrote the same 8 bytes as a
 * string): a reader of the other byte order sees FL_TRACE_MAGIC_SWAPPED. */
#define FL_TRACE_MAGIC         0x0045434152544c46ull
#define FL_TRACE_MAGIC_SWAPPED 0x464c545241434500ull
#define FL_TRACE_VERSION 4
#define FL_TRACE_VERSION_FRAMED 3 /* the first version whose faults, contexts, evictions are framed */
#define FL_TRACE_VERSION_WAIT 4   /* the first whose framed fault records may carry wait_ns */

enum fl_file_kind {
	FL_FILE_FAULTS = 1,
	FL_FILE_STACKS = 2,   /* record_size = 0: records are variable-sized */
	FL_FILE_ALLOCS = 3,
	FL_FILE_CONTEXTS = 4,
	FL_FILE_SITES = 5,
	FL_FILE_ALLOCS_ZSTD = 6, /* record_size = sizeof(fl_alloc_record) once decoded */
	FL_FILE_TIMELINE = 7,
	FL_FILE_EVICTIONS = 8,
};

struct fl_file_header {
	uint64_t magic;         /* FL_TRACE_MAGIC, in the writer's byte order */
	uint32_t version;       /* FL_TRACE_VERSION */
	uint32_t kind;          /* enum fl_file_kind */
	uint32_t header_size;   /* where the records start: sizeof(struct fl_file_header) = 64, or
	                         * more when a later version adds fields (a reader skips them) */
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

/* One message delivered by the kernel for a page of the region. 80 bytes; version-2 records of
 * 64 bytes (FL_FAULT_RECORD_SIZE_V2) have no thread_time_ns, service_ns and wait_ns (a reader
 * treats them as 0 = unknown), and version-3 files no wait_ns. Version-1 records are decoded into this struct (see below). */
struct fl_fault_record {
	uint64_t time_ns;  /* nanoseconds since fl_file_header.start_ns, when the handler read it */
	uint64_t addr;     /* exact faulting address (UFFD_FEATURE_EXACT_ADDRESS), all 64 bits */
	uint64_t seq;      /* per-process sequence number, 0, 1, 2, ... in the order served */
	uint32_t tid;      /* faulting thread (UFFD_FEATURE_THREAD_ID) */
	uint32_t stack_id; /* index into the stacks table; 0 = no stack */
	uint8_t kind;      /* enum fl_fault_kind */
	uint8_t flags;     /* FL_FAULT_* */
	uint8_t handler;   /* index of the handler thread that served it */
	uint8_t reserved;  /* zero */
	uint32_t reserved2; /* zero */
	/* The live object the address was in when the fault was served (runtime/live_objects.c):
	 * malloc-family objects and anonymous mmaps of the region. obj_addr 0 = in no live object. */
	uint64_t obj_addr;     /* the object's first byte */
	uint64_t obj_size;     /* its requested size, bytes */
	uint32_t obj_alloc_id; /* its alloc_id: joins the allocs record when the object was logged */
	uint32_t obj_stack_id; /* its allocation site's stack (as in the sites file); 0 = unknown */
	/* The program's own time axis: the faulting thread's task-clock (CPU time, ns) at the fault,
	 * from the fault's perf sample (no system call). 0 = unknown: the fault had no usable sample
	 * (its thread's first fault, sampling off or `-s N`); its context may then hold task-clock
	 * among its pmu values. */
	uint64_t thread_time_ns;
	uint32_t service_ns;   /* from the handler reading the message to the wake-up of the faulting
	                        * thread being issued (or, for a stack taken by signal, the signal
	                        * sent); saturates at UINT32_MAX. 0 = unknown */
	uint32_t wait_ns;      /* from the fault itself (the kernel's time of its page-fault event) to the
	                        * handler reading its message: how long the thread waited for a
	                        * handler to wake; saturates at UINT32_MAX. 0 = unknown (the fault had
	                        * no usable perf sample, as for thread_time_ns) */
};

/* Version-1 fault records: 32 bytes (no object fields), or 56 with them. time_ns and addr as in
 * version 2, the other fields at these offsets (the 24 bytes of object fields in version 2's
 * order from FL_FAULT_RECORD_V1_OBJ). */
#define FL_FAULT_RECORD_SIZE_V1 32
#define FL_FAULT_RECORD_V1_TID 16      /* uint32_t */
#define FL_FAULT_RECORD_V1_SEQ 20      /* uint32_t */
#define FL_FAULT_RECORD_V1_STACK_ID 24 /* uint32_t; kind, flags, handler, reserved follow (u8) */
#define FL_FAULT_RECORD_V1_OBJ 32      /* obj_addr, obj_size, obj_alloc_id, obj_stack_id */
#define FL_FAULT_RECORD_SIZE_V2 64     /* version 2 without thread_time_ns, service_ns, wait_ns */

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
	uint64_t seq;            /* the fault record's seq */
	uint32_t stack_id;       /* its call stack (frame 0 = faulting PC); 0 = none */
	uint32_t tid;            /* faulting thread (same as the fault record's) */
	uint32_t npmu;           /* how many pmu values are valid (meta.json names the events) */
	uint32_t reserved;       /* zero */
	uint64_t pmu[FL_PMU_MAX];/* the thread's counter values (cumulative, per thread) */
};
/* Version-1 contexts: 48 bytes, u32 seq, stack_id, tid, npmu, then pmu[] at 16. */
#define FL_CONTEXT_SIZE_V1 48
#define FL_CONTEXT_V1_PMU 16

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

/* Why the eviction policy took a page (runtime/evict.c). */
enum fl_evict_decision {
	FL_EVICT_CLOCK_TRIAL = 1, /* clock: the hand found the page unreferenced and unmapped it on trial
	                           * into the soft pool (still local; a touch is a soft fault) */
	FL_EVICT_CLOCK_SOFT = 2,  /* clock: the oldest soft page, evicted to the far store for room */
	FL_EVICT_SOFT_CAP = 3,    /* clock: a soft page evicted to the far store because the soft pool's
	                           * ring was full (its cap), not for room */
	FL_EVICT_FIFO = 4,        /* fifo: the oldest page in fault-in order, to the far store */
	FL_EVICT_CLOCK_DIRECT = 5, /* clock: the hand found the page unreferenced and evicted it to the far
	                           * store without a trial (the adaptive clock is measuring direct
	                           * eviction, or found that trial unmaps cost more faults than they
	                           * saved) */
};
#define FL_EVICT_DECISION_MAX FL_EVICT_CLOCK_DIRECT

/* Flags of an eviction record. */
#define FL_EVICT_DIRTY  0x01 /* the page was written since its far copy was made: its content was
                              * saved (written back); absent: clean, the far copy was valid */
#define FL_EVICT_INLINE 0x02 /* evicted by a fault handler that found no free local page, not by
                              * the evictor thread that keeps the reserve */

/* One page taken out of local memory. 24 bytes. CLOCK_TRIAL records count as stats.json
 * "soft_evictions", the others as "evictions" (DIRTY ones as "writebacks", clean ones as
 * "evictions_clean"). */
struct fl_evict_record {
	uint64_t time_ns;   /* since fl_file_header.start_ns */
	uint64_t addr;      /* the page's first byte */
	uint8_t decision;   /* enum fl_evict_decision */
	uint8_t flags;      /* FL_EVICT_* */
	uint8_t reserved[6];
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

/* Framed files (from version 3: faults, contexts, evictions). After the fl_file_header (record_size
 * is the size of the record struct once decoded), the file is a sequence of frames, each written
 * whole with one write(2) by the runtime's trace writer thread:
 *   struct fl_frame_header, then compressed_size bytes: one zstd frame that decompresses to
 *   exactly encoded_size bytes, the nrecords records encoded back to back.
 * A record is encoded field by field as LEB128 varints of the difference from the same field of
 * the previous record of the frame (zigzag-encoded; the first record against all zeros), so
 * neighbours that differ little (time, address, seq, thread, stack) take a byte or two before
 * compression (lib/record_codec.c has the field order; from version 4 a fault's kind byte with
 * 0x80 set is followed, after service_ns, by its wait_ns). Frames are independent: a reader can
 * count records from the frame headers alone, skip frames and read them in parallel. A file cut
 * by a crash ends inside a frame: the frames before it are whole. Within a frame and from frame
 * to frame, the records of one writer (a handler, a thread) stay in the order it wrote them. */
#define FL_FRAME_MAGIC 0x52464c46u /* "FLFR" */
#define FL_FRAME_ENCODED_MAX (4u << 20) /* the most encoded bytes a frame may hold */
struct fl_frame_header {
	uint32_t magic;            /* FL_FRAME_MAGIC */
	uint32_t nrecords;         /* records in the frame (>= 1) */
	uint32_t compressed_size;  /* bytes of the zstd frame that follows */
	uint32_t encoded_size;     /* bytes it decompresses to (<= FL_FRAME_ENCODED_MAX) */
};

/* Timeline (the timeline file): counters sampled over time, PMCTrack-style, by the runtime's
 * sampler thread every meta.json "timeline_ms" milliseconds (time-based) and, when
 * "timeline_every" is not 0, by the fault handler that serves every N-th fault (event-based).
 * A record is a thread's sample (tid != 0: its own perf counters, read by the sampler with
 * read(2)) or its process's (tid 0: the sum of its application threads' counters, ended threads
 * included, and the runtime's own virtual counters). `valid` says which values[] a record holds
 * (bit i = values[i]); every value is cumulative since the process's runtime start except the
 * gauges FL_TL_RESIDENT_PAGES and FL_TL_SOFT_PAGES. Samples from different writers (the sampler,
 * the handlers) are not in file order: readers sort by time. Event-based samples hold only the
 * virtual counters (no system call is made on the fault path). The hardware counters are valid
 * only where this machine counts them. A thread's counters start when the sampler first sees it
 * (within one period of its first allocation), so its first moments may be missing. */
enum fl_timeline_counter {
	FL_TL_TASK_CLOCK = 0,      /* ns of CPU time of the program's threads (the runtime's excluded) */
	FL_TL_PAGE_FAULTS = 1,     /* perf page-faults (every fault of the threads, not only the region's) */
	FL_TL_CONTEXT_SWITCHES = 2,
	FL_TL_INSTRUCTIONS = 3,    /* hardware, where present */
	FL_TL_CYCLES = 4,          /* hardware, where present */
	FL_TL_RESIDENT_PAGES = 5,  /* gauge: pages of the region mapped now (local minus soft) */
	FL_TL_SOFT_PAGES = 6,      /* gauge: pages unmapped on trial, kept locally */
	FL_TL_FAR_READ_BYTES = 7,  /* bytes read from the far store (refaults and read-ahead) */
	FL_TL_FAR_WRITE_BYTES = 8, /* bytes written to the far store (write-backs) */
	FL_TL_EVICTIONS = 9,       /* pages that left local memory for the far store */
	FL_TL_WRITEBACKS = 10,     /* of those, pages whose content was written */
	FL_TL_FIRST_TOUCH = 11,    /* faults by kind (enum fl_fault_kind) */
	FL_TL_REFAULTS = 12,
	FL_TL_SOFT_FAULTS = 13,
	FL_TL_CONCURRENT = 14,
	FL_TL_COUNTERS = 15,       /* values[] slots in use; values[15] is zero */
};

/* Why a timeline record was written. */
enum fl_timeline_reason {
	FL_TL_PERIODIC = 1,        /* the sampler's period */
	FL_TL_EVERY_N = 2,         /* the N-th fault (a handler) */
	FL_TL_FINAL = 3,           /* the thread ended, or the process is shutting down */
};

/* One sample. 144 bytes. */
struct fl_timeline_record {
	uint64_t time_ns;          /* since fl_file_header.start_ns (CLOCK_MONOTONIC) */
	uint32_t tid;              /* the thread sampled; 0 = the whole process */
	uint8_t reason;            /* enum fl_timeline_reason */
	uint8_t reserved;          /* zero */
	uint16_t valid;            /* bit i: values[i] holds a value */
	uint64_t values[16];       /* indexed by enum fl_timeline_counter */
};

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
FL_STATIC_ASSERT(sizeof(struct fl_fault_record) == 80, "fault record is 80 bytes");
FL_STATIC_ASSERT(sizeof(struct fl_evict_record) == 24, "eviction record is 24 bytes");
FL_STATIC_ASSERT(sizeof(struct fl_fault_context) == 56, "fault context is 56 bytes");
FL_STATIC_ASSERT(sizeof(struct fl_stack_record) == 16, "stack record header is 16 bytes");
FL_STATIC_ASSERT(sizeof(struct fl_alloc_record) == 40, "alloc record is 40 bytes");
FL_STATIC_ASSERT(sizeof(struct fl_site_record) == 72, "site record is 72 bytes");
FL_STATIC_ASSERT(sizeof(struct fl_timeline_record) == 144, "timeline record is 144 bytes");
FL_STATIC_ASSERT(sizeof(struct fl_frame_header) == 16, "frame header is 16 bytes");

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
#define FL_FILE_NAME_EVICTIONS "evictions"
#define FL_FILE_NAME_TIMELINE "timeline"
/* --far memcached: the key prefix of each generation the process wrote ("fl" + 16 hex digits, one
 * a line, appended before the generation's first item is stored), so `record` can delete the
 * process's items from the servers once every traced process has exited (even one killed with
 * SIGKILL). */
#define FL_FILE_NAME_FAR_KEYS "far_keys"

/* In the recording's directory: how the traced command ended, written by `record` once it has
 * waited for it: one line, "exit N" (its exit status) or "signal N" (the signal that killed it).
 * Absent when record itself was killed, and in recordings made before it existed. */
#define FL_FILE_NAME_EXIT "exit"

#endif
