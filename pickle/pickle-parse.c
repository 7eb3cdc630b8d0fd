/*
 * The pickle stack machine, restricted to the data opcodes of a snapshot.
 *
 * Pass 1 (pickle-scan.c) marks the memo slots a GET reads; pass 2, here,
 * runs the machine.  The stack and marks are in pickle-stack.c, the
 * opcodes that push one scalar or string in pickle-op.c, the memo in
 * pickle-memo.c, roles in pickle-role.c, streaming in pickle-stream.c and
 * error messages in pickle-error.c.
 *
 * Placing.  When a value is put into a container (APPEND, SETITEMS, TUPLE)
 * the container says what it needs (pickle_parse_settle): a streamed list
 * gives its elements to the callback, "device_traces" needs lists that
 * were streamed as device traces, a dropped container needs nothing, and
 * any other container needs the value whole.  A container that was built
 * for the place it lands in is taken as it is; one that is whole where a
 * streamed list is needed has its items streamed now; one whose items are
 * not in memory (a streamed list, a dropped value: lossy) where something
 * else is needed is rebuilt from its bytes first.
 *
 * Replaying.  A container's bytes are [start, end) of the input; running
 * the machine over them again, on top of the stack, builds it again.  A
 * replay reads the input at that range through its own reader, sees no
 * value or mark below its floor, skips the PUTs (the slots were filled the
 * first time) and resolves each GET to the slot as it was when the GET was
 * first read.  A GET of a slot whose value left memory replays the value
 * where the GET is, so a back-reference reads exactly as if the bytes it
 * refers to were written again at its place.  Replays nest at most
 * PICKLE_REREAD_DEPTH deep and read at most PICKLE_REREAD_MAX times the
 * input in all, so a crafted file of references to references cannot make
 * the work explode.
 *
 * Every stack or memo value that is a node holds one reference, so
 * freeing the stacks and the memo frees everything not returned.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "pickle-int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bytes any file may replay, on top of PICKLE_REREAD_MAX per input byte. */
#define PICKLE_REREAD_SLACK	(1u << 20)

/* What a place needs of a container put into it (pickle_parse_settle). */
enum pickle_need {
	PICKLE_NEED_NOTHING,	/* it is dropped */
	PICKLE_NEED_WHOLE,	/* every item in memory */
	PICKLE_NEED_STREAMED	/* streamed as the list of role `role` */
};

static int	pickle_parse_run(struct pickle_parser *, uint64_t);

/* Offset just after the opcode being run. */
static uint64_t
pickle_parse_here(const struct pickle_parser *p)
{
	return (pickle_read_offset(&p->r));
}

/*
 * Replay the bytes [start, end) on top of the stack, leaving the value
 * they build there.  force is the role of what the replay makes at its own
 * top level, or -1 for the roles its place gives (or that an enclosing
 * replay forces).  0, or -1 on error.
 */
static int
pickle_parse_replay(struct pickle_parser *p, uint64_t start, uint64_t end,
    int force)
{
	struct pickle_reader	 saved = p->r;
	size_t			 floor = p->floor, mark_floor = p->mark_floor;
	size_t			 force_floor = p->force_floor;
	unsigned		 level = p->replays;
	uint64_t		 op = p->op, budget;
	int			 saved_force = p->force, rc;

	budget = (uint64_t)PICKLE_REREAD_MAX * p->total + PICKLE_REREAD_SLACK;
	if (start < end && end <= p->total)
		p->reread += end - start;
	if (level == PICKLE_REREAD_DEPTH)
		rc = pickle_error_set(p, "shared values nested more than %d "
		    "deep at offset %llu", PICKLE_REREAD_DEPTH,
		    (unsigned long long)p->op);
	else if (start >= end || end > p->total)
		rc = pickle_error_set(p, "bad memo record at offset %llu",
		    (unsigned long long)p->op);
	else if (p->reread > budget)
		rc = pickle_error_set(p, "shared values at offset %llu would"
		    " make the file read more than %d times over",
		    (unsigned long long)p->op, PICKLE_REREAD_MAX);
	else
		rc = 0;
	if (rc < 0) {
		if (level == 0)
			pickle_error_replay(p, op);
		return (-1);
	}
	if (saved.fd != -1 && p->replay_buf[level] == NULL) {
		if ((p->replay_buf[level] = malloc(PICKLE_REPLAY_BUF)) == NULL)
			return (pickle_error_nomem(p));
		p->replay_base[level] = p->replay_len[level] = 0;
	}
	pickle_read_range(&p->r, &saved, p->replay_buf[level],
	    PICKLE_REPLAY_BUF, p->replay_base[level], p->replay_len[level],
	    start, end);
	p->floor = p->depth;
	p->mark_floor = p->nmarks;
	if (force >= 0) {
		p->force = force;
		p->force_floor = p->depth;
	}
	p->replays++;
	rc = pickle_parse_run(p, end);
	p->replays--;
	if (saved.fd != -1) {
		p->replay_base[level] = p->r.base;
		p->replay_len[level] = (size_t)(p->r.end - p->r.start);
	}
	if (rc == 0 && p->depth == p->floor)
		rc = pickle_error_set(p, "nothing to read again at offset %llu",
		    (unsigned long long)start);
	if (rc < 0 && level == 0)
		pickle_error_replay(p, op);
	if (rc == 0) {
		pickle_stack_drop(p, p->depth - p->floor - 1);
		p->nmarks = p->mark_floor;
	}
	p->r = saved;
	p->floor = floor;
	p->mark_floor = mark_floor;
	p->force = saved_force;
	p->force_floor = force_floor;
	p->op = op;
	return (rc < 0 ? -1 : 0);
}

