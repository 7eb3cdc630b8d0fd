/*
 * pickle-stream.c: handing the big lists of a snapshot to the consumer.
 *
 * Streaming: when a list is created, its role is read off the stack shape.
 * The root dict is stack[0] and its pairs sit above it, key then value, so
 * a list created at an even position p whose key stack[p-1] is "segments"
 * or "device_traces" (with no mark between them and the root's own mark)
 * is that top-level list, and a list created right above the device_traces
 * list or above one of its device lists is the next device's trace list.
 * Elements appended to such lists go to the element callback first.  A
 * crafted file can fool this guess; the consumer validates what it gets.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "pickle-int.h"

#include <stdlib.h>
#include <string.h>

static int
pickle_stream_is_key(const struct pickle_value *v, const char *key)
{
	size_t	len = strlen(key);

	return (v->type == PICKLE_STR && v->u.s->len == len &&
	    memcmp(v->u.s->data, key, len) == 0);
}

/* Whether a value pushed now would be the root dict's value for key. */
static int
pickle_stream_is_top(const struct pickle_parser *p, const char *key)
{
	size_t	pos = p->depth, m = 0;

	if (pos < 2 || pos % 2 != 0 || p->stack[0].type != PICKLE_DICT ||
	    !pickle_stream_is_key(&p->stack[pos - 1], key))
		return (0);
	while (m < p->nmarks && p->marks[m] <= 1)
		m++;
	return (m == p->nmarks);
}

/*
 * Give list container c its role (segments, device_traces, one device's
 * trace list, or none) from where it is created on the stack.
 */
void
pickle_stream_role(struct pickle_parser *p, struct pickle_container *c)
{
	const struct pickle_value	*below;

	if (pickle_stream_is_top(p, "segments")) {
		c->role = PICKLE_ROLE_SEGMENTS;
		return;
	}
	if (pickle_stream_is_top(p, "device_traces")) {
		c->role = PICKLE_ROLE_DEVICE_TRACES;
		return;
	}
	if (p->depth == 0)
		return;
	below = &p->stack[p->depth - 1];
	if (below->type == PICKLE_LIST &&
	    (below->u.c->role == PICKLE_ROLE_DEVICE_TRACES ||
	    below->u.c->role == PICKLE_ROLE_TRACE)) {
		c->role = PICKLE_ROLE_TRACE;
		c->device = p->devices++;
	}
}

/* Give one element to the callback; 1 if it consumed it (any answer > 0). */
int
pickle_stream_element(struct pickle_parser *p,
    struct pickle_container *list,
    struct pickle_value *v)
{
	enum pickle_list_kind	 kind;
	size_t			 device = 0;
	int			 rc;
	char			*cause = NULL;

	if (list->role == PICKLE_ROLE_SEGMENTS)
		kind = PICKLE_SEGMENTS;
	else {
		kind = PICKLE_TRACE;
		device = list->device;
	}
	rc = p->cb->element(p->cb->arg, kind, device, list->streamed++, v,
	    &cause);
	if (rc < 0) {
		free(p->cause);
		p->cause = cause != NULL ? cause :
		    pickle_error_fmt("%s: element callback failed", p->name);
		return (-1);
	}
	free(cause);
	if (rc == 0)
		return (0);
	if (pickle_value_depth(v) > 0 && v->u.c->slot != PICKLE_NO_SLOT &&
	    pickle_same(&p->memo[v->u.c->slot], v)) {
		pickle_value_unref(&p->memo[v->u.c->slot]);
		p->memo[v->u.c->slot].type = PICKLE_CONSUMED;
	}
	return (1);
}
