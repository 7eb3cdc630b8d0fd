/*
 * got.c: a function's calls redirected in the objects that import it, by
 * writing a wrapper into their relocation slots (the global offset table
 * entries of their PLT and GLOB_DAT relocations, x86-64 and AArch64).
 * stack-hook.c redirects the GIL's functions so, and inject-calls.c the
 * CUDA runtime's stream-ordered allocations.
 *
 * got_redirect() walks the objects loaded now (dl_iterate_phdr) and, in
 * each one that imports a target's symbol, writes the target's wrapper
 * into every slot bound to it.  The function the wrapper must call is the
 * one the slots were bound to: a resolved slot says it; a slot still lazy
 * (it points into its own object's PLT) is bound by the object's own
 * lookup (dlsym on its handle; all of it after the walk: struct got_slot).
 * An object whose slots are bound elsewhere than the target's real
 * function (given, or found in the first importer: two copies of the
 * library that defines the symbol) is left alone and counted: its calls do
 * not reach the wrapper.  Objects loaded later are redirected by calling it
 * again (got_loaded_since() says when the loader has loaded more).  The
 * loader's dlopen, dlmopen, dlsym and dlvsym are never redirected: they
 * act for their caller, found by their return address (dlopen searches
 * its caller's RUNPATH, $ORIGIN), so a wrapper of them would change which
 * library or symbol a program gets, or make its load fail.  Slots in the
 * object's read-only-after-relocation segment (RELRO) are made writable
 * for the write, then read-only again; the write is one atomic store, so
 * a thread calling through the slot meanwhile calls either function.
 *
 * It knows only ELF: tests/t-hook.sh tests it without CUDA or Python.
 */
#include "config.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "got.h"

#if defined(__x86_64__)
#define GOT_JUMP_SLOT	R_X86_64_JUMP_SLOT
#define GOT_GLOB_DAT	R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define GOT_JUMP_SLOT	R_AARCH64_JUMP_SLOT
#define GOT_GLOB_DAT	R_AARCH64_GLOB_DAT
#else			/* no relocation matches: nothing is redirected */
#define GOT_JUMP_SLOT	UINT32_MAX
#define GOT_GLOB_DAT	UINT32_MAX
#endif

/*
 * A slot found while walking the objects (dl_iterate_phdr), redirected
 * after the walk: binding a lazy one takes dlopen and dlsym on its
 * object, which wait for the loader's lock, and a thread loading holds
 * that lock while it waits for the walk's to add its object, so calling
 * them from inside the walk could deadlock with any dlopen of the program.
 * After the walk each slot's object is held open (dlopen, RTLD_NOLOAD) and
 * checked to be the one walked before its slot is read and written: an
 * object the walk saw while another thread was loading it (it is listed
 * before it is relocated) is complete by then, as dlopen waits for that
 * load to end.
 */
struct got_slot {
	void		**slot;
	uintptr_t	  lo;		/* its object's mapped addresses: a */
	uintptr_t	  hi;		/* slot pointing there is lazy */
	struct got_target *target;
	uintptr_t	  base;		/* its object's load address */
	char		 *object;	/* its name; NULL: the program */
	uintptr_t	  relro_lo;	/* the pages the loader made */
	uintptr_t	  relro_hi;	/* read-only */
};

struct got_walk {
	struct got_target	*targets;
	size_t			 n;
	struct got_slot		*slots;		/* found, in walk order */
	size_t			 nslots;
	size_t			 slots_size;
	uintptr_t		 relro_lo;	/* the object's, now */
	uintptr_t		 relro_hi;
};

/* The lowest and highest addresses of the object's loaded segments. */
static void
got_span(const struct dl_phdr_info *info, uintptr_t *lo, uintptr_t *hi)
{
	uintptr_t	a;
	int		i;

	*lo = UINTPTR_MAX;
	*hi = 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type != PT_LOAD)
			continue;
		a = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
		if (a < *lo)
			*lo = a;
		if (a + info->dlpi_phdr[i].p_memsz > *hi)
			*hi = a + info->dlpi_phdr[i].p_memsz;
	}
}

/*
 * The pages of the object's RELRO segment that the loader made read-only:
 * the whole pages only (its start rounded down to a page, its end rounded
 * down too).  A slot on the page where that segment ends is still
 * writable when the segment does not end on a page boundary (pages larger
 * than the linker's), and that page must stay writable: the rest of it may
 * be slots that lazy binding writes later.
 */
