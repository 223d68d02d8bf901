/* symbolize.c: PC → (binary, offset, inlined frames with file:line), in-process with libbfd.
 *
 * Follow one lookup top to bottom (symbolizer_lookup):
 *   1. maps_find gives the mapping of the PC (PC − 1 for return addresses);
 *      offset = addr − mapping start + mapping file offset.
 *   2. The mapping's file is a *binary*, identified by (path, device, inode) as the maps line names it,
 *      opened once (binary_open): its ELF image is mmap'ed and read with <elf.h> for what libbfd does
 *      not expose portably (PT_LOAD headers, build-id note, .gnu_debuglink, symbol sizes); the file
 *      holding its DWARF (itself or a separate debug file) is opened once with libbfd.
 *   3. The result cache, keyed by (binary id, offset), answers repeated PCs without touching the binary.
 *   4. Otherwise: offset → link-time address through the PT_LOAD that holds it (works alike for PIE,
 *      non-PIE and shared objects: the mapping already says where the file was loaded) → the bfd
 *      section holding that address → bfd_find_nearest_line + bfd_find_inliner_info; the function
 *      symbol covering the address names the function when DWARF cannot.
 * Results live in an arena and their strings in a string set (base/string_set.c: "foo.c" is
 * stored once) until symbolizer_free. Nothing here spawns a process or trusts a length read from a file unchecked. */
#include "symbolize.h"

#include <bfd.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <zlib.h>

#include "binary_id.h"
#include "string_set.h"

#ifndef DMGL_PARAMS
#define DMGL_PARAMS (1 << 0) /* libiberty's demangle.h, not installed by binutils-dev */
#define DMGL_ANSI   (1 << 1)
#endif

#define DEFAULT_DEBUG_ROOT "/usr/lib/debug"
#define MAX_BUILD_ID BINARY_ID_MAX_BUILD_ID
#define ARENA_CHUNK (64 * 1024)

/* ---------------------------------------------------------------------------------------------
 * Arena and interned strings: everything a result points to. */

struct arena_chunk {
	struct arena_chunk *next;
	size_t used;
	size_t cap;
	max_align_t data[];
};

static void *arena_alloc(struct arena_chunk **head, size_t size)
{
	size = (size + 15) & ~(size_t)15;
	struct arena_chunk *chunk = *head;
	if (!chunk || chunk->cap - chunk->used < size) {
		size_t cap = size > ARENA_CHUNK ? size : ARENA_CHUNK;
		chunk = malloc(sizeof *chunk + cap);
		if (!chunk)
			return NULL;
		chunk->next = *head;
		chunk->used = 0;
		chunk->cap = cap;
		*head = chunk;
	}
	void *p = (char *)chunk->data + chunk->used;
	chunk->used += size;
	return p;
}

static void arena_free(struct arena_chunk *head)
{
	while (head) {
		struct arena_chunk *next = head->next;
		free(head);
		head = next;
	}
}

static uint64_t hash_bytes(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t h = 1469598103934665603ull ^ seed; /* FNV-1a */
	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

static uint64_t hash_mix(uint64_t x) /* splitmix64 finaliser */
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* ---------------------------------------------------------------------------------------------
 * ELF image: a read-only mmap of one file, validated once, read with <elf.h>. */

struct elf_image {
	int fd; /* -1 when closed */
	const unsigned char *base;
	size_t size;
	dev_t dev;
	ino_t ino;
	int64_t mtime_ns;
	const Elf64_Shdr *shdrs;
	size_t shnum;
	const char *shstrtab;
	size_t shstrtab_size;
	const Elf64_Phdr *phdrs;
	size_t phnum;
	uint8_t build_id[MAX_BUILD_ID];
	size_t build_id_len;
};

static bool in_file(const struct elf_image *img, uint64_t off, uint64_t len)
{
	return off <= img->size && len <= img->size - off;
}

static void elf_image_close(struct elf_image *img)
{
	if (img->base)
		munmap((void *)img->base, img->size);
	if (img->fd >= 0)
		close(img->fd);
	memset(img, 0, sizeof *img);
	img->fd = -1;
}

static const char *elf_section_name(const struct elf_image *img, const Elf64_Shdr *sh)
{
	if (!img->shstrtab || sh->sh_name >= img->shstrtab_size)
		return "";
	const char *name = img->shstrtab + sh->sh_name;
	return memchr(name, '\0', img->shstrtab_size - sh->sh_name) ? name : "";
}

/* A section with file contents, by name; NULL if absent or out of the file. */
static const Elf64_Shdr *elf_section_by_name(const struct elf_image *img, const char *name)
{
	for (size_t i = 1; i < img->shnum; i++) {
		const Elf64_Shdr *sh = &img->shdrs[i];
		if (sh->sh_type != SHT_NOBITS && in_file(img, sh->sh_offset, sh->sh_size) &&
		    strcmp(elf_section_name(img, sh), name) == 0)
			return sh;
	}
	return NULL;
}

static bool elf_has_dwarf(const struct elf_image *img)
{
	const Elf64_Shdr *sh = elf_section_by_name(img, ".debug_info");
	if (!sh)
		sh = elf_section_by_name(img, ".zdebug_info");
	return sh && sh->sh_size > 0;
}

static uint64_t align_up(uint64_t x, uint64_t align)
{
	return (x + align - 1) & ~(align - 1);
}

/* The build-id of the first note section that has one, else of the first PT_NOTE segment
 * (binary_id_from_notes reads the notes). */
static void elf_read_build_id(struct elf_image *img)
{
	for (size_t i = 1; i < img->shnum; i++) {
		const Elf64_Shdr *sh = &img->shdrs[i];
		if (sh->sh_type == SHT_NOTE && in_file(img, sh->sh_offset, sh->sh_size) &&
		    (img->build_id_len = binary_id_from_notes(img->base + sh->sh_offset, sh->sh_size,
							      sh->sh_addralign == 8 ? 8 : 4, img->build_id)) > 0)
			return;
	}
	for (size_t i = 0; i < img->phnum; i++) {
		const Elf64_Phdr *ph = &img->phdrs[i];
		if (ph->p_type == PT_NOTE && in_file(img, ph->p_offset, ph->p_filesz) &&
		    (img->build_id_len = binary_id_from_notes(img->base + ph->p_offset, ph->p_filesz,
							      ph->p_align == 8 ? 8 : 4, img->build_id)) > 0)
			return;
	}
}

/* Validates the ELF header and the header tables; returns NULL or the reason the file is unusable. */
static const char *elf_validate(struct elf_image *img)
{
	if (img->size < sizeof(Elf64_Ehdr) || memcmp(img->base, ELFMAG, SELFMAG) != 0)
		return "not an ELF file";
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img->base;
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB)
		return "not a 64-bit little-endian ELF file";
	if (eh->e_phnum > 0) {
		if (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff % 8 != 0 ||
		    !in_file(img, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr)))
			return "program header table out of the file";
		img->phdrs = (const Elf64_Phdr *)(img->base + eh->e_phoff);
		img->phnum = eh->e_phnum;
	}
	if (eh->e_shoff == 0)
		return NULL; /* no section headers: still usable through PT_LOAD */
	if (eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff % 8 != 0 ||
	    !in_file(img, eh->e_shoff, sizeof(Elf64_Shdr)))
		return "section header table out of the file";
	const Elf64_Shdr *shdrs = (const Elf64_Shdr *)(img->base + eh->e_shoff);
	uint64_t shnum = eh->e_shnum ? eh->e_shnum : shdrs[0].sh_size; /* extended numbering */
	uint64_t shstrndx = eh->e_shstrndx == SHN_XINDEX ? shdrs[0].sh_link : eh->e_shstrndx;
	if (shnum > img->size / sizeof(Elf64_Shdr) || !in_file(img, eh->e_shoff, shnum * sizeof(Elf64_Shdr)))
		return "section header table out of the file";
	img->shdrs = shdrs;
	img->shnum = shnum;
	if (shstrndx > 0 && shstrndx < shnum && in_file(img, shdrs[shstrndx].sh_offset, shdrs[shstrndx].sh_size)) {
		img->shstrtab = (const char *)img->base + shdrs[shstrndx].sh_offset;
		img->shstrtab_size = shdrs[shstrndx].sh_size;
	}
	return NULL;
}

