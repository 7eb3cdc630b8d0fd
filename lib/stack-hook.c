/*
 * stack-hook.c: see the process's extension modules release and take back
 * the GIL.
 *
 * PyTorch (through pybind11) releases the GIL around every operation, so
 * the thread that allocates rarely holds it and may not read its own
 * Python frames.  Those frames cannot change before the thread takes the
 * GIL back, though, and then it may read them: what stack.c needs is to
 * run when a thread releases the GIL and right after it takes it back.
 * Extension modules call PyEval_SaveThread() and friends through their
 * global offset table, and so do the pybind11 helpers compiled into
 * libtorch_python.so; we point those table entries at wrappers that call
 * the real function and tell stack.c (through the two functions it gave).  Python's own calls (inside
 * libpython or a statically linked interpreter) are direct and stay
 * unseen: a thread that released the GIL there has no parked allocation.
 *
 * The patch: for every loaded object, the relocations of its dynamic
 * section (JUMP_SLOT and GLOB_DAT, x86-64 and AArch64) that import one of
 * the functions below get the wrapper's address, written atomically; a
 * slot in the object's RELRO segment is made writable for the write and
 * read-only again.  An object that defines the functions (libpython, a
 * python binary) has nothing imported to patch.  Objects loaded later are
 * patched by stack_hook_rescan(), which the client's thread calls between
 * batches when the loader's count of loaded objects changed.  The patches
 * are never undone: this library is never unloaded, and with recording
 * off a wrapper only forwards.  A slot that the lazy binder resolves at
 * the very moment we write it may keep the real function: that object
 * then goes unseen, which costs stacks, never a wrong one (stack.c checks
 * who holds the GIL before it trusts a release it saw).
 *
 * Wrappers keep errno as the real functions do.
 */
#include "config.h"

#include <sys/mman.h>

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "stack.h"

#if defined(__x86_64__)
#define HOOK_JUMP_SLOT	R_X86_64_JUMP_SLOT
#define HOOK_GLOB_DAT	R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define HOOK_JUMP_SLOT	R_AARCH64_JUMP_SLOT
#define HOOK_GLOB_DAT	R_AARCH64_GLOB_DAT
#endif

#ifdef HOOK_JUMP_SLOT
static void	 (*hook_releasing)(void);	/* stack.c's, given at start */
static void	 (*hook_acquired)(void);
static void	*(*real_save_thread)(void);
static void	 (*real_restore_thread)(void *);
static void	 (*real_acquire_thread)(void *);
static void	 (*real_release_thread)(void *);
static int	 (*real_ensure)(void);
static void	 (*real_release)(int);

static void *
hook_save_thread(void)
{
	int	saved = errno;

	hook_releasing();
	errno = saved;
	return (real_save_thread());
}

static void
hook_restore_thread(void *tstate)
{
	int	saved;

	real_restore_thread(tstate);
	saved = errno;
	hook_acquired();
	errno = saved;
}

static void
hook_acquire_thread(void *tstate)
{
	int	saved;

	real_acquire_thread(tstate);
	saved = errno;
	hook_acquired();
	errno = saved;
}

static void
hook_release_thread(void *tstate)
{
	int	saved = errno;

	hook_releasing();
	errno = saved;
	real_release_thread(tstate);
}

static int
hook_ensure(void)
{
	int	state, saved;

	state = real_ensure();
	saved = errno;
	hook_acquired();
	errno = saved;
	return (state);
}

static void
hook_release(int state)
{
	int	saved = errno;

	hook_releasing();
	errno = saved;
	real_release(state);
}

static const struct hook {
	const char	*name;
	void		*wrapper;
	void		**real;
} hooks[] = {
	{ "PyEval_SaveThread", (void *)hook_save_thread,
	    (void **)&real_save_thread },
	{ "PyEval_RestoreThread", (void *)hook_restore_thread,
	    (void **)&real_restore_thread },
	{ "PyEval_AcquireThread", (void *)hook_acquire_thread,
	    (void **)&real_acquire_thread },
	{ "PyEval_ReleaseThread", (void *)hook_release_thread,
	    (void **)&real_release_thread },
	{ "PyGILState_Ensure", (void *)hook_ensure, (void **)&real_ensure },
	{ "PyGILState_Release", (void *)hook_release,
	    (void **)&real_release },
};
#define NHOOKS	(sizeof hooks / sizeof hooks[0])

static unsigned long long	hook_adds;	/* objects loaded at the scan */
static int			hook_on;

/* An address from the dynamic section, relocated or not by the loader. */
static uintptr_t
hook_ptr(const struct dl_phdr_info *info, ElfW(Addr) p)
{
	return (p < info->dlpi_addr ? p + info->dlpi_addr : p);
}

/* Point one slot at a wrapper; relro is the object's RELRO range. */
static void
hook_write(void **slot, void *wrapper, uintptr_t relro, size_t relro_len)
{
	uintptr_t	page, at = (uintptr_t)slot;
	long		size = sysconf(_SC_PAGESIZE);

	if (__atomic_load_n(slot, __ATOMIC_RELAXED) == wrapper)
		return;
	if (at < relro || at >= relro + relro_len) {
		__atomic_store_n(slot, wrapper, __ATOMIC_RELEASE);
		return;
	}
	page = at & ~((uintptr_t)size - 1);
	if (mprotect((void *)page, (size_t)size, PROT_READ | PROT_WRITE) != 0)
		return;
	__atomic_store_n(slot, wrapper, __ATOMIC_RELEASE);
	mprotect((void *)page, (size_t)size, PROT_READ);
}

