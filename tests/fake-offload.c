/*
 * fake-offload.c: libvramtrace's offload engine over a fake runtime, as a
 * library (tests/libfake-offload.so) that the Python binding loads in
 * place of libvramtrace.so (VRAMTRACE_LIB) to test the saved-tensor hooks
 * without a GPU (tests/offload-python.py).  Streams and events are
 * numbers, every event is complete, copies move nothing: device pointers
 * are made up by the test.  Host memory is real.
 */
#include "config.h"

#include <stdlib.h>

#include "offload.h"

static uint64_t	fake_next = 100;

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
fake_ok1(void *arg, uint64_t a)
{
	(void)arg;
	(void)a;
	return (0);
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
fake_done(void *arg, uint64_t ev)
{
	(void)arg;
	(void)ev;
	return (1);
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
	*total = (uint64_t)1 << 34;
	return (0);
}

static const char *
fake_error(void *arg)
{
	(void)arg;
	return ("fake");
}

static const struct offload_ops fake_ops = {
	.stream_create = fake_new,
	.stream_destroy = fake_forget,
	.stream_sync = fake_ok1,
	.event_create = fake_new,
	.event_destroy = fake_forget,
	.event_record = fake_ok2,
	.event_done = fake_done,
	.stream_wait = fake_ok2,
	.copy = fake_copy,
	.host_alloc = fake_host_alloc,
	.host_free = fake_host_free,
	.mem_total = fake_mem_total,
	.error = fake_error,
};

struct vramtrace_offload *
vramtrace_offload_create(const struct vramtrace_offload_config *cfg,
    char *err, size_t errlen)
{
	return (offload_engine_create(&fake_ops, cfg, err, errlen));
}
