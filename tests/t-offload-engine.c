/*
 * t-offload-engine.c: the offload engine's decisions over a fake runtime.
 *
 * Streams, events and copies are numbers; no event ever completes, so
 * every source the engine lets go is one it made the compute stream wait
 * for.  Covers the hand-over from forward to backward: in budget mode the
 * budget's bound leaves the slack of the last tensor kept, so a source can
 * still be held when backward begins; the first vramtrace_offload_reached
 * of the step lets it go (a DROP request, compute waiting for its copy).
 * Without a budget the held sources are the last layer's, which backward
 * uses first: they stay.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "offload.h"
#include "tap.h"

#define COMPUTE		7		/* the caller's stream */
#define BYTES		100		/* each saved tensor */

static uint64_t	fake_next = 100;	/* streams and events */
static int	fake_compute_waits;	/* waits of COMPUTE */

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
	return (0);
}

static int
fake_wait(void *arg, uint64_t stream, uint64_t ev)
{
	(void)arg;
	(void)ev;
	fake_compute_waits += stream == COMPUTE;
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

static const char *
fake_error(void *arg)
{
	(void)arg;
	return ("fake");
}

static const struct offload_ops fake_ops = {
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
	.error = fake_error,
};

/* Whether the queued requests hold a DROP of id; empties the queue. */
static int
dropped(struct vramtrace_offload *e, uint64_t id)
{
	struct vramtrace_offload_request	r;
	int					found = 0;

	while (vramtrace_offload_next(e, &r))
		found |= r.kind == VRAMTRACE_OFFLOAD_REQ_DROP && r.id == id;
	return (found);
}

/*
 * Two steps of three saved tensors of BYTES each, the second stopped when
 * backward begins: returns whether the first vramtrace_offload_reached of
 * the second step dropped the first tensor's source, and sets *waits to
 * the waits of the compute stream it issued.
 */
static int
second_step_drops(int64_t budget, int *waits)
{
	struct vramtrace_offload_config	 cfg;
	struct vramtrace_offload_tensor	 t;
	struct vramtrace_offload	*e;
	uint64_t			 id[3], got, n;
	int				 step, i, rc, found;

	vramtrace_offload_config_init(&cfg);
	cfg.budget = budget;
	cfg.min_offload_size = 1;
	cfg.slab_bytes = 4096;
	if ((e = offload_engine_create(&fake_ops, &cfg, NULL, 0)) == NULL)
		return (-1);
	for (step = 0; step < 2; step++) {
		vramtrace_offload_enter(e);
		dropped(e, 0);
		for (i = 0; i < 3; i++) {
			memset(&t, 0, sizeof t);
			t.storage = t.src = 0x10000 * (uint64_t)(i + 1);
			t.generation = (uint64_t)(step * 3 + i + 1);
			t.bytes = BYTES;
			t.ndim = 1;
			t.shape[0] = BYTES;
			t.stride[0] = 1;
			id[i] = 0;
			vramtrace_offload_pack(e, &t, COMPUTE, &id[i]);
		}
		dropped(e, 0);
		if (step == 1)
			break;
		vramtrace_offload_reached(e, 0, COMPUTE);
		for (i = 2; i >= 0; i--) {
			rc = vramtrace_offload_unpack(e, id[i], COMPUTE, &n);
			if (rc == VRAMTRACE_OFFLOAD_NEED_BUFFER) {
				vramtrace_offload_restore(e, id[i], 0x1000,
				    COMPUTE);
				vramtrace_offload_unpack(e, id[i], COMPUTE,
				    &got);
			}
		}
		vramtrace_offload_exit(e);
	}
	fake_compute_waits = 0;
	vramtrace_offload_reached(e, 0, COMPUTE);
	*waits = fake_compute_waits;
	found = id[0] != 0 && dropped(e, id[0]);
	vramtrace_offload_exit(e);
	dropped(e, 0);
	vramtrace_offload_free(e);
	return (found);
}

int
main(void)
{
	int	waits;

	tap_plan(4);
	/*
	 * A budget of two tensors: the second step offloads the first and
	 * keeps the others; with them kept, the bound is reached exactly, so
	 * the first source is still held when backward begins.
	 */
	tap_eq(second_step_drops(2 * BYTES, &waits), 1,
	    "budget: backward's first call lets go of a held source");
	tap_eq(waits, 1, "budget: compute waits for its copy");
	tap_eq(second_step_drops(-1, &waits), 0,
	    "no budget: the last layer's sources stay for backward");
	tap_eq(waits, 0, "no budget: no wait");
	return (tap_done());
}
