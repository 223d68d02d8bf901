/* symbolize.h: turns recorded program counters into source frames, in-process with libbfd.
 *
 * Given the address-space layout a trace was recorded under (a struct maps) and a PC, the symbolizer
 * finds the mapped file and the file offset of the PC, converts it to the link-time address through
 * the file's PT_LOAD headers (so PIE and non-PIE executables, shared libraries and dlopen'ed libraries
 * are all handled the same way), and returns the chain of frames at that address: the innermost
 * inlined function first, then each function it was inlined into, each with file and line
 * (bfd_find_nearest_line + bfd_find_inliner_info, the engine of addr2line -f -i -C).
 *
 * Where the file has no DWARF, the separate debug file is looked up (build-id tree
 * DEBUG_ROOT/.build-id/xx/rest.debug, then .gnu_debuglink next to the binary, in its .debug/ and in
 * DEBUG_ROOT/DIR). Without any debug info the function comes from the symbol table (.symtab, else
 * .dynsym); without that, only the label "binary+0xOFFSET" is known. A binary that is missing, is not
 * the file that was mapped (inode or expected build-id differ) or is unreadable gets one warning and
 * label-only results; nothing in a trace can make the symbolizer crash or spawn a process.
 *
 * Each binary is opened once (ELF image mmap'ed, bfd kept open); each distinct (binary, offset) is
 * symbolized once and cached. Every pointer returned stays valid, and owned by the symbolizer, until
 * symbolizer_free releases all of it. Not thread-safe: one symbolizer per thread. */
#ifndef FAULTLINE_SYMBOLIZE_H
#define FAULTLINE_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "maps.h"

struct symbolizer;

/* One source-level frame. */
struct sym_frame {
	const char *function; /* demangled name; NULL if unknown */
	const char *file;     /* source file as named by the debug info; NULL if unknown */
	unsigned line;        /* 0 if unknown */
};

/* Where the answer came from. */
enum sym_source {
	SYM_SOURCE_NONE = 0,   /* only the label is known (unmapped, anonymous, missing binary, ...) */
	SYM_SOURCE_SYMTAB = 1, /* function name from .symtab/.dynsym; no file or line */
	SYM_SOURCE_DEBUG = 2,  /* DWARF: file and line, inlined frames */
};

struct sym_result {
	const char *binary;     /* mapped file ("/usr/lib/.../libc.so.6"), pseudo name ("[vdso]",
				   "[anon]"), or NULL when no mapping holds the address */
	uint64_t offset;        /* in a file, [vdso] or [vsyscall]: looked-up address − mapping
				   start + mapping file offset; elsewhere (unmapped, [anon],
				   [heap], [stack], ...): the looked-up address itself */
	uint64_t link_addr;     /* link-time address in BINARY (what `addr2line -e BINARY` takes);
				   0 when unknown */
	uint64_t symbol_offset; /* looked-up address − start of the symbol (SYM_SOURCE_SYMTAB) */
	enum sym_source source;
	unsigned nframes;       /* 0 when nothing but the label is known */
	const struct sym_frame *frames; /* [0] innermost (the function containing the PC, possibly
					   inlined), [nframes-1] the real (outermost) function */
	const char *label;      /* always set: "BASENAME+0xOFFSET" (files, "[vdso]+0x10"),
				   "[heap]@0xADDRESS" (other mappings), "0xADDRESS" (unmapped) */
};

/* Receives one warning (no trailing newline); NULL means print to stderr. */
typedef void (*sym_diag_fn)(void *ctx, const char *message);

struct sym_stats {
	uint64_t lookups;       /* symbolizer_lookup calls */
	uint64_t distinct;      /* of which symbolized (cache misses) */
	uint64_t frames;        /* frames produced by the distinct lookups */
	unsigned binaries;      /* binaries seen */
	unsigned with_debug;    /* of which had DWARF (in the file or a separate debug file) */
	unsigned failed;        /* of which could not be used (warned once each) */
};

/* Returns NULL (errno = ENOMEM) when memory runs out. */
struct symbolizer *symbolizer_new(void);

/* Where warnings go (default stderr). */
void symbolizer_set_diag(struct symbolizer *sym, sym_diag_fn diag, void *ctx);

/* Root of the separate debug-info tree (default "/usr/lib/debug"). Copied. Returns -1 on ENOMEM. */
int symbolizer_set_debug_root(struct symbolizer *sym, const char *dir);

/* Declares the build-id the binary PATH had when it was recorded. A file at PATH with another
 * build-id is then treated as replaced (warning, label-only results). Call before the first lookup
 * that reaches PATH. Returns -1 on ENOMEM or a build-id longer than 64 bytes (errno set). */
int symbolizer_expect_build_id(struct symbolizer *sym, const char *path, const uint8_t *id, size_t len);

/* Declares what the binary PATH was when it was recorded (DIR/binaries, binary_id.h): its
 * build-id (len > 0), else its size and mtime. A file at PATH that differs is treated as
 * replaced: one warning, label-only results ("binary+0xOFFSET"). Returns -1 on ENOMEM. */
int symbolizer_expect_binary(struct symbolizer *sym, const char *path, const uint8_t *id, size_t len,
			     uint64_t size, int64_t mtime_ns);

/* The recording's archive of binaries (record --archive): DIR/xx/rest (the binary) and
 * DIR/xx/rest.debug (its separate debug file), by build-id. A binary whose expected build-id has
 * a copy there is read from the copy, never from its path. Copied; -1 on ENOMEM. */
int symbolizer_set_archive(struct symbolizer *sym, const char *dir);

/* Symbolizes PC under the layout MAPS. IS_RETURN_ADDRESS: PC is a return address (every stack frame
 * but the faulting one), so PC − 1 is looked up to land on the call instruction; offsets and
 * link_addr in the result then describe PC − 1. Returns NULL only when memory runs out. */
const struct sym_result *symbolizer_lookup(struct symbolizer *sym, const struct maps *maps, uint64_t pc,
					   bool is_return_address);

void symbolizer_get_stats(const struct symbolizer *sym, struct sym_stats *out);

/* Releases everything, including every result returned. NULL is fine. */
void symbolizer_free(struct symbolizer *sym);

/* A source path as libbfd 2.40 builds it for DWARF 5 line tables whose file names already carry
 * their directory ("./elf/./elf/dl-init.c": the directory, "/./", then the file's own relative
 * path starting with that directory) written into OUT as the file's path alone ("./elf/dl-init.c",
 * as gdb and addr2line show it); any other path is copied as it is. Returns the length written
 * (as snprintf: LEN or more when OUT was too short). */
size_t symbolize_tidy_path(const char *path, char *out, size_t len);

#endif
