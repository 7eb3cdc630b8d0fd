/*
 * pickle-scan.c: pass 1, what pass 2 must know ahead.
 *
 * The scan walks the opcodes without building anything and learns two
 * things.  The memo slots some GET reads: it counts the slots as PUTs
 * define them and sets, in a bitmap of one bit per slot, the bit of every
 * index a BINGET or LONG_BINGET reads; pass 2 keeps only those slots.  And
 * which values are the top-level dict's own: it follows the shape of the
 * stack (where each value was pushed, where the marks are) and, when a
 * SETITEM or SETITEMS puts pairs into the dict at the bottom, notes the
 * offset of the opcode that pushed each of their values (p->roots, in
 * increasing order); pass 2 streams a list only when it is one of those.
 *
 * The scan stops quietly at the first thing pass 2 will refuse (an opcode
 * it does not know, a bad length, a GET or PUT out of range, too few
 * values, the end of the input) or at STOP: pass 2 fails at that same place
 * or earlier, with the message, so what lies after it does not matter.
 *
 * It reads every opcode of the file once more, so it is kept cheap: the
 * loop takes bytes straight from the reader's window while the window
 * holds the longest opcode, and the common opcodes (GETs, values, MARK,
 * MEMOIZE) cost a table look-up and a few stores.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "pickle-int.h"

#include <stdlib.h>
#include <string.h>

/* What the scan does with an opcode. */
enum pickle_scan_kind {
	PICKLE_SCAN_UNKNOWN,	/* pass 2 refuses it: the scan ends */
	PICKLE_SCAN_STOP,
	PICKLE_SCAN_NOTHING,	/* PROTO, FRAME */
	PICKLE_SCAN_MEMOIZE,
	PICKLE_SCAN_PUT,	/* BINPUT, LONG_BINPUT */
	PICKLE_SCAN_GET1,	/* BINGET */
	PICKLE_SCAN_GET4,	/* LONG_BINGET */
	PICKLE_SCAN_VALUE,	/* pushes a value, all in its argument */
	PICKLE_SCAN_STRING,	/* pushes a str or bytes of len bytes */
	PICKLE_SCAN_LONG,	/* LONG1, LONG4 */
	PICKLE_SCAN_MARK,
	PICKLE_SCAN_POP		/* takes values: pickle_scan_pop() */
};

/*
 * Each opcode pass 2 reads: its size (1 + the bytes of its fixed argument)
 * and its kind.  The others are zeros, PICKLE_SCAN_UNKNOWN.
 */
static const struct {
	unsigned char	size;
	unsigned char	kind;		/* enum pickle_scan_kind */
} pickle_scan_ops[256] = {
	['.'] = { 1, PICKLE_SCAN_STOP }, [0x94] = { 1, PICKLE_SCAN_MEMOIZE },
	[0x80] = { 2, PICKLE_SCAN_NOTHING },
	[0x95] = { 9, PICKLE_SCAN_NOTHING },
	['q'] = { 2, PICKLE_SCAN_PUT }, ['r'] = { 5, PICKLE_SCAN_PUT },
	['h'] = { 2, PICKLE_SCAN_GET1 }, ['j'] = { 5, PICKLE_SCAN_GET4 },
	['}'] = { 1, PICKLE_SCAN_VALUE }, [')'] = { 1, PICKLE_SCAN_VALUE },
	[']'] = { 1, PICKLE_SCAN_VALUE }, ['N'] = { 1, PICKLE_SCAN_VALUE },
	[0x88] = { 1, PICKLE_SCAN_VALUE }, [0x89] = { 1, PICKLE_SCAN_VALUE },
	['K'] = { 2, PICKLE_SCAN_VALUE }, ['M'] = { 3, PICKLE_SCAN_VALUE },
	['J'] = { 5, PICKLE_SCAN_VALUE }, ['G'] = { 9, PICKLE_SCAN_VALUE },
	['C'] = { 2, PICKLE_SCAN_STRING }, [0x8c] = { 2, PICKLE_SCAN_STRING },
	['X'] = { 5, PICKLE_SCAN_STRING }, ['B'] = { 5, PICKLE_SCAN_STRING },
	[0x8d] = { 9, PICKLE_SCAN_STRING }, [0x8e] = { 9, PICKLE_SCAN_STRING },
	[0x8a] = { 2, PICKLE_SCAN_LONG }, [0x8b] = { 5, PICKLE_SCAN_LONG },
	['('] = { 1, PICKLE_SCAN_MARK },
	['0'] = { 1, PICKLE_SCAN_POP }, ['1'] = { 1, PICKLE_SCAN_POP },
	[0x85] = { 1, PICKLE_SCAN_POP }, [0x86] = { 1, PICKLE_SCAN_POP },
	[0x87] = { 1, PICKLE_SCAN_POP }, ['t'] = { 1, PICKLE_SCAN_POP },
	['a'] = { 1, PICKLE_SCAN_POP }, ['e'] = { 1, PICKLE_SCAN_POP },
	['s'] = { 1, PICKLE_SCAN_POP }, ['u'] = { 1, PICKLE_SCAN_POP }
};