/*
 * Replace the container at stack slot at by a new one rebuilt from its
 * bytes, whose own top level gets role force.
 */
static int
pickle_parse_rebuild(struct pickle_parser *p, size_t at, int force)
{
	struct pickle_container	*c = p->stack[at].u.c;

	if (c->moved) {
		return (pickle_error_set(p, "the value made at offset %llu is "
		    "used again at offset %llu after it was changed off the "
		    "stack: it cannot be read again",
		    (unsigned long long)c->start, (unsigned long long)p->op));
	}
	if (pickle_parse_replay(p, c->start, c->end, force) != 0)
		return (-1);
	pickle_value_unref(&p->stack[at], &p->mem);
	p->stack[at] = p->stack[--p->depth];
	return (0);
}

/*
 * Make the value at stack slot at fit the place it is put into: see the top
 * of the file.  role is the streamed list's role for PICKLE_NEED_STREAMED.
 */
static int
pickle_parse_settle(struct pickle_parser *p, size_t at, enum pickle_need need,
    enum pickle_role role)
{
	struct pickle_container	*c;
	int			 lossy;

	if (need == PICKLE_NEED_NOTHING ||
	    !pickle_value_is_container(&p->stack[at]))
		return (0);
	c = p->stack[at].u.c;
	if (c->role == PICKLE_ROLE_ROOT) {
		return (pickle_error_set(p, "the top-level dict is put inside "
		    "another value at offset %llu (not a PyTorch memory "
		    "snapshot)", (unsigned long long)p->op));
	}
	lossy = pickle_role_lossy(&p->stack[at]);
	if (need == PICKLE_NEED_WHOLE)
		return (lossy ? pickle_parse_rebuild(p, at, PICKLE_ROLE_NONE) :
		    0);
	if (p->stack[at].type != PICKLE_LIST)
		return (0);	/* not a list where one is needed: the caller's */
	if (!lossy)
		return (pickle_stream_items(p, c, role));
	if (c->role == role && !c->placed)
		return (0);	/* streamed where it was made */
	return (pickle_parse_rebuild(p, at, (int)role));
}

/*
 * The value at stack slot at was put into a container (or given to the
 * callback): it is complete.  A container whose items will not stay in
 * memory leaves the memo for a record of its bytes.
 */
static int
pickle_parse_placed(struct pickle_parser *p, size_t at, int consumed)
{
	struct pickle_container	*c;

	if (!pickle_value_is_container(&p->stack[at]))
		return (0);
	c = p->stack[at].u.c;
	c->sealed = c->placed = 1;
	if (!consumed && !pickle_role_lossy(&p->stack[at]) &&
	    c->role != PICKLE_ROLE_ELEMENT)
		return (0);
	if (pickle_memo_retire(&p->memo, c, &p->mem) != 0) {
		return (pickle_error_set(p, "cannot write the memo to a "
		    "temporary file: %s", strerror(errno)));
	}
	return (0);
}

/* Check that container c may receive items (it is not sealed). */
static int
pickle_parse_open(struct pickle_parser *p, int code,
    const struct pickle_container *c)
{
	if (!c->sealed)
		return (0);
	return (pickle_error_set(p, "%s into a container already nested in "
	    "another at offset %llu", pickle_error_opname(code),
	    (unsigned long long)p->op));
}

/*
 * Check that the value at stack slot at may go into container c: not c
 * itself, the depth cap, a hashable key for a dict.
 */
static int
pickle_parse_check(struct pickle_parser *p, const struct pickle_container *c,
    size_t at, int key)
{
	const struct pickle_value	*v = &p->stack[at];

	if (!pickle_value_is_container(v))
		return (0);
	if (v->u.c->depth + 1 > PICKLE_DEPTH_MAX) {
		return (pickle_error_set(p, "nesting deeper than %d levels at "
		    "offset %llu", PICKLE_DEPTH_MAX, (unsigned long long)p->op));
	}
	if (v->u.c == c) {
		return (pickle_error_set(p, "container put inside itself at "
		    "offset %llu", (unsigned long long)p->op));
	}
	if (key && v->type != PICKLE_TUPLE) {
		return (pickle_error_set(p, "unhashable dict key (%s) at offset"
		    " %llu", pickle_type_name(v->type),
		    (unsigned long long)p->op));
	}
	return (0);
}

/*
 * The common case of a batch: the n values from stack slot first go into
 * c, which keeps them whole, and none of them needs to be rebuilt.  Then
 * they go in at once (none at all: an empty batch, whose slot first may be
 * past an empty stack).  Returns 1 when done, 0 when the batch needs the
 * path item by item, -1 on error.
 */
static int
pickle_parse_bulk(struct pickle_parser *p, struct pickle_container *c,
    size_t first, size_t n, int dict)
{
	const struct pickle_value	*v;
	size_t				 i;

	if (n == 0)
		return (1);
	if (c->role != PICKLE_ROLE_NONE && c->role != PICKLE_ROLE_ELEMENT)
		return (0);
	for (i = first; i < first + n; i++) {
		v = &p->stack[i];
		if (pickle_value_is_container(v) &&
		    (pickle_role_lossy(v) || v->u.c->role == PICKLE_ROLE_ROOT))
			return (0);
	}
	for (i = first; i < first + n; i++) {
		if (!pickle_value_is_container(&p->stack[i]))
			continue;	/* nothing to check or place */
		if (pickle_parse_check(p, c, i, dict && (i - first) % 2 == 0) !=
		    0 || pickle_parse_placed(p, i, 0) != 0)
			return (-1);
	}
	if (pickle_value_append(c, &p->stack[first], n, &p->mem) != 0)
		return (pickle_error_nomem(p));
	p->depth = first;
	return (1);
}