/* Patch the relocations rel[0..n) of one object. */
static void
hook_relocs(const struct dl_phdr_info *info, const ElfW(Rela) *rel,
    size_t n, const ElfW(Sym) *symtab, const char *strtab, size_t strsz,
    uintptr_t relro, size_t relro_len)
{
	const ElfW(Sym)	*sym;
	const char	*name;
	size_t		 i, k;
	unsigned long	 type;

	for (i = 0; i < n; i++) {
		type = ELF64_R_TYPE(rel[i].r_info);
		if (type != HOOK_JUMP_SLOT && type != HOOK_GLOB_DAT)
			continue;
		sym = &symtab[ELF64_R_SYM(rel[i].r_info)];
		if (sym->st_shndx != SHN_UNDEF || sym->st_name >= strsz)
			continue;	/* defined here: not an import */
		name = strtab + sym->st_name;
		if (name[0] != 'P' || name[1] != 'y')
			continue;
		for (k = 0; k < NHOOKS; k++) {
			if (strcmp(name, hooks[k].name) == 0)
				hook_write((void **)(info->dlpi_addr +
				    rel[i].r_offset), hooks[k].wrapper, relro,
				    relro_len);
		}
	}
}

static int
hook_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	const ElfW(Dyn)	*d = NULL;
	const ElfW(Sym)	*symtab = NULL;
	const char	*strtab = NULL;
	uintptr_t	 jmprel = 0, rela = 0, relro = 0;
	size_t		 pltrelsz = 0, relasz = 0, strsz = 0, relro_len = 0;
	int		 i, pltrel_is_rela = 1;

	(void)size;
	(void)arg;
	for (i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			d = (const ElfW(Dyn) *)(info->dlpi_addr +
			    info->dlpi_phdr[i].p_vaddr);
		else if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO) {
			relro = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
			relro_len = info->dlpi_phdr[i].p_memsz;
		}
	}
	for (; d != NULL && d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_SYMTAB:
			symtab = (const ElfW(Sym) *)hook_ptr(info,
			    d->d_un.d_ptr);
			break;
		case DT_STRTAB:
			strtab = (const char *)hook_ptr(info, d->d_un.d_ptr);
			break;
		case DT_STRSZ:
			strsz = d->d_un.d_val;
			break;
		case DT_JMPREL:
			jmprel = hook_ptr(info, d->d_un.d_ptr);
			break;
		case DT_PLTRELSZ:
			pltrelsz = d->d_un.d_val;
			break;
		case DT_PLTREL:
			pltrel_is_rela = d->d_un.d_val == DT_RELA;
			break;
		case DT_RELA:
			rela = hook_ptr(info, d->d_un.d_ptr);
			break;
		case DT_RELASZ:
			relasz = d->d_un.d_val;
			break;
		}
	}
	if (symtab == NULL || strtab == NULL)
		return (0);
	if (jmprel != 0 && pltrel_is_rela)
		hook_relocs(info, (const ElfW(Rela) *)jmprel,
		    pltrelsz / sizeof(ElfW(Rela)), symtab, strtab, strsz, relro,
		    relro_len);
	if (rela != 0)
		hook_relocs(info, (const ElfW(Rela) *)rela,
		    relasz / sizeof(ElfW(Rela)), symtab, strtab, strsz, relro,
		    relro_len);
	return (0);
}

static int
hook_count(struct dl_phdr_info *info, size_t size, void *arg)
{
	if (size >= offsetof(struct dl_phdr_info, dlpi_adds) +
	    sizeof info->dlpi_adds)
		*(unsigned long long *)arg = info->dlpi_adds;
	return (1);
}

/*
 * Find the real functions and patch every loaded object, so that releasing
 * runs before each release of the GIL (with the GIL still held) and
 * acquired after each acquisition.  Returns 0, or -1 when the process has
 * not all of them or the platform is not one we patch (then only threads
 * that hold the GIL get Python stacks).
 */
int
stack_hook_start(void (*releasing)(void), void (*acquired)(void))
{
	size_t	k;

	hook_releasing = releasing;
	hook_acquired = acquired;
	for (k = 0; k < NHOOKS; k++) {
		if ((*hooks[k].real = dlsym(RTLD_DEFAULT, hooks[k].name)) ==
		    NULL)
			return (-1);
	}
	dl_iterate_phdr(hook_count, &hook_adds);
	dl_iterate_phdr(hook_object, NULL);
	hook_on = 1;
	return (0);
}

/* Patch the objects loaded since the last scan, if any.  Any thread. */
void
stack_hook_rescan(void)
{
	unsigned long long	adds = hook_adds;

	if (!hook_on)
		return;
	dl_iterate_phdr(hook_count, &adds);
	if (adds == hook_adds)
		return;
	hook_adds = adds;
	dl_iterate_phdr(hook_object, NULL);
}
#else
int
stack_hook_start(void (*releasing)(void), void (*acquired)(void))
{
	(void)releasing;
	(void)acquired;
	return (-1);
}

void
stack_hook_rescan(void)
{
}
#endif