/*
 * The most bytes an opcode and its fixed argument take (BINFLOAT, FRAME,
 * BINBYTES8, BINUNICODE8: 1 + 8).  While the window holds that many, the
 * loop reads an opcode and its argument without asking the reader.
 */
#define PICKLE_SCAN_AHEAD	9

/* The shape of the stack: where each value was pushed, and the marks. */
struct pickle_scan {
	struct pickle_parser	*p;
	uint64_t		*at;		/* offset of each value's push */
	size_t			 depth;
	size_t			 cap;
	size_t			*marks;
	size_t			 nmarks;
	size_t			 marks_cap;
};

/* Grow *v (of *cap items of size) to hold n.  -1 when out of memory. */
static int
pickle_scan_grow(struct pickle_parser *p, void **v, size_t *cap, size_t n,
    size_t size)
{
	void	*nv;
	size_t	 ncap;

	if (n <= *cap)
		return (0);
	ncap = *cap < 256 ? 256 : *cap * 2;
	if ((nv = realloc(*v, ncap * size)) == NULL)
		return (-1);
	p->mem += (ncap - *cap) * size;
	*v = nv;
	*cap = ncap;
	return (0);
}

/* Grow the bitmap of memo indexes to hold index i.  -1 when out of memory. */
static int
pickle_scan_refs_grow(struct pickle_parser *p, uint64_t i)
{
	struct pickle_memo	*m = &p->memo;
	uint8_t			*refs;
	size_t			 len;

	len = m->refs_len < 4096 ? 4096 : m->refs_len;
	while (len <= i / 8)
		len *= 2;
	if ((refs = realloc(m->refs, len)) == NULL)
		return (-1);
	memset(refs + m->refs_len, 0, len - m->refs_len);
	p->mem += len - m->refs_len;
	m->refs = refs;
	m->refs_len = len;
	return (0);
}

/*
 * Set the bit of memo index i, growing the bitmap first only when it is too
 * short (inline: a GET is most of a snapshot's opcodes).  -1 when out of
 * memory.
 */
static inline int
pickle_scan_ref(struct pickle_parser *p, uint64_t i)
{
	struct pickle_memo	*m = &p->memo;

	if (i / 8 >= m->refs_len && pickle_scan_refs_grow(p, i) != 0)
		return (-1);
	m->refs[i / 8] |= (uint8_t)(1u << (i % 8));
	return (0);
}

/* Note the value pushed at offset at as one of the root's.  -1 on ENOMEM. */
static int
pickle_scan_root(struct pickle_parser *p, uint64_t at)
{
	if (pickle_scan_grow(p, (void **)&p->roots, &p->roots_cap,
	    p->nroots + 1, sizeof *p->roots) != 0)
		return (-1);
	p->roots[p->nroots++] = at;
	return (0);
}

