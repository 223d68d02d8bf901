/* zstd_mem.h: zstd's memory for the runtime's compressors (the allocation log, the frame writer),
 * taken with raw mmap outside the region: a runtime thread never allocates from, nor touches, the
 * program's heap. */
#ifndef FL_ZSTD_MEM_H
#define FL_ZSTD_MEM_H

#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

/* The allocator to pass to ZSTD_createCCtx_advanced. */
ZSTD_customMem fl_zstd_mem(void);

/* A compression context over that allocator for ZSTD_compress2 at LEVEL, each zstd frame with its
 * content checksum (XXH64, 4 bytes): a reader's decompression then fails on a frame whose bytes
 * changed, where without it a flipped byte could decode into other records unseen. NULL when it
 * cannot be created. */
ZSTD_CCtx *fl_zstd_cctx(int level);

#endif
