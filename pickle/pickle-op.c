/*
 * pickle-op.c: the opcodes that push one scalar or string.
 *
 * Their arguments are taken from the reader at p->r (the file, or the range
 * a replay reads); every length is checked against the bytes left in the
 * input and against PICKLE_STR_MAX before anything is allocated.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "pickle-int.h"

#include <stdio.h>
#include <string.h>

/*
 * pickle_op_arg() when fewer than n bytes are in the window: refill, or
 * fail at the end of the input.
 */
const unsigned char *
pickle_op_arg_fill(struct pickle_parser *p, int code, size_t n)
{
	const unsigned char	*arg;

	if (pickle_read_fill(&p->r, n) != 0) {
		pickle_error_short(p, pickle_error_opname(code));
		return (NULL);
	}
	arg = p->r.p;
	p->r.p += n;
	return (arg);
}

/*
 * Push a none, a bool (i is 0 or 1) or an int (for PICKLE_UINT64, i holds
 * its bits).
 */
int
pickle_op_scalar(struct pickle_parser *p, enum pickle_type type, int64_t i)
{
	struct pickle_value	v;

	v.type = type;
	if (type == PICKLE_BOOL)
		v.u.b = (int)i;
	else
		v.u.i = i;
	return (pickle_stack_push(p, &v, p->op));
}

/* Accept UTF-8 as Python writes it (surrogates included: surrogatepass). */
static int
pickle_op_utf8(const unsigned char *s, size_t len)
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
int
pickle_op_string(struct pickle_parser *p, int code, enum pickle_type type,
    uint64_t len)
{
	struct pickle_value	 v;
	const char		*what = pickle_error_opname(code);
	uint64_t		 left;
	char			 buf[80];

	left = p->r.limit - pickle_read_offset(&p->r);
	if (len > left) {
		snprintf(buf, sizeof buf, "%s of %llu bytes", what,
		    (unsigned long long)len);
		return (pickle_error_short(p, buf));
	}
	if (len > PICKLE_STR_MAX) {
		return (pickle_error_set(p, "%s of %llu bytes at offset %llu"
		    " is longer than %u", what, (unsigned long long)len,
		    (unsigned long long)p->op, PICKLE_STR_MAX));
	}
	if (pickle_value_str(&v, type, (size_t)len, &p->mem) != 0)
		return (pickle_error_nomem(p));
	if (pickle_read_copy(&p->r, v.u.s->data, (size_t)len) != 0) {
		pickle_value_unref(&v, &p->mem);
		return (pickle_error_short(p, what));
	}
	if (type == PICKLE_STR &&
	    pickle_op_utf8((unsigned char *)v.u.s->data, (size_t)len) != 0) {
		pickle_value_unref(&v, &p->mem);
		return (pickle_error_set(p, "invalid UTF-8 in %s at offset "
		    "%llu", what, (unsigned long long)p->op));
	}
	return (pickle_stack_push(p, &v, p->op));
}

/* Push an int of n little-endian two's complement bytes at b. */
int
pickle_op_long(struct pickle_parser *p, const unsigned char *b, size_t n)
{
	return (pickle_op_scalar(p, PICKLE_INT, pickle_le_signed(b, n)));
}

/*
 * LONG1 and LONG4: an int of n bytes that follow.  One of 9 bytes fits
 * when its last byte only extends the sign of the 8 before (Python writes
 * none such, but may), or is 0 with the top bit of the 8 before set: a
 * value of 2^63 to 2^64 - 1 (PICKLE_UINT64).
 */
int
pickle_op_longn(struct pickle_parser *p, int code, uint64_t n)
{
	const unsigned char	*b = NULL;
	uint64_t		 u;
	int64_t			 i;

	if (n <= PICKLE_LONG_MAX &&
	    (b = pickle_op_arg(p, code, (size_t)n)) == NULL)
		return (-1);
	if (n <= 8)
		return (pickle_op_long(p, b, (size_t)n));
	if (n == 9 && b[8] == ((b[7] & 0x80) ? 0xff : 0x00))
		return (pickle_op_long(p, b, 8));
	if (n == 9 && b[8] == 0x00) {
		u = pickle_le(b, 8);
		memcpy(&i, &u, sizeof i);
		return (pickle_op_scalar(p, PICKLE_UINT64, i));
	}
	return (pickle_error_set(p, "%s of %llu bytes at offset %llu does not"
	    " fit in 64 bits", pickle_error_opname(code), (unsigned long long)n,
	    (unsigned long long)p->op));
}

/* BINFLOAT: a big-endian double at b. */
int
pickle_op_float(struct pickle_parser *p, const unsigned char *b)
{
	struct pickle_value	v;
	uint64_t		u = 0;
	size_t			i;

	for (i = 0; i < 8; i++)
		u = (u << 8) | b[i];
	v.type = PICKLE_FLOAT;
	memcpy(&v.u.f, &u, sizeof v.u.f);
	return (pickle_stack_push(p, &v, p->op));
}
