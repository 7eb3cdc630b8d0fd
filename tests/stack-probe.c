/*
 * stack-probe.c: the stack capture of the injection library (lib/stack*.c
 * and the client) without CUDA, for tests/t-stacks.sh.
 *
 * Built as tests/libstack-probe.so, which tests/stacks.py loads into
 * python3 with ctypes (probe_alloc() called through ctypes.CDLL runs with
 * the GIL released, as a PyTorch operation does; through ctypes.PyDLL with
 * the GIL held) and tests/stack-host, a C program, loads with dlopen.
 * Each probe_alloc() makes the event a CUPTI allocation callback would and
 * asks stack.c for its stack, exactly as inject-calls.c does; given as
 * CUDA_INJECTION64_PATH it also takes PyTorch's history from
 * python/vramtrace/_history.py, as the injection library does.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "stack.h"

#define PROBE_API	__attribute__((visibility("default")))

int	probe_start(const char *, unsigned) PROBE_API;
void	probe_alloc(uint64_t, uint64_t) PROBE_API;
void	probe_alloc_wait(uint64_t, uint64_t, unsigned) PROBE_API;
void	probe_free(uint64_t) PROBE_API;
void	probe_flush(void) PROBE_API;
int	probe_thread_alloc(uint64_t, uint64_t) PROBE_API;
void	vramtrace_inject_block(int, uint64_t, int32_t, uint64_t, uint64_t,
	    uint64_t, const char *) PROBE_API;

/*
 * Start the client (VRAMTRACE_SOCKET or VRAMTRACE_OUTPUT) and the stack
 * capture with mode ("python", "native", "all", "none") and depth, its
 * sweep on the client's thread as the injection library has it.
 * Returns 0, or -1 when the client is off or mode is unknown.
 */
int
probe_start(const char *mode, unsigned depth)
{
	struct stack_config	c;

	if (lib_parse_stacks(mode, &c.kinds) != 0 || !client_start("probe"))
		return (-1);
	c.depth = depth;
	if (stack_start(&c) != 0)
		return (-1);
	client_set_sweep(stack_sweep);
	return (0);
}

static void
probe_event(uint8_t type, uint64_t address, uint64_t bytes)
{
	struct event	ev;

	memset(&ev, 0, sizeof ev);
	ev.type = type;
	ev.time_ns = lib_now_ns();
	ev.u.alloc.address = address;
	ev.u.alloc.bytes = bytes;
	ev.u.alloc.requested = EVENT_NONE;
	ev.u.alloc.stream = 7;
	ev.u.alloc.correlation = EVENT_NONE;
	ev.u.alloc.layer = EVENT_LAYER_POOL;
	if (type == EVENT_ALLOC && stack_alloc(&ev))
		return;
	client_emit(&ev);
}

/* An allocation, as the CUPTI callback on cuMemAllocAsync makes it. */
void
probe_alloc(uint64_t address, uint64_t bytes)
{
	probe_event(EVENT_ALLOC, address, bytes);
}

/* An allocation in a call that then takes ms milliseconds to return. */
void
probe_alloc_wait(uint64_t address, uint64_t bytes, unsigned ms)
{
	probe_event(EVENT_ALLOC, address, bytes);
	usleep(ms * 1000);
}

/* A free. */
void
probe_free(uint64_t address)
{
	probe_event(EVENT_FREE, address, 0);
}

/* Ship every event made so far and wait until it is written. */
void
probe_flush(void)
{
	client_flush();
}

/*
 * The injection library's entry point for PyTorch's history, as
 * python/vramtrace/_history.py calls it; without CUDA no stream handle
 * can be mapped, so the stream is unknown.
 */
void
vramtrace_inject_block(int freed, uint64_t time_ns, int32_t device,
    uint64_t address, uint64_t bytes, uint64_t handle, const char *stack)
{
	(void)handle;
	if (client_start("probe"))
		stack_block(freed, time_ns, device, address, bytes, EVENT_NONE,
		    stack);
}

static uint64_t	probe_thread_args[2];

static void *
probe_thread_main(void *arg)
{
	(void)arg;
	probe_alloc(probe_thread_args[0], probe_thread_args[1]);
	return (NULL);
}

/* An allocation on a new thread without Python frames; 0 or -1. */
int
probe_thread_alloc(uint64_t address, uint64_t bytes)
{
	pthread_t	t;

	probe_thread_args[0] = address;
	probe_thread_args[1] = bytes;
	if (pthread_create(&t, NULL, probe_thread_main, NULL) != 0)
		return (-1);
	return (pthread_join(t, NULL) == 0 ? 0 : -1);
}