/* Opens and maps PATH. On failure returns -1 with a message in WHY. */
static int elf_image_open(struct elf_image *img, const char *path, char *why, size_t why_size)
{
	memset(img, 0, sizeof *img);
	img->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (img->fd < 0) {
		snprintf(why, why_size, "open(\"%s\", O_RDONLY): %s", path, strerror(errno));
		img->fd = -1;
		return -1;
	}
	struct stat st;
	if (fstat(img->fd, &st) != 0) {
		snprintf(why, why_size, "fstat(\"%s\"): %s", path, strerror(errno));
		elf_image_close(img);
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_size <= 0) {
		snprintf(why, why_size, "%s: not a regular non-empty file", path);
		elf_image_close(img);
		return -1;
	}
	img->dev = st.st_dev;
	img->ino = st.st_ino;
	img->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	void *base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, img->fd, 0);
	if (base == MAP_FAILED) {
		snprintf(why, why_size, "mmap(\"%s\", %lld bytes): %s", path, (long long)st.st_size, strerror(errno));
		elf_image_close(img);
		return -1;
	}
	img->base = base;
	img->size = (size_t)st.st_size;
	const char *bad = elf_validate(img);
	if (bad) {
		snprintf(why, why_size, "%s: %s", path, bad);
		elf_image_close(img);
		return -1;
	}
	elf_read_build_id(img);
	return 0;
}

/* The .gnu_debuglink name (pointer into the image) and its CRC, or NULL. */
static const char *elf_debuglink(const struct elf_image *img, uint32_t *crc)
{
	const Elf64_Shdr *sh = elf_section_by_name(img, ".gnu_debuglink");
	if (!sh)
		return NULL;
	const char *name = (const char *)img->base + sh->sh_offset;
	size_t len = strnlen(name, sh->sh_size);
	uint64_t crc_at = align_up(len + 1, 4);
	if (len == 0 || len == sh->sh_size || crc_at + 4 > sh->sh_size || strchr(name, '/'))
		return NULL;
	memcpy(crc, name + crc_at, 4);
	return name;
}

/* ---------------------------------------------------------------------------------------------
 * Binaries. */

struct load_segment {
	uint64_t offset; /* p_offset */
	uint64_t filesz; /* p_filesz */
	uint64_t vaddr;  /* p_vaddr */
};

struct func_symbol {
	uint64_t addr;
	uint64_t size; /* 0: extends to the next symbol */
	const char *name; /* inside an image */
	int rank;         /* which of several symbols at one address names it: lower wins */
};

struct dwarf_section {
	uint64_t vma;
	uint64_t size;
	asection *section;
};

enum binary_state {
	BINARY_UNOPENED, /* not looked at yet */
	BINARY_READY,    /* opened; loads known; symbols and/or DWARF may be there */
	BINARY_FAILED,   /* missing, replaced or unreadable: label-only results (warned once) */
	BINARY_PSEUDO,   /* not a file: [vdso], [heap], anonymous memory */
};

struct sym_binary {
	uint32_t id;            /* index + 1 in symbolizer.binaries; 0 means "no mapping" */
	enum binary_state state;
	const char *path;       /* interned: the maps name, or "[anon]" */
	const char *basename;   /* inside path */
	uint64_t dev;           /* from the maps line */
	uint64_t inode;
	bool deleted;
	bool warned;
	struct elf_image image;
	struct elf_image debug_image; /* separate debug file, fd -1 / base NULL when none */
	const char *debug_path;       /* interned path of debug_image, NULL when none */
	struct load_segment *loads;
	size_t nloads;
	struct func_symbol *symbols; /* sorted by addr, one per address */
	size_t nsymbols;
	bfd *dwarf;                  /* the bfd that holds the DWARF, NULL when none */
	asymbol *no_symbols[1];      /* an empty symbol table for bfd_find_nearest_line: see dwarf_frames */
	struct dwarf_section *sections; /* SEC_ALLOC sections of `dwarf`, sorted by vma */
	size_t nsections;
};