/* What container c needs of the items put into it. */
static enum pickle_need
pickle_parse_need(const struct pickle_container *c, enum pickle_role *role)
{
	*role = PICKLE_ROLE_NONE;
	switch (c->role) {
	case PICKLE_ROLE_DISCARD:
		return (PICKLE_NEED_NOTHING);
	case PICKLE_ROLE_DEVICE_TRACES:
		*role = PICKLE_ROLE_TRACE;
		return (PICKLE_NEED_STREAMED);
	}
	return (PICKLE_NEED_WHOLE);
}

/*
 * Put the value at stack slot at into container c, at its end; it becomes
 * none on the stack.  A dropped container drops it.
 */
static int
pickle_parse_put_in(struct pickle_parser *p, struct pickle_container *c,
    size_t at)
{
	if (pickle_parse_placed(p, at, 0) != 0)
		return (-1);
	if (c->role == PICKLE_ROLE_DISCARD)
		pickle_value_unref(&p->stack[at], &p->mem);
	else if (pickle_value_append(c, &p->stack[at], 1, &p->mem) != 0)
		return (pickle_error_nomem(p));
	p->stack[at].type = PICKLE_NONE;
	return (0);
}

/* Give the element at stack slot at to the callback, or keep it in list. */
static int
pickle_parse_stream(struct pickle_parser *p, struct pickle_container *list,
    size_t at)
{
	int	rc;

	if ((rc = pickle_stream_element(p, list, &p->stack[at])) < 0)
		return (-1);
	if (rc == 0)
		return (pickle_parse_put_in(p, list, at));
	if (pickle_parse_placed(p, at, 1) != 0)
		return (-1);
	pickle_value_unref_spare(&p->stack[at], &p->mem, &p->spare);
	return (0);
}

/* A container receives items: note the end of its bytes. */
static void
pickle_parse_grown(struct pickle_parser *p, struct pickle_container *c)
{
	if (c->popped)
		c->moved = 1;
	c->end = pickle_parse_here(p);
}

/* APPEND and APPENDS: the top n values go into the list below them. */
static int
pickle_parse_append(struct pickle_parser *p, int code, size_t n)
{
	struct pickle_container	*list;
	enum pickle_need	 need;
	enum pickle_role	 role;
	size_t			 first, i;
	int			 streamed, rc;

	if (pickle_stack_avail(p) < n || p->depth - p->floor < n + 1)
		return (pickle_error_underflow(p, code));
	first = p->depth - n;
	if (p->stack[first - 1].type != PICKLE_LIST) {
		return (pickle_error_set(p, "%s to %s, not a list, at offset "
		    "%llu", pickle_error_opname(code),
		    pickle_error_a(&p->stack[first - 1]),
		    (unsigned long long)p->op));
	}
	list = p->stack[first - 1].u.c;
	if (pickle_parse_open(p, code, list) != 0 ||
	    (rc = pickle_parse_bulk(p, list, first, n, 0)) < 0)
		return (-1);
	if (rc == 1) {
		pickle_parse_grown(p, list);
		return (0);
	}
	need = pickle_parse_need(list, &role);
	streamed = list->role == PICKLE_ROLE_SEGMENTS ||
	    list->role == PICKLE_ROLE_TRACE ||
	    list->role == PICKLE_ROLE_ANNOTATIONS;
	for (i = first; i < first + n; i++) {
		if (pickle_parse_check(p, list, i, 0) != 0 ||
		    pickle_parse_settle(p, i, need, role) != 0 ||
		    pickle_parse_check(p, list, i, 0) != 0)
			return (-1);
		if (streamed) {
			if (pickle_parse_stream(p, list, i) != 0)
				return (-1);
		} else if (pickle_parse_put_in(p, list, i) != 0)
			return (-1);
	}
	p->depth = first;
	pickle_parse_grown(p, list);
	return (0);
}

/* What the root needs of the value of key; notes the streamed keys. */
static int
pickle_parse_root_need(struct pickle_parser *p, const struct pickle_value *key,
    enum pickle_need *need, enum pickle_role *role)
{
	unsigned	bit;

	*need = PICKLE_NEED_WHOLE;
	*role = PICKLE_ROLE_NONE;
	if (key->type != PICKLE_STR)
		return (0);
	*role = (enum pickle_role)pickle_role_key(p, key);
	if (*role == PICKLE_ROLE_NONE)
		return (0);
	if (*role == PICKLE_ROLE_DISCARD) {
		*need = PICKLE_NEED_NOTHING;
		return (0);
	}
	*need = PICKLE_NEED_STREAMED;
	bit = 1u << *role;
	if (p->tops & bit) {
		return (pickle_error_set(p, "key \"%s\" twice in the top-level "
		    "dict at offset %llu (not a PyTorch memory snapshot)",
		    key->u.s->data, (unsigned long long)p->op));
	}
	p->tops |= bit;
	return (0);
}

