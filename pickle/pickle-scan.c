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
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "pickle-int.h"

#include <stdlib.h>
#include <string.h>

/*
 * 1 + the bytes of fixed argument of each opcode pass 2 reads; 0 for the
 * others.
 */
static const unsigned char pickle_scan_args[256] = {
	['}'] = 1, [')'] = 1, [']'] = 1, [0x85] = 1, [0x86] = 1, [0x87] = 1,
	['t'] = 1, ['('] = 1, ['u'] = 1, ['s'] = 1, ['e'] = 1, ['a'] = 1,
	[0x88] = 1, [0x89] = 1, ['N'] = 1, ['0'] = 1, ['1'] = 1, ['.'] = 1,
	[0x94] = 1,
	[0x80] = 2, ['K'] = 2, ['q'] = 2, ['h'] = 2, ['C'] = 2, [0x8c] = 2,
	[0x8a] = 2,
	['M'] = 3,
	['J'] = 5, ['r'] = 5, ['j'] = 5, ['X'] = 5, ['B'] = 5, [0x8b] = 5,
	['G'] = 9, [0x95] = 9, [0x8d] = 9, [0x8e] = 9
};

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

/* Set the bit of memo index i.  -1 when out of memory. */
static int
pickle_scan_ref(struct pickle_parser *p, uint64_t i)
{
	struct pickle_memo	*m = &p->memo;
	uint8_t			*refs;
	size_t			 len;

	if (i / 8 >= m->refs_len) {
		len = m->refs_len < 4096 ? 4096 : m->refs_len;
		while (len <= i / 8)
			len *= 2;
		if ((refs = realloc(m->refs, len)) == NULL)
			return (-1);
		memset(refs + m->refs_len, 0, len - m->refs_len);
		p->mem += len - m->refs_len;
		m->refs = refs;
		m->refs_len = len;
	}
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
 * The stack effect of opcode code at offset op: pop, then push a value.
 * Returns 1 to go on, 0 where pass 2 will fail, -1 when out of memory.
 */
static int
pickle_scan_shape(struct pickle_scan *s, int code, uint64_t op)
{
	size_t	n = 0, i;
	int	push = 1;

	switch (code) {
	case '(':
		if (s->nmarks == PICKLE_MARK_MAX)
			return (0);
		if (pickle_scan_grow(s->p, (void **)&s->marks, &s->marks_cap,
		    s->nmarks + 1, sizeof *s->marks) != 0)
			return (-1);
		s->marks[s->nmarks++] = s->depth;
		return (1);
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
	case 0x94:
	case 'q':
	case 'r':
	case 0x80:
	case 0x95:
		return (1);
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
	if (s->depth == PICKLE_STACK_MAX)
		return (0);
	if (pickle_scan_grow(s->p, (void **)&s->at, &s->cap, s->depth + 1,
	    sizeof *s->at) != 0)
		return (-1);
	s->at[s->depth++] = op;
	return (1);
}

/* Skip n bytes of r.  -1 if the input ends first. */
static int
pickle_scan_skip(struct pickle_reader *r, uint64_t n)
{
	uint64_t	at = pickle_read_offset(r);

	if ((uint64_t)(r->end - r->p) >= n) {
		r->p += n;
		return (0);
	}
	if (n > r->limit - at || r->fd == -1)
		return (-1);
	r->base = at + n;
	r->start = r->p = r->end = r->buf;
	return (0);
}

/* Run the scan over r; see pickle_scan(). */
static int
pickle_scan_run(struct pickle_scan *s, struct pickle_reader *r)
{
	const unsigned char	*a;
	uint64_t		 nmemo = 0, i, len, op;
	int			 code, n, rc;

	for (;;) {
		op = pickle_read_offset(r);
		if (r->p == r->end && pickle_read_fill(r, 1) != 0)
			return (0);
		code = *r->p++;
		if ((n = pickle_scan_args[code] - 1) < 0)
			return (0);
		if ((size_t)(r->end - r->p) < (size_t)n &&
		    pickle_read_fill(r, (size_t)n) != 0)
			return (0);
		a = r->p;
		r->p += n;
		switch (code) {
		case '.':
			return (0);
		case 0x94:	/* MEMOIZE */
			nmemo++;
			break;
		case 'q':	/* BINPUT */
		case 'r':	/* LONG_BINPUT */
			i = pickle_le(a, (size_t)n);
			if (i > nmemo || i >= PICKLE_MEMO_MAX)
				return (0);
			if (i == nmemo)
				nmemo++;
			break;
		case 'h':	/* BINGET */
		case 'j':	/* LONG_BINGET */
			i = pickle_le(a, (size_t)n);
			if (i >= nmemo)
				return (0);
			if (pickle_scan_ref(s->p, i) != 0)
				return (-1);
			break;
		case 'C':	/* the strings and bytes: skip their data */
		case 0x8c:
		case 'X':
		case 'B':
		case 0x8d:
		case 0x8e:
			len = pickle_le(a, (size_t)n);
			if (len > PICKLE_STR_MAX || pickle_scan_skip(r, len) != 0)
				return (0);
			break;
		case 0x8a:	/* LONG1 */
		case 0x8b:	/* LONG4 */
			len = pickle_le(a, (size_t)n);
			if (len > PICKLE_LONG_MAX ||
			    pickle_scan_skip(r, len) != 0)
				return (0);
			break;
		}
		if ((rc = pickle_scan_shape(s, code, op)) <= 0)
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