/* What the recording says a binary was (DIR/binaries, binary_id.h): its build-id when it had one,
 * else its size and mtime. */
struct expected_build_id {
	char *path;
	uint8_t id[MAX_BUILD_ID];
	size_t len;             /* 0: no build-id; size and mtime decide */
	bool has_stat;
	uint64_t size;
	int64_t mtime_ns;
};

/* Result cache slot: (binary id, offset) → result. */
struct result_slot {
	uint64_t offset;
	uint32_t binary_id;
	struct sym_result *result; /* NULL = empty */
};

struct symbolizer {
	sym_diag_fn diag;
	void *diag_ctx;
	char *debug_root;
	char *archive;                /* the recording's archive root (record --archive), or NULL */

	struct sym_binary **binaries; /* by id − 1 */
	size_t nbinaries, binaries_cap;
	uint32_t *binary_slots;       /* hash (path, dev, inode) → id; 0 = empty */
	size_t binary_slots_cap;

	struct expected_build_id *expected;
	size_t nexpected;

	struct result_slot *results;
	size_t results_cap, nresults;

	struct string_set strings;
	struct arena_chunk *arena;

	struct sym_frame *scratch; /* frames of the lookup in progress */
	size_t scratch_cap;

	struct sym_stats stats;
};

static void sym_warn(struct symbolizer *sym, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sym_warn(struct symbolizer *sym, const char *fmt, ...)
{
	char message[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(message, sizeof message, fmt, ap);
	va_end(ap);
	if (sym->diag)
		sym->diag(sym->diag_ctx, message);
	else
		fprintf(stderr, "faultline: %s\n", message);
}

/* Interns the first LEN bytes of S (base/string_set.c). NULL on ENOMEM. */
static const char *intern_n(struct symbolizer *sym, const char *s, size_t len)
{
	uint32_t i = string_set_add(&sym->strings, s, len, NULL);
	return i == STRING_SET_NONE ? NULL : sym->strings.strings[i];
}

static const char *intern(struct symbolizer *sym, const char *s)
{
	return intern_n(sym, s, strlen(s));
}

/* A warning about B, at most one per binary. */
static void binary_warn(struct symbolizer *sym, struct sym_binary *b, const char *what)
{
	if (b->warned)
		return;
	b->warned = true;
	sym_warn(sym, "symbolize: %s: %s; its addresses are shown as %s+0xOFFSET", b->path, what, b->basename);
}

static void binary_fail(struct symbolizer *sym, struct sym_binary *b, const char *what)
{
	binary_warn(sym, b, what);
	b->state = BINARY_FAILED;
	sym->stats.failed++;
}

static const struct expected_build_id *expected_for(const struct symbolizer *sym, const char *path)
{
	for (size_t i = 0; i < sym->nexpected; i++)
		if (strcmp(sym->expected[i].path, path) == 0)
			return &sym->expected[i];
	return NULL;
}

static void hex_string(char *out, const uint8_t *bytes, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digits[bytes[i] >> 4];
		out[2 * i + 1] = digits[bytes[i] & 15];
	}
	out[2 * len] = '\0';
}

/* Is the file we opened the one the process had mapped? NULL if yes (or not decidable and not
 * suspicious), else why not. */
static const char *binary_identity_problem(struct symbolizer *sym, struct sym_binary *b, char *buf, size_t size)
{
	const struct expected_build_id *want = expected_for(sym, b->path);
	if (want && want->len == 0 && want->has_stat) {
		if (b->image.size == want->size && b->image.mtime_ns == want->mtime_ns)
			return NULL;
		snprintf(buf, size, "size %zu and mtime %lld.%09lld on disk, %" PRIu64 " and %lld.%09lld recorded: "
			 "rebuilt or replaced since the recording", b->image.size,
			 (long long)(b->image.mtime_ns / 1000000000), (long long)(b->image.mtime_ns % 1000000000),
			 want->size, (long long)(want->mtime_ns / 1000000000), (long long)(want->mtime_ns % 1000000000));
		return buf;
	}
	if (want && want->len) {
		if (b->image.build_id_len == want->len && memcmp(b->image.build_id, want->id, want->len) == 0)
			return NULL;
		char have_hex[2 * MAX_BUILD_ID + 1], want_hex[2 * MAX_BUILD_ID + 1];
		hex_string(have_hex, b->image.build_id, b->image.build_id_len);
		hex_string(want_hex, want->id, want->len);
		snprintf(buf, size, "build-id %s on disk, %s recorded: rebuilt or replaced since the recording",
			 b->image.build_id_len ? have_hex : "(none)", want_hex);
		return buf;
	}
	/* Inode numbers are comparable only on the device the kernel named (not across overlayfs). */
	bool same_device = b->dev == (uint64_t)b->image.dev;
	if (same_device && b->inode != 0 && b->inode != (uint64_t)b->image.ino) {
		snprintf(buf, size, "inode %" PRIu64 " on disk, %" PRIu64 " recorded: replaced since the recording",
			 (uint64_t)b->image.ino, b->inode);
		return buf;
	}
	if (b->deleted && !(same_device && b->inode == (uint64_t)b->image.ino))
		return "was deleted while mapped, and the file now at this path cannot be shown to be the same";
	return NULL;
}

static int load_segments_read(struct sym_binary *b)
{
	size_t n = 0;
	for (size_t i = 0; i < b->image.phnum; i++)
		n += b->image.phdrs[i].p_type == PT_LOAD && b->image.phdrs[i].p_filesz > 0;
	if (n == 0)
		return 0;
	b->loads = calloc(n, sizeof *b->loads);
	if (!b->loads)
		return -1;
	for (size_t i = 0; i < b->image.phnum; i++) {
		const Elf64_Phdr *ph = &b->image.phdrs[i];
		if (ph->p_type == PT_LOAD && ph->p_filesz > 0)
			b->loads[b->nloads++] = (struct load_segment){ ph->p_offset, ph->p_filesz, ph->p_vaddr };
	}
	return 0;
}

/* Link-time address of file offset OFFSET; false if no PT_LOAD maps it. */
static bool offset_to_vaddr(const struct sym_binary *b, uint64_t offset, uint64_t *vaddr)
{
	for (size_t i = 0; i < b->nloads; i++) {
		const struct load_segment *l = &b->loads[i];
		if (offset >= l->offset && offset - l->offset < l->filesz) {
			*vaddr = offset - l->offset + l->vaddr;
			return true;
		}
	}
	return false;
}

/* --- function symbols (.symtab, .dynsym) --- */

struct func_vec {
	struct func_symbol *items;
	size_t count, cap;
};

static int func_vec_push(struct func_vec *v, struct func_symbol s)
{
	if (v->count == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 256;
		struct func_symbol *items = realloc(v->items, cap * sizeof *items);
		if (!items)
			return -1;
		v->items = items;
		v->cap = cap;
	}
	v->items[v->count++] = s;
	return 0;
}

/* Lower is a better name for an address: sized before unsized, global before weak before local,
 * then fewer leading underscores (malloc over __libc_malloc). */
static int symbol_rank(const Elf64_Sym *s, const char *name)
{
	int bind = ELF64_ST_BIND(s->st_info);
	int rank = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
	int underscores = 0;
	while (name[underscores] == '_' && underscores < 3)
		underscores++;
	return (s->st_size ? 0 : 100) + rank * 10 + underscores;
}

static int symbols_collect(const struct elf_image *img, struct func_vec *out)
{
	for (size_t i = 1; i < img->shnum; i++) {
		const Elf64_Shdr *sh = &img->shdrs[i];
		if ((sh->sh_type != SHT_SYMTAB && sh->sh_type != SHT_DYNSYM) || sh->sh_entsize != sizeof(Elf64_Sym) ||
		    sh->sh_offset % 8 != 0 || !in_file(img, sh->sh_offset, sh->sh_size) || sh->sh_link == 0 ||
		    sh->sh_link >= img->shnum)
			continue;
		const Elf64_Shdr *strsh = &img->shdrs[sh->sh_link];
		if (strsh->sh_type == SHT_NOBITS || !in_file(img, strsh->sh_offset, strsh->sh_size))
			continue;
		const char *strtab = (const char *)img->base + strsh->sh_offset;
		const Elf64_Sym *syms = (const Elf64_Sym *)(img->base + sh->sh_offset);
		size_t n = sh->sh_size / sizeof(Elf64_Sym);
		for (size_t k = 1; k < n; k++) {
			const Elf64_Sym *s = &syms[k];
			int type = ELF64_ST_TYPE(s->st_info);
			if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s->st_shndx == SHN_UNDEF || s->st_value == 0 ||
			    s->st_name == 0 || s->st_name >= strsh->sh_size)
				continue;
			const char *name = strtab + s->st_name;
			if (!memchr(name, '\0', strsh->sh_size - s->st_name))
				continue;
			struct func_symbol f = { s->st_value, s->st_size, name, symbol_rank(s, name) };
			if (func_vec_push(out, f) != 0)
				return -1;
		}
	}
	return 0;
}