/* Values above the top mark. */
static size_t
pickle_scan_avail(const struct pickle_scan *s)
{
	return (s->depth - (s->nmarks > 0 ? s->marks[s->nmarks - 1] : 0));
}

/*
 * The stack grows from 256 values by doubling, so its capacity reaches
 * PICKLE_STACK_MAX and never passes it: pickle_scan_push() needs to look
 * for that bound only when the stack is full.
 */
_Static_assert(PICKLE_STACK_MAX % 256 == 0 &&
    (PICKLE_STACK_MAX & (PICKLE_STACK_MAX - 1)) == 0,
    "PICKLE_STACK_MAX is 256 times a power of two");

/*
 * Push the value of the opcode at offset at.  Returns 1 to go on, 0 where
 * pass 2 will fail (too many values), -1 when out of memory.
 */
static inline int
pickle_scan_push(struct pickle_scan *s, uint64_t at)
{
	if (s->depth == s->cap) {
		if (s->depth == PICKLE_STACK_MAX)
			return (0);
		if (pickle_scan_grow(s->p, (void **)&s->at, &s->cap,
		    s->depth + 1, sizeof *s->at) != 0)
			return (-1);
	}
	s->at[s->depth++] = at;
	return (1);
}

/*
 * GET of memo index i, nmemo being defined, at offset at.  As
 * pickle_scan_push().
 */
static inline int
pickle_scan_get(struct pickle_scan *s, uint64_t i, uint64_t nmemo,
    uint64_t at)
{
	if (i >= nmemo)
		return (0);
	if (pickle_scan_ref(s->p, i) != 0)
		return (-1);
	return (pickle_scan_push(s, at));
}

/* MARK.  As pickle_scan_push(). */
static inline int
pickle_scan_mark(struct pickle_scan *s)
{
	if (s->nmarks == PICKLE_MARK_MAX)
		return (0);
	if (pickle_scan_grow(s->p, (void **)&s->marks, &s->marks_cap,
	    s->nmarks + 1, sizeof *s->marks) != 0)
		return (-1);
	s->marks[s->nmarks++] = s->depth;
	return (1);
}

/*
 * The stack effect of an opcode that pops (code, at offset at): the values
 * it takes, then the one it pushes, if any.  As pickle_scan_push().
 */
static int
pickle_scan_pop(struct pickle_scan *s, int code, uint64_t at)
{
	size_t	n = 0, i;
	int	push = 1;

	switch (code) {
	case '0':
		if (pickle_scan_avail(s) > 0)
			s->depth--;
		else if (s->nmarks > 0)
			s->nmarks--;
		else
			return (0);
		return (1);
	case 0x85:
	case 0x86:
	case 0x87:
		n = (size_t)(code - 0x84);
		break;
	case 'a':
		n = 1;
		push = 0;
		break;
	case 's':
		n = 2;
		push = 0;
		break;
	case 't':
	case 'e':
	case 'u':
	case '1':
		if (s->nmarks == 0)
			return (0);
		n = pickle_scan_avail(s);
		s->nmarks--;
		push = code == 't';
		break;
	}
	if (pickle_scan_avail(s) < n)
		return (0);
	if ((code == 's' || code == 'u') && s->depth == n + 1) {
		for (i = 1; i < n; i += 2) {	/* the root's pairs */
			if (pickle_scan_root(s->p, s->at[i + 1]) != 0)
				return (-1);
		}
	}
	s->depth -= n;
	if (!push)
		return (1);
	return (pickle_scan_push(s, at));
}

/*
 * Make the next opcode of r and its fixed argument available at r->p:
 * PICKLE_SCAN_AHEAD bytes where the input holds them, else (in its last
 * bytes, where a short opcode may still be whole) exactly the opcode's.
 * -1 where the input ends (or cannot be read) first, as in pass 2.
 */
static int
pickle_scan_fill(struct pickle_reader *r)
{
	if (pickle_read_fill(r, PICKLE_SCAN_AHEAD) == 0)
		return (0);
	if (pickle_read_fill(r, 1) != 0)
		return (-1);
	return (pickle_read_fill(r, pickle_scan_ops[*r->p].size));
}

