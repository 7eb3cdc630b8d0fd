/*
 * got.c: a function's calls redirected in the objects that import it, by
 * writing a wrapper into their relocation slots (the global offset table
 * entries of their PLT and GLOB_DAT relocations, x86-64 and AArch64).
 * stack-hook.c redirects the GIL's functions so, and inject-calls.c the
 * CUDA runtime's stream-ordered allocations.
 *
 * got_redirect() walks the objects loaded now (dl_iterate_phdr) and, in
 * each one that imports a target's symbol, writes the target's wrapper into
 * every slot bound to it.  The function the wrapper must call is the one the
 * slots were bound to: a resolved slot says it; a slot still lazy (it
 * points into its own object's PLT) is bound by the object's own lookup
 * (dlsym on its handle).  An object whose slots are bound elsewhere than the
 * target's real function (given, or found in the first importer: two copies
 * of the library that defines the symbol) is left alone and counted: its
 * calls do not reach the wrapper.  Objects loaded later are redirected by
 * calling it again (got_loaded() says when the loader has loaded more), or
 * as they load: got_watch() redirects dlopen itself, so that a function of
 * the caller's runs after every dlopen that loaded an object, before dlopen
 * returns (but for a dlopen made while another thread runs that function:
 * its objects wait for the next).  Slots in the object's
 * read-only-after-relocation segment (RELRO) are made writable for the
 * write, then read-only again; the write is one atomic store, so a thread
 * calling through the slot meanwhile calls either function.
 *
 * It knows only ELF: tests/t-hook.sh tests it without CUDA or Python.
 */
#include "config.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
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

struct got_walk {
	struct got_target	*targets;
	size_t			 n;
};

/* Whether address a lies in one of the object's loaded segments. */
static int
got_in_object(const struct dl_phdr_info *info, uintptr_t a)
{
	uintptr_t	lo;
	int		i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type != PT_LOAD)
			continue;
		lo = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
		if (a >= lo && a < lo + info->dlpi_phdr[i].p_memsz)
			return (1);
	}
	return (0);
}

/*
 * Write value into slot, lifting RELRO's protection for the write.  The
 * loader made read-only only the whole pages of the object's RELRO segment
 * (its start rounded down to a page, its end rounded down too): a slot on
 * the page where that segment ends is still writable when the segment
 * does not end on a page boundary (pages larger than the linker's), and
 * that page must stay writable: the rest of it may be slots that lazy
 * binding writes later.
 */
static int
got_write(const struct dl_phdr_info *info, void **slot, void *value)
{
	uintptr_t	page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t	start = (uintptr_t)slot & ~(page - 1), lo = 0, hi = 0;
	int		i, relro;

	for (i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type != PT_GNU_RELRO)
			continue;
		lo = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
		hi = (lo + info->dlpi_phdr[i].p_memsz) & ~(page - 1);
		lo &= ~(page - 1);
	}
	relro = start >= lo && start < hi;
	if (relro && mprotect((void *)start, (size_t)page,
	    PROT_READ | PROT_WRITE) != 0)
		return (-1);
	__atomic_store_n(slot, value, __ATOMIC_RELEASE);
	if (relro)
		mprotect((void *)start, (size_t)page, PROT_READ);
	return (0);
}

/* The function a slot of object info holding now is bound to. */
static void *
got_bound(const struct dl_phdr_info *info, void *now, const char *name)
{
	void	*handle, *f;

	if (!got_in_object(info, (uintptr_t)now))
		return (now);
	/* Lazy: its own lookup decides. */
	handle = dlopen(info->dlpi_name[0] != '\0' ? info->dlpi_name : NULL,
	    RTLD_LAZY | RTLD_NOLOAD);
	if (handle == NULL)
		return (NULL);
	f = dlsym(handle, name);
	dlclose(handle);
	return (f);
}

