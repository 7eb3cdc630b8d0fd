/*
 * check.c: the offload check's events, in libvramtrace.so.
 *
 * The checker itself is Python (python/vramtrace/_check*.py): it wraps the
 * pack and unpack hooks of any saved-tensor-hooks engine and compares what
 * unpack returns with what pack received.  What it finds reaches the
 * recording here: strings (the engine's class, stacks, shape, dtype, the
 * words of a difference) become string ids of the process's one connection
 * and the rest an EVENT_CHECK_STEP or EVENT_CHECK_DIFF record, handed to
 * the injection library like every other event of this library
 * (client-forward.c).  Nothing is kept here.
 */
#include "config.h"

#include <string.h>

#include "libvramtrace.h"
#include "client.h"

_Static_assert(VRAMTRACE_CHECK_SHAPE == EVENT_CHECK_SHAPE &&
    VRAMTRACE_CHECK_DTYPE == EVENT_CHECK_DTYPE &&
    VRAMTRACE_CHECK_DEVICE == EVENT_CHECK_DEVICE &&
    VRAMTRACE_CHECK_CONTENTS == EVENT_CHECK_CONTENTS &&
    VRAMTRACE_CHECK_NOT_TENSOR == EVENT_CHECK_NOT_TENSOR &&
    VRAMTRACE_CHECK_STRIDES == EVENT_CHECK_STRIDES,
    "the public and the wire difference bits are the same");

/* The id of text on the connection; 0 for NULL or when nothing records. */
static uint32_t
check_string(const char *text)
{
	return (text != NULL ? client_string(text) : 0);
}

/* Record one engine's activity in one step; a no-op when nothing records. */
void
vramtrace_check_step(const struct vramtrace_check_step *s)
{
	struct event	ev;

	if (s == NULL || !client_start("check"))
		return;
	memset(&ev, 0, sizeof ev);
	ev.type = EVENT_CHECK_STEP;
	ev.time_ns = lib_now_ns();
	ev.u.check_step.step = s->step;
	ev.u.check_step.packs = s->packs;
	ev.u.check_step.unpacks = s->unpacks;
	ev.u.check_step.checked = s->checked;
	ev.u.check_step.differ = s->differ;
	ev.u.check_step.packed_bytes = s->packed_bytes;
	ev.u.check_step.moved_bytes = s->moved_bytes;
	ev.u.check_step.engine = check_string(s->engine);
	ev.u.check_step.device = s->device;
	client_emit(&ev);
}

/*
 * Record a saved tensor that came back different.  Returns -1 for a
 * difference that is none (see libvramtrace.h), else 0, recorded or not.
 */
int
vramtrace_check_diff(const struct vramtrace_check_diff *d)
{
	struct event		 ev;
	struct event_check_diff	*cd = &ev.u.check_diff;

	if (d == NULL || (d->differs & ~(uint32_t)EVENT_CHECK_ALL) != 0 ||
	    (d->differs & ~(uint32_t)EVENT_CHECK_STRIDES) == 0)
		return (-1);
	if (!client_start("check"))
		return (0);
	memset(&ev, 0, sizeof ev);
	ev.type = EVENT_CHECK_DIFF;
	ev.time_ns = d->pack_ns;
	cd->step = d->step;
	cd->unpack_ns = d->unpack_ns;
	cd->index = d->index;
	cd->bytes = d->bytes;
	cd->engine = check_string(d->engine);
	cd->pack_site = check_string(d->pack_site);
	cd->where = check_string(d->where);
	cd->unpack_site = check_string(d->unpack_site);
	cd->shape = check_string(d->shape);
	cd->dtype = check_string(d->dtype);
	cd->detail = check_string(d->detail);
	cd->differs = d->differs;
	cd->device = d->device;
	client_emit(&ev);
	return (0);
}
