/*
 * inject.c: the life cycle of libvramtrace-inject.so.
 *
 * The CUDA driver calls InitializeInjection() once during cuInit, before any
 * context exists.  We read the configuration from the environment, start the
 * client (which connects to the collector or opens the spool file), start
 * CUPTI, and start one timer thread that asks CUPTI every flush period for
 * the records it has completed.  At exit a forced flush hands over the
 * buffers that hold incomplete records; the client's own exit handler, which
 * runs after ours, ships them.
 *
 * The state is a handful of statics guarded by inject_lock: inject_done makes
 * the entry point idempotent, inject_on says whether CUPTI records.  A fork
 * child has no timer thread and its client is off (client.c), so nothing
 * it does is recorded.  On any failure the library says so once and the
 * program runs untraced; it never exits or aborts.
 */

#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client.h"
#include "inject.h"

#define INJECT_API	__attribute__((visibility("default")))

static pthread_mutex_t	inject_lock = PTHREAD_MUTEX_INITIALIZER;
static int		inject_done;
static int		inject_on;
static struct inject_config inject_config = { 200, 1, INJECT_RECORD_DEFAULT,
    "step", { LIB_STACK_PYTHON, LIB_STACK_DEPTH } };

int	InitializeInjection(void) INJECT_API;
void	 vramtrace_inject_step(void) INJECT_API;
void	 vramtrace_inject_mark(const char *) INJECT_API;
void	 vramtrace_inject_emit(const struct event *) INJECT_API;
uint32_t vramtrace_inject_string(const char *) INJECT_API;
void	 vramtrace_inject_flush(void) INJECT_API;
void	 vramtrace_inject_block(int, uint64_t, int32_t, uint64_t, uint64_t,
	     uint64_t, const char *) INJECT_API;

/*
 * "calls,pool,copies,interpose" (any subset of calls, memory, pool,
 * copies, memcpy and interpose, any order) into INJECT_RECORD_*.
 */
static unsigned
inject_parse_records(const char *list)
{
	static const struct {
		const char	*name;
		unsigned	 bit;
	} names[] = {
		{ "calls", INJECT_RECORD_CALLS },
		{ "memory", INJECT_RECORD_MEMORY },
		{ "pool", INJECT_RECORD_POOL },
		{ "copies", INJECT_RECORD_COPIES },
		{ "interpose", INJECT_RECORD_INTERPOSE },
		{ "memcpy", INJECT_RECORD_MEMCPY },
	};
	unsigned	records = 0;
	size_t		i, len;

	while (*list != '\0') {
		len = strcspn(list, ",");
		for (i = 0; i < sizeof names / sizeof names[0]; i++) {
			if (strlen(names[i].name) == len &&
			    strncmp(names[i].name, list, len) == 0)
				break;
		}
		if (i == sizeof names / sizeof names[0])
			client_note("VRAMTRACE_RECORDS: unknown record kind %.*s"
			    " (known: calls, memory, pool, copies, memcpy,"
			    " interpose); recording goes on without it",
			    (int)len, list);
		else
			records |= names[i].bit;
		list += len;
		if (*list == ',')
			list++;
	}
	return (records);
}

static void
inject_read_config(void)
{
	const char	*s;
	uint64_t	 v;

	if ((s = getenv("VRAMTRACE_FLUSH_MS")) != NULL && atoi(s) > 0)
		inject_config.flush_ms = (unsigned)atoi(s);
	if ((s = getenv("VRAMTRACE_NVTX")) != NULL)
		inject_config.nvtx = strcmp(s, "0") != 0;
	if ((s = getenv("VRAMTRACE_RECORDS")) != NULL)
		inject_config.records = inject_parse_records(s);
	if ((s = getenv("VRAMTRACE_STACKS")) != NULL &&
	    lib_parse_stacks(s, &inject_config.stacks.kinds) != 0)
		client_note("VRAMTRACE_STACKS: unknown mode %s (known: python,"
		    " native, all, none); recording goes on with python stacks",
		    s);
	if ((s = getenv("VRAMTRACE_STACK_DEPTH")) != NULL) {
		if (lib_parse_uint(s, &v) != 0 || v == 0 ||
		    v > LIB_STACK_DEPTH_MAX)
			client_note("VRAMTRACE_STACK_DEPTH: not a number of"
			    " frames from 1 to %d: %s; recording goes on with"
			    " %d", LIB_STACK_DEPTH_MAX, s, LIB_STACK_DEPTH);
		else
			inject_config.stacks.depth = (unsigned)v;
	}
	if ((s = getenv("VRAMTRACE_STEP_MARKER")) != NULL && *s != '\0')
		inject_config.step_marker = s;
}

