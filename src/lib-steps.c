/*
 * lib-steps.c: vramtrace_step() and vramtrace_mark() in libvramtrace.so.
 *
 * A traced process has one connection to the collector, owned by the
 * injection library that CUDA loaded (CUDA_INJECTION64_PATH).  These calls
 * therefore find that library (dlopen of the same path returns the loaded
 * copy, or loads it early; CUDA later gets the same one) and call its
 * vramtrace_inject_step() and vramtrace_inject_mark().  The lookup happens
 * once; when nothing records, both calls do nothing.
 */

#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

#include "../include/vramtrace.h"	/* src/vramtrace.h is another file */

static pthread_once_t	  steps_once = PTHREAD_ONCE_INIT;
static void		(*steps_step)(void);
static void		(*steps_mark)(const char *);

static void
steps_resolve(void)
{
	const char	*path = getenv("CUDA_INJECTION64_PATH");
	void		*h;

	if (path == NULL || *path == '\0')
		return;
	if ((h = dlopen(path, RTLD_NOW | RTLD_LOCAL)) == NULL)
		return;
	*(void **)&steps_step = dlsym(h, "vramtrace_inject_step");
	*(void **)&steps_mark = dlsym(h, "vramtrace_inject_mark");
}

void
vramtrace_step(void)
{
	pthread_once(&steps_once, steps_resolve);
	if (steps_step != NULL)
		steps_step();
}

void
vramtrace_mark(const char *name)
{
	pthread_once(&steps_once, steps_resolve);
	if (steps_mark != NULL && name != NULL)
		steps_mark(name);
}
