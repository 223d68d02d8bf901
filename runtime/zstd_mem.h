/* zstd_mem.h: zstd's memory for the runtime's compressors (the allocation log, the frame writer),
 * taken with raw mmap outside the region: a runtime thread never allocates from, nor touches, the
 * program's heap. */
#ifndef FL_ZSTD_MEM_H
#define FL_ZSTD_MEM_H

#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

/* The allocator to pass to ZSTD_createCCtx_advanced. */
ZSTD_customMem fl_zstd_mem(void);

#endif
