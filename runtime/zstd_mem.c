/* zstd_mem.c: zstd's allocator over raw anonymous mappings (zstd_mem.h), and the runtime's
 * compression contexts over it. Each block keeps its mapping's length in a 16-byte prefix, so
 * free can unmap it. */
#include "zstd_mem.h"
#include "sys.h"

#include <sys/mman.h>

static void *zstd_mem_alloc(void *opaque, size_t size)
{
	(void)opaque;
	size += 16;
	char *p = fl_sys_mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	*(size_t *)p = size;
	return p + 16;
}

static void zstd_mem_free(void *opaque, void *p)
{
	(void)opaque;
	if (p)
		fl_sys_munmap((char *)p - 16, *(size_t *)((char *)p - 16));
}

ZSTD_customMem fl_zstd_mem(void)
{
	ZSTD_customMem mem = { zstd_mem_alloc, zstd_mem_free, NULL };
	return mem;
}

ZSTD_CCtx *fl_zstd_cctx(int level)
{
	ZSTD_CCtx *cctx = ZSTD_createCCtx_advanced(fl_zstd_mem());
	if (cctx && (ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level)) ||
		     ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1)))) {
		ZSTD_freeCCtx(cctx);
		cctx = NULL;
	}
	return cctx;
}
