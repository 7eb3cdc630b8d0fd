/*
 * got-replace.c: pointers replaced where the loaded objects keep them in
 * their writable memory: tables of functions filled at run time, which
 * no relocation names (a CUDA runtime's table of the driver's functions:
 * inject-entry.c).
 *
 * got_replace() lists the writable segments of the objects loaded now
 * (dl_iterate_phdr; no dl call inside the walk: see got.c), keeps of them
 * only the pages mapped readable and writable now (/proc/self/maps: a
 * page the loader made read-only after relocation, or one the program
 * protected, is neither read nor written, so nothing can fault), and
 * replaces every aligned pointer-sized word equal to one of the values
 * given, with one atomic store: a thread that reads the word meanwhile
 * gets either value.  Memory outside the objects (the heap, stacks) is
 * not looked at.
 */
#include "config.h"

#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "got.h"

/* The writable segments of the objects walked. */
struct replace_walk {
	uintptr_t	(*ranges)[2];
	size_t		  n;
	size_t		  size;
	const void *const *skip;	/* in the objects left out */
	size_t		  nskip;
	int		  failed;
};

static int
replace_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct replace_walk	*w = arg;
	const ElfW(Phdr)	*ph;
	uintptr_t		(*r)[2];
	size_t			 i;
	int			 k;

	(void)size;
	for (k = 0; k < info->dlpi_phnum; k++) {
		ph = &info->dlpi_phdr[k];
		if (ph->p_type != PT_LOAD)
			continue;
		for (i = 0; i < w->nskip; i++) {
			if ((uintptr_t)w->skip[i] >= info->dlpi_addr +
			    ph->p_vaddr && (uintptr_t)w->skip[i] <
			    info->dlpi_addr + ph->p_vaddr + ph->p_memsz)
				return (0);
		}
	}
	for (k = 0; k < info->dlpi_phnum; k++) {
		ph = &info->dlpi_phdr[k];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W))
			continue;
		if (w->n == w->size) {
			w->size = w->size != 0 ? 2 * w->size : 64;
			if ((r = realloc(w->ranges, w->size * sizeof *r)) ==
			    NULL) {
				w->failed = 1;
				return (1);
			}
			w->ranges = r;
		}
		w->ranges[w->n][0] = info->dlpi_addr + ph->p_vaddr;
		w->ranges[w->n][1] = info->dlpi_addr + ph->p_vaddr +
		    ph->p_memsz;
		w->n++;
	}
	return (0);
}

/*
 * Replace in [lo, hi) each word equal to from[i] by to[i].  It reads the
 * memory of other objects word by word, redzones of a sanitizer's
 * included: not instrumented.
 */
__attribute__((no_sanitize_address)) static size_t
replace_range(uintptr_t lo, uintptr_t hi, void *const *from,
    void *const *to, size_t n)
{
	void	**word;
	void	 *v;
	size_t	  found = 0, i;

	lo = (lo + sizeof (void *) - 1) & ~(uintptr_t)(sizeof (void *) - 1);
	for (word = (void **)lo; (uintptr_t)(word + 1) <= hi; word++) {
		v = __atomic_load_n(word, __ATOMIC_RELAXED);
		for (i = 0; i < n; i++) {
			if (v == from[i] && v != NULL) {
				__atomic_store_n(word, to[i],
				    __ATOMIC_RELEASE);
				found++;
				break;
			}
		}
	}
	return (found);
}

/*
 * Replace every word equal to from[i] by to[i] (i < n; NULL values are
 * never matched) in the writable memory of the objects loaded now, but
 * those that hold one of the addresses skip[0..nskip-1]; see the top of
 * the file.  Returns how many words were replaced, or -1 when the
 * objects or the process's mappings could not be listed (nothing was
 * replaced).
 */
long
got_replace(void *const *from, void *const *to, size_t n,
    const void *const *skip, size_t nskip)
{
	struct replace_walk	 w;
	char			 line[4096], perms[8];
	unsigned long		 lo, hi;
	long			 found = 0;
	size_t			 i;
	FILE			*f;

	memset(&w, 0, sizeof w);
	w.skip = skip;
	w.nskip = nskip;
	dl_iterate_phdr(replace_object, &w);
	if (w.failed || (f = fopen("/proc/self/maps", "re")) == NULL) {
		free(w.ranges);
		return (-1);
	}
	while (fgets(line, sizeof line, f) != NULL) {
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 ||
		    perms[0] != 'r' || perms[1] != 'w')
			continue;
		for (i = 0; i < w.n; i++) {
			if (w.ranges[i][1] <= lo || w.ranges[i][0] >= hi)
				continue;
			found += (long)replace_range(w.ranges[i][0] > lo ?
			    w.ranges[i][0] : lo, w.ranges[i][1] < hi ?
			    w.ranges[i][1] : hi, from, to, n);
		}
	}
	fclose(f);
	free(w.ranges);
	return (found);
}
