/*
 * pickle-role.c: what a new container is for, read off the stack.
 *
 * When a container is made, the stack says where it will go.  Pass 1 noted
 * which opcodes push the top-level dict's values (pickle-scan.c): such a
 * container, with its key right below it, is one of the streamed lists
 * ("segments", "device_traces", "external_annotations" when asked), a kept
 * value or a dropped one.  Otherwise the nearest container below it
 * decides (p->near): above a streamed list a container is one of its
 * elements, above "device_traces" a list is the next device's trace,
 * inside a dropped container everything is dropped, inside an element
 * (with the mark of its SETITEMS or APPENDS above it) everything is kept.
 * A list made right above a trace list with no mark between them is taken
 * for the next device's trace (Python writes an empty list, or a list of
 * one item, without a mark), a dict for an element.
 *
 * Below the top level the role is a guess that a crafted file can fool
 * (in a file whose content is a valid snapshot, it is right); it decides
 * only how items are handled while the container is built.  Where a container is
 * finally put decides what it is (pickle-parse.c), and a guess that turns
 * out wrong is repaired there: the container is streamed late or rebuilt
 * from its bytes.  Such a rebuild forces its role (p->force) on what it
 * makes at its own top level, and nothing below it on the stack counts.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "pickle-int.h"

#include <string.h>

static int
pickle_role_is(const struct pickle_value *v, const char *key)
{
	size_t	len = strlen(key);

	return (v->type == PICKLE_STR && v->u.s->len == len &&
	    memcmp(v->u.s->data, key, len) == 0);
}

/*
 * The role of a container under top-level key (a str value): one of the
 * streamed lists' roles (for a list), PICKLE_ROLE_NONE for a kept value or
 * PICKLE_ROLE_DISCARD for a dropped one.  Needs the element callback.
 */
int
pickle_role_key(const struct pickle_parser *p, const struct pickle_value *key)
{
	const char *const	*k;

	if (pickle_role_is(key, "segments"))
		return (PICKLE_ROLE_SEGMENTS);
	if (pickle_role_is(key, "device_traces"))
		return (PICKLE_ROLE_DEVICE_TRACES);
	if (p->cb->annotations && pickle_role_is(key, "external_annotations"))
		return (PICKLE_ROLE_ANNOTATIONS);
	if (p->cb->keep == NULL)
		return (PICKLE_ROLE_NONE);
	for (k = p->cb->keep; *k != NULL; k++) {
		if (pickle_role_is(key, *k))
			return (PICKLE_ROLE_NONE);
	}
	return (PICKLE_ROLE_DISCARD);
}

/*
 * Whether the value pushed by the opcode at offset at is one of the
 * top-level dict's own values (pass 1 noted them; pickle-scan.c).
 */
int
pickle_role_root_value(const struct pickle_parser *p, uint64_t at)
{
	size_t	lo = 0, hi = p->nroots, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (p->roots[mid] < at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (lo < p->nroots && p->roots[lo] == at);
}

/* The role of a container of type made now (see the top of the file). */
enum pickle_role
pickle_role_new(const struct pickle_parser *p, enum pickle_type type)
{
	const struct pickle_value	*key;
	const struct pickle_container	*b;
	size_t				 below;
	int				 role, marked;

	if (p->cb == NULL || p->cb->element == NULL)
		return (PICKLE_ROLE_NONE);
	below = p->depth > 0 ? p->near[p->depth - 1] : PICKLE_NO_SLOT;
	role = -1;
	if (p->force >= 0 && (below == PICKLE_NO_SLOT ||
	    below < p->force_floor))
		role = p->force;
	else if (below == PICKLE_NO_SLOT)
		return (PICKLE_ROLE_ROOT);
	else if (p->replays == 0 && pickle_role_root_value(p, p->op)) {
		key = &p->stack[p->depth - 1];
		role = key->type == PICKLE_STR ? pickle_role_key(p, key) :
		    PICKLE_ROLE_NONE;
	}
	if (role >= 0) {
		/* The streamed roles are for lists; the rest is dropped. */
		if (role != PICKLE_ROLE_NONE && role != PICKLE_ROLE_DISCARD &&
		    type != PICKLE_LIST)
			role = PICKLE_ROLE_DISCARD;
		return ((enum pickle_role)role);
	}
	b = p->stack[below].u.c;
	marked = p->nmarks > 0 && p->marks[p->nmarks - 1] > below;
	switch (b->role) {
	case PICKLE_ROLE_SEGMENTS:
	case PICKLE_ROLE_ANNOTATIONS:
		return (PICKLE_ROLE_ELEMENT);
	case PICKLE_ROLE_TRACE:
		return (!marked && type == PICKLE_LIST ? PICKLE_ROLE_TRACE :
		    PICKLE_ROLE_ELEMENT);
	case PICKLE_ROLE_DEVICE_TRACES:
		return (type == PICKLE_LIST ? PICKLE_ROLE_TRACE :
		    PICKLE_ROLE_DISCARD);
	case PICKLE_ROLE_DISCARD:
		return (PICKLE_ROLE_DISCARD);
	case PICKLE_ROLE_ELEMENT:
		return (marked ? PICKLE_ROLE_NONE : PICKLE_ROLE_ELEMENT);
	}
	return (PICKLE_ROLE_NONE);
}

/*
 * Whether v is a container whose items are not all in memory: a streamed
 * list (its elements went to the callback), "device_traces" (its lists are
 * streamed) or a dropped value.
 */
int
pickle_role_lossy(const struct pickle_value *v)
{
	if (!pickle_value_is_container(v))
		return (0);
	switch (v->u.c->role) {
	case PICKLE_ROLE_SEGMENTS:
	case PICKLE_ROLE_ANNOTATIONS:
	case PICKLE_ROLE_TRACE:
	case PICKLE_ROLE_DEVICE_TRACES:
	case PICKLE_ROLE_DISCARD:
		return (1);
	}
	return (0);
}