/* SETITEM and SETITEMS: the top n values, paired, go into the dict below. */
static int
pickle_parse_setitems(struct pickle_parser *p, int code, size_t n)
{
	struct pickle_container	*dict;
	enum pickle_need	 need;
	enum pickle_role	 role;
	size_t			 first, i;
	int			 rc;

	if (pickle_stack_avail(p) < n || p->depth - p->floor < n + 1)
		return (pickle_error_underflow(p, code));
	if (n % 2 != 0) {
		return (pickle_error_set(p, "odd number of items (%zu) for "
		    "%s at offset %llu", n, pickle_error_opname(code),
		    (unsigned long long)p->op));
	}
	first = p->depth - n;
	if (p->stack[first - 1].type != PICKLE_DICT) {
		return (pickle_error_set(p, "%s to %s, not a dict, at offset "
		    "%llu", pickle_error_opname(code),
		    pickle_error_a(&p->stack[first - 1]),
		    (unsigned long long)p->op));
	}
	dict = p->stack[first - 1].u.c;
	if (pickle_parse_open(p, code, dict) != 0 ||
	    (rc = pickle_parse_bulk(p, dict, first, n, 1)) < 0)
		return (-1);
	if (rc == 1) {
		pickle_parse_grown(p, dict);
		return (0);
	}
	for (i = first; i < first + n; i += 2) {
		need = pickle_parse_need(dict, &role);
		if (pickle_parse_check(p, dict, i, 1) != 0 ||
		    pickle_parse_settle(p, i, need, role) != 0)
			return (-1);
		if (dict->role == PICKLE_ROLE_ROOT &&
		    pickle_parse_root_need(p, &p->stack[i], &need, &role) != 0)
			return (-1);
		if (pickle_parse_check(p, dict, i + 1, 0) != 0 ||
		    pickle_parse_settle(p, i + 1, need, role) != 0 ||
		    pickle_parse_check(p, dict, i + 1, 0) != 0 ||
		    pickle_parse_put_in(p, dict, i) != 0 ||
		    pickle_parse_put_in(p, dict, i + 1) != 0)
			return (-1);
	}
	p->depth = first;
	pickle_parse_grown(p, dict);
	return (0);
}

/* A new container of type, its role read off the stack, made at start. */
static int
pickle_parse_container(struct pickle_parser *p, struct pickle_value *v,
    enum pickle_type type, size_t cap, uint64_t start)
{
	struct pickle_container	*c;

	if (pickle_value_container(v, type, cap, &p->mem, &p->spare) != 0)
		return (pickle_error_nomem(p));
	c = v->u.c;
	c->role = (uint8_t)pickle_role_new(p, type);
	if (c->role == PICKLE_ROLE_TRACE)
		c->device = p->devices++;
	c->start = start;
	c->end = pickle_parse_here(p);
	return (0);
}

/* EMPTY_DICT and EMPTY_LIST. */
static int
pickle_parse_new(struct pickle_parser *p, enum pickle_type type)
{
	struct pickle_value	v;

	if (pickle_parse_container(p, &v, type, 0, p->op) != 0)
		return (-1);
	return (pickle_stack_push(p, &v, p->op));
}

/*
 * TUPLE* and EMPTY_TUPLE: the top n values become a new tuple, whose
 * opcodes begin at start (the MARK of TUPLE).
 */
static int
pickle_parse_tuple(struct pickle_parser *p, int code, size_t n,
    uint64_t start)
{
	struct pickle_value	 v;
	struct pickle_container	*t;
	enum pickle_need	 need;
	enum pickle_role	 role;
	size_t			 first, i;
	int			 rc;

	if (pickle_stack_avail(p) < n)
		return (pickle_error_underflow(p, code));
	first = p->depth - n;
	if (n > 0 && code != 't')
		start = p->starts[first];
	/* The tuple's role is that of its place: below its items. */
	p->depth = first;
	rc = pickle_parse_container(p, &v, PICKLE_TUPLE, n, start);
	p->depth = first + n;
	if (rc != 0)
		return (-1);
	t = v.u.c;
	if ((rc = pickle_parse_bulk(p, t, first, n, 0)) == 0) {
		need = pickle_parse_need(t, &role);
		for (i = first; rc == 0 && i < first + n; i++) {
			if (pickle_parse_check(p, t, i, 0) != 0 ||
			    pickle_parse_settle(p, i, need, role) != 0 ||
			    pickle_parse_check(p, t, i, 0) != 0 ||
			    pickle_parse_put_in(p, t, i) != 0)
				rc = -1;
		}
	}
	if (rc < 0) {
		pickle_value_unref(&v, &p->mem);
		return (-1);
	}
	p->depth = first;
	return (pickle_stack_push(p, &v, start));
}

/*
 * The value a GET rebuilt is on top of the stack: its opcode is the GET,
 * and a copy of a container that was nested takes no more items.
 */
static void
pickle_parse_got(struct pickle_parser *p)
{
	struct pickle_value	*v = &p->stack[p->depth - 1];

	if (pickle_value_is_container(v))
		v->u.c->sealed = 1;
	p->starts[p->depth - 1] = p->op;
	p->ends[p->depth - 1] = pickle_parse_here(p);
}

/*
 * A GET of a value that left memory, as the value of a top-level key:
 * rebuild it in the role the key gives, or push none where it would be
 * dropped (or where a streamed list is wanted and it is no list: the
 * consumer refuses none as it would the value).
 */
static int
pickle_parse_get_root(struct pickle_parser *p,
    const struct pickle_spill_rec *rec)
{
	const struct pickle_value	*key = &p->stack[p->depth - 1];
	int				 role, first;

	role = key->type == PICKLE_STR ? pickle_role_key(p, key) :
	    PICKLE_ROLE_NONE;
	if (role != PICKLE_ROLE_NONE && role != PICKLE_ROLE_DISCARD) {
		if ((first = pickle_read_byte(&p->r, rec->start)) == -1)
			return (pickle_error_short(p, "BINGET"));
		if (first != ']')
			role = PICKLE_ROLE_DISCARD;
	}
	if (role == PICKLE_ROLE_DISCARD)
		return (pickle_op_scalar(p, PICKLE_NONE, 0));
	if (pickle_parse_replay(p, rec->start, rec->end, role) != 0)
		return (-1);
	pickle_parse_got(p);
	return (0);
}