static int func_symbol_compare(const void *a, const void *b)
{
	const struct func_symbol *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Reads the function symbols of the binary and of its debug file; one per address, sorted. */
static int binary_read_symbols(struct sym_binary *b)
{
	struct func_vec v = { 0 };
	if (symbols_collect(&b->image, &v) != 0 || (b->debug_image.base && symbols_collect(&b->debug_image, &v) != 0)) {
		free(v.items);
		return -1;
	}
	if (v.count == 0)
		return 0;
	qsort(v.items, v.count, sizeof v.items[0], func_symbol_compare);
	size_t kept = 0;
	for (size_t i = 0; i < v.count; i++)
		if (kept == 0 || v.items[kept - 1].addr != v.items[i].addr)
			v.items[kept++] = v.items[i];
	b->symbols = v.items;
	b->nsymbols = kept;
	return 0;
}

/* The function symbol covering VADDR, or NULL. BEYOND_SIZE: the nearest symbol at or below VADDR
 * even when VADDR lies past its st_size (used only when DWARF line info puts VADDR in a function it
 * does not name: the alignment padding after a function's last instruction). */
static const struct func_symbol *symbol_at(const struct sym_binary *b, uint64_t vaddr, bool beyond_size)
{
	size_t lo = 0, hi = b->nsymbols; /* entries before lo start at or below vaddr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (b->symbols[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct func_symbol *s = &b->symbols[lo - 1];
	if (beyond_size)
		return s;
	if (s->size)
		return vaddr - s->addr < s->size ? s : NULL;
	return lo < b->nsymbols || vaddr == s->addr ? s : NULL; /* unsized: up to the next symbol */
}

/* --- separate debug files --- */

static uint32_t file_crc32(const struct elf_image *img)
{
	uLong crc = crc32(0L, Z_NULL, 0);
	const unsigned char *p = img->base;
	size_t left = img->size;
	while (left > 0) {
		uInt chunk = left > (1u << 30) ? (1u << 30) : (uInt)left;
		crc = crc32(crc, p, chunk);
		p += chunk;
		left -= chunk;
	}
	return (uint32_t)crc;
}

/* Accepts PATH as B's debug file if it has DWARF and matches B (same build-id; else the debuglink CRC). */
static bool try_debug_file(struct symbolizer *sym, struct sym_binary *b, const char *path, const uint32_t *crc)
{
	struct elf_image img;
	char why[PATH_MAX + 128];
	if (elf_image_open(&img, path, why, sizeof why) != 0)
		return false;
	bool accept = img.dev != b->image.dev || img.ino != b->image.ino;
	accept = accept && elf_has_dwarf(&img);
	if (accept && img.build_id_len && b->image.build_id_len)
		accept = img.build_id_len == b->image.build_id_len &&
			 memcmp(img.build_id, b->image.build_id, img.build_id_len) == 0;
	else if (accept && crc)
		accept = file_crc32(&img) == *crc;
	else if (accept)
		accept = false; /* nothing ties this file to the binary */
	if (!accept) {
		if (elf_has_dwarf(&img))
			sym_warn(sym, "symbolize: %s: debug file %s does not match it; ignored", b->path, path);
		elf_image_close(&img);
		return false;
	}
	b->debug_image = img;
	b->debug_path = intern(sym, path);
	return true;
}

/* The archived copy of B (record --archive): ARCHIVE/xx/rest[SUFFIX] for the build-id the
 * recording expects at B's path. False when there is none. */
static bool archived_path(const struct symbolizer *sym, const struct sym_binary *b, const char *suffix,
			  char *path, size_t len)
{
	const struct expected_build_id *want = sym->archive ? expected_for(sym, b->path) : NULL;
	char rest[2 * MAX_BUILD_ID + 1];
	if (!want || want->len < 2)
		return false;
	hex_string(rest, want->id + 1, want->len - 1);
	int n = snprintf(path, len, "%s/%02x/%s%s", sym->archive, want->id[0], rest, suffix);
	return n > 0 && (size_t)n < len && access(path, R_OK) == 0;
}

static bool find_debug_file(struct symbolizer *sym, struct sym_binary *b)
{
	const char *root = sym->debug_root ? sym->debug_root : DEFAULT_DEBUG_ROOT;
	char path[PATH_MAX];
	if (archived_path(sym, b, ".debug", path, sizeof path) && try_debug_file(sym, b, path, NULL))
		return true;
	if (b->image.build_id_len >= 2) {
		char rest[2 * MAX_BUILD_ID + 1];
		hex_string(rest, b->image.build_id + 1, b->image.build_id_len - 1);
		int n = snprintf(path, sizeof path, "%s/.build-id/%02x/%s.debug", root, b->image.build_id[0], rest);
		if (n > 0 && (size_t)n < sizeof path && try_debug_file(sym, b, path, NULL))
			return true;
	}
	uint32_t crc;
	const char *link = elf_debuglink(&b->image, &crc);
	if (!link)
		return false;
	const char *slash = strrchr(b->path, '/');
	int dir_len = slash ? (int)(slash - b->path) : 0;
	const char *formats[] = { "%.*s/%s", "%.*s/.debug/%s" };
	for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
		int n = snprintf(path, sizeof path, formats[i], dir_len, b->path, link);
		if (n > 0 && (size_t)n < sizeof path && try_debug_file(sym, b, path, &crc))
			return true;
	}
	int n = snprintf(path, sizeof path, "%s%.*s/%s", root, dir_len, b->path, link);
	return n > 0 && (size_t)n < sizeof path && try_debug_file(sym, b, path, &crc);
}

