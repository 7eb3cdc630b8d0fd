/*
 * pickle-stream.c: handing the elements of the big lists to the consumer.
 *
 * An element goes to the element callback when it is appended to a
 * streamed list (pickle-role.c says which lists are), or when a list that
 * was kept whole turns out to be one of them (pickle_stream_items).  The
 * callback's answer says whether the list keeps it.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "pickle-int.h"

#include <stdlib.h>

static enum pickle_list_kind
pickle_stream_kind(enum pickle_role role)
{
	if (role == PICKLE_ROLE_SEGMENTS)
		return (PICKLE_SEGMENTS);
	if (role == PICKLE_ROLE_ANNOTATIONS)
		return (PICKLE_ANNOTATION);
	return (PICKLE_TRACE);
}

static int
pickle_stream_call(struct pickle_parser *p, enum pickle_role role,
    size_t device, size_t index, const struct pickle_value *v)
{
	char	*cause = NULL;
	int	 rc;

	rc = p->cb->element(p->cb->arg, pickle_stream_kind(role), device,
	    index, v, &cause);
	if (rc < 0) {
		free(p->cause);
		p->cause = cause != NULL ? cause :
		    pickle_error_fmt("%s: element callback failed", p->name);
		return (-1);
	}
	free(cause);
	return (rc > 0);
}

/*
 * Give element v of the streamed list to the callback.  Returns 1 if the
 * callback consumed it (any answer > 0), 0 if the list keeps it, -1 with
 * the cause set to stop.
 */
int
pickle_stream_element(struct pickle_parser *p,
    struct pickle_container *list, struct pickle_value *v)
{
	return (pickle_stream_call(p, (enum pickle_role)list->role,
	    list->device, list->streamed++, v));
}

/*
 * Give the items of list, a list kept whole, to the callback as the
 * elements of a streamed list of role: "segments" or
 * "external_annotations", one device's trace (the next device), or
 * "device_traces" (each list among the items is the next device's trace).
 * The list keeps its items whatever the answers.  0, or -1 to stop.
 */
int
pickle_stream_items(struct pickle_parser *p, struct pickle_container *list,
    enum pickle_role role)
{
	const struct pickle_value	*v;
	size_t				 i, device = 0;

	if (role == PICKLE_ROLE_TRACE)
		device = p->devices++;
	for (i = 0; i < list->len; i++) {
		v = &list->items[i];
		if (role != PICKLE_ROLE_DEVICE_TRACES) {
			if (pickle_stream_call(p, role, device, i, v) < 0)
				return (-1);
		} else if (v->type == PICKLE_LIST &&
		    pickle_stream_items(p, v->u.c, PICKLE_ROLE_TRACE) != 0)
			return (-1);
	}
	return (0);
}