static void
got_relro(const struct dl_phdr_info *info, uintptr_t *lo, uintptr_t *hi)
{
	uintptr_t	page = (uintptr_t)sysconf(_SC_PAGESIZE);
	int		i;

	*lo = *hi = 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type != PT_GNU_RELRO)
			continue;
		*lo = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
		*hi = (*lo + info->dlpi_phdr[i].p_memsz) & ~(page - 1);
		*lo &= ~(page - 1);
	}
}

/* Write value into slot, lifting the protection of RELRO's pages [lo, hi). */
static int
got_write(void **slot, void *value, uintptr_t lo, uintptr_t hi)
{
	uintptr_t	page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t	start = (uintptr_t)slot & ~(page - 1);
	int		relro = start >= lo && start < hi;

	if (relro && mprotect((void *)start, (size_t)page,
	    PROT_READ | PROT_WRITE) != 0)
		return (-1);
	__atomic_store_n(slot, value, __ATOMIC_RELEASE);
	if (relro)
		mprotect((void *)start, (size_t)page, PROT_READ);
	return (0);
}

/*
 * Redirect slot, bound to bound (NULL: unknown), to t's wrapper, or count
 * it as left alone when it is bound elsewhere than t's real function.
 */
static void
got_take(struct got_target *t, void **slot, void *bound, uintptr_t lo,
    uintptr_t hi)
{
	if (bound == NULL || (t->real != NULL && bound != t->real)) {
		t->elsewhere++;
		return;
	}
	t->real = bound;
	if (got_write(slot, t->wrapper, lo, hi) != 0)
		t->elsewhere++;
	else
		t->patched++;
}

/* Keep a slot of object info for after the walk; 0, or -1. */
static int
got_keep(struct got_walk *w, const struct dl_phdr_info *info, void **slot,
    struct got_target *t)
{
	struct got_slot	*k;
	size_t		 size;

	if (w->nslots == w->slots_size) {
		size = w->slots_size != 0 ? 2 * w->slots_size : 16;
		if ((k = realloc(w->slots, size * sizeof *k)) == NULL)
			return (-1);
		w->slots = k;
		w->slots_size = size;
	}
	k = &w->slots[w->nslots];
	k->object = NULL;
	if (info->dlpi_name[0] != '\0' &&
	    (k->object = strdup(info->dlpi_name)) == NULL)
		return (-1);
	k->slot = slot;
	got_span(info, &k->lo, &k->hi);
	k->target = t;
	k->base = info->dlpi_addr;
	k->relro_lo = w->relro_lo;
	k->relro_hi = w->relro_hi;
	w->nslots++;
	return (0);
}

/*
 * Redirect a kept slot, if its object is still the one walked (one gone
 * since is left as it is): to what it is bound to, which a lazy slot (it
 * points into its own object's PLT) learns from its object's own lookup.
 */
static void
got_redirect_slot(const struct got_slot *k)
{
	struct link_map	*map;
	void		*handle, *now, *bound;
	uintptr_t	 a;

	if ((handle = dlopen(k->object, RTLD_LAZY | RTLD_NOLOAD)) == NULL)
		return;
	if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 &&
	    map->l_addr == k->base &&
	    (now = __atomic_load_n(k->slot, __ATOMIC_ACQUIRE)) !=
	    k->target->wrapper) {
		a = (uintptr_t)now;
		bound = a >= k->lo && a < k->hi ?
		    dlsym(handle, k->target->name) : now;
		got_take(k->target, k->slot, bound, k->relro_lo,
		    k->relro_hi);
	}
	dlclose(handle);
}

/*
 * Whether name is a function whose behaviour depends on who calls it (the
 * loader's functions take their caller's search path and namespace from
 * their return address): a wrapper's call would change what the program
 * gets, so its slots are never redirected.
 */
static int
got_caller_sensitive(const char *name)
{
	static const char *const names[] = { "dlopen", "dlmopen", "dlsym",
	    "dlvsym" };
	size_t	i;

	for (i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(name, names[i]) == 0)
			return (1);
	return (0);
}

/*
 * Keep the slots of one relocation table of an object that import a
 * target and do not call its wrapper yet (one that cannot be kept is
 * counted as left alone).
 */
static void
got_table(struct dl_phdr_info *info, struct got_walk *w,
    const ElfW(Rela) *rel, size_t size, const ElfW(Sym) *symtab,
    const char *strtab, size_t strsz)
{
	struct got_target	*t = NULL;
	const ElfW(Sym)		*sym;
	void			**slot;
	size_t			 i, k;
	uint32_t		 type;

	for (i = 0; rel != NULL && i < size / sizeof *rel; i++) {
		type = (uint32_t)ELF64_R_TYPE(rel[i].r_info);
		if (type != GOT_JUMP_SLOT && type != GOT_GLOB_DAT)
			continue;
		sym = &symtab[ELF64_R_SYM(rel[i].r_info)];
		if (sym->st_shndx != SHN_UNDEF || sym->st_name >= strsz)
			continue;	/* defined here: not an import */
		for (k = 0; k < w->n; k++) {
			t = &w->targets[k];
			if (strcmp(strtab + sym->st_name, t->name) == 0)
				break;
		}
		if (k == w->n || got_caller_sensitive(t->name))
			continue;
		slot = (void **)(info->dlpi_addr + rel[i].r_offset);
		if (__atomic_load_n(slot, __ATOMIC_ACQUIRE) != t->wrapper &&
		    got_keep(w, info, slot, t) != 0)
			t->elsewhere++;
	}
}

