/*
 * pickle-error.c: the reader's error messages.  Each is one line, "NAME:
 * what is wrong" with the offset where it went wrong, kept in the parser
 * (the first error wins) and handed to the caller as its cause.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "pickle-int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Python's opcode names, for the refusal message. */
static const char *pickle_opcode_names[256] = {
	['('] = "MARK", ['.'] = "STOP", ['0'] = "POP", ['1'] = "POP_MARK",
	['2'] = "DUP", ['F'] = "FLOAT", ['I'] = "INT", ['J'] = "BININT",
	['K'] = "BININT1", ['L'] = "LONG", ['M'] = "BININT2", ['N'] = "NONE",
	['P'] = "PERSID", ['Q'] = "BINPERSID", ['R'] = "REDUCE",
	['S'] = "STRING", ['T'] = "BINSTRING", ['U'] = "SHORT_BINSTRING",
	['V'] = "UNICODE", ['X'] = "BINUNICODE", ['a'] = "APPEND",
	['b'] = "BUILD", ['c'] = "GLOBAL", ['d'] = "DICT", ['}'] = "EMPTY_DICT",
	['e'] = "APPENDS", ['g'] = "GET", ['h'] = "BINGET", ['i'] = "INST",
	['j'] = "LONG_BINGET", ['l'] = "LIST", [']'] = "EMPTY_LIST",
	['o'] = "OBJ", ['p'] = "PUT", ['q'] = "BINPUT", ['r'] = "LONG_BINPUT",
	['s'] = "SETITEM", ['t'] = "TUPLE", [')'] = "EMPTY_TUPLE",
	['u'] = "SETITEMS", ['G'] = "BINFLOAT", ['B'] = "BINBYTES",
	['C'] = "SHORT_BINBYTES", [0x80] = "PROTO", [0x81] = "NEWOBJ",
	[0x82] = "EXT1", [0x83] = "EXT2", [0x84] = "EXT4", [0x85] = "TUPLE1",
	[0x86] = "TUPLE2", [0x87] = "TUPLE3", [0x88] = "NEWTRUE",
	[0x89] = "NEWFALSE", [0x8a] = "LONG1", [0x8b] = "LONG4",
	[0x8c] = "SHORT_BINUNICODE", [0x8d] = "BINUNICODE8",
	[0x8e] = "BINBYTES8", [0x8f] = "EMPTY_SET", [0x90] = "ADDITEMS",
	[0x91] = "FROZENSET", [0x92] = "NEWOBJ_EX", [0x93] = "STACK_GLOBAL",
	[0x94] = "MEMOIZE", [0x95] = "FRAME", [0x96] = "BYTEARRAY8",
	[0x97] = "NEXT_BUFFER", [0x98] = "READONLY_BUFFER"
};

/* Format into a new string; NULL when out of memory. */
static __attribute__((format(printf, 1, 0))) char *
pickle_error_vfmt(const char *fmt, va_list ap)
{
	va_list	 aq;
	char	*s;
	int	 n;

	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0 || (s = malloc((size_t)n + 1)) == NULL)
		return (NULL);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	return (s);
}

/* Format into a new string the caller frees; NULL when out of memory. */
char *
pickle_error_fmt(const char *fmt, ...)
{
	va_list	 ap;
	char	*s;

	va_start(ap, fmt);
	s = pickle_error_vfmt(fmt, ap);
	va_end(ap);
	return (s);
}

/* Set the cause to "NAME: message", keeping the first error; -1. */
int
pickle_error_set(struct pickle_parser *p, const char *fmt, ...)
{
	va_list	 ap;
	char	*msg;

	if (p->cause != NULL)
		return (-1);
	va_start(ap, fmt);
	msg = pickle_error_vfmt(fmt, ap);
	va_end(ap);
	if (msg != NULL)
		p->cause = pickle_error_fmt("%s: %s", p->name, msg);
	free(msg);
	return (-1);
}

/* "out of memory at offset N"; -1. */
int
pickle_error_nomem(struct pickle_parser *p)
{
	return (pickle_error_set(p, "out of memory at offset %llu",
	    (unsigned long long)p->op));
}

/* Error for input that ends early; errno tells EOF (0) from read error. */
int
pickle_error_short(struct pickle_parser *p, const char *what)
{
	if (errno != 0) {
		return (pickle_error_set(p, "read error at offset %llu: %s",
		    (unsigned long long)pickle_read_offset(&p->r),
		    strerror(errno)));
	}
	return (pickle_error_set(p, "truncated at offset %llu (%s at offset"
	    " %llu)", (unsigned long long)(p->r.base + (uint64_t)(p->r.end -
	    p->r.start)), what, (unsigned long long)p->op));
}

/* Python's name of opcode code, or NULL for a byte that is none. */
const char *
pickle_error_opname(int code)
{
	return (pickle_opcode_names[code]);
}

/*
 * Refuse opcode code: "unsupported pickle opcode NAME at offset N (not a
 * PyTorch memory snapshot)"; -1.
 */
int
pickle_error_refuse(struct pickle_parser *p, int code)
{
	char	hex[8];

	snprintf(hex, sizeof hex, "0x%02x", code);
	return (pickle_error_set(p, "unsupported pickle opcode %s at offset"
	    " %llu (not a PyTorch memory snapshot)",
	    pickle_opcode_names[code] != NULL ? pickle_opcode_names[code] : hex,
	    (unsigned long long)p->op));
}

/* Opcode code found too few values above the top mark; -1. */
int
pickle_error_underflow(struct pickle_parser *p, int code)
{
	return (pickle_error_set(p, "stack underflow at offset %llu (%s)",
	    (unsigned long long)p->op, pickle_error_opname(code)));
}

/* The type of v with its article, for messages: "an int", "a list". */
const char *
pickle_error_a(const struct pickle_value *v)
{
	static const char *names[] = {
		"a none", "a bool", "an int", "a float", "a str", "a bytes",
		"a list", "a tuple", "a dict"
	};

	return (v->type < sizeof names / sizeof names[0] ? names[v->type] :
	    "an unknown value");
}

/* The top-level value v is not a dict; -1. */
int
pickle_error_not_dict(struct pickle_parser *p,
    const struct pickle_value *v)
{
	return (pickle_error_set(p, "top-level value is %s, not a dict (not"
	    " a PyTorch memory snapshot)", pickle_error_a(v)));
}

/* The parser holds more than PICKLE_MEMORY_MAX bytes; -1. */
int
pickle_error_memory(struct pickle_parser *p)
{
	return (pickle_error_set(p, "needs more than %u MiB of memory at "
	    "offset %llu (values kept for later references, or one element, "
	    "too large)", (unsigned)(PICKLE_MEMORY_MAX >> 20),
	    (unsigned long long)p->op));
}

/*
 * Add " (reading again the value that offset AT refers to)" to the error
 * set inside a replay, so that its offset, in the bytes read again, has
 * the place of the reference beside it.
 */
void
pickle_error_replay(struct pickle_parser *p, uint64_t at)
{
	char	*s;

	if (p->cause == NULL)
		return;
	s = pickle_error_fmt("%s (reading again the value that offset %llu "
	    "refers to)", p->cause, (unsigned long long)at);
	if (s != NULL) {
		free(p->cause);
		p->cause = s;
	}
}
