/*
 * The pickle stack machine, restricted to the data opcodes of a snapshot.
 *
 * State: a value stack (owning one reference per slot), a mark stack of
 * stack positions in ascending order, and the memo (owning one reference
 * per slot; a slot may be PICKLE_CONSUMED).  Opcodes only ever take values
 * above the top mark, as Python's unpickler does.  No slot of the stack
 * holds a mark, and every stack or memo value that is a node holds one
 * reference, so freeing the three arrays frees everything not returned.
 * Streaming is in pickle-stream.c, error messages in pickle-error.c.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "pickle-int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Take the n-byte argument of opcode code; NULL on error. */
static const unsigned char *
pickle_parse_arg(struct pickle_parser *p, int code, size_t n)
{
	const unsigned char	*arg;

	if ((size_t)(p->r.end - p->r.p) < n &&
	    pickle_read_fill(&p->r, n) != 0) {
		pickle_error_short(p, pickle_error_opname(code));
		return (NULL);
	}
	arg = p->r.p;
	p->r.p += n;
	return (arg);
}

static uint64_t
pickle_parse_le(const unsigned char *b, size_t n)
{
	uint64_t	v = 0;

	while (n-- > 0)
		v = (v << 8) | b[n];
	return (v);
}

/* Number of values above the top mark. */
static size_t
pickle_parse_avail(const struct pickle_parser *p)
{
	return (p->depth - (p->nmarks > 0 ? p->marks[p->nmarks - 1] : 0));
}

/* Push v, taking its reference (dropped on error). */
static int
pickle_parse_push(struct pickle_parser *p, struct pickle_value *v)
{
	struct pickle_value	*stack;
	size_t			 cap;

	if (p->depth == 0 && v->type != PICKLE_DICT) {
		pickle_error_not_dict(p, v);
		goto fail;
	}
	if (p->depth == p->stack_cap) {
		if (p->depth == PICKLE_STACK_MAX) {
			pickle_error_set(p, "stack deeper than %u values at "
			    "offset %llu", PICKLE_STACK_MAX,
			    (unsigned long long)p->op);
			goto fail;
		}
		cap = p->stack_cap == 0 ? 256 : p->stack_cap * 2;
		stack = realloc(p->stack, cap * sizeof *stack);
		if (stack == NULL) {
			pickle_error_nomem(p);
			goto fail;
		}
		p->stack = stack;
		p->stack_cap = cap;
	}
	p->stack[p->depth++] = *v;
	return (0);

fail:
	pickle_value_unref(v);
	return (-1);
}

static int
pickle_parse_scalar(struct pickle_parser *p, enum pickle_type type,
    int64_t i)
{
	struct pickle_value	v;

	v.type = type;
	if (type == PICKLE_BOOL)
		v.u.b = (int)i;
	else
		v.u.i = i;
	return (pickle_parse_push(p, &v));
}

/* Whether the str v holds exactly key. */
static int
pickle_parse_new(struct pickle_parser *p, enum pickle_type type)
{
	struct pickle_value	v;

	if (pickle_value_container(&v, type, 0) != 0)
		return (pickle_error_nomem(p));
	if (type == PICKLE_LIST && p->cb != NULL && p->cb->element != NULL)
		pickle_stream_role(p, v.u.c);
	return (pickle_parse_push(p, &v));
}

/* Accept UTF-8 as Python writes it (surrogates included: surrogatepass). */
static int
pickle_parse_utf8(const unsigned char *s, size_t len)
{
	size_t	i = 0, n, k;
	uint32_t cp, min;

	while (i < len) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		if ((s[i] & 0xe0) == 0xc0) {
			n = 1; cp = s[i] & 0x1f; min = 0x80;
		} else if ((s[i] & 0xf0) == 0xe0) {
			n = 2; cp = s[i] & 0x0f; min = 0x800;
		} else if ((s[i] & 0xf8) == 0xf0) {
			n = 3; cp = s[i] & 0x07; min = 0x10000;
		} else
			return (-1);
		if (len - i <= n)
			return (-1);
		for (k = 1; k <= n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return (-1);
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff)
			return (-1);
		i += n + 1;
	}
	return (0);
}

