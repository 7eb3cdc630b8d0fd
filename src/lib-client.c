/*
 * lib-client.c: client.h for libvramtrace.so.
 *
 * A traced process has one connection to the collector (or one spool
 * file), owned by the injection library that CUDA loaded from
 * CUDA_INJECTION64_PATH.  libvramtrace.so (the offload engine, the step
 * markers) therefore does not connect on its own: it finds that library
 * once (dlopen of the same path returns the copy CUDA loaded, or loads it
 * early and CUDA later gets the same one) and hands its events over through
 * the library's vramtrace_inject_*() entry points.  When the process is not
 * being recorded every call here is a cheap no-op.
 */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

#include "client.h"
#include "lib-client.h"

static pthread_once_t		 lib_once = PTHREAD_ONCE_INIT;
static struct lib_inject	 lib_entry;

static void
lib_resolve(void)
{
	const char	*path = getenv("CUDA_INJECTION64_PATH");
	void		*h;

	if (path == NULL || *path == '\0')
		return;
	if ((h = dlopen(path, RTLD_NOW | RTLD_LOCAL)) == NULL)
		return;
	*(void **)&lib_entry.step = dlsym(h, "vramtrace_inject_step");
	*(void **)&lib_entry.mark = dlsym(h, "vramtrace_inject_mark");
	*(void **)&lib_entry.emit = dlsym(h, "vramtrace_inject_emit");
	*(void **)&lib_entry.string = dlsym(h, "vramtrace_inject_string");
	*(void **)&lib_entry.flush = dlsym(h, "vramtrace_inject_flush");
}

/*
 * The injection library's entry points; members are NULL when the process
 * is not being recorded (or the library is older and lacks one).
 */
const struct lib_inject *
lib_inject(void)
{
	pthread_once(&lib_once, lib_resolve);
	return (&lib_entry);
}

/* Returns 1 when events reach a recording, 0 otherwise. */
int
client_start(const char *source_name)
{
	(void)source_name;
	return (lib_inject()->emit != NULL);
}

/* Hand one event to the injection library's client. */
void
client_emit(const struct event *ev)
{
	if (lib_inject()->emit != NULL)
		lib_inject()->emit(ev);
}

/* The injection library's id for text; 0 when nothing records. */
uint32_t
client_string(const char *text)
{
	if (lib_inject()->string == NULL)
		return (0);
	return (lib_inject()->string(text));
}

/* Ship what is queued and wait until it is written. */
void
client_flush(void)
{
	if (lib_inject()->flush != NULL)
		lib_inject()->flush();
}

/* The injection library stops its client at exit; nothing to do here. */
void
client_stop(void)
{
	client_flush();
}

/* Messages belong to the injection library; this side stays quiet. */
void
client_warn(const char *fmt, ...)
{
	(void)fmt;
}