/*
 * Skip n bytes of r from r->p, more than its window holds: the window
 * starts again after them, empty.  -1 if the input ends first.
 */
static int
pickle_scan_skip(struct pickle_reader *r, uint64_t n)
{
	uint64_t	at = pickle_read_offset(r);

	if (n > r->limit - at || r->fd == -1)
		return (-1);
	r->base = at + n;
	r->start = r->p = r->end = r->buf;
	return (0);
}

/*
 * Run the scan over r; see pickle_scan().  The loop keeps its place in r's
 * window, [p, end), in locals (r's fields would be read again after every
 * store) and gives it back to r only to refill the window or skip past it.
 */
static int
pickle_scan_run(struct pickle_scan *s, struct pickle_reader *r)
{
	const unsigned char	*p = r->p, *end = r->end, *a;
	uint64_t		 nmemo = 0, i, len, at;
	int			 code, kind, rc;

	for (;;) {
		if ((size_t)(end - p) < PICKLE_SCAN_AHEAD) {
			r->p = p;
			if (pickle_scan_fill(r) != 0)
				return (0);
			p = r->p;
			end = r->end;
		}
		at = r->base + (uint64_t)(p - r->start);
		code = *p;
		kind = pickle_scan_ops[code].kind;
		a = p + 1;		/* its argument is [a, p) */
		p += pickle_scan_ops[code].size;
		switch (kind) {
		case PICKLE_SCAN_UNKNOWN:
		case PICKLE_SCAN_STOP:
			return (0);
		case PICKLE_SCAN_NOTHING:
			rc = 1;
			break;
		case PICKLE_SCAN_MEMOIZE:
			nmemo++;
			rc = 1;
			break;
		case PICKLE_SCAN_PUT:
			i = pickle_le(a, (size_t)(p - a));
			if (i > nmemo || i >= PICKLE_MEMO_MAX)
				return (0);
			if (i == nmemo)
				nmemo++;
			rc = 1;
			break;
		case PICKLE_SCAN_GET1:
			rc = pickle_scan_get(s, a[0], nmemo, at);
			break;
		case PICKLE_SCAN_GET4:
			rc = pickle_scan_get(s, pickle_le(a, 4), nmemo, at);
			break;
		case PICKLE_SCAN_VALUE:
			rc = pickle_scan_push(s, at);
			break;
		case PICKLE_SCAN_STRING:
		case PICKLE_SCAN_LONG:	/* skip their bytes */
			len = pickle_le(a, (size_t)(p - a));
			if (len > (kind == PICKLE_SCAN_LONG ? PICKLE_LONG_MAX :
			    PICKLE_STR_MAX))
				return (0);
			if ((uint64_t)(end - p) >= len)
				p += len;
			else {
				r->p = p;
				if (pickle_scan_skip(r, len) != 0)
					return (0);
				p = r->p;
				end = r->end;
			}
			rc = pickle_scan_push(s, at);
			break;
		case PICKLE_SCAN_MARK:
			rc = pickle_scan_mark(s);
			break;
		default:	/* PICKLE_SCAN_POP */
			rc = pickle_scan_pop(s, code, at);
			break;
		}
		if (rc <= 0)
			return (rc);
	}
}

/*
 * Run pass 1 over r (from its current offset) into p->memo.refs and
 * p->roots, adding what they hold to p->mem.  Returns -1 only when out of
 * memory; a file pass 2 will refuse just ends the scan.
 */
int
pickle_scan(struct pickle_parser *p, struct pickle_reader *r)
{
	struct pickle_scan	s;
	int			rc;

	memset(&s, 0, sizeof s);
	s.p = p;
	rc = pickle_scan_run(&s, r);
	p->mem -= s.cap * sizeof *s.at + s.marks_cap * sizeof *s.marks;
	free(s.at);
	free(s.marks);
	return (rc < 0 ? -1 : 0);
}