static void *
inject_timer(void *arg)
{
	struct timespec	ts;

	(void)arg;
	ts.tv_sec = inject_config.flush_ms / 1000;
	ts.tv_nsec = (long)(inject_config.flush_ms % 1000) * 1000000;
	for (;;) {
		nanosleep(&ts, NULL);
		inject_cupti_flush(0);
	}
	return (NULL);
}

static void
inject_atexit(void)
{
	pthread_mutex_lock(&inject_lock);
	if (inject_on)
		inject_cupti_flush(1);
	inject_on = 0;
	pthread_mutex_unlock(&inject_lock);
}

static void
inject_fork_child(void)
{
	inject_on = 0;
}

/*
 * What the client's thread does between batches: the stacks' sweep, and
 * interpose's redirection of the objects loaded since.  Redirections run
 * on that thread only, once every start is done, never two at once (a
 * slot the loader made read-only is made writable for its write).
 */
static void
inject_sweep(int final)
{
	stack_sweep(final);
	inject_interpose_sweep();
}

/*
 * The entry point the CUDA driver calls.  Idempotent and thread-safe;
 * always returns 1 so that CUDA goes on, whatever happened here.
 */
int
InitializeInjection(void)
{
	pthread_t	 timer;
	char		*cause = NULL;

	pthread_mutex_lock(&inject_lock);
	if (inject_done)
		goto out;
	inject_done = 1;
	if (!client_start("cupti"))
		goto out;
	inject_read_config();
	if (inject_cupti_start(&inject_config, &cause) != 0) {
		client_warn("%s", cause);
		free(cause);
		client_stop();
		goto out;
	}
	inject_on = 1;
	stack_start(&inject_config.stacks);
	client_set_sweep(inject_sweep);
	pthread_atfork(NULL, NULL, inject_fork_child);
	atexit(inject_atexit);
	if (pthread_create(&timer, NULL, inject_timer, NULL) == 0)
		pthread_detach(timer);
out:
	pthread_mutex_unlock(&inject_lock);
	return (1);
}

static void
inject_emit_step(int type, const char *name)
{
	struct event	ev;

	if (!client_start("cupti"))
		return;
	memset(&ev, 0, sizeof ev);
	ev.type = (uint8_t)type;
	ev.time_ns = inject_now();
	ev.u.step.step = -1;
	ev.u.step.name = name != NULL ? client_string(name) : 0;
	client_emit(&ev);
}

/*
 * Mark the end of a step (libvramtrace.so's vramtrace_step() lands here, so
 * that a process has one connection).  A no-op when nothing records.
 */
void
vramtrace_inject_step(void)
{
	inject_emit_step(EVENT_STEP_END, NULL);
}

/* Record a named instant; NULL is ignored.  A no-op when nothing records. */
void
vramtrace_inject_mark(const char *name)
{
	if (name != NULL)
		inject_emit_step(EVENT_MARK, name);
}

/*
 * Queue an event made elsewhere in the process (libvramtrace.so's offload
 * engine), so that it travels on this library's one connection.
 */
void
vramtrace_inject_emit(const struct event *ev)
{
	if (client_start("cupti"))
		client_emit(ev);
}

/* The id of a string on this library's connection; 0 when nothing records. */
uint32_t
vramtrace_inject_string(const char *text)
{
	return (client_start("cupti") ? client_string(text) : 0);
}

/*
 * An allocator block's allocation (freed 0) or free (freed 1) from
 * PyTorch's allocation history (python/vramtrace/_history.py): at time_ns
 * on device, of bytes at address, on the stream whose cudaStream_t value
 * is handle; stack is a site string (stack.h) or NULL.  It becomes an
 * EVENT_LAYER_BLOCK event of this process.
 */
void
vramtrace_inject_block(int freed, uint64_t time_ns, int32_t device,
    uint64_t address, uint64_t bytes, uint64_t handle, const char *stack)
{
	if (client_start("cupti"))
		stack_block(freed, time_ns, device, address, bytes,
		    inject_cupti_stream(device, handle), stack);
}

/* Ship what is queued now and wait until it is written. */
void
vramtrace_inject_flush(void)
{
	client_flush();
}
