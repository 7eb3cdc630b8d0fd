/*
 * fake-runtime.c: the offload engine's GPU runtime, faked (see
 * fake-runtime.h).
 */
#include "config.h"

#include <stdlib.h>

#include "fake-runtime.h"

static uint64_t	fake_next = 100;	/* streams and events */
int		fake_runtime_done;
uint64_t	fake_runtime_counted;
int		fake_runtime_waits;

static int
fake_new(void *arg, uint64_t *handle)
{
	(void)arg;
	*handle = fake_next++;
	return (0);
}

static void
fake_forget(void *arg, uint64_t handle)
{
	(void)arg;
	(void)handle;
}

static int
fake_ok2(void *arg, uint64_t a, uint64_t b)
{
	(void)arg;
	(void)a;
	(void)b;
	return (0);
}

static int
fake_sync(void *arg, uint64_t stream)
{
	(void)arg;
	(void)stream;
	return (0);
}

static int
fake_done(void *arg, uint64_t ev)
{
	(void)arg;
	(void)ev;
	return (fake_runtime_done);
}

static int
fake_wait(void *arg, uint64_t stream, uint64_t ev)
{
	(void)arg;
	(void)ev;
	fake_runtime_waits += stream == fake_runtime_counted;
	return (0);
}

static int
fake_copy(void *arg, uint64_t dst, uint64_t src, uint64_t n, uint64_t s)
{
	(void)arg;
	(void)dst;
	(void)src;
	(void)n;
	(void)s;
	return (0);
}

static int
fake_host_alloc(void *arg, uint64_t n, int pinned, uint64_t *p)
{
	(void)arg;
	(void)pinned;
	*p = (uint64_t)(uintptr_t)malloc(n);
	return (*p == 0 ? -1 : 0);
}

static void
fake_host_free(void *arg, uint64_t p, int pinned)
{
	(void)arg;
	(void)pinned;
	free((void *)(uintptr_t)p);
}

static int
fake_mem_total(void *arg, uint64_t *total)
{
	(void)arg;
	*total = 1 << 30;
	return (0);
}

static const char *
fake_error(void *arg)
{
	(void)arg;
	return ("fake");
}

const struct offload_ops fake_runtime_ops = {
	.stream_create = fake_new,
	.stream_destroy = fake_forget,
	.stream_sync = fake_sync,
	.event_create = fake_new,
	.event_destroy = fake_forget,
	.event_record = fake_ok2,
	.event_done = fake_done,
	.stream_wait = fake_wait,
	.copy = fake_copy,
	.host_alloc = fake_host_alloc,
	.host_free = fake_host_free,
	.mem_total = fake_mem_total,
	.error = fake_error,
};

