/*
 * client-forward.c: client.h for libvramtrace.so.
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
#include "client-forward.h"

static pthread_once_t		 forward_once = PTHREAD_ONCE_INIT;
static struct client_forward	 forward_entry;

static void
forward_resolve(void)
{
	const char	*path = getenv("CUDA_INJECTION64_PATH");
	void		*h;

	if (path == NULL || *path == '\0')
		return;
	if ((h = dlopen(path, RTLD_NOW | RTLD_LOCAL)) == NULL)
		return;
	*(void **)&forward_entry.step = dlsym(h, "vramtrace_inject_step");
	*(void **)&forward_entry.mark = dlsym(h, "vramtrace_inject_mark");
	*(void **)&forward_entry.emit = dlsym(h, "vramtrace_inject_emit");
	*(void **)&forward_entry.string = dlsym(h, "vramtrace_inject_string");
	*(void **)&forward_entry.flush = dlsym(h, "vramtrace_inject_flush");
}

/*
 * The injection library's entry points; members are NULL when the process
 * is not being recorded (or the library is older and lacks one).
 */
const struct client_forward *
client_forward(void)
{
	pthread_once(&forward_once, forward_resolve);
	return (&forward_entry);
}

/* Returns 1 when events reach a recording, 0 otherwise. */
int
client_start(const char *source_name)
{
	(void)source_name;
	return (client_forward()->emit != NULL);
}

/* Hand one event to the injection library's client. */
void
client_emit(const struct event *ev)
{
	if (client_forward()->emit != NULL)
		client_forward()->emit(ev);
}

/* The injection library's id for text; 0 when nothing records. */
uint32_t
client_string(const char *text)
{
	if (client_forward()->string == NULL)
		return (0);
	return (client_forward()->string(text));
}

/* Ship what is queued and wait until it is written. */
void
client_flush(void)
{
	if (client_forward()->flush != NULL)
		client_forward()->flush();
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
