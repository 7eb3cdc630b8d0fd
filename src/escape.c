/*
 * escape.c: what of a text would not print as itself on a terminal, and a
 * copy of the text where that is written as visible escapes: a tab, a
 * line feed and a carriage return as "\t", "\n", "\r", another control
 * character or a byte that is not UTF-8 as "\xNN", a C1 control, a line or
 * paragraph separator or a bidirectional control as "\uNNNN".  No
 * allocation and no call into the program (log.c, under the allocator's
 * fatal(), uses it too); fmt_safe() (fmt.c) is how the commands use it.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "escape.h"

/*
 * The length of the UTF-8 sequence at s that prints as itself (a valid,
 * shortest encoding of a character that is neither a C1 control, a
 * surrogate, a line or paragraph separator nor a bidirectional control),
 * or 0 when the byte at s must be escaped (*cp is the character, or -1
 * for a byte that is not UTF-8).
 */
static size_t
escape_len(const unsigned char *s, long *cp)
{
	uint32_t	c;
	size_t		n, i;

	*cp = -1;
	if (s[0] >= 0x20 && s[0] < 0x7f)
		return (1);
	if (s[0] < 0x80) {
		*cp = s[0];
		return (0);
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, c = s[0] & 0x07;
	else
		return (0);
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return (0);
		c = (c << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 ||
	    c > 0x10ffff)) || (c >= 0xd800 && c <= 0xdfff))
		return (0);	/* overlong, too large, or a surrogate */
	if (c < 0xa0 || c == 0x200e || c == 0x200f ||
	    (c >= 0x2028 && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069)) {
		*cp = c;
		return (0);
	}
	return (n);
}

/* How many bytes of s come before the first that must be escaped; 0 when
 * none must (s prints as itself). */
size_t
escape_needed(const char *s)
{
	const unsigned char	*p;
	size_t			 n;
	long			 cp;

	for (p = (const unsigned char *)s; *p != '\0'; p += n) {
		if ((n = escape_len(p, &cp)) == 0)
			return ((size_t)(p - (const unsigned char *)s) + 1);
	}
	return (0);
}

/*
 * Write s escaped into out, which has room for 4 * strlen(s) + 1 bytes (a
 * byte grows to 4 at most), with its '\0'.  Returns the length written.
 */
size_t
escape_copy(char *out, const char *s)
{
	const unsigned char	*p = (const unsigned char *)s;
	char			*o = out;
	size_t			 n;
	long			 cp;

	while (*p != '\0') {
		if ((n = escape_len(p, &cp)) != 0) {
			memcpy(o, p, n);
			o += n;
			p += n;
			continue;
		}
		if (cp == '\t' || cp == '\n' || cp == '\r') {
			*o++ = '\\';
			*o++ = cp == '\t' ? 't' : cp == '\n' ? 'n' : 'r';
		} else if (cp < 0x80)
			o += sprintf(o, "\\x%02x", *p);
		else
			o += sprintf(o, "\\u%04lx", (unsigned long)cp);
		/* A character escaped whole skips its bytes. */
		p += cp >= 0x80 ? (cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4) : 1;
	}
	*o = '\0';
	return ((size_t)(o - out));
}
