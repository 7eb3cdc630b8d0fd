/*
 * steps.c: vramtrace_step() and vramtrace_mark() in libvramtrace.so.
 *
 * A traced process has one connection to the collector, owned by the
 * injection library that CUDA loaded (CUDA_INJECTION64_PATH).  These calls
 * therefore find that library (dlopen of the same path returns the loaded
 * copy, or loads it early; CUDA later gets the same one) and call its
 * vramtrace_inject_step() and vramtrace_inject_mark(), found once by
 * client-forward.c; when nothing records, both calls do nothing.
 */

#include "config.h"

#include "libvramtrace.h"
#include "client-forward.h"

/* End the current training step; a no-op when nothing records. */
void
vramtrace_step(void)
{
	if (client_forward()->step != NULL)
		client_forward()->step();
}

/* Record a named instant; NULL is ignored; a no-op when nothing records. */
void
vramtrace_mark(const char *name)
{
	if (client_forward()->mark != NULL && name != NULL)
		client_forward()->mark(name);
}