/* Redirect the slots of one relocation table of an object. */
static void
got_table(struct dl_phdr_info *info, struct got_walk *w,
    const ElfW(Rela) *rel, size_t size, const ElfW(Sym) *symtab,
    const char *strtab, size_t strsz)
{
	struct got_target	*t = NULL;
	const ElfW(Sym)		*sym;
	void			**slot, *bound;
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
		if (k == w->n)
			continue;
		slot = (void **)(info->dlpi_addr + rel[i].r_offset);
		bound = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
		if (bound == t->wrapper)
			continue;
		bound = got_bound(info, bound, t->name);
		if (bound == NULL || (t->real != NULL && bound != t->real)) {
			t->elsewhere++;
			continue;
		}
		t->real = bound;
		if (got_write(info, slot, t->wrapper) != 0)
			t->elsewhere++;
		else
			t->patched++;
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
	if (pltrel == DT_RELA)
		got_table(info, arg, jmprel, jmpsz, symtab, strtab, strsz);
	got_table(info, arg, rela, relasz, symtab, strtab, strsz);
	return (0);
}

/*
 * Redirect the calls of targets[0..n-1] (each a symbol name and its
 * wrapper) in every object loaded now that imports them (see the top of
 * the file).  On return each target's real is the function its calls
 * reached before (NULL when no object imports it), patched counts the
 * slots now calling the wrapper and elsewhere the slots left alone
 * (bound to another definition, or not writable); a target whose real
 * is set on entry redirects only the slots bound to it.  Call it before
 * any thread calls a wrapper; calling it again redirects what was loaded
 * since (a slot already redirected is left as it is).
 */
void
got_redirect(struct got_target *targets, size_t n)
{
	struct got_walk	w = { targets, n };

	dl_iterate_phdr(got_object, &w);
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
 * How many objects the loader has loaded so far (0 where it cannot say):
 * a change means got_redirect() has new objects to look at.
 */
unsigned long long
got_loaded(void)
{
	unsigned long long	adds = 0;

	dl_iterate_phdr(got_count, &adds);
	return (adds);
}

/*
 * The watch of loads (got_watch): dlopen redirected in its importers to
 * got_dlopen, which calls the real one and then, when it loaded an object,
 * redirects dlopen in what it loaded and calls the caller's function, one
 * thread at a time (another thread's dlopen meanwhile does not wait: see
 * got_dlopen).  The dl calls made meanwhile (got_bound's, the
 * function's own, through a slot of ours that may be redirected too) go
 * straight to the real dlopen (watch_inside), and leave no error for the
 * caller's dlerror(): a dlopen that succeeded has none.
 */
static void	*got_dlopen(const char *, int);

static struct got_target	watch_target = {
	"dlopen", (void *)got_dlopen, NULL, 0, 0
};
static void			(*watch_fn)(void);
static unsigned long long	 watch_adds;
static pthread_mutex_t		 watch_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread int		 watch_inside;

static void *
got_dlopen(const char *file, int mode)
{
	void			*(*real)(const char *, int);
	void			*handle;
	unsigned long long	 adds;
	int			 saved;

	*(void **)&real = watch_target.real;
	handle = real(file, mode);
	if (handle == NULL || watch_inside)
		return (handle);
	saved = errno;
	/*
	 * Never wait: the thread scanning may wait for the loader's lock,
	 * which a thread loading (in a constructor that calls dlopen) holds.
	 * The scanning thread looks again until nothing more was loaded.
	 */
	if (pthread_mutex_trylock(&watch_lock) != 0) {
		errno = saved;
		return (handle);
	}
	watch_inside = 1;
	while ((adds = got_loaded()) != watch_adds) {
		watch_adds = adds;
		got_redirect(&watch_target, 1);
		watch_fn();
	}
	(void)dlerror();
	watch_inside = 0;
	pthread_mutex_unlock(&watch_lock);
	errno = saved;
	return (handle);
}

/*
 * Call fn after every dlopen that loads an object, in the thread that
 * called dlopen and before it returns, one call at a time (fn then
 * typically calls got_redirect() for what was loaded); a dlopen made by
 * another thread while fn runs returns without waiting, and what it
 * loaded is seen by the next dlopen (or got_loaded()'s count).  Seen are the
 * dlopen calls made through a relocation slot: every object's but the
 * C library's own (its internal loads, such as NSS modules, are not).
 * Call it once, before threads call dlopen; fn may call dl functions.
 * Returns how many slots now call the watch.
 */
unsigned
got_watch(void (*fn)(void))
{
	watch_fn = fn;
	watch_adds = got_loaded();
	watch_target.real = dlsym(RTLD_DEFAULT, "dlopen");
	if (watch_target.real == NULL)
		return (0);
	got_redirect(&watch_target, 1);
	return (watch_target.patched);
}
