/*
 * pickle-stack.c: the parser's value and mark stacks.
 *
 * Each stack slot holds a value (owning one reference when it is a node),
 * the file offsets where the opcodes that made it begin and end (starts,
 * ends: for a container, its own start and end say more, as items go in)
 * and the position of the nearest container at or below it (near, for
 * roles).  The
 * marks are stack positions in ascending order, each with the offset of its
 * MARK opcode.  Opcodes only ever take values above the top mark, as
 * Python's unpickler does, and a replay (pickle-parse.c) sees nothing below
 * its floor: neither values below p->floor nor marks below p->mark_floor.
 * The arrays count toward the bytes the parser holds.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "pickle-int.h"

#include <stdlib.h>

#define PICKLE_SLOT_BYTES	(sizeof (struct pickle_value) + \
				    2 * sizeof (uint64_t) + sizeof (uint32_t))
#define PICKLE_MARK_BYTES	(sizeof (size_t) + sizeof (uint64_t))

/* Number of values above the top mark (or the floor) that opcodes see. */
size_t
pickle_stack_avail(const struct pickle_parser *p)
{
	size_t	top = p->floor;

	if (p->nmarks > p->mark_floor && p->marks[p->nmarks - 1] > top)
		top = p->marks[p->nmarks - 1];
	return (p->depth - top);
}

static int
pickle_stack_grow(struct pickle_parser *p)
{
	struct pickle_value	*stack;
	uint64_t		*starts, *ends;
	uint32_t		*near;
	size_t			 cap;

	if (p->depth == PICKLE_STACK_MAX) {
		return (pickle_error_set(p, "stack deeper than %u values at "
		    "offset %llu", PICKLE_STACK_MAX,
		    (unsigned long long)p->op));
	}
	cap = p->stack_cap == 0 ? 256 : p->stack_cap * 2;
	if ((stack = realloc(p->stack, cap * sizeof *stack)) == NULL)
		return (pickle_error_nomem(p));
	p->stack = stack;
	if ((starts = realloc(p->starts, cap * sizeof *starts)) == NULL)
		return (pickle_error_nomem(p));
	p->starts = starts;
	if ((ends = realloc(p->ends, cap * sizeof *ends)) == NULL)
		return (pickle_error_nomem(p));
	p->ends = ends;
	if ((near = realloc(p->near, cap * sizeof *near)) == NULL)
		return (pickle_error_nomem(p));
	p->near = near;
	p->mem += (cap - p->stack_cap) * PICKLE_SLOT_BYTES;
	p->stack_cap = cap;
	return (0);
}

/*
 * pickle_stack_push() for the cases its inline part leaves here: the
 * first value, which must be a dict, and a full stack.
 */
int
pickle_stack_push_grow(struct pickle_parser *p, struct pickle_value *v,
    uint64_t start)
{
	if (p->depth == 0 && v->type != PICKLE_DICT) {
		pickle_error_not_dict(p, v);
		goto fail;
	}
	if (p->depth == p->stack_cap && pickle_stack_grow(p) != 0)
		goto fail;
	p->stack[p->depth] = *v;
	p->starts[p->depth] = start;
	p->ends[p->depth] = pickle_read_offset(&p->r);
	if (pickle_value_is_container(v))
		p->near[p->depth] = (uint32_t)p->depth;
	else
		p->near[p->depth] = p->depth > 0 ? p->near[p->depth - 1] :
		    PICKLE_NO_SLOT;
	p->depth++;
	return (0);

fail:
	pickle_value_unref(v, &p->mem);
	return (-1);
}

/* Drop the top n values. */
void
pickle_stack_drop(struct pickle_parser *p, size_t n)
{
	while (n-- > 0)
		pickle_value_unref(&p->stack[--p->depth], &p->mem);
}

/* MARK: remember the stack depth and where the MARK is. */
int
pickle_stack_mark(struct pickle_parser *p)
{
	size_t		*marks, cap;
	uint64_t	*at;

	if (p->nmarks == p->marks_cap) {
		if (p->nmarks == PICKLE_MARK_MAX) {
			return (pickle_error_set(p, "more than %u open "
			    "MARKs at offset %llu", PICKLE_MARK_MAX,
			    (unsigned long long)p->op));
		}
		cap = p->marks_cap == 0 ? 64 : p->marks_cap * 2;
		if ((marks = realloc(p->marks, cap * sizeof *marks)) == NULL)
			return (pickle_error_nomem(p));
		p->marks = marks;
		if ((at = realloc(p->mark_at, cap * sizeof *at)) == NULL)
			return (pickle_error_nomem(p));
		p->mark_at = at;
		p->mem += (cap - p->marks_cap) * PICKLE_MARK_BYTES;
		p->marks_cap = cap;
	}
	p->mark_at[p->nmarks] = p->op;
	p->marks[p->nmarks++] = p->depth;
	return (0);
}

/*
 * Pop the top mark for opcode code: *n is the number of values above it
 * and *at the offset of its MARK.  An error without a mark.
 */
int
pickle_stack_pop_mark(struct pickle_parser *p, int code, size_t *n,
    uint64_t *at)
{
	*n = 0;
	if (p->nmarks == p->mark_floor) {
		return (pickle_error_set(p, "%s without MARK at offset %llu",
		    pickle_error_opname(code), (unsigned long long)p->op));
	}
	*n = pickle_stack_avail(p);
	*at = p->mark_at[--p->nmarks];
	return (0);
}

/* Release every value and both stacks. */
void
pickle_stack_free(struct pickle_parser *p)
{
	p->floor = 0;
	pickle_stack_drop(p, p->depth);
	p->mem -= p->stack_cap * PICKLE_SLOT_BYTES +
	    p->marks_cap * PICKLE_MARK_BYTES;
	free(p->stack);
	free(p->starts);
	free(p->ends);
	free(p->near);
	free(p->marks);
	free(p->mark_at);
	p->stack = NULL;
	p->starts = NULL;
	p->ends = NULL;
	p->near = NULL;
	p->marks = NULL;
	p->mark_at = NULL;
	p->stack_cap = p->marks_cap = p->nmarks = 0;
}