/* --- DWARF through libbfd --- */

static int dwarf_section_compare(const void *a, const void *b)
{
	const struct dwarf_section *x = a, *y = b;
	return x->vma < y->vma ? -1 : x->vma > y->vma;
}

/* Opens IMG (whose DWARF we want) with libbfd on a duplicate of its descriptor. */
static void binary_open_dwarf(struct symbolizer *sym, struct sym_binary *b, const struct elf_image *img,
			      const char *path)
{
	int fd = dup(img->fd);
	if (fd < 0) {
		sym_warn(sym, "symbolize: dup(%d) for %s: %s; no line numbers", img->fd, path, strerror(errno));
		return;
	}
	bfd *abfd = bfd_fdopenr(path, NULL, fd); /* owns fd from here on, even on failure */
	if (!abfd) {
		sym_warn(sym, "symbolize: bfd_fdopenr(\"%s\"): %s; no line numbers", path, bfd_errmsg(bfd_get_error()));
		return;
	}
	abfd->flags |= BFD_DECOMPRESS;
	if (!bfd_check_format(abfd, bfd_object)) {
		sym_warn(sym, "symbolize: bfd_check_format(\"%s\"): %s; no line numbers", path,
			 bfd_errmsg(bfd_get_error()));
		bfd_close(abfd);
		return;
	}
	size_t n = 0;
	for (asection *s = abfd->sections; s; s = s->next)
		n++;
	b->sections = calloc(n ? n : 1, sizeof *b->sections);
	if (!b->sections) {
		bfd_close(abfd);
		return;
	}
	for (asection *s = abfd->sections; s; s = s->next) {
		flagword flags = bfd_section_flags(s);
		if ((flags & SEC_ALLOC) && !(flags & SEC_THREAD_LOCAL) && bfd_section_size(s) > 0)
			b->sections[b->nsections++] = (struct dwarf_section){ bfd_section_vma(s), bfd_section_size(s), s };
	}
	qsort(b->sections, b->nsections, sizeof b->sections[0], dwarf_section_compare);
	b->dwarf = abfd;
	sym->stats.with_debug++;
}

static const struct dwarf_section *section_at(const struct sym_binary *b, uint64_t vaddr)
{
	size_t lo = 0, hi = b->nsections;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (b->sections[mid].vma <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0;) { /* sections may nest (rare): look back a little */
		const struct dwarf_section *s = &b->sections[i];
		if (vaddr - s->vma < s->size)
			return s;
		if (lo - i >= 4)
			break;
	}
	return NULL;
}

