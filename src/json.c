/*
 * json.c: the little JSON every --format json output needs.
 */
#include "config.h"

#include "vramtrace.h"

#include <inttypes.h>
#include <math.h>

#include "unknown.h"

/*
 * The length of the valid UTF-8 sequence at p (a NUL-terminated string),
 * or 0 when it is not one (a stray byte, an overlong form, a surrogate,
 * past U+10FFFF): file names and frame names are bytes.
 */
size_t
json_utf8_length(const unsigned char *p)
{
	size_t		n, i;
	uint32_t	c;

	if (p[0] < 0x80)
		return (1);
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4;
	else
		return (0);
	c = p[0] & (0x7f >> n);
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return (0);
		c = c << 6 | (p[i] & 0x3f);
	}
	/* Overlong forms, surrogates and past U+10FFFF. */
	if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 ||
	    c > 0x10ffff)) || (c >= 0xd800 && c <= 0xdfff))
		return (0);
	return (n);
}

/*
 * Write s as a JSON string (NULL as null), escaping what JSON requires;
 * a byte that is not part of valid UTF-8 becomes U+FFFD, so that the
 * output is always valid UTF-8 (json.loads accepts it).  With page set,
 * also what would end or confuse a <script> element of an HTML page (<, >
 * and &) and what a script's parser may take for a line end (U+2028 and
 * U+2029).
 */
static void
json_string_escaped(FILE *f, const char *s, int page)
{
	const unsigned char	*p;
	size_t			 n;

	if (s == NULL) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (p = (const unsigned char *)s; *p != '\0'; p += n) {
		if ((n = json_utf8_length(p)) == 0) {
			fputs("\\ufffd", f);
			n = 1;
		} else if (page && n == 3 && p[0] == 0xe2 && p[1] == 0x80 &&
		    (p[2] == 0xa8 || p[2] == 0xa9))
			fprintf(f, "\\u%04x", 0x2000 | (p[2] - 0x80));
		else if (n > 1)
			fwrite(p, 1, n, f);
		else if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p == '\r')
			fputs("\\r", f);
		else if (*p < 0x20 || (page && (*p == '<' || *p == '>' ||
		    *p == '&')))
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

/* Write s as a JSON string (json_string_escaped). */
void
json_string(FILE *f, const char *s)
{
	json_string_escaped(f, s, 0);
}

/* Write s as a JSON string that is safe inside an HTML page's script. */
void
json_string_page(FILE *f, const char *s)
{
	json_string_escaped(f, s, 1);
}

/* Write v in decimal, or null when it is unknown (UNKNOWN_U64). */
void
json_u64(FILE *f, uint64_t v)
{
	if (v == UNKNOWN_U64)
		fputs("null", f);
	else
		fprintf(f, "%" PRIu64, v);
}

/* Write a stream in decimal (fmt_stream), or null when it is unknown. */
void
json_stream(FILE *f, uint64_t stream)
{
	json_u64(f, stream);
}

/*
 * Write a stream's cudaStream_t handle as a string in hex, as PyTorch
 * prints it ("0x55d0c0a1b2c0": a double cannot hold every pointer), or
 * null when it is unknown.
 */
void
json_handle(FILE *f, uint64_t handle)
{
	if (handle == UNKNOWN_U64)
		fputs("null", f);
	else
		fprintf(f, "\"0x%" PRIx64 "\"", handle);
}

/*
 * Write a time in ns, or null when it is unknown: UNKNOWN_U64, or 0,
 * which some structs still use for unknown (fmt.c prints both as n/a).
 */
void
json_time(FILE *f, uint64_t ns)
{
	if (ns == UNKNOWN_U64 || ns == 0)
		fputs("null", f);
	else
		fprintf(f, "%" PRIu64, ns);
}

/*
 * Write v with `digits` decimals, or null when it is not finite (JSON has
 * no NaN or Infinity, and json.loads must accept every output).
 */
void
json_double(FILE *f, double v, int digits)
{
	if (!isfinite(v))
		fputs("null", f);
	else
		fprintf(f, "%.*f", digits, v);
}

/* Write v, or null when valid is 0 (unknown is not zero). */
void
json_int_or_null(FILE *f, int64_t v, int valid)
{
	if (valid)
		fprintf(f, "%" PRId64, v);
	else
		fputs("null", f);
}
