/*
 * inject-interpose.c: stream-ordered allocations seen through wrappers
 * instead of CUPTI's callbacks on the driver calls (VRAMTRACE_RECORDS
 * interpose), which cost each call a CUPTI callback.
 *
 * The runtime's cudaMallocAsync and cudaFreeAsync, and the driver's
 * cuMemAllocAsync and cuMemFreeAsync, are redirected to wrappers in the
 * objects that import them (got.c), those loaded now and, at the client
 * thread's next batch (VRAMTRACE_FLUSH_MS, 0.2 s by default), those
 * loaded later; inject-entry.c wraps the tables of the driver's functions
 * that runtimes keep.  The wrappers make the events (inject-calls.c).
 * Each way covers what the other may miss: a runtime whose table is not
 * found (kept outside the loaded objects) is still seen through its
 * importers, and a runtime nothing imports (linked in statically) through
 * its table; a call that passes two wrappers makes one event
 * (inject_calls_inside).
 */
#include "config.h"

#include <stddef.h>

#include "inject.h"
#include "inject-api.h"
#include "got.h"

/*
 * The runtime's stream-ordered allocation calls redirected to wrappers in
 * the objects that import them (VRAMTRACE_RECORDS interpose, got.c):
 * PyTorch's cudaMallocAsync backend makes its allocations and frees
 * through them, and a wrapper makes the event itself, without CUPTI's
 * callback on the driver call beneath.  While a thread is inside a wrapper
 * the callback of that driver call leaves the call to it
 * (inject_calls_inside), as inject-entry.c's wrappers do.
 */
typedef int	(*interpose_malloc_fn)(void **, size_t, void *);
typedef int	(*interpose_free_fn)(void *, void *);

static int	interpose_malloc_async(void **, size_t, void *);
static int	interpose_free_async(void *, void *);

static struct got_target interpose_hooks[] = {
	{ "cudaMallocAsync", (void *)interpose_malloc_async, NULL, 0, 0 },
	{ "cudaFreeAsync", (void *)interpose_free_async, NULL, 0, 0 },
	/*
	 * The driver's, for objects that import them: inject-entry.c's
	 * wrappers, which call the functions cuGetProcAddress gives (the
	 * same calls as the exported ones).
	 */
	{ "cuMemAllocAsync", NULL, NULL, 0, 0 },
	{ "cuMemAllocAsync_ptsz", NULL, NULL, 0, 0 },
	{ "cuMemFreeAsync", NULL, NULL, 0, 0 },
	{ "cuMemFreeAsync_ptsz", NULL, NULL, 0, 0 }
};
#define INTERPOSE_RUNTIME_HOOKS	2	/* the first two: the runtime's */
static size_t	interpose_nhooks = INTERPOSE_RUNTIME_HOOKS;
static int	interpose_tables;	/* tables wrapped at the start */

static int
interpose_malloc_async(void **ptr, size_t size, void *stream)
{
	interpose_malloc_fn	real;
	int		rc;

	*(void **)&real = interpose_hooks[0].real;
	inject_calls_inside = 1;
	rc = real(ptr, size, stream);
	inject_calls_inside = 0;
	if (rc == 0 && ptr != NULL)
		inject_calls_wrapped(EVENT_ALLOC, (uint64_t)(uintptr_t)*ptr,
		    size, stream, 0);
	return (rc);
}

static int
interpose_free_async(void *ptr, void *stream)
{
	interpose_free_fn	real;
	int		rc;

	*(void **)&real = interpose_hooks[1].real;
	inject_calls_inside = 1;
	rc = real(ptr, stream);
	inject_calls_inside = 0;
	if (rc == 0)
		inject_calls_wrapped(EVENT_FREE, (uint64_t)(uintptr_t)ptr, 0,
		    stream, 0);
	return (rc);
}

static int	interpose_cupti_off;	/* the two callbacks turned off */
static int	interpose_on;
static unsigned long long interpose_adds;	/* objects loaded at a pass */

/*
 * Redirect cudaMallocAsync and cudaFreeAsync, and the driver's
 * cuMemAllocAsync and cuMemFreeAsync, in the objects loaded since the
 * last pass, and set CUPTI's callbacks on cuMemAllocAsync and
 * cuMemFreeAsync: off while every call goes through a wrapper (every
 * importer of the runtime's calls redirected, or a runtime's table of
 * the driver's functions wrapped, and every importer of the driver's
 * calls redirected), on again for good once an importer calls another
 * definition, or when none was found at all.
 */
static void
interpose_redirect(void)
{
	size_t	i;
	int	all = 1;

	got_redirect(interpose_hooks, interpose_nhooks);
	for (i = 0; i < interpose_nhooks; i++)
		all &= interpose_hooks[i].elsewhere == 0 &&
		    (i >= INTERPOSE_RUNTIME_HOOKS || interpose_tables > 0 ||
		    interpose_hooks[i].patched > 0);
	if (all == interpose_cupti_off)
		return;
	interpose_cupti_off = all;
	inject_entry_cupti(!all);
}

/*
 * See every stream-ordered allocation and free through wrappers rather
 * than CUPTI's callbacks on cuMemAllocAsync and cuMemFreeAsync, where the
 * calls can be found: the runtime's cudaMallocAsync and cudaFreeAsync in
 * the objects that import them, and the driver's two calls in those that
 * import them, those loaded now and those loaded later
 * (inject_interpose_sweep()); the tables of the driver's functions that
 * runtimes made before vramtrace started, and those made later
 * (inject-entry.c).  While every call goes through a wrapper,
 * CUPTI's callbacks on the two driver calls are off for subscriber:
 * their calls cost no CUPTI callback.  Otherwise (an importer bound to
 * another definition; no importer and no table found) those callbacks
 * stay, or come back, and see every call the wrappers do not.  Call it
 * once.
 */
void
inject_interpose_start(void *subscriber)
{
	void	*wrapper[4];
	size_t	 i;

	if (inject_entry_start(subscriber) != 0)
		inject_entry_cupti_back("CUPTI's callbacks on cuGetProcAddress"
		    " cannot be had");
	if ((interpose_tables = inject_entry_scan(wrapper)) >= 0) {
		for (i = 0; i < 4; i++)
			interpose_hooks[INTERPOSE_RUNTIME_HOOKS + i].wrapper =
			    wrapper[i];
		interpose_nhooks = sizeof interpose_hooks /
		    sizeof interpose_hooks[0];
	}
	(void)got_loaded_since(&interpose_adds);
	interpose_redirect();
	interpose_on = 1;
}

/*
 * Redirect the calls in the objects loaded since the last pass, if any
 * (after inject_interpose_start(); the client's thread, between batches).
 * Until then a new object's calls are seen only where they pass a wrapped
 * table or wrapper anyway: those of an object that imports the driver's
 * two calls itself are not.  dlopen is not watched instead: see got.c.
 */
void
inject_interpose_sweep(void)
{
	if (interpose_on && got_loaded_since(&interpose_adds))
		interpose_redirect();
}