/* Push a str or bytes of len bytes that follow in the input. */
static int
pickle_parse_string(struct pickle_parser *p, int code, enum pickle_type type,
    uint64_t len)
{
	struct pickle_value	 v;
	const char		*what = pickle_error_opname(code);
	uint64_t		 left;
	char			 buf[80];

	left = p->r.total - pickle_read_offset(&p->r);
	if (p->r.total != 0 && len > left) {
		snprintf(buf, sizeof buf, "%s of %llu bytes", what,
		    (unsigned long long)len);
		return (pickle_error_short(p, buf));
	}
	if (len > PICKLE_STR_MAX) {
		return (pickle_error_set(p, "%s of %llu bytes at offset %llu"
		    " is longer than %u", what, (unsigned long long)len,
		    (unsigned long long)p->op, PICKLE_STR_MAX));
	}
	if (pickle_value_str(&v, type, (size_t)len) != 0)
		return (pickle_error_nomem(p));
	if (pickle_read_copy(&p->r, v.u.s->data, (size_t)len) != 0) {
		pickle_value_unref(&v);
		return (pickle_error_short(p, what));
	}
	if (type == PICKLE_STR &&
	    pickle_parse_utf8((unsigned char *)v.u.s->data, (size_t)len) != 0) {
		pickle_value_unref(&v);
		return (pickle_error_set(p, "invalid UTF-8 in %s at offset "
		    "%llu", what, (unsigned long long)p->op));
	}
	return (pickle_parse_push(p, &v));
}

/* Push an int of n little-endian two's complement bytes at b. */
static int
pickle_parse_long(struct pickle_parser *p, const unsigned char *b, size_t n)
{
	uint64_t	u;
	int64_t		i;

	u = pickle_parse_le(b, n);
	if (n > 0 && n < 8 && (b[n - 1] & 0x80))
		u |= UINT64_MAX << (8 * n);
	memcpy(&i, &u, sizeof i);
	return (pickle_parse_scalar(p, PICKLE_INT, i));
}

static int
pickle_parse_longn(struct pickle_parser *p, int code, uint64_t n)
{
	const unsigned char	*b;

	if (n > 8) {
		return (pickle_error_set(p, "%s of %llu bytes at offset %llu"
		    " does not fit in 64 bits", pickle_error_opname(code),
		    (unsigned long long)n, (unsigned long long)p->op));
	}
	if ((b = pickle_parse_arg(p, code, (size_t)n)) == NULL)
		return (-1);
	return (pickle_parse_long(p, b, (size_t)n));
}

static int
pickle_parse_float(struct pickle_parser *p, const unsigned char *b)
{
	struct pickle_value	v;
	uint64_t		u = 0;
	size_t			i;

	for (i = 0; i < 8; i++)
		u = (u << 8) | b[i];
	v.type = PICKLE_FLOAT;
	memcpy(&v.u.f, &u, sizeof v.u.f);
	return (pickle_parse_push(p, &v));
}

/* Drop the top n values. */
static void
pickle_parse_drop(struct pickle_parser *p, size_t n)
{
	while (n-- > 0)
		pickle_value_unref(&p->stack[--p->depth]);
}

/* Store the top value at memo slot i (at most one past the end). */
static int
pickle_parse_put(struct pickle_parser *p, int code, uint64_t i)
{
	struct pickle_value	*top, *memo;
	size_t			 cap;

	if (pickle_parse_avail(p) == 0)
		return (pickle_error_underflow(p, code));
	if (i > p->nmemo || i >= PICKLE_MEMO_MAX) {
		return (pickle_error_set(p, "memo index %llu out of range at "
		    "offset %llu (%s; memo has %zu entries)",
		    (unsigned long long)i, (unsigned long long)p->op,
		    pickle_error_opname(code), p->nmemo));
	}
	top = &p->stack[p->depth - 1];
	if (pickle_value_ref(top) != 0) {
		return (pickle_error_set(p, "too many references at offset "
		    "%llu", (unsigned long long)p->op));
	}
	if (i == p->nmemo && p->nmemo == p->memo_cap) {
		cap = p->memo_cap == 0 ? 1024 : p->memo_cap * 2;
		memo = realloc(p->memo, cap * sizeof *memo);
		if (memo == NULL) {
			pickle_value_unref(top);
			return (pickle_error_nomem(p));
		}
		p->memo = memo;
		p->memo_cap = cap;
	}
	if (i == p->nmemo)
		p->nmemo++;
	else
		pickle_value_unref(&p->memo[i]);
	p->memo[i] = *top;
	if (top->type == PICKLE_LIST || top->type == PICKLE_DICT ||
	    top->type == PICKLE_TUPLE)
		top->u.c->slot = (uint32_t)i;
	return (0);
}

