/*
 * cuda-find.h: libcupti and the CUDA runtime, found at run time.
 *
 * Neither library in the traced process links with libcupti or libcudart:
 * a PyTorch built for CUDA 12 brings libcupti.so.12 and libcudart.so.12
 * (its nvidia-* wheels), one built for CUDA 13 the .so.13 ones, and a
 * second runtime or CUPTI beside the process's own would be a second
 * state that nothing else uses.  So the injection library (inject-api.c)
 * and the offload engine (offload-cuda.c) open the one the process
 * already has, and call it through tables filled by dlsym.
 *
 * The order, each step tried for the major version of a runtime or CUPTI
 * the process has loaded first (else 13, then 12), is what
 * VRAMTRACE_CUDA_SEARCH lists (default all four, in this order):
 *
 *   process  already loaded: dlopen(RTLD_NOLOAD) of the soname, then any
 *            loaded file of that name (dl_iterate_phdr);
 *   wheels   the nvidia-* wheels beside what the process loaded from a
 *            site-packages (SITE/nvidia/NAME/lib/, found from a loaded
 *            SITE/nvidia/NAME/lib/... or SITE/torch/lib/... file);
 *   toolkit  CUDA_HOME, CUDA_PATH, then the toolkit configure found
 *            (lib64/, lib/, targets/x86_64-linux/lib/,
 *            targets/sbsa-linux/lib/, extras/CUPTI/lib64/);
 *   system   the dynamic linker's own search (LD_LIBRARY_PATH, ld.so.cache).
 */
#ifndef CUDA_FIND_H
#define CUDA_FIND_H

#include <stddef.h>

#define CUDA_FIND_CUPTI		0	/* libcupti.so.N */
#define CUDA_FIND_RUNTIME	1	/* libcudart.so.N */

/*
 * A function to look up by name, and where its address goes.  A table of
 * function pointers named after the functions fills its list with
 * CUDA_FIND_SYMBOL(table, f): the name looked up is f's macro expansion,
 * the versioned name a header maps f to (cuDeviceTotalMem_v2).
 */
#define CUDA_FIND_SYMBOL(table, f) \
	{ CUDA_FIND_NAME(f), (void **)&(table).f },
#define CUDA_FIND_NAME(f)		CUDA_FIND_STRING(f)
#define CUDA_FIND_STRING(f)		#f

struct cuda_find_symbol {
	const char	*name;
	void		**slot;
};

/*
 * Open libcupti or the CUDA runtime (which, CUDA_FIND_*) in the order
 * above; toolkit is the directory configure found (may be NULL or empty).
 * Returns a dlopen handle that the caller never closes, or NULL.  msg
 * (len bytes) gets one line: the file and how it was found ("... (loaded
 * by the process)"), or, on NULL, where it was looked for.  Not
 * thread-safe: the callers find each library once, under their lock.
 */
void	*cuda_find_open(int which, const char *toolkit, char *msg,
	     size_t len);

/*
 * Fill every slot of syms (n of them) with its function from handle.
 * Returns 0, or -1 with *missing the first name not found (the slots
 * before it are filled).
 */
int	 cuda_find_bind(void *handle, const struct cuda_find_symbol *syms,
	     size_t n, const char **missing);

#endif
