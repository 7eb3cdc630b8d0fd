/*
 * json.c: the little JSON every --format json output needs.
 */
#include "config.h"

#include "vramtrace.h"

#include <inttypes.h>

/* Write s as a JSON string (NULL as null), escaping what JSON requires. */
void
json_string(FILE *f, const char *s)
{
	const unsigned char	*p;

	if (s == NULL) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
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