static int
pickle_parse_get(struct pickle_parser *p, int code, uint64_t i)
{
	struct pickle_value	v;

	if (i >= p->nmemo) {
		return (pickle_error_set(p, "memo index %llu out of range at "
		    "offset %llu (%s; memo has %zu entries)",
		    (unsigned long long)i, (unsigned long long)p->op,
		    pickle_error_opname(code), p->nmemo));
	}
	v = p->memo[i];
	if (v.type == PICKLE_CONSUMED) {
		return (pickle_error_set(p, "reference to a consumed element "
		    "at offset %llu", (unsigned long long)p->op));
	}
	if (pickle_value_ref(&v) != 0) {
		return (pickle_error_set(p, "too many references at offset "
		    "%llu", (unsigned long long)p->op));
	}
	return (pickle_parse_push(p, &v));
}

/*
 * Check that the n values at items may go into container c (not sealed,
 * not c itself, depth cap, hashable keys when dict).
 */
static int
pickle_parse_check(struct pickle_parser *p, int code,
    const struct pickle_container *c, const struct pickle_value *items,
    size_t n, int dict)
{
	const struct pickle_value	*v;
	size_t				 i;

	if (c->sealed) {
		return (pickle_error_set(p, "%s into a container already "
		    "nested in another at offset %llu",
		    pickle_error_opname(code), (unsigned long long)p->op));
	}
	for (i = 0; i < n; i++) {
		v = &items[i];
		if (pickle_value_depth(v) + 1 > PICKLE_DEPTH_MAX) {
			return (pickle_error_set(p, "nesting deeper than %d "
			    "levels at offset %llu", PICKLE_DEPTH_MAX,
			    (unsigned long long)p->op));
		}
		if (pickle_value_depth(v) > 0 && v->u.c == c) {
			return (pickle_error_set(p, "container put inside "
			    "itself at offset %llu",
			    (unsigned long long)p->op));
		}
		if (dict && i % 2 == 0 &&
		    (v->type == PICKLE_LIST || v->type == PICKLE_DICT)) {
			return (pickle_error_set(p, "unhashable dict key "
			    "(%s) at offset %llu", pickle_type_name(v->type),
			    (unsigned long long)p->op));
		}
	}
	return (0);
}

/* Move the top n values into container c, which is below them. */
static int
pickle_parse_fill(struct pickle_parser *p, struct pickle_container *c,
    size_t n)
{
	if (pickle_value_append(c, &p->stack[p->depth - n], n) != 0)
		return (pickle_error_nomem(p));
	p->depth -= n;
	return (0);
}

/* APPEND and APPENDS: the top n values go into the list below them. */
static int
pickle_parse_append(struct pickle_parser *p, int code, size_t n)
{
	struct pickle_value	*list, *item;
	size_t			 i, first;
	int			 rc;

	if (pickle_parse_avail(p) < n || p->depth < n + 1)
		return (pickle_error_underflow(p, code));
	list = &p->stack[p->depth - n - 1];
	if (list->type != PICKLE_LIST) {
		return (pickle_error_set(p, "%s to %s, not a list, at offset "
		    "%llu", pickle_error_opname(code), pickle_error_a(list),
		    (unsigned long long)p->op));
	}
	first = p->depth - n;
	if (pickle_parse_check(p, code, list->u.c, &p->stack[first], n, 0) != 0)
		return (-1);
	if (list->u.c->role != PICKLE_ROLE_SEGMENTS &&
	    list->u.c->role != PICKLE_ROLE_TRACE)
		return (pickle_parse_fill(p, list->u.c, n));

	/* Streamed: each element in turn goes to the callback first. */
	for (i = 0; i < n; i++) {
		item = &p->stack[first + i];
		rc = pickle_stream_element(p, list->u.c, item);
		if (rc == 0 && pickle_value_append(list->u.c, item, 1) != 0)
			rc = pickle_error_nomem(p);
		if (rc < 0) {
			/* Items before i are gone; the rest stay stacked. */
			memmove(&p->stack[first], item, (n - i) * sizeof *item);
			p->depth -= i;
			return (-1);
		}
		if (rc == 1)
			pickle_value_unref(item);
	}
	p->depth -= n;
	return (0);
}