/* A dynamic section's address entry, relocated or not. */
static uintptr_t
got_addr(const struct dl_phdr_info *info, ElfW(Addr) v)
{
	return (v < info->dlpi_addr ? info->dlpi_addr + v : v);
}

static int
got_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct got_walk	*w = arg;
	const ElfW(Dyn)	*d = NULL;
	const ElfW(Sym)	*symtab = NULL;
	const char	*strtab = NULL;
	const ElfW(Rela) *jmprel = NULL, *rela = NULL;
	size_t		 jmpsz = 0, relasz = 0, strsz = 0;
	int		 i, pltrel = DT_RELA;

	(void)size;
	if (strstr(info->dlpi_name, "linux-vdso") != NULL)
		return (0);
	for (i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			d = (const ElfW(Dyn) *)(info->dlpi_addr +
			    info->dlpi_phdr[i].p_vaddr);
	}
	for (; d != NULL && d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_SYMTAB:
			symtab = (const void *)got_addr(info, d->d_un.d_ptr);
			break;
		case DT_STRTAB:
			strtab = (const void *)got_addr(info, d->d_un.d_ptr);
			break;
		case DT_STRSZ:
			strsz = d->d_un.d_val;
			break;
		case DT_JMPREL:
			jmprel = (const void *)got_addr(info, d->d_un.d_ptr);
			break;
		case DT_PLTRELSZ:
			jmpsz = d->d_un.d_val;
			break;
		case DT_PLTREL:
			pltrel = (int)d->d_un.d_val;
			break;
		case DT_RELA:
			rela = (const void *)got_addr(info, d->d_un.d_ptr);
			break;
		case DT_RELASZ:
			relasz = d->d_un.d_val;
			break;
		default:
			break;
		}
	}
	if (symtab == NULL || strtab == NULL)
		return (0);
	got_relro(info, &w->relro_lo, &w->relro_hi);
	if (pltrel == DT_RELA)
		got_table(info, w, jmprel, jmpsz, symtab, strtab, strsz);
	got_table(info, w, rela, relasz, symtab, strtab, strsz);
	return (0);
}

/*
 * Redirect the calls of targets[0..n-1] (each a symbol name and its
 * wrapper) in every object loaded now that imports them (see the top of
 * the file).  On return each target's real is the function its calls
 * reached before (NULL when no object imports it, or for the loader's
 * functions, which are never redirected), patched counts the slots now
 * calling the wrapper and elsewhere the slots left alone (bound to another
 * definition, or not writable); a target whose real is set on entry
 * redirects only the slots bound to it.  Call it before
 * any thread calls a wrapper; calling it again redirects what was loaded
 * since (a slot already redirected is left as it is).
 */
void
got_redirect(struct got_target *targets, size_t n)
{
	struct got_walk	w;
	size_t		i;

	memset(&w, 0, sizeof w);
	w.targets = targets;
	w.n = n;
	dl_iterate_phdr(got_object, &w);
	for (i = 0; i < w.nslots; i++) {
		got_redirect_slot(&w.slots[i]);
		free(w.slots[i].object);
	}
	free(w.slots);
}

static int
got_count(struct dl_phdr_info *info, size_t size, void *arg)
{
	if (size >= offsetof(struct dl_phdr_info, dlpi_adds) +
	    sizeof info->dlpi_adds)
		*(unsigned long long *)arg = info->dlpi_adds;
	return (1);
}

/*
 * Whether the loader has loaded objects since *seen was set (then *seen is
 * set to now): got_redirect() has new objects to look at.  Start with *seen
 * 0.  Where the loader cannot say, always 1 the first time, never later.
 */
int
got_loaded_since(unsigned long long *seen)
{
	unsigned long long	adds = 0;

	dl_iterate_phdr(got_count, &adds);
	if (adds == *seen && adds != 0)
		return (0);
	if (adds == 0 && *seen == ULLONG_MAX)
		return (0);
	*seen = adds != 0 ? adds : ULLONG_MAX;
	return (1);
}