/* GET: push memo slot i, or replay the value it holds the bytes of. */
static int
pickle_parse_get(struct pickle_parser *p, int code, uint64_t i)
{
	struct pickle_memo_entry	*e;
	struct pickle_spill_rec		 rec;
	struct pickle_value		 v;
	uint64_t			 put_at;

	if (i >= p->memo.n) {
		return (pickle_error_set(p, "memo index %llu out of range at "
		    "offset %llu (%s; memo has %zu entries)",
		    (unsigned long long)i, (unsigned long long)p->op,
		    pickle_error_opname(code), p->memo.n));
	}
	e = pickle_memo_find(&p->memo, (uint32_t)i);
	if (e != NULL && e->put_at < p->op) {	/* the common case */
		e->hot = 1;
		v = e->v;
		if (pickle_value_ref(&v) != 0) {
			return (pickle_error_set(p, "too many references at "
			    "offset %llu", (unsigned long long)p->op));
		}
		return (pickle_stack_push(p, &v, p->op));
	}
	memset(&rec, 0, sizeof rec);
	if (e != NULL)
		put_at = e->put_at;
	else if (pickle_spill_get(&p->memo.spill, (uint32_t)i, &rec) != 0) {
		return (pickle_error_set(p, "cannot read the memo from a "
		    "temporary file: %s", strerror(errno)));
	} else
		put_at = rec.put_at;
	if (put_at == 0 || !pickle_memo_wanted(&p->memo, i)) {
		return (pickle_error_set(p, "memo index %llu at offset %llu was"
		    " not read the first time (the file changed while read?)",
		    (unsigned long long)i, (unsigned long long)p->op));
	}
	if (put_at > p->op) {
		return (pickle_error_set(p, "memo index %llu at offset %llu was"
		    " stored again later: the shared value it belongs to "
		    "cannot be read again", (unsigned long long)i,
		    (unsigned long long)p->op));
	}
	if (rec.end == 0) {
		return (pickle_error_set(p, "the value made at offset %llu is "
		    "used again at offset %llu after it was changed off the "
		    "stack: it cannot be read again",
		    (unsigned long long)rec.start, (unsigned long long)p->op));
	}
	if (p->replays == 0 && pickle_role_root_value(p, p->op))
		return (pickle_parse_get_root(p, &rec));
	if (pickle_parse_replay(p, rec.start, rec.end, -1) != 0)
		return (-1);
	pickle_parse_got(p);
	return (0);
}

/* PUT: store the top value at memo slot i (at most one past the end). */
static int
pickle_parse_put(struct pickle_parser *p, int code, uint64_t i)
{
	struct pickle_value	*top;
	uint64_t		 at[3];

	if (pickle_stack_avail(p) == 0)
		return (pickle_error_underflow(p, code));
	if (p->replays > 0)
		return (0);	/* the slot was filled the first time */
	if (i > p->memo.n || i >= PICKLE_MEMO_MAX) {
		return (pickle_error_set(p, "memo index %llu out of range at "
		    "offset %llu (%s; memo has %zu entries)",
		    (unsigned long long)i, (unsigned long long)p->op,
		    pickle_error_opname(code), p->memo.n));
	}
	if (i == p->memo.n)
		p->memo.n++;
	if (!pickle_memo_wanted(&p->memo, i))
		return (0);	/* no GET reads it */
	top = &p->stack[p->depth - 1];
	if (pickle_value_ref(top) != 0) {
		return (pickle_error_set(p, "too many references at offset "
		    "%llu", (unsigned long long)p->op));
	}
	at[0] = p->op;
	at[1] = p->starts[p->depth - 1];
	at[2] = p->ends[p->depth - 1];
	if (pickle_memo_store(&p->memo, (uint32_t)i, top, at, &p->mem) != 0) {
		pickle_value_unref(top, &p->mem);
		return (pickle_error_nomem(p));
	}
	if (pickle_value_is_container(top))
		top->u.c->slot = (uint32_t)i;
	if (p->mem <= p->evict_at)
		return (0);
	/* Too much held: evict cold values, then wait for SOFT/4 more. */
	if (pickle_memo_evict(&p->memo, &p->mem,
	    PICKLE_MEMO_SOFT / 4 * 3) != 0) {
		return (pickle_error_set(p, "cannot write the memo to a "
		    "temporary file: %s", strerror(errno)));
	}
	p->evict_at = p->mem + PICKLE_MEMO_SOFT / 4;
	if (p->evict_at < PICKLE_MEMO_SOFT)
		p->evict_at = PICKLE_MEMO_SOFT;
	return (0);
}

/* POP and POP_MARK: drop the top n values. */
static int
pickle_parse_pop(struct pickle_parser *p, size_t n)
{
	struct pickle_value	*v;

	while (n-- > 0) {
		v = &p->stack[p->depth - 1];
		if (pickle_value_is_container(v)) {
			if (v->u.c->role == PICKLE_ROLE_ROOT) {
				return (pickle_error_set(p, "the top-level "
				    "dict is dropped at offset %llu (not a "
				    "PyTorch memory snapshot)",
				    (unsigned long long)p->op));
			}
			v->u.c->popped = 1;
		}
		pickle_stack_drop(p, 1);
	}
	return (0);
}