/* SETITEM and SETITEMS: the top n values, paired, go into the dict below. */
static int
pickle_parse_setitems(struct pickle_parser *p, int code, size_t n)
{
	struct pickle_value	*dict;

	if (pickle_parse_avail(p) < n || p->depth < n + 1)
		return (pickle_error_underflow(p, code));
	if (n % 2 != 0) {
		return (pickle_error_set(p, "odd number of items (%zu) for "
		    "%s at offset %llu", n, pickle_error_opname(code),
		    (unsigned long long)p->op));
	}
	dict = &p->stack[p->depth - n - 1];
	if (dict->type != PICKLE_DICT) {
		return (pickle_error_set(p, "%s to %s, not a dict, at offset "
		    "%llu", pickle_error_opname(code), pickle_error_a(dict),
		    (unsigned long long)p->op));
	}
	if (pickle_parse_check(p, code, dict->u.c, &p->stack[p->depth - n], n,
	    1) != 0)
		return (-1);
	return (pickle_parse_fill(p, dict->u.c, n));
}

/* TUPLE* and EMPTY_TUPLE: the top n values become a new tuple. */
static int
pickle_parse_tuple(struct pickle_parser *p, int code, size_t n)
{
	struct pickle_value	v;

	if (pickle_parse_avail(p) < n)
		return (pickle_error_underflow(p, code));
	if (pickle_value_container(&v, PICKLE_TUPLE, n) != 0)
		return (pickle_error_nomem(p));
	if (n > 0 && (pickle_parse_check(p, code, v.u.c,
	    &p->stack[p->depth - n], n, 0) != 0 ||
	    pickle_parse_fill(p, v.u.c, n) != 0)) {
		pickle_value_unref(&v);
		return (-1);
	}
	return (pickle_parse_push(p, &v));
}

/* Number of values above the top mark, which is popped. */
static int
pickle_parse_pop_mark(struct pickle_parser *p, int code, size_t *n)
{
	*n = 0;
	if (p->nmarks == 0) {
		return (pickle_error_set(p, "%s without MARK at offset %llu",
		    pickle_error_opname(code), (unsigned long long)p->op));
	}
	*n = pickle_parse_avail(p);
	p->nmarks--;
	return (0);
}

static int
pickle_parse_mark(struct pickle_parser *p)
{
	size_t	*marks, cap;

	if (p->nmarks == p->marks_cap) {
		if (p->nmarks == PICKLE_MARK_MAX) {
			return (pickle_error_set(p, "more than %u open "
			    "MARKs at offset %llu", PICKLE_MARK_MAX,
			    (unsigned long long)p->op));
		}
		cap = p->marks_cap == 0 ? 64 : p->marks_cap * 2;
		marks = realloc(p->marks, cap * sizeof *marks);
		if (marks == NULL)
			return (pickle_error_nomem(p));
		p->marks = marks;
		p->marks_cap = cap;
	}
	p->marks[p->nmarks++] = p->depth;
	return (0);
}

