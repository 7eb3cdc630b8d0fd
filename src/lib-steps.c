/*
 * lib-steps.c: vramtrace_step() and vramtrace_mark() in libvramtrace.so.
 *
 * A traced process has one connection to the collector, owned by the
 * injection library that CUDA loaded (CUDA_INJECTION64_PATH).  These calls
 * therefore find that library (dlopen of the same path returns the loaded
 * copy, or loads it early; CUDA later gets the same one) and call its
 * vramtrace_inject_step() and vramtrace_inject_mark(), found once by
 * lib-client.c; when nothing records, both calls do nothing.
 */

#include "config.h"

#include "../include/vramtrace.h"	/* src/vramtrace.h is another file */
#include "lib-client.h"

/* End the current training step; a no-op when nothing records. */
void
vramtrace_step(void)
{
	if (lib_inject()->step != NULL)
		lib_inject()->step();
}

/* Record a named instant; NULL is ignored; a no-op when nothing records. */
void
vramtrace_mark(const char *name)
{
	if (lib_inject()->mark != NULL && name != NULL)
		lib_inject()->mark(name);
}