/* STOP: the top value is the result, left in *root. */
static int
pickle_parse_stop(struct pickle_parser *p, struct pickle_value *root)
{
	if (pickle_stack_avail(p) == 0)
		return (pickle_error_underflow(p, '.'));
	if (p->stack[p->depth - 1].type != PICKLE_DICT)
		return (pickle_error_not_dict(p, &p->stack[p->depth - 1]));
	if (p->depth != 1) {
		return (pickle_error_set(p, "STOP at offset %llu returns a dict"
		    " inside the top-level one (not a PyTorch memory snapshot)",
		    (unsigned long long)p->op));
	}
	*root = p->stack[--p->depth];
	return (0);
}

/* Check that the input starts with PROTO 2 to 5; explain what it is if not. */
static int
pickle_parse_start(struct pickle_parser *p)
{
	static const char	 sqlite[] = "SQLite format 3";
	const unsigned char	*b;
	size_t			 have;

	pickle_read_fill(&p->r, p->total < 16 ? (size_t)p->total : 16);
	have = (size_t)(p->r.end - p->r.p);
	if (have == 0)
		return (pickle_error_set(p, "empty file (not a pickle)"));
	b = p->r.p;
	if (have >= sizeof sqlite && memcmp(b, sqlite, sizeof sqlite) == 0) {
		return (pickle_error_set(p, "a SQLite database, not a pickle "
		    "(not a PyTorch memory snapshot)"));
	}
	if (b[0] != 0x80) {
		return (pickle_error_set(p, "not a pickle of protocol 2 to 5 "
		    "(byte 0x%02x at offset 0, expected PROTO)", b[0]));
	}
	return (0);
}

/* The opcodes that read a length or a count and push one value. */
static int
pickle_parse_sized(struct pickle_parser *p, int code)
{
	const unsigned char	*a;
	size_t			 n;

	switch (code) {
	case 0x8c:	/* SHORT_BINUNICODE */
	case 'C':	/* SHORT_BINBYTES */
	case 0x8a:	/* LONG1 */
		n = 1;
		break;
	case 'X':	/* BINUNICODE */
	case 'B':	/* BINBYTES */
	case 0x8b:	/* LONG4 */
		n = 4;
		break;
	default:	/* BINUNICODE8, BINBYTES8 */
		n = 8;
		break;
	}
	if ((a = pickle_op_arg(p, code, n)) == NULL)
		return (-1);
	if (code == 0x8a || code == 0x8b)
		return (pickle_op_longn(p, code, pickle_le(a, n)));
	return (pickle_op_string(p, code, code == 'C' || code == 'B' ||
	    code == 0x8e ? PICKLE_BYTES : PICKLE_STR, pickle_le(a, n)));
}

/* The opcodes with a fixed argument of n bytes. */
static int
pickle_parse_fixed(struct pickle_parser *p, int code, size_t n)
{
	const unsigned char	*a;

	if ((a = pickle_op_arg(p, code, n)) == NULL)
		return (-1);
	switch (code) {
	case 0x80:	/* PROTO */
		if (a[0] < 2 || a[0] > 5) {
			return (pickle_error_set(p, "unsupported pickle "
			    "protocol %u at offset %llu (2 to 5 are read)",
			    a[0], (unsigned long long)p->op));
		}
		return (0);
	case 0x95:	/* FRAME: a hint, but its length must fit */
		if (pickle_le(a, 8) > p->total - pickle_parse_here(p))
			return (pickle_error_short(p, "FRAME"));
		return (0);
	case 'K':	/* BININT1 */
	case 'M':	/* BININT2 */
		return (pickle_op_scalar(p, PICKLE_INT,
		    (int64_t)pickle_le(a, n)));
	case 'J':	/* BININT */
		return (pickle_op_long(p, a, 4));
	case 'G':	/* BINFLOAT */
		return (pickle_op_float(p, a));
	case 'q':	/* BINPUT */
	case 'r':	/* LONG_BINPUT */
		return (pickle_parse_put(p, code, pickle_le(a, n)));
	default:	/* BINGET, LONG_BINGET */
		return (pickle_parse_get(p, code, pickle_le(a, n)));
	}
}

/* The opcodes on marks and on the values above the top one. */
static int
pickle_parse_marked(struct pickle_parser *p, int code)
{
	uint64_t	at;
	size_t		n;

	switch (code) {
	case '(':
		return (pickle_stack_mark(p));
	case '0':	/* POP: a value, or the mark if none is above */
		if (pickle_stack_avail(p) > 0)
			return (pickle_parse_pop(p, 1));
		if (p->nmarks == p->mark_floor)
			return (pickle_error_underflow(p, code));
		p->nmarks--;
		return (0);
	}
	if (pickle_stack_pop_mark(p, code, &n, &at) != 0)
		return (-1);
	switch (code) {
	case 't':
		return (pickle_parse_tuple(p, code, n, at));
	case 'u':
		return (pickle_parse_setitems(p, code, n));
	case 'e':
		return (pickle_parse_append(p, code, n));
	default:	/* POP_MARK */
		return (pickle_parse_pop(p, n));
	}
}