/* Check that the input starts with PROTO 2 to 5; explain what it is if not. */
static int
pickle_parse_start(struct pickle_parser *p)
{
	static const char	 sqlite[] = "SQLite format 3";
	const unsigned char	*b;
	size_t			 have;

	pickle_read_fill(&p->r, 16);
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

/* Run the machine to STOP; the result is left in *root. */
static int
pickle_parse_run(struct pickle_parser *p, struct pickle_value *root)
{
	const unsigned char	*a;
	size_t			 n;
	int			 code, rc;

	if (pickle_parse_start(p) != 0)
		return (-1);
	for (;;) {
		p->op = pickle_read_offset(&p->r);
		if (p->r.p == p->r.end && pickle_read_fill(&p->r, 1) != 0)
			return (pickle_error_short(p, "no STOP opcode"));
		code = *p->r.p++;
		switch (code) {
		case 0x80:	/* PROTO */
			if ((a = pickle_parse_arg(p, code, 1)) == NULL)
				return (-1);
			if (a[0] < 2 || a[0] > 5) {
				return (pickle_error_set(p, "unsupported "
				    "pickle protocol %u at offset %llu (2 to 5"
				    " are read)", a[0],
				    (unsigned long long)p->op));
			}
			rc = 0;
			break;
		case 0x95:	/* FRAME: a hint, but its length must fit */
			if ((a = pickle_parse_arg(p, code, 8)) == NULL)
				return (-1);
			if (p->r.total != 0 && pickle_parse_le(a, 8) >
			    p->r.total - pickle_read_offset(&p->r))
				return (pickle_error_short(p, "FRAME"));
			rc = 0;
			break;
		case '}':
			rc = pickle_parse_new(p, PICKLE_DICT);
			break;
		case ']':
			rc = pickle_parse_new(p, PICKLE_LIST);
			break;
		case ')':
			rc = pickle_parse_tuple(p, code, 0);
			break;
		case 0x85:	/* TUPLE1 */
		case 0x86:	/* TUPLE2 */
		case 0x87:	/* TUPLE3 */
			rc = pickle_parse_tuple(p, code, (size_t)(code - 0x84));
			break;
		case 't':
			if ((rc = pickle_parse_pop_mark(p, code, &n)) == 0)
				rc = pickle_parse_tuple(p, code, n);
			break;
		case '(':
			rc = pickle_parse_mark(p);
			break;
		case 'u':
			if ((rc = pickle_parse_pop_mark(p, code, &n)) == 0)
				rc = pickle_parse_setitems(p, code, n);
			break;
		case 's':
			rc = pickle_parse_setitems(p, code, 2);
			break;
		case 'e':
			if ((rc = pickle_parse_pop_mark(p, code, &n)) == 0)
				rc = pickle_parse_append(p, code, n);
			break;
		case 'a':
			rc = pickle_parse_append(p, code, 1);
			break;
		case 0x8c:	/* SHORT_BINUNICODE */
		case 'C':	/* SHORT_BINBYTES */
			if ((a = pickle_parse_arg(p, code, 1)) == NULL)
				return (-1);
			rc = pickle_parse_string(p, code, code == 'C' ?
			    PICKLE_BYTES : PICKLE_STR, a[0]);
			break;
		case 'X':	/* BINUNICODE */
		case 'B':	/* BINBYTES */
			if ((a = pickle_parse_arg(p, code, 4)) == NULL)
				return (-1);
			rc = pickle_parse_string(p, code, code == 'B' ?
			    PICKLE_BYTES : PICKLE_STR, pickle_parse_le(a, 4));
			break;
		case 0x8d:	/* BINUNICODE8 */
		case 0x8e:	/* BINBYTES8 */
			if ((a = pickle_parse_arg(p, code, 8)) == NULL)
				return (-1);
			rc = pickle_parse_string(p, code, code == 0x8e ?
			    PICKLE_BYTES : PICKLE_STR, pickle_parse_le(a, 8));
			break;
		case 'K':	/* BININT1 */
		case 'M':	/* BININT2 */
			n = code == 'K' ? 1 : 2;
			if ((a = pickle_parse_arg(p, code, n)) == NULL)
				return (-1);
			rc = pickle_parse_scalar(p, PICKLE_INT,
			    (int64_t)pickle_parse_le(a, n));
			break;
		case 'J':	/* BININT */
			if ((a = pickle_parse_arg(p, code, 4)) == NULL)
				return (-1);
			rc = pickle_parse_long(p, a, 4);
			break;
		case 0x8a:	/* LONG1 */
			if ((a = pickle_parse_arg(p, code, 1)) == NULL)
				return (-1);
			rc = pickle_parse_longn(p, code, a[0]);
			break;
		case 0x8b:	/* LONG4: the count is signed */
			if ((a = pickle_parse_arg(p, code, 4)) == NULL)
				return (-1);
			rc = pickle_parse_longn(p, code, pickle_parse_le(a, 4));
			break;
		case 'G':	/* BINFLOAT */
			if ((a = pickle_parse_arg(p, code, 8)) == NULL)
				return (-1);
			rc = pickle_parse_float(p, a);
			break;
		case 0x88:	/* NEWTRUE */
		case 0x89:	/* NEWFALSE */
			rc = pickle_parse_scalar(p, PICKLE_BOOL, code == 0x88);
			break;
		case 'N':
			rc = pickle_parse_scalar(p, PICKLE_NONE, 0);
			break;
		case 0x94:	/* MEMOIZE */
			rc = pickle_parse_put(p, code, p->nmemo);
			break;
		case 'q':	/* BINPUT */
		case 'r':	/* LONG_BINPUT */
			n = code == 'q' ? 1 : 4;
			if ((a = pickle_parse_arg(p, code, n)) == NULL)
				return (-1);
			rc = pickle_parse_put(p, code, pickle_parse_le(a, n));
			break;
		case 'h':	/* BINGET */
		case 'j':	/* LONG_BINGET */
			n = code == 'h' ? 1 : 4;
			if ((a = pickle_parse_arg(p, code, n)) == NULL)
				return (-1);
			rc = pickle_parse_get(p, code, pickle_parse_le(a, n));
			break;
		case '0':	/* POP: a value, or the mark if none is above */
			if (pickle_parse_avail(p) > 0)
				pickle_parse_drop(p, 1);
			else if (p->nmarks > 0)
				p->nmarks--;
			else
				return (pickle_error_underflow(p, code));
			rc = 0;
			break;
		case '1':	/* POP_MARK */
			if ((rc = pickle_parse_pop_mark(p, code, &n)) == 0)
				pickle_parse_drop(p, n);
			break;
		case '.':	/* STOP; the rest is ignored, as by Python */
			if (pickle_parse_avail(p) == 0)
				return (pickle_error_underflow(p, code));
			*root = p->stack[--p->depth];
			if (root->type != PICKLE_DICT) {
				pickle_error_not_dict(p, root);
				pickle_value_unref(root);
				return (-1);
			}
			return (0);
		default:
			return (pickle_error_refuse(p, code));
		}
		if (rc != 0)
			return (-1);
	}
}

static struct pickle_value *
pickle_parse(struct pickle_parser *p, char **cause)
{
	struct pickle_value	*root;
	size_t			 i;

	root = malloc(sizeof *root);
	if (root == NULL)
		pickle_error_nomem(p);
	else if (pickle_parse_run(p, root) != 0) {
		free(root);
		root = NULL;
	} else
		pickle_read_done(&p->r);

	pickle_parse_drop(p, p->depth);
	for (i = 0; i < p->nmemo; i++)
		pickle_value_unref(&p->memo[i]);
	free(p->memo);
	free(p->stack);
	free(p->marks);
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

	memset(&p, 0, sizeof p);
	p.name = name;
	p.cb = cb;
	pickle_read_buffer(&p.r, buf, len, cb);
	return (pickle_parse(&p, cause));
}

/*
 * Like pickle_parse_buffer() for the input read from fd, which is neither
 * closed nor rewound; reading stops after STOP.
 */
struct pickle_value *
pickle_parse_fd(int fd, const char *name, const struct pickle_callbacks *cb,
    char **cause)
{
	struct pickle_parser	 p;
	struct pickle_value	*root;

	memset(&p, 0, sizeof p);
	p.name = name;
	p.cb = cb;
	if (pickle_read_open(&p.r, fd, cb) != 0) {
		if (cause != NULL)
			*cause = pickle_error_fmt("%s: out of memory", name);
		return (NULL);
	}
	root = pickle_parse(&p, cause);
	pickle_read_close(&p.r);
	return (root);
}

/* Like pickle_parse_fd() for the file at path, named path in messages. */
struct pickle_value *
pickle_parse_file(const char *path, const struct pickle_callbacks *cb,
    char **cause)
{
	struct pickle_value	*root;
	int			 fd;

	fd = open(path, O_RDONLY);
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
