/* maps.h: a parsed copy of /proc/PID/maps — the address-space layout a trace was recorded under.
 *
 * The runtime saves /proc/self/maps verbatim (at exit and whenever a library is loaded). This module
 * turns that text into a table sorted by start address and answers "which mapping holds this
 * address?" in O(log n). It validates every line; a malformed line is reported as SOURCE:LINE: reason
 * and skipped, so a damaged file degrades to fewer mappings, never to a crash.
 *
 * The kernel's line format (fs/proc/task_mmu.c, show_map_vma):
 *     START-END PERMS PGOFF MAJOR:MINOR INODE [padding] [PATHNAME]
 *     7fd7099b4000-7fd7099da000 r--p 00000000 fe:00 332835     /usr/lib/x86_64-linux-gnu/libc.so.6
 * START, END, PGOFF, MAJOR and MINOR in hex, INODE in decimal. PATHNAME is everything after the padding
 * up to the newline: it may contain spaces, ends in " (deleted)" when the file was unlinked while
 * mapped, and has '\n' escaped as "\012" (undone here). Pseudo mappings are named in brackets
 * ([heap], [stack], [vdso], [vvar], [anon:NAME], ...); anonymous mappings have no name. */
#ifndef FAULTLINE_MAPS_H
#define FAULTLINE_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Receives one diagnostic line (no trailing newline). NULL callbacks mean "print to stderr". */
typedef void (*maps_diag_fn)(void *ctx, const char *message);

enum maps_kind {
	MAPS_ANON = 0,   /* no name: anonymous memory (or JIT code) */
	MAPS_FILE = 1,   /* a file: PATHNAME starts with '/' */
	MAPS_PSEUDO = 2, /* [heap], [stack], [vdso], [vvar], [vsyscall], [anon:NAME], other names */
};

#define MAPS_PROT_READ   0x1
#define MAPS_PROT_WRITE  0x2
#define MAPS_PROT_EXEC   0x4
#define MAPS_SHARED      0x8 /* 's' in the fourth permission column; else private ('p') */

struct maps_entry {
	uint64_t start;        /* first address */
	uint64_t end;          /* one past the last address; start < end */
	uint64_t pgoff;        /* file offset mapped at start (0 for anonymous memory) */
	uint64_t inode;        /* inode of the file, 0 if none */
	uint32_t dev_major;    /* device of the file, as the kernel printed it */
	uint32_t dev_minor;
	unsigned prot;         /* MAPS_PROT_* | MAPS_SHARED */
	enum maps_kind kind;
	bool deleted;          /* the name ended in " (deleted)" (removed from path) */
	const char *path;      /* name without " (deleted)"; "" for anonymous; owned by the table */
	unsigned line;         /* line of the source it came from (1-based) */
};

struct maps {
	size_t count;                /* entries, sorted by start, non-overlapping */
	struct maps_entry *entries;
	unsigned malformed;          /* lines rejected while parsing */
};

/* Parses TEXT (LEN bytes, need not be NUL-terminated). SOURCE names it in diagnostics ("maps" if
 * NULL). Malformed lines and mappings overlapping an earlier one are reported through DIAG (stderr if
 * NULL) and skipped. Returns NULL only when memory runs out (errno = ENOMEM). */
struct maps *maps_parse(const char *text, size_t len, const char *source, maps_diag_fn diag, void *diag_ctx);

/* Reads and parses the file PATH. Returns NULL with errno set (and a diagnostic) if it cannot be read. */
struct maps *maps_load(const char *path, maps_diag_fn diag, void *diag_ctx);

/* The mapping containing ADDR, or NULL. O(log count). */
const struct maps_entry *maps_find(const struct maps *maps, uint64_t addr);

void maps_free(struct maps *maps);

#endif