/* Run one opcode. */
static int
pickle_parse_op(struct pickle_parser *p, int code)
{
	switch (code) {
	case '}':
		return (pickle_parse_new(p, PICKLE_DICT));
	case ']':
		return (pickle_parse_new(p, PICKLE_LIST));
	case ')':
		return (pickle_parse_tuple(p, code, 0, p->op));
	case 0x85:	/* TUPLE1 */
	case 0x86:	/* TUPLE2 */
	case 0x87:	/* TUPLE3 */
		return (pickle_parse_tuple(p, code, (size_t)(code - 0x84),
		    p->op));
	case '(':
	case '0':
	case '1':	/* POP_MARK */
	case 't':
	case 'u':
	case 'e':
		return (pickle_parse_marked(p, code));
	case 's':
		return (pickle_parse_setitems(p, code, 2));
	case 'a':
		return (pickle_parse_append(p, code, 1));
	case 0x8c:
	case 'C':
	case 'X':
	case 'B':
	case 0x8d:
	case 0x8e:
	case 0x8a:
	case 0x8b:
		return (pickle_parse_sized(p, code));
	case 0x80:
	case 'K':
	case 'q':
	case 'h':
		return (pickle_parse_fixed(p, code, 1));
	case 'M':
		return (pickle_parse_fixed(p, code, 2));
	case 'J':
	case 'r':
	case 'j':
		return (pickle_parse_fixed(p, code, 4));
	case 'G':
	case 0x95:
		return (pickle_parse_fixed(p, code, 8));
	case 0x88:	/* NEWTRUE */
	case 0x89:	/* NEWFALSE */
		return (pickle_op_scalar(p, PICKLE_BOOL, code == 0x88));
	case 'N':
		return (pickle_op_scalar(p, PICKLE_NONE, 0));
	case 0x94:	/* MEMOIZE */
		return (pickle_parse_put(p, code, p->memo.n));
	}
	return (pickle_error_refuse(p, code));
}

/*
 * Run, up to offset limit, the opcodes that push a value at hand and do
 * nothing else: a GET of a value in memory, an int of at most 8 bytes,
 * none, a bool.  They are most of a snapshot's opcodes, and here they skip
 * the dispatch of pickle_parse_op(), with the same effect: the same value
 * pushed, the same memo slot marked hot, the same check of the bytes
 * held.  Stops before any other opcode, one whose argument may not be in
 * the window, and a GET that would fail or replay: pickle_parse_op() runs
 * those.  0, or -1 on error.
 */
static int
pickle_parse_pushes(struct pickle_parser *p, uint64_t limit)
{
	struct pickle_memo_entry	*e;
	struct pickle_value		 v;
	const unsigned char		*b;
	uint64_t			 i;
	size_t				 n;

	/* The longest of them, LONG1 of 8 bytes, takes 10. */
	while ((b = p->r.p) + 10 <= p->r.end) {
		p->op = pickle_read_offset(&p->r);
		if (p->op >= limit)
			return (0);
		v.u.i = 0;
		switch (b[0]) {
		case 'h':	/* BINGET */
		case 'j':	/* LONG_BINGET */
			n = b[0] == 'h' ? 2 : 5;
			i = pickle_le(b + 1, n - 1);
			if (i >= p->memo.n ||
			    (e = pickle_memo_find(&p->memo, (uint32_t)i)) ==
			    NULL || e->put_at >= p->op)
				return (0);
			v = e->v;
			if (pickle_value_ref(&v) != 0)
				return (0);
			e->hot = 1;
			break;
		case 'K':	/* BININT1 */
		case 'M':	/* BININT2 */
			n = b[0] == 'K' ? 2 : 3;
			v.type = PICKLE_INT;
			v.u.i = (int64_t)pickle_le(b + 1, n - 1);
			break;
		case 'J':	/* BININT */
			n = 5;
			v.type = PICKLE_INT;
			v.u.i = pickle_le_signed(b + 1, 4);
			break;
		case 0x8a:	/* LONG1 */
			if (b[1] > 8)
				return (0);
			n = 2 + (size_t)b[1];
			v.type = PICKLE_INT;
			v.u.i = pickle_le_signed(b + 2, b[1]);
			break;
		case 'N':
			n = 1;
			v.type = PICKLE_NONE;
			break;
		case 0x88:	/* NEWTRUE */
		case 0x89:	/* NEWFALSE */
			n = 1;
			v.type = PICKLE_BOOL;
			v.u.b = b[0] == 0x88;
			break;
		default:
			return (0);
		}
		p->r.p = b + n;
		if (pickle_stack_push(p, &v, p->op) != 0)
			return (-1);
		if (p->mem > p->peak) {
			p->peak = p->mem;
			if (p->peak > PICKLE_MEMORY_MAX)
				return (pickle_error_memory(p));
		}
	}
	return (0);
}

/*
 * Run the machine up to offset limit (a replay) or to STOP (limit
 * UINT64_MAX).  Returns 1 at STOP with the result on the stack, 0 at the
 * limit, -1 on error.
 */
static int
pickle_parse_run(struct pickle_parser *p, uint64_t limit)
{
	int	code;

	for (;;) {
		if (pickle_parse_pushes(p, limit) != 0)
			return (-1);
		p->op = pickle_read_offset(&p->r);
		if (p->op >= limit)
			return (0);
		if (p->r.p == p->r.end && pickle_read_fill(&p->r, 1) != 0)
			return (pickle_error_short(p, "no STOP opcode"));
		code = *p->r.p++;
		if (code == '.')
			return (p->replays > 0 ? pickle_error_set(p, "STOP "
			    "inside a shared value at offset %llu",
			    (unsigned long long)p->op) : 1);
		if (pickle_parse_op(p, code) != 0)
			return (-1);
		if (p->mem > p->peak) {
			p->peak = p->mem;
			if (p->peak > PICKLE_MEMORY_MAX)
				return (pickle_error_memory(p));
		}
	}
}

