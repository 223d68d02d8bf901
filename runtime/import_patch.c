/* import_patch.c: points a library's imports of a libc function at a function of ours.
 *
 * libunwind brackets its cache and memory-pool locks with sigprocmask(): two system calls
 * per unwinding step (the Debian build has no per-thread cache), and the calls bind, like
 * every import, to the first definition in the process's lookup order, the shim's interposer
 * or the traced program's own. The unwinder runs on the runtime's own threads and inside the
 * stack signal's handler, so neither is acceptable: the runtime never enters an interposer
 * (sys.h), and a fault handler must not spend ~20 system calls per stack. So at start the
 * runtime rewrites libunwind's GOT entries for sigprocmask to its own wrapper (sys.c), as
 * the dynamic linker would have written them for a lookup that found ours: the GOT page is
 * made writable for the write and read-only again (RELRO). Nothing else in the library moves. */
#include "runtime_api.h" /* FL_PAGE_SIZE */
#include "sys.h"
#include "diag.h"

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>

struct patch {
	const char *library;                 /* substring of the object's path */
	const char *symbol;
	void *replacement;
	unsigned patched;
};

static uintptr_t dyn_ptr(const struct dl_phdr_info *info, ElfW(Addr) p)
{
	/* glibc relocates the d_ptr entries of .dynamic in place on x86-64; be safe either way */
	return p < info->dlpi_addr ? info->dlpi_addr + p : p;
}

/* Is the slot in the object's RELRO segment (read-only after relocation)? Elsewhere (lazy
 * binding) the GOT shares writable pages with .data and is written as it is. */
static bool in_relro(const struct dl_phdr_info *info, const void *slot)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_GNU_RELRO && (uintptr_t)slot >= lo && (uintptr_t)slot < lo + ph->p_memsz)
			return true;
	}
	return false;
}

static void patch_slot(const struct dl_phdr_info *info, void **slot, void *replacement)
{
	uintptr_t page = (uintptr_t)slot & ~(FL_PAGE_SIZE - 1);
	if (*slot == replacement)
		return;
	if (!in_relro(info, slot)) {
		__atomic_store_n(slot, replacement, __ATOMIC_RELEASE);
		return;
	}
	if (fl_sys_mprotect((void *)page, FL_PAGE_SIZE, PROT_READ | PROT_WRITE) < 0) {
		fl_log_errno("mprotect(a library's GOT page, writable)", errno);
		return;
	}
	__atomic_store_n(slot, replacement, __ATOMIC_RELEASE);
	if (fl_sys_mprotect((void *)page, FL_PAGE_SIZE, PROT_READ) < 0)
		fl_log_errno("mprotect(a library's GOT page, read-only)", errno);
}

static void patch_relocations(const struct dl_phdr_info *info, const ElfW(Rela) *rel, size_t bytes,
			      const ElfW(Sym) *symtab, const char *strtab, struct patch *p)
{
	for (size_t i = 0; i < bytes / sizeof(*rel); i++) {
		unsigned long type = ELF64_R_TYPE(rel[i].r_info);
		if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
			continue;
		const ElfW(Sym) *sym = &symtab[ELF64_R_SYM(rel[i].r_info)];
		if (strcmp(strtab + sym->st_name, p->symbol) != 0)
			continue;
		patch_slot(info, (void **)(info->dlpi_addr + rel[i].r_offset), p->replacement);
		p->patched++;
	}
}

static int patch_object(struct dl_phdr_info *info, size_t size, void *data)
{
	struct patch *p = data;
	const ElfW(Dyn) *dyn = NULL;
	(void)size;
	if (!info->dlpi_name || !strstr(info->dlpi_name, p->library))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	if (!dyn)
		return 0;
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	const ElfW(Rela) *jmprel = NULL, *rela = NULL;
	size_t jmprel_bytes = 0, rela_bytes = 0;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB: symtab = (const ElfW(Sym) *)dyn_ptr(info, dyn->d_un.d_ptr); break;
		case DT_STRTAB: strtab = (const char *)dyn_ptr(info, dyn->d_un.d_ptr); break;
		case DT_JMPREL: jmprel = (const ElfW(Rela) *)dyn_ptr(info, dyn->d_un.d_ptr); break;
		case DT_PLTRELSZ: jmprel_bytes = dyn->d_un.d_val; break;
		case DT_RELA: rela = (const ElfW(Rela) *)dyn_ptr(info, dyn->d_un.d_ptr); break;
		case DT_RELASZ: rela_bytes = dyn->d_un.d_val; break;
		default: break;
		}
	}
	if (!symtab || !strtab)
		return 0;
	if (jmprel)
		patch_relocations(info, jmprel, jmprel_bytes, symtab, strtab, p);
	if (rela)
		patch_relocations(info, rela, rela_bytes, symtab, strtab, p);
	return 0;
}

/* Redirects every import of `symbol` by loaded objects whose path contains `library`; returns
 * how many GOT entries now point at `replacement`. */
unsigned fl_import_redirect(const char *library, const char *symbol, void *replacement)
{
	struct patch p = { library, symbol, replacement, 0 };
	dl_iterate_phdr(patch_object, &p);
	return p.patched;
}