/* Opens binary B on first use. Every failure is a warning and a FAILED binary, never an error. */
static void binary_open(struct symbolizer *sym, struct sym_binary *b)
{
	char why[PATH_MAX + 256], archived[PATH_MAX];
	if (archived_path(sym, b, "", archived, sizeof archived)) {
		/* the copy kept with the recording: the binary as it was, wherever the file went since */
		if (elf_image_open(&b->image, archived, why, sizeof why) != 0) {
			binary_fail(sym, b, why);
			return;
		}
	} else if (elf_image_open(&b->image, b->path, why, sizeof why) != 0) {
		binary_fail(sym, b, why);
		return;
	}
	const char *problem = binary_identity_problem(sym, b, why, sizeof why);
	if (problem) {
		binary_fail(sym, b, problem);
		elf_image_close(&b->image);
		return;
	}
	if (load_segments_read(b) != 0 || b->nloads == 0) {
		binary_fail(sym, b, b->nloads == 0 ? "no PT_LOAD segment" : "out of memory");
		elf_image_close(&b->image);
		return;
	}
	if (elf_has_dwarf(&b->image))
		binary_open_dwarf(sym, b, &b->image, b->path);
	else if (find_debug_file(sym, b))
		binary_open_dwarf(sym, b, &b->debug_image, b->debug_path ? b->debug_path : b->path);
	if (binary_read_symbols(b) != 0)
		binary_warn(sym, b, "out of memory reading symbols");
	/* Descriptors are no longer needed: the mmaps and the bfd's own descriptor remain. */
	close(b->image.fd);
	b->image.fd = -1;
	if (b->debug_image.fd >= 0) {
		close(b->debug_image.fd);
		b->debug_image.fd = -1;
	}
	b->state = BINARY_READY;
}

static void binary_destroy(struct sym_binary *b)
{
	if (b->dwarf)
		bfd_close(b->dwarf);
	elf_image_close(&b->image);
	elf_image_close(&b->debug_image);
	free(b->loads);
	free(b->symbols);
	free(b->sections);
	free(b);
}

/* --- the binary table: (path, dev, inode) → binary --- */

static uint64_t binary_hash(const char *path, uint64_t dev, uint64_t inode)
{
	return hash_mix(hash_bytes(path, strlen(path), 0) ^ hash_mix(dev * 31 + inode));
}

static int binary_table_grow(struct symbolizer *sym)
{
	size_t cap = sym->binary_slots_cap ? sym->binary_slots_cap * 2 : 64;
	uint32_t *slots = calloc(cap, sizeof *slots);
	if (!slots)
		return -1;
	for (size_t i = 0; i < sym->nbinaries; i++) {
		const struct sym_binary *b = sym->binaries[i];
		size_t j = binary_hash(b->path, b->dev, b->inode) & (cap - 1);
		while (slots[j])
			j = (j + 1) & (cap - 1);
		slots[j] = b->id;
	}
	free(sym->binary_slots);
	sym->binary_slots = slots;
	sym->binary_slots_cap = cap;
	return 0;
}

/* The binary of mapping E, created (unopened) on first sight. NULL on ENOMEM. */
static struct sym_binary *binary_for(struct symbolizer *sym, const struct maps_entry *e)
{
	const char *name = e->kind == MAPS_ANON ? "[anon]" : e->path;
	uint64_t dev = e->kind == MAPS_FILE ? makedev(e->dev_major, e->dev_minor) : 0;
	uint64_t inode = e->kind == MAPS_FILE ? e->inode : 0;
	if ((sym->nbinaries + 1) * 2 > sym->binary_slots_cap && binary_table_grow(sym) != 0)
		return NULL;
	size_t mask = sym->binary_slots_cap - 1;
	size_t j = binary_hash(name, dev, inode) & mask;
	for (; sym->binary_slots[j]; j = (j + 1) & mask) {
		struct sym_binary *b = sym->binaries[sym->binary_slots[j] - 1];
		if (b->dev == dev && b->inode == inode && strcmp(b->path, name) == 0)
			return b;
	}
	if (sym->nbinaries == sym->binaries_cap) {
		size_t cap = sym->binaries_cap ? sym->binaries_cap * 2 : 32;
		struct sym_binary **grown = realloc(sym->binaries, cap * sizeof *grown);
		if (!grown)
			return NULL;
		sym->binaries = grown;
		sym->binaries_cap = cap;
	}
	struct sym_binary *b = calloc(1, sizeof *b);
	const char *path = intern(sym, name);
	if (!b || !path) {
		free(b);
		return NULL;
	}
	b->image.fd = b->debug_image.fd = -1;
	b->path = path;
	const char *slash = strrchr(path, '/');
	b->basename = slash && slash[1] ? slash + 1 : path;
	b->dev = dev;
	b->inode = inode;
	b->deleted = e->deleted;
	b->state = e->kind == MAPS_FILE ? BINARY_UNOPENED : BINARY_PSEUDO;
	sym->binaries[sym->nbinaries++] = b;
	b->id = (uint32_t)sym->nbinaries;
	sym->binary_slots[j] = b->id;
	sym->stats.binaries++;
	return b;
}

/* ---------------------------------------------------------------------------------------------
 * Building one result. */

static int scratch_push(struct symbolizer *sym, size_t n, const char *function, const char *file, unsigned line)
{
	if (n == sym->scratch_cap) {
		size_t cap = sym->scratch_cap ? sym->scratch_cap * 2 : 16;
		struct sym_frame *grown = realloc(sym->scratch, cap * sizeof *grown);
		if (!grown)
			return -1;
		sym->scratch = grown;
		sym->scratch_cap = cap;
	}
	sym->scratch[n] = (struct sym_frame){ function, file, line };
	return 0;
}

/* NAME demangled if it is a mangled C++ name, interned. */
static const char *function_name(struct symbolizer *sym, const char *name)
{
	if (!name)
		return NULL;
	if (name[0] == '_' && name[1] == 'Z') {
		char *demangled = bfd_demangle(NULL, name, DMGL_PARAMS | DMGL_ANSI);
		if (demangled) {
			const char *s = intern(sym, demangled);
			free(demangled);
			return s;
		}
	}
	return intern(sym, name);
}

static bool is_mangled(const char *name)
{
	return name && name[0] == '_' && name[1] == 'Z';
}