static void
pickle_parse_stats(const struct pickle_parser *p)
{
	struct pickle_stats	*st;

	if (p->cb == NULL || (st = p->cb->stats) == NULL)
		return;
	st->peak_bytes = p->peak;
	st->memo_slots = p->memo.n;
	st->memo_refs = p->memo.refs_len;
	st->reread_bytes = p->reread;
}

/* Both passes over scan (pass 1's reader) and p->r; the root, or NULL. */
static struct pickle_value *
pickle_parse(struct pickle_parser *p, struct pickle_reader *scan,
    char **cause)
{
	struct pickle_value	*root = NULL;
	unsigned		 i;

	p->force = -1;
	p->evict_at = PICKLE_MEMO_SOFT;
	if (p->cb == NULL || p->cb->element == NULL)
		p->evict_at = UINT64_MAX;	/* a tree keeps its shared nodes */
	pickle_spill_init(&p->memo.spill);
	if (pickle_parse_start(p) != 0)
		goto out;
	if (pickle_scan(p, scan) != 0) {
		pickle_error_nomem(p);
		goto out;
	}
	p->peak = p->mem;
	if ((root = malloc(sizeof *root)) == NULL) {
		pickle_error_nomem(p);
		goto out;
	}
	if (pickle_parse_run(p, UINT64_MAX) < 0 ||
	    pickle_parse_stop(p, root) != 0) {
		free(root);
		root = NULL;
	} else
		pickle_read_done(&p->r);
out:
	pickle_parse_stats(p);
	pickle_stack_free(p);
	pickle_container_free(p->spare);
	pickle_memo_free(&p->memo, &p->mem);
	free(p->roots);
	for (i = 0; i < PICKLE_REREAD_DEPTH; i++)
		free(p->replay_buf[i]);
	if (cause != NULL)
		*cause = p->cause;
	else
		free(p->cause);
	return (root);
}

/*
 * Parse the snapshot pickle in len bytes at buf, which the result does not
 * reference.  name is used in messages.  cb (may be NULL) streams elements
 * and reports progress.  Returns the root dict, to free with pickle_free(),
 * or NULL with a one-line *cause (caller frees; may be NULL when out of
 * memory, and cause may be NULL to ignore it).
 */
struct pickle_value *
pickle_parse_buffer(const void *buf, size_t len, const char *name,
    const struct pickle_callbacks *cb, char **cause)
{
	struct pickle_parser	p;
	struct pickle_reader	scan;

	memset(&p, 0, sizeof p);
	p.name = name;
	p.cb = cb;
	p.total = len;
	pickle_read_buffer(&p.r, buf, len, cb);
	pickle_read_buffer(&scan, buf, len, NULL);
	return (pickle_parse(&p, &scan, cause));
}

/* The kind of a file that is not a regular file, for messages. */
static const char *
pickle_parse_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return ("a directory");
	if (S_ISFIFO(mode))
		return ("a FIFO");
	if (S_ISCHR(mode))
		return ("a character device");
	if (S_ISBLK(mode))
		return ("a block device");
	if (S_ISSOCK(mode))
		return ("a socket");
	return ("a special file");
}

/*
 * Like pickle_parse_buffer() for the regular file open on fd, which is
 * neither closed nor moved (it is read twice, with pread()).  Anything
 * else than a regular file, and a file that changes while it is read, is
 * an error.
 */
struct pickle_value *
pickle_parse_fd(int fd, const char *name, const struct pickle_callbacks *cb,
    char **cause)
{
	struct pickle_parser	 p;
	struct pickle_reader	 scan;
	struct pickle_value	*root;
	struct stat		 before, after;

	if (fstat(fd, &before) != 0) {
		if (cause != NULL)
			*cause = pickle_error_fmt("%s: %s", name,
			    strerror(errno));
		return (NULL);
	}
	if (!S_ISREG(before.st_mode)) {
		if (cause != NULL)
			*cause = pickle_error_fmt("%s: %s, not a regular file",
			    name, pickle_parse_kind(before.st_mode));
		return (NULL);
	}
	memset(&p, 0, sizeof p);
	p.name = name;
	p.cb = cb;
	p.total = (uint64_t)before.st_size;
	if (pickle_read_open(&p.r, fd, p.total, cb) != 0 ||
	    pickle_read_open(&scan, fd, p.total, NULL) != 0) {
		pickle_read_close(&p.r);
		if (cause != NULL)
			*cause = pickle_error_fmt("%s: out of memory", name);
		return (NULL);
	}
	root = pickle_parse(&p, &scan, cause);
	pickle_read_close(&scan);
	pickle_read_close(&p.r);
	if (root != NULL && (fstat(fd, &after) != 0 ||
	    after.st_size != before.st_size ||
	    after.st_mtim.tv_sec != before.st_mtim.tv_sec ||
	    after.st_mtim.tv_nsec != before.st_mtim.tv_nsec)) {
		pickle_free(root);
		if (cause != NULL)
			*cause = pickle_error_fmt("%s: changed while it was "
			    "read", name);
		return (NULL);
	}
	return (root);
}

/*
 * Like pickle_parse_fd() for the file at path, named path in messages.  It
 * is opened without blocking, so a FIFO is refused, not waited on.
 */
struct pickle_value *
pickle_parse_file(const char *path, const struct pickle_callbacks *cb,
    char **cause)
{
	struct pickle_value	*root;
	int			 fd;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd == -1) {
		if (cause != NULL)
			*cause = pickle_error_fmt("%s: %s", path,
			    strerror(errno));
		return (NULL);
	}
	root = pickle_parse_fd(fd, path, cb, cause);
	close(fd);
	return (root);
}
