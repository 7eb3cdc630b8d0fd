/*
 * json.c: the little JSON every --format json output needs.
 */
#include "config.h"

#include "vramtrace.h"

#include <inttypes.h>

#include "unknown.h"

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

/* Write a stream in decimal (fmt_stream), or null when it is unknown. */
void
json_stream(FILE *f, uint64_t stream)
{
	if (stream == UNKNOWN_U64)
		fputs("null", f);
	else
		fprintf(f, "%" PRIu64, stream);
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

/* Write v, or null when valid is 0 (unknown is not zero). */
void
json_int_or_null(FILE *f, int64_t v, int valid)
{
	if (valid)
		fprintf(f, "%" PRId64, v);
	else
		fputs("null", f);
}