/* Frames from DWARF at VADDR into sym->scratch, with libbfd's own strings (valid while the bfd is
 * open; interned by the caller). Returns how many (0: none; -1: ENOMEM). */
static int dwarf_frames(struct symbolizer *sym, struct sym_binary *b, uint64_t vaddr)
{
	const struct dwarf_section *s = section_at(b, vaddr);
	if (!s)
		return 0;
	const char *file = NULL, *func = NULL;
	unsigned line = 0;
	/* An empty symbol table, not NULL: with NULL, libbfd 2.40 reads .debug_info with
	 * bfd_get_section_contents, which fails on compressed sections (Debian's debug files), while a
	 * non-NULL table makes it use bfd_simple_get_relocated_section_contents, which decompresses.
	 * Without symbols, bfd also leaves DWARF names alone: given symbols, it renames a C++ frame
	 * whose DIE has no linkage name after the ELF symbol around the address, which for an inlined
	 * frame is the function it was inlined into (addr2line -i shows that name twice). */
	if (!bfd_find_nearest_line(b->dwarf, s->section, (asymbol **)b->no_symbols, vaddr - s->vma, &file, &func,
				   &line))
		return 0;
	if (!file && !func)
		return 0;
	int n = 0;
	do {
		if (scratch_push(sym, (size_t)n++, func, file, line) != 0)
			return -1;
		file = func = NULL;
		line = 0;
	} while (bfd_find_inliner_info(b->dwarf, &file, &func, &line));
	return n;
}

size_t symbolize_tidy_path(const char *path, char *out, size_t len)
{
	const char *mid = strstr(path, "/./");
	if (mid && strncmp(path, "./", 2) == 0 && mid > path + 2) { /* "./DIR/./REST" */
		const char *dir = path + 2, *rest = mid + 3;
		size_t dlen = (size_t)(mid - dir);
		if (strncmp(rest, dir, dlen) == 0 && rest[dlen] == '/') /* REST is "DIR/file" */
			return (size_t)snprintf(out, len, "./%s", rest);
	}
	return (size_t)snprintf(out, len, "%s", path);
}

/* Replaces the raw strings of sym->scratch[0..n) by interned ones (function names demangled,
 * file names tidied: symbolize_tidy_path). */
static int intern_frames(struct symbolizer *sym, int n)
{
	for (int k = 0; k < n; k++) {
		struct sym_frame *f = &sym->scratch[k];
		char tidy[PATH_MAX];
		if (f->file && symbolize_tidy_path(f->file, tidy, sizeof(tidy)) < sizeof(tidy))
			f->file = tidy;
		const char *function = function_name(sym, f->function), *file = f->file ? intern(sym, f->file) : NULL;
		if ((f->function && !function) || (f->file && !file))
			return -1;
		f->function = function;
		f->file = file;
	}
	return 0;
}

/* Code images the kernel maps ([vdso], [vsyscall]): offsets in them mean the same in every process. */
static bool is_kernel_image(const char *name)
{
	return strcmp(name, "[vdso]") == 0 || strcmp(name, "[vsyscall]") == 0;
}

static const char *make_label(struct symbolizer *sym, const struct sym_binary *b, uint64_t offset)
{
	char label[PATH_MAX + 32];
	if (b && b->state == BINARY_PSEUDO && !is_kernel_image(b->path))
		snprintf(label, sizeof label, "%s@0x%" PRIx64, b->path, offset); /* an address, not an offset */
	else if (b)
		snprintf(label, sizeof label, "%s+0x%" PRIx64, b->basename, offset);
	else
		snprintf(label, sizeof label, "0x%" PRIx64, offset);
	return intern(sym, label);
}

/* Fills R (binary, offset, label set) with what B knows about OFFSET. -1 on ENOMEM. */
static int symbolize_in_binary(struct symbolizer *sym, struct sym_binary *b, struct sym_result *r)
{
	uint64_t vaddr;
	if (!offset_to_vaddr(b, r->offset, &vaddr))
		return 0;
	r->link_addr = vaddr;
	int n = b->dwarf ? dwarf_frames(sym, b, vaddr) : 0;
	if (n < 0)
		return -1;
	const struct func_symbol *fs = symbol_at(b, vaddr, false);
	if (n > 0 && !fs && !sym->scratch[n - 1].function)
		fs = symbol_at(b, vaddr, true);
	if (fs)
		r->symbol_offset = vaddr - fs->addr;
	if (n > 0) {
		r->source = SYM_SOURCE_DEBUG;
		/* The outermost frame is the function the symbol table names. Take the symbol's name
		 * when DWARF has none, or only a plain C++ DW_AT_name ("poke" for ns::Widget::poke(int))
		 * while the symbol carries the full mangled one. */
		struct sym_frame *outermost = &sym->scratch[n - 1];
		if (fs && (!outermost->function || (!is_mangled(outermost->function) && is_mangled(fs->name))))
			outermost->function = fs->name;
	} else if (fs) {
		r->source = SYM_SOURCE_SYMTAB;
		if (scratch_push(sym, 0, fs->name, NULL, 0) != 0)
			return -1;
		n = 1;
	}
	if (intern_frames(sym, n) != 0)
		return -1;
	if (n == 0)
		return 0;
	struct sym_frame *frames = arena_alloc(&sym->arena, (size_t)n * sizeof *frames);
	if (!frames)
		return -1;
	memcpy(frames, sym->scratch, (size_t)n * sizeof *frames);
	r->frames = frames;
	r->nframes = (unsigned)n;
	return 0;
}

static struct sym_result *symbolize_fresh(struct symbolizer *sym, struct sym_binary *b, uint64_t offset)
{
	struct sym_result *r = arena_alloc(&sym->arena, sizeof *r);
	if (!r)
		return NULL;
	memset(r, 0, sizeof *r);
	r->binary = b ? b->path : NULL;
	r->offset = offset;
	r->label = make_label(sym, b, offset);
	if (!r->label)
		return NULL;
	if (b && b->state == BINARY_UNOPENED)
		binary_open(sym, b);
	if (b && b->state == BINARY_READY && symbolize_in_binary(sym, b, r) != 0)
		return NULL;
	sym->stats.distinct++;
	sym->stats.frames += r->nframes;
	return r;
}

/* --- the result cache: (binary id, offset) → result --- */

static uint64_t result_hash(uint32_t binary_id, uint64_t offset)
{
	return hash_mix(offset ^ ((uint64_t)binary_id << 48) ^ ((uint64_t)binary_id >> 16));
}

static int results_grow(struct symbolizer *sym)
{
	size_t cap = sym->results_cap ? sym->results_cap * 2 : 4096;
	struct result_slot *slots = calloc(cap, sizeof *slots);
	if (!slots)
		return -1;
	for (size_t i = 0; i < sym->results_cap; i++) {
		struct result_slot *old = &sym->results[i];
		if (!old->result)
			continue;
		size_t j = result_hash(old->binary_id, old->offset) & (cap - 1);
		while (slots[j].result)
			j = (j + 1) & (cap - 1);
		slots[j] = *old;
	}
	free(sym->results);
	sym->results = slots;
	sym->results_cap = cap;
	return 0;
}

const struct sym_result *symbolizer_lookup(struct symbolizer *sym, const struct maps *maps, uint64_t pc,
					   bool is_return_address)
{
	sym->stats.lookups++;
	uint64_t addr = is_return_address ? pc - 1 : pc;
	const struct maps_entry *e = maps ? maps_find(maps, addr) : NULL;
	struct sym_binary *b = NULL;
	uint64_t offset = addr;
	if (e) {
		if (!(b = binary_for(sym, e)))
			return NULL;
		/* Files and kernel images ([vdso], [vsyscall]): the offset in the image, the same in
		 * every process. Other memory (JIT code in [anon], [heap], ...): the address itself. */
		if (e->kind == MAPS_FILE || is_kernel_image(e->path))
			offset = addr - e->start + e->pgoff;
	}
	uint32_t id = b ? b->id : 0;
	if ((sym->nresults + 1) * 2 > sym->results_cap && results_grow(sym) != 0)
		return NULL;
	size_t mask = sym->results_cap - 1;
	size_t j = result_hash(id, offset) & mask;
	for (; sym->results[j].result; j = (j + 1) & mask)
		if (sym->results[j].binary_id == id && sym->results[j].offset == offset)
			return sym->results[j].result;
	struct sym_result *r = symbolize_fresh(sym, b, offset);
	if (!r) {
		errno = ENOMEM;
		return NULL;
	}
	sym->results[j] = (struct result_slot){ offset, id, r };
	sym->nresults++;
	return r;
}

/* ---------------------------------------------------------------------------------------------
 * Life cycle. */

struct symbolizer *symbolizer_new(void)
{
	bfd_init();
	struct symbolizer *sym = calloc(1, sizeof *sym);
	if (!sym)
		errno = ENOMEM;
	return sym;
}

void symbolizer_set_diag(struct symbolizer *sym, sym_diag_fn diag, void *ctx)
{
	sym->diag = diag;
	sym->diag_ctx = ctx;
}

int symbolizer_set_debug_root(struct symbolizer *sym, const char *dir)
{
	char *copy = strdup(dir);
	if (!copy)
		return -1;
	free(sym->debug_root);
	sym->debug_root = copy;
	return 0;
}

int symbolizer_set_archive(struct symbolizer *sym, const char *dir)
{
	char *copy = strdup(dir);
	if (!copy)
		return -1;
	free(sym->archive);
	sym->archive = copy;
	return 0;
}

int symbolizer_expect_binary(struct symbolizer *sym, const char *path, const uint8_t *id, size_t len,
			     uint64_t size, int64_t mtime_ns)
{
	if (len == 0) {
		struct expected_build_id *grown = realloc(sym->expected, (sym->nexpected + 1) * sizeof *grown);
		if (!grown)
			return -1;
		sym->expected = grown;
		struct expected_build_id *e = &sym->expected[sym->nexpected];
		memset(e, 0, sizeof *e);
		if (!(e->path = strdup(path)))
			return -1;
		e->has_stat = true;
		e->size = size;
		e->mtime_ns = mtime_ns;
		sym->nexpected++;
		return 0;
	}
	if (symbolizer_expect_build_id(sym, path, id, len) < 0)
		return -1;
	sym->expected[sym->nexpected - 1].has_stat = true;
	sym->expected[sym->nexpected - 1].size = size;
	sym->expected[sym->nexpected - 1].mtime_ns = mtime_ns;
	return 0;
}

int symbolizer_expect_build_id(struct symbolizer *sym, const char *path, const uint8_t *id, size_t len)
{
	if (len == 0 || len > MAX_BUILD_ID) {
		errno = EINVAL;
		return -1;
	}
	struct expected_build_id *grown = realloc(sym->expected, (sym->nexpected + 1) * sizeof *grown);
	if (!grown)
		return -1;
	sym->expected = grown;
	struct expected_build_id *e = &sym->expected[sym->nexpected];
	if (!(e->path = strdup(path)))
		return -1;
	memcpy(e->id, id, len);
	e->len = len;
	e->has_stat = false;
	sym->nexpected++;
	return 0;
}

void symbolizer_get_stats(const struct symbolizer *sym, struct sym_stats *out)
{
	*out = sym->stats;
}

void symbolizer_free(struct symbolizer *sym)
{
	if (!sym)
		return;
	for (size_t i = 0; i < sym->nbinaries; i++)
		binary_destroy(sym->binaries[i]);
	free(sym->binaries);
	free(sym->binary_slots);
	for (size_t i = 0; i < sym->nexpected; i++)
		free(sym->expected[i].path);
	free(sym->expected);
	free(sym->results);
	string_set_free(&sym->strings);
	arena_free(sym->arena);
	free(sym->scratch);
	free(sym->debug_root);
	free(sym->archive);
	free(sym);
}
